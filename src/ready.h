/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ready keys (ready.c): one FIFO per priority level. A level with
 * keys is in q->levels, an rb_root_cached ordered highest priority
 * first, so a get takes the head of the leftmost level in O(1). Every
 * level but level 0 (inside struct kwq) is also in q->all_levels by
 * priority, from the first add of its priority until the queue is freed:
 * no later step (a timer, a done, an unget) has to allocate to make a
 * key ready.
 *
 * Owns, in struct kwq, under q->lock: ->levels, ->all_levels, ->level0,
 * ->nr_ready, ->ready_epoch; and, of a READY node, ->fifo and
 * ->ready_epoch. The hot paths' part is inline here.
 */
#ifndef _KWQ_READY_H
#define _KWQ_READY_H

#include <linux/bug.h>
#include <linux/list.h>
#include <linux/rbtree.h>

#include "queue.h"

/*
 * The level of @prio: the queue's own for 0, else from q->all_levels
 * (NULL if @prio was never used).
 */
static inline struct kwq_level *kwq_level_find(struct kwq *q, int prio)
{
	struct rb_node *rb;
	struct kwq_level *l;

	if (likely(!prio))
		return &q->level0;
	for (rb = q->all_levels.rb_node; rb;) {
		l = rb_entry(rb, struct kwq_level, all_rb);
		if (prio == l->prio)
			return l;
		rb = prio > l->prio ? rb->rb_left : rb->rb_right;
	}
	return NULL;
}

/*
 * Make sure the level of @prio exists, so that any node may later be made
 * ready at @prio without allocating: levels are kept until the queue is
 * freed. Only adds bring a new priority into the queue, and they call
 * this first. 0 or -ENOMEM / -EDQUOT.
 */
int kwq_level_add(struct kwq *q, int prio);

static inline int kwq_level_prepare(struct kwq *q, int prio)
{
	return likely(!prio) ? 0 : kwq_level_add(q, prio);
}

static inline bool kwq_level_higher(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct kwq_level, ready_rb)->prio >
	       rb_entry(b, struct kwq_level, ready_rb)->prio;
}

/* Queue @n at the tail (@head: the head) of priority level @prio. */
static __always_inline void kwq_ready_insert(struct kwq *q,
					     struct kwq_node *n, int prio,
					     bool head)
{
	struct kwq_level *l = kwq_level_find(q, prio);

	/* kwq_level_prepare() made it when @prio came in. */
	if (WARN_ON_ONCE(!l))
		l = &q->level0;
	WRITE_ONCE(n->prio, l->prio);
	n->ready_epoch = ++q->ready_epoch;
	/* The key, ->prio and ->ready_epoch before the state. */
	smp_store_release(&n->state, KWQ_READY);
	q->nr_ready++;
	if (head)
		list_add(&n->fifo, &l->fifo);
	else
		list_add_tail(&n->fifo, &l->fifo);
	if (!l->len++)
		rb_add_cached(&l->ready_rb, &q->levels, kwq_level_higher);
}

/* Queue @n at the tail of priority level @prio. */
void kwq_ready_push(struct kwq *q, struct kwq_node *n, int prio);

/* Take @n, of level @l, out of its FIFO. */
static __always_inline void kwq_level_unlink(struct kwq *q,
					     struct kwq_level *l,
					     struct kwq_node *n)
{
	list_del(&n->fifo);
	if (!--l->len)
		rb_erase_cached(&l->ready_rb, &q->levels);
	q->nr_ready--;
}

/* Remove or priority raise of a ready key: O(log levels). */
void kwq_ready_unlink(struct kwq *q, struct kwq_node *n);
void kwq_levels_init(struct kwq *q);
/* Every level's memory, once the queue is unreachable. */
void kwq_levels_free(struct kwq *q);

#endif /* _KWQ_READY_H */
