/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The delay index (delay.c): the waiting keys of a queue, by deadline,
 * in the delay tree and the delay wheel, and the queue's clock timer.
 * Everything here runs under q->lock but kwq_delay_init() (before the
 * queue is visible) and kwq_delay_free() (once it is unreachable).
 */
#ifndef _KWQ_DELAY_H
#define _KWQ_DELAY_H

#include <linux/overflow.h>

#include "layout.h"

#define KWQ_NO_DEADLINE		U64_MAX
/* Keys cascaded or made ready per critical section, and per expiry. */
#define KWQ_DELAY_CHUNK		64
#define KWQ_EXPIRE_BUDGET	1024

/*
 * Make @n WAITING until @deadline, then ready at its ->prio (set by the
 * caller: ready.h's kwq_prio_set()).
 */
void kwq_wait_insert(struct kwq *q, struct kwq_node *n, u64 deadline, u64 now);
/* Take WAITING @n out of the delay index (its state is the caller's). */
void kwq_wait_unlink(struct kwq *q, struct kwq_node *n);
/* Any waiting key (shutdown drops them all), NULL if none. */
struct kwq_node *kwq_wait_any(struct kwq *q);
/* Tree keys due before this may be made ready (no wheel key precedes). */
u64 kwq_wheel_floor(const struct kwq *q);
/*
 * Cascade up to @max keys out of the wheel slots due by @now into finer
 * slots or the tree; returns how many moved.
 */
unsigned int kwq_wheel_cascade(struct kwq *q, u64 now, unsigned int max);
/*
 * Arm the clock at the earliest of the tree's first deadline, the wheel's
 * first cascade and the first processing deadline (q->due), not before
 * @not_before; touched only on change.
 */
void kwq_timer_set(struct kwq *q, u64 not_before);
void kwq_timer_update(struct kwq *q);
void kwq_delay_init(struct kwq *q);
void kwq_delay_free(struct kwq *q);

/* @now + @after_ns, short of KWQ_NO_DEADLINE. */
static inline u64 kwq_deadline(u64 now, s64 after_ns)
{
	u64 deadline;

	if (check_add_overflow(now, (u64)after_ns, &deadline) ||
	    deadline >= KWQ_NO_DEADLINE)
		return KWQ_NO_DEADLINE - 1;
	return deadline;
}

#endif /* _KWQ_DELAY_H */
