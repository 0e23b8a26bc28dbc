/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Declarations shared between kwq's own source files; not an API.
 */
#ifndef _KWQ_INTERNAL_H
#define _KWQ_INTERNAL_H

#include <linux/atomic.h>
#include <linux/ktime.h>
#include <linux/kwq.h>
#include <linux/refcount.h>
#include <linux/types.h>
#include <linux/wait.h>

int kwq_core_init(void);
void kwq_core_exit(void);
/* queue.c, for dev.c */

/**
 * struct kwq_budget - a byte budget that queues charge their memory to
 * @used: bytes charged: queue structs, hash tables and key nodes
 * @limit: most bytes; an allocation past it fails with -EDQUOT
 * @ref: one per queue charging it, plus whatever its creator holds
 * @parent: charged along with this budget, and its parent in turn;
 *	NULL for none. Constant; whoever made the budget keeps the parent
 *	alive as long as this one.
 * @release: called when the last reference is dropped (process context)
 *
 * dev.c keeps one per user and user namespace, whose parent is the
 * namespace owner's in the parent namespace; kernel callers' queues have
 * none.
 */
struct kwq_budget {
	atomic_long_t used;
	unsigned long limit;
	refcount_t ref;
	struct kwq_budget *parent;
	void (*release)(struct kwq_budget *budget);
};

struct kwq_config;
struct kwq;
struct kwq_key;
int kwq_done_keys(struct kwq *q, const struct kwq_key *keys, unsigned int nr,
		  void *owner, unsigned int *done);
/*
 * kwq_add_batch() of the one key @key (dev.c's single-key ADD): the same
 * checks, allocation and effect, without the batch's arrays and chunks;
 * and a plain add of a key already ready returns without the queue lock,
 * as kwq_add() does. 0 or the key's error.
 */
struct kwq_batch_opts;
int kwq_add_key(struct kwq *q, const struct kwq_key *key,
		const struct kwq_batch_opts *opts);
/*
 * kwq_touch() by key for @owner (dev.c): a key leased to @owner or
 * detached. 0, -ESTALE if @owner's lease on it was revoked by its
 * deadline, -ENOENT if it is not processing, -EPERM if another owner's,
 * -EINVAL.
 */
int kwq_touch_key(struct kwq *q, const void *key, size_t len, void *owner,
		  u64 timeout_ns);
/*
 * kwq_put() that frees the queue before it returns if it dropped the last
 * reference (kwq_put() leaves that to a work item), so the memory and the
 * budget's bytes are back when it returns. Process context, may sleep.
 */
void kwq_put_sync(struct kwq *q);
struct kwq_item;
struct kwq;

/*
 * kwq_create_anon() - kwq_create() without the name registry: the queue
 * is not found by kwq_find(), takes no name from kernel callers and has
 * no debugfs directory unless its creator adds one (kwq_debugfs_add()).
 * Its memory is charged to @budget (and its parents) if not NULL.
 * kwq_destroy() shuts it down and drops the creator's reference.
 */
struct kwq *kwq_create_anon(const char *name, const struct kwq_config *cfg,
			    struct kwq_budget *budget);
void kwq_budget_put(struct kwq_budget *budget);
/* 0 if @q may be published: from kwq_create(), not destroyed, real clock. */
int kwq_check_publish(struct kwq *q);
/*
 * What dev.c's gets need beyond kwq_get_batch():
 * @abort: if not NULL, once *@abort is true the get returns -EIDRM
 *	instead of sleeping on: set it, then kwq_wake_all() to end the waits
 *	in progress. Keys taken before are returned.
 * @copy: if not NULL, called with @arg under the queue lock for each key
 *	taken, while nobody else can finish it and free its bytes.
 * @processing_timeout_ns: the keys' processing deadline, as kwq_touch()
 *	takes it (0: the queue's).
 * @room: if not NULL, the bytes left for the records @copy writes: a key
 *	is taken only if its record (KWQ_REC_SIZE() of its length) fits, and
 *	its size is taken off. The first key that does not fit stays ready,
 *	first of its level, and sets *@room to 0: the get ends with the keys
 *	taken before it, or -EMSGSIZE if none was. A get waiting for
 *	@min_nr keys stops waiting once the room takes no record.
 * @window: if not NULL, the batching window of the whole call, which
 *	makes the get in rounds (struct kwq_get_window); NULL: the get is
 *	the whole call.
 */
struct kwq_get_ctl {
	const bool *abort;
	void (*copy)(void *arg, const struct kwq_item *item);
	void *arg;
	u64 processing_timeout_ns;
	u32 *room;
	struct kwq_get_window *window;
};

/*
 * The batching window of one get call that takes keys in several rounds
 * (struct kwq_get_ctl.window, zeroed by the caller for the whole call;
 * a kwq_get_batch() waiting for min_nr keeps its own): the lease of the
 * call's first key, whose processing deadline comes first. Once that
 * lease has ended (revoked at its deadline), the call takes no more keys
 * (so never one key twice), and it waits for more no longer than until
 * that deadline (@end, CLOCK_MONOTONIC; 0: none).
 */
struct kwq_get_window {
	struct kwq_item first;
	ktime_t end;
	bool open;
};

int kwq_get_batch_ctl(struct kwq *q, void *owner, unsigned int flags,
		      s64 timeout_ns, struct kwq_item *items,
		      unsigned int min_nr, unsigned int max_nr,
		      const struct kwq_get_ctl *ctl);
void kwq_wake_all(struct kwq *q);
/*
 * kwq_release_owner(), kwq_revive_all(), kwq_purge_all() and
 * kwq_shutdown() for callers that may sleep (dev.c's ioctls and close):
 * the same walks, with a scheduling point (cond_resched()) between their
 * chunks; the dead-set walks also end early at a fatal signal.
 */
int kwq_release_owner_sleep(struct kwq *q, void *owner);
long kwq_revive_all_sleep(struct kwq *q);
long kwq_purge_all_sleep(struct kwq *q);
int kwq_shutdown_sleep(struct kwq *q);
/*
 * KWQ_IOC_DONE_GET's core: kwq_done_keys() of @keys for @owner, then, only
 * if all @nr were finished, take up to @max ready keys for @get_owner
 * into @items without sleeping, @ctl's copy hook (if any) called for
 * each, in the same critical section as the last keys' finish. Returns
 * the number taken; when *@done < @nr, the error of the key that was not
 * finished (the keys before it were, none was taken); else -EAGAIN if no
 * key was ready, -ESHUTDOWN if none ever will be.
 */
int kwq_done_keys_take(struct kwq *q, const struct kwq_key *keys,
		       unsigned int nr, void *owner, unsigned int *done,
		       void *get_owner, struct kwq_item *items,
		       unsigned int max, const struct kwq_get_ctl *ctl);

/*
 * Keep *@mirror equal to the queue's ready count from now on (ring.c's
 * status page), or stop (@mirror NULL) before it is freed.
 */
void kwq_set_ready_mirror(struct kwq *q, u64 *mirror);

struct dentry;
/*
 * Undo the get of @item (its copy to userspace failed): back to the head
 * of its level, as if never taken. A lease already ended is left alone.
 */
void kwq_unget(struct kwq *q, const struct kwq_item *item);
/*
 * poll() of a queue, for dev.c, which waits on kwq_get_waitqueue() (the
 * getters' wait queue, woken by every add that makes a key ready and by
 * shutdown): EPOLLIN while a key is ready, EPOLLHUP once shut down.
 */
wait_queue_head_t *kwq_get_waitqueue(struct kwq *q);
__poll_t kwq_poll(struct kwq *q);

/*
 * inspect.c, for dev.c: before @q is visible to anyone, tell kwq how to
 * turn an owner cookie of kwq_get() into the holder id kwq_inspect()
 * reports; @holder is called under the queue lock, while the key is
 * leased to @owner.
 */
void kwq_set_holder(struct kwq *q, u32 (*holder)(const void *owner));
struct kwq_key_info;
struct kwq_info_rec;
/* inspect.c: @k as the header of its KWQ_IOC_INSPECT record. */
void kwq_info_to_rec(const struct kwq_key_info *k, struct kwq_info_rec *r);

/* registry.c, for dev.c and main.c */
/* What kwq_destroy() calls to take a queue off /dev/kwq; NULL: nothing. */
void kwq_registry_set_unpublish(void (*unpublish)(struct kwq *q));
void kwq_registry_exit(void);

/* metrics.c, for main.c: /sys/kernel/debug/kwq */
void kwq_debugfs_init(void);
void kwq_debugfs_exit(void);
/* metrics.c, for dev.c: directories in /sys/kernel/debug/kwq */
struct dentry *kwq_debugfs_dir(const char *name);
/* kwq/<name>/metrics of @q under @parent (NULL: kwq/ itself) */
void kwq_debugfs_add(struct kwq *q, struct dentry *parent);
void kwq_debugfs_remove(struct kwq *q);
int kwq_dev_init(void);
void kwq_dev_exit(void);

#endif /* _KWQ_INTERNAL_H */
