/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal layout of a kwq queue: the structures every component reads
 * (struct kwq, struct kwq_node, key handles, levels, deadline records)
 * and the queue's clock and charges, shared by the core's files (each
 * says which fields it owns). The components below the state machine
 * (table, ready, delay, stats, clock) depend on this header, not on the
 * state machine's (queue.h). Not an API: other modules use
 * include/linux/kwq.h.
 */
#ifndef _KWQ_LAYOUT_H
#define _KWQ_LAYOUT_H

#include <linux/hrtimer.h>
#include <linux/kwq.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/rbtree.h>
#include <linux/refcount.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "budget.h"
#include "limiter.h"

struct dentry;
struct kwq_budget;
struct mem_cgroup;

/*
 * Where a key is. The two states of keys not queued come first: an add
 * tells them from the others in one comparison (kwq_unqueued()).
 */
enum kwq_state {
	KWQ_DEAD,		/* in the dead set: failed max_retries times */
	KWQ_IDLE,		/* only a failure record is kept */
	KWQ_READY,		/* in a priority level's FIFO */
	KWQ_WAITING,		/* in the delay tree or wheel */
	KWQ_PROCESSING,		/* handed out by kwq_get() */
};

/* Neither queued nor processing: idle or dead. */
static inline bool kwq_unqueued(u8 state)
{
	return state <= KWQ_IDLE;
}

/* What done() does with a processing key that was added again. */
enum kwq_requeue {
	KWQ_REQUEUE_NONE,	/* release it */
	KWQ_REQUEUE_READY,	/* dirty: back to the FIFO tail */
	KWQ_REQUEUE_DELAYED,	/* add_after while processing: ->deadline */
	KWQ_REQUEUE_DEAD,	/* failed max_retries times: to the dead set */
};

struct kwq_due;

/*
 * One node per key. kwq_get() hands out leases on it (struct kwq_item),
 * told apart by ->lease, so the node itself never leaves kwq.
 *
 * A node is in one state at a time, and the links of a state share one
 * union with those of the others: every transition unlinks the node from
 * its old structure before it links it into the new one. A 16-byte key
 * makes a 104-byte object (84 bytes and the key, in the 104-byte cache).
 */
struct kwq_node {
	/*
	 * What a chain walk reads, in the node's first bytes: a lookup
	 * that passes over a node touches one cache line of it.
	 */
	struct kwq_node *hnext;		/* next in the hash bucket */
	/*
	 * The key's hash (kwq_node_hash()) and the two flags of key
	 * handles, KWQ_NODE_PINNED and KWQ_NODE_PENDING ("Key handles"
	 * below), in one word: a handle's add is one atomic operation on it,
	 * and nodes pay no byte for handles.
	 */
	atomic_t hword;
	u16 key_len;
	u8 state;			/* enum kwq_state */
	u8 requeue;			/* enum kwq_requeue */
	/* Each holds its level (ready.h: kwq_prio_set() writes them). */
	int prio;
	int requeue_prio;		/* priority of the pending requeue */
	union {
		/*
		 * READY: in its level's FIFO (struct kwq_level of ->prio);
		 * ->ready_epoch tells this stay in READY from any other
		 * (kwq_seen_lockless()).
		 */
		struct {
			struct list_head fifo;
			u64 ready_epoch;
		};
		/*
		 * WAITING: in the delay tree by ->delay_rb (->wslot 0) or in
		 * slot ->wslot - 1 of the delay wheel by ->wheel; ->seq
		 * breaks deadline ties.
		 */
		struct {
			union {
				struct rb_node delay_rb;
				struct hlist_node wheel;
			};
			u64 seq;
			u16 wslot;
		};
		/*
		 * PROCESSING: ->link in the processing list, in start order
		 * (and IDLE: ->link only, in the LRU; DEAD: ->link in the dead
		 * set, ->start_ns the time of the last failure)
		 */
		struct {
			struct list_head link;
			void *owner;		/* kwq_get()'s cookie */
			u64 lease;		/* which hand-out, never 0 */
			u64 start_ns;		/* clock time processing began */
		};
	};
	/*
	 * WAITING: when it becomes ready. READY and PROCESSING: a deadline
	 * add_after asked for, remembered for after the run; 0 if none.
	 */
	u64 deadline;
	union {
		/* READY: clock time it became ready */
		u64 queued_ns;
		/*
		 * PROCESSING: its processing deadline or a time, never both
		 * (kwq_node_due(), kwq_node_dirty_ns() below). The time it
		 * became ready went to the lease (kwq_item.queued_ns).
		 */
		u64 proc;
	};
	u32 failures;			/* rate limiter failure count */
	u8 key[];
};

/* The bits of kwq_node.hword: the hash (kwq_hash()), then the flags. */
#define KWQ_HASH_MASK		GENMASK(28, 0)
#define KWQ_NODE_PINNED		BIT(29)
#define KWQ_NODE_PENDING	BIT(30)

static __always_inline u32 kwq_node_hash(const struct kwq_node *n)
{
	return atomic_read(&n->hword) & KWQ_HASH_MASK;
}

/*
 * --- Key handles ---
 *
 * A kernel caller whose key lives as long as an object of its own pins
 * the key's node with kwq_key_get(): a pinned node stays in the hash
 * (IDLE, in no list, when nothing else keeps it), so kwq_add_ref() needs
 * neither the hash nor, mostly, q->lock. A key has one handle (struct
 * kwq_key_ref, in q->pins by node while it exists), counted: a second
 * kwq_key_get() of the key returns it again. Two bits of the node's
 * ->hword say so: PINNED (changed under q->lock, while the handle is in
 * q->pins) and PENDING, set and cleared with atomic read-modify-writes
 * from any context:
 *
 *   PENDING set => a plain add of the key at priority 0 would change
 *   nothing: the node is READY at a priority >= 0, or PROCESSING and
 *   dirty (KWQ_REQUEUE_READY) at a requeue priority >= 0, or an add by
 *   one of its handles is on q->ref_adds, not yet applied.
 *
 * PENDING clear says nothing: the add takes the slow way, which is
 * always right. So:
 *  - kwq_add_ref(): atomic_fetch_or(PENDING). Set before: the add is
 *    redundant, done (one atomic operation, no lock). Clear before: this
 *    add made it set, so it must reach the queue: the handle goes on
 *    q->ref_adds (llist_add(), unless its KWQ_REF_QUEUED bit says it is
 *    there already, not yet spliced) and one getter is woken.
 *  - Whoever takes q->lock to read or change what an add affects (get,
 *    done, len, stats, shutdown, remove, forget...) splices q->ref_adds
 *    first (kwq_refs_splice()) and applies each handle's add as kwq_add()
 *    would, clearing its QUEUED bit before.
 *  - Under q->lock, a node that leaves READY (kwq_level_unlink(): a get
 *    takes it, a remove) or stops being dirty without becoming READY
 *    (kwq_set_requeue()) or leaves the queue clears PENDING; one that
 *    becomes READY at a priority >= 0 sets it (kwq_ready_insert()).
 *
 * Ordering: the fetch_or and llist_add() are fully ordered, and a get
 * clears PENDING before the full barrier of its smp_store_mb() of
 * PROCESSING: an adder that found PENDING set (coherence order: before
 * the clear) made its earlier writes visible to whoever processes the
 * key next, as the workqueue's PENDING bit does; one that finds it clear
 * (after) queues an add that makes the key dirty. The llist_add() then
 * wq_has_sleeper() pairs with the getter's prepare_to_wait_exclusive()
 * then splice, as kwq_unlock()'s wake-up does. No add is lost and no key
 * is handed out twice: the hand-out itself is the same locked take as
 * for any add. Documentation/design.rst, "Key handles".
 */
/* struct kwq_key_ref.flags: on q->ref_adds, not yet spliced */
#define KWQ_REF_QUEUED		0

struct kwq_key_ref {
	struct llist_node pend;		/* in q->ref_adds while QUEUED */
	unsigned long flags;
	struct rb_node rb;		/* in q->pins by ->node */
	refcount_t ref;			/* kwq_key_get()s not yet put */
	struct kwq *q;			/* a reference */
	struct kwq_node *node;		/* pinned */
};

/* Whether a handle pins @n (under q->lock). */
static __always_inline bool kwq_pinned(const struct kwq_node *n)
{
	return atomic_read(&n->hword) & KWQ_NODE_PINNED;
}

/* Under q->lock: @n no longer satisfies PENDING's promise (if pinned). */
static __always_inline void kwq_handle_unready(struct kwq_node *n)
{
	if (unlikely(atomic_read(&n->hword) & KWQ_NODE_PENDING))
		atomic_andnot(KWQ_NODE_PENDING, &n->hword);
}

/* Under q->lock: @n is READY at @prio; a pinned node says so. */
static __always_inline void kwq_handle_ready(struct kwq_node *n, int prio)
{
	if (unlikely(kwq_pinned(n)) && prio >= 0)
		atomic_or(KWQ_NODE_PENDING, &n->hword);
}

/*
 * The ready keys of one priority, oldest first. In kwq->levels (by
 * ->ready_rb) while it has keys; in kwq->all_levels (by ->all_rb) while
 * ->refs nodes (or an add under way) hold it, from the first add of its
 * priority on (priority 0: kwq->level0, never in all_levels, never
 * counted or freed). ready.h says who holds one.
 */
struct kwq_level {
	struct list_head fifo;
	struct rb_node ready_rb;
	struct rb_node all_rb;
	unsigned long len;
	/* nodes whose ->prio, ->requeue_prio are ->prio; adds under way */
	unsigned long refs;
	int prio;
};

/*
 * The processing deadline of a key that has one, in kwq->due by (->due_ns,
 * the node's lease). Apart from the node, so that the keys of queues
 * without deadlines do not pay for it; a queue keeps up to KWQ_DUE_KEEP
 * freed ones (kwq->due_free, linked by ->next_free) for its next gets.
 */
struct kwq_due {
	struct rb_node rb;
	u64 due_ns;
	u64 dirty_ns;		/* the node's, while it has this deadline */
	union {
		struct kwq_node *node;
		struct kwq_due *next_free;
	};
};

/*
 * A processing node's ->proc holds its deadline record or, when it has
 * none, the time it became dirty (KWQ_REQUEUE_READY: the add's) or dying
 * (KWQ_REQUEUE_DEAD: the failure's), shifted left and tagged with bit 0
 * as xa_mk_value() tags an integer: a record is 8-aligned, and a clock
 * time fits in 63 bits for 292 years. A record carries the time in its
 * ->dirty_ns instead (kwq_node_set_due() moves it there,
 * kwq_node_clear_due() back). So the 8 bytes of that time are paid for by
 * the leases with a processing deadline, in their records, not by every
 * node. Never 0 while processing: kwq_node_proc_init() tags "no time".
 */
static __always_inline void kwq_node_proc_init(struct kwq_node *n)
{
	n->proc = 1;
}

static __always_inline bool kwq_node_has_due(const struct kwq_node *n)
{
	return !(n->proc & 1);
}

static __always_inline struct kwq_due *kwq_node_due(const struct kwq_node *n)
{
	return kwq_node_has_due(n) ? (struct kwq_due *)(uintptr_t)n->proc : NULL;
}

/* Give @n, which has no deadline record, the record @d. */
static __always_inline void kwq_node_set_due(struct kwq_node *n,
					     struct kwq_due *d)
{
	d->dirty_ns = n->proc >> 1;
	n->proc = (uintptr_t)d;
}

/* Take @n's deadline record away. */
static __always_inline void kwq_node_clear_due(struct kwq_node *n)
{
	n->proc = kwq_node_due(n)->dirty_ns << 1 | 1;
}

static inline u64 kwq_node_dirty_ns(const struct kwq_node *n)
{
	const struct kwq_due *d = kwq_node_due(n);

	return d ? d->dirty_ns : n->proc >> 1;
}

static inline void kwq_node_set_dirty_ns(struct kwq_node *n, u64 ns)
{
	struct kwq_due *d = kwq_node_due(n);

	if (d)
		d->dirty_ns = ns;
	else
		n->proc = ns << 1 | 1;
}

#define KWQ_DUE_KEEP		32

/*
 * Nodes a long walk (release of an owner's leases, a batch get, the dead
 * set's revive and purge of all, shutdown) handles per critical section
 * before it drops q->lock: a few microseconds on a current CPU, however
 * many keys the queue holds (Documentation/semantics.rst, "Walks of the
 * whole queue").
 */
#define KWQ_WALK_CHUNK		64

/* Node caches by size (table.c: kwq_cache_objs) */
#define KWQ_NODE_CACHES		12
/* Freed nodes a queue keeps per cache for its next new keys */
#define KWQ_POOL_MAX		32

/* The delay wheel's geometry (delay.c). */
#define KWQ_WHEEL_SHIFT		20	/* level 0: 2^20 ns slots, ~1 ms */
#define KWQ_WHEEL_LVL_SHIFT	6	/* each level's slots 64x longer */
#define KWQ_WHEEL_SLOTS		64
#define KWQ_WHEEL_LEVELS	8	/* 20 + 7 * 6 + 6 >= 64: all of u64 */
#define KWQ_WHEEL_MIN_TREE	256	/* tree keys before the wheel is used */

/* A slot of the delay wheel: the keys due in its span, unordered. */
struct kwq_wheel_slot {
	struct hlist_head keys;
	u32 nr;
};

/*
 * Leases revoked by their processing deadline that were owned: a done or
 * touch of the key by that owner, unless it holds the key again, is
 * -ESTALE (not -ENOENT or -EPERM) while the record lasts: until the owner
 * is released or KWQ_TOMBS newer ones pushed it out.
 */
#define KWQ_TOMBS		1024

struct kwq_tomb {
	const void *owner;
	u32 hash;			/* and length: the key's */
	u32 len;
};

/* Duration histogram: per-bucket (not cumulative) counts, +Inf last. */
struct kwq_hist {
	u64 counts[KWQ_HIST_BUCKETS + 1];
	u64 sum_ns;
};

struct kwq {
	spinlock_t lock;		/* everything below unless noted */
	refcount_t ref;
	struct llist_node free_node;	/* kwq_free_list, once ref is 0 */
	struct list_head registry;	/* kwq_registry, under its mutex */
	char name[KWQ_NAME_MAX + 1];	/* constant */

	hsiphash_key_t hkey;		/* constant */
	struct kwq_node **hash;		/* buckets: singly linked chains */
	/*
	 * Freed nodes: to the slab after unlock, or kept for new keys in
	 * ->pool (lists by cache, through ->hnext; ->pool_nr in each, at
	 * most KWQ_POOL_MAX) if the queue charges no memcg.
	 */
	struct kwq_node *free_list;
	struct kwq_node *pool[KWQ_NODE_CACHES];
	u8 pool_nr[KWQ_NODE_CACHES];
	unsigned int hash_bits;
	/* growing: buckets of ->hash below ->rehash_pos are in ->new_hash */
	struct kwq_node **new_hash;
	unsigned int new_bits;
	unsigned long rehash_pos;
	/*
	 * An add of a new key takes table.c's slow path once ->nr_nodes
	 * reaches it (a key a bucket: the growth is due, or retried after
	 * ->grow_err); ULONG_MAX while a growth nothing refused runs.
	 */
	unsigned long grow_at;
	/* the table size charged for the growth under way; 0: none */
	unsigned int grow_bits;
	/* why the table could not grow (-EDQUOT, -ENOMEM, -ENOSPC); 0 */
	int grow_err;
	bool anon;			/* constant: not in kwq_registry */
	struct work_struct grow_work;

	struct rb_root_cached levels;	/* levels with keys, highest first */
	struct rb_root all_levels;	/* levels held, but level0, by prio */
	unsigned long nr_levels;	/* in all_levels */
	struct kwq_level level0;	/* priority 0 */
	struct rb_root_cached delayed;	/* WAITING by (deadline, seq) */
	struct list_head processing;	/* PROCESSING, in start order */
	struct rb_root_cached due;	/* their deadlines, earliest first */
	unsigned long nr_due;
	struct kwq_due *due_free;	/* kept for the next gets */
	unsigned int nr_due_free;
	/* KWQ_TOMBS records from ->tomb_head on, oldest first; or NULL */
	struct kwq_tomb *tombs;
	unsigned int tomb_head;
	unsigned int nr_tombs;
	struct list_head idle;		/* IDLE records, least recent first */
	struct list_head dead;		/* the dead set, oldest death first */
	u64 seq;
	u64 ready_epoch;		/* last kwq_node.ready_epoch given */
	u64 lease_seq;			/* last lease handed out */
	u64 timer_deadline;		/* armed deadline, U64_MAX if none */
	/*
	 * The delay wheel (delay.c): KWQ_WHEEL_LEVELS *
	 * KWQ_WHEEL_SLOTS slots, NULL until wheel_work allocates them.
	 * Times in level-0 slots (deadline >> KWQ_WHEEL_SHIFT).
	 */
	struct kwq_wheel_slot *wheel;
	u64 wheel_map[KWQ_WHEEL_LEVELS];	/* a bit per non-empty slot */
	u64 wheel_clk;			/* slots starting before it are empty */
	u64 wheel_next;			/* start of the earliest non-empty slot */
	u64 wheel_due;			/* when a slot must start cascading */
	unsigned long wheel_nr;		/* WAITING keys in the wheel */
	unsigned int wheel_next_slot;	/* that slot, if wheel_nr */
	u64 wheel_moves;		/* keys cascaded (host benchmark) */
	bool wheel_alloc_queued;	/* wheel_work queued or running */
	struct work_struct wheel_work;

	unsigned long nr_nodes;		/* all nodes in the hash */
	unsigned long nr_items;		/* READY + WAITING + PROCESSING */
	unsigned long nr_ready;
	/*
	 * Kept equal to ->nr_ready: a status page's ready count (ring.c),
	 * else ->ready_sink (a store costs less than a test and branch).
	 */
	u64 *ready_mirror;
	u64 ready_sink;
	unsigned long nr_waiting;
	unsigned long nr_processing;
	unsigned long nr_idle;
	unsigned long nr_failure_records;
	unsigned long nr_dead;

	u64 adds_total;
	u64 retries_total;
	u64 dropped_at_shutdown;
	u64 lease_returns;
	u64 failure_records_evicted;
	u64 dead_total;			/* keys moved to the dead set */
	u64 dead_dropped_total;		/* dead keys dropped by ->max_dead */
	u64 processing_timeouts_total;

	/* metrics (Documentation/metrics.rst) */
	unsigned long nr_dirty;		/* PROCESSING with REQUEUE_READY */
	u64 start_ns_sum;		/* of PROCESSING nodes, modulo 2^64 */
	struct kwq_hist queue_hist;	/* ready -> get */
	struct kwq_hist work_hist;	/* get -> done */

	struct kwq_budget *budget;	/* constant; NULL: none */
	size_t charged;			/* bytes charged to ->budget */
	/*
	 * Memory cgroup charging (Documentation/semantics.rst, "Contexts
	 * and memory"), constant: __GFP_ACCOUNT for a queue that charges
	 * the caller, else 0; the creator's memcg, which pays for the hash
	 * table grown by the work item (NULL: none).
	 */
	gfp_t gfp_account;
	struct mem_cgroup *memcg;

	bool shutting_down;
	unsigned long shutdown_seq;	/* bumped by every plain shutdown */

	/* constant configuration */
	const struct kwq_clock *clock;
	u32 max_items;
	u32 max_failure_records;
	u32 max_retries;		/* 0: no dead set */
	u32 max_dead;
	u16 cursor_tag;			/* of kwq_inspect_list()'s cursors */
	/* the holder id of an owner cookie (inspect.c); NULL: none */
	u32 (*holder)(const void *owner);
	u64 processing_timeout_ns;	/* 0: none */
	struct kwq_limiters limiters;	/* state under q->lock */

	/*
	 * Adds by key handle not yet applied (struct kwq_key_ref.pend), any
	 * context, no lock; spliced under q->lock ("Key handles" above).
	 */
	struct llist_head ref_adds;
	struct rb_root pins;		/* key handles, by node */
	wait_queue_head_t get_wq;	/* getters */
	wait_queue_head_t drain_wq;	/* kwq_shutdown_drain() */
	struct hrtimer timer;		/* the real clock's timer */
	/*
	 * Under kwq_registry_lock; of an anonymous queue, under its
	 * creator's lock (dev.c: kwq_uq_lock).
	 */
	struct dentry *debugfs;
};

/* clock.c */
extern const struct kwq_clock kwq_real_clock;
/* Once, before any queue: what the real clock's timer calls. */
void kwq_clock_init(void (*expired)(struct kwq *q));
void kwq_real_clock_setup(struct kwq *q);

/*
 * What @q allocates is charged to its budget (budget.c), if it has one:
 * a kernel caller's queue has none and nothing to count. ->charged is
 * the queue's part, under q->lock (or before the queue is visible, or
 * once it is unreachable).
 */
static inline bool kwq_charge(struct kwq *q, size_t bytes)
{
	if (!q->budget)
		return true;
	if (!kwq_budget_charge(q->budget, bytes))
		return false;
	q->charged += bytes;
	return true;
}

static inline void kwq_uncharge(struct kwq *q, size_t bytes)
{
	if (q->budget) {
		kwq_budget_uncharge(q->budget, NULL, bytes);
		q->charged -= bytes;
	}
}

/*
 * What a kmalloc() or kvmalloc() of @size bytes takes: its slab object
 * (a 40-byte struct takes 64), or whole pages. A queue is charged this,
 * and uncharged the same, for each such allocation; nodes, from caches of
 * their own, are charged kmem_cache_size().
 */
static inline size_t kwq_alloc_bytes(size_t size)
{
	return kmalloc_size_roundup(size);
}

/* @now - @then, 0 if the clock was read in the other order. */
static inline u64 kwq_since(u64 now, u64 then)
{
	return now > then ? now - then : 0;
}

static inline u64 kwq_now(const struct kwq *q)
{
	/* The real clock without an indirect call (a retpoline on many CPUs). */
	if (likely(q->clock == &kwq_real_clock))
		return ktime_get_ns();
	return q->clock->now(q->clock);
}

#endif /* _KWQ_LAYOUT_H */
