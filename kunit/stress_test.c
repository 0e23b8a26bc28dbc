// SPDX-License-Identifier: GPL-2.0
/*
 * Bounded concurrency stress for kwq: producer and worker kthreads on a
 * real-clock queue. Asserts that every key is processed (and every
 * simulated failure retried), that no key is ever held by two workers at
 * once, that the queue ends empty, and that an add that changed nothing
 * (found its key ready) is still followed by a run that sees what its
 * caller wrote before it.
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/kwq.h>
#include <linux/slab.h>

#include "kwq_test.h"

#define KS_KEYS		3000
#define KS_WORKERS	4
#define KS_PRODUCERS	2
#define KS_HOT_ADDS	2000

struct ks_state;

struct ks_thread {
	struct ks_state *s;
	int i;
};

struct ks_state {
	struct kwq *q;
	atomic_t held[KS_KEYS];
	atomic_t runs[KS_KEYS];
	atomic_t failed[KS_KEYS];	/* simulated failures left to retry */
	atomic_t violations;
	atomic_t errors;
	atomic_t retries;
	struct completion exited[KS_WORKERS + KS_PRODUCERS];
	struct ks_thread thread[KS_WORKERS + KS_PRODUCERS];
};

static bool ks_fails(u32 k)
{
	return k % 7 == 3;
}

static int ks_worker(void *data)
{
	struct ks_thread *me = data;
	struct ks_state *s = me->s;
	struct kwq_item item;	/* this worker's lease, on its own stack */
	const void *key;
	size_t len;
	int ret;
	u32 k;

	for (;;) {
		ret = kwq_get(s->q, me, 0, KWQ_WAIT_FOREVER, &item);
		if (ret) {
			if (ret != -ESHUTDOWN)
				atomic_inc(&s->errors);
			break;
		}
		key = kwq_item_key(&item, &len);
		if (len != sizeof(k)) {
			atomic_inc(&s->errors);
			kwq_done(s->q, &item);
			continue;
		}
		memcpy(&k, key, sizeof(k));
		if (k >= KS_KEYS || atomic_xchg(&s->held[k], 1)) {
			atomic_inc(&s->violations);
			kwq_done(s->q, &item);
			continue;
		}
		atomic_inc(&s->runs[k]);
		if (k % 16 == 0)
			usleep_range(10, 50);
		if (ks_fails(k) && atomic_cmpxchg(&s->failed[k], 0, 1) == 0) {
			/* First run fails: retry with backoff. */
			if (kwq_add_rate_limited(s->q, &k, sizeof(k), NULL,
						 NULL))
				atomic_inc(&s->errors);
			else
				atomic_inc(&s->retries);
		} else if (ks_fails(k)) {
			kwq_forget(s->q, &k, sizeof(k));
		}
		atomic_set(&s->held[k], 0);
		if (kwq_done(s->q, &item))
			atomic_inc(&s->errors);
	}
	complete(&s->exited[me->i]);
	return 0;
}

static int ks_producer(void *data)
{
	struct ks_thread *me = data;
	struct ks_state *s = me->s;
	int p = me->i - KS_WORKERS;
	u32 k, hot = 0;
	int i;

	for (k = p; k < KS_KEYS; k += KS_PRODUCERS) {
		if (kwq_add(s->q, &k, sizeof(k)))
			atomic_inc(&s->errors);
		/* The other producer's keys, a little later. */
		if (k % 5 == 0) {
			u32 o = k + 1 < KS_KEYS ? k + 1 : 0;

			if (kwq_add_after(s->q, &o, sizeof(o), 200 * NSEC_PER_USEC))
				atomic_inc(&s->errors);
		}
		if (k % 64 == p)
			cond_resched();
	}
	/* One hot key, added over and over while it is being processed. */
	for (i = 0; i < KS_HOT_ADDS; i++) {
		struct kwq_add_opts opts = { .priority = i % 3 };

		if (kwq_add_opts(s->q, &hot, sizeof(hot), &opts))
			atomic_inc(&s->errors);
		if (i % 64 == 0)
			cond_resched();
	}
	complete(&s->exited[me->i]);
	return 0;
}

static bool ks_all_done(struct ks_state *s)
{
	u32 k;

	for (k = 0; k < KS_KEYS; k++) {
		int want = ks_fails(k) ? 2 : 1;

		if (atomic_read(&s->runs[k]) < want)
			return false;
	}
	return true;
}

static void stress_every_key_processed_never_concurrently(struct kunit *test)
{
	struct kwq_config cfg = {
		.nr_limiters = 1,
		.limiters = { {
			.type = KWQ_LIMITER_EXPONENTIAL,
			.exp = { .base_ns = 100 * NSEC_PER_USEC,
				 .max_ns = 2 * NSEC_PER_MSEC },
		} },
	};
	unsigned long deadline;
	struct ks_state *s;
	struct kwq_stats st;
	struct task_struct *t;
	int i, started = 0;
	u32 k;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->q = kt_create(test, &cfg, NULL);
	for (i = 0; i < KS_WORKERS + KS_PRODUCERS; i++) {
		s->thread[i].s = s;
		s->thread[i].i = i;
		init_completion(&s->exited[i]);
	}
	for (i = 0; i < KS_WORKERS + KS_PRODUCERS; i++) {
		t = kthread_run(i < KS_WORKERS ? ks_worker : ks_producer,
				&s->thread[i], "kwq-stress/%d", i);
		if (IS_ERR(t))
			break;
		started++;
	}
	if (started < KS_WORKERS + KS_PRODUCERS) {
		KUNIT_FAIL(test, "could not start all threads");
		kwq_shutdown(s->q);
		for (i = 0; i < started; i++) {
			/* Producers run to the end; workers see shutdown. */
			kt_wait_exit(test, &s->exited[i], "thread");
		}
		return;
	}
	for (i = KS_WORKERS; i < KS_WORKERS + KS_PRODUCERS; i++)
		kt_wait_exit(test, &s->exited[i], "producer");

	deadline = jiffies + 30 * HZ;
	while (!ks_all_done(s) && time_before(jiffies, deadline))
		msleep(20);
	KUNIT_EXPECT_TRUE_MSG(test, ks_all_done(s),
			      "keys still unprocessed after 30 s");

	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown_drain(s->q));
	for (i = 0; i < KS_WORKERS; i++)
		kt_wait_exit(test, &s->exited[i], "worker");

	KUNIT_EXPECT_EQ(test, 0, atomic_read(&s->violations));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&s->errors));
	for (k = 0; k < KS_KEYS; k++) {
		KUNIT_EXPECT_EQ(test, 0, atomic_read(&s->held[k]));
		KUNIT_EXPECT_GE(test, atomic_read(&s->runs[k]),
				ks_fails(k) ? 2 : 1);
	}
	KUNIT_EXPECT_GT(test, atomic_read(&s->retries), 0);
	st = kt_stats(test, s->q);
	KUNIT_EXPECT_EQ(test, 0ULL, st.len);
	KUNIT_EXPECT_EQ(test, 0ULL, st.processing);
	KUNIT_EXPECT_EQ(test, 0ULL, st.waiting);
	KUNIT_EXPECT_EQ(test, (u64)atomic_read(&s->retries), st.retries_total);
	kunit_info(test, "retries %d, adds %llu, dropped %llu\n",
		   atomic_read(&s->retries), st.adds_total,
		   st.dropped_at_shutdown);
}

/*
 * Hot keys: each producer owns a few keys, and before every add of one it
 * writes the key's next version. Most adds find the key ready and take
 * no lock (kwq_seen_lockless()); each must still be followed by a run
 * that sees what was written before it. Once drained, the last run of
 * every key saw its last version.
 */
#define KH_PRODUCERS	2
#define KH_KEYS		4		/* per producer */
#define KH_ADDS		20000		/* per producer */
#define KH_WORKERS	2

struct kh_state {
	struct kwq *q;
	u64 written[KH_PRODUCERS * KH_KEYS];	/* by its producer only */
	u64 seen[KH_PRODUCERS * KH_KEYS];	/* by the key's holder */
	atomic_t errors;
	struct kt_thread thread[KH_WORKERS + KH_PRODUCERS];
};

static int kh_worker(void *data)
{
	struct kt_thread *me = data;
	struct kh_state *s = me->s;
	struct kwq_item item = {};
	u32 k;
	int ret;

	for (;;) {
		ret = kwq_done_get(s->q, NULL, 0, KWQ_WAIT_FOREVER, &item);
		if (ret) {
			if (ret != -ESHUTDOWN)
				atomic_inc(&s->errors);
			break;
		}
		memcpy(&k, item.key, sizeof(k));
		if (item.len != sizeof(k) || k >= ARRAY_SIZE(s->seen)) {
			atomic_inc(&s->errors);
			continue;
		}
		/* One holder at a time: the queue orders these. */
		s->seen[k] = max(s->seen[k], READ_ONCE(s->written[k]));
	}
	complete(&me->exited);
	return 0;
}

static int kh_producer(void *data)
{
	struct kt_thread *me = data;
	struct kh_state *s = me->s;
	int p = me->i - KH_WORKERS, i;
	u32 k;

	for (i = 0; i < KH_ADDS; i++) {
		k = p * KH_KEYS + i % KH_KEYS;
		WRITE_ONCE(s->written[k], s->written[k] + 1);
		if (kwq_add(s->q, &k, sizeof(k)))
			atomic_inc(&s->errors);
		if (i % 256 == 0)
			cond_resched();
	}
	complete(&me->exited);
	return 0;
}

static void stress_skipped_add_is_seen_by_the_next_run(struct kunit *test)
{
	struct kh_state *s;
	int i;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->q = kt_create(test, NULL, NULL);
	kt_run_pool(test, s->q, s, s->thread, KH_WORKERS, kh_worker,
		    KH_PRODUCERS, kh_producer, "kwq-hot");
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&s->errors));
	for (i = 0; i < ARRAY_SIZE(s->seen); i++) {
		KUNIT_EXPECT_EQ(test, (u64)KH_ADDS / KH_KEYS, s->written[i]);
		KUNIT_EXPECT_EQ_MSG(test, s->written[i], s->seen[i],
				    "key %d: an add was not followed by a run", i);
	}
	kunit_info(test, "adds that landed: %llu of %d\n",
		   kt_stats(test, s->q).adds_total, KH_PRODUCERS * KH_ADDS);
}

static struct kunit_case kwq_stress_cases[] = {
	KUNIT_CASE_SLOW(stress_every_key_processed_never_concurrently),
	KUNIT_CASE_SLOW(stress_skipped_add_is_seen_by_the_next_run),
	{}
};

static struct kunit_suite kwq_stress_suite = {
	.name = "kwq_stress",
	.test_cases = kwq_stress_cases,
};

kunit_test_suite(kwq_stress_suite);
