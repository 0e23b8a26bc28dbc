// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for the kwq queue core: one behaviour per case. Time is a
 * fake clock stepped by the test unless a case is about the real clock.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/kwq.h>
#include <linux/poll.h>
#include <linux/string.h>

#include "compat.h"
#include "kwq_internal.h"
#include "kwq_test.h"

#define MS	NSEC_PER_MSEC

/* --- Queue: FIFO, dedup, processing set --- */

static void add_then_get_returns_key(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "a"));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	kt_get_done(test, q, "a");
	kt_expect_empty(test, q);
}

static void get_is_fifo(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add(q, "a");
	kt_add(q, "b");
	kt_add(q, "c");
	kt_get_done(test, q, "a");
	kt_get_done(test, q, "b");
	kt_get_done(test, q, "c");
	kt_expect_empty(test, q);
}

static void add_of_ready_key_is_noop(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add(q, "a");
	kt_add(q, "b");
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "a"));
	KUNIT_EXPECT_EQ(test, 2L, kwq_len(q));
	/* "a" keeps its place in the FIFO. */
	kt_get_done(test, q, "a");
	kt_get_done(test, q, "b");
	kt_expect_empty(test, q);
	KUNIT_EXPECT_EQ(test, 2ULL, kt_stats(test, q).adds_total);
}

static void processing_key_is_not_handed_out_twice(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a, b;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "a"));
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, -EAGAIN,
			kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &b));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	kt_get_done(test, q, "a");
}

static void add_while_processing_requeues_at_tail_on_done(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	kt_add(q, "a");
	kt_add(q, "b");
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	KUNIT_EXPECT_EQ(test, 2L, kwq_len(q));
	kt_get_done(test, q, "b");
	kt_get_done(test, q, "a");
	kt_expect_empty(test, q);
}

static void done_releases_clean_key(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_stats st;

	kt_add(q, "a");
	kt_get_done(test, q, "a");
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 0ULL, st.processing);
	KUNIT_EXPECT_EQ(test, 0ULL, st.len);
	kt_expect_empty(test, q);
	/* Released: a new add queues it again. */
	kt_add(q, "a");
	kt_get_done(test, q, "a");
}

static void done_of_item_not_processing_is_estale(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq *other = kt_create(test, NULL, &c);
	struct kwq_item a;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(other, &a));
	kt_add(q, "a");
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	/* a is ready again, not processing: a second done is refused. */
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &a));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
}

/* --- stale items: kwq_done() of a lease that has ended --- */

/*
 * What a kwq_done() could change is as it was in @want. noinline: the
 * snapshots are large, and KASAN's stack redzones add up in the callers.
 */
static noinline void kt_expect_stats_unchanged(struct kunit *test,
					       struct kwq *q,
					       const struct kwq_stats *want)
{
	struct kwq_stats st = kt_stats(test, q);

	KUNIT_EXPECT_EQ(test, want->len, st.len);
	KUNIT_EXPECT_EQ(test, want->waiting, st.waiting);
	KUNIT_EXPECT_EQ(test, want->processing, st.processing);
	KUNIT_EXPECT_EQ(test, want->adds_total, st.adds_total);
	KUNIT_EXPECT_EQ(test, want->lease_returns, st.lease_returns);
	KUNIT_EXPECT_EQ(test, want->depth, st.depth);
	KUNIT_EXPECT_EQ(test, want->unfinished_work_ns, st.unfinished_work_ns);
	KUNIT_EXPECT_EQ(test, want->queue_duration.count,
			st.queue_duration.count);
	KUNIT_EXPECT_EQ(test, want->work_duration.count,
			st.work_duration.count);
	KUNIT_EXPECT_EQ(test, want->work_duration.sum_ns,
			st.work_duration.sum_ns);
}

/*
 * The sequence that crashed the kernel when items were pointers to the
 * key's record: the record was still there, handed out again, and the
 * old holder's done ended the new holder's processing.
 */
static void stale_done_after_key_handed_out_again_is_estale(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item it1, it2, none;
	struct kwq_stats st;

	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "s"));
	it1 = kt_get(test, q, "s");
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "s"));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &it1));
	it2 = kt_get(test, q, "s");
	kt_advance(c, 1 * MS);
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 1ULL, st.processing);

	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &it1));
	kt_expect_stats_unchanged(test, q, &st);
	/* "s" is still processing under it2: not ready, not handed out. */
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, -EAGAIN,
			kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &none));
	/* An add marks it dirty rather than queuing it. */
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "s"));
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 1ULL, st.processing);
	KUNIT_EXPECT_EQ(test, 1ULL, st.depth);

	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &it2));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	kt_get_done(test, q, "s");
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 0ULL, st.processing);
	KUNIT_EXPECT_EQ(test, 0ULL, st.len);
	KUNIT_EXPECT_EQ(test, 0ULL, st.depth);
	kt_expect_empty(test, q);
}

static void second_done_of_same_item_is_estale(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_stats before;
	struct kwq_item it;

	kt_add(q, "a");
	it = kt_get(test, q, "a");
	kt_advance(c, 1 * MS);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &it));
	before = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 0ULL, before.processing);
	KUNIT_EXPECT_EQ(test, 1ULL, before.work_duration.count);

	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &it));
	kt_expect_stats_unchanged(test, q, &before);
	kt_expect_empty(test, q);
}

static void done_after_release_owner_is_estale(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item it, again;
	struct kwq_stats st;
	int x;

	kt_add(q, "a");
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &x, KWQ_GET_NONBLOCK, 0, &it));
	KUNIT_EXPECT_EQ(test, 1, kwq_release_owner(q, &x));
	st = kt_stats(test, q);

	/* Ready again after the lease return: the done must not touch it. */
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &it));
	kt_expect_stats_unchanged(test, q, &st);
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	/* Nor once it is handed out again. */
	again = kt_get(test, q, "a");
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &it));
	kt_expect_stats_unchanged(test, q, &st);
	KUNIT_EXPECT_EQ(test, 1ULL, st.processing);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &again));
	/* The key was ready exactly once. */
	kt_expect_empty(test, q);
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 0ULL, st.processing);
}

static void done_of_item_from_other_queue_is_estale(struct kunit *test)
{
	struct kt_clock *c1, *c2;
	struct kwq *q = kt_create(test, NULL, &c1);
	struct kwq *other = kt_create(test, NULL, &c2);
	struct kwq_stats q_before, other_before;
	struct kwq_item it_q, it_other;

	/* The same key processing on both: only the lease tells them apart. */
	kt_add(q, "a");
	kt_add(other, "a");
	it_q = kt_get(test, q, "a");
	it_other = kt_get(test, other, "a");
	q_before = kt_stats(test, q);
	other_before = kt_stats(test, other);
	KUNIT_EXPECT_EQ(test, 1ULL, q_before.processing);
	KUNIT_EXPECT_EQ(test, 1ULL, other_before.processing);

	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(other, &it_q));
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &it_other));
	kt_expect_stats_unchanged(test, q, &q_before);
	kt_expect_stats_unchanged(test, other, &other_before);

	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &it_q));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(other, &it_other));
	kt_expect_empty(test, q);
	kt_expect_empty(test, other);
}

static void done_of_zeroed_item_is_estale(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item zero = {}, it;
	struct kwq_stats before;

	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &zero));
	kt_add(q, "a");
	it = kt_get(test, q, "a");
	before = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &zero));
	kt_expect_stats_unchanged(test, q, &before);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &it));
	kt_expect_empty(test, q);
}

static void done_with_null_item_or_queue_is_einval(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_stats before;
	struct kwq_item it;

	kt_add(q, "a");
	it = kt_get(test, q, "a");
	before = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_done(q, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_done(NULL, &it));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_done(NULL, NULL));
	kt_expect_stats_unchanged(test, q, &before);
	/* The lease is still good. */
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &it));
}

static void len_counts_ready_keys_only(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	kt_add_after(q, "w", 10 * MS);
	kt_add(q, "r");
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
}

static void keys_are_binary_and_length_sensitive(struct kunit *test)
{
	static const char k1[] = { 'a', 0, 'b' };
	static const char k2[] = { 'a', 0, 'c' };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item item;
	const u8 *k;
	size_t len;

	KUNIT_EXPECT_EQ(test, 0, kwq_add(q, k1, sizeof(k1)));
	KUNIT_EXPECT_EQ(test, 0, kwq_add(q, k2, sizeof(k2)));
	KUNIT_EXPECT_EQ(test, 0, kwq_add(q, k1, 1));
	KUNIT_EXPECT_EQ(test, 0, kwq_add(q, k1, 2));
	KUNIT_EXPECT_EQ(test, 0, kwq_add(q, k1, sizeof(k1)));
	KUNIT_EXPECT_EQ(test, 4L, kwq_len(q));
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &item));
	k = kwq_item_key(&item, &len);
	KUNIT_EXPECT_EQ(test, len, sizeof(k1));
	KUNIT_EXPECT_MEMEQ(test, k, k1, sizeof(k1));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
}

static void long_keys_up_to_max_are_kept_intact(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	static const size_t lens[] = { 1, 48, 49, 255, KWQ_KEY_MAX };
	struct kwq_item item;
	const u8 *k;
	size_t i, len;
	u8 *key;

	key = kunit_kzalloc(test, KWQ_KEY_MAX + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, key);
	for (i = 0; i <= KWQ_KEY_MAX; i++)
		key[i] = i * 7 + 1;
	for (i = 0; i < ARRAY_SIZE(lens); i++)
		KUNIT_EXPECT_EQ(test, 0, kwq_add(q, key, lens[i]));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add(q, key, KWQ_KEY_MAX + 1));
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		KUNIT_ASSERT_EQ(test, 0,
				kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &item));
		k = kwq_item_key(&item, &len);
		KUNIT_EXPECT_EQ(test, len, lens[i]);
		KUNIT_EXPECT_MEMEQ(test, k, key, lens[i]);
		KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	}
}

/*
 * A Kubernetes namespace/name key of the longest kind (63 + 1 + 253 =
 * 317 bytes) and a key of 1024 bytes through every call of the kernel
 * API, one key and batched, each key seen intact; 1025 bytes is -EINVAL
 * everywhere and changes nothing.
 */
static void kubernetes_and_1024_byte_keys_pass_every_call(struct kunit *test)
{
	static const size_t lens[] = { 317, 1024 };
	struct kwq_config cfg = { .max_retries = 1 };
	struct kwq_batch_opts opts = { .gfp = GFP_KERNEL };
	struct kwq_key keys[3];
	struct kwq_item items[3];
	struct kwq_key_info *info;
	unsigned int done;
	struct kt_clock *c;
	struct kwq *q;
	u64 cursor = 0;
	size_t i, j, len;
	const u8 *k;
	u8 *key;

	q = kt_create(test, &cfg, &c);
	/* Room for the batch's keys at key + 0, 1 and 2. */
	key = kunit_kzalloc(test, 1024 + 2, GFP_KERNEL);
	info = kunit_kzalloc(test, sizeof(*info), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, key);
	KUNIT_ASSERT_NOT_NULL(test, info);
	for (i = 0; i < 1024 + 2; i++)
		key[i] = i * 13 + 5;
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		len = lens[i];
		/* One key: add, inspect, get, done, rate-limited add. */
		KUNIT_ASSERT_EQ(test, 0, kwq_add(q, key, len));
		KUNIT_ASSERT_EQ(test, 0, kwq_inspect(q, key, len, info));
		KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_READY, info->state);
		KUNIT_ASSERT_EQ(test, (size_t)info->key_len, len);
		KUNIT_EXPECT_MEMEQ(test, info->key, key, len);
		KUNIT_ASSERT_EQ(test, 0,
				kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &items[0]));
		k = kwq_item_key(&items[0], &j);
		KUNIT_EXPECT_EQ(test, j, len);
		KUNIT_EXPECT_MEMEQ(test, k, key, len);
		KUNIT_EXPECT_EQ(test, 0, kwq_done_key(q, key, len, NULL));
		KUNIT_EXPECT_EQ(test, 0, kwq_add_after(q, key, len, 10));
		KUNIT_EXPECT_EQ(test, 0, kwq_remove(q, key, len));
		/* Two failures: the second moves it to the dead set. */
		KUNIT_EXPECT_EQ(test, 0, kwq_add(q, key, len));
		KUNIT_ASSERT_EQ(test, 0,
				kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &items[0]));
		KUNIT_EXPECT_EQ(test, 0,
				kwq_add_rate_limited(q, key, len, NULL, NULL));
		KUNIT_EXPECT_EQ(test, 1, kwq_num_requeues(q, key, len));
		KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &items[0]));
		kt_advance(c, 1000 * NSEC_PER_SEC);
		KUNIT_ASSERT_EQ(test, 0,
				kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &items[0]));
		KUNIT_EXPECT_EQ(test, 0,
				kwq_add_rate_limited(q, key, len, NULL, NULL));
		KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &items[0]));
		KUNIT_EXPECT_EQ(test, 0, kwq_inspect(q, key, len, info));
		KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_DEAD, info->state);
		KUNIT_EXPECT_EQ(test, 0, kwq_revive(q, key, len));
		KUNIT_EXPECT_EQ(test, 0, kwq_remove(q, key, len));
		KUNIT_EXPECT_EQ(test, 0, kwq_forget(q, key, len));
		KUNIT_EXPECT_EQ(test, -ENOENT, kwq_inspect(q, key, len, info));
		/* Batched: a short key between two long ones, in order. */
		for (j = 0; j < ARRAY_SIZE(keys); j++) {
			keys[j].key = key + j;
			keys[j].len = j == 1 ? 1 : len;
			keys[j].priority = 0;
		}
		KUNIT_EXPECT_EQ(test, 0, kwq_add_batch(q, keys, 3, &opts, &done));
		KUNIT_EXPECT_EQ(test, 3U, done);
		KUNIT_EXPECT_EQ(test, 1, kwq_inspect_list(q, BIT(KWQ_KEY_READY),
							  &cursor, info, 1));
		KUNIT_ASSERT_EQ(test, 3, kwq_get_batch(q, NULL, KWQ_GET_NONBLOCK,
						       0, items, 0, 3));
		for (j = 0; j < ARRAY_SIZE(keys); j++) {
			k = kwq_item_key(&items[j], &len);
			KUNIT_EXPECT_EQ(test, len, (size_t)keys[j].len);
			KUNIT_EXPECT_MEMEQ(test, k, keys[j].key, len);
		}
		KUNIT_EXPECT_EQ(test, 0, kwq_done_batch(q, items, 3, &done));
		KUNIT_EXPECT_EQ(test, 3U, done);
		kt_expect_empty(test, q);
		cursor = 0;
	}
	/* 1025 bytes: refused by every call, nothing changed. */
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add(q, key, 1025));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_after(q, key, 1025, 10));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			kwq_add_rate_limited(q, key, 1025, NULL, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_done_key(q, key, 1025, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_inspect(q, key, 1025, info));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_num_requeues(q, key, 1025));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_revive(q, key, 1025));
	keys[1].len = 1025;
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_batch(q, keys, 3, &opts, &done));
	kt_expect_empty(test, q);
	KUNIT_EXPECT_EQ(test, (size_t)KWQ_KEY_MAX, (size_t)1024);
}

/*
 * Adds race the resize work on the other CPU: dedup must hold throughout.
 * 6000 keys: the table grows from 64 buckets to 8192, the last growth
 * moving 4096 buckets in chunks of 32 while up to 1900 more keys come.
 */
static void keys_stay_unique_while_the_table_grows(struct kunit *test)
{
	const unsigned int nr = 6000;
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	unsigned int i, old;

	for (i = 0; i < nr; i++) {
		KUNIT_ASSERT_EQ(test, 0, kwq_add(q, &i, sizeof(i)));
		/* An earlier key, whichever table its bucket is in now. */
		old = i / 2;
		KUNIT_ASSERT_EQ(test, 0, kwq_add(q, &old, sizeof(old)));
		KUNIT_ASSERT_EQ(test, (long)i + 1, kwq_len(q));
	}
	KUNIT_EXPECT_EQ(test, (u64)nr, kt_stats(test, q).adds_total);
}

static void many_keys_survive_hash_growth(struct kunit *test)
{
	const unsigned int nr = 3000;
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item item;
	unsigned long *seen;
	unsigned int i, k;
	const void *key;
	size_t len;

	seen = kunit_kcalloc(test, BITS_TO_LONGS(nr), sizeof(long),
			     GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, seen);
	for (i = 0; i < nr; i++) {
		KUNIT_ASSERT_EQ(test, 0, kwq_add(q, &i, sizeof(i)));
		/* Let the resize work run now and then. */
		if (i % 500 == 0)
			usleep_range(5000, 10000);
	}
	usleep_range(5000, 10000);
	/* Dedup still works after the table grew. */
	for (i = 0; i < nr; i++)
		KUNIT_ASSERT_EQ(test, 0, kwq_add(q, &i, sizeof(i)));
	KUNIT_EXPECT_EQ(test, (long)nr, kwq_len(q));
	for (i = 0; i < nr; i++) {
		KUNIT_ASSERT_EQ(test, 0,
				kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &item));
		key = kwq_item_key(&item, &len);
		KUNIT_ASSERT_EQ(test, len, sizeof(k));
		memcpy(&k, key, sizeof(k));
		KUNIT_EXPECT_EQ(test, k, i);
		KUNIT_EXPECT_FALSE(test, test_and_set_bit(k, seen));
		KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	}
	kt_expect_empty(test, q);
}

/* --- DelayingQueue --- */

static void add_after_nonpositive_adds_now(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	KUNIT_EXPECT_EQ(test, 0, kt_add_after(q, "a", 0));
	KUNIT_EXPECT_EQ(test, 0, kt_add_after(q, "b", -5));
	KUNIT_EXPECT_EQ(test, 2L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).waiting);
	KUNIT_EXPECT_FALSE(test, c->armed);
}

static void add_after_becomes_ready_at_deadline(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	KUNIT_EXPECT_EQ(test, 0, kt_add_after(q, "a", 100 * MS));
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).waiting);
	KUNIT_EXPECT_TRUE(test, c->armed);
	KUNIT_EXPECT_EQ(test, c->deadline, KT_T0 + 100 * MS);
	kt_expect_ready_at(test, q, c, 100 * MS);
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).waiting);
	kt_get_done(test, q, "a");
}

static void add_after_earliest_deadline_wins(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add_after(q, "a", 1000 * MS);
	kt_add_after(q, "a", 100 * MS);
	kt_add_after(q, "b", 100 * MS);
	kt_add_after(q, "b", 1000 * MS);
	KUNIT_EXPECT_EQ(test, 2ULL, kt_stats(test, q).waiting);
	kt_advance(c, 100 * MS);
	KUNIT_EXPECT_EQ(test, 2L, kwq_len(q));
	kt_get_done(test, q, "a");
	/* Neither runs again at the later deadline. */
	kt_expect_last_run(test, q, c, "b", 1000 * MS);
}

static void add_after_of_ready_key_keeps_it_ready(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add(q, "a");
	KUNIT_EXPECT_EQ(test, 0, kt_add_after(q, "a", 10 * MS));
	/* Still ready, in place; the deadline is remembered (deadline_test). */
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).waiting);
	KUNIT_EXPECT_FALSE(test, c->armed);
	kt_get_done(test, q, "a");
	kt_advance(c, 20 * MS);
	kt_get_done(test, q, "a");
	kt_expect_empty(test, q);
}

static void add_of_waiting_key_makes_it_ready_once(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add_after(q, "a", 50 * MS);
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "a"));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).waiting);
	/* client-go would run it a second time here (kubernetes#126027). */
	kt_expect_last_run(test, q, c, "a", 100 * MS);
}

static void add_after_while_processing_waits_from_done(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	KUNIT_EXPECT_EQ(test, 0, kt_add_after(q, "a", 100 * MS));
	kt_advance(c, 40 * MS);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	/* The deadline counts from the add, not from done. */
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).waiting);
	kt_expect_ready_at(test, q, c, 60 * MS);
	kt_get_done(test, q, "a");
}

static void add_after_while_processing_past_deadline_ready_at_done(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	kt_add_after(q, "a", 10 * MS);
	kt_add_after(q, "a", 50 * MS);
	kt_advance(c, 20 * MS);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	kt_expect_last_run(test, q, c, "a", 100 * MS);
}

static void delayed_keys_ready_by_deadline_then_add_order(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add_after(q, "c", 300 * MS);
	kt_add_after(q, "a", 100 * MS);
	kt_add_after(q, "d", 200 * MS);
	kt_add_after(q, "b", 100 * MS);
	kt_advance(c, 300 * MS);
	KUNIT_EXPECT_EQ(test, 4L, kwq_len(q));
	kt_get_done(test, q, "a");
	kt_get_done(test, q, "b");
	kt_get_done(test, q, "d");
	kt_get_done(test, q, "c");
}

static void timer_rearmed_only_when_earliest_deadline_changes(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add_after(q, "a", 1000 * MS);
	KUNIT_EXPECT_EQ(test, 1U, c->arms);
	kt_add_after(q, "b", 2000 * MS);
	kt_add_after(q, "a", 1500 * MS);
	KUNIT_EXPECT_EQ(test, 1U, c->arms);
	kt_add_after(q, "c", 500 * MS);
	KUNIT_EXPECT_EQ(test, 2U, c->arms);
	KUNIT_EXPECT_EQ(test, c->deadline, KT_T0 + 500 * MS);
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "c"));
	KUNIT_EXPECT_EQ(test, 3U, c->arms);
	KUNIT_EXPECT_EQ(test, c->deadline, KT_T0 + 1000 * MS);
	/* Expiry re-arms for the next deadline. */
	kt_advance(c, 1000 * MS);
	KUNIT_EXPECT_EQ(test, 4U, c->arms);
	KUNIT_EXPECT_EQ(test, c->deadline, KT_T0 + 2000 * MS);
	KUNIT_EXPECT_EQ(test, 0U, c->cancels);
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "b"));
	KUNIT_EXPECT_EQ(test, 1U, c->cancels);
	KUNIT_EXPECT_FALSE(test, c->armed);
}

static void expiry_without_due_keys_changes_nothing(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add_after(q, "a", 100 * MS);
	kwq_clock_expired(q);
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).waiting);
	KUNIT_EXPECT_TRUE(test, c->armed);
	KUNIT_EXPECT_EQ(test, c->deadline, KT_T0 + 100 * MS);
}

static void real_clock_delayed_key_becomes_ready(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_item item;
	u64 start = ktime_get_ns();

	KUNIT_EXPECT_EQ(test, 0, kt_add_after(q, "a", 20 * MS));
	KUNIT_ASSERT_EQ(test, 0,
			kwq_get(q, NULL, 0, 10ULL * NSEC_PER_SEC, &item));
	KUNIT_EXPECT_GE(test, ktime_get_ns() - start, 20 * MS);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
}

/* A clock whose struct is const: its state lives behind ->priv. */
struct kt_const_clock_state {
	u64 now;
	u64 deadline;
	unsigned int arms;
	unsigned int cancels;
};

static u64 kt_const_now(const struct kwq_clock *clock)
{
	const struct kt_const_clock_state *s = clock->priv;

	return s->now;
}

static void kt_const_arm(const struct kwq_clock *clock, struct kwq *q,
			 u64 deadline_ns)
{
	struct kt_const_clock_state *s = clock->priv;

	s->deadline = deadline_ns;
	s->arms++;
}

static void kt_const_cancel(const struct kwq_clock *clock, struct kwq *q)
{
	struct kt_const_clock_state *s = clock->priv;

	s->cancels++;
}

static struct kt_const_clock_state kt_const_state;
static const struct kwq_clock kt_const_clock = {
	.now = kt_const_now,
	.arm = kt_const_arm,
	.cancel = kt_const_cancel,
	.priv = &kt_const_state,
};

static void const_clock_reaches_its_state_through_priv(struct kunit *test)
{
	struct kwq_config cfg = { .clock = &kt_const_clock };
	struct kwq *q;

	kt_const_state = (struct kt_const_clock_state){ .now = KT_T0 };
	q = kt_create(test, &cfg, NULL);
	KUNIT_EXPECT_EQ(test, 0, kt_add_after(q, "a", 5 * MS));
	KUNIT_EXPECT_EQ(test, 1U, kt_const_state.arms);
	KUNIT_EXPECT_EQ(test, KT_T0 + 5 * MS, kt_const_state.deadline);
	kt_const_state.now += 5 * MS;
	kwq_clock_expired(q);
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	/* The arming fired: nothing to cancel until destroy. */
	KUNIT_EXPECT_EQ(test, 0U, kt_const_state.cancels);
	kt_get_done(test, q, "a");
	kt_destroy(test, q);
	KUNIT_EXPECT_EQ(test, 1U, kt_const_state.cancels);
}

/* --- get: blocking, timeouts, shutdown --- */

static void get_nonblocking_on_empty_is_eagain(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item item;

	KUNIT_EXPECT_EQ(test, -EAGAIN,
			kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &item));
	KUNIT_EXPECT_EQ(test, -EAGAIN,
			kwq_get(q, NULL, KWQ_GET_NONBLOCK, 1000 * MS, &item));
	KUNIT_EXPECT_EQ(test, -EAGAIN, kwq_get(q, NULL, 0, 0, &item));
}

static void get_timeout_expires_with_etimedout(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item item;
	u64 start = ktime_get_ns();

	KUNIT_EXPECT_EQ(test, -ETIMEDOUT, kwq_get(q, NULL, 0, 20 * MS, &item));
	KUNIT_EXPECT_GE(test, ktime_get_ns() - start, 20 * MS);
}

struct kt_getter {
	struct kwq *q;
	struct completion done;
	struct kwq_item item;	/* the getter thread's own lease storage */
	int ret;		/* what kwq_get() returned */
	s64 timeout;
};

static int kt_getter_fn(void *data)
{
	struct kt_getter *g = data;

	g->ret = kwq_get(g->q, NULL, 0, g->timeout, &g->item);
	/* The reference the test took for us keeps q alive until here. */
	kwq_put(g->q);
	complete(&g->done);
	return 0;
}

static struct kt_getter *kt_start_getter(struct kunit *test, struct kwq *q)
{
	struct kt_getter *g = kunit_kzalloc(test, sizeof(*g), GFP_KERNEL);
	struct task_struct *t;

	KUNIT_ASSERT_NOT_NULL(test, g);
	g->q = q;
	g->timeout = KWQ_WAIT_FOREVER;
	init_completion(&g->done);
	kwq_get_ref(q);
	t = kthread_run(kt_getter_fn, g, "kwq-kt-getter");
	if (IS_ERR(t))
		kwq_put(q);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	/* Give it time to block; correctness does not depend on it. */
	msleep(30);
	return g;
}

static void kt_wait_getter(struct kunit *test, struct kt_getter *g)
{
	/* A getter that never returns would use freed memory: wait forever. */
	if (!wait_for_completion_timeout(&g->done, 20 * HZ)) {
		KUNIT_FAIL(test, "getter still blocked after 20 s");
		wait_for_completion(&g->done);
	}
}

static void blocked_get_wakes_on_add(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kt_getter *g = kt_start_getter(test, q);

	KUNIT_EXPECT_FALSE(test, completion_done(&g->done));
	kt_add(q, "a");
	kt_wait_getter(test, g);
	KUNIT_ASSERT_EQ(test, 0, g->ret);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &g->item));
}

static void blocked_get_wakes_on_delay_expiry(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kt_getter *g;

	kt_add_after(q, "a", 10 * MS);
	g = kt_start_getter(test, q);
	KUNIT_EXPECT_FALSE(test, completion_done(&g->done));
	kt_advance(c, 10 * MS);
	kt_wait_getter(test, g);
	KUNIT_ASSERT_EQ(test, 0, g->ret);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &g->item));
}

static void shutdown_wakes_blocked_getter_with_eshutdown(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kt_getter *g = kt_start_getter(test, q);

	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown(q));
	kt_wait_getter(test, g);
	KUNIT_EXPECT_EQ(test, -ESHUTDOWN, g->ret);
}

static void get_after_shutdown_returns_ready_keys_then_eshutdown(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item item;

	kt_add(q, "a");
	kt_add(q, "b");
	kwq_shutdown(q);
	KUNIT_EXPECT_TRUE(test, kwq_shutting_down(q));
	kt_get_done(test, q, "a");
	kt_get_done(test, q, "b");
	KUNIT_EXPECT_EQ(test, -ESHUTDOWN,
			kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &item));
	KUNIT_EXPECT_EQ(test, -ESHUTDOWN,
			kwq_get(q, NULL, 0, KWQ_WAIT_FOREVER, &item));
}

static void add_after_shutdown_is_rejected(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	u64 delay = 7;

	KUNIT_EXPECT_FALSE(test, kwq_shutting_down(q));
	kwq_shutdown(q);
	KUNIT_EXPECT_EQ(test, -ESHUTDOWN, kt_add(q, "a"));
	KUNIT_EXPECT_EQ(test, -ESHUTDOWN, kt_add_after(q, "a", 10 * MS));
	KUNIT_EXPECT_EQ(test, -ESHUTDOWN, kt_add_prio(q, "a", 3));
	KUNIT_EXPECT_EQ(test, -ESHUTDOWN,
			kwq_add_rate_limited(q, "a", 1, NULL, &delay));
	KUNIT_EXPECT_EQ(test, 7ULL, delay);
	KUNIT_EXPECT_EQ(test, 0, kt_requeues(q, "a"));
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
}

static void shutdown_drops_waiting_keys_and_counts_them(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item p;
	struct kwq_stats st;

	kt_add(q, "p");
	p = kt_get(test, q, "p");
	kt_add_after(q, "p", 10 * MS);
	kt_add_after(q, "a", 10 * MS);
	kt_add_after(q, "b", 20 * MS);
	kt_add(q, "r");
	kwq_shutdown(q);
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 0ULL, st.waiting);
	KUNIT_EXPECT_EQ(test, 2ULL, st.dropped_at_shutdown);
	KUNIT_EXPECT_EQ(test, 1ULL, st.len);
	KUNIT_EXPECT_FALSE(test, c->armed);
	/* The delayed requeue of a processing key is dropped at done. */
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &p));
	KUNIT_EXPECT_EQ(test, 3ULL, kt_stats(test, q).dropped_at_shutdown);
	kt_get_done(test, q, "r");
	KUNIT_EXPECT_EQ(test, -ESHUTDOWN,
			kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &p));
}

static void dirty_key_is_requeued_at_done_after_shutdown(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	kt_add(q, "a");
	kwq_shutdown(q);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	kt_get_done(test, q, "a");
	KUNIT_EXPECT_EQ(test, -ESHUTDOWN,
			kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &a));
}

struct kt_drainer {
	struct kwq *q;
	struct completion done;
	int ret;
};

static int kt_drainer_fn(void *data)
{
	struct kt_drainer *d = data;

	d->ret = kwq_shutdown_drain(d->q);
	kwq_put(d->q);
	complete(&d->done);
	return 0;
}

static struct kt_drainer *kt_start_drainer(struct kunit *test, struct kwq *q)
{
	struct kt_drainer *d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	struct task_struct *t;

	KUNIT_ASSERT_NOT_NULL(test, d);
	d->q = q;
	init_completion(&d->done);
	kwq_get_ref(q);
	t = kthread_run(kt_drainer_fn, d, "kwq-kt-drain");
	if (IS_ERR(t))
		kwq_put(q);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	msleep(30);
	return d;
}

static void kt_wait_drainer(struct kunit *test, struct kt_drainer *d)
{
	if (!wait_for_completion_timeout(&d->done, 20 * HZ)) {
		KUNIT_FAIL(test, "drain still waiting after 20 s");
		kwq_shutdown(d->q);
		wait_for_completion(&d->done);
	}
}

static void shutdown_drain_waits_for_ready_and_processing(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kt_drainer *d;
	struct kwq_item a;

	kt_add(q, "a");
	kt_add(q, "b");
	a = kt_get(test, q, "a");
	d = kt_start_drainer(test, q);
	KUNIT_EXPECT_TRUE(test, kwq_shutting_down(q));
	KUNIT_EXPECT_EQ(test, -ESHUTDOWN, kt_add(q, "c"));
	kt_get_done(test, q, "b");
	msleep(20);
	KUNIT_EXPECT_FALSE(test, completion_done(&d->done));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	kt_wait_drainer(test, d);
	KUNIT_EXPECT_EQ(test, 0, d->ret);
}

static void shutdown_drain_waits_for_ready_only_keys(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kt_drainer *d;

	kt_add(q, "a");
	d = kt_start_drainer(test, q);
	/* client-go would return: nothing is processing. */
	KUNIT_EXPECT_FALSE(test, completion_done(&d->done));
	kt_get_done(test, q, "a");
	kt_wait_drainer(test, d);
	KUNIT_EXPECT_EQ(test, 0, d->ret);
}

static void plain_shutdown_ends_drain_wait(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kt_drainer *d;
	struct kwq_item a;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	d = kt_start_drainer(test, q);
	KUNIT_EXPECT_FALSE(test, completion_done(&d->done));
	kwq_shutdown(q);
	kt_wait_drainer(test, d);
	KUNIT_EXPECT_EQ(test, -ECANCELED, d->ret);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
}

static void shutdown_drain_of_empty_queue_returns_at_once(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add_after(q, "w", 10 * MS);
	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown_drain(q));
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).dropped_at_shutdown);
}

/* --- remove --- */

static void remove_cancels_ready_key(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add(q, "a");
	kt_add(q, "b");
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "a"));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	kt_get_done(test, q, "b");
	kt_expect_empty(test, q);
}

static void remove_cancels_waiting_key(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add_after(q, "a", 10 * MS);
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "a"));
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).waiting);
	KUNIT_EXPECT_FALSE(test, c->armed);
	kt_advance(c, 20 * MS);
	kt_expect_empty(test, q);
}

static void remove_cancels_pending_requeue_of_processing_key(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	KUNIT_EXPECT_EQ(test, -EBUSY, kt_remove(q, "a"));
	kt_add(q, "a");
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "a"));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	kt_expect_empty(test, q);
}

static void remove_of_unknown_key_is_enoent(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	KUNIT_EXPECT_EQ(test, -ENOENT, kt_remove(q, "a"));
	kt_add(q, "a");
	kt_get_done(test, q, "a");
	KUNIT_EXPECT_EQ(test, -ENOENT, kt_remove(q, "a"));
}

/* --- priorities --- */

static void higher_priority_is_handed_out_first(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add_prio(q, "low", -5);
	kt_add(q, "mid");
	kt_add_prio(q, "high", 10);
	kt_get_done_prio(test, q, "high", 10);
	kt_get_done_prio(test, q, "mid", 0);
	kt_get_done_prio(test, q, "low", -5);
}

static void same_priority_is_fifo(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add_prio(q, "a", 1);
	kt_add_prio(q, "x", 0);
	kt_add_prio(q, "b", 1);
	kt_add_prio(q, "y", 0);
	kt_add_prio(q, "c", 1);
	/* Remove the level head and a middle member: order holds. */
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "x"));
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "b"));
	kt_add_prio(q, "z", 0);
	kt_get_done(test, q, "a");
	kt_get_done(test, q, "c");
	kt_get_done(test, q, "y");
	kt_get_done(test, q, "z");
	kt_expect_empty(test, q);
}

static void readd_with_higher_priority_raises_it(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add(q, "a");
	kt_add(q, "b");
	kt_add_prio(q, "c", 2);
	KUNIT_EXPECT_EQ(test, 0, kt_add_prio(q, "b", 2));
	KUNIT_EXPECT_EQ(test, 3L, kwq_len(q));
	kt_get_done(test, q, "c");
	kt_get_done_prio(test, q, "b", 2);
	kt_get_done(test, q, "a");
}

static void readd_with_lower_priority_keeps_it(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add_prio(q, "a", 3);
	kt_add_prio(q, "b", 3);
	KUNIT_EXPECT_EQ(test, 0, kt_add_prio(q, "a", 1));
	kt_get_done_prio(test, q, "a", 3);
	kt_get_done(test, q, "b");
}

static void priority_of_dirty_readd_applies_at_done(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item item;

	kt_add(q, "a");
	item = kt_get(test, q, "a");
	kt_add_prio(q, "a", 5);
	kt_add_prio(q, "b", 1);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	kt_get_done_prio(test, q, "a", 5);
	kt_get_done(test, q, "b");
}

static void delayed_key_keeps_its_priority(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_add_opts opts = { .after_ns = 10 * MS, .priority = 4 };

	kt_add(q, "a");
	KUNIT_EXPECT_EQ(test, 0, kwq_add_opts(q, "d", 1, &opts));
	kt_advance(c, 10 * MS);
	kt_get_done(test, q, "d");
	kt_get_done(test, q, "a");
}

/* A level that emptied leaves the stats and serves its priority again. */
static void emptied_priority_level_is_used_again(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);

	kt_add_prio(q, "a", -3);
	kt_add_prio(q, "b", 7);
	KUNIT_EXPECT_EQ(test, 2U, kt_stats(test, q).nr_prio_levels);
	kt_get_done(test, q, "b");
	kt_get_done(test, q, "a");
	KUNIT_EXPECT_EQ(test, 0U, kt_stats(test, q).nr_prio_levels);
	kt_add(q, "z");
	kt_add_prio(q, "c", 7);
	kt_add_prio(q, "d", -3);
	kt_add_prio(q, "e", 7);
	KUNIT_EXPECT_EQ(test, 3U, kt_stats(test, q).nr_prio_levels);
	kt_get_done(test, q, "c");
	kt_get_done(test, q, "e");
	kt_get_done(test, q, "z");
	kt_get_done(test, q, "d");
	kt_expect_empty(test, q);
}

/* --- leases (owners) --- */

static void release_owner_requeues_only_its_items(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	int x, y;
	struct kwq_item a, b, d;

	kt_add(q, "a");
	kt_add(q, "b");
	kt_add(q, "d");
	kt_add(q, "e");
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &x, KWQ_GET_NONBLOCK, 0, &a));
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &y, KWQ_GET_NONBLOCK, 0, &b));
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &d));
	KUNIT_EXPECT_EQ(test, 1, kwq_release_owner(q, &x));
	KUNIT_EXPECT_EQ(test, 0, kwq_release_owner(q, &x));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_release_owner(q, NULL));
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).lease_returns);
	KUNIT_EXPECT_EQ(test, 2ULL, kt_stats(test, q).processing);
	/* Returned to the tail: e first, then a. */
	kt_get_done(test, q, "e");
	kt_get_done(test, q, "a");
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &b));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &d));
}

/*
 * Walks of many chunks (KWQ_WALK_CHUNK keys per hold of the lock): a batch
 * get of 300 keys takes them all, in order; releasing one of two owners
 * whose leases alternate returns exactly its 150, each once, in order,
 * and the other's stay processing, the oldest of them still the oldest.
 */
static void release_owner_walks_many_chunks(struct kunit *test)
{
	const unsigned int nr = 300;
	struct kwq_item *items = kunit_kcalloc(test, nr, sizeof(*items),
					       GFP_KERNEL);
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	char key[8];
	unsigned int i;
	int x, y;

	KUNIT_ASSERT_NOT_NULL(test, items);
	for (i = 0; i < nr; i++) {
		snprintf(key, sizeof(key), "k%03u", i);
		KUNIT_ASSERT_EQ(test, 0, kt_add(q, key));
	}
	KUNIT_ASSERT_EQ(test, (int)nr,
			kwq_get_batch(q, &x, KWQ_GET_NONBLOCK, 0, items, 1,
				      nr));
	for (i = 0; i < nr; i++) {
		snprintf(key, sizeof(key), "k%03u", i);
		KUNIT_EXPECT_EQ(test, 0, memcmp(key, items[i].key, 4));
		KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &items[i]));
	}
	for (i = 0; i < nr; i++) {
		snprintf(key, sizeof(key), "k%03u", i);
		KUNIT_ASSERT_EQ(test, 0, kt_add(q, key));
	}
	for (i = 0; i < nr; i++) {
		KUNIT_ASSERT_EQ(test, 0, kwq_get(q, i % 2 ? &y : &x,
						 KWQ_GET_NONBLOCK, 0,
						 &items[i]));
		kt_advance(c, MS);
	}
	KUNIT_EXPECT_EQ(test, (int)nr / 2, kwq_release_owner(q, &x));
	KUNIT_EXPECT_EQ(test, (u64)nr / 2, kt_stats(test, q).processing);
	KUNIT_EXPECT_EQ(test, (u64)nr / 2, kt_stats(test, q).lease_returns);
	KUNIT_EXPECT_EQ(test, (long)nr / 2, kwq_len(q));
	/* y's first key, taken 1 ms after x's first. */
	KUNIT_EXPECT_EQ(test, (u64)(nr - 1) * MS,
			kt_stats(test, q).longest_running_ns);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ(test, i % 2 ? 0 : -ESTALE,
				kwq_done(q, &items[i]));
	for (i = 0; i < nr; i += 2) {
		snprintf(key, sizeof(key), "k%03u", i);
		kt_get_done(test, q, key);
	}
	kt_expect_empty(test, q);
}

static void release_owner_returns_dirty_item_once(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a;
	int x;

	kt_add(q, "a");
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &x, KWQ_GET_NONBLOCK, 0, &a));
	kt_add_after(q, "a", 10 * MS);
	kt_add(q, "a");
	KUNIT_EXPECT_EQ(test, 1, kwq_release_owner(q, &x));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	kt_get_done(test, q, "a");
	/* Once for both adds; the deadline it remembers still runs it. */
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).waiting);
	kt_advance(c, 20 * MS);
	kt_get_done(test, q, "a");
	kt_expect_empty(test, q);
}

static void release_owner_after_shutdown_lets_drain_finish(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a;
	int x;

	kt_add(q, "a");
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &x, KWQ_GET_NONBLOCK, 0, &a));
	kwq_shutdown(q);
	KUNIT_EXPECT_EQ(test, 1, kwq_release_owner(q, &x));
	kt_get_done(test, q, "a");
	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown_drain(q));
}

static void done_key_checks_owner(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a;
	int x, y;

	kt_add(q, "a");
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &x, KWQ_GET_NONBLOCK, 0, &a));
	KUNIT_EXPECT_EQ(test, -EPERM, kwq_done_key(q, "a", 1, &y));
	KUNIT_EXPECT_EQ(test, -EPERM, kwq_done_key(q, "a", 1, NULL));
	KUNIT_EXPECT_EQ(test, -ENOENT, kwq_done_key(q, "b", 1, &x));
	KUNIT_EXPECT_EQ(test, 0, kwq_done_key(q, "a", 1, &x));
	KUNIT_EXPECT_EQ(test, -ENOENT, kwq_done_key(q, "a", 1, &x));
}

/* --- internal helpers of the character device --- */

static void unget_puts_item_back_at_head_of_its_level(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a, b;
	int x;

	kt_add(q, "a");
	kt_add(q, "b");
	kt_add(q, "c");
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &x, KWQ_GET_NONBLOCK, 0, &a));
	b = kt_get(test, q, "b");
	/* Reverse order of the gets restores the FIFO order. */
	kwq_unget(q, &b);
	kwq_unget(q, &a);
	KUNIT_EXPECT_EQ(test, 3L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).processing);
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).lease_returns);
	/* No longer owned by &x. */
	KUNIT_EXPECT_EQ(test, 0, kwq_release_owner(q, &x));
	kt_get_done(test, q, "a");
	kt_get_done(test, q, "b");
	kt_get_done(test, q, "c");
}

/* --- kwq_done_get(), a worker's cycle --- */

static void done_get_of_a_zeroed_item_only_gets(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_item item = {};

	kt_add(q, "a");
	KUNIT_ASSERT_EQ(test, 0, kwq_done_get(q, NULL, KWQ_GET_NONBLOCK, 0,
					      &item));
	KUNIT_EXPECT_MEMEQ(test, item.key, "a", 1);
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).processing);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
}

static void done_get_finishes_then_takes_the_next(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_item item = {};

	kt_add(q, "a");
	kt_add(q, "b");
	KUNIT_ASSERT_EQ(test, 0, kwq_done_get(q, NULL, 0, 0, &item));
	/* Dirty while processing: requeued at the tail, behind "b". */
	kt_add(q, "a");
	KUNIT_ASSERT_EQ(test, 0, kwq_done_get(q, NULL, 0, 0, &item));
	KUNIT_EXPECT_MEMEQ(test, item.key, "b", 1);
	KUNIT_ASSERT_EQ(test, 0, kwq_done_get(q, NULL, 0, 0, &item));
	KUNIT_EXPECT_MEMEQ(test, item.key, "a", 1);
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).processing);
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).len);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	kt_expect_empty(test, q);
}

static void done_get_of_a_stale_item_takes_nothing(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_item item = {}, old;

	kt_add(q, "a");
	KUNIT_ASSERT_EQ(test, 0, kwq_done_get(q, NULL, 0, 0, &item));
	old = item;
	KUNIT_ASSERT_EQ(test, 0, kwq_done(q, &item));
	kt_add(q, "b");
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done_get(q, NULL, 0, 0, &item));
	KUNIT_EXPECT_EQ(test, 0, memcmp(&old, &item, sizeof(item)));
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).len);
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).processing);
}

static void done_get_with_nothing_ready_leaves_no_lease(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_item item = {};

	kt_add(q, "a");
	KUNIT_ASSERT_EQ(test, 0, kwq_done_get(q, NULL, 0, 0, &item));
	KUNIT_EXPECT_EQ(test, -EAGAIN, kwq_done_get(q, NULL, KWQ_GET_NONBLOCK,
						    0, &item));
	/* "a" was finished; the item holds nothing, so passing it again gets. */
	kt_expect_empty(test, q);
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).processing);
	KUNIT_EXPECT_EQ(test, 0ULL, item.lease);
	kt_add(q, "b");
	KUNIT_ASSERT_EQ(test, 0, kwq_done_get(q, NULL, 0, 0, &item));
	KUNIT_EXPECT_MEMEQ(test, item.key, "b", 1);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
}

/* A lease finished before its unget (same file, another thread): no-op. */
static void unget_of_an_ended_lease_changes_nothing(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_item old, cur;

	kt_add(q, "a");
	old = kt_get(test, q, "a");
	KUNIT_ASSERT_EQ(test, 0, kwq_done(q, &old));
	kwq_unget(q, &old);
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).len);
	/* Added and taken again: the old lease still undoes nothing. */
	kt_add(q, "a");
	cur = kt_get(test, q, "a");
	kwq_unget(q, &old);
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).processing);
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).len);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &cur));
}

static void unget_keeps_priority_and_pending_readd(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a;

	kt_add_prio(q, "a", 1);
	kt_add_prio(q, "b", 1);
	kt_add_prio(q, "z", 0);
	a = kt_get(test, q, "a");
	kt_add_prio(q, "a", 2);
	kwq_unget(q, &a);
	KUNIT_EXPECT_EQ(test, 3L, kwq_len(q));
	kt_get_done_prio(test, q, "a", 2);
	kt_get_done(test, q, "b");
	kt_get_done(test, q, "z");
	kt_expect_empty(test, q);
}

static void poll_reports_ready_keys_and_hangup(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a;

	KUNIT_EXPECT_EQ(test, 0U, (__force unsigned int)kwq_poll(q));
	kt_add_after(q, "a", 10 * MS);
	KUNIT_EXPECT_EQ(test, 0U, (__force unsigned int)kwq_poll(q));
	kt_advance(c, 10 * MS);
	KUNIT_EXPECT_EQ(test, (__force unsigned int)(EPOLLIN | EPOLLRDNORM),
			(__force unsigned int)kwq_poll(q));
	a = kt_get(test, q, "a");
	KUNIT_EXPECT_EQ(test, 0U, (__force unsigned int)kwq_poll(q));
	kt_add(q, "b");
	kwq_shutdown(q);
	KUNIT_EXPECT_EQ(test, (__force unsigned int)(EPOLLIN | EPOLLRDNORM),
			(__force unsigned int)kwq_poll(q));
	kt_get_done(test, q, "b");
	KUNIT_EXPECT_EQ(test, (__force unsigned int)EPOLLHUP,
			(__force unsigned int)kwq_poll(q));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
}

/* --- limits, validation, stats --- */

static void max_items_rejects_new_key_with_enospc(struct kunit *test)
{
	struct kwq_config cfg = { .max_items = 2 };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, &cfg, &c);
	struct kwq_item a;
	u64 delay = 0;

	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "a"));
	KUNIT_EXPECT_EQ(test, 0, kt_add_after(q, "b", 10 * MS));
	KUNIT_EXPECT_EQ(test, -ENOSPC, kt_add(q, "c"));
	KUNIT_EXPECT_EQ(test, -ENOSPC,
			kwq_add_rate_limited(q, "c", 1, NULL, &delay));
	KUNIT_EXPECT_EQ(test, 0, kt_requeues(q, "c"));
	KUNIT_EXPECT_EQ(test, -ENOENT, kt_remove(q, "c"));
	/* Keys already queued can still be added. */
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "a"));
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "b"));
	a = kt_get(test, q, "a");
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "a"));
	KUNIT_EXPECT_EQ(test, -ENOSPC, kt_add(q, "c"));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	kt_get_done(test, q, "b");
	kt_get_done(test, q, "a");
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "c"));
}

static void invalid_arguments_are_einval(struct kunit *test)
{
	struct kwq_add_opts opts = {};
	struct kwq_item item;
	struct kwq_stats st;
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	char *big = kunit_kzalloc(test, KWQ_KEY_MAX + 1, GFP_KERNEL);
	u64 delay;

	KUNIT_ASSERT_NOT_NULL(test, big);
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add(NULL, "a", 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add(q, NULL, 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add(q, "a", 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add(q, big, KWQ_KEY_MAX + 1));
	KUNIT_EXPECT_EQ(test, 0, kwq_add(q, big, KWQ_KEY_MAX));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_after(q, "a", 0, 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_opts(q, "a", 1, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_opts(NULL, "a", 1, &opts));
	opts.after_ns = 1;
	KUNIT_EXPECT_EQ(test, -EINVAL,
			kwq_add_rate_limited(q, "a", 1, &opts, &delay));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			kwq_add_rate_limited(q, "a", 0, NULL, &delay));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_forget(q, NULL, 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_num_requeues(NULL, "a", 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_remove(q, "a", KWQ_KEY_MAX + 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_len(NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			kwq_get(NULL, NULL, KWQ_GET_NONBLOCK, 0, &item));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_get(q, NULL, 0x80, 0, &item));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_done(q, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_done_key(q, "a", 0, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_release_owner(NULL, &opts));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_shutdown(NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_shutdown_drain(NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_get_stats(q, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_get_stats(NULL, &st));
	/* Nothing above changed the queue. */
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).adds_total);
}

static void create_rejects_bad_names(struct kunit *test)
{
	char long_name[KWQ_NAME_MAX + 2];

	memset(long_name, 'x', sizeof(long_name));
	long_name[KWQ_NAME_MAX + 1] = 0;
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL), kwq_create(NULL, NULL));
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL), kwq_create("", NULL));
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL), kwq_create("a/b", NULL));
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL), kwq_create("a b", NULL));
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL),
			    kwq_create(long_name, NULL));
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL), kwq_find("a/b"));
	long_name[KWQ_NAME_MAX] = 0;
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-ENOENT), kwq_find(long_name));
}

static void create_rejects_bad_configs(struct kunit *test)
{
	static const struct kwq_clock no_arm = {};
	struct kwq_config cfg = {};

	cfg.nr_limiters = KWQ_MAX_LIMITERS + 1;
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL), kwq_create("kt-bad", &cfg));
	cfg.nr_limiters = 1;
	cfg.limiters[0].type = 0;
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL), kwq_create("kt-bad", &cfg));
	cfg.limiters[0].type = KWQ_LIMITER_BUCKET;
	cfg.limiters[0].bucket.qps_milli = 1000;
	cfg.limiters[0].bucket.burst = 0;
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL), kwq_create("kt-bad", &cfg));
	cfg.limiters[0].bucket.burst = KWQ_BUCKET_BURST_MAX + 1;
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL), kwq_create("kt-bad", &cfg));
	cfg.limiters[0].bucket.burst = 1;
	cfg.limiters[0].bucket.qps_milli = 0;
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL), kwq_create("kt-bad", &cfg));
	cfg.limiters[0].type = KWQ_LIMITER_EXPONENTIAL;
	cfg.limiters[0].exp.base_ns = (u64)S64_MAX + 1;
	cfg.limiters[0].exp.max_ns = 1;
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL), kwq_create("kt-bad", &cfg));
	cfg.limiters[0].type = KWQ_LIMITER_FAST_SLOW;
	cfg.limiters[0].fast_slow.fast_ns = 1;
	cfg.limiters[0].fast_slow.slow_ns = U64_MAX;
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL), kwq_create("kt-bad", &cfg));
	cfg.nr_limiters = 0;
	cfg.max_wait_ns = U64_MAX;
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL), kwq_create("kt-bad", &cfg));
	cfg.max_wait_ns = 0;
	cfg.flags = KWQ_CONFIG_CHARGE_CALLER << 1;
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL), kwq_create("kt-bad", &cfg));
	cfg.flags = U32_MAX;
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL), kwq_create("kt-bad", &cfg));
	cfg.flags = 0;
	cfg.clock = &no_arm;
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL), kwq_create("kt-bad", &cfg));
	/* None of the failures left the name registered. */
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-ENOENT), kwq_find("kt-bad"));
}

/*
 * A queue that charges the caller, created and grown from a kernel
 * thread (the KUnit runner: no task memcg, so the root's) works like any
 * other: the grow work switches to the creator's memcg and back.
 */
static void charge_caller_queue_grows_and_works(struct kunit *test)
{
	struct kwq_config cfg = { .flags = KWQ_CONFIG_CHARGE_CALLER };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, &cfg, &c);
	struct kwq_item item;
	int i;

	for (i = 0; i < 2000; i++) {
		KUNIT_ASSERT_EQ(test, 0, kwq_add(q, &i, sizeof(i)));
		/* Let the resize work run now and then. */
		if (i % 500 == 0)
			usleep_range(5000, 10000);
	}
	usleep_range(5000, 10000);
	for (i = 0; i < 2000; i++) {
		KUNIT_ASSERT_EQ(test, 0, kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0,
						 &item));
		KUNIT_ASSERT_EQ(test, sizeof(i), item.len);
		KUNIT_EXPECT_EQ(test, 0, memcmp(item.key, &i, sizeof(i)));
		KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	}
	kt_expect_empty(test, q);
}

static void create_duplicate_name_is_eexist(struct kunit *test)
{
	struct kwq *q = kwq_create("kt-dup", NULL);

	KUNIT_ASSERT_FALSE(test, IS_ERR(q));
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EEXIST), kwq_create("kt-dup", NULL));
	kwq_destroy(q);
	/* The name is free again once destroyed. */
	q = kwq_create("kt-dup", NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(q));
	KUNIT_EXPECT_STREQ(test, "kt-dup", kwq_name(q));
	kwq_destroy(q);
}

static void find_holds_a_reference_past_destroy(struct kunit *test)
{
	struct kwq *q = kwq_create("kt-find", NULL);
	struct kwq *f;

	KUNIT_ASSERT_FALSE(test, IS_ERR(q));
	KUNIT_EXPECT_EQ(test, 0, kwq_add(q, "a", 1));
	f = kwq_find("kt-find");
	KUNIT_ASSERT_PTR_EQ(test, q, f);
	kwq_destroy(q);
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-ENOENT), kwq_find("kt-find"));
	/* Still valid through the reference: shut down, ready key kept. */
	KUNIT_EXPECT_TRUE(test, kwq_shutting_down(f));
	KUNIT_EXPECT_EQ(test, -ESHUTDOWN, kwq_add(f, "b", 1));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(f));
	kwq_put(f);
}

/* A byte budget that tells when the queue charging it was freed. */
struct kt_budget {
	struct kwq_budget budget;
	struct completion released;
	long used_at_release;
};

static void kt_budget_release(struct kwq_budget *b)
{
	struct kt_budget *tb = container_of(b, struct kt_budget, budget);

	tb->used_at_release = atomic_long_read(&b->used);
	complete(&tb->released);
}

static void last_put_from_atomic_context_frees_later(struct kunit *test)
{
	static DEFINE_SPINLOCK(lock);
	struct kt_budget *tb = kunit_kzalloc(test, sizeof(*tb), GFP_KERNEL);
	unsigned long flags;
	struct kwq *q;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, tb);
	tb->budget.limit = ULONG_MAX;
	refcount_set(&tb->budget.ref, 1);
	tb->budget.release = kt_budget_release;
	init_completion(&tb->released);
	q = kwq_create_anon("kt-atomic-put", NULL, &tb->budget);
	KUNIT_ASSERT_FALSE(test, IS_ERR(q));
	/* The queue's reference keeps the budget; drop ours. */
	kwq_budget_put(&tb->budget);
	/* Keys to free with the queue, and a hash table that grows. */
	for (i = 0; i < 1000; i++)
		KUNIT_EXPECT_EQ(test, 0, kwq_add(q, &i, sizeof(i)));
	kwq_get_ref(q);
	kwq_destroy(q);
	KUNIT_EXPECT_FALSE(test, completion_done(&tb->released));

	/*
	 * The last reference, dropped under a spinlock with interrupts off:
	 * with CONFIG_DEBUG_ATOMIC_SLEEP any sleep in it would splat.
	 */
	spin_lock_irqsave(&lock, flags);
	kwq_put(q);
	spin_unlock_irqrestore(&lock, flags);

	/* Freed by the work item: the budget got every byte back. */
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&tb->released,
							  10 * HZ), 0UL);
	KUNIT_EXPECT_EQ(test, 0L, tb->used_at_release);
}

static void last_put_in_destroy_frees_at_once(struct kunit *test)
{
	struct kt_budget *tb = kunit_kzalloc(test, sizeof(*tb), GFP_KERNEL);
	struct kwq *q;

	KUNIT_ASSERT_NOT_NULL(test, tb);
	tb->budget.limit = ULONG_MAX;
	refcount_set(&tb->budget.ref, 1);
	tb->budget.release = kt_budget_release;
	init_completion(&tb->released);
	q = kwq_create_anon("kt-destroy-put", NULL, &tb->budget);
	KUNIT_ASSERT_FALSE(test, IS_ERR(q));
	kwq_budget_put(&tb->budget);
	KUNIT_EXPECT_EQ(test, 0, kwq_add(q, "a", 1));
	kwq_destroy(q);
	/* No waiting: kwq_destroy() freed the queue before it returned. */
	KUNIT_EXPECT_TRUE(test, completion_done(&tb->released));
	KUNIT_EXPECT_EQ(test, 0L, tb->used_at_release);
}

static void destroy_with_armed_timer_and_blocked_getter(struct kunit *test)
{
	struct kwq *q = kwq_create("kt-destroy", NULL);
	struct kt_getter *g;
	int i;

	KUNIT_ASSERT_FALSE(test, IS_ERR(q));
	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_EQ(test, 0, kwq_add_after(q, &i, sizeof(i),
						       10ULL * NSEC_PER_SEC));
	g = kt_start_getter(test, q);
	kwq_destroy(q);
	kt_wait_getter(test, g);
	KUNIT_EXPECT_EQ(test, -ESHUTDOWN, g->ret);
}

static void stats_snapshot_counts_everything(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item p;
	struct kwq_stats st;
	int x;

	kt_add(q, "p");
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &x, KWQ_GET_NONBLOCK, 0, &p));
	kt_add(q, "r");
	kt_add(q, "r");
	kt_add_after(q, "w", 10 * MS);
	kt_rate_limited(test, q, "f");
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 1ULL, st.len);
	KUNIT_EXPECT_EQ(test, 2ULL, st.waiting);
	KUNIT_EXPECT_EQ(test, 1ULL, st.processing);
	KUNIT_EXPECT_EQ(test, 4ULL, st.adds_total);
	KUNIT_EXPECT_EQ(test, 1ULL, st.retries_total);
	KUNIT_EXPECT_EQ(test, 1ULL, st.failure_records);
	KUNIT_EXPECT_EQ(test, 0ULL, st.lease_returns);
	KUNIT_EXPECT_EQ(test, 0U, st.shutting_down);
	kwq_release_owner(q, &x);
	kwq_shutdown(q);
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 2ULL, st.len);
	KUNIT_EXPECT_EQ(test, 0ULL, st.processing);
	KUNIT_EXPECT_EQ(test, 1ULL, st.lease_returns);
	KUNIT_EXPECT_EQ(test, 2ULL, st.dropped_at_shutdown);
	KUNIT_EXPECT_EQ(test, 1U, st.shutting_down);
	/* The failure record outlives the dropped key until forget. */
	KUNIT_EXPECT_EQ(test, 1ULL, st.failure_records);
	KUNIT_EXPECT_EQ(test, 0, kwq_forget(q, "f", 1));
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).failure_records);
}

/* --- calling contexts --- */

struct kt_softirq {
	struct hrtimer timer;
	struct kwq *q;
	struct completion fired;
	int add_ret, after_ret, done_ret;
	bool got;
};

static enum hrtimer_restart kt_softirq_fn(struct hrtimer *t)
{
	struct kt_softirq *s = container_of(t, struct kt_softirq, timer);
	struct kwq_item item;

	s->add_ret = kwq_add(s->q, "soft", 4);
	s->after_ret = kwq_add_after(s->q, "late", 4, 5 * MS);
	s->got = !kwq_get(s->q, NULL, KWQ_GET_NONBLOCK, 0, &item);
	s->done_ret = s->got ? kwq_done(s->q, &item) : -1;
	complete(&s->fired);
	return HRTIMER_NORESTART;
}

static void api_is_usable_from_softirq_timer(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kt_softirq *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, s);
	s->q = q;
	init_completion(&s->fired);
	hrtimer_setup(&s->timer, kt_softirq_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_SOFT);
	hrtimer_start(&s->timer, ms_to_ktime(1), HRTIMER_MODE_REL_SOFT);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&s->fired, 10 * HZ),
			0UL);
	hrtimer_cancel(&s->timer);
	KUNIT_EXPECT_EQ(test, 0, s->add_ret);
	KUNIT_EXPECT_EQ(test, 0, s->after_ret);
	KUNIT_EXPECT_TRUE(test, s->got);
	KUNIT_EXPECT_EQ(test, 0, s->done_ret);
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).waiting);
}

static void api_is_usable_with_interrupts_off(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item item;
	unsigned long flags;
	int ret[4];
	u64 delay;

	local_irq_save(flags);
	ret[0] = kwq_add(q, "a", 1);
	ret[1] = kwq_add_rate_limited(q, "b", 1, NULL, &delay);
	ret[2] = kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &item);
	if (!ret[2])
		ret[2] = kwq_done(q, &item);
	ret[3] = kwq_remove(q, "b", 1);
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(test, 0, ret[0]);
	KUNIT_EXPECT_EQ(test, 0, ret[1]);
	KUNIT_EXPECT_EQ(test, 0, ret[2]);
	KUNIT_EXPECT_EQ(test, 0, ret[3]);
}

static struct kunit_case kwq_queue_cases[] = {
	KUNIT_CASE(add_then_get_returns_key),
	KUNIT_CASE(get_is_fifo),
	KUNIT_CASE(add_of_ready_key_is_noop),
	KUNIT_CASE(processing_key_is_not_handed_out_twice),
	KUNIT_CASE(add_while_processing_requeues_at_tail_on_done),
	KUNIT_CASE(done_releases_clean_key),
	KUNIT_CASE(done_of_item_not_processing_is_estale),
	KUNIT_CASE(stale_done_after_key_handed_out_again_is_estale),
	KUNIT_CASE(second_done_of_same_item_is_estale),
	KUNIT_CASE(done_after_release_owner_is_estale),
	KUNIT_CASE(release_owner_walks_many_chunks),
	KUNIT_CASE(done_of_item_from_other_queue_is_estale),
	KUNIT_CASE(done_of_zeroed_item_is_estale),
	KUNIT_CASE(done_with_null_item_or_queue_is_einval),
	KUNIT_CASE(len_counts_ready_keys_only),
	KUNIT_CASE(keys_are_binary_and_length_sensitive),
	KUNIT_CASE(kubernetes_and_1024_byte_keys_pass_every_call),
	KUNIT_CASE(long_keys_up_to_max_are_kept_intact),
	KUNIT_CASE(many_keys_survive_hash_growth),
	KUNIT_CASE(keys_stay_unique_while_the_table_grows),
	KUNIT_CASE(add_after_nonpositive_adds_now),
	KUNIT_CASE(add_after_becomes_ready_at_deadline),
	KUNIT_CASE(add_after_earliest_deadline_wins),
	KUNIT_CASE(add_after_of_ready_key_keeps_it_ready),
	KUNIT_CASE(add_of_waiting_key_makes_it_ready_once),
	KUNIT_CASE(add_after_while_processing_waits_from_done),
	KUNIT_CASE(add_after_while_processing_past_deadline_ready_at_done),
	KUNIT_CASE(delayed_keys_ready_by_deadline_then_add_order),
	KUNIT_CASE(timer_rearmed_only_when_earliest_deadline_changes),
	KUNIT_CASE(expiry_without_due_keys_changes_nothing),
	KUNIT_CASE(real_clock_delayed_key_becomes_ready),
	KUNIT_CASE(const_clock_reaches_its_state_through_priv),
	KUNIT_CASE(get_nonblocking_on_empty_is_eagain),
	KUNIT_CASE(get_timeout_expires_with_etimedout),
	KUNIT_CASE(blocked_get_wakes_on_add),
	KUNIT_CASE(blocked_get_wakes_on_delay_expiry),
	KUNIT_CASE(shutdown_wakes_blocked_getter_with_eshutdown),
	KUNIT_CASE(get_after_shutdown_returns_ready_keys_then_eshutdown),
	KUNIT_CASE(add_after_shutdown_is_rejected),
	KUNIT_CASE(shutdown_drops_waiting_keys_and_counts_them),
	KUNIT_CASE(dirty_key_is_requeued_at_done_after_shutdown),
	KUNIT_CASE(shutdown_drain_waits_for_ready_and_processing),
	KUNIT_CASE(shutdown_drain_waits_for_ready_only_keys),
	KUNIT_CASE(plain_shutdown_ends_drain_wait),
	KUNIT_CASE(shutdown_drain_of_empty_queue_returns_at_once),
	KUNIT_CASE(remove_cancels_ready_key),
	KUNIT_CASE(remove_cancels_waiting_key),
	KUNIT_CASE(remove_cancels_pending_requeue_of_processing_key),
	KUNIT_CASE(remove_of_unknown_key_is_enoent),
	KUNIT_CASE(higher_priority_is_handed_out_first),
	KUNIT_CASE(same_priority_is_fifo),
	KUNIT_CASE(readd_with_higher_priority_raises_it),
	KUNIT_CASE(readd_with_lower_priority_keeps_it),
	KUNIT_CASE(priority_of_dirty_readd_applies_at_done),
	KUNIT_CASE(delayed_key_keeps_its_priority),
	KUNIT_CASE(emptied_priority_level_is_used_again),
	KUNIT_CASE(release_owner_requeues_only_its_items),
	KUNIT_CASE(release_owner_returns_dirty_item_once),
	KUNIT_CASE(release_owner_after_shutdown_lets_drain_finish),
	KUNIT_CASE(done_key_checks_owner),
	KUNIT_CASE(unget_puts_item_back_at_head_of_its_level),
	KUNIT_CASE(done_get_of_a_zeroed_item_only_gets),
	KUNIT_CASE(done_get_finishes_then_takes_the_next),
	KUNIT_CASE(done_get_of_a_stale_item_takes_nothing),
	KUNIT_CASE(done_get_with_nothing_ready_leaves_no_lease),
	KUNIT_CASE(unget_of_an_ended_lease_changes_nothing),
	KUNIT_CASE(unget_keeps_priority_and_pending_readd),
	KUNIT_CASE(poll_reports_ready_keys_and_hangup),
	KUNIT_CASE(max_items_rejects_new_key_with_enospc),
	KUNIT_CASE(invalid_arguments_are_einval),
	KUNIT_CASE(create_rejects_bad_names),
	KUNIT_CASE(create_rejects_bad_configs),
	KUNIT_CASE(charge_caller_queue_grows_and_works),
	KUNIT_CASE(create_duplicate_name_is_eexist),
	KUNIT_CASE(find_holds_a_reference_past_destroy),
	KUNIT_CASE(last_put_from_atomic_context_frees_later),
	KUNIT_CASE(last_put_in_destroy_frees_at_once),
	KUNIT_CASE(destroy_with_armed_timer_and_blocked_getter),
	KUNIT_CASE(stats_snapshot_counts_everything),
	KUNIT_CASE(api_is_usable_from_softirq_timer),
	KUNIT_CASE(api_is_usable_with_interrupts_off),
	{}
};

static struct kunit_suite kwq_queue_suite = {
	.name = "kwq_queue",
	.test_cases = kwq_queue_cases,
};

kunit_test_suite(kwq_queue_suite);

KWQ_MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
