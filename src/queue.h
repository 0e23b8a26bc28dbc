/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal layout of a kwq queue, shared by queue.c, limiter.c and
 * clock.c. Not an API: other modules use include/linux/kwq.h.
 */
#ifndef _KWQ_QUEUE_H
#define _KWQ_QUEUE_H

#include <linux/hrtimer.h>
#include <linux/kwq.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/rbtree.h>
#include <linux/refcount.h>
#include <linux/siphash.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

struct dentry;
struct kwq_budget;
struct mem_cgroup;

/* Where a key is. */
enum kwq_state {
	KWQ_IDLE,		/* only a failure record is kept */
	KWQ_READY,		/* in a priority level's FIFO */
	KWQ_WAITING,		/* in the delay tree */
	KWQ_PROCESSING,		/* handed out by kwq_get() */
};

/* What done() does with a processing key that was added again. */
enum kwq_requeue {
	KWQ_REQUEUE_NONE,	/* release it */
	KWQ_REQUEUE_READY,	/* dirty: back to the FIFO tail */
	KWQ_REQUEUE_DELAYED,	/* add_after while processing: ->deadline */
};

/*
 * One node per key. kwq_get() hands out leases on it (struct kwq_item),
 * told apart by ->lease, so the node itself never leaves kwq.
 */
struct kwq_node {
	struct hlist_node hnode;	/* hash bucket */
	/*
	 * READY: ->fifo links the members of one priority level in a
	 * circle without sentinel, oldest first; only the oldest (the
	 * level head) sits in the level tree by ->level_rb.
	 */
	struct list_head fifo;
	struct rb_node level_rb;
	struct rb_node delay_rb;	/* WAITING: in the delay tree */
	struct list_head link;		/* PROCESSING list or IDLE LRU */
	union {
		u64 seq;		/* WAITING: tie-break of equal deadlines */
		u64 level_len;		/* READY level head: keys of its level */
		u64 dirty_ns;		/* REQUEUE_READY: clock time of the add */
	};
	/*
	 * WAITING: when it becomes ready. READY and PROCESSING: a deadline
	 * add_after asked for, remembered for after the run; 0 if none.
	 */
	u64 deadline;
	u64 queued_ns;			/* clock time it last became ready */
	u64 start_ns;			/* clock time processing started */
	struct kwq *q;			/* queue the node belongs to */
	void *owner;			/* PROCESSING: kwq_get()'s cookie */
	u64 lease;			/* PROCESSING: which hand-out, never 0 */
	u32 hash;
	u32 failures;			/* rate limiter failure count */
	int prio;
	int requeue_prio;		/* priority of the pending requeue */
	u8 state;			/* enum kwq_state */
	u8 requeue;			/* enum kwq_requeue */
	bool level_head;
	bool large;			/* from the large-key cache */
	u16 key_len;
	u8 key[];
};

/* Token bucket state (golang.org/x/time/rate with n = 1). */
struct kwq_bucket {
	s64 tokens;	/* in 1e-12 tokens; negative while in debt */
	u64 last;	/* clock time tokens was computed for */
};

/* Duration histogram: per-bucket (not cumulative) counts, +Inf last. */
struct kwq_hist {
	u64 counts[KWQ_HIST_BUCKETS + 1];
	u64 sum_ns;
};

struct kwq_limiter {
	struct kwq_limiter_config cfg;
	struct kwq_bucket bucket;
};

struct kwq {
	spinlock_t lock;		/* everything below unless noted */
	refcount_t ref;
	struct llist_node free_node;	/* kwq_free_list, once ref is 0 */
	struct list_head registry;	/* kwq_registry, under its mutex */
	char name[KWQ_NAME_MAX + 1];	/* constant */

	siphash_key_t hkey;		/* constant */
	struct hlist_head *hash;
	unsigned int hash_bits;
	bool grow_pending;
	struct work_struct grow_work;

	struct rb_root_cached levels;	/* level heads, highest first */
	struct rb_root_cached delayed;	/* WAITING by (deadline, seq) */
	struct list_head processing;
	struct list_head idle;		/* IDLE records, least recent first */
	u64 seq;
	u64 lease_seq;			/* last lease handed out */
	u64 timer_deadline;		/* armed deadline, U64_MAX if none */

	unsigned long nr_nodes;		/* all nodes in the hash */
	unsigned long nr_items;		/* READY + WAITING + PROCESSING */
	unsigned long nr_ready;
	unsigned long nr_waiting;
	unsigned long nr_processing;
	unsigned long nr_idle;
	unsigned long nr_failure_records;

	u64 adds_total;
	u64 retries_total;
	u64 dropped_at_shutdown;
	u64 lease_returns;
	u64 failure_records_evicted;

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
	u32 nr_limiters;
	bool item_limiter;		/* a limiter counts failures */
	u64 max_wait_ns;
	u32 max_items;
	u32 max_failure_records;
	struct kwq_limiter limiters[KWQ_MAX_LIMITERS];

	wait_queue_head_t get_wq;	/* getters */
	wait_queue_head_t drain_wq;	/* kwq_shutdown_drain() */
	struct hrtimer timer;		/* the real clock's timer */
	struct dentry *debugfs;		/* under kwq_registry_lock */
};

/* limiter.c */
struct kwq_limit_plan {
	s64 tokens[KWQ_MAX_LIMITERS];
};

int kwq_limiters_init(struct kwq *q, const struct kwq_config *cfg, u64 now);
u64 kwq_limiters_when(struct kwq *q, u32 failures, u64 now,
		      struct kwq_limit_plan *plan);
void kwq_limiters_commit(struct kwq *q, u64 now,
			 const struct kwq_limit_plan *plan);
u64 kwq_exp_backoff(u64 base_ns, u64 max_ns, u32 exp);

/* metrics.c */
void kwq_debugfs_init(void);
void kwq_debugfs_exit(void);
void kwq_debugfs_add(struct kwq *q);
void kwq_debugfs_remove(struct kwq *q);

/* clock.c */
extern const struct kwq_clock kwq_real_clock;
void kwq_real_clock_setup(struct kwq *q);

static inline u64 kwq_now(const struct kwq *q)
{
	return q->clock->now(q->clock);
}

#endif /* _KWQ_QUEUE_H */
