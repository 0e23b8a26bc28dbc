// SPDX-License-Identifier: GPL-2.0
/*
 * kwq rate limiters, with client-go's numerics.
 *
 * A queue combines up to KWQ_MAX_LIMITERS limiters as client-go's
 * MaxOfRateLimiter: the delay is the largest any of them asks for. The
 * per-key limiters (exponential, fast-slow) share the key's failure count
 * kept in its node: client-go increments each limiter's own count on
 * every When() and clears them all on Forget(), so the counts are always
 * equal. Token buckets are per queue.
 *
 * Pure functions: they read and write only the struct kwq_limiters they
 * are given (the queue core calls them under its lock) and never touch
 * the queue; nothing here sleeps or allocates.
 *
 * Token bucket arithmetic is exact rational arithmetic in integers:
 * tokens are kept in units of 1e-12 token, so with a rate of qps_milli
 * thousandths of a token per second, one nanosecond adds exactly
 * qps_milli units and a debt of D units is repaid after D / qps_milli
 * nanoseconds (truncated, as Go's float-to-Duration conversion does).
 */

#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/time64.h>

#include "limiter.h"

#define KWQ_TOKEN_UNIT		1000000000000LL	/* units per token */
#define KWQ_TOKENS_MIN		(-S64_MAX)	/* debt saturates here */

/* client-go DefaultControllerRateLimiter */
static const struct kwq_limiter_config kwq_default_limiters[] = {
	{
		.type = KWQ_LIMITER_EXPONENTIAL,
		.exp = { .base_ns = 5 * NSEC_PER_MSEC,
			 .max_ns = 1000ULL * NSEC_PER_SEC },
	},
	{
		.type = KWQ_LIMITER_BUCKET,
		.bucket = { .qps_milli = 10000, .burst = 100 },
	},
};

static int kwq_limiter_check(const struct kwq_limiter_config *c)
{
	switch (c->type) {
	case KWQ_LIMITER_EXPONENTIAL:
		if (c->exp.base_ns > S64_MAX || c->exp.max_ns > S64_MAX)
			return -EINVAL;
		return 0;
	case KWQ_LIMITER_FAST_SLOW:
		if (c->fast_slow.fast_ns > S64_MAX ||
		    c->fast_slow.slow_ns > S64_MAX)
			return -EINVAL;
		return 0;
	case KWQ_LIMITER_BUCKET:
		if (!c->bucket.qps_milli ||
		    c->bucket.qps_milli > KWQ_BUCKET_QPS_MILLI_MAX ||
		    !c->bucket.burst || c->bucket.burst > KWQ_BUCKET_BURST_MAX)
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

/**
 * kwq_limiters_init() - validate and install a queue's limiters
 * @ls: the queue's limiters, being created
 * @cfg: its configuration
 * @now: clock time; token buckets start full at it
 *
 * Return: 0, or -EINVAL for a bad limiter list or max_wait_ns.
 */
int kwq_limiters_init(struct kwq_limiters *ls, const struct kwq_config *cfg,
		      u64 now)
{
	const struct kwq_limiter_config *list = cfg->limiters;
	u32 i, n = cfg->nr_limiters;
	int ret;

	if (n > KWQ_MAX_LIMITERS || cfg->max_wait_ns > S64_MAX)
		return -EINVAL;
	if (!n) {
		list = kwq_default_limiters;
		n = ARRAY_SIZE(kwq_default_limiters);
	}
	ls->per_key = false;
	for (i = 0; i < n; i++) {
		ret = kwq_limiter_check(&list[i]);
		if (ret)
			return ret;
		ls->l[i].cfg = list[i];
		if (list[i].type == KWQ_LIMITER_BUCKET) {
			ls->l[i].bucket.tokens =
				(s64)list[i].bucket.burst * KWQ_TOKEN_UNIT;
			ls->l[i].bucket.last = now;
		} else {
			ls->per_key = true;
		}
	}
	ls->nr = n;
	ls->max_wait_ns = cfg->max_wait_ns;
	return 0;
}

/* Round to the nearest float64 (53-bit mantissa), ties to even. */
static u64 kwq_round_float64(u64 v)
{
	unsigned int shift;
	u64 mant, rem, half;

	if (fls64(v) <= 53)
		return v;
	shift = fls64(v) - 53;
	mant = v >> shift;
	rem = v & ((1ULL << shift) - 1);
	half = 1ULL << (shift - 1);
	if (rem > half || (rem == half && (mant & 1)))
		mant++;
	/* callers pass v <= S64_MAX, so the result is at most 2^63 */
	return mant << shift;
}

/**
 * kwq_exp_backoff() - client-go ItemExponentialFailureRateLimiter.When()
 * @base_ns: base delay, at most S64_MAX
 * @max_ns: cap, at most S64_MAX
 * @exp: failures before this one
 *
 * client-go computes float64(base) * 2^exp and returns @max_ns when that
 * exceeds MaxInt64, else min(result, @max_ns). Multiplying by a power of
 * two is exact in floating point, so the only rounding is of @base_ns to
 * float64, reproduced here. A product of exactly 2^63 is treated as an
 * overflow (Go would convert it to a negative Duration).
 *
 * Return: the delay in nanoseconds.
 */
u64 kwq_exp_backoff(u64 base_ns, u64 max_ns, u32 exp)
{
	u64 fbase = kwq_round_float64(base_ns);

	if (!fbase)
		return 0;
	if (exp >= 63 || fbase >= (1ULL << (63 - exp)))
		return max_ns;
	return min(fbase << exp, max_ns);
}

/* Tokens the bucket holds at @now, as x/time/rate's advance(). */
static s64 kwq_bucket_advance(const struct kwq_limiter *l, u64 now)
{
	const struct kwq_token_bucket *b = &l->bucket;
	s64 burst = (s64)l->cfg.bucket.burst * KWQ_TOKEN_UNIT;
	u64 qps = l->cfg.bucket.qps_milli;
	u64 last = min(b->last, now);
	u64 elapsed = now - last;
	u64 room;

	if (b->tokens >= burst)
		return burst;
	room = (u64)burst - (u64)b->tokens;
	if (elapsed > div64_u64(room, qps))
		return burst;
	/* The sum lies in [tokens, burst]: wrapping u64 arithmetic is exact. */
	return (s64)((u64)b->tokens + elapsed * qps);
}

/* Reserve one token at @now: the new token count and the delay. */
static u64 kwq_bucket_reserve(const struct kwq_limiter *l, u64 now,
			      s64 *tokens)
{
	s64 t = kwq_bucket_advance(l, now);

	if (t < KWQ_TOKENS_MIN + KWQ_TOKEN_UNIT)
		t = KWQ_TOKENS_MIN;
	else
		t -= KWQ_TOKEN_UNIT;
	*tokens = t;
	if (t >= 0)
		return 0;
	return div64_u64((u64)-t, l->cfg.bucket.qps_milli);
}

/**
 * kwq_limiters_when() - the delay for one more failure of a key
 * @ls: the queue's limiters (its lock held)
 * @failures: the key's failure count before this call
 * @now: clock time
 * @plan: receives the token bucket states to commit if the add lands
 *
 * Changes nothing; kwq_limiters_commit() charges the token buckets.
 *
 * Return: the delay in nanoseconds, capped at max_wait_ns if set.
 */
u64 kwq_limiters_when(const struct kwq_limiters *ls, u32 failures, u64 now,
		      struct kwq_limit_plan *plan)
{
	u64 delay = 0, d;
	u32 i;

	for (i = 0; i < ls->nr; i++) {
		const struct kwq_limiter *l = &ls->l[i];

		switch (l->cfg.type) {
		case KWQ_LIMITER_EXPONENTIAL:
			d = kwq_exp_backoff(l->cfg.exp.base_ns,
					    l->cfg.exp.max_ns, failures);
			break;
		case KWQ_LIMITER_FAST_SLOW:
			if ((u64)failures + 1 <= l->cfg.fast_slow.max_fast)
				d = l->cfg.fast_slow.fast_ns;
			else
				d = l->cfg.fast_slow.slow_ns;
			break;
		default:
			d = kwq_bucket_reserve(l, now, &plan->tokens[i]);
			break;
		}
		delay = max(delay, d);
	}
	if (ls->max_wait_ns && delay > ls->max_wait_ns)
		delay = ls->max_wait_ns;
	return delay;
}

/**
 * kwq_limiters_commit() - charge the token buckets as planned
 * @ls: the queue's limiters (its lock held)
 * @now: the clock time given to kwq_limiters_when()
 * @plan: its plan
 */
void kwq_limiters_commit(struct kwq_limiters *ls, u64 now,
			 const struct kwq_limit_plan *plan)
{
	u32 i;

	for (i = 0; i < ls->nr; i++) {
		struct kwq_limiter *l = &ls->l[i];

		if (l->cfg.type != KWQ_LIMITER_BUCKET)
			continue;
		l->bucket.tokens = plan->tokens[i];
		l->bucket.last = now;
	}
}
