/* SPDX-License-Identifier: GPL-2.0 OR LGPL-2.1-or-later */
/*
 * A key's line, once: what follows the key in the debugfs keys file
 * (src/metrics.c) and in kwqctl inspect, both of which compile this
 * header, from a struct kwq_info_rec (KWQ_IOC_INSPECT's record):
 *
 *   STATE prio=N failures=N[ since=S][ due=S][ timeout=S][ holder=PID]
 *   [ dirty][ delayed][ dying]
 *
 * times in seconds to the millisecond ("1.250s"). Neither kernel API nor
 * ABI, as include/kwq/metrics.h, whose printer type it uses.
 */
#ifndef _KWQ_KEYS_LINE_H
#define _KWQ_KEYS_LINE_H

#include "metrics.h"

/* The name of state KWQ_KEY_*, NULL for another number. */
static inline const char *kwq_key_state_name(__u32 state)
{
	switch (state) {
	case KWQ_KEY_READY:
		return "ready";
	case KWQ_KEY_WAITING:
		return "waiting";
	case KWQ_KEY_PROCESSING:
		return "processing";
	case KWQ_KEY_DEAD:
		return "dead";
	case KWQ_KEY_IDLE:
		return "idle";
	default:
		return NULL;
	}
}

/* " NAME=S.mmms": @ns in seconds, to the millisecond. */
static inline void
kwq_key_seconds(KWQ_METRICS_PR void (*pr)(void *ctx, const char *fmt, ...),
		void *ctx, const char *name, __u64 ns)
{
	__u32 rem;
	__u64 sec = kwq_metrics_split(ns, &rem);

	pr(ctx, " %s=%llu.%03us", name, (unsigned long long)sec,
	   rem / 1000000U);
}

/* What follows the key in its line, through @pr and @ctx, with '\n'. */
static inline void
kwq_key_render(KWQ_METRICS_PR void (*pr)(void *ctx, const char *fmt, ...),
	       void *ctx, const struct kwq_info_rec *r)
{
	const char *state = kwq_key_state_name(r->state);

	pr(ctx, " %s prio=%d failures=%u", state ? state : "?", r->priority,
	   r->failures);
	if (r->since_ns)
		kwq_key_seconds(pr, ctx, "since", r->since_ns);
	if (r->flags & KWQ_KEY_DUE)
		kwq_key_seconds(pr, ctx, "due", r->due_ns);
	if (r->timeout_ns)
		kwq_key_seconds(pr, ctx, "timeout", r->timeout_ns);
	if (r->holder)
		pr(ctx, " holder=%u", r->holder);
	if (r->flags & KWQ_KEY_DIRTY)
		pr(ctx, " dirty");
	if (r->flags & KWQ_KEY_DELAYED)
		pr(ctx, " delayed");
	if (r->flags & KWQ_KEY_DYING)
		pr(ctx, " dying");
	pr(ctx, "\n");
}

#endif /* _KWQ_KEYS_LINE_H */
