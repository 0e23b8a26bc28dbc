// SPDX-License-Identifier: GPL-2.0
/*
 * kwq queue core: client-go Queue, DelayingQueue and RateLimitingQueue
 * semantics for keys that are byte strings.
 *
 * Data structures (all per queue, struct kwq in queue.h):
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
 *    before they are due ("delay wheel" below). One clock timer is armed
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
#include "ready.h"
#include "stats.h"
#include "table.h"

#define CREATE_TRACE_POINTS
#include "kwq_trace.h"

#define KWQ_LEASE_TAG		BIT_ULL(63)

static bool kwq_key_ok(const void *key, size_t len)
{
	return key && len && len <= KWQ_KEY_MAX;
}

bool kwq_name_ok(const char *name)
{
	size_t i, len;

	if (!name)
		return false;
	len = strnlen(name, KWQ_NAME_MAX + 1);
	if (!len || len > KWQ_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum(name[i]) && !strchr("._-", name[i]))
			return false;
	return true;
}

/* Hash @key, take q->lock and find the key's node (NULL if none). */
static struct kwq_node *kwq_lock_lookup(struct kwq *q, const void *key,
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

static void kwq_fail_clear(struct kwq *q, struct kwq_node *n)
{
	if (n->failures) {
		q->nr_failure_records--;
		n->failures = 0;
	}
}

/*
 * Set what done() does with processing @n, keeping nr_dirty (client-go's
 * depth counts dirty keys) and the time it became dirty (client-go
 * measures the queue duration from the first add).
 */
static void kwq_set_requeue(struct kwq *q, struct kwq_node *n,
			    enum kwq_requeue requeue, u64 now)
{
	if (requeue == KWQ_REQUEUE_READY && n->requeue != KWQ_REQUEUE_READY) {
		q->nr_dirty++;
		n->dirty_ns = now;
	} else if (requeue != KWQ_REQUEUE_READY &&
		   n->requeue == KWQ_REQUEUE_READY) {
		q->nr_dirty--;
		kwq_handle_unready(n);
	}
	WRITE_ONCE(n->requeue, requeue);
}

/* --- revoked leases (q->tombs) --- */

/* The @i-th record, oldest first. */
static struct kwq_tomb *kwq_tomb(const struct kwq *q, unsigned int i)
{
	return &q->tombs[(q->tomb_head + i) % KWQ_TOMBS];
}

/*
 * Whether @owner's lease on the key of @hash and @len was revoked. A
 * record names the key by its hash and length, so it outlives the key's
 * node (the key may have left the queue since): another key matches it
 * only through a collision of its 29-bit hash.
 */
static bool kwq_tomb_find(const struct kwq *q, const void *owner, u32 hash,
			  size_t len)
{
	const struct kwq_tomb *t;
	unsigned int i;

	for (i = 0; i < q->nr_tombs; i++) {
		t = kwq_tomb(q, i);
		if (t->hash == hash && t->owner == owner && t->len == len)
			return true;
	}
	return false;
}

/*
 * Record that @owner's lease on @n was revoked; the oldest record goes
 * when KWQ_TOMBS are kept. The records are allocated by the first
 * revocation (none if that fails: the owner then gets -ENOENT or -EPERM,
 * which change nothing either).
 */
static void kwq_tomb_add(struct kwq *q, const void *owner,
			 const struct kwq_node *n)
{
	struct kwq_tomb *t;

	if (unlikely(!q->tombs)) {
		if (!kwq_charge(q, kwq_alloc_bytes(KWQ_TOMBS * sizeof(*t))))
			return;
		q->tombs = kmalloc_array(KWQ_TOMBS, sizeof(*t), GFP_NOWAIT |
					 __GFP_NOWARN | q->gfp_account);
		if (!q->tombs) {
			kwq_uncharge(q, kwq_alloc_bytes(KWQ_TOMBS * sizeof(*t)));
			return;
		}
	}
	if (q->nr_tombs == KWQ_TOMBS) {
		q->tomb_head = (q->tomb_head + 1) % KWQ_TOMBS;
		q->nr_tombs--;
	}
	t = kwq_tomb(q, q->nr_tombs++);
	t->owner = owner;
	t->hash = kwq_node_hash(n);
	t->len = n->key_len;
}

/* Forget the records of @owner (released: its address may come back). */
static void kwq_tomb_forget(struct kwq *q, const void *owner)
{
	unsigned int i, kept = 0;

	for (i = 0; i < q->nr_tombs; i++)
		if (kwq_tomb(q, i)->owner != owner)
			*kwq_tomb(q, kept++) = *kwq_tomb(q, i);
	q->nr_tombs = kept;
}

/* --- node state transitions (all under q->lock) --- */

/*
 * @n, pinned by a key handle, would leave the hash: it stays, IDLE, in no
 * list, without failure record, priorities or deadline, until its last
 * handle goes (kwq_key_put()).
 */
static noinline void kwq_node_keep(struct kwq *q, struct kwq_node *n)
{
	WRITE_ONCE(n->state, KWQ_IDLE);
	kwq_handle_unready(n);
	kwq_prio_set(q, &n->prio, 0);
	kwq_prio_set(q, &n->requeue_prio, 0);
	kwq_fail_clear(q, n);
	n->deadline = 0;
	INIT_LIST_HEAD(&n->link);
}

/*
 * @n leaves the hash: its levels and node go (@pp: as kwq_node_free());
 * unless a key handle pins it.
 */
static __always_inline void kwq_node_drop(struct kwq *q, struct kwq_node *n,
					  struct kwq_node **pp)
{
	if (unlikely(kwq_pinned(n))) {
		kwq_node_keep(q, n);
		return;
	}
	kwq_node_levels_drop(q, n);
	kwq_node_free(q, n, pp);
}

static void kwq_idle_unlink(struct kwq *q, struct kwq_node *n)
{
	/* A pinned node without failure record is in no list. */
	if (list_empty(&n->link))
		return;
	list_del(&n->link);
	q->nr_idle--;
}

static void kwq_dead_unlink(struct kwq *q, struct kwq_node *n)
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
		kwq_dead_unlink(q, old);
		kwq_node_drop(q, old, NULL);
		q->dead_dropped_total++;
	}
}

/*
 * Processing @n, out of the processing list, was to die at its done
 * (KWQ_REQUEUE_DEAD): bury it, and say so; else leave it alone.
 */
static bool kwq_bury_dying(struct kwq *q, struct kwq_node *n)
{
	u64 failed_ns = n->dirty_ns;

	if (n->requeue != KWQ_REQUEUE_DEAD)
		return false;
	kwq_set_requeue(q, n, KWQ_REQUEUE_NONE, 0);
	q->nr_items--;
	kwq_bury(q, n, failed_ns);
	return true;
}

/*
 * @n stopped being queued: keep its failure record or free it (@pp: as
 * for kwq_node_free()).
 */
static __always_inline void kwq_release_node(struct kwq *q,
					     struct kwq_node *n,
					     struct kwq_node **pp)
{
	struct kwq_node *old;

	q->nr_items--;
	if (!n->failures) {
		kwq_node_drop(q, n, pp);
		return;
	}
	WRITE_ONCE(n->state, KWQ_IDLE);
	n->deadline = 0;
	list_add_tail(&n->link, &q->idle);
	q->nr_idle++;
	if (q->nr_idle > q->max_failure_records) {
		old = list_first_entry(&q->idle, struct kwq_node, link);
		kwq_idle_unlink(q, old);
		kwq_node_drop(q, old, NULL);
		q->failure_records_evicted++;
	}
}

static void kwq_make_ready(struct kwq *q, struct kwq_node *n, int prio,
			   u64 now)
{
	n->queued_ns = now;
	kwq_ready_push(q, n, prio);
}

/* --- processing deadlines --- */

/*
 * A deadline record for a get or touch, under q->lock: a kept one, else a
 * new one (possibly in hard interrupt context; GFP_NOWAIT as for nodes,
 * table.h), or NULL: the caller then fails with -ENOMEM, nothing taken.
 */
static struct kwq_due *kwq_due_alloc(struct kwq *q)
{
	struct kwq_due *d = q->due_free;

	if (d) {
		q->due_free = d->next_free;
		q->nr_due_free--;
		return d;
	}
	if (!kwq_charge(q, kwq_alloc_bytes(sizeof(*d))))
		return NULL;
	d = kmalloc(sizeof(*d), GFP_NOWAIT | __GFP_NOWARN | q->gfp_account);
	if (!d)
		kwq_uncharge(q, kwq_alloc_bytes(sizeof(*d)));
	return d;
}

static void kwq_due_free(struct kwq *q, struct kwq_due *d)
{
	kfree(d);
	kwq_uncharge(q, kwq_alloc_bytes(sizeof(*d)));
}

/* Under q->lock: keep @d for the next gets, or free it. */
static void kwq_due_release(struct kwq *q, struct kwq_due *d)
{
	if (!q->gfp_account && q->nr_due_free < KWQ_DUE_KEEP) {
		d->next_free = q->due_free;
		q->due_free = d;
		q->nr_due_free++;
		return;
	}
	kwq_due_free(q, d);
}

/*
 * Once the queue is unreachable: free every deadline record, those in
 * the tree (in post-order, no rebalancing) and the kept ones.
 */
static void kwq_due_free_all(struct kwq *q)
{
	struct kwq_due *d, *next;

	rbtree_postorder_for_each_entry_safe(d, next, &q->due.rb_root, rb)
		kwq_due_free(q, d);
	q->due = RB_ROOT_CACHED;
	while ((d = q->due_free)) {
		q->due_free = d->next_free;
		kwq_due_free(q, d);
	}
	q->nr_due_free = 0;
}

static bool kwq_due_less(struct rb_node *a, const struct rb_node *b)
{
	const struct kwq_due *x = rb_entry(a, struct kwq_due, rb);
	const struct kwq_due *y = rb_entry(b, struct kwq_due, rb);

	return x->due_ns < y->due_ns ||
	       (x->due_ns == y->due_ns && x->node->lease < y->node->lease);
}

/* Give processing @n the deadline @d, due @timeout_ns after @now. */
static noinline void kwq_due_insert(struct kwq *q, struct kwq_node *n,
				    struct kwq_due *d, u64 now, u64 timeout_ns)
{
	d->node = n;
	d->due_ns = kwq_deadline(now, timeout_ns);
	n->due = d;
	rb_add_cached(&d->rb, &q->due, kwq_due_less);
	q->nr_due++;
	/* Re-armed only if this deadline is the first. */
	kwq_timer_update(q);
}

/* Take processing @n's deadline out of the due tree; returns it. */
static noinline struct kwq_due *kwq_due_erase(struct kwq *q,
					      struct kwq_node *n)
{
	struct kwq_due *d = n->due;

	/* The timer may stay armed: it then finds nothing due. */
	rb_erase_cached(&d->rb, &q->due);
	q->nr_due--;
	n->due = NULL;
	return d;
}

/*
 * Start processing @n, with the deadline @d (NULL: none) @timeout_ns
 * from @now. The deadline's work is out of line: a get without one pays
 * a test and a store.
 */
static __always_inline void kwq_processing_link(struct kwq *q,
						struct kwq_node *n, u64 now,
						u64 timeout_ns,
						struct kwq_due *d)
{
	q->nr_processing++;
	/* The list stays in start order: kwq_get_stats() relies on it. */
	list_add_tail(&n->link, &q->processing);
	n->due = NULL;
	if (unlikely(d))
		kwq_due_insert(q, n, d, now, timeout_ns);
}

static __always_inline void kwq_processing_unlink(struct kwq *q,
						  struct kwq_node *n)
{
	q->nr_processing--;
	list_del(&n->link);
	if (unlikely(n->due))
		kwq_due_release(q, kwq_due_erase(q, n));
}

/* The processing deadline of a get or touch that asks for @timeout_ns. */
static u64 kwq_timeout_of(const struct kwq *q, u64 timeout_ns)
{
	if (!timeout_ns)
		return q->processing_timeout_ns;
	return timeout_ns == KWQ_NO_TIMEOUT ? 0 : timeout_ns;
}

/* A timeout a get or touch may ask for: 0, KWQ_NO_TIMEOUT or in range. */
static bool kwq_timeout_ok(u64 timeout_ns)
{
	return !timeout_ns || timeout_ns == KWQ_NO_TIMEOUT ||
	       (timeout_ns >= KWQ_PROCESSING_TIMEOUT_MIN_NS &&
		timeout_ns <= KWQ_PROCESSING_TIMEOUT_MAX_NS);
}

/*
 * Under q->lock: may @owner finish or touch @n (found by the key of @hash
 * and @len; NULL: not queued)? It holds it, or (unless @owner_only) nobody does: 0. Else
 * -ESTALE if its lease on the key was revoked, -ENOENT, -EPERM.
 */
static __always_inline int kwq_held_by(const struct kwq *q,
				       const struct kwq_node *n, u32 hash,
				       size_t len, const void *owner,
				       bool owner_only)
{
	/* Held again after a revocation: the record no longer applies. */
	if (likely(n && n->state == KWQ_PROCESSING && n->owner == owner))
		return 0;
	if (unlikely(q->nr_tombs) && owner &&
	    kwq_tomb_find(q, owner, hash, len))
		return -ESTALE;
	if (!n || n->state != KWQ_PROCESSING)
		return -ENOENT;
	return !owner_only && !n->owner ? 0 : -EPERM;
}

/*
 * End processing of @n: requeue it if it was added meanwhile. @pp: the
 * link to it, as for kwq_node_free().
 */
static __always_inline bool kwq_finish(struct kwq *q, struct kwq_node *n,
				       struct kwq_node **pp, u64 now)
{
	enum kwq_requeue requeue = n->requeue;
	u64 ready_ns = n->dirty_ns;

	kwq_processing_unlink(q, n);
	q->start_ns_sum -= n->start_ns;
	kwq_hist_observe(&q->work_hist, kwq_since(now, n->start_ns));
	trace_key_finished(q, n->key, n->key_len,
			   kwq_since(now, n->start_ns), n->prio, requeue);
	n->owner = NULL;
	if (likely(requeue == KWQ_REQUEUE_NONE)) {
		kwq_release_node(q, n, pp);
		return false;
	}
	if (requeue == KWQ_REQUEUE_DEAD) {
		kwq_bury_dying(q, n);
		return false;
	}
	kwq_set_requeue(q, n, KWQ_REQUEUE_NONE, now);
	if (requeue == KWQ_REQUEUE_DELAYED) {
		if (q->shutting_down) {
			q->dropped_at_shutdown++;
			kwq_release_node(q, n, pp);
			return false;
		}
		if (n->deadline > now) {
			kwq_prio_set(q, &n->prio, n->requeue_prio);
			kwq_wait_insert(q, n, n->deadline, now);
			kwq_timer_update(q);
			return false;
		}
		/* Ready since its deadline, as client-go would have it. */
		requeue = KWQ_REQUEUE_READY;
		ready_ns = n->deadline;
		n->deadline = 0;
	}
	/* Dirty, or delayed and due */
	kwq_make_ready(q, n, n->requeue_prio, ready_ns);
	return true;
}

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
 * Drop q->lock, free the nodes freed under it, then wake one getter per
 * key made @ready (getters wait exclusively; pollers always wake) and,
 * once drained, drain waiters.
 */
static __always_inline void kwq_unlock(struct kwq *q, unsigned long flags,
				       unsigned int ready)
	__releases(&q->lock)
{
	bool drained = unlikely(q->shutting_down) && !q->nr_ready &&
		       !q->nr_processing;
	struct kwq_node *freed = q->free_list;

	if (unlikely(freed))
		q->free_list = NULL;
	spin_unlock_irqrestore(&q->lock, flags);
	if (unlikely(freed))
		kwq_nodes_free(freed);
	/*
	 * wq_has_sleeper()'s barrier pairs with the one in the getter's
	 * prepare_to_wait_exclusive(): either it sees the getter queued, or
	 * the getter sees the keys when it checks under q->lock.
	 */
	if (ready && wq_has_sleeper(&q->get_wq))
		wake_up_nr(&q->get_wq, ready);
	if (drained)
		wake_up(&q->drain_wq);
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
		/* ->dirty_ns: the time of the failure, until the done */
		n->dirty_ns = now;
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

/* Chain links a lockless reader follows before it gives up. */
#define KWQ_LOCKLESS_HOPS	16

/* The stay of @n in its state, as kwq_seen_lockless() tells them apart */
static u64 kwq_stay(const struct kwq_node *n, u8 state)
{
	return state == KWQ_READY ? READ_ONCE(n->ready_epoch) :
				    READ_ONCE(n->lease);
}

/* What an add saw of its key before taking q->lock. */
enum kwq_seen {
	KWQ_SEEN_NONE,		/* not found, or unsure */
	KWQ_SEEN_QUEUED,	/* a node of the key: no allocation needed */
	KWQ_SEEN_NOOP,		/* a plain add would change nothing */
};

/*
 * Look for @key without q->lock. KWQ_SEEN_NOOP answers "would a plain
 * add of @key at @prio change nothing?" (only if @plain): the key is
 * ready at @prio or higher, or processing and already due to run again
 * (dirty) at @prio or higher, the most frequent adds of a hot key. It is
 * returned only if that held at one moment during the call; unsure, the
 * add takes the lock. KWQ_SEEN_QUEUED is a hint, never proof: the key
 * had a node (in whatever state), so the add most likely needs none; if
 * wrong, the add allocates under the lock.
 *
 * Nodes are SLAB_TYPESAFE_BY_RCU and may be freed and reused for another
 * key meanwhile. Each stay in READY has its own ->ready_epoch and each in
 * PROCESSING its own ->lease, set before ->state is stored (with release,
 * or a full barrier); a node leaves the state by a store to ->state
 * before its union is reused, and neither number can equal what other
 * states leave in its place (kernel pointers, NULL, delay sequences, an
 * older stay's number). Reading the state (acquire), the stay's number,
 * the key and flags, then state and number again proves all was read in
 * one stay. Tables are freed an RCU grace period after a grow.
 */
static __always_inline enum kwq_seen
kwq_seen_lockless(struct kwq *q, const void *key, size_t len, u32 hash,
		  int prio, bool plain)
{
	enum kwq_seen seen = KWQ_SEEN_NONE;
	struct kwq_node *n, **tbl;
	unsigned int bits, hops = 0;
	u8 state;
	u64 stay;

	rcu_read_lock();
	bits = READ_ONCE(q->hash_bits);
	/* Pairs with smp_wmb() in kwq_grow_work(): the table has 2^bits. */
	smp_rmb();
	tbl = READ_ONCE(q->hash);
	for (n = READ_ONCE(tbl[hash & ((1U << bits) - 1)]);
	     n && hops++ < KWQ_LOCKLESS_HOPS; n = READ_ONCE(n->hnext)) {
		if (kwq_node_hash(n) != hash)
			continue;
		/* Pairs with the stores of READY and PROCESSING. */
		state = smp_load_acquire(&n->state);
		stay = kwq_stay(n, state);
		if (READ_ONCE(n->key_len) != len)
			continue;
		/* May race with a reuse of the node: the stay check tells. */
		if (data_race(memcmp(n->key, key, len)))
			continue;
		seen = KWQ_SEEN_QUEUED;
		if (!plain || (state != KWQ_READY && state != KWQ_PROCESSING))
			break;
		if (state == KWQ_READY ? READ_ONCE(n->prio) < prio :
		    READ_ONCE(n->requeue) != KWQ_REQUEUE_READY ||
		    READ_ONCE(n->requeue_prio) < prio)
			break;
		/*
		 * Orders the caller's writes before the reads below; pairs
		 * with smp_store_mb() in kwq_take_locked().
		 */
		smp_mb();
		if (READ_ONCE(n->state) != state)
			break;
		/* The number written before the state was stored. */
		smp_rmb();
		if (kwq_stay(n, state) == stay &&
		    (state == KWQ_READY ||
		     READ_ONCE(n->requeue) == KWQ_REQUEUE_READY))
			seen = KWQ_SEEN_NOOP;
		break;
	}
	rcu_read_unlock();
	return seen;
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

/* --- key handles (queue.h, "Key handles") --- */

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

static int kwq_pin_cmp(const void *node, const struct rb_node *rb)
{
	const struct kwq_node *a = node;
	const struct kwq_node *b = rb_entry(rb, struct kwq_key_ref, rb)->node;

	return a == b ? 0 : (uintptr_t)a < (uintptr_t)b ? -1 : 1;
}

static bool kwq_pin_less(struct rb_node *a, const struct rb_node *b)
{
	return kwq_pin_cmp(rb_entry(a, struct kwq_key_ref, rb)->node, b) < 0;
}

struct kwq_key_ref *kwq_key_get(struct kwq *q, const void *key, size_t len,
				gfp_t gfp)
{
	struct kwq_node *n, **link, *spare = NULL;
	struct kwq_key_ref *ref, *new;
	unsigned long flags;
	u32 hash;

	if (!q || !kwq_key_ok(key, len))
		return ERR_PTR(-EINVAL);
	/* Unused (freed below) if the key has a handle already. */
	new = kmalloc(sizeof(*new), gfp | q->gfp_account);
	if (!new)
		return ERR_PTR(-ENOMEM);
	hash = kwq_hash(q, key, len);
	if (kwq_seen_lockless(q, key, len, hash, 0, false) == KWQ_SEEN_NONE)
		spare = kwq_node_prealloc(len, gfp | q->gfp_account);
	spin_lock_irqsave(&q->lock, flags);
	ref = ERR_PTR(-ESHUTDOWN);
	if (q->shutting_down)
		goto unlock;
	link = kwq_chain_link(kwq_bucket(q, hash), key, len, hash);
	n = *link;
	if (!n) {
		n = kwq_node_insert(q, link, key, len, hash, &spare);
		ref = ERR_CAST(n);
		if (IS_ERR(n))
			goto unlock;
		/* IDLE, pinned, no failure record: in no list. */
		INIT_LIST_HEAD(&n->link);
	}
	if (kwq_pinned(n)) {
		ref = rb_entry(rb_find(n, &q->pins, kwq_pin_cmp),
			       struct kwq_key_ref, rb);
		refcount_inc(&ref->ref);
		goto unlock;
	}
	ref = new;
	new = NULL;
	ref->flags = 0;
	refcount_set(&ref->ref, 1);
	kwq_get_ref(q);
	ref->q = q;
	ref->node = n;
	rb_add(&ref->rb, &q->pins, kwq_pin_less);
	atomic_or(KWQ_NODE_PINNED, &n->hword);
unlock:
	kwq_unlock(q, flags, 0);
	kwq_node_slab_free(spare);
	kfree(new);
	return ref;
}
EXPORT_SYMBOL_GPL(kwq_key_get);

int kwq_add_ref(struct kwq_key_ref *ref)
{
	struct kwq *q;

	if (!ref)
		return -EINVAL;
	q = ref->q;
	if (unlikely(READ_ONCE(q->shutting_down)))
		return -ESHUTDOWN;
	/* Already ready or dirty, or an add on its way: nothing to do. */
	if (atomic_fetch_or(KWQ_NODE_PENDING, &ref->node->hword) &
	    KWQ_NODE_PENDING)
		return 0;
	if (!test_and_set_bit(KWQ_REF_QUEUED, &ref->flags))
		llist_add(&ref->pend, &q->ref_adds);
	/*
	 * wq_has_sleeper()'s barrier pairs with the one in the getter's
	 * prepare_to_wait_exclusive(): it sees the getter queued, or the
	 * getter splices this add when it checks under q->lock.
	 */
	if (wq_has_sleeper(&q->get_wq))
		wake_up_nr(&q->get_wq, 1);
	return 0;
}
EXPORT_SYMBOL_GPL(kwq_add_ref);

int kwq_add_ref_opts(struct kwq_key_ref *ref, const struct kwq_add_opts *opts)
{
	if (!ref)
		return -EINVAL;
	/* The node and its key stay while the handle pins them. */
	return kwq_add_opts(ref->q, ref->node->key, ref->node->key_len, opts);
}
EXPORT_SYMBOL_GPL(kwq_add_ref_opts);

void kwq_key_put(struct kwq_key_ref *ref)
{
	struct kwq_node *n;
	struct kwq *q;
	unsigned long flags;

	if (!ref)
		return;
	q = ref->q;
	n = ref->node;
	spin_lock_irqsave(&q->lock, flags);
	if (!refcount_dec_and_test(&ref->ref)) {
		spin_unlock_irqrestore(&q->lock, flags);
		return;
	}
	/* Its add, if on q->ref_adds, is applied: the handle can go. */
	kwq_refs_splice(q);
	rb_erase(&ref->rb, &q->pins);
	/* Nothing promises PENDING any more. */
	atomic_andnot(KWQ_NODE_PINNED | KWQ_NODE_PENDING, &n->hword);
	/* Kept only for its handle: it goes now. */
	if (n->state == KWQ_IDLE && list_empty(&n->link))
		kwq_node_drop(q, n, NULL);
	kwq_unlock(q, flags, 0);
	kwq_put(q);
	kfree(ref);
}
EXPORT_SYMBOL_GPL(kwq_key_put);

/* Keys hashed and nodes preallocated per critical section of a batch. */
#define KWQ_BATCH_CHUNK		KWQ_BULK

static bool kwq_keys_ok(const struct kwq_key *keys, unsigned int nr)
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
static void kwq_hash_keys(const struct kwq *q, const struct kwq_key *keys,
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
	u64 *delay;
	gfp_t gfp;
	int ret = 0;

	if (done)
		*done = 0;
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
 * Under q->lock: finish the @n keys at @keys (hashed: @hash) that are
 * leased to @owner or detached (no owner), in order, stopping at the
 * first that is neither (*@err: -ENOENT or -EPERM, else 0). Returns how
 * many were finished; *@ready counts the keys they made ready.
 */
static unsigned int kwq_done_keys_locked(struct kwq *q,
					 const struct kwq_key *keys,
					 const u32 *hash, unsigned int n,
					 void *owner, u64 now,
					 unsigned int *ready, int *err)
{
	struct kwq_node *node, **link;
	unsigned int i;

	kwq_refs_splice(q);
	*err = 0;
	for (i = 0; i < n; i++) {
		link = kwq_chain_link(kwq_bucket(q, hash[i]), keys[i].key,
				      keys[i].len, hash[i]);
		node = *link;
		*err = kwq_held_by(q, node, hash[i], keys[i].len, owner,
				   false);
		if (*err)
			break;
		*ready += kwq_finish(q, node, link, now);
	}
	return i;
}

/*
 * For dev.c: see kwq_internal.h. Finish processing keys leased to
 * @owner or detached (no owner), in order, stopping at the first that
 * is neither.
 */
int kwq_done_keys(struct kwq *q, const struct kwq_key *keys, unsigned int nr,
		  void *owner, unsigned int *done)
{
	u32 hash[KWQ_BATCH_CHUNK] __uninitialized;
	unsigned int n, k = 0, ready;
	unsigned long flags;
	int ret = 0;

	*done = 0;
	if (!q || !kwq_keys_ok(keys, nr))
		return -EINVAL;
	while (k < nr && !ret) {
		n = min_t(unsigned int, nr - k, KWQ_BATCH_CHUNK);
		kwq_hash_keys(q, keys + k, n, hash);
		ready = 0;
		spin_lock_irqsave(&q->lock, flags);
		n = kwq_done_keys_locked(q, keys + k, hash, n, owner,
					 kwq_now(q), &ready, &ret);
		kwq_unlock(q, flags, ready);
		k += n;
	}
	*done = k;
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(kwq_done_keys);

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
 * Under q->lock: the link to the processing node @item leases (*link is
 * the node); NULL for a stale lease.
 */
static __always_inline struct kwq_node **
kwq_lease_link(struct kwq *q, const struct kwq_item *item)
{
	struct kwq_node **pp, *n;

	/* Only nodes still in the hash are looked at, never item->node. */
	for (pp = kwq_bucket(q, item->hash); (n = *pp); pp = &n->hnext)
		if (n == item->node)
			return n->state == KWQ_PROCESSING &&
			       n->lease == item->lease ? pp : NULL;
	return NULL;
}

static void kwq_lease_fill(const struct kwq_node *n, struct kwq_item *item)
{
	item->key = n->key;
	item->len = n->key_len;
	item->priority = n->prio;
	item->hash = kwq_node_hash(n);
	item->node = n;
	item->lease = n->lease;
	item->queued_ns = n->queued_ns;
}

/*
 * Under q->lock: hand the next ready key out into @item, with a deadline
 * @timeout_ns from @now (0: none). 1 if taken, 0 if none is ready,
 * -ENOMEM if its deadline could not be recorded (nothing taken). With
 * @room (struct kwq_get_ctl), -EMSGSIZE if its record does not fit there
 * (nothing taken, *@room then 0), else its record's size is taken off.
 */
static __always_inline int kwq_take_locked(struct kwq *q, void *owner,
					   u64 now, u64 timeout_ns,
					   struct kwq_item *item, u32 *room)
{
	struct rb_node *rb = rb_first_cached(&q->levels);
	struct kwq_due *d = NULL;
	struct kwq_level *l;
	struct kwq_node *n;

	if (!rb)
		return 0;
	l = rb_entry(rb, struct kwq_level, ready_rb);
	n = list_first_entry(&l->fifo, struct kwq_node, fifo);
	if (room) {
		if (KWQ_REC_SIZE(n->key_len) > *room) {
			*room = 0;
			return -EMSGSIZE;
		}
		*room -= KWQ_REC_SIZE(n->key_len);
	}
	if (unlikely(timeout_ns)) {
		d = kwq_due_alloc(q);
		if (!d)
			return -ENOMEM;
	}
	kwq_level_unlink(q, l, n);
	/*
	 * Never 0, so a zeroed struct kwq_item leases nothing; the top bit
	 * set, so no delay-tree sequence left in the union passes for one
	 * (kwq_seen_lockless() tells processing stays apart by it).
	 */
	n->lease = ++q->lease_seq | KWQ_LEASE_TAG;
	n->start_ns = now;
	/*
	 * A deadline remembered while ready is run by this get if it has
	 * passed, else once done, as if add_after came now.
	 */
	WRITE_ONCE(n->requeue, KWQ_REQUEUE_NONE);
	if (n->deadline > now) {
		WRITE_ONCE(n->requeue, KWQ_REQUEUE_DELAYED);
		kwq_prio_set(q, &n->requeue_prio, n->prio);
	} else {
		n->deadline = 0;
	}
	/*
	 * A full barrier after the state, paired with the one in
	 * kwq_seen_lockless(): an add that found the key ready (or already
	 * due to run again) and returned made its caller's writes visible
	 * to whoever processes the key now, as the workqueue's PENDING bit
	 * does.
	 */
	smp_store_mb(n->state, KWQ_PROCESSING);
	/* Over ->ready_epoch: only once the node is no longer READY. */
	n->owner = owner;
	q->start_ns_sum += now;
	kwq_hist_observe(&q->queue_hist, kwq_since(now, n->queued_ns));
	trace_key_taken(q, n->key, n->key_len, kwq_since(now, n->queued_ns),
			n->prio, 0);
	kwq_lease_fill(n, item);
	/* Over ->queued_ns, which the lease keeps. */
	kwq_processing_link(q, n, now, timeout_ns, d);
	return 1;
}

/*
 * Under q->lock: take up to @max ready keys into @items, each copied out
 * through @ctl's hook if any, while their records fit in @ctl's room (if
 * any); how many, or -EAGAIN if none is ready, -ESHUTDOWN if none ever
 * will be, -EMSGSIZE if the first key's record does not fit.
 */
static int kwq_take_n_locked(struct kwq *q, void *owner, u64 now,
			     struct kwq_item *items, unsigned int max,
			     const struct kwq_get_ctl *ctl)
{
	u64 timeout = kwq_timeout_of(q, ctl ? ctl->processing_timeout_ns : 0);
	unsigned int n = 0;
	int ret = 0;

	kwq_refs_splice(q);
	while (n < max &&
	       (ret = kwq_take_locked(q, owner, now, timeout, &items[n],
				      ctl ? ctl->room : NULL)) > 0) {
		if (ctl && ctl->copy)
			ctl->copy(ctl->arg, &items[n]);
		n++;
	}
	if (n)
		return n;
	if (ret < 0)
		return ret;
	return q->shutting_down ? -ESHUTDOWN : -EAGAIN;
}

/*
 * Take up to @max ready keys, KWQ_WALK_CHUNK per critical section (q->lock
 * dropped in between, without sleeping: any context may call this): how
 * many, or kwq_take_n_locked()'s error if none was taken. Getters that
 * run meanwhile take keys in between; each key is still handed out once.
 */
static int kwq_try_get(struct kwq *q, void *owner, struct kwq_item *items,
		       unsigned int max, const struct kwq_get_ctl *ctl)
{
	unsigned int want, taken = 0;
	unsigned long flags;
	int ret;

	do {
		want = min(max - taken, (unsigned int)KWQ_WALK_CHUNK);
		spin_lock_irqsave(&q->lock, flags);
		ret = kwq_take_n_locked(q, owner, kwq_now(q), items + taken,
					want, ctl);
		spin_unlock_irqrestore(&q->lock, flags);
		if (ret > 0)
			taken += ret;
	} while (ret == (int)want && taken < max);
	return taken ?: ret;
}

/*
 * Sleep until keys are taken (how many), the queue is shut down and
 * empty, a signal arrives, *@expires (NULL: never) passes or @ctl's abort
 * flag (if any) is seen true after kwq_wake_all() (-EIDRM). Getters wait
 * exclusively: a key made ready wakes one of them, not all (the adds
 * wake as many as they made keys ready: wake_up_nr in kwq_unlock()).
 */
static int kwq_get_wait(struct kwq *q, void *owner, ktime_t *expires,
			struct kwq_item *items, unsigned int max,
			const struct kwq_get_ctl *ctl)
{
	const bool *abort = ctl ? ctl->abort : NULL;
	unsigned long flags;
	DEFINE_WAIT(wait);
	bool ready;
	int got;

	for (;;) {
		prepare_to_wait_exclusive(&q->get_wq, &wait,
					  TASK_INTERRUPTIBLE);
		/* Pairs with the store before kwq_wake_all(). */
		if (abort && READ_ONCE(*abort)) {
			got = -EIDRM;
			break;
		}
		got = kwq_try_get(q, owner, items, max, ctl);
		if (got != -EAGAIN)
			break;
		if (signal_pending(current)) {
			got = -ERESTARTSYS;
			break;
		}
		if (!expires) {
			schedule();
		} else if (!schedule_hrtimeout(expires, HRTIMER_MODE_ABS)) {
			got = kwq_try_get(q, owner, items, max, ctl);
			if (got == -EAGAIN)
				got = -ETIMEDOUT;
			break;
		}
	}
	finish_wait(&q->get_wq, &wait);
	if (got > 0 || got == -ESHUTDOWN)
		return got;
	/*
	 * Leaving without a key: a wake-up meant for this getter may have
	 * been spent on it. Hand it on while keys are ready, or a ready
	 * key could sit while other getters sleep.
	 */
	spin_lock_irqsave(&q->lock, flags);
	ready = q->nr_ready;
	spin_unlock_irqrestore(&q->lock, flags);
	if (ready)
		wake_up(&q->get_wq);
	return got;
}

/* Whether @ctl's room, if any, can still take the smallest record. */
static bool kwq_room_left(const struct kwq_get_ctl *ctl)
{
	return !ctl || !ctl->room || *ctl->room >= KWQ_REC_SIZE(1);
}

/* For dev.c: kwq_get_batch() as @ctl says; see kwq_internal.h. */
int kwq_get_batch_ctl(struct kwq *q, void *owner, unsigned int flags,
		      s64 timeout_ns, struct kwq_item *items,
		      unsigned int min_nr, unsigned int max_nr,
		      const struct kwq_get_ctl *ctl)
{
	ktime_t deadline, *expires = NULL;
	unsigned int n;
	int got;

	if (!q || !items || !max_nr || min_nr > max_nr ||
	    (flags & ~KWQ_GET_NONBLOCK))
		return -EINVAL;
	got = kwq_try_get(q, owner, items, max_nr, ctl);
	if ((flags & KWQ_GET_NONBLOCK) || !timeout_ns)
		return got;
	if (got == -EAGAIN || (got > 0 && got < min_nr)) {
		might_sleep();
		if (timeout_ns > 0) {
			deadline = ktime_add_ns(ktime_get(), timeout_ns);
			expires = &deadline;
		}
		kwq_get_ref(q);
		if (got == -EAGAIN)
			got = kwq_get_wait(q, owner, expires, items, max_nr,
					   ctl);
		/*
		 * Fewer than @min_nr: take more as they come, until the
		 * timeout, while there is room for them.
		 */
		n = max(got, 0);
		while (got > 0 && n < min_nr && kwq_room_left(ctl)) {
			got = kwq_get_wait(q, owner, expires, items + n,
					   max_nr - n, ctl);
			if (got > 0)
				n += got;
		}
		kwq_put(q);
		if (n)
			return n;
	}
	return got;
}
EXPORT_SYMBOL_IF_KUNIT(kwq_get_batch_ctl);

int kwq_get_batch(struct kwq *q, void *owner, unsigned int flags,
		  s64 timeout_ns, struct kwq_item *items, unsigned int min_nr,
		  unsigned int max_nr)
{
	return kwq_get_batch_ctl(q, owner, flags, timeout_ns, items, min_nr,
				 max_nr, NULL);
}
EXPORT_SYMBOL_GPL(kwq_get_batch);

int kwq_get(struct kwq *q, void *owner, unsigned int flags, s64 timeout_ns,
	    struct kwq_item *item)
{
	unsigned long irqflags;
	int got;

	if (!q || !item || (flags & ~KWQ_GET_NONBLOCK))
		return -EINVAL;
	/* A key ready: one critical section, as a worker loop mostly finds. */
	spin_lock_irqsave(&q->lock, irqflags);
	kwq_refs_splice(q);
	got = kwq_take_locked(q, owner, kwq_now(q), q->processing_timeout_ns,
			      item, NULL);
	spin_unlock_irqrestore(&q->lock, irqflags);
	if (got)
		return min(got, 0);
	got = kwq_get_batch(q, owner, flags, timeout_ns, item, 1, 1);
	return got > 0 ? 0 : got;
}
EXPORT_SYMBOL_GPL(kwq_get);

int kwq_done_batch(struct kwq *q, const struct kwq_item *items,
		   unsigned int nr, unsigned int *done)
{
	unsigned int i, ready = 0;
	struct kwq_node **link;
	unsigned long flags;
	int ret = 0;
	u64 now;

	if (done)
		*done = 0;
	if (!q || (nr && !items))
		return -EINVAL;
	spin_lock_irqsave(&q->lock, flags);
	kwq_refs_splice(q);
	now = kwq_now(q);
	for (i = 0; i < nr; i++) {
		link = kwq_lease_link(q, &items[i]);
		if (!link) {
			ret = -ESTALE;
			break;
		}
		ready += kwq_finish(q, *link, link, now);
	}
	kwq_unlock(q, flags, ready);
	if (done)
		*done = i;
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_done_batch);

int kwq_done(struct kwq *q, const struct kwq_item *item)
{
	struct kwq_node **link;
	unsigned long flags;
	bool ready = false;
	int ret = -ESTALE;

	if (!q || !item)
		return -EINVAL;
	spin_lock_irqsave(&q->lock, flags);
	/* Adds by handle before the done: a dirty key is requeued. */
	kwq_refs_splice(q);
	link = kwq_lease_link(q, item);
	if (link) {
		ready = kwq_finish(q, *link, link, kwq_now(q));
		ret = 0;
	}
	kwq_unlock(q, flags, ready);
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_done);

int kwq_done_get(struct kwq *q, void *owner, unsigned int flags,
		 s64 timeout_ns, struct kwq_item *item)
{
	unsigned int ready = 0;
	struct kwq_node **link;
	unsigned long irqflags;
	int got;
	u64 now;

	if (!q || !item || (flags & ~KWQ_GET_NONBLOCK))
		return -EINVAL;
	spin_lock_irqsave(&q->lock, irqflags);
	kwq_refs_splice(q);
	now = kwq_now(q);
	if (item->lease) {
		link = kwq_lease_link(q, item);
		if (!link) {
			spin_unlock_irqrestore(&q->lock, irqflags);
			return -ESTALE;
		}
		ready = kwq_finish(q, *link, link, now);
	}
	/*
	 * No wake-up if a key is taken: a key the done made ready is taken
	 * here (this or one before it), so no more keys are ready than
	 * before. If none could be, one the done made ready wakes a getter.
	 */
	got = kwq_take_locked(q, owner, now, q->processing_timeout_ns, item,
			      NULL);
	kwq_unlock(q, irqflags, got > 0 ? 0 : ready);
	if (got > 0)
		return 0;
	memset(item, 0, sizeof(*item));
	if (got < 0)
		return got;
	got = kwq_get_batch(q, owner, flags, timeout_ns, item, 1, 1);
	return got > 0 ? 0 : got;
}
EXPORT_SYMBOL_GPL(kwq_done_get);

/*
 * For dev.c: see kwq_internal.h. kwq_done_keys(), then, once every key
 * is finished, what kwq_try_get() does, in the critical section of the
 * last keys: a worker's cycle takes the queue lock once, not twice.
 */
int kwq_done_keys_take(struct kwq *q, const struct kwq_key *keys,
		       unsigned int nr, void *owner, unsigned int *done,
		       void *get_owner, struct kwq_item *items,
		       unsigned int max, const struct kwq_get_ctl *ctl)
{
	u32 hash[KWQ_BATCH_CHUNK] __uninitialized;
	unsigned int k, n, ready = 0, taken = 0;
	unsigned long flags;
	int ret = 0;
	u64 now;

	*done = 0;
	if (!q || !items || !max || !kwq_keys_ok(keys, nr))
		return -EINVAL;
	/* All chunks but the last as kwq_done_keys() finishes them. */
	k = nr > KWQ_BATCH_CHUNK ? rounddown(nr - 1, KWQ_BATCH_CHUNK) : 0;
	if (k) {
		ret = kwq_done_keys(q, keys, k, owner, done);
		if (ret)
			return ret;
	}
	n = nr - k;
	kwq_hash_keys(q, keys + k, n, hash);
	spin_lock_irqsave(&q->lock, flags);
	now = kwq_now(q);
	n = kwq_done_keys_locked(q, keys + k, hash, n, owner, now, &ready,
				 &ret);
	/* A done that failed takes nothing: the earlier keys stay finished. */
	if (!ret) {
		ret = kwq_take_n_locked(q, get_owner, now, items, max, ctl);
		taken = max(ret, 0);
	}
	/*
	 * Wake getters only for the keys made ready here and not taken
	 * here, as kwq_done_get() reasons: no more keys are ready than
	 * before for the others.
	 */
	kwq_unlock(q, flags, ready > taken ? ready - taken : 0);
	*done = k + n;
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(kwq_done_keys_take);

int kwq_done_key(struct kwq *q, const void *key, size_t len, void *owner)
{
	struct kwq_node *n;
	unsigned long flags;
	bool wake = false;
	int ret = 0;
	u32 hash;

	if (!q || !kwq_key_ok(key, len))
		return -EINVAL;
	hash = kwq_hash(q, key, len);
	spin_lock_irqsave(&q->lock, flags);
	n = kwq_lookup(q, key, len, hash);
	ret = kwq_held_by(q, n, hash, len, owner, true);
	if (!ret)
		wake = kwq_finish(q, n, NULL, kwq_now(q));
	kwq_unlock(q, flags, wake);
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_done_key);

/*
 * Return processing @n to the queue: a lease return. True if it went back
 * to the ready queue, false if it died there (its last retry failed).
 */
static bool kwq_return_lease(struct kwq *q, struct kwq_node *n, u64 now)
{
	kwq_processing_unlink(q, n);
	q->start_ns_sum -= n->start_ns;
	n->owner = NULL;
	q->lease_returns++;
	/* A key that failed its last retry dies, returned or not. */
	if (kwq_bury_dying(q, n))
		return false;
	if (n->requeue != KWQ_REQUEUE_NONE)
		kwq_prio_set(q, &n->prio, max(n->prio, n->requeue_prio));
	kwq_set_requeue(q, n, KWQ_REQUEUE_NONE, now);
	kwq_make_ready(q, n, n->prio, now);
	return true;
}

/*
 * Under q->lock: give processing @n a deadline @timeout_ns (0: none) from
 * now on. -ENOMEM (nothing changed) if a new deadline cannot be recorded.
 */
static int kwq_due_move(struct kwq *q, struct kwq_node *n, u64 timeout_ns)
{
	struct kwq_due *d = n->due;

	if (d) {
		kwq_due_erase(q, n);
		if (!timeout_ns) {
			kwq_due_release(q, d);
			kwq_timer_update(q);
			return 0;
		}
	} else if (timeout_ns) {
		d = kwq_due_alloc(q);
		if (!d)
			return -ENOMEM;
	} else {
		return 0;
	}
	/* Re-arms the timer if the new deadline is the first. */
	kwq_due_insert(q, n, d, kwq_now(q), timeout_ns);
	return 0;
}

int kwq_touch(struct kwq *q, const struct kwq_item *item, u64 timeout_ns)
{
	struct kwq_node **link;
	unsigned long flags;
	int ret = -ESTALE;

	if (!q || !item || !kwq_timeout_ok(timeout_ns))
		return -EINVAL;
	spin_lock_irqsave(&q->lock, flags);
	link = kwq_lease_link(q, item);
	if (link)
		ret = kwq_due_move(q, *link, kwq_timeout_of(q, timeout_ns));
	spin_unlock_irqrestore(&q->lock, flags);
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_touch);

/* For dev.c: see kwq_internal.h. */
int kwq_touch_key(struct kwq *q, const void *key, size_t len, void *owner,
		  u64 timeout_ns)
{
	struct kwq_node *n;
	unsigned long flags;
	u32 hash;
	int ret;

	if (!q || !kwq_key_ok(key, len) || !kwq_timeout_ok(timeout_ns))
		return -EINVAL;
	hash = kwq_hash(q, key, len);
	spin_lock_irqsave(&q->lock, flags);
	n = kwq_lookup(q, key, len, hash);
	ret = kwq_held_by(q, n, hash, len, owner, false);
	if (!ret)
		ret = kwq_due_move(q, n, kwq_timeout_of(q, timeout_ns));
	spin_unlock_irqrestore(&q->lock, flags);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(kwq_touch_key);

/*
 * Return @owner's processing keys, KWQ_WALK_CHUNK list entries per
 * critical section; between them q->lock is dropped and, if @may_sleep,
 * cond_resched() called. The cursor is @mark, an entry of the processing
 * list that is no key (lease 0: kwq_get_stats() and other walks pass
 * over marks), moved past each entry looked at: nodes before and after
 * it may come and go while the lock is dropped, the mark stays where the
 * walk is. The list is in lease order, so the walk ends at the first
 * lease handed out after it began: every key @owner held then is
 * returned once (none twice: a returned key leaves the list); keys
 * @owner gets while the walk runs may or may not be. It never ends
 * early, not even for a fatal signal: a lease it skipped would never end.
 */
static int kwq_release_walk(struct kwq *q, void *owner, bool may_sleep)
{
	struct kwq_node mark = { .lease = 0 }, *n;
	unsigned int i, ready;
	unsigned long flags;
	int count = 0;
	bool end;
	u64 now, last;

	if (!q || !owner)
		return -EINVAL;
	spin_lock_irqsave(&q->lock, flags);
	last = q->lease_seq | KWQ_LEASE_TAG;
	list_add(&mark.link, &q->processing);
	for (;;) {
		now = kwq_now(q);
		ready = 0;
		end = false;
		for (i = 0; i < KWQ_WALK_CHUNK; i++) {
			n = list_next_entry(&mark, link);
			end = list_entry_is_head(n, &q->processing, link) ||
			      n->lease > last;
			if (end)
				break;
			list_move(&mark.link, &n->link);
			/* Another walk's mark has lease 0 and owner NULL. */
			if (n->lease && n->owner == owner)
				ready += kwq_return_lease(q, n, now);
		}
		count += ready;
		if (end) {
			list_del(&mark.link);
			/*
			 * A later owner at the same address starts with no
			 * revoked lease.
			 */
			if (q->nr_tombs)
				kwq_tomb_forget(q, owner);
		}
		kwq_unlock(q, flags, ready);
		if (end)
			return count;
		if (may_sleep)
			cond_resched();
		spin_lock_irqsave(&q->lock, flags);
	}
}

int kwq_release_owner(struct kwq *q, void *owner)
{
	return kwq_release_walk(q, owner, false);
}
EXPORT_SYMBOL_GPL(kwq_release_owner);

/* For dev.c: see kwq_internal.h. */
int kwq_release_owner_sleep(struct kwq *q, void *owner)
{
	return kwq_release_walk(q, owner, true);
}

/* For dev.c: see kwq_internal.h. */
void kwq_unget(struct kwq *q, const struct kwq_item *item)
{
	struct kwq_node **link, *n;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	link = kwq_lease_link(q, item);
	n = link ? *link : NULL;
	if (!n) {
		/* Finished meanwhile (through the same file): nothing to undo. */
		spin_unlock_irqrestore(&q->lock, flags);
		return;
	}
	kwq_processing_unlink(q, n);
	q->start_ns_sum -= n->start_ns;
	/* The get did not happen: take its queue duration back. */
	n->queued_ns = item->queued_ns;
	kwq_hist_unobserve(&q->queue_hist,
			   kwq_since(n->start_ns, n->queued_ns));
	n->owner = NULL;
	if (kwq_bury_dying(q, n)) {
		kwq_unlock(q, flags, 0);
		return;
	}
	if (n->requeue != KWQ_REQUEUE_NONE)
		kwq_prio_set(q, &n->prio, max(n->prio, n->requeue_prio));
	kwq_set_requeue(q, n, KWQ_REQUEUE_NONE, 0);
	/* Back where get took it from; queued_ns stays the original. */
	kwq_ready_insert(q, n, n->prio, true);
	kwq_unlock(q, flags, 1);
}
EXPORT_SYMBOL_IF_KUNIT(kwq_unget);

/* For dev.c: see kwq_internal.h. */
wait_queue_head_t *kwq_get_waitqueue(struct kwq *q)
{
	return &q->get_wq;
}

__poll_t kwq_poll(struct kwq *q)
{
	unsigned long flags;
	__poll_t mask = 0;

	spin_lock_irqsave(&q->lock, flags);
	kwq_refs_splice(q);
	if (q->nr_ready)
		mask = EPOLLIN | EPOLLRDNORM;
	else if (q->shutting_down)
		mask = EPOLLHUP;
	spin_unlock_irqrestore(&q->lock, flags);
	return mask;
}
EXPORT_SYMBOL_IF_KUNIT(kwq_poll);

/*
 * Reject adds and drop waiting keys, KWQ_WALK_CHUNK per critical section:
 * q->lock is dropped in between (the expiry leaves the waiting keys of a
 * queue shutting down alone, and nothing adds to them), the nodes freed
 * so far go back to their caches (nobody is woken before the end), and
 * cond_resched() is called if @may_sleep. Every waiting key is dropped:
 * no signal ends this early.
 */
static void kwq_shutdown_locked(struct kwq *q, bool drain, bool may_sleep,
				unsigned long *flags)
	__must_hold(&q->lock)
{
	struct kwq_node *n, *freed;
	u64 dropped = 0;
	unsigned int i;

	/* The adds by handle that came before are applied, as adds. */
	kwq_refs_splice(q);
	WRITE_ONCE(q->shutting_down, true);
	for (;;) {
		for (i = 0; i < KWQ_WALK_CHUNK && (n = kwq_wait_any(q)); i++) {
			kwq_wait_unlink(q, n);
			kwq_release_node(q, n, NULL);
		}
		dropped += i;
		q->dropped_at_shutdown += i;
		if (i < KWQ_WALK_CHUNK)
			break;
		freed = q->free_list;
		q->free_list = NULL;
		spin_unlock_irqrestore(&q->lock, *flags);
		kwq_nodes_free(freed);
		if (may_sleep)
			cond_resched();
		spin_lock_irqsave(&q->lock, *flags);
	}
	kwq_timer_update(q);
	trace_queue_shutdown(q, drain, dropped, q->nr_ready, q->nr_processing);
}

static int kwq_shutdown_walk(struct kwq *q, bool may_sleep)
{
	unsigned long flags;

	if (!q)
		return -EINVAL;
	spin_lock_irqsave(&q->lock, flags);
	kwq_shutdown_locked(q, false, may_sleep, &flags);
	q->shutdown_seq++;
	kwq_unlock(q, flags, 0);
	wake_up_all(&q->get_wq);
	wake_up_all(&q->drain_wq);
	return 0;
}

int kwq_shutdown(struct kwq *q)
{
	return kwq_shutdown_walk(q, false);
}
EXPORT_SYMBOL_GPL(kwq_shutdown);

/* For dev.c: see kwq_internal.h. */
int kwq_shutdown_sleep(struct kwq *q)
{
	return kwq_shutdown_walk(q, true);
}

static bool kwq_drain_over(struct kwq *q, unsigned long seq, int *res)
{
	unsigned long flags;
	bool over = true;

	spin_lock_irqsave(&q->lock, flags);
	if (!q->nr_ready && !q->nr_processing)
		*res = 0;
	else if (q->shutdown_seq != seq)
		*res = -ECANCELED;
	else
		over = false;
	spin_unlock_irqrestore(&q->lock, flags);
	return over;
}

int kwq_shutdown_drain(struct kwq *q)
{
	unsigned long flags, seq;
	int ret, res = 0;

	if (!q)
		return -EINVAL;
	might_sleep();
	spin_lock_irqsave(&q->lock, flags);
	kwq_shutdown_locked(q, true, true, &flags);
	seq = q->shutdown_seq;
	kwq_unlock(q, flags, 0);
	wake_up_all(&q->get_wq);

	kwq_get_ref(q);
	ret = wait_event_interruptible(q->drain_wq,
				       kwq_drain_over(q, seq, &res));
	kwq_put(q);
	return ret ? ret : res;
}
EXPORT_SYMBOL_GPL(kwq_shutdown_drain);

/* For ring.c: see kwq_internal.h. */
void kwq_set_ready_mirror(struct kwq *q, u64 *mirror)
{
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	q->ready_mirror = mirror ?: &q->ready_sink;
	WRITE_ONCE(*q->ready_mirror, q->nr_ready);
	spin_unlock_irqrestore(&q->lock, flags);
}

bool kwq_shutting_down(struct kwq *q)
{
	return !q || READ_ONCE(q->shutting_down);
}
EXPORT_SYMBOL_GPL(kwq_shutting_down);

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

/* --- lifetime (the registry of names: registry.c) --- */

/* Process context: waits for the timer callback and the resize work. */
static void kwq_free(struct kwq *q)
{
	hrtimer_cancel(&q->timer);
	kwq_delay_free(q);
	kwq_due_free_all(q);
	kfree(q->tombs);
	kwq_table_free(q);
	kwq_levels_free(q);
	kwq_budget_uncharge(q->budget, NULL, q->charged);
	kwq_budget_put(q->budget);
	mem_cgroup_put(q->memcg);
	kfree(q);
}

/*
 * For dev.c and registry.c: see kwq_internal.h. A queue starts anonymous;
 * kwq_create() (registry.c) then enters it in the registry of names.
 */
struct kwq *kwq_create_anon(const char *name, const struct kwq_config *cfg,
			    struct kwq_budget *budget)
{
	static const struct kwq_config defaults;
	const struct kwq_clock *clock;
	gfp_t account;
	struct kwq *q;
	int ret;

	if (!kwq_name_ok(name))
		return ERR_PTR(-EINVAL);
	if (!cfg)
		cfg = &defaults;
	if (cfg->flags & ~KWQ_CONFIG_CHARGE_CALLER ||
	    cfg->max_retries > KWQ_MAX_RETRIES_MAX ||
	    cfg->max_dead > KWQ_MAX_DEAD_MAX ||
	    (cfg->max_dead && !cfg->max_retries) ||
	    (cfg->processing_timeout_ns &&
	     (cfg->processing_timeout_ns < KWQ_PROCESSING_TIMEOUT_MIN_NS ||
	      cfg->processing_timeout_ns > KWQ_PROCESSING_TIMEOUT_MAX_NS)))
		return ERR_PTR(-EINVAL);
	clock = cfg->clock ?: &kwq_real_clock;
	if (!clock->now || !clock->arm || !clock->cancel)
		return ERR_PTR(-EINVAL);
	might_sleep();

	/* Charging the caller: the queue and its table go to the creator. */
	account = cfg->flags & KWQ_CONFIG_CHARGE_CALLER ? __GFP_ACCOUNT : 0;
	q = kzalloc(sizeof(*q), GFP_KERNEL | account);
	if (!q)
		return ERR_PTR(-ENOMEM);
	/* All that kwq_free() undoes is set up before the first failure. */
	q->gfp_account = account;
	/*
	 * The memcg that kzalloc(__GFP_ACCOUNT) above charged: the creating
	 * task's, as for any accounted allocation. The grow and wheel work
	 * charge it later; NULL without memcg. This and the signal check of
	 * a sleeping get are the core's only uses of current.
	 */
	if (account)
		q->memcg = get_mem_cgroup_from_mm(current->mm);
	spin_lock_init(&q->lock);
	refcount_set(&q->ref, 1);
	INIT_LIST_HEAD(&q->registry);
	q->anon = true;
	q->ready_mirror = &q->ready_sink;
	/* The queue's charges go back to @budget when it is freed. */
	q->budget = budget;
	if (budget)
		refcount_inc(&budget->ref);
	strscpy(q->name, name, sizeof(q->name));
	kwq_levels_init(q);
	kwq_delay_init(q);
	INIT_LIST_HEAD(&q->processing);
	q->due = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&q->idle);
	INIT_LIST_HEAD(&q->dead);
	q->max_retries = cfg->max_retries;
	q->max_dead = cfg->max_dead ?: KWQ_DEFAULT_MAX_DEAD;
	q->cursor_tag = (get_random_u32() & 0xffff) | 1;
	q->clock = clock;
	q->max_items = cfg->max_items;
	q->processing_timeout_ns = cfg->processing_timeout_ns;
	q->max_failure_records = cfg->max_failure_records ?:
				 KWQ_DEFAULT_FAILURE_RECORDS;
	init_llist_head(&q->ref_adds);
	q->pins = RB_ROOT;
	init_waitqueue_head(&q->get_wq);
	init_waitqueue_head(&q->drain_wq);
	kwq_real_clock_setup(q);

	ret = -EDQUOT;
	if (!kwq_charge(q, kwq_alloc_bytes(sizeof(*q))))
		goto err_free;
	ret = kwq_limiters_init(&q->limiters, cfg, clock->now(clock));
	if (ret)
		goto err_free;
	ret = kwq_table_alloc(q, cfg->max_items);
	if (ret)
		goto err_free;
	return q;

err_free:
	kwq_free(q);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_IF_KUNIT(kwq_create_anon);

/* For dev.c: wake every getter and poller; see kwq_internal.h. */
void kwq_wake_all(struct kwq *q)
{
	wake_up_all(&q->get_wq);
}
EXPORT_SYMBOL_IF_KUNIT(kwq_wake_all);

/* For registry.c: see queue.h. */
void kwq_retire(struct kwq *q)
{
	unsigned long flags;

	kwq_shutdown_walk(q, true);
	spin_lock_irqsave(&q->lock, flags);
	q->clock->cancel(q->clock, q);
	q->timer_deadline = KWQ_NO_DEADLINE;
	spin_unlock_irqrestore(&q->lock, flags);
	hrtimer_cancel(&q->timer);
	kwq_put_sync(q);
}

void kwq_get_ref(struct kwq *q)
{
	refcount_inc(&q->ref);
}
EXPORT_SYMBOL_GPL(kwq_get_ref);

/*
 * Queues whose last reference was dropped where sleeping is not allowed,
 * freed by kwq_free_work; kwq_core_exit() waits for it.
 */
static LLIST_HEAD(kwq_free_list);

static void kwq_free_fn(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&kwq_free_list);
	struct kwq *q, *tmp;

	llist_for_each_entry_safe(q, tmp, list, free_node)
		kwq_free(q);
}

static DECLARE_WORK(kwq_free_work, kwq_free_fn);

void kwq_put(struct kwq *q)
{
	if (!q || !refcount_dec_and_test(&q->ref))
		return;
	/* The first queue on the list schedules the work (delayed_fput). */
	if (llist_add(&q->free_node, &kwq_free_list))
		schedule_work(&kwq_free_work);
}
EXPORT_SYMBOL_GPL(kwq_put);

/* For dev.c: see kwq_internal.h. */
void kwq_put_sync(struct kwq *q)
{
	might_sleep();
	if (q && refcount_dec_and_test(&q->ref))
		kwq_free(q);
}

const char *kwq_name(const struct kwq *q)
{
	return q ? q->name : NULL;
}
EXPORT_SYMBOL_GPL(kwq_name);

int kwq_core_init(void)
{
	kwq_clock_init(kwq_clock_expired);
	kwq_hist_init();
	return kwq_table_init();
}

void kwq_core_exit(void)
{
	/* Queues put last from atomic context; freeing queues no others. */
	flush_work(&kwq_free_work);
	kwq_table_exit();
}
