// SPDX-License-Identifier: GPL-2.0
/*
 * The dead set: keys that failed max_retries times (q->dead, oldest
 * failure first, their nodes in state KWQ_DEAD; the state machine in
 * queue.c buries them). kwq_revive() and kwq_purge() of one key, and of
 * all of them in walks of KWQ_WALK_CHUNK keys per hold of q->lock, which
 * guards the set.
 */

#include <linux/kwq.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>

#include "kwq_internal.h"
#include "queue.h"

/* --- the dead set --- */

/* Under q->lock: dead @n back to ready, its failure count reset. */
static int kwq_revive_locked(struct kwq *q, struct kwq_node *n, u64 now)
{
	if (q->shutting_down)
		return -ESHUTDOWN;
	if (q->max_items && q->nr_items >= q->max_items)
		return -ENOSPC;
	kwq_dead_unlink(q, n);
	kwq_fail_clear(q, n);
	q->nr_items++;
	kwq_make_ready(q, n, n->prio, now);
	trace_key_revived(q, n->key, n->key_len, 1, n->prio, 0);
	return 0;
}

static int kwq_purge_locked(struct kwq *q, struct kwq_node *n)
{
	trace_key_purged(q, n->key, n->key_len, n->failures, n->prio, 0);
	kwq_dead_unlink(q, n);
	kwq_node_drop(q, n, NULL);
	return 0;
}

/* Revive (@revive) or purge dead @key: 0, or -ENOENT if it is not dead. */
static int kwq_dead_one(struct kwq *q, const void *key, size_t len,
			bool revive)
{
	struct kwq_node *n;
	unsigned long flags;
	int ret = -ENOENT;

	if (!q || !kwq_key_ok(key, len))
		return -EINVAL;
	n = kwq_lock_lookup(q, key, len, &flags);
	if (n && n->state == KWQ_DEAD)
		ret = revive ? kwq_revive_locked(q, n, kwq_now(q)) :
			       kwq_purge_locked(q, n);
	kwq_unlock(q, flags, revive && !ret);
	return ret;
}

int kwq_revive(struct kwq *q, const void *key, size_t len)
{
	return kwq_dead_one(q, key, len, true);
}
EXPORT_SYMBOL_GPL(kwq_revive);

int kwq_purge(struct kwq *q, const void *key, size_t len)
{
	return kwq_dead_one(q, key, len, false);
}
EXPORT_SYMBOL_GPL(kwq_purge);

/*
 * Revive (@revive) or purge the keys dead when the call began, oldest
 * first, KWQ_WALK_CHUNK per critical section: q->lock is dropped in
 * between (and cond_resched() called if @may_sleep). No cursor is kept:
 * each chunk starts at the head of the dead set, which every key walked
 * leaves. Keys that die while the walk runs join the set at its tail and
 * may be walked once the keys counted at the start are gone (as many as
 * were counted at most, so the walk ends); keys revived, purged or added
 * by others meanwhile are simply no longer there. With @may_sleep a fatal
 * signal ends the walk early (the keys walked stay revived or purged, the
 * rest dead, as when max_items stops a revive). Returns how many; a
 * revive stopped by an error before the first key returns the error.
 */
static long kwq_dead_all(struct kwq *q, bool revive, bool may_sleep)
{
	unsigned long flags, todo;
	unsigned int i, ready;
	struct kwq_node *n;
	long count = 0;
	int ret = 0;

	if (!q)
		return -EINVAL;
	spin_lock_irqsave(&q->lock, flags);
	todo = q->nr_dead;
	for (;;) {
		ready = 0;
		for (i = 0; i < KWQ_WALK_CHUNK && todo && !ret; i++, todo--) {
			n = list_first_entry_or_null(&q->dead, struct kwq_node,
						     link);
			if (!n)
				break;
			if (!revive) {
				kwq_purge_locked(q, n);
			} else {
				ret = kwq_revive_locked(q, n, kwq_now(q));
				ready += !ret;
			}
			count += !ret;
		}
		kwq_unlock(q, flags, ready);
		if (!todo || ret || i < KWQ_WALK_CHUNK)
			break;
		if (may_sleep) {
			if (fatal_signal_pending(current))
				break;
			cond_resched();
		}
		spin_lock_irqsave(&q->lock, flags);
	}
	return count ?: ret;
}

long kwq_revive_all(struct kwq *q)
{
	return kwq_dead_all(q, true, false);
}
EXPORT_SYMBOL_GPL(kwq_revive_all);

long kwq_purge_all(struct kwq *q)
{
	return kwq_dead_all(q, false, false);
}
EXPORT_SYMBOL_GPL(kwq_purge_all);

/* For dev.c: see kwq_internal.h. */
long kwq_revive_all_sleep(struct kwq *q)
{
	return kwq_dead_all(q, true, true);
}

long kwq_purge_all_sleep(struct kwq *q)
{
	return kwq_dead_all(q, false, true);
}
