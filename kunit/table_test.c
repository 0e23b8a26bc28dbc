// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for the queue core's tables (src/queue.c): the hash table
 * grows to at least a bucket a key and keeps every key once, its chains
 * hold their nodes oldest first (across growths too), a duration goes to
 * the first histogram bucket whose bound is at or above it, and a key's
 * node comes from the smallest node cache that holds it.
 *
 * The cases look at struct kwq (layout.h) under q->lock where they walk
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
#include "table.h"

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
			if ((kwq_node_hash(n) & mask) != i)
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

/* A queue of defaults charging *@bp, a byte budget without a limit. */
static struct kwq *tt_budget_queue(struct kunit *test, const char *name,
				   struct kwq_budget **bp)
{
	struct kwq_budget *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	struct kwq *q;

	KUNIT_ASSERT_NOT_NULL(test, b);
	b->limit = ULONG_MAX;
	refcount_set(&b->ref, 1);
	b->release = tt_budget_release;
	/* Destroyed (and freed: the only reference) before @b is. */
	q = kwq_create_anon(name, NULL, b);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(q), "kwq_create_anon: %ld",
			       PTR_ERR(q));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   tt_destroy_action,
							   q));
	*bp = b;
	return q;
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

	size = kunit_kcalloc(test, KWQ_KEY_MAX + 1, sizeof(*size), GFP_KERNEL);
	key = kunit_kmalloc(test, KWQ_KEY_MAX, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, size);
	KUNIT_ASSERT_NOT_NULL(test, key);
	q = tt_budget_queue(test, "kt-table-nodes", &b);

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

/*
 * Room left in the budget before each add: a node's charge (112 bytes
 * for the short keys here), never a table of twice 64 buckets (1 KiB).
 */
#define TT_ROOM		512

/* A user that keeps its budget full: room for one more node, no more. */
static void tt_budget_full(struct kwq_budget *b)
{
	WRITE_ONCE(b->limit, atomic_long_read(&b->used) + TT_ROOM);
}

/* The longest chain of @q's table. Under q->lock, no growth under way. */
static unsigned long tt_longest_chain(struct kwq *q)
{
	unsigned long i, len, longest = 0;
	struct kwq_node *n;

	for (i = 0; i < 1UL << q->hash_bits; i++) {
		len = 0;
		for (n = q->hash[i]; n; n = n->hnext)
			len++;
		longest = max(longest, len);
	}
	return longest;
}

/* Add "<prefix><k>". */
static int tt_add_n(struct kwq *q, const char *prefix, unsigned int k)
{
	char key[16];

	snprintf(key, sizeof(key), "%s%u", prefix, k);
	return kwq_add(q, key, strlen(key));
}

/*
 * A table whose growth the byte budget refuses (its user keeps the budget
 * full: room for a node at every add, never for a bigger table) takes
 * KWQ_LOAD_MAX keys a bucket and then no new key, by any add, in any
 * context, with -EDQUOT: its chains stay short. Adds of keys it has
 * still work, a batch stops at its first new key and says so, no key is
 * lost, and once the budget has room the table grows and takes keys.
 */
static void table_that_cannot_grow_takes_no_key_past_the_bound(struct kunit *test)
{
	struct kwq_key batch[3] = {
		{ .key = TT_PREFIX "0", .len = 3 },
		{ .key = "new-batch", .len = 9 },
		{ .key = TT_PREFIX "1", .len = 3 },
	};
	struct kwq_batch_opts opts = {};
	unsigned long cap, nodes, items, longest;
	unsigned int bits, now_bits, k, i, done = 0, missing = 0;
	char desc[KUNIT_PARAM_DESC_SIZE];
	struct kwq_budget *b;
	unsigned long flags;
	char key[16];
	struct kwq *q;
	int ret = 0;

	q = tt_budget_queue(test, "kt-table-full", &b);
	bits = q->hash_bits;
	cap = (unsigned long)KWQ_LOAD_MAX << bits;
	/* Today's code took every one: nothing bounded the chains. */
	for (k = 0; k < 4 * cap; k++) {
		tt_budget_full(b);
		ret = tt_add_n(q, TT_PREFIX, k);
		if (ret)
			break;
	}
	flush_work(&q->grow_work);
	spin_lock_irq(&q->lock);
	nodes = q->nr_nodes;
	now_bits = q->hash_bits;
	longest = tt_longest_chain(q);
	spin_unlock_irq(&q->lock);
	kunit_info(test, "%u keys taken in %lu buckets, longest chain %lu, then %d\n",
		   k, 1UL << now_bits, longest, ret);
	KUNIT_EXPECT_EQ_MSG(test, -EDQUOT, ret, "after %u keys", k);
	KUNIT_EXPECT_EQ(test, cap, (unsigned long)k);
	KUNIT_EXPECT_EQ(test, bits, now_bits);
	KUNIT_EXPECT_LE(test, nodes, cap);
	/* Load 8 in 64 buckets: a chain of 33 is a 1e-9 chance. */
	KUNIT_EXPECT_LE(test, longest, 4UL * KWQ_LOAD_MAX);

	/* Every kind of add: a new key refused, a key it has added. */
	for (i = 0; i < KT_ADDS; i++) {
		kt_add_desc(&kt_adds[i], desc);
		tt_budget_full(b);
		snprintf(key, sizeof(key), "new-%u", i);
		KUNIT_EXPECT_EQ_MSG(test, -EDQUOT, kt_adds[i].add(q, key),
				    "%s of a new key", desc);
		snprintf(key, sizeof(key), TT_PREFIX "%u", i);
		KUNIT_EXPECT_EQ_MSG(test, 0, kt_adds[i].add(q, key),
				    "%s of a key it has", desc);
	}
	/* From a hard interrupt's context too (kwq_add(): any context). */
	local_irq_save(flags);
	ret = kwq_add(q, "new-irq", 7);
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(test, -EDQUOT, ret);
	/* A batch: the key it has, then the first new one stops it. */
	ret = kwq_add_batch(q, batch, ARRAY_SIZE(batch), &opts, &done);
	KUNIT_EXPECT_EQ(test, -EDQUOT, ret);
	KUNIT_EXPECT_EQ(test, 1U, done);

	spin_lock_irq(&q->lock);
	nodes = q->nr_nodes;
	items = q->nr_items;
	spin_unlock_irq(&q->lock);
	KUNIT_EXPECT_EQ(test, cap, nodes);
	KUNIT_EXPECT_EQ(test, cap, items);
	for (k = 0; k < cap; k++) {
		snprintf(key, sizeof(key), TT_PREFIX "%u", k);
		if (!kt_state(q, key) && !missing++)
			KUNIT_FAIL(test, "key %s lost", key);
	}
	KUNIT_EXPECT_EQ(test, 0U, missing);

	/*
	 * Room in the budget: the add that finds the table full starts the
	 * growth and is refused (the table is full until it has grown);
	 * once it has, the keys go in.
	 */
	WRITE_ONCE(b->limit, ULONG_MAX);
	KUNIT_EXPECT_EQ(test, -EDQUOT, tt_add_n(q, "late-", 0));
	flush_work(&q->grow_work);
	KUNIT_EXPECT_EQ(test, 0, tt_add_n(q, "late-", 1));
	KUNIT_EXPECT_GE(test, q->hash_bits, bits + 3);
	KUNIT_EXPECT_EQ(test, cap + 1, q->nr_nodes);
}

/*
 * Below the bound, a refused growth refuses nothing: a key a bucket up
 * to KWQ_LOAD_MAX goes in, and a key removed makes room for another.
 */
static void table_that_cannot_grow_takes_keys_up_to_the_bound(struct kunit *test)
{
	struct kwq_budget *b;
	unsigned int k, cap;
	struct kwq *q;

	q = tt_budget_queue(test, "kt-table-room", &b);
	cap = KWQ_LOAD_MAX << q->hash_bits;
	for (k = 0; k < cap; k++) {
		tt_budget_full(b);
		KUNIT_ASSERT_EQ_MSG(test, 0, tt_add_n(q, TT_PREFIX, k),
				    "key %u of %u", k, cap);
	}
	tt_budget_full(b);
	KUNIT_EXPECT_EQ(test, -EDQUOT, tt_add_n(q, "over-", 0));
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, TT_PREFIX "7"));
	tt_budget_full(b);
	KUNIT_EXPECT_EQ(test, 0, tt_add_n(q, "over-", 1));
	tt_budget_full(b);
	KUNIT_EXPECT_EQ(test, -EDQUOT, tt_add_n(q, "over-", 2));
	KUNIT_EXPECT_EQ(test, (long)cap, kwq_len(q));
}

static struct kunit_case kwq_table_cases[] = {
	KUNIT_CASE(table_grows_to_a_bucket_a_key_keeping_every_key),
	KUNIT_CASE(chains_keep_nodes_oldest_first),
	KUNIT_CASE(histogram_counts_in_first_bucket_at_or_above),
	KUNIT_CASE(node_is_the_smallest_that_holds_the_key),
	KUNIT_CASE(table_that_cannot_grow_takes_no_key_past_the_bound),
	KUNIT_CASE(table_that_cannot_grow_takes_keys_up_to_the_bound),
	{}
};

static struct kunit_suite kwq_table_suite = {
	.name = "kwq_table",
	.test_cases = kwq_table_cases,
};

kunit_test_suite(kwq_table_suite);
