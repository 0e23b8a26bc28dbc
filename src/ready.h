/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ready keys (ready.c): one FIFO per priority level. A level with
 * keys is in q->levels, an rb_root_cached ordered highest priority
 * first, so a get takes the head of the leftmost level in O(1). Every
 * level but level 0 (inside struct kwq) is also in q->all_levels by
 * priority for as long as a node may become ready at it: it counts the
 * nodes whose ->prio or ->requeue_prio is its priority, in any state,
 * and is freed when that count drops to 0. No later step (a timer, a
 * done, an unget, a revive) has to allocate to make a key ready: it
 * makes a key ready at one of the key's own priorities, whose level the
 * key holds.
 *
 * Owns, in struct kwq, under q->lock: ->levels, ->all_levels,
 * ->nr_levels, ->level0, ->nr_ready, ->ready_epoch; of a READY node,
 * ->fifo and ->ready_epoch; of every node, the level references of
 * ->prio and ->requeue_prio (written only here: kwq_prio_set()). The hot
 * paths' part is inline here; priority 0 costs them no reference.
 */
#ifndef _KWQ_READY_H
#define _KWQ_READY_H

#include <linux/bug.h>
#include <linux/list.h>
#include <linux/rbtree.h>

#include "layout.h"

/*
 * The level of @prio: the queue's own for 0, else from q->all_levels
 * (NULL if no node or add holds one).
 */
/*
 * Under q->lock, after ->nr_ready changed: the copy in the queue's ring
 * status page, if it has one (the process reads it without a system
 * call).
 */
static __always_inline void kwq_ready_mirror(struct kwq *q)
{
	WRITE_ONCE(*q->ready_mirror, q->nr_ready);
}

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
 * A reference to the level of @prio, made if it does not exist (charged
 * to the queue's budget and memcg as a node is): only adds bring a new
 * priority into the queue, and they take this first, so nothing else
 * ever allocates a level. The level or ERR_PTR(-ENOMEM / -EDQUOT).
 */
struct kwq_level *kwq_level_get(struct kwq *q, int prio);
/* Drop a reference; the last one frees the level. */
void kwq_level_put(struct kwq *q, struct kwq_level *l);

/* An add's hold on the level of its priority (NULL: priority 0). */
static inline struct kwq_level *kwq_level_prepare(struct kwq *q, int prio)
{
	return likely(!prio) ? NULL : kwq_level_get(q, prio);
}

static inline void kwq_level_unprepare(struct kwq *q, struct kwq_level *l)
{
	if (unlikely(l))
		kwq_level_put(q, l);
}

/* Move @field's reference from the level of its priority to @l's. */
void kwq_prio_move(struct kwq *q, int *field, struct kwq_level *l);
/* The same to the level of @prio. */
void kwq_prio_change(struct kwq *q, int *field, int prio);

/*
 * Set @field, a node's ->prio or ->requeue_prio, to @prio: the node
 * holds the level of its new priority and lets go of the old one. The
 * level of @prio exists: an add holds it (kwq_level_prepare()), or it is
 * another priority of the same node.
 */
static __always_inline void kwq_prio_set(struct kwq *q, int *field, int prio)
{
	if (likely(*field == prio))
		return;
	kwq_prio_change(q, field, prio);
}

/* Let go of the levels of @n, which leaves the hash. */
void kwq_node_levels_put(struct kwq *q, struct kwq_node *n);

static __always_inline void kwq_node_levels_drop(struct kwq *q,
						 struct kwq_node *n)
{
	if (unlikely(n->prio | n->requeue_prio))
		kwq_node_levels_put(q, n);
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

	/* An add holds it, or another priority of @n does. */
	if (WARN_ON_ONCE(!l))
		l = &q->level0;
	/* @prio, not l->prio: a register, no load (0 on the hot paths). */
	if (unlikely(n->prio != prio))
		kwq_prio_move(q, &n->prio, l);
	n->ready_epoch = ++q->ready_epoch;
	/* The key, ->prio and ->ready_epoch before the state. */
	smp_store_release(&n->state, KWQ_READY);
	kwq_handle_ready(n, prio);
	q->nr_ready++;
	kwq_ready_mirror(q);
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
	/* Before a get's full barrier (layout.h, "Key handles"). */
	kwq_handle_unready(n);
	list_del(&n->fifo);
	if (!--l->len)
		rb_erase_cached(&l->ready_rb, &q->levels);
	q->nr_ready--;
	kwq_ready_mirror(q);
}

/* Remove or priority raise of a ready key: O(log levels). */
void kwq_ready_unlink(struct kwq *q, struct kwq_node *n);
void kwq_levels_init(struct kwq *q);
/* Every level's memory, once the queue is unreachable (no put needed). */
void kwq_levels_free(struct kwq *q);

#endif /* _KWQ_READY_H */
