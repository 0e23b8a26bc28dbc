// SPDX-License-Identifier: GPL-2.0
/*
 * The ready keys: one FIFO per priority level (ready.h says what it owns
 * and how a get finds the highest level). This file has what is not on
 * the hot path: a level's allocation and freeing, the moves of a node's
 * level references, a ready key's removal, and the levels' start and
 * end. Everything runs under q->lock but
 * kwq_levels_init() (before the queue is visible) and kwq_levels_free()
 * (once it is unreachable).
 */

#include <linux/err.h>
#include <linux/slab.h>

#include "ready.h"

struct kwq_level *kwq_level_get(struct kwq *q, int prio)
{
	struct rb_node **link = &q->all_levels.rb_node, *parent = NULL;
	struct kwq_level *l;

	while (*link) {
		l = rb_entry(*link, struct kwq_level, all_rb);
		if (prio == l->prio) {
			l->refs++;
			return l;
		}
		parent = *link;
		link = prio > l->prio ? &parent->rb_left : &parent->rb_right;
	}
	if (!kwq_charge(q, kwq_alloc_bytes(sizeof(*l))))
		return ERR_PTR(-EDQUOT);
	/* Under q->lock: see kwq_node_insert() for the flags. */
	l = kmalloc(sizeof(*l), GFP_NOWAIT | __GFP_NOWARN | q->gfp_account);
	if (!l) {
		kwq_uncharge(q, kwq_alloc_bytes(sizeof(*l)));
		return ERR_PTR(-ENOMEM);
	}
	INIT_LIST_HEAD(&l->fifo);
	RB_CLEAR_NODE(&l->ready_rb);
	l->len = 0;
	l->refs = 1;
	l->prio = prio;
	rb_link_node(&l->all_rb, parent, link);
	rb_insert_color(&l->all_rb, &q->all_levels);
	/*
	 * The bound that freeing keeps: two a node (its priority and its
	 * requeue's), and this add's, whose node may be new.
	 */
	WARN_ON_ONCE(++q->nr_levels > 2 * q->nr_nodes + 1);
	return l;
}

void kwq_level_put(struct kwq *q, struct kwq_level *l)
{
	if (WARN_ON_ONCE(l == &q->level0 || !l->refs) || --l->refs)
		return;
	/* Its ready keys hold it: it has none. */
	WARN_ON_ONCE(l->len);
	rb_erase(&l->all_rb, &q->all_levels);
	q->nr_levels--;
	kfree(l);
	kwq_uncharge(q, kwq_alloc_bytes(sizeof(*l)));
}

void kwq_prio_move(struct kwq *q, int *field, struct kwq_level *l)
{
	int old = *field;

	/* Not held by anything: level 0 rather than a level freed under us. */
	if (WARN_ON_ONCE(!l))
		l = &q->level0;
	if (l->prio)
		l->refs++;
	/* kwq_seen_lockless() reads both fields without the lock. */
	WRITE_ONCE(*field, l->prio);
	if (!old)
		return;
	/* The node held it: it is there. */
	l = kwq_level_find(q, old);
	if (!WARN_ON_ONCE(!l))
		kwq_level_put(q, l);
}

void kwq_prio_change(struct kwq *q, int *field, int prio)
{
	kwq_prio_move(q, field, kwq_level_find(q, prio));
}

void kwq_node_levels_put(struct kwq *q, struct kwq_node *n)
{
	kwq_prio_set(q, &n->prio, 0);
	kwq_prio_set(q, &n->requeue_prio, 0);
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
