// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for the delay wheel (src/queue.c, "delay wheel"): waiting
 * keys due later than the next few milliseconds go to wheel slots once
 * the delay tree holds more than KWQ_WHEEL_MIN_TREE keys, and cascade
 * into the tree before they are due. What callers see must not change:
 * keys become ready in (deadline, add order) order, exactly at their
 * deadline on the fake clock, and remove, earlier-deadline re-adds,
 * shutdown and the stats treat a key in a slot as any waiting key.
 *
 * wt_engage() fills the tree with keys ten hours out and waits for the
 * wheel's allocation, so what a case adds after it goes to the wheel.
 */

#include <kunit/test.h>
#include <linux/kstrtox.h>
#include <linux/kwq.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "kwq_test.h"
#include "queue.h"

#define MS		NSEC_PER_MSEC
#define SEC		NSEC_PER_SEC
#define HOUR		(3600 * SEC)
#define WT_FILL		(KWQ_WHEEL_MIN_TREE + 1)
#define WT_FILL_AFTER	(10 * HOUR)

/* Fill the tree past its size for the wheel, and let the wheel come. */
static struct kwq *wt_engage(struct kunit *test, struct kt_clock **c)
{
	struct kwq *q = kt_create(test, NULL, c);
	char key[16];
	int i;

	for (i = 0; i < WT_FILL; i++) {
		snprintf(key, sizeof(key), "fill-%d", i);
		KUNIT_ASSERT_EQ(test, 0, kt_add_after(q, key, WT_FILL_AFTER));
	}
	flush_work(&q->wheel_work);
	KUNIT_ASSERT_NOT_NULL(test, q->wheel);
	KUNIT_ASSERT_EQ(test, 0UL, q->wheel_nr);
	return q;
}

static u64 wt_waiting(struct kunit *test, struct kwq *q)
{
	return kt_stats(test, q).waiting;
}

static void few_waiting_keys_never_use_the_wheel(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	char key[16];
	int i;

	for (i = 0; i < KWQ_WHEEL_MIN_TREE; i++) {
		snprintf(key, sizeof(key), "k-%d", i);
		KUNIT_ASSERT_EQ(test, 0, kt_add_after(q, key, 2 * HOUR + i));
	}
	flush_work(&q->wheel_work);
	KUNIT_EXPECT_NULL(test, q->wheel);
	/* The timer is armed at the earliest deadline, as without a wheel. */
	KUNIT_EXPECT_TRUE(test, c->armed);
	KUNIT_EXPECT_EQ(test, c->deadline, KT_T0 + 2 * HOUR);
}

static void far_keys_go_to_the_wheel_near_keys_to_the_tree(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = wt_engage(test, &c);

	KUNIT_EXPECT_EQ(test, 0, kt_add_after(q, "far", HOUR));
	KUNIT_EXPECT_EQ(test, 1UL, q->wheel_nr);
	/* Due within a millisecond: its slot would cascade at once. */
	KUNIT_EXPECT_EQ(test, 0, kt_add_after(q, "near", MS / 2));
	KUNIT_EXPECT_EQ(test, 1UL, q->wheel_nr);
	/* Armed for the near key, which is before the far slot's cascade. */
	KUNIT_EXPECT_EQ(test, c->deadline, KT_T0 + MS / 2);
	kt_advance(c, MS / 2);
	kt_get_done(test, q, "near");
	kt_expect_empty(test, q);
}

static void order_across_tree_and_wheel(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = wt_engage(test, &c);

	/* Wheel keys, added out of deadline order. */
	kt_add_after(q, "w-3s", 3 * SEC);
	kt_add_after(q, "w-1h", HOUR);
	kt_add_after(q, "w-2s", 2 * SEC);
	kt_add_after(q, "w-3s-later", 3 * SEC);
	KUNIT_EXPECT_EQ(test, 4UL, q->wheel_nr);
	/* Near keys in the tree, between and before them. */
	kt_add_after(q, "t-1ms", MS);
	kt_advance(c, 1999 * MS);
	kt_add_after(q, "t-2s", MS);
	kt_add_after(q, "t-before-2s", MS / 2);
	kt_advance(c, HOUR);
	KUNIT_EXPECT_EQ(test, 7L, kwq_len(q));
	kt_get_done(test, q, "t-1ms");
	kt_get_done(test, q, "t-before-2s");
	kt_get_done(test, q, "w-2s");
	kt_get_done(test, q, "t-2s");
	kt_get_done(test, q, "w-3s");
	kt_get_done(test, q, "w-3s-later");
	kt_get_done(test, q, "w-1h");
	kt_expect_empty(test, q);
}

/*
 * Equal deadlines, one key in the tree and one in the wheel: add order
 * decides, whichever structure holds the earlier one.
 */
static void equal_deadlines_across_tree_and_wheel_keep_add_order(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = wt_engage(test, &c);

	kt_add_after(q, "wheel-first", HOUR);
	KUNIT_EXPECT_EQ(test, 1UL, q->wheel_nr);
	/* A tree at its size for the wheel takes any key. */
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "fill-0"));
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "fill-1"));
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "fill-2"));
	kt_add_after(q, "tree-second", HOUR);
	KUNIT_EXPECT_EQ(test, 1UL, q->wheel_nr);
	kt_add_after(q, "tree-first", 2 * HOUR);
	KUNIT_EXPECT_EQ(test, 1UL, q->wheel_nr);
	kt_add_after(q, "wheel-second", 2 * HOUR);
	KUNIT_EXPECT_EQ(test, 2UL, q->wheel_nr);
	kt_advance(c, 2 * HOUR);
	KUNIT_EXPECT_EQ(test, 4L, kwq_len(q));
	kt_get_done(test, q, "wheel-first");
	kt_get_done(test, q, "tree-second");
	kt_get_done(test, q, "tree-first");
	kt_get_done(test, q, "wheel-second");
	kt_expect_empty(test, q);
}

static void far_key_ready_exactly_at_its_deadline(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = wt_engage(test, &c);
	const u64 after = 2 * HOUR + 12345;

	KUNIT_EXPECT_EQ(test, 0, kt_add_after(q, "far", after));
	KUNIT_EXPECT_EQ(test, 1UL, q->wheel_nr);
	/* The timer fires for cascades before the deadline, never late. */
	KUNIT_EXPECT_LT(test, c->deadline, KT_T0 + after);
	kt_advance(c, after - 1);
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 0UL, q->wheel_nr);
	KUNIT_EXPECT_EQ(test, (u64)WT_FILL + 1, wt_waiting(test, q));
	KUNIT_EXPECT_EQ(test, c->deadline, KT_T0 + after);
	kt_advance(c, 1);
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	kt_get_done(test, q, "far");
	KUNIT_EXPECT_EQ(test, (u64)WT_FILL, wt_waiting(test, q));
}

static void remove_of_key_in_slot(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = wt_engage(test, &c);

	kt_add_after(q, "a", HOUR);
	kt_add_after(q, "b", HOUR);
	kt_add_after(q, "c", 3 * HOUR);
	KUNIT_EXPECT_EQ(test, 3UL, q->wheel_nr);
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "a"));
	KUNIT_EXPECT_EQ(test, -ENOENT, kt_remove(q, "a"));
	/* The last key of a slot: the next slot is the earliest. */
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "c"));
	KUNIT_EXPECT_EQ(test, 1UL, q->wheel_nr);
	KUNIT_EXPECT_EQ(test, (u64)WT_FILL + 1, wt_waiting(test, q));
	kt_advance(c, 3 * HOUR);
	kt_get_done(test, q, "b");
	kt_expect_empty(test, q);
	KUNIT_EXPECT_EQ(test, -ENOENT, kt_remove(q, "b"));
	/* Emptied by remove: no cascade is left armed before the fillers. */
	KUNIT_EXPECT_EQ(test, c->deadline, KT_T0 + WT_FILL_AFTER);
}

static void earliest_deadline_wins_for_key_in_slot(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = wt_engage(test, &c);

	kt_add_after(q, "a", 2 * HOUR);
	kt_add_after(q, "b", HOUR);
	/* Earlier: moves (to a finer slot); later: stays. */
	KUNIT_EXPECT_EQ(test, 0, kt_add_after(q, "a", 30 * 60 * SEC));
	KUNIT_EXPECT_EQ(test, 0, kt_add_after(q, "b", 3 * HOUR));
	/* Earlier and near: to the tree. */
	kt_add_after(q, "c", HOUR);
	KUNIT_EXPECT_EQ(test, 3UL, q->wheel_nr);
	KUNIT_EXPECT_EQ(test, 0, kt_add_after(q, "c", MS));
	KUNIT_EXPECT_EQ(test, 2UL, q->wheel_nr);
	KUNIT_EXPECT_EQ(test, (u64)WT_FILL + 3, wt_waiting(test, q));
	kt_advance(c, MS);
	kt_get_done(test, q, "c");
	kt_expect_ready_at(test, q, c, 30 * 60 * SEC - MS);
	kt_get_done(test, q, "a");
	kt_advance(c, 30 * 60 * SEC);
	/* Neither runs again at its later deadline. */
	kt_expect_last_run(test, q, c, "b", 3 * HOUR);
}

#define WT_HUGE		4096
#define WT_TIES		64

/* Deadline of huge-slot key @i: a permutation of 100 ns steps. */
static u64 wt_huge_offset(unsigned int i)
{
	return (u64)((i * 2654435761U) % WT_HUGE) * 100;
}

/* The number in key "@prefix<n>" of @item, or -1. */
static int wt_key_num(const struct kwq_item *item, const char *prefix)
{
	size_t plen = strlen(prefix);
	char buf[16];
	unsigned int k;

	if (item->len <= plen || item->len >= sizeof(buf) ||
	    memcmp(item->key, prefix, plen))
		return -1;
	memcpy(buf, item->key + plen, item->len - plen);
	buf[item->len - plen] = '\0';
	return kstrtouint(buf, 10, &k) ? -1 : k;
}

/*
 * WT_HUGE keys in one slot (deadlines within half a millisecond, added
 * out of order) and WT_TIES more at the latest of those deadlines: the
 * cascade moves them KWQ_DELAY_CHUNK per critical section and a bounded
 * number per expiry, and what is ready at any point is the start of the
 * (deadline, add order) order.
 */
static void huge_slot_cascades_in_chunks_in_order(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = wt_engage(test, &c);
	u64 base = HOUR, moves, last = 0;
	struct kwq_item item;
	unsigned int i, got = 0;
	char key[16];
	int k;

	for (i = 0; i < WT_HUGE; i++) {
		snprintf(key, sizeof(key), "h-%u", i);
		KUNIT_ASSERT_EQ(test, 0, kt_add_after(q, key,
						      base + wt_huge_offset(i)));
	}
	for (i = 0; i < WT_TIES; i++) {
		snprintf(key, sizeof(key), "tie-%u", i);
		KUNIT_ASSERT_EQ(test, 0, kt_add_after(q, key,
						      base + (WT_HUGE - 1) * 100));
	}
	KUNIT_EXPECT_EQ(test, (unsigned long)WT_HUGE + WT_TIES, q->wheel_nr);
	moves = q->wheel_moves;

	/* One expiry at the first deadline: part of the work, in order. */
	c->now = KT_T0 + base;
	c->armed = false;
	kwq_clock_expired(q);
	KUNIT_EXPECT_GT(test, q->wheel_nr, 0UL);
	KUNIT_EXPECT_TRUE(test, c->armed);
	/* Re-armed at once for the rest. */
	KUNIT_EXPECT_EQ(test, c->deadline, c->now);
	/* The slot still holds keys: none may be ready before them. */
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
	kt_advance(c, 0);
	KUNIT_EXPECT_EQ(test, 0UL, q->wheel_nr);
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	/* Every key was moved once at least, in more expiries than one. */
	KUNIT_EXPECT_GE(test, q->wheel_moves - moves,
			(u64)WT_HUGE + WT_TIES);

	kt_advance(c, WT_HUGE * 100);
	KUNIT_EXPECT_EQ(test, (long)WT_HUGE + WT_TIES, kwq_len(q));
	/* Offsets come out 0, 100, 200, ...; the ties last, in add order. */
	for (i = 0; i < WT_HUGE + WT_TIES; i++) {
		KUNIT_ASSERT_EQ(test, 0, kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0,
						 &item));
		if (i < WT_HUGE) {
			/* At the ties' deadline, the huge key came first. */
			k = wt_key_num(&item, "h-");
			KUNIT_ASSERT_GE(test, k, 0);
			KUNIT_EXPECT_EQ(test, wt_huge_offset(k), (u64)i * 100);
		} else {
			KUNIT_EXPECT_EQ(test, (int)last++,
					wt_key_num(&item, "tie-"));
		}
		got++;
		KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	}
	KUNIT_EXPECT_EQ(test, (unsigned int)(WT_HUGE + WT_TIES), got);
	kt_expect_empty(test, q);
}

#define WT_BIG		8192

/*
 * A slot cascades one level-0 slot (2^KWQ_WHEEL_SHIFT ns) before its
 * start, plus one per 2^12 keys it holds: two queues with the same keys
 * in the same slot, one with WT_BIG more, arm their cascades that far
 * apart, and the big slot is in the tree by its start.
 */
static void big_slot_starts_cascading_earlier(struct kunit *test)
{
	struct kt_clock *c_small, *c_big;
	struct kwq *small = wt_engage(test, &c_small);
	struct kwq *big = wt_engage(test, &c_big);
	char key[16];
	int i;

	KUNIT_EXPECT_EQ(test, 0, kt_add_after(small, "k", HOUR));
	for (i = 0; i < WT_BIG; i++) {
		snprintf(key, sizeof(key), "b-%d", i);
		KUNIT_ASSERT_EQ(test, 0, kt_add_after(big, key, HOUR));
	}
	KUNIT_EXPECT_EQ(test, 1UL, small->wheel_nr);
	KUNIT_EXPECT_EQ(test, (unsigned long)WT_BIG, big->wheel_nr);
	KUNIT_EXPECT_EQ(test, c_small->deadline - c_big->deadline,
			(u64)(WT_BIG >> 12) << KWQ_WHEEL_SHIFT);
	/* Run the big queue to a nanosecond before the deadline. */
	kt_advance(c_big, HOUR - 1);
	KUNIT_EXPECT_EQ(test, 0UL, big->wheel_nr);
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(big));
	kt_advance(c_big, 1);
	KUNIT_EXPECT_EQ(test, (long)WT_BIG, kwq_len(big));
	kt_get_done(test, big, "b-0");
	kt_get_done(test, big, "b-1");
}

static void shutdown_drops_keys_in_slots(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = wt_engage(test, &c);
	struct kwq_stats st;
	char key[16];
	int i;

	for (i = 0; i < 500; i++) {
		snprintf(key, sizeof(key), "s-%d", i);
		kt_add_after(q, key, HOUR + i * SEC);
	}
	KUNIT_EXPECT_EQ(test, 500UL, q->wheel_nr);
	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown(q));
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 0ULL, st.waiting);
	KUNIT_EXPECT_EQ(test, (u64)WT_FILL + 500, st.dropped_at_shutdown);
	KUNIT_EXPECT_EQ(test, 0UL, q->wheel_nr);
	KUNIT_EXPECT_FALSE(test, c->armed);
	kt_advance(c, 20 * HOUR);
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
}

static void stats_count_keys_in_slots(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = wt_engage(test, &c);
	struct kwq_stats st;

	kt_add_after(q, "a", HOUR);
	kt_add_after(q, "b", 2 * HOUR);
	kt_add_after(q, "c", MS);
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, (u64)WT_FILL + 3, st.waiting);
	KUNIT_EXPECT_EQ(test, 0ULL, st.len);
	KUNIT_EXPECT_EQ(test, (u64)WT_FILL + 3, st.adds_total);
	kt_advance(c, HOUR);
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, (u64)WT_FILL + 1, st.waiting);
	KUNIT_EXPECT_EQ(test, 2ULL, st.len);
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "b"));
	KUNIT_EXPECT_EQ(test, (u64)WT_FILL, wt_waiting(test, q));
}

static struct kunit_case kwq_wheel_cases[] = {
	KUNIT_CASE(few_waiting_keys_never_use_the_wheel),
	KUNIT_CASE(far_keys_go_to_the_wheel_near_keys_to_the_tree),
	KUNIT_CASE(order_across_tree_and_wheel),
	KUNIT_CASE(equal_deadlines_across_tree_and_wheel_keep_add_order),
	KUNIT_CASE(far_key_ready_exactly_at_its_deadline),
	KUNIT_CASE(remove_of_key_in_slot),
	KUNIT_CASE(earliest_deadline_wins_for_key_in_slot),
	KUNIT_CASE(huge_slot_cascades_in_chunks_in_order),
	KUNIT_CASE(big_slot_starts_cascading_earlier),
	KUNIT_CASE(shutdown_drops_keys_in_slots),
	KUNIT_CASE(stats_count_keys_in_slots),
	{}
};

static struct kunit_suite kwq_wheel_suite = {
	.name = "kwq_wheel",
	.test_cases = kwq_wheel_cases,
};

kunit_test_suite(kwq_wheel_suite);
