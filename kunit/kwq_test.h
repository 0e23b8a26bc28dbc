/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the kwq KUnit suites: a fake clock that the test
 * steps by hand (its expiry runs kwq_clock_expired() in the test's own
 * context) and queue fixtures that are torn down by KUnit even when a
 * case fails half way.
 */
#ifndef _KWQ_TEST_H
#define _KWQ_TEST_H

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/kwq.h>
#include <linux/stddef.h>

struct kwq_budget;

struct kt_clock {
	struct kwq_clock base;
	u64 now;
	struct kwq *q;		/* queue it is armed for */
	u64 deadline;
	bool armed;
	unsigned int arms;
	unsigned int cancels;
};

/* Start of fake time: far from 0 so no code can treat 0 as special. */
#define KT_T0	(1000ULL * NSEC_PER_SEC)

struct kwq *kt_create(struct kunit *test, struct kwq_config *cfg,
		      struct kt_clock **clock);
/*
 * A budget of @limit bytes, that outlives the queues a case makes with
 * it: kt_create_charged() makes one that charges @budget (unnamed, as
 * /dev/kwq makes them; NULL: kt_create()).
 */
struct kwq_budget *kt_budget(struct kunit *test, unsigned long limit);
struct kwq *kt_create_charged(struct kunit *test, struct kwq_config *cfg,
			      struct kt_clock **clock,
			      struct kwq_budget *budget);
void kt_advance(struct kt_clock *c, u64 ns);
void kt_expect_ready_at(struct kunit *test, struct kwq *q, struct kt_clock *c,
			u64 ns);
void kt_destroy(struct kunit *test, struct kwq *q);

int kt_add(struct kwq *q, const char *key);
int kt_add_after(struct kwq *q, const char *key, s64 ns);
int kt_add_prio(struct kwq *q, const char *key, int prio);
u64 kt_rate_limited(struct kunit *test, struct kwq *q, const char *key);
int kt_remove(struct kwq *q, const char *key);
int kt_requeues(struct kwq *q, const char *key);
struct kwq_item kt_get(struct kunit *test, struct kwq *q, const char *key);
u64 kt_fail(struct kunit *test, struct kwq *q, const char *key);
void kt_get_done(struct kunit *test, struct kwq *q, const char *key);
void kt_get_done_prio(struct kunit *test, struct kwq *q, const char *key,
		      int prio);
void kt_expect_empty(struct kunit *test, struct kwq *q);
void kt_expect_last_run(struct kunit *test, struct kwq *q, struct kt_clock *c,
			const char *key, u64 ns);
struct kwq_stats kt_stats(struct kunit *test, struct kwq *q);
u64 kt_stat(struct kunit *test, struct kwq *q, size_t off);
u32 kt_state(struct kwq *q, const char *key);
struct kwq *kt_every_state(struct kunit *test, struct kwq_config *cfg,
			   struct kwq_item *p);

/*
 * One add of @key, as one of the exported calls makes it; @limited: it
 * reports a failure (rate limited).
 */
struct kt_add {
	const char *name;
	int (*add)(struct kwq *q, const char *key);
	bool limited;
};

/* Every kind: plain, delayed, prioritised, rate limited; one or batched. */
#define KT_ADDS	7
extern const struct kt_add kt_adds[KT_ADDS];
void kt_add_desc(const struct kt_add *a, char *desc);

/*
 * A thread of the concurrency cases: kt_run_pool() sets ->s (the case's
 * state) and ->i; the thread completes ->exited when it returns.
 */
struct kt_thread {
	void *s;
	int i;
	struct completion exited;
};

void kt_wait_exit(struct kunit *test, struct completion *c, const char *what);
void kt_run_pool(struct kunit *test, struct kwq *q, void *s,
		 struct kt_thread *th, int workers, int (*worker)(void *),
		 int producers, int (*producer)(void *), const char *name);

/* One u64 field of @q's stats, without a struct kwq_stats on the stack. */
#define KT_STAT(test, q, field) \
	kt_stat(test, q, offsetof(struct kwq_stats, field))

#endif /* _KWQ_TEST_H */
