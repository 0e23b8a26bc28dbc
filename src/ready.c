// SPDX-License-Identifier: GPL-2.0
/*
 * The ready keys: one FIFO per priority level (ready.h says what it owns
 * and how a get finds the highest level). This file has what is not on
 * the hot path: a new level's allocation, a ready key's removal, and the
 * levels' start and end. Everything runs under q->lock but
 * kwq_levels_init() (before the queue is visible) and kwq_levels_free()
 * (once it is unreachable).
 */

#include <linux/slab.h>

#include "ready.h"

int kwq_level_add(struct kwq *q, int prio)
{
	struct rb_node **link = &q->all_levels.rb_node, *parent = NULL;
	struct kwq_level *l;

	while (*link) {
		l = rb_entry(*link, struct kwq_level, all_rb);
		if (prio == l->prio)
			return 0;
		parent = *link;
		link = prio > l->prio ? &parent->rb_left : &parent->rb_right;
	}
	if (!kwq_charge(q, kwq_alloc_bytes(sizeof(*l))))
		return -EDQUOT;
	/* Under q->lock: see kwq_node_insert() for the flags. */
	l = kmalloc(sizeof(*l), GFP_NOWAIT | __GFP_NOWARN | q->gfp_account);
	if (!l) {
		kwq_uncharge(q, kwq_alloc_bytes(sizeof(*l)));
		return -ENOMEM;
	}
	INIT_LIST_HEAD(&l->fifo);
	RB_CLEAR_NODE(&l->ready_rb);
	l->len = 0;
	l->prio = prio;
	rb_link_node(&l->all_rb, parent, link);
	rb_insert_color(&l->all_rb, &q->all_levels);
	return 0;
}

void kwq_ready_push(struct kwq *q, struct kwq_node *n, int prio)
{
	kwq_ready_insert(q, n, prio, false);
}

void kwq_ready_unlink(struct kwq *q, struct kwq_node *n)
{
	struct kwq_level *l = kwq_level_find(q, n->prio);

	if (!WARN_ON_ONCE(!l))
		kwq_level_unlink(q, l, n);
}

void kwq_levels_init(struct kwq *q)
{
	q->levels = RB_ROOT_CACHED;
	q->all_levels = RB_ROOT;
	INIT_LIST_HEAD(&q->level0.fifo);
	RB_CLEAR_NODE(&q->level0.ready_rb);
}

void kwq_levels_free(struct kwq *q)
{
	struct rb_node *rb;

	while ((rb = rb_first(&q->all_levels))) {
		rb_erase(rb, &q->all_levels);
		kfree(rb_entry(rb, struct kwq_level, all_rb));
	}
}
