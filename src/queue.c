// SPDX-License-Identifier: GPL-2.0
/*
 * kwq queue core: client-go Queue, DelayingQueue and RateLimitingQueue
 * semantics for keys that are byte strings.
 *
 * This file is the state machine of a key and its adds: the node state
 * transitions, kwq_add() and its variants (one key, by handle, in
 * batches), forget, remove and what a queue holds (kwq_len(),
 * kwq_get_stats()), and the clock's expiry (a lease revoked at its
 * deadline is an add and a done). The rest of the core is a file per
 * concept on the same state, under the same lock: lease.c (get, done,
 * touch, release of an owner's leases), deadline.c (processing
 * deadlines, records of revoked leases), dead.c (the dead set),
 * handle.c (key handles), lifetime.c (shutdown and drain, creation,
 * references, freeing). queue.h has the steps they share; layout.h the
 * structures every component reads. Sections, all under q->lock:
 *  - node state transitions;
 *  - adds (kwq_add_locked(), the lockless look before it, the exported
 *    adds);
 *  - adds by key handle, applied (kwq_refs_apply());
 *  - batches of adds;
 *  - forget, remove and what a queue holds;
 *  - the clock's expiry (kwq_clock_expired()).
 *
 * The rest of this comment is about the whole core.
 *
 * Data structures (all per queue, struct kwq in layout.h):
 *  - kwq_get() hands out leases, struct kwq_item, owned by the caller:
 *    key, length, priority and (private) node pointer, hash and lease
 *    number. kwq_done() finds the node through its hash bucket by pointer
 *    equality and checks the lease number, so a stale lease never
 *    touches freed memory and gets -ESTALE.
 *  - the dedup table (table.c): a hash set of nodes (struct kwq_node),
 *    one per key, hashed with hsiphash under a per-queue random key. A
 *    node's state says where the
 *    key is: ready, waiting, processing (+ a pending requeue) or idle
 *    (nothing queued, only the rate limiter's failure count kept).
 *  - ready keys: one FIFO (struct kwq_level) per priority level. A level
 *    with keys is in the ready tree, an rb_root_cached ordered highest
 *    priority first: get() takes the head of the leftmost level in O(1).
 *    Every level is also in q->all_levels by priority, where add() finds
 *    it in O(log levels). Priority 0 has the level inside struct kwq; the
 *    others are allocated by the first add that uses them and freed when
 *    no node holds them any more: a node holds the levels of its ->prio
 *    and ->requeue_prio (ready.h), so no later step (a timer, a done, an
 *    unget, a revive) has to allocate to make a key ready.
 *  - waiting keys: an rb_root_cached ordered by (deadline, sequence) for
 *    what is due soon, and, once the tree holds more than
 *    KWQ_WHEEL_MIN_TREE keys, a delay wheel for the rest: levels of
 *    unordered slots (an hlist head and a count each, 8 KiB per queue,
 *    allocated by a work item the first time) that cascade into the tree
 *    before they are due (delay.c). One clock timer is armed
 *    at the earlier of the tree's first deadline and the first cascade
 *    due, re-armed only when that time changes.
 *  - processing keys: a list in start order, so kwq_release_owner() can
 *    find an owner's; the deadlines of those with one in the due tree,
 *    an rb_root_cached of struct kwq_due by (deadline, lease), whose
 *    first deadline the clock timer also covers (kwq_timer_set()). A
 *    deadline is a small object apart from the node, so that the keys of
 *    queues without deadlines do not pay for it; the queue keeps the
 *    freed ones for its next gets, and a get that can get none takes
 *    nothing (-ENOMEM). A key
 *    processing at its deadline is requeued as a failure; an owner whose
 *    lease was so revoked gets -ESTALE from a done or touch by key while
 *    a small record of it lasts (q->tombs).
 *  - idle failure records: an LRU list, bounded by max_failure_records.
 *
 * Locking:
 *  - registry.c's kwq_registry_lock (mutex), for the names of kernel
 *    queues, is never taken under q->lock; this file does not take it.
 *  - q->lock (spinlock_t, irqsave) protects everything in struct kwq that
 *    is not constant after creation: the hash table, the trees, the delay
 *    wheel, the lists, counters and limiter state. Any context that may
 *    take a spinlock_t may take it. Nothing sleeps under it; nodes are
 *    allocated under it with GFP_NOWAIT (what is charged to whom:
 *    Documentation/semantics.rst, "Contexts and memory").
 *  - The clock's arm/cancel are called under q->lock; the expiry path
 *    (kwq_clock_expired) takes q->lock itself. The real clock's hrtimer
 *    is only waited for (hrtimer_cancel) without q->lock held.
 *  - Long walks drop q->lock every so many keys instead of holding it:
 *    the hash growth every KWQ_REHASH_CHUNK buckets, the expiry every
 *    KWQ_DELAY_CHUNK keys cascaded or made ready (and it stops after
 *    KWQ_EXPIRE_BUDGET, re-arming the clock for the rest), and every
 *    KWQ_WALK_CHUNK keys: shutdown's waiting keys dropped (the expiry
 *    leaves a queue that is shutting down alone meanwhile), a batch get,
 *    the release of an owner's leases (a mark in the processing list
 *    keeps its place) and the dead set's revive and purge of all. Those
 *    called where sleeping is allowed also call cond_resched() between
 *    chunks (the *_sleep() variants for dev.c, kwq_shutdown_drain(),
 *    kwq_destroy()); what each walk promises about keys that change
 *    while q->lock is dropped is in its comment and in
 *    Documentation/semantics.rst, "Walks of the whole queue".
 *  - Wait queues are woken after q->lock is dropped.
 *
 * Lifetime: a queue is reference counted. kwq_create() returns the
 * creator's reference, kwq_find() and kwq_get_ref() take more, a blocked
 * kwq_get() or kwq_shutdown_drain() holds one while it sleeps.
 * kwq_destroy() (registry.c) unregisters the name and unpublishes the
 * queue; kwq_retire() then shuts it down, stops its timer and drops the
 * creator's reference.
 * Freeing waits for the timer and the resize and wheel work, so it needs
 * process context: the last kwq_put() (any context) hands the queue to
 * kwq_free_work; kwq_destroy() and kwq_put_sync(), which may sleep, free
 * it at once.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/atomic.h>
#include <linux/ctype.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/kwq.h>
#include <linux/llist.h>
#include <linux/memcontrol.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "compat.h"
#include "kwq_internal.h"
#include "queue.h"
#include "delay.h"

#define CREATE_TRACE_POINTS
#include "kwq_trace.h"

#ifdef CONFIG_TRACEPOINTS
/* kwq_test.ko's dead set cases attach a probe to it. */
EXPORT_SYMBOL_IF_KUNIT(__tracepoint_key_purged);
#endif

/* Hash @key, take q->lock and find the key's node (NULL if none). */
struct kwq_node *kwq_lock_lookup(struct kwq *q, const void *key,
				 size_t len, unsigned long *flags)
	__acquires(&q->lock)
{
	u32 hash = kwq_hash(q, key, len);

	spin_lock_irqsave(&q->lock, *flags);
	kwq_refs_splice(q);
	return kwq_lookup(q, key, len, hash);
}

static void kwq_fail_inc(struct kwq *q, struct kwq_node *n)
{
	/* A dead set counts failures even without a per-key limiter. */
	if (!q->limiters.per_key && !q->max_retries)
		return;
	if (!n->failures)
		q->nr_failure_records++;
	if (n->failures < U32_MAX)
		n->failures++;
}

void kwq_fail_clear(struct kwq *q, struct kwq_node *n)
{
	if (n->failures) {
		q->nr_failure_records--;
		n->failures = 0;
	}
}

/* --- node state transitions (all under q->lock) --- */

/*
 * @n, pinned by a key handle, would leave the hash: it stays, IDLE, in no
 * list, without failure record, priorities or deadline, until its last
 * handle goes (kwq_key_put()).
 */
noinline void kwq_node_keep(struct kwq *q, struct kwq_node *n)
{
	WRITE_ONCE(n->state, KWQ_IDLE);
	kwq_handle_unready(n);
	kwq_prio_set(q, &n->prio, 0);
	kwq_prio_set(q, &n->requeue_prio, 0);
	kwq_fail_clear(q, n);
	n->deadline = 0;
	INIT_LIST_HEAD(&n->link);
}

void kwq_dead_unlink(struct kwq *q, struct kwq_node *n)
{
	list_del(&n->link);
	q->nr_dead--;
}

/*
 * @n, neither queued nor processing, joins the dead set as its newest
 * member, having last failed at @failed_ns; the oldest member is dropped
 * beyond ->max_dead. Kept in the hash (and charged) like any key.
 */
static void kwq_bury(struct kwq *q, struct kwq_node *n, u64 failed_ns)
{
	struct kwq_node *old;

	WRITE_ONCE(n->state, KWQ_DEAD);
	n->deadline = 0;
	n->owner = NULL;
	n->start_ns = failed_ns;
	list_add_tail(&n->link, &q->dead);
	q->nr_dead++;
	q->dead_total++;
	trace_key_died(q, n->key, n->key_len, n->failures, n->prio, 0);
	if (q->nr_dead > q->max_dead) {
		old = list_first_entry(&q->dead, struct kwq_node, link);
		/* Purged, as kwq_purge() would: ret 1 says by the bound. */
		trace_key_purged(q, old->key, old->key_len, old->failures,
				 old->prio, 1);
		kwq_dead_unlink(q, old);
		kwq_node_drop(q, old, NULL);
		q->dead_dropped_total++;
	}
}

/*
 * Processing @n, out of the processing list, was to die at its done
 * (KWQ_REQUEUE_DEAD): bury it, and say so; else leave it alone.
 */
bool kwq_bury_dying(struct kwq *q, struct kwq_node *n)
{
	if (n->requeue != KWQ_REQUEUE_DEAD)
		return false;
	kwq_set_requeue(q, n, KWQ_REQUEUE_NONE, 0);
	q->nr_items--;
	kwq_bury(q, n, kwq_node_dirty_ns(n));
	return true;
}

/*
 * --- adds ---
 *
 * Under q->lock: kwq_add_locked() moves a key by the rules of client-go's
 * Add, AddAfter and AddRateLimited; before taking the lock, an add looks
 * for its key locklessly (queue.h, kwq_seen_lockless()), and a key
 * already ready costs no lock.
 */

/*
 * Whether the deadline @new of a delayed add replaces the key's @old one
 * (not 0), by @after (KWQ_AFTER_*): by default the earlier wins.
 */
static inline bool kwq_deadline_wins(u64 old, u64 new, u32 after)
{
	if (likely(!after))
		return new < old;
	return after == KWQ_AFTER_REPLACE ? new != old : new > old;
}

/* Valid KWQ_AFTER_* @flags for a delay of @after_ns (no other bit set). */
static bool kwq_after_flags_ok(u32 flags, s64 after_ns)
{
	return !flags || ((flags == KWQ_AFTER_REPLACE ||
			   flags == KWQ_AFTER_LATER) && after_ns > 0);
}

/*
 * Add an existing queued key again. @deadline 0 means now; @after says
 * which deadline wins (kwq_deadline_wins()). Returns whether the add
 * landed (changed when or how the key runs); sets *wake when the key
 * became ready.
 */
static bool kwq_readd(struct kwq *q, struct kwq_node *n, u64 deadline,
		      u32 after, int prio, u64 now, bool *wake)
{
	bool changed = false;

	switch (n->state) {
	case KWQ_READY:
		if (deadline) {
			/* Remembered for after its run; the earliest wins. */
			if (n->deadline &&
			    !kwq_deadline_wins(n->deadline, deadline, after))
				return false;
			n->deadline = deadline;
			return true;
		}
		if (prio <= n->prio)
			return false;
		/* Raise the priority: tail of the higher level. */
		kwq_ready_unlink(q, n);
		kwq_ready_push(q, n, prio);
		return true;
	case KWQ_WAITING:
		prio = max(prio, n->prio);
		if (!deadline) {
			/* Ready now, once (not also at the old deadline). */
			kwq_wait_unlink(q, n);
			n->deadline = 0;
			kwq_make_ready(q, n, prio, now);
			*wake = true;
			return true;
		}
		changed = prio > n->prio;
		kwq_prio_set(q, &n->prio, prio);
		if (kwq_deadline_wins(n->deadline, deadline, after)) {
			kwq_wait_unlink(q, n);
			kwq_wait_insert(q, n, deadline, now);
			return true;
		}
		return changed;
	case KWQ_PROCESSING:
		if (n->requeue == KWQ_REQUEUE_NONE ||
		    n->requeue == KWQ_REQUEUE_DEAD) {
			/* An add after the death revives: the count starts over. */
			if (n->requeue == KWQ_REQUEUE_DEAD)
				kwq_fail_clear(q, n);
			kwq_set_requeue(q, n, deadline ? KWQ_REQUEUE_DELAYED :
							 KWQ_REQUEUE_READY, now);
			n->deadline = deadline;
			kwq_prio_set(q, &n->requeue_prio, prio);
			return true;
		}
		if (deadline) {
			/* Dirty or delayed: remember the earliest deadline. */
			if (!n->deadline ||
			    kwq_deadline_wins(n->deadline, deadline, after)) {
				n->deadline = deadline;
				changed = true;
			}
		} else if (n->requeue == KWQ_REQUEUE_DELAYED) {
			/* Dirty now; the deadline stays remembered. */
			kwq_set_requeue(q, n, KWQ_REQUEUE_READY, now);
			changed = true;
		}
		/* A delayed add does not raise the priority of a dirty key. */
		if (!(deadline && n->requeue == KWQ_REQUEUE_READY) &&
		    prio > n->requeue_prio) {
			kwq_prio_set(q, &n->requeue_prio, prio);
			changed = true;
		}
		return changed;
	default:
		WARN_ON_ONCE(1);
		return false;
	}
}

/*
 * Under q->lock: @n failed once more with max_retries used up. A queued
 * key leaves its queue for the dead set now, a processing one at its
 * done (an add before that revives it); a dead one stays dead, as its
 * newest member.
 */
static void kwq_kill(struct kwq *q, struct kwq_node *n, u64 now)
{
	switch (n->state) {
	case KWQ_READY:
		kwq_ready_unlink(q, n);
		q->nr_items--;
		break;
	case KWQ_WAITING:
		kwq_wait_unlink(q, n);
		q->nr_items--;
		kwq_timer_update(q);
		break;
	case KWQ_PROCESSING:
		kwq_set_requeue(q, n, KWQ_REQUEUE_DEAD, now);
		n->deadline = 0;
		/* The time of the failure, until the done */
		kwq_node_set_dirty_ns(n, now);
		return;
	case KWQ_DEAD:
		list_move_tail(&n->link, &q->dead);
		n->start_ns = now;
		return;
	default:
		kwq_idle_unlink(q, n);
		break;
	}
	kwq_bury(q, n, now);
}

/* A plain add: no rate limit, no delay (an add that may change nothing). */
static inline bool kwq_add_plain(bool limited, s64 after_ns)
{
	return !limited && after_ns <= 0;
}

/* One add, under q->lock (see kwq_add_common() for the arguments). */
struct kwq_add_args {
	s64 after_ns;
	u32 after;			/* KWQ_AFTER_*, valid for after_ns */
	int prio;
	bool limited;
	bool now_read;			/* ->now is this critical section's */
	u64 now;
	struct kwq_node *spare;		/* preallocated node, or NULL */
	unsigned int ready;		/* out: keys made ready */
};

/*
 * Inlined into each caller: the exported adds pass constants for what
 * they do not use (no rate limit, no delay), and those branches vanish.
 */
static __always_inline int
kwq_add_locked(struct kwq *q, const void *key, size_t len, u32 hash,
	       struct kwq_add_args *a, u64 *delay_ns)
{
	struct kwq_limit_plan plan;
	u64 deadline = 0, delay = 0;
	s64 after_ns = a->after_ns;
	bool landed = false, wake = false, waited = false;
	struct kwq_level *level = NULL;
	struct kwq_node *n, **link;
	int ret = 0;

	if (q->shutting_down) {
		ret = -ESHUTDOWN;
		goto out;
	}
	/*
	 * The add holds its priority's level (made if new) before anything
	 * changes, and lets go at the end: if no node took it, it goes.
	 */
	level = kwq_level_prepare(q, a->prio);
	if (IS_ERR(level)) {
		ret = PTR_ERR(level);
		level = NULL;
		goto out;
	}
	link = kwq_chain_link(kwq_bucket(q, hash), key, len, hash);
	n = *link;
	/* The most frequent add of all changes nothing: a key already ready. */
	if (n && n->state == KWQ_READY && kwq_add_plain(a->limited, after_ns) &&
	    a->prio <= n->prio)
		goto out;
	if (!a->now_read) {
		a->now = kwq_now(q);
		a->now_read = true;
	}
	/* The failure that uses up max_retries: no requeue, the dead set. */
	if (a->limited && unlikely(q->max_retries) && n &&
	    n->failures >= q->max_retries) {
		kwq_fail_inc(q, n);
		q->retries_total++;
		kwq_kill(q, n, a->now);
		delay = KWQ_DELAY_DEAD;
		if (delay_ns)
			*delay_ns = delay;
		landed = true;
		goto out;
	}
	if (a->limited) {
		memset(&plan, 0, sizeof(plan));
		delay = kwq_limiters_when(&q->limiters, n ? n->failures : 0, a->now, &plan);
		after_ns = min_t(u64, delay, S64_MAX);
	}
	if (after_ns > 0)
		deadline = kwq_deadline(a->now, after_ns);

	if (!n || kwq_unqueued(n->state)) {
		/* A key handle's node is there: its adds take no room. */
		if (q->max_items && q->nr_items >= q->max_items &&
		    (!n || !kwq_pinned(n))) {
			ret = -ENOSPC;
			goto out;
		}
		if (!n) {
			n = kwq_node_insert(q, link, key, len, hash,
					    &a->spare);
			if (IS_ERR(n)) {
				ret = PTR_ERR(n);
				goto out;
			}
		} else if (n->state == KWQ_IDLE) {
			kwq_idle_unlink(q, n);
		} else {
			/* An add of a dead key revives it, count reset. */
			kwq_dead_unlink(q, n);
			kwq_fail_clear(q, n);
			trace_key_revived(q, key, len, 0, a->prio, 0);
		}
		q->nr_items++;
		if (deadline) {
			kwq_prio_set(q, &n->prio, a->prio);
			kwq_wait_insert(q, n, deadline, a->now);
		} else {
			kwq_make_ready(q, n, a->prio, a->now);
			wake = true;
		}
		landed = true;
	} else {
		waited = n->state == KWQ_WAITING;
		landed = kwq_readd(q, n, deadline, a->after, a->prio, a->now,
				   &wake);
	}

	if (a->limited) {
		kwq_fail_inc(q, n);
		q->retries_total++;
		/* Charge token buckets only for adds that landed. */
		if (landed)
			kwq_limiters_commit(&q->limiters, a->now, &plan);
		if (delay_ns)
			*delay_ns = delay;
	}
	if (landed) {
		q->adds_total++;
		/* Only a key that waits, or waited, moves the timer. */
		if (deadline || waited)
			kwq_timer_update(q);
	}
	a->ready += wake;
out:
	kwq_level_unprepare(q, level);
	if (a->limited)
		trace_key_rate_limited(q, key, len, delay, a->prio,
				       ret ?: landed);
	else
		trace_key_added(q, key, len, after_ns, a->prio, ret ?: landed);
	return ret;
}

/*
 * @gfp 0 (the exported single-key adds, any context): a node is
 * allocated before the lock (GFP_NOWAIT) only for an uncharged queue
 * with no pooled node; a charged queue allocates under the lock, only
 * for a key it does not have. Else (kwq_add_key()) as kwq_add_batch()
 * allocates with @gfp.
 */
static __always_inline int
kwq_add_common(struct kwq *q, const void *key, size_t len, s64 after_ns,
	       u32 after, int prio, bool limited, gfp_t gfp, u64 *delay_ns)
{
	struct kwq_add_args a = {
		.after_ns = after_ns, .after = after, .prio = prio,
		.limited = limited,
	};
	enum kwq_seen seen;
	unsigned long flags;
	u32 hash;
	int ret;

	if (!q || !kwq_key_ok(key, len))
		return -EINVAL;
	hash = kwq_hash(q, key, len);
	seen = kwq_seen_lockless(q, key, len, hash, prio,
				 kwq_add_plain(limited, after_ns));
	/* A key already ready: nothing to change, no lock to take. */
	if (seen == KWQ_SEEN_NOOP && !READ_ONCE(q->shutting_down)) {
		trace_key_added(q, key, len, after_ns, prio, 0);
		return 0;
	}
	/*
	 * Allocate before the lock if the key was not seen and no pooled
	 * node waits: a new key then costs the critical section no
	 * allocation. (A charged queue has no pool; without @gfp it
	 * allocates under the lock only for keys it does not have, rather
	 * than for every add of a key it has.)
	 */
	if (seen == KWQ_SEEN_NONE &&
	    (q->gfp_account ? !!gfp :
	     !READ_ONCE(q->pool[kwq_cache_index(len)])))
		a.spare = kwq_node_prealloc(len, (gfp ?: GFP_NOWAIT) |
					    q->gfp_account);

	spin_lock_irqsave(&q->lock, flags);
	ret = kwq_add_locked(q, key, len, hash, &a, delay_ns);
	kwq_unlock(q, flags, a.ready);
	if (unlikely(a.spare))
		kwq_node_slab_free(a.spare);
	return ret;
}

int kwq_add(struct kwq *q, const void *key, size_t len)
{
	return kwq_add_common(q, key, len, 0, 0, 0, false, 0, NULL);
}
EXPORT_SYMBOL_GPL(kwq_add);

int kwq_add_after(struct kwq *q, const void *key, size_t len, s64 delay_ns)
{
	return kwq_add_common(q, key, len, delay_ns, 0, 0, false, 0, NULL);
}
EXPORT_SYMBOL_GPL(kwq_add_after);

int kwq_add_opts(struct kwq *q, const void *key, size_t len,
		 const struct kwq_add_opts *opts)
{
	if (!opts || !kwq_after_flags_ok(opts->flags, opts->after_ns))
		return -EINVAL;
	return kwq_add_common(q, key, len, opts->after_ns, opts->flags,
			      opts->priority, false, 0, NULL);
}
EXPORT_SYMBOL_GPL(kwq_add_opts);

int kwq_add_rate_limited(struct kwq *q, const void *key, size_t len,
			 const struct kwq_add_opts *opts, u64 *delay_ns)
{
	if (opts && (opts->after_ns || opts->flags))
		return -EINVAL;
	return kwq_add_common(q, key, len, 0, 0, opts ? opts->priority : 0,
			      true, 0, delay_ns);
}
EXPORT_SYMBOL_GPL(kwq_add_rate_limited);

/*
 * --- adds by key handle (layout.h, "Key handles"), applied ---
 *
 * Under q->lock, by its next holder: the adds handle.c queued on the
 * lockless q->ref_adds.
 */

/* See queue.h. Noinline: only queues with adds by handle come here. */
noinline void kwq_refs_apply(struct kwq *q)
{
	struct llist_node *list = llist_del_all(&q->ref_adds);
	struct kwq_add_args a = { .now = kwq_now(q), .now_read = true };
	struct kwq_key_ref *ref, *next;
	struct kwq_node *n;

	lockdep_assert_held(&q->lock);
	/* llist_add() pushes at the head: oldest first. */
	list = llist_reverse_order(list);
	llist_for_each_entry_safe(ref, next, list, pend) {
		n = ref->node;
		clear_bit(KWQ_REF_QUEUED, &ref->flags);
		/*
		 * The bit clear before the add is applied: an adder that
		 * still finds it set is covered by this add, one that finds
		 * it clear queues the handle again.
		 */
		smp_mb__after_atomic();
		/* Refused (the queue shut down): nothing is pending. */
		if (kwq_add_locked(q, n->key, n->key_len, kwq_node_hash(n), &a,
				   NULL))
			kwq_handle_unready(n);
	}
}

/*
 * --- batches of adds ---
 *
 * kwq_add_batch(): KWQ_BATCH_CHUNK keys per hold of q->lock, their nodes
 * allocated in bulk before it is taken.
 */

bool kwq_keys_ok(const struct kwq_key *keys, unsigned int nr)
{
	unsigned int i;

	if (nr && !keys)
		return false;
	for (i = 0; i < nr; i++)
		if (!kwq_key_ok(keys[i].key, keys[i].len))
			return false;
	return true;
}

/* Hash the @n keys at @keys into @hash, outside q->lock. */
void kwq_hash_keys(const struct kwq *q, const struct kwq_key *keys,
		   unsigned int n, u32 *hash)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		hash[i] = kwq_hash(q, keys[i].key, keys[i].len);
}

/* The options kwq_add_batch() and kwq_add_key() accept. */
static bool kwq_batch_opts_ok(const struct kwq_batch_opts *opts)
{
	return opts &&
	       (!(opts->flags & KWQ_BATCH_RATE_LIMITED) ||
		(!opts->after_ns && opts->flags == KWQ_BATCH_RATE_LIMITED)) &&
	       kwq_after_flags_ok(opts->flags & ~KWQ_BATCH_RATE_LIMITED,
				  opts->after_ns);
}

/* The gfp of the nodes a batch allocates: the queue decides the charge. */
static gfp_t kwq_batch_gfp(const struct kwq *q,
			   const struct kwq_batch_opts *opts)
{
	return ((opts->gfp & ~__GFP_ACCOUNT) ?: GFP_NOWAIT) | q->gfp_account;
}

/* For dev.c: see kwq_internal.h. */
int kwq_add_key(struct kwq *q, const struct kwq_key *key,
		const struct kwq_batch_opts *opts)
{
	if (!q || !key || !kwq_batch_opts_ok(opts))
		return -EINVAL;
	return kwq_add_common(q, key->key, key->len, opts->after_ns,
			      opts->flags & ~KWQ_BATCH_RATE_LIMITED,
			      key->priority,
			      opts->flags & KWQ_BATCH_RATE_LIMITED,
			      kwq_batch_gfp(q, opts), opts->delays);
}
EXPORT_SYMBOL_IF_KUNIT(kwq_add_key);

int kwq_add_batch(struct kwq *q, const struct kwq_key *keys, unsigned int nr,
		  const struct kwq_batch_opts *opts, unsigned int *done)
{
	struct kwq_node *spare[KWQ_BATCH_CHUNK] __uninitialized;
	u32 hash[KWQ_BATCH_CHUNK] __uninitialized;
	struct kwq_add_args a = {};
	unsigned int i, n, k = 0;
	unsigned long flags;
	/* NULL options: plain adds, nodes allocated GFP_NOWAIT. */
	static const struct kwq_batch_opts defaults;
	u64 *delay;
	gfp_t gfp;
	int ret = 0;

	if (done)
		*done = 0;
	if (!opts)
		opts = &defaults;
	if (!q || !kwq_batch_opts_ok(opts) || !kwq_keys_ok(keys, nr))
		return -EINVAL;
	a.after_ns = opts->after_ns;
	a.after = opts->flags & ~KWQ_BATCH_RATE_LIMITED;
	a.limited = opts->flags & KWQ_BATCH_RATE_LIMITED;
	/* The queue decides whom its nodes are charged to, not the caller. */
	gfp = kwq_batch_gfp(q, opts);
	while (k < nr && !ret) {
		n = min_t(unsigned int, nr - k, KWQ_BATCH_CHUNK);
		/*
		 * Hash and allocate outside the lock; free leftovers after.
		 * A key seen in the table needs no node (if it is gone
		 * meanwhile, the add allocates under the lock).
		 */
		for (i = 0; i < n; i++) {
			hash[i] = kwq_hash(q, keys[k + i].key, keys[k + i].len);
			/* Not NULL: a node wanted (kwq_nodes_prealloc()). */
			spare[i] = kwq_seen_lockless(q, keys[k + i].key,
						     keys[k + i].len, hash[i],
						     keys[k + i].priority,
						     false) == KWQ_SEEN_NONE ?
				   ERR_PTR(-ENOMEM) : NULL;
		}
		kwq_nodes_prealloc(q, keys + k, n, spare, gfp);
		spin_lock_irqsave(&q->lock, flags);
		a.now_read = false;
		a.ready = 0;
		for (i = 0; i < n; i++) {
			delay = opts->delays ? &opts->delays[k + i] : NULL;
			a.spare = spare[i];
			a.prio = keys[k + i].priority;
			ret = kwq_add_locked(q, keys[k + i].key,
					     keys[k + i].len, hash[i], &a, delay);
			spare[i] = a.spare;
			if (ret)
				break;
		}
		kwq_unlock(q, flags, a.ready);
		k += i;
		/* Leftovers: keys found meanwhile, or not reached. */
		for (i = 0; i < n; i++)
			kwq_node_slab_free(spare[i]);
	}
	if (done)
		*done = k;
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_add_batch);

/*
 * --- forget, remove, and what a queue holds ---
 *
 * Under q->lock: a key's failure record, its removal, and the counts
 * and snapshot of a queue (kwq_len(), kwq_get_stats()).
 */

int kwq_forget(struct kwq *q, const void *key, size_t len)
{
	struct kwq_node *n;
	unsigned long flags;

	if (!q || !kwq_key_ok(key, len))
		return -EINVAL;
	n = kwq_lock_lookup(q, key, len, &flags);
	/* A dead key's count is part of its record: purge drops it. */
	if (n && n->state != KWQ_DEAD) {
		kwq_fail_clear(q, n);
		if (n->state == KWQ_IDLE) {
			kwq_idle_unlink(q, n);
			kwq_node_drop(q, n, NULL);
		}
	}
	kwq_unlock(q, flags, 0);
	return 0;
}
EXPORT_SYMBOL_GPL(kwq_forget);

int kwq_num_requeues(struct kwq *q, const void *key, size_t len)
{
	struct kwq_node *n;
	unsigned long flags;
	u32 failures;

	if (!q || !kwq_key_ok(key, len))
		return -EINVAL;
	n = kwq_lock_lookup(q, key, len, &flags);
	failures = n ? n->failures : 0;
	spin_unlock_irqrestore(&q->lock, flags);
	return min_t(u32, failures, INT_MAX);
}
EXPORT_SYMBOL_GPL(kwq_num_requeues);

int kwq_remove(struct kwq *q, const void *key, size_t len)
{
	struct kwq_node *n;
	unsigned long flags;
	int ret = 0;

	if (!q || !kwq_key_ok(key, len))
		return -EINVAL;
	n = kwq_lock_lookup(q, key, len, &flags);
	switch (n ? n->state : KWQ_IDLE) {
	case KWQ_READY:
		kwq_ready_unlink(q, n);
		kwq_release_node(q, n, NULL);
		break;
	case KWQ_WAITING:
		kwq_wait_unlink(q, n);
		kwq_release_node(q, n, NULL);
		kwq_timer_update(q);
		break;
	case KWQ_PROCESSING:
		if (n->requeue == KWQ_REQUEUE_NONE)
			ret = -EBUSY;
		/* Both the requeue and a remembered deadline. */
		kwq_set_requeue(q, n, KWQ_REQUEUE_NONE, 0);
		n->deadline = 0;
		break;
	default:
		ret = -ENOENT;
		break;
	}
	kwq_unlock(q, flags, 0);
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_remove);

long kwq_len(struct kwq *q)
{
	unsigned long flags;
	long len;

	if (!q)
		return -EINVAL;
	spin_lock_irqsave(&q->lock, flags);
	kwq_refs_splice(q);
	len = q->nr_ready;
	spin_unlock_irqrestore(&q->lock, flags);
	return len;
}
EXPORT_SYMBOL_GPL(kwq_len);

int kwq_get_stats(struct kwq *q, struct kwq_stats *st)
{
	unsigned long flags;

	if (!q || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	spin_lock_irqsave(&q->lock, flags);
	kwq_refs_splice(q);
	kwq_stats_fill(q, st);
	spin_unlock_irqrestore(&q->lock, flags);
	return 0;
}
EXPORT_SYMBOL_GPL(kwq_get_stats);

/*
 * --- the clock's expiry ---
 *
 * kwq_clock_expired(), which the clock's timer calls through the pointer
 * kwq_core_init() handed clock.c: revoke the leases past their
 * processing deadline (the due tree, deadline.c; a revocation is an add
 * and a done, so it lives with the add), cascade the delay wheel's due
 * slots into the tree and make due keys ready, in critical sections of
 * q->lock of at most KWQ_DELAY_CHUNK keys, then re-arm the clock.
 */

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
 * Revoke the lease of processing @n, whose deadline passed: exactly what
 * kwq_add_rate_limited() (at its priority) then kwq_done() by its holder
 * do, so the failure count, the limiter's delay, a pending requeue and
 * shutdown (the add fails, the done releases the key) apply as they
 * would. Returns the keys made ready.
 */
static unsigned int kwq_time_out(struct kwq *q, struct kwq_node *n, u64 now)
{
	struct kwq_add_args a = {
		.prio = n->prio, .limited = true, .now_read = true, .now = now,
	};
	const void *owner = n->owner;

	trace_key_timed_out(q, n->key, n->key_len,
			    kwq_since(now, n->start_ns), n->prio, !!owner);
	q->processing_timeouts_total++;
	/* Fails only after shutdown; then the done below drops the key. */
	kwq_add_locked(q, n->key, n->key_len, kwq_node_hash(n), &a, NULL);
	if (owner)
		kwq_tomb_add(q, owner, n);
	return a.ready + kwq_finish(q, n, NULL, now);
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
