// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the kwq KUnit suites, see kwq_test.h.
 *
 * The fake clock is called by the queue under its lock (now, arm,
 * cancel) and by the test thread (kt_advance); the tests drive each
 * queue from one thread, so no locking is needed here.
 */

#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/string.h>

#include "kwq_internal.h"
#include "kwq_test.h"

static u64 kt_now(const struct kwq_clock *clock)
{
	const struct kt_clock *c = clock->priv;

	return READ_ONCE(c->now);
}

static void kt_arm(const struct kwq_clock *clock, struct kwq *q,
		   u64 deadline_ns)
{
	struct kt_clock *c = clock->priv;

	c->q = q;
	c->deadline = deadline_ns;
	c->armed = true;
	c->arms++;
}

static void kt_cancel(const struct kwq_clock *clock, struct kwq *q)
{
	struct kt_clock *c = clock->priv;

	c->armed = false;
	c->cancels++;
}

/* Step fake time; run the queue's expiry when the armed deadline passed. */
void kt_advance(struct kt_clock *c, u64 ns)
{
	WRITE_ONCE(c->now, c->now + ns);
	while (c->armed && c->deadline <= c->now) {
		c->armed = false;
		kwq_clock_expired(c->q);
	}
}

/*
 * One key becomes ready exactly @ns from now, not a nanosecond before
 * (and none was ready before it).
 */
void kt_expect_ready_at(struct kunit *test, struct kwq *q, struct kt_clock *c,
			u64 ns)
{
	kt_advance(c, ns - 1);
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
	kt_advance(c, 1);
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
}

static void kt_destroy_action(void *q)
{
	kwq_destroy(q);
}

static void kt_budget_release(struct kwq_budget *b)
{
}

struct kwq_budget *kt_budget(struct kunit *test, unsigned long limit)
{
	struct kwq_budget *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, b);
	b->limit = limit;
	refcount_set(&b->ref, 1);
	b->release = kt_budget_release;
	return b;
}

struct kwq *kt_create(struct kunit *test, struct kwq_config *cfg,
		      struct kt_clock **clock)
{
	return kt_create_charged(test, cfg, clock, NULL);
}

struct kwq *kt_create_charged(struct kunit *test, struct kwq_config *cfg,
			      struct kt_clock **clock,
			      struct kwq_budget *budget)
{
	static atomic_t serial = ATOMIC_INIT(0);
	struct kwq_config local = {};
	struct kt_clock *c;
	char name[32];
	struct kwq *q;

	if (!cfg)
		cfg = &local;
	if (clock) {
		c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, c);
		c->base.now = kt_now;
		c->base.arm = kt_arm;
		c->base.cancel = kt_cancel;
		c->base.priv = c;
		c->now = KT_T0;
		cfg->clock = &c->base;
		*clock = c;
	}
	snprintf(name, sizeof(name), "kt-%d", atomic_inc_return(&serial));
	/* A budget: a queue as /dev/kwq makes them, with no name. */
	q = budget ? kwq_create_anon(name, cfg, budget) : kwq_create(name, cfg);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(q), "kwq_create: %ld",
			       PTR_ERR(q));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   kt_destroy_action,
							   q));
	return q;
}

/* Destroy now instead of at the end of the case. */
void kt_destroy(struct kunit *test, struct kwq *q)
{
	kunit_release_action(test, kt_destroy_action, q);
}

int kt_add(struct kwq *q, const char *key)
{
	return kwq_add(q, key, strlen(key));
}

int kt_add_after(struct kwq *q, const char *key, s64 ns)
{
	return kwq_add_after(q, key, strlen(key), ns);
}

int kt_add_prio(struct kwq *q, const char *key, int prio)
{
	struct kwq_add_opts opts = { .priority = prio };

	return kwq_add_opts(q, key, strlen(key), &opts);
}

/* kwq_add_rate_limited() that must succeed; returns the delay. */
u64 kt_rate_limited(struct kunit *test, struct kwq *q, const char *key)
{
	u64 delay = U64_MAX;

	KUNIT_EXPECT_EQ(test, 0, kwq_add_rate_limited(q, key, strlen(key),
						      NULL, &delay));
	return delay;
}

int kt_remove(struct kwq *q, const char *key)
{
	return kwq_remove(q, key, strlen(key));
}

int kt_requeues(struct kwq *q, const char *key)
{
	return kwq_num_requeues(q, key, strlen(key));
}

/* Non-blocking get that must return @key; returns the item (the lease). */
struct kwq_item kt_get(struct kunit *test, struct kwq *q, const char *key)
{
	struct kwq_item item = {};
	const void *k;
	size_t len;
	int ret;

	ret = kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &item);
	KUNIT_ASSERT_EQ_MSG(test, 0, ret, "get %s: %d", key, ret);
	k = kwq_item_key(&item, &len);
	KUNIT_ASSERT_EQ_MSG(test, len, strlen(key), "want key %s", key);
	KUNIT_ASSERT_MEMEQ_MSG(test, k, key, len, "want key %s", key);
	return item;
}

/*
 * One failed run of ready @key: get, add_rate_limited, done. Returns the
 * delay of its retry (KWQ_DELAY_DEAD for its last failure).
 */
u64 kt_fail(struct kunit *test, struct kwq *q, const char *key)
{
	struct kwq_item item = kt_get(test, q, key);
	u64 delay = kt_rate_limited(test, q, key);

	KUNIT_ASSERT_EQ(test, 0, kwq_done(q, &item));
	return delay;
}

void kt_get_done(struct kunit *test, struct kwq *q, const char *key)
{
	struct kwq_item item = kt_get(test, q, key);

	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
}

/* kt_get_done(), the key handed out at priority @prio. */
void kt_get_done_prio(struct kunit *test, struct kwq *q, const char *key,
		      int prio)
{
	struct kwq_item item = kt_get(test, q, key);

	KUNIT_EXPECT_EQ(test, prio, kwq_item_priority(&item));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
}

void kt_expect_empty(struct kunit *test, struct kwq *q)
{
	struct kwq_item item;

	KUNIT_EXPECT_EQ(test, -EAGAIN,
			kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &item));
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
}

/* @key runs once more (get, done); @ns later nothing is left. */
void kt_expect_last_run(struct kunit *test, struct kwq *q, struct kt_clock *c,
			const char *key, u64 ns)
{
	kt_get_done(test, q, key);
	kt_advance(c, ns);
	kt_expect_empty(test, q);
}

struct kwq_stats kt_stats(struct kunit *test, struct kwq *q)
{
	struct kwq_stats st;

	KUNIT_EXPECT_EQ(test, 0, kwq_get_stats(q, &st));
	return st;
}

noinline u64 kt_stat(struct kunit *test, struct kwq *q, size_t off)
{
	struct kwq_stats st = kt_stats(test, q);
	u64 v;

	memcpy(&v, (u8 *)&st + off, sizeof(v));
	return v;
}

/* The state of @key (KWQ_KEY_*), or 0 if the queue holds nothing of it. */
u32 kt_state(struct kwq *q, const char *key)
{
	struct kwq_key_info info;

	if (kwq_inspect(q, key, strlen(key), &info))
		return 0;
	return info.state;
}

/* --- one key in every state, every kind of add --- */

static int kt_a_add(struct kwq *q, const char *key)
{
	return kt_add(q, key);
}

static int kt_a_add_after(struct kwq *q, const char *key)
{
	return kt_add_after(q, key, 10 * NSEC_PER_MSEC);
}

static int kt_a_add_opts(struct kwq *q, const char *key)
{
	return kt_add_prio(q, key, 2);
}

static int kt_a_add_rate_limited(struct kwq *q, const char *key)
{
	u64 delay = 0;

	return kwq_add_rate_limited(q, key, strlen(key), NULL, &delay);
}

static int kt_a_batch(struct kwq *q, const char *key, s64 after_ns,
		      u32 flags)
{
	struct kwq_key k = { .key = key, .len = strlen(key) };
	struct kwq_batch_opts o = { .after_ns = after_ns, .flags = flags };
	unsigned int done = 2;
	int ret = kwq_add_batch(q, &k, 1, &o, &done);

	/* The one key took effect, or the batch failed with nothing done. */
	if (done != !ret)
		return -EPROTO;
	return ret;
}

static int kt_a_add_batch(struct kwq *q, const char *key)
{
	return kt_a_batch(q, key, 0, 0);
}

static int kt_a_add_batch_after(struct kwq *q, const char *key)
{
	return kt_a_batch(q, key, 10 * NSEC_PER_MSEC, 0);
}

static int kt_a_add_batch_rate_limited(struct kwq *q, const char *key)
{
	return kt_a_batch(q, key, 0, KWQ_BATCH_RATE_LIMITED);
}

const struct kt_add kt_adds[KT_ADDS] = {
	{ "kwq_add", kt_a_add },
	{ "kwq_add_after", kt_a_add_after },
	{ "kwq_add_opts", kt_a_add_opts },
	{ "kwq_add_rate_limited", kt_a_add_rate_limited, true },
	{ "kwq_add_batch", kt_a_add_batch },
	{ "kwq_add_batch after", kt_a_add_batch_after },
	{ "kwq_add_batch rate-limited", kt_a_add_batch_rate_limited, true },
};

void kt_add_desc(const struct kt_add *a, char *desc)
{
	strscpy(desc, a->name, KUNIT_PARAM_DESC_SIZE);
}

/*
 * A queue of @cfg (or defaults) with max_retries 1 holding a key in every
 * state: "r" ready, "p" processing (*@p its lease), "w" waiting, "i" idle
 * with a failure count, "d" dead.
 */
struct kwq *kt_every_state(struct kunit *test, struct kwq_config *cfg,
			   struct kwq_item *p)
{
	struct kwq_config local = {};
	struct kt_clock *c;
	struct kwq *q;

	if (!cfg)
		cfg = &local;
	cfg->max_retries = 1;
	q = kt_create(test, cfg, &c);

	kt_add(q, "d");
	kt_fail(test, q, "d");
	kt_advance(c, NSEC_PER_SEC);
	kt_fail(test, q, "d");
	kt_rate_limited(test, q, "i");
	kt_advance(c, NSEC_PER_SEC);
	kt_get_done(test, q, "i");
	kt_add(q, "p");
	*p = kt_get(test, q, "p");
	kt_add(q, "r");
	kt_add_after(q, "w", 10 * NSEC_PER_MSEC);
	KUNIT_ASSERT_EQ(test, (u32)KWQ_KEY_DEAD, kt_state(q, "d"));
	KUNIT_ASSERT_EQ(test, (u32)KWQ_KEY_IDLE, kt_state(q, "i"));
	KUNIT_ASSERT_EQ(test, (u32)KWQ_KEY_WAITING, kt_state(q, "w"));
	return q;
}

/* Wait for a thread of a concurrency case, failing after 60 s. */
void kt_wait_exit(struct kunit *test, struct completion *c, const char *what)
{
	/* Threads use the case's state: never free it under a running one. */
	if (!wait_for_completion_timeout(c, 60 * HZ)) {
		KUNIT_FAIL(test, "%s did not finish in 60 s", what);
		wait_for_completion(c);
	}
}

/*
 * Run @workers threads of @worker and @producers of @producer on @th
 * (one struct kt_thread each, workers first, given @s); once the
 * producers have returned, drain @q (expecting 0) and wait for the
 * workers, which see the shutdown. If not all start, @q is shut down,
 * the case fails and those started are waited for.
 */
void kt_run_pool(struct kunit *test, struct kwq *q, void *s,
		 struct kt_thread *th, int workers, int (*worker)(void *),
		 int producers, int (*producer)(void *), const char *name)
{
	int i, started = 0, nr = workers + producers;
	struct task_struct *t;

	for (i = 0; i < nr; i++) {
		th[i].s = s;
		th[i].i = i;
		init_completion(&th[i].exited);
	}
	for (i = 0; i < nr; i++) {
		t = kthread_run(i < workers ? worker : producer, &th[i],
				"%s/%d", name, i);
		if (IS_ERR(t))
			break;
		started++;
	}
	if (started < nr) {
		KUNIT_FAIL(test, "could not start all threads");
		kwq_shutdown(q);
		for (i = 0; i < started; i++)
			kt_wait_exit(test, &th[i].exited, "thread");
		return;
	}
	for (i = workers; i < nr; i++)
		kt_wait_exit(test, &th[i].exited, "producer");
	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown_drain(q));
	for (i = 0; i < workers; i++)
		kt_wait_exit(test, &th[i].exited, "worker");
}
