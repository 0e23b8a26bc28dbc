/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The state machine's own header: what its files (queue.c, lease.c,
 * deadline.c, dead.c, handle.c, lifetime.c) share and no other
 * file needs. The steps of a key's state that more than one of them
 * takes, inline where a hot path (add, get, done, the expiry) takes them,
 * so that the split into files costs no call; and the calls from one of
 * them to another. All under q->lock unless said otherwise. The layout
 * they work on is layout.h's.
 */
#ifndef _KWQ_QUEUE_H
#define _KWQ_QUEUE_H

#include <linux/kwq.h>
#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/wait.h>

#include "layout.h"
#include "delay.h"
#include "ready.h"
#include "stats.h"
#include "table.h"
#include "kwq_trace.h"

/*
 * queue.c: under q->lock, apply the adds by handle not yet applied, in
 * the order they came. Before anything that reads or changes what an add
 * affects.
 */
void kwq_refs_apply(struct kwq *q);

static __always_inline void kwq_refs_splice(struct kwq *q)
{
	if (unlikely(!llist_empty(&q->ref_adds)))
		kwq_refs_apply(q);
}

/* lifetime.c, for registry.c */
bool kwq_name_ok(const char *name);
/*
 * What kwq_destroy() does once the name is gone: shut the queue down,
 * stop its clock and drop the creator's reference (process context).
 */
void kwq_retire(struct kwq *q);

/* Keys hashed and nodes preallocated per critical section of a batch. */
#define KWQ_BATCH_CHUNK		KWQ_BULK

/* queue.c: node state transitions, lookups and batches, for the others */
void kwq_node_keep(struct kwq *q, struct kwq_node *n);
void kwq_dead_unlink(struct kwq *q, struct kwq_node *n);
void kwq_fail_clear(struct kwq *q, struct kwq_node *n);
bool kwq_bury_dying(struct kwq *q, struct kwq_node *n);
struct kwq_node *kwq_lock_lookup(struct kwq *q, const void *key,
				 size_t len, unsigned long *flags)
	__acquires(&q->lock);
bool kwq_keys_ok(const struct kwq_key *keys, unsigned int nr);
void kwq_hash_keys(const struct kwq *q, const struct kwq_key *keys,
		   unsigned int n, u32 *hash);

/* deadline.c: processing deadlines and revoked leases */
bool kwq_tomb_find(const struct kwq *q, const void *owner, u32 hash,
		   size_t len);
void kwq_tomb_add(struct kwq *q, const void *owner,
		  const struct kwq_node *n);
void kwq_tomb_forget(struct kwq *q, const void *owner);
struct kwq_due *kwq_due_alloc(struct kwq *q);
void kwq_due_release(struct kwq *q, struct kwq_due *d);
void kwq_due_free_all(struct kwq *q);
void kwq_due_insert(struct kwq *q, struct kwq_node *n,
		    struct kwq_due *d, u64 now, u64 timeout_ns);
struct kwq_due *kwq_due_erase(struct kwq *q, struct kwq_node *n);
u64 kwq_timeout_of(const struct kwq *q, u64 timeout_ns);
bool kwq_timeout_ok(u64 timeout_ns);
int kwq_due_move(struct kwq *q, struct kwq_node *n, u64 timeout_ns);

/* The steps of a key's state that several files take (under q->lock). */
static inline bool kwq_key_ok(const void *key, size_t len)
{
	return key && len && len <= KWQ_KEY_MAX;
}

/*
 * Set what done() does with processing @n, keeping nr_dirty (client-go's
 * depth counts dirty keys) and the time it became dirty (client-go
 * measures the queue duration from the first add).
 */
static inline void kwq_set_requeue(struct kwq *q, struct kwq_node *n,
				   enum kwq_requeue requeue, u64 now)
{
	if (requeue == KWQ_REQUEUE_READY && n->requeue != KWQ_REQUEUE_READY) {
		q->nr_dirty++;
		kwq_node_set_dirty_ns(n, now);
	} else if (requeue != KWQ_REQUEUE_READY &&
		   n->requeue == KWQ_REQUEUE_READY) {
		q->nr_dirty--;
		kwq_handle_unready(n);
	}
	WRITE_ONCE(n->requeue, requeue);
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

static inline void kwq_idle_unlink(struct kwq *q, struct kwq_node *n)
{
	/* A pinned node without failure record is in no list. */
	if (list_empty(&n->link))
		return;
	list_del(&n->link);
	q->nr_idle--;
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

static inline void kwq_make_ready(struct kwq *q, struct kwq_node *n, int prio,
				  u64 now)
{
	n->queued_ns = now;
	kwq_ready_push(q, n, prio);
}

static __always_inline void kwq_processing_unlink(struct kwq *q,
						  struct kwq_node *n)
{
	q->nr_processing--;
	list_del(&n->link);
	if (unlikely(kwq_node_has_due(n)))
		kwq_due_release(q, kwq_due_erase(q, n));
}

/*
 * End processing of @n: requeue it if it was added meanwhile. @pp: the
 * link to it, as for kwq_node_free().
 */
static __always_inline bool kwq_finish(struct kwq *q, struct kwq_node *n,
				       struct kwq_node **pp, u64 now)
{
	enum kwq_requeue requeue = n->requeue;
	u64 ready_ns;

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
	ready_ns = kwq_node_dirty_ns(n);
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

/* Chain links a lockless reader follows before it gives up. */
#define KWQ_LOCKLESS_HOPS	16

/* The stay of @n in its state, as kwq_seen_lockless() tells them apart */
static inline u64 kwq_stay(const struct kwq_node *n, u8 state)
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

#endif /* _KWQ_QUEUE_H */
