// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for the queue core's tables (src/queue.c): the hash table
 * grows to at least a bucket a key and keeps every key once, its chains
 * hold their nodes oldest first (across growths too), a duration goes to
 * the first histogram bucket whose bound is at or above it, and a key's
 * node comes from the smallest node cache that holds it.
 *
 * The cases look at struct kwq (queue.h) under q->lock where they walk
 * the table, and at the byte budget (kwq_internal.h) for node sizes.
 */

#include <kunit/test.h>
#include <linux/err.h>
#include <linux/kstrtox.h>
#include <linux/kwq.h>
#include <linux/minmax.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "kwq_internal.h"
#include "kwq_test.h"
#include "queue.h"

/* Keys "k-0".."k-<TT_KEYS - 1>": from 64 buckets, six growths or more. */
#define TT_KEYS		3000
#define TT_PREFIX	"k-"

static void tt_add_key(struct kunit *test, struct kwq *q, unsigned int i)
{
	char key[16];

	snprintf(key, sizeof(key), TT_PREFIX "%u", i);
	KUNIT_ASSERT_EQ(test, 0, kt_add(q, key));
}

/* The number in key "k-<n>" of @n, or -1. Under q->lock. */
static int tt_key_index(const struct kwq_node *n)
{
	size_t plen = strlen(TT_PREFIX);
	unsigned int k;
	char buf[16];

	if (n->key_len <= plen || n->key_len >= sizeof(buf) ||
	    memcmp(n->key, TT_PREFIX, plen))
		return -1;
	memcpy(buf, n->key + plen, n->key_len - plen);
	buf[n->key_len - plen] = '\0';
	return kstrtouint(buf, 10, &k) || k >= TT_KEYS ? -1 : k;
}

/*
 * Once the grow work has run, the table has a bucket a key at least,
 * after every add: it grows past a key a bucket, to the fewest buckets
 * for at most one. Every key is in it once, in the bucket of its hash,
 * and adding each again adds nothing.
 */
static void table_grows_to_a_bucket_a_key_keeping_every_key(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	unsigned long buckets, nodes, i, mask;
	unsigned int bits0, bits, k, bad = 0, misplaced = 0, wrong = 0;
	struct kwq_node *n;
	bool growing;
	u8 *seen;
	int idx;

	seen = kunit_kzalloc(test, TT_KEYS, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, seen);
	bits0 = q->hash_bits;
	for (k = 0; k < TT_KEYS; k++) {
		tt_add_key(test, q, k);
		flush_work(&q->grow_work);
		spin_lock_irq(&q->lock);
		buckets = 1UL << q->hash_bits;
		nodes = q->nr_nodes;
		growing = !!q->new_hash;
		spin_unlock_irq(&q->lock);
		KUNIT_ASSERT_FALSE(test, growing);
		KUNIT_ASSERT_GE_MSG(test, buckets, nodes, "after %u keys", k + 1);
	}
	bits = q->hash_bits;
	/* 64 buckets to 4096: growths on the way, not a table made big. */
	KUNIT_EXPECT_GE(test, bits, bits0 + 3);
	KUNIT_EXPECT_GE(test, 1UL << bits, (unsigned long)TT_KEYS);

	spin_lock_irq(&q->lock);
	mask = (1UL << q->hash_bits) - 1;
	for (i = 0; i <= mask; i++) {
		for (n = q->hash[i]; n; n = n->hnext) {
			idx = tt_key_index(n);
			if (idx < 0)
				bad++;
			else if (seen[idx] < U8_MAX)
				seen[idx]++;
			if ((n->hash & mask) != i)
				misplaced++;
		}
	}
	nodes = q->nr_nodes;
	spin_unlock_irq(&q->lock);
	for (k = 0; k < TT_KEYS; k++) {
		if (seen[k] != 1 && !wrong++)
			KUNIT_FAIL(test, "key k-%u is in the table %u times", k,
				   seen[k]);
	}
	KUNIT_EXPECT_EQ(test, 0U, wrong);
	KUNIT_EXPECT_EQ(test, 0U, bad);
	KUNIT_EXPECT_EQ(test, 0U, misplaced);
	KUNIT_EXPECT_EQ(test, (unsigned long)TT_KEYS, nodes);

	/* Every key is found: adding it again is a no-op. */
	for (k = 0; k < TT_KEYS; k++)
		tt_add_key(test, q, k);
	KUNIT_EXPECT_EQ(test, (long)TT_KEYS, kwq_len(q));
	KUNIT_EXPECT_EQ(test, (u64)TT_KEYS, kt_stats(test, q).adds_total);
	KUNIT_EXPECT_EQ(test, (unsigned long)TT_KEYS, q->nr_nodes);
}

/*
 * Chains hold their nodes oldest first: new nodes are appended, and the
 * grow work appends the nodes it moves to their new chains in order. Keys
 * added as "k-0", "k-1", ... have increasing numbers along every chain.
 */
static void chains_keep_nodes_oldest_first(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	unsigned int k, bits0, disorder = 0, bad = 0, longer = 0, len;
	unsigned long i, nodes = 0;
	struct kwq_node *n;
	int idx, last;
	bool growing;

	bits0 = q->hash_bits;
	for (k = 0; k < TT_KEYS; k++) {
		tt_add_key(test, q, k);
		/* Some growths run while keys are added, some before. */
		if (k % 700 == 0)
			flush_work(&q->grow_work);
	}
	flush_work(&q->grow_work);
	KUNIT_EXPECT_GE(test, q->hash_bits, bits0 + 3);

	spin_lock_irq(&q->lock);
	growing = !!q->new_hash;
	for (i = 0; i < 1UL << q->hash_bits; i++) {
		last = -1;
		len = 0;
		for (n = q->hash[i]; n; n = n->hnext) {
			idx = tt_key_index(n);
			if (idx < 0)
				bad++;
			else if (idx <= last)
				disorder++;
			last = max(last, idx);
			len++;
		}
		nodes += len;
		if (len > 1)
			longer++;
	}
	spin_unlock_irq(&q->lock);
	KUNIT_EXPECT_FALSE(test, growing);
	KUNIT_EXPECT_EQ(test, 0U, bad);
	KUNIT_EXPECT_EQ(test, (unsigned long)TT_KEYS, nodes);
	KUNIT_EXPECT_EQ_MSG(test, 0U, disorder,
			    "nodes after a newer one in their chain");
	/* Chains of two or more are what this case checks: there are some. */
	KUNIT_EXPECT_GT(test, longer, 0U);
}

/*
 * Histogram bucket i counts the durations in (10^i, 10^(i+1)] ns, the
 * first bucket 0 too, the last (+Inf) all above 10^10: a duration goes to
 * the first bucket whose bound is at or above it.
 */
#define TT_MAX_DURATIONS	128

/* The durations tried: bounds and their neighbours, powers of two. */
static unsigned int tt_durations(u64 *d)
{
	static const u64 small[] = { 0, 1, 9, 10, 11, 99, 100, 101 };
	unsigned int nr = 0, k;
	u64 p;

	for (k = 0; k < ARRAY_SIZE(small); k++)
		d[nr++] = small[k];
	for (k = 1, p = 10; k <= KWQ_HIST_BUCKETS; k++, p *= 10) {
		d[nr++] = p - 1;
		d[nr++] = p;
		d[nr++] = p + 1;
	}
	for (k = 1; k <= 40; k++) {
		d[nr++] = BIT_ULL(k) - 1;
		d[nr++] = BIT_ULL(k);
	}
	/* An hour: +Inf. */
	d[nr++] = 3600 * NSEC_PER_SEC;
	return nr;
}

/* Bucket of @ns by a search of the bounds 10, 100, ..., 10^10; then +Inf. */
static unsigned int tt_bucket(u64 ns)
{
	unsigned int i;
	u64 bound = 10;

	for (i = 0; i < KWQ_HIST_BUCKETS; i++, bound *= 10)
		if (ns <= bound)
			return i;
	return KWQ_HIST_BUCKETS;
}

static void histogram_counts_in_first_bucket_at_or_above(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	u64 counts[KWQ_HIST_BUCKETS + 1] = {};
	struct kwq_histogram prev, h;
	unsigned int nr, k, b, want;
	struct kwq_item item;
	u64 *d, sum = 0, le = 0;

	d = kunit_kcalloc(test, TT_MAX_DURATIONS, sizeof(*d), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, d);
	nr = tt_durations(d);
	KUNIT_ASSERT_LE(test, nr, TT_MAX_DURATIONS);
	h = kt_stats(test, q).queue_duration;
	for (k = 0; k < nr; k++) {
		prev = h;
		KUNIT_ASSERT_EQ(test, 0, kt_add(q, "h"));
		kt_advance(c, d[k]);
		item = kt_get(test, q, "h");
		KUNIT_ASSERT_EQ(test, 0, kwq_done(q, &item));
		want = tt_bucket(d[k]);
		counts[want]++;
		sum += d[k];

		/* le[] is cumulative: the buckets from @want on counted it. */
		h = kt_stats(test, q).queue_duration;
		for (b = 0; b < KWQ_HIST_BUCKETS; b++)
			KUNIT_EXPECT_EQ_MSG(test, prev.le[b] + (b >= want),
					    h.le[b], "le[%u] after %llu ns",
					    b, d[k]);
		KUNIT_EXPECT_EQ(test, prev.count + 1, h.count);
		KUNIT_EXPECT_EQ(test, sum, h.sum_ns);
	}
	/* All told, and every bucket (+Inf too) was tried. */
	for (b = 0; b < KWQ_HIST_BUCKETS; b++) {
		le += counts[b];
		KUNIT_EXPECT_EQ_MSG(test, le, h.le[b], "le[%u]", b);
		KUNIT_EXPECT_GT_MSG(test, counts[b], 0ULL, "bucket %u", b);
	}
	KUNIT_EXPECT_GT(test, counts[KWQ_HIST_BUCKETS], 0ULL);
	KUNIT_EXPECT_EQ(test, (u64)nr, h.count);
}

/*
 * Node caches: a key of L bytes is charged (to the queue's byte budget)
 * a node of the size of its slab object, which holds the node header and
 * L bytes, and is the smallest such object: sizes never shrink as keys
 * grow, and a bigger size starts one byte past the previous size's room.
 */
static void tt_budget_release(struct kwq_budget *b)
{
}

static void tt_destroy_action(void *q)
{
	kwq_destroy(q);
}

static void node_is_the_smallest_that_holds_the_key(struct kunit *test)
{
	const size_t hdr = offsetof(struct kwq_node, key);
	struct kwq_budget *b;
	unsigned int distinct = 0;
	long used, *size;
	struct kwq *q;
	size_t len;
	u8 *key;

	b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	size = kunit_kcalloc(test, KWQ_KEY_MAX + 1, sizeof(*size), GFP_KERNEL);
	key = kunit_kmalloc(test, KWQ_KEY_MAX, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_NOT_NULL(test, size);
	KUNIT_ASSERT_NOT_NULL(test, key);
	b->limit = ULONG_MAX;
	refcount_set(&b->ref, 1);
	b->release = tt_budget_release;
	/* Destroyed (and freed: the only reference) before @b is. */
	q = kwq_create_anon("kt-table-nodes", NULL, b);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(q), "kwq_create_anon: %ld",
			       PTR_ERR(q));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   tt_destroy_action,
							   q));

	/* One key at a time: the table never grows. */
	for (len = 1; len <= KWQ_KEY_MAX; len++) {
		memset(key, 'a' + len % 26, len);
		used = atomic_long_read(&b->used);
		KUNIT_ASSERT_EQ(test, 0, kwq_add(q, key, len));
		size[len] = atomic_long_read(&b->used) - used;
		KUNIT_ASSERT_EQ(test, 0, kwq_remove(q, key, len));
		KUNIT_ASSERT_EQ(test, used, atomic_long_read(&b->used));
	}

	for (len = 1; len <= KWQ_KEY_MAX; len++) {
		KUNIT_EXPECT_GE_MSG(test, size[len], (long)(hdr + len),
				    "%zu-byte key", len);
		if (len > 1 && size[len] == size[len - 1])
			continue;
		distinct++;
		if (len == 1)
			continue;
		KUNIT_EXPECT_GT_MSG(test, size[len], size[len - 1],
				    "%zu-byte key", len);
		/* The previous size was full at the previous length. */
		KUNIT_EXPECT_EQ_MSG(test, size[len - 1], (long)(hdr + len - 1),
				    "%ld-byte node, first for a %zu-byte key",
				    size[len], len);
	}
	KUNIT_EXPECT_EQ(test, (unsigned int)KWQ_NODE_CACHES, distinct);
}

static struct kunit_case kwq_table_cases[] = {
	KUNIT_CASE(table_grows_to_a_bucket_a_key_keeping_every_key),
	KUNIT_CASE(chains_keep_nodes_oldest_first),
	KUNIT_CASE(histogram_counts_in_first_bucket_at_or_above),
	KUNIT_CASE(node_is_the_smallest_that_holds_the_key),
	{}
};

static struct kunit_suite kwq_table_suite = {
	.name = "kwq_table",
	.test_cases = kwq_table_cases,
};

kunit_test_suite(kwq_table_suite);
