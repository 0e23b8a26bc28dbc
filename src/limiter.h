/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rate limiters (limiter.c): what delay an add_rate_limited() of a key
 * with so many failures gets, with client-go's numerics. Pure functions
 * of a struct kwq_limiters, the key's failure count and the time; the
 * caller (the queue core, under its lock) owns the state and the count.
 */
#ifndef _KWQ_LIMITER_H
#define _KWQ_LIMITER_H

#include <linux/kwq.h>
#include <linux/types.h>

/* Token bucket state (golang.org/x/time/rate with n = 1). */
struct kwq_token_bucket {
	s64 tokens;	/* in 1e-12 tokens; negative while in debt */
	u64 last;	/* clock time tokens was computed for */
};

struct kwq_limiter {
	struct kwq_limiter_config cfg;
	struct kwq_token_bucket bucket;
};

/* A queue's limiters, combined as client-go's MaxOfRateLimiter. */
struct kwq_limiters {
	u32 nr;
	bool per_key;			/* one counts the key's failures */
	u64 max_wait_ns;		/* cap on the delay, 0: none */
	struct kwq_limiter l[KWQ_MAX_LIMITERS];
};

/* What kwq_limiters_when() planned for the token buckets. */
struct kwq_limit_plan {
	s64 tokens[KWQ_MAX_LIMITERS];
};

int kwq_limiters_init(struct kwq_limiters *ls, const struct kwq_config *cfg,
		      u64 now);
u64 kwq_limiters_when(const struct kwq_limiters *ls, u32 failures, u64 now,
		      struct kwq_limit_plan *plan);
void kwq_limiters_commit(struct kwq_limiters *ls, u64 now,
			 const struct kwq_limit_plan *plan);
u64 kwq_exp_backoff(u64 base_ns, u64 max_ns, u32 exp);

#endif /* _KWQ_LIMITER_H */
