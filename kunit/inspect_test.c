// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for per-key introspection: kwq_inspect() reports each state
 * with its priority, failure count, times and flags; kwq_inspect_list()
 * walks the keys of some states in bounded chunks with a cursor that a
 * table growth does not disturb and that is refused when it is another
 * queue's or out of range. One behaviour per case, on a fake clock.
 */

#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/kwq.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "kwq_test.h"
#include "queue.h"
#include "table.h"

#define MS	NSEC_PER_MSEC
/* Keys "i-0".."i-<IT_KEYS - 1>": several table growths. */
#define IT_KEYS	3000

/* kwq_inspect() of @key into a zeroed @info; its return. */
static int it_inspect(struct kwq *q, const char *key, struct kwq_key_info *info)
{
	memset(info, 0, sizeof(*info));
	return kwq_inspect(q, key, strlen(key), info);
}

static void it_add_keys(struct kunit *test, struct kwq *q, unsigned int from,
			unsigned int to)
{
	char key[16];

	for (; from < to; from++) {
		snprintf(key, sizeof(key), "i-%u", from);
		KUNIT_ASSERT_EQ(test, 0, kt_add(q, key));
	}
}

/*
 * Walk the keys of @states, @max per call, marking each "i-N" seen in
 * @seen (IT_KEYS bits); counts keys seen twice in *@twice. @between, if
 * not NULL, runs after each call. Returns the number of keys listed.
 */
static unsigned int it_walk(struct kunit *test, struct kwq *q, u32 states,
			    unsigned int max, unsigned long *seen,
			    unsigned int *twice,
			    void (*between)(struct kunit *, struct kwq *))
{
	struct kwq_key_info *infos;
	unsigned int total = 0, i, k, calls = 0;
	u64 cursor = 0;
	char key[16];
	int n;

	infos = kunit_kcalloc(test, max, sizeof(*infos), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, infos);
	*twice = 0;
	do {
		n = kwq_inspect_list(q, states, &cursor, infos, max);
		if (n == -EAGAIN) {
			flush_work(&q->grow_work);
			continue;
		}
		KUNIT_ASSERT_GE(test, n, 0);
		KUNIT_ASSERT_LE(test, n, (int)max);
		for (i = 0; i < n; i++) {
			memcpy(key, infos[i].key, min_t(size_t, 15, infos[i].key_len));
			key[min_t(size_t, 15, infos[i].key_len)] = '\0';
			if (sscanf(key, "i-%u", &k) == 1 && k < IT_KEYS &&
			    test_and_set_bit(k, seen))
				(*twice)++;
		}
		total += n;
		if (between)
			between(test, q);
		KUNIT_ASSERT_LT(test, ++calls, 100000U);
	} while (cursor);
	return total;
}

static void unknown_key_is_enoent(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_key_info info;

	KUNIT_EXPECT_EQ(test, -ENOENT, it_inspect(q, "a", &info));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_inspect(q, NULL, 1, &info));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_inspect(q, "a", 1, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_inspect(q, "a", KWQ_KEY_MAX + 1,
						   &info));
}

static void ready_key_reports_priority_and_time_waited(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_key_info info;

	kt_add_prio(q, "a", 7);
	kt_advance(c, 30 * MS);
	KUNIT_ASSERT_EQ(test, 0, it_inspect(q, "a", &info));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_READY, info.state);
	KUNIT_EXPECT_EQ(test, 7, info.priority);
	KUNIT_EXPECT_EQ(test, 30 * MS, info.since_ns);
	KUNIT_EXPECT_EQ(test, 0U, info.flags);
	KUNIT_EXPECT_EQ(test, 1, (int)info.key_len);
	KUNIT_EXPECT_EQ(test, 'a', info.key[0]);
}

static void ready_key_reports_remembered_deadline(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_key_info info;

	kt_add(q, "a");
	kt_add_after(q, "a", 100 * MS);
	kt_advance(c, 40 * MS);
	KUNIT_ASSERT_EQ(test, 0, it_inspect(q, "a", &info));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_DUE, info.flags);
	KUNIT_EXPECT_EQ(test, 60 * MS, info.due_ns);
}

static void waiting_key_reports_time_left(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_key_info info;

	kt_add_after(q, "a", 100 * MS);
	kt_advance(c, 30 * MS);
	KUNIT_ASSERT_EQ(test, 0, it_inspect(q, "a", &info));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_WAITING, info.state);
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_DUE, info.flags);
	KUNIT_EXPECT_EQ(test, 70 * MS, info.due_ns);
	KUNIT_EXPECT_EQ(test, 0ULL, info.since_ns);
}

static void processing_key_reports_owner_and_time_held(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_key_info info;
	struct kwq_item item;
	int owner;

	kt_add(q, "a");
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &owner, KWQ_GET_NONBLOCK, 0, &item));
	kt_advance(c, 20 * MS);
	KUNIT_ASSERT_EQ(test, 0, it_inspect(q, "a", &info));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_PROCESSING, info.state);
	KUNIT_EXPECT_PTR_EQ(test, (const void *)&owner, info.owner);
	KUNIT_EXPECT_EQ(test, 20 * MS, info.since_ns);
	/* A kernel queue's creator told no holder ids; no deadline. */
	KUNIT_EXPECT_EQ(test, 0U, info.holder);
	KUNIT_EXPECT_EQ(test, 0ULL, info.timeout_ns);
	KUNIT_EXPECT_EQ(test, 0U, info.flags);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
}

static void processing_key_added_again_is_dirty(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_key_info info;
	struct kwq_item item;

	kt_add(q, "a");
	item = kt_get(test, q, "a");
	kt_add(q, "a");
	KUNIT_ASSERT_EQ(test, 0, it_inspect(q, "a", &info));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_DIRTY, info.flags);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
}

static void processing_key_added_after_is_delayed(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_key_info info;
	struct kwq_item item;

	kt_add(q, "a");
	item = kt_get(test, q, "a");
	kt_add_after(q, "a", 50 * MS);
	KUNIT_ASSERT_EQ(test, 0, it_inspect(q, "a", &info));
	KUNIT_EXPECT_EQ(test, (u32)(KWQ_KEY_DELAYED | KWQ_KEY_DUE), info.flags);
	KUNIT_EXPECT_EQ(test, 50 * MS, info.due_ns);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
}

/*
 * Dirty and remembering a deadline: DIRTY (ready at done) and DUE (the
 * deadline, kept for after that run), never DELAYED.
 */
static void dirty_key_with_a_deadline_is_dirty_and_due(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_key_info info;
	struct kwq_item item;

	kt_add(q, "a");
	item = kt_get(test, q, "a");
	kt_add_after(q, "a", 50 * MS);
	kt_add(q, "a");
	KUNIT_ASSERT_EQ(test, 0, it_inspect(q, "a", &info));
	KUNIT_EXPECT_EQ(test, (u32)(KWQ_KEY_DIRTY | KWQ_KEY_DUE), info.flags);
	KUNIT_EXPECT_EQ(test, 50 * MS, info.due_ns);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	/* Ready for the dirty run, the deadline still remembered. */
	KUNIT_ASSERT_EQ(test, 0, it_inspect(q, "a", &info));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_READY, info.state);
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_DUE, info.flags);
}

static void processing_key_past_its_retries_is_dying(struct kunit *test)
{
	struct kwq_config cfg = { .max_retries = 1 };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, &cfg, &c);
	struct kwq_key_info info;
	struct kwq_item item;

	kt_add(q, "a");
	item = kt_get(test, q, "a");
	kt_advance(c, kt_rate_limited(test, q, "a"));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	kt_advance(c, 1000 * MS);
	item = kt_get(test, q, "a");
	KUNIT_EXPECT_EQ(test, KWQ_DELAY_DEAD, kt_rate_limited(test, q, "a"));
	KUNIT_ASSERT_EQ(test, 0, it_inspect(q, "a", &info));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_DYING, info.flags);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
}

static void dead_key_reports_count_and_time_since_failure(struct kunit *test)
{
	struct kwq_config cfg = { .max_retries = 1 };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, &cfg, &c);
	struct kwq_key_info info;

	kt_add_after(q, "a", 10 * MS);
	kt_rate_limited(test, q, "a");
	/* Waiting with one failure: the next failure is its last. */
	KUNIT_EXPECT_EQ(test, KWQ_DELAY_DEAD, kt_rate_limited(test, q, "a"));
	kt_advance(c, 25 * MS);
	KUNIT_ASSERT_EQ(test, 0, it_inspect(q, "a", &info));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_DEAD, info.state);
	KUNIT_EXPECT_EQ(test, 2U, info.failures);
	KUNIT_EXPECT_EQ(test, 25 * MS, info.since_ns);
}

static void idle_key_reports_its_failure_count(struct kunit *test)
{
	/*
	 * A clock of the test's: on the real one, a host slow enough to
	 * pass the rate limiter's 5 ms between the add and the done took
	 * another path (seen once on 7.2 under load).
	 */
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_key_info info;

	kt_add(q, "a");
	kt_rate_limited(test, q, "a");
	kt_get_done(test, q, "a");
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "a"));
	KUNIT_ASSERT_EQ(test, 0, it_inspect(q, "a", &info));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_IDLE, info.state);
	KUNIT_EXPECT_EQ(test, 1U, info.failures);
}

static void list_walks_every_key_once_in_chunks(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	unsigned long *seen = kunit_kzalloc(test, BITS_TO_LONGS(IT_KEYS) *
					    sizeof(long), GFP_KERNEL);
	unsigned int twice;

	KUNIT_ASSERT_NOT_NULL(test, seen);
	it_add_keys(test, q, 0, IT_KEYS);
	flush_work(&q->grow_work);
	KUNIT_EXPECT_EQ(test, (unsigned int)IT_KEYS,
			it_walk(test, q, KWQ_KEY_STATES_ALL, 7, seen, &twice,
				NULL));
	KUNIT_EXPECT_EQ(test, 0U, twice);
	KUNIT_EXPECT_EQ(test, (unsigned int)IT_KEYS,
			bitmap_weight(seen, IT_KEYS));
}

static void list_keeps_to_the_states_asked(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	unsigned long seen[BITS_TO_LONGS(IT_KEYS)] = {};
	struct kwq_item item;
	unsigned int twice;

	it_add_keys(test, q, 0, 10);
	kt_add_after(q, "w", 100 * MS);
	item = kt_get(test, q, "i-0");
	KUNIT_EXPECT_EQ(test, 1U, it_walk(test, q, BIT(KWQ_KEY_PROCESSING), 4,
					  seen, &twice, NULL));
	KUNIT_EXPECT_TRUE(test, test_bit(0, seen));
	KUNIT_EXPECT_EQ(test, 1U, it_walk(test, q, BIT(KWQ_KEY_WAITING), 4,
					  seen, &twice, NULL));
	KUNIT_EXPECT_EQ(test, 9U, it_walk(test, q, BIT(KWQ_KEY_READY), 4,
					  seen, &twice, NULL));
	KUNIT_EXPECT_EQ(test, 0U, it_walk(test, q, BIT(KWQ_KEY_DEAD), 4,
					  seen, &twice, NULL));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
}

/* it_walk()'s @between: a growth of the table between two chunks. */
static void it_grow(struct kunit *test, struct kwq *q)
{
	static unsigned int next = IT_KEYS / 4;

	if (next >= IT_KEYS)
		return;
	it_add_keys(test, q, next, min(next + 600, (unsigned int)IT_KEYS));
	next += 600;
	flush_work(&q->grow_work);
}

static void list_survives_table_growth(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	unsigned long *seen = kunit_kzalloc(test, BITS_TO_LONGS(IT_KEYS) *
					    sizeof(long), GFP_KERNEL);
	unsigned int twice, bits;

	KUNIT_ASSERT_NOT_NULL(test, seen);
	it_add_keys(test, q, 0, IT_KEYS / 4);
	flush_work(&q->grow_work);
	bits = q->hash_bits;
	it_walk(test, q, KWQ_KEY_STATES_ALL, 5, seen, &twice, it_grow);
	KUNIT_EXPECT_GT(test, q->hash_bits, bits);
	/* Each key there from the start: listed, and once. */
	KUNIT_EXPECT_EQ(test, 0U, twice);
	KUNIT_EXPECT_EQ(test, (unsigned int)IT_KEYS / 4,
			bitmap_weight(seen, IT_KEYS / 4));
}

static void list_holds_the_lock_for_a_bounded_chunk(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_key_info info;
	u64 cursor = 0;

	it_add_keys(test, q, 0, IT_KEYS);
	flush_work(&q->grow_work);
	KUNIT_ASSERT_GT(test, 1UL << q->hash_bits, (unsigned long)KWQ_INSPECT_BUCKETS);
	/* No dead key: the call stops after its buckets, not at the end. */
	KUNIT_EXPECT_EQ(test, 0, kwq_inspect_list(q, BIT(KWQ_KEY_DEAD),
						  &cursor, &info, 1));
	KUNIT_EXPECT_NE(test, 0ULL, cursor);
}

static void cursor_of_another_queue_is_estale(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq *other = kt_create(test, NULL, NULL);
	struct kwq_key_info info;
	u64 cursor = 0, kept;

	it_add_keys(test, q, 0, 4);
	KUNIT_ASSERT_EQ(test, 1, kwq_inspect_list(q, KWQ_KEY_STATES_ALL,
						  &cursor, &info, 1));
	KUNIT_ASSERT_NE(test, 0ULL, cursor);
	kept = cursor;
	/* Tags are random: a clash would make this case meaningless. */
	if (q->cursor_tag == other->cursor_tag)
		kunit_skip(test, "both queues drew the same tag");
	KUNIT_EXPECT_EQ(test, -ESTALE,
			kwq_inspect_list(other, KWQ_KEY_STATES_ALL, &cursor,
					 &info, 1));
	KUNIT_EXPECT_EQ(test, kept, cursor);
}

static void forged_cursor_is_refused(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_key_info info;
	u64 cursor = 1;

	/* No tag at all. */
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_inspect_list(q, KWQ_KEY_STATES_ALL,
							&cursor, &info, 1));
	KUNIT_EXPECT_EQ(test, 1ULL, cursor);
}

/* A cursor names a place, not a bucket: any place is one to go on from. */
static void cursor_past_the_table_is_a_place(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_key_info info;
	u64 cursor;

	kt_add(q, "a");
	cursor = (u64)q->cursor_tag << 48 | U32_MAX;
	KUNIT_EXPECT_GE(test, kwq_inspect_list(q, KWQ_KEY_STATES_ALL, &cursor,
					       &info, 1), 0);
	KUNIT_EXPECT_EQ(test, 0ULL, cursor);
}

/* The kernel's hsiphash self-test key: the layouts below follow from it. */
static void it_fix_hash(struct kunit *test, struct kwq *q)
{
	static const hsiphash_key_t key = {{ 0x0706050403020100ULL,
					     0x0f0e0d0c0b0a0908ULL }};

	KUNIT_ASSERT_EQ(test, 0UL, q->nr_nodes);
	q->hkey = key;
}

static u32 it_hash(struct kwq *q, const char *key)
{
	return kwq_hash(q, key, strlen(key));
}

/* Grow a table of 64 buckets to 128: keys "g-*" past a key a bucket. */
static void it_grow_once(struct kunit *test, struct kwq *q)
{
	unsigned int bits = q->hash_bits, i = 0;
	char key[16];

	while (q->nr_nodes <= 1UL << bits) {
		snprintf(key, sizeof(key), "g-%u", i++);
		KUNIT_ASSERT_EQ(test, 0, kt_add(q, key));
	}
	flush_work(&q->grow_work);
	KUNIT_ASSERT_EQ(test, bits + 1, q->hash_bits);
}

/*
 * A call stops between two keys of one bucket, and the table grows before
 * the next: the bucket's keys part for two buckets, and the walk neither
 * lists the first again nor skips the second. With the key above, bucket
 * 6 of the 64 holds "i-3" (oldest, bit 6 of its hash set: bucket 70 of
 * the 128) and "i-28" (bit 6 clear: bucket 6). A walk in chain order
 * that counted keys into bucket 6 would skip "i-28" and list "i-3" again
 * in bucket 70.
 */
static void list_stopped_inside_a_bucket_survives_growth(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	unsigned long seen[BITS_TO_LONGS(64)] = {};
	unsigned int twice = 0, k, calls = 0;
	struct kwq_key_info info;
	bool grown = false;
	u64 cursor = 0;
	char key[16];
	int n;

	it_fix_hash(test, q);
	it_add_keys(test, q, 0, 64);
	KUNIT_ASSERT_EQ(test, 6U, q->hash_bits);
	KUNIT_ASSERT_EQ(test, 6U, it_hash(q, "i-3") & 63);
	KUNIT_ASSERT_EQ(test, 70U, it_hash(q, "i-3") & 127);
	KUNIT_ASSERT_EQ(test, 6U, it_hash(q, "i-28") & 127);
	do {
		n = kwq_inspect_list(q, KWQ_KEY_STATES_ALL, &cursor, &info, 1);
		KUNIT_ASSERT_GE(test, n, 0);
		KUNIT_ASSERT_LT(test, ++calls, 1000U);
		if (!n)
			continue;
		memcpy(key, info.key, min_t(size_t, 15, info.key_len));
		key[min_t(size_t, 15, info.key_len)] = '\0';
		if (sscanf(key, "i-%u", &k) != 1 || k >= 64)
			continue;
		twice += test_and_set_bit(k, seen);
		/* Between the two keys of bucket 6, whichever is first. */
		if ((k == 3 || k == 28) && !grown) {
			it_grow_once(test, q);
			grown = true;
		}
	} while (cursor);
	KUNIT_EXPECT_TRUE(test, grown);
	KUNIT_EXPECT_EQ(test, 0U, twice);
	KUNIT_EXPECT_EQ(test, 64U, bitmap_weight(seen, 64));
}

/* Two keys of one 32-bit hash under the key above, added in this order. */
#define IT_OLD	"c-41272"
#define IT_NEW	"c-74986"

static struct kwq *it_one_hash_pair(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);

	it_fix_hash(test, q);
	kt_add(q, IT_OLD);
	kt_add(q, IT_NEW);
	KUNIT_ASSERT_EQ(test, it_hash(q, IT_OLD), it_hash(q, IT_NEW));
	return q;
}

/* Walk all keys one a call; @at_old runs each time IT_OLD is listed. */
static void it_walk_pair(struct kunit *test, struct kwq *q,
			 void (*at_old)(struct kunit *, struct kwq *,
					unsigned int, u64),
			 unsigned int *old, unsigned int *new)
{
	struct kwq_key_info info;
	unsigned int calls = 0;
	u64 cursor = 0;
	int n;

	*old = 0;
	*new = 0;
	do {
		n = kwq_inspect_list(q, KWQ_KEY_STATES_ALL, &cursor, &info, 1);
		KUNIT_ASSERT_GE(test, n, 0);
		KUNIT_ASSERT_LT(test, ++calls, 1000U);
		if (n && info.key_len == 7 && !memcmp(info.key, IT_OLD, 7))
			at_old(test, q, ++*old, cursor);
		if (n && info.key_len == 7 && !memcmp(info.key, IT_NEW, 7))
			++*new;
	} while (cursor);
}

/* Stopped at that place, one key of it listed; then the table grows. */
static void it_grow_after_count(struct kunit *test, struct kwq *q,
				unsigned int nth, u64 cursor)
{
	KUNIT_EXPECT_EQ(test, 1U, (u32)(cursor >> 32) & 0xffff);
	it_grow_once(test, q);
}

/* The first time: it leaves and comes back, now the newer of the two. */
static void it_readd_old(struct kunit *test, struct kwq *q, unsigned int nth,
			 u64 cursor)
{
	if (nth > 1)
		return;
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, IT_OLD));
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, IT_OLD));
}

/*
 * Two keys of one 32-bit hash (found for the key above) and room for one:
 * the cursor stops between them by a count, which a growth of the table
 * does not throw off (they share a bucket in any table, oldest first).
 */
static void list_splits_keys_of_one_hash_by_count(struct kunit *test)
{
	struct kwq *q = it_one_hash_pair(test);
	unsigned int a, b;

	it_walk_pair(test, q, it_grow_after_count, &a, &b);
	KUNIT_EXPECT_EQ(test, 1U, a);
	KUNIT_EXPECT_EQ(test, 1U, b);
}

/*
 * The one way a walk lists a key twice: keys of one hash split across
 * calls (room for one), counted in chain order, oldest first. The first
 * listed leaves and comes back between the calls, now the newer of the
 * two: the count passes over the other and lists it again.
 */
static void list_split_by_count_can_list_a_key_twice(struct kunit *test)
{
	struct kwq *q = it_one_hash_pair(test);
	unsigned int a, b;

	it_walk_pair(test, q, it_readd_old, &a, &b);
	KUNIT_EXPECT_EQ(test, 2U, a);
	KUNIT_EXPECT_EQ(test, 0U, b);
}

/* Room for both keys of one hash: one call lists them together. */
static void list_keeps_keys_of_one_hash_together(struct kunit *test)
{
	struct kwq *q = it_one_hash_pair(test);
	/* 2 of them are too big for the stack (keys of KWQ_KEY_MAX bytes). */
	struct kwq_key_info *infos = kunit_kcalloc(test, 2, sizeof(*infos),
						   GFP_KERNEL);
	unsigned int calls = 0, both = 0;
	u64 cursor = 0;
	int n;

	KUNIT_ASSERT_NOT_NULL(test, infos);
	do {
		n = kwq_inspect_list(q, KWQ_KEY_STATES_ALL, &cursor, infos, 2);
		KUNIT_ASSERT_GE(test, n, 0);
		KUNIT_ASSERT_LT(test, ++calls, 1000U);
		both += n == 2;
	} while (cursor);
	KUNIT_EXPECT_EQ(test, 1U, both);
}

static void list_bad_arguments_are_einval(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_key_info info;
	u64 cursor = 0;

	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_inspect_list(q, 0, &cursor, &info, 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_inspect_list(q, BIT(0), &cursor,
							&info, 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_inspect_list(q, BIT(6), &cursor,
							&info, 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_inspect_list(q, KWQ_KEY_STATES_ALL,
							&cursor, &info, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_inspect_list(q, KWQ_KEY_STATES_ALL,
							NULL, &info, 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_inspect_list(q, KWQ_KEY_STATES_ALL,
							&cursor, NULL, 1));
}

static void list_while_table_grows_is_eagain(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_node *fake = (void *)q;	/* never followed */
	struct kwq_key_info info;
	u64 cursor = 0;

	/* As kwq_grow_work() leaves it between two chunks of its move. */
	spin_lock_irq(&q->lock);
	q->new_hash = &fake;
	spin_unlock_irq(&q->lock);
	KUNIT_EXPECT_EQ(test, -EAGAIN, kwq_inspect_list(q, KWQ_KEY_STATES_ALL,
							&cursor, &info, 1));
	KUNIT_EXPECT_EQ(test, 0ULL, cursor);
	spin_lock_irq(&q->lock);
	q->new_hash = NULL;
	spin_unlock_irq(&q->lock);
}

static struct kunit_case kwq_inspect_cases[] = {
	KUNIT_CASE(unknown_key_is_enoent),
	KUNIT_CASE(ready_key_reports_priority_and_time_waited),
	KUNIT_CASE(ready_key_reports_remembered_deadline),
	KUNIT_CASE(waiting_key_reports_time_left),
	KUNIT_CASE(processing_key_reports_owner_and_time_held),
	KUNIT_CASE(processing_key_added_again_is_dirty),
	KUNIT_CASE(processing_key_added_after_is_delayed),
	KUNIT_CASE(dirty_key_with_a_deadline_is_dirty_and_due),
	KUNIT_CASE(processing_key_past_its_retries_is_dying),
	KUNIT_CASE(dead_key_reports_count_and_time_since_failure),
	KUNIT_CASE(idle_key_reports_its_failure_count),
	KUNIT_CASE(list_walks_every_key_once_in_chunks),
	KUNIT_CASE(list_keeps_to_the_states_asked),
	KUNIT_CASE(list_survives_table_growth),
	KUNIT_CASE(list_stopped_inside_a_bucket_survives_growth),
	KUNIT_CASE(list_splits_keys_of_one_hash_by_count),
	KUNIT_CASE(list_split_by_count_can_list_a_key_twice),
	KUNIT_CASE(list_keeps_keys_of_one_hash_together),
	KUNIT_CASE(list_holds_the_lock_for_a_bounded_chunk),
	KUNIT_CASE(cursor_of_another_queue_is_estale),
	KUNIT_CASE(forged_cursor_is_refused),
	KUNIT_CASE(cursor_past_the_table_is_a_place),
	KUNIT_CASE(list_bad_arguments_are_einval),
	KUNIT_CASE(list_while_table_grows_is_eagain),
	{}
};

static struct kunit_suite kwq_inspect_suite = {
	.name = "kwq_inspect",
	.test_cases = kwq_inspect_cases,
};

kunit_test_suite(kwq_inspect_suite);
