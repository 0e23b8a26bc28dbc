// SPDX-License-Identifier: GPL-2.0
/*
 * The expiry of a queue's clock (kwq_clock_expired(), which the clock's
 * timer calls through the pointer kwq_core_init() handed clock.c):
 * revoke the leases past their processing deadline (queue.c,
 * kwq_time_out()), cascade the delay wheel's due slots into the tree and
 * make due keys ready, in critical sections of q->lock of at most
 * KWQ_DELAY_CHUNK keys, then re-arm the clock.
 */

#include <linux/kwq.h>
#include <linux/minmax.h>
#include <linux/module.h>

#include "queue.h"
#include "delay.h"

/* Make up to @max tree keys due by @now ready; returns how many. */
static unsigned int kwq_fire(struct kwq *q, u64 now, unsigned int max)
{
	u64 floor = kwq_wheel_floor(q);
	unsigned int ready = 0;
	struct kwq_node *n;
	struct rb_node *rb;

	while (ready < max && (rb = rb_first_cached(&q->delayed))) {
		n = rb_entry(rb, struct kwq_node, delay_rb);
		/* Due, and no key in the wheel can come before it. */
		if (n->deadline > now || n->deadline >= floor)
			break;
		kwq_wait_unlink(q, n);
		trace_key_due(q, n->key, n->key_len, now - n->deadline,
			      n->prio, 0);
		n->deadline = 0;
		kwq_make_ready(q, n, n->prio, now);
		ready++;
	}
	return ready;
}

/*
 * Revoke the leases whose deadline is @now or before, at most @max;
 * returns how many, *@ready counting the keys made ready.
 */
static unsigned int kwq_expire_due(struct kwq *q, u64 now, unsigned int max,
				   unsigned int *ready)
{
	unsigned int nr = 0;
	struct kwq_due *d;
	struct rb_node *rb;

	while (nr < max && (rb = rb_first_cached(&q->due))) {
		d = rb_entry(rb, struct kwq_due, rb);
		if (d->due_ns > now)
			break;
		*ready += kwq_time_out(q, d->node, now);
		nr++;
	}
	return nr;
}

/* One critical section of kwq_clock_expired(); false once it is done. */
static bool kwq_expire_chunk(struct kwq *q, unsigned int *budget, bool first)
{
	unsigned int moved, fired, ready = 0;
	unsigned long flags;
	bool more = false;
	u64 now;

	spin_lock_irqsave(&q->lock, flags);
	now = kwq_now(q);
	if (first) {
		/* Whatever was armed has fired. */
		q->timer_deadline = KWQ_NO_DEADLINE;
		/* Also after shutdown: a drain waits for processing keys. */
		if (kwq_expire_due(q, now, KWQ_DELAY_CHUNK, &ready) ==
		    KWQ_DELAY_CHUNK) {
			/* Maybe more: in a later call. */
			kwq_timer_set(q, now);
			goto out;
		}
	}
	/* A queue shutting down drops its waiting keys: none becomes ready. */
	if (!q->shutting_down) {
		moved = kwq_wheel_cascade(q, now, KWQ_DELAY_CHUNK);
		fired = kwq_fire(q, now, KWQ_DELAY_CHUNK - moved);
		ready += fired;
		*budget -= min(*budget, moved + fired);
		more = moved + fired == KWQ_DELAY_CHUNK && *budget;
		if (!more)
			kwq_timer_set(q, *budget ? 0 : now);
	} else {
		/* Shutting down: the timer still serves processing deadlines. */
		kwq_timer_update(q);
	}
out:
	kwq_unlock(q, flags, ready);
	return more;
}

/*
 * Revoke the leases past their deadline, then cascade due wheel slots and
 * make due keys ready, KWQ_DELAY_CHUNK keys per critical section and
 * KWQ_EXPIRE_BUDGET per call: with more due, the clock is re-armed at
 * the current time, so the rest runs in a later call (for the hrtimer, a
 * later softirq pass) instead of this one.
 */
void kwq_clock_expired(struct kwq *q)
{
	unsigned int budget = KWQ_EXPIRE_BUDGET;
	bool first = true;

	while (kwq_expire_chunk(q, &budget, first))
		first = false;
}
EXPORT_SYMBOL_GPL(kwq_clock_expired);
