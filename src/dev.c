// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kwq: the misc device through which userspace reaches kwq queues.
 * The ABI is include/uapi/linux/kwq.h; its rules are written there.
 *
 * This file owns the file operations, the ioctl table and its dispatch,
 * and the ioctls on one key or a whole queue; the rest of the device is
 * a file per concept: namespace.c (names per IPC namespace, queues'
 * ownership and permissions, CREATE/OPEN/DESTROY/LIST, publishing),
 * user.c (per-user limits and budgets), record.c (the record codec),
 * keys.c (ADD, DONE, FORGET, REMOVE, GET, DONE_GET by records) and
 * ring.c (the shared rings); dev.h has their objects. The rest of this
 * comment is about the whole device. Sections of this file:
 *  - a file's queue and its arguments;
 *  - the ioctls on one key or the whole queue;
 *  - rings (setup and enter);
 *  - the ioctl table and dispatch;
 *  - file operations, module init and exit.
 *
 * Names: queues created here are anonymous to the core (kwq_create_anon):
 * they never enter the registry of kernel queues, so kwq_find() never
 * returns one and a user never takes a kernel queue's name. Their names
 * live in namespace.c, one namespace per IPC namespace, as POSIX
 * message queues': a process sees (CREATE, OPEN, DESTROY, LIST) the
 * queues of the IPC namespace it is in at the call. A kernel queue
 * enters one of these namespaces only when its module publishes it
 * (kwq_publish()).
 *
 * ioctls: one table (kwq_ioctls[]) names each number's handler and what
 * kwq_dev_ioctl() does before calling it: check the number's direction
 * (and, for an unversioned argument, its size), find the attached queue
 * and copy the argument struct in (kwq_copy_args(): the struct's version
 * is its size). Handlers contain only their operation and write back
 * what they answer.
 *
 * Objects:
 *  - struct kwq_ns: the listed queues of one IPC namespace. It holds one
 *    reference to the namespace and exists while it lists a queue. It
 *    does not keep a dead namespace alive: once kwq's is the namespace's
 *    last reference (no task, nsfs file or bind mount holds it, so no
 *    process can enter it and name a queue), the reaper (kwq_ns_reap())
 *    unlists its queues and drops the reference, and the namespace is
 *    freed with its SysV objects, as if kwq had never held it. Also the
 *    debugfs directory kwq/ipc:<inode number>.
 *  - struct kwq_uq: a queue as /dev/kwq sees it: a user's queue, or a
 *    published kernel queue. It carries what the core does not know:
 *    owner, group, mode (checked on open like SysV IPC), the namespace it
 *    is listed in and whether it is dead (destroyed or unpublished). A
 *    user's queue unlisted with its namespace is not dead: a file that
 *    was attached to it (passed out of the namespace, say) keeps using it
 *    until it is closed, as an unlinked mqueue.
 *  - struct kwq_user: the limits of one user (an euid) in one user
 *    namespace: its queue count and byte budget. Each also counts against
 *    the owner of that user namespace in the parent namespace, and so on
 *    up to the initial one (as the kernel's ucounts do for
 *    RLIMIT_MSGQUEUE): a user cannot multiply its limits by creating user
 *    namespaces. Users with CAP_SYS_ADMIN in the initial user namespace
 *    are exempt; root of a user namespace is not. A queue counts from its
 *    CREATE until it is freed (its last file closed), not until it is
 *    unlisted: a destroyed queue that a file still uses holds its place.
 *  - struct kwq_file: one open file. It attaches to at most one kwq_uq and
 *    is the lease owner of the keys it gets (unless KWQ_GET_DETACHED), so
 *    closing it returns them to the queue.
 *
 * Locking:
 *  - kwq_uq_lock (mutex) protects kwq_ns_list, every kwq_ns's queue list,
 *    kwq_pub_list, kwq_user_list, the queue counts, kwq_nr_foreign_ns and
 *    the debugfs directories of user queues. It is taken before
 *    kwq_registry_lock (queue.c, kwq_check_publish()) and never inside a
 *    queue operation.
 *    Nothing that may drop the last reference to a queue or a budget
 *    (kwq_uq_put, kwq_put, kwq_destroy, kwq_budget_put) is called under
 *    it: the last budget put takes it.
 *  - kf->attach_lock (mutex) serialises CREATE/OPEN on one file; kf->uq is
 *    written once under it and read locklessly (smp_load_acquire).
 *  - Queue operations go to the core without any lock of ours; the core
 *    takes its own spinlock.
 *
 * Lifetime: a kwq_uq is reference counted (its namespace's list holds one
 * reference while it is listed, every attached file one more); it holds a
 * core reference to its queue, dropped when the last kwq_uq reference
 * goes. DESTROY of a user queue unlists it, marks it dead (later calls on
 * attached files see EIDRM) and destroys the core queue, which wakes every
 * waiter. kwq_unpublish() (also called by kwq_destroy()) unlists a
 * published queue, marks it dead and wakes its waiters; the module's own
 * reference is untouched. The reaper unlists the queues of a dead
 * namespace: a published one as kwq_unpublish() does, a user's one
 * without marking it dead, so that it is freed at once if no file uses
 * it, and when the last one closes otherwise. A queue's memory is
 * charged to its creator's kwq_user budget, which the queue references until it is freed (so
 * after its kwq_uq is gone, too); a kwq_user references its parent and
 * its user namespace. The misc device holds a module reference per open
 * file (fops->owner), so the module cannot be unloaded while an fd is
 * open.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/ipc_namespace.h>
#include <linux/kwq.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/nospec.h>
#include <linux/nsproxy.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>
#include <linux/workqueue.h>
#include <uapi/linux/kwq.h>

#include "compat.h"
#include "dev.h"
#include "kwq_internal.h"
#include "ring.h"
#include "stats.h"

static_assert(KWQ_INFO_REC_SIZE(0) == sizeof(struct kwq_info_rec));
static_assert(KWQ_CREATE_ARGS_SIZE_VER1 ==
	      offsetof(struct kwq_create_args, processing_timeout_ns));
static_assert(KWQ_STATS_ARGS_SIZE_VER2 ==
	      offsetof(struct kwq_stats_args, processing_timeouts_total));

/*
 * The holder id KWQ_IOC_INSPECT reports for a key leased to an owner
 * cookie of ours: the opener of the file, in the reader's pid namespace
 * (0 if not visible there). Called under the queue lock while the key is
 * leased to the file, so the file is still open.
 */

/*
 * --- a file's queue and its arguments ---
 *
 * What every ioctl on a queue starts with: lockless (kf->uq is set once).
 */

/*
 * Copy a size-versioned argument struct in. The size comes from the ioctl
 * number: smaller than the first version (@min) is EINVAL, an older one
 * reads as zero past its end, a larger one must have a zero tail (E2BIG
 * otherwise, from copy_struct_from_user()).
 */
static __always_inline int kwq_copy_args(void *dst, size_t ksize, size_t min,
					 unsigned int cmd, unsigned long arg)
{
	size_t usize = _IOC_SIZE(cmd);

	if (usize < min)
		return -EINVAL;
	/* This version's size, the common case. */
	if (usize == ksize)
		return kwq_copy_in(dst, (void __user *)arg, ksize);
	return copy_struct_from_user(dst, ksize, (void __user *)arg, usize);
}

/* The attached queue, or an error for an unattached file. */
static struct kwq_uq *kwq_file_uq(struct kwq_file *kf)
{
	/* Pairs with kwq_attach(). */
	struct kwq_uq *uq = smp_load_acquire(&kf->uq);

	if (!uq)
		return ERR_PTR(-ENOTCONN);
	if (READ_ONCE(uq->dead))
		return ERR_PTR(-EIDRM);
	return uq;
}

/*
 * --- the ioctls on one key or the whole queue ---
 *
 * NUM_REQUEUES, TOUCH, LEN, SHUTDOWN, STATS, INFO, REVIVE, PURGE,
 * INSPECT: no lock of their own; the core takes the queue's.
 */

static int kwq_ioc_num_requeues(struct kwq_ioc *c)
{
	u8 small[KWQ_REC_SMALL] __aligned(8);
	struct kwq_key_args *a = &c->a.key;
	void *key;
	int ret;

	key = kwq_key_in(c->kf, a->key, a->len, small);
	if (IS_ERR(key))
		return PTR_ERR(key);
	ret = kwq_num_requeues(c->uq->q, key, a->len);
	kwq_buf_put(c->kf, key, small);
	if (ret < 0)
		return kwq_uq_err(c->uq, ret);
	a->count = ret;
	return kwq_copy_args_out(c->arg, a, sizeof(*a));
}

static int kwq_ioc_touch(struct kwq_ioc *c)
{
	u8 small[KWQ_REC_SMALL] __aligned(8);
	struct kwq_touch_args *a = &c->a.touch;
	void *key;
	int ret;

	if (a->flags || !kwq_processing_timeout_ok(a->processing_timeout_ns))
		return -EINVAL;
	key = kwq_key_in(c->kf, a->key, a->len, small);
	if (IS_ERR(key))
		return PTR_ERR(key);
	/* Leased to this file, or detached, as KWQ_IOC_DONE. */
	ret = kwq_touch_key(c->uq->q, key, a->len, c->kf,
			    a->processing_timeout_ns);
	kwq_buf_put(c->kf, key, small);
	return kwq_uq_err(c->uq, ret);
}

static int kwq_ioc_len(struct kwq_ioc *c)
{
	long len;

	kwq_rings_pull(&c->uq->rings);
	len = kwq_len(c->uq->q);
	if (len < 0)
		return kwq_uq_err(c->uq, len);
	return put_user((u64)len, (u64 __user *)c->arg);
}

static int kwq_ioc_shutdown(struct kwq_ioc *c)
{
	struct kwq_shutdown_args *a = &c->a.shutdown;
	bool counted;
	int ret;

	if (a->flags & ~KWQ_SHUTDOWN_DRAIN || a->pad)
		return -EINVAL;
	/*
	 * Adds published before the shutdown are the queue's. The status
	 * page says so before a drain's wait, as the queue does.
	 */
	kwq_rings_pull(&c->uq->rings);
	kwq_rings_set_status(&c->uq->rings, KWQ_STATUS_SHUTDOWN);
	if (!(a->flags & KWQ_SHUTDOWN_DRAIN))
		return kwq_uq_err(c->uq, kwq_shutdown_sleep(c->uq->q));
	/*
	 * A drain waits for the keys being processed, whose DONE_LEASE
	 * records workers publish in their rings: counted in the waiters
	 * (and what was published pulled), so that they ring the doorbell
	 * for those records instead of leaving the drain to wait for them.
	 */
	counted = kwq_rings_wait_begin(&c->uq->rings);
	ret = kwq_shutdown_drain(c->uq->q);
	kwq_rings_wait_end(&c->uq->rings, counted);
	return kwq_uq_err(c->uq, ret);
}

/*
 * Copy @len bytes at @src out to an output-only struct of the size the
 * ioctl number carries (@c->cmd), at least @min: an older, smaller
 * struct gets the prefix, a newer, larger one zeros past what we know.
 */
static int kwq_args_out_versioned(struct kwq_ioc *c, const void *src,
				  size_t len, size_t min)
{
	size_t usize = _IOC_SIZE(c->cmd);

	if (usize < min)
		return -EINVAL;
	if (kwq_copy_args_out(c->arg, src, min(usize, len)))
		return -EFAULT;
	if (usize > len &&
	    clear_user((u8 __user *)c->arg + len, usize - len))
		return -EFAULT;
	return 0;
}

static int kwq_ioc_stats(struct kwq_ioc *c)
{
	struct kwq_stats_args a;
	int ret;

	/* Output only: an older (smaller) struct gets its prefix. */
	if (_IOC_SIZE(c->cmd) < KWQ_STATS_ARGS_SIZE_VER1)
		return -EINVAL;
	kwq_rings_pull(&c->uq->rings);
	ret = kwq_get_stats_args(c->uq->q, &a);
	if (ret)
		return kwq_uq_err(c->uq, ret);
	return kwq_args_out_versioned(c, &a, sizeof(a),
				      KWQ_STATS_ARGS_SIZE_VER1);
}

static int kwq_ioc_info(struct kwq_ioc *c)
{
	/* A published queue was made in the kernel, by no CREATE. */
	if (c->uq->published)
		return -EOPNOTSUPP;
	return kwq_args_out_versioned(c, &c->uq->args, sizeof(c->uq->args),
				      KWQ_CREATE_ARGS_SIZE_VER1);
}

/*
 * KWQ_IOC_REVIVE and KWQ_IOC_PURGE: one dead key (@one) or, with
 * KWQ_DEAD_ALL, every dead key (@all).
 */
static int kwq_ioc_dead_op(struct kwq_ioc *c,
			   int (*one)(struct kwq *q, const void *key,
				      size_t len),
			   long (*all)(struct kwq *q))
{
	u8 small[KWQ_REC_SMALL] __aligned(8);
	struct kwq_dead_args *a = &c->a.dead;
	void *key;
	long ret;

	if (a->flags & ~KWQ_DEAD_ALL)
		return -EINVAL;
	if (a->flags & KWQ_DEAD_ALL) {
		if (a->key || a->len)
			return -EINVAL;
		ret = all(c->uq->q);
	} else {
		key = kwq_key_in(c->kf, a->key, a->len, small);
		if (IS_ERR(key))
			return PTR_ERR(key);
		ret = one(c->uq->q, key, a->len) ?: 1;
		kwq_buf_put(c->kf, key, small);
	}
	if (ret < 0)
		return kwq_uq_err(c->uq, ret);
	a->count = ret;
	return kwq_copy_args_out(c->arg, a, sizeof(*a));
}

static int kwq_ioc_revive(struct kwq_ioc *c)
{
	return kwq_ioc_dead_op(c, kwq_revive, kwq_revive_all_sleep);
}

static int kwq_ioc_purge(struct kwq_ioc *c)
{
	return kwq_ioc_dead_op(c, kwq_purge, kwq_purge_all_sleep);
}

/*
 * Write @k as a struct kwq_info_rec record at @dst, @room bytes: its
 * size, -EMSGSIZE if it does not fit, or -EFAULT. The header, the key
 * and its padding are copied from where they are: no record of the
 * largest size on the stack.
 */
static long kwq_info_rec_put(u8 __user *dst, u32 room,
			     const struct kwq_key_info *k)
{
	size_t size = KWQ_INFO_REC_SIZE(k->key_len);
	struct kwq_info_rec r;
	u8 __user *pad;

	if (size > room)
		return -EMSGSIZE;
	kwq_info_to_rec(k, &r);
	pad = dst + sizeof(r) + k->key_len;
	if (copy_to_user(dst, &r, sizeof(r)) ||
	    copy_to_user(dst + sizeof(r), k->key, k->key_len) ||
	    clear_user(pad, dst + size - pad))
		return -EFAULT;
	return size;
}

/*
 * KWQ_IOC_INSPECT: one key (kwq_inspect()) or a chunk of a walk
 * (kwq_inspect_list()), as records. The walk only reads: a call that
 * fails leaves the caller's cursor as it was.
 */
static int kwq_ioc_inspect(struct kwq_ioc *c)
{
	struct kwq_inspect_args *a = &c->a.inspect;
	u8 __user *recs = u64_to_user_ptr(a->recs);
	u8 small[KWQ_REC_SMALL] __aligned(8);
	struct kwq_key_info *infos;
	u64 cursor = a->cursor;
	void *key = NULL;
	unsigned int max, i;
	long ret, size;

	if (a->recs_len < KWQ_INFO_REC_SIZE_MAX_VER1)
		return -EINVAL;
	if (a->key) {
		if (!a->len || a->len > KWQ_KEY_LEN_MAX || a->states ||
		    a->cursor || a->max ||
		    a->recs_len < KWQ_INFO_REC_SIZE(a->len))
			return -EINVAL;
		key = kwq_key_in(c->kf, a->key, a->len, small);
		if (IS_ERR(key))
			return PTR_ERR(key);
		max = 1;
	} else {
		if (a->len || !a->states || a->states & ~KWQ_KEY_STATES_ALL ||
		    !a->max || a->max > KWQ_INSPECT_MAX)
			return -EINVAL;
		/* A version 1 buffer lists a key a call. */
		max = min(a->max,
			  max(a->recs_len / (u32)KWQ_INFO_REC_SIZE_MAX, 1U));
	}
	kwq_rings_pull(&c->uq->rings);
	ret = -ENOMEM;
	infos = kvmalloc_array(max, sizeof(*infos), GFP_KERNEL_ACCOUNT);
	if (!infos)
		goto out;
	if (key)
		ret = kwq_inspect(c->uq->q, key, a->len, infos) ?: 1;
	else
		ret = kwq_inspect_list(c->uq->q, a->states, &cursor, infos,
				       max);
	if (ret < 0) {
		ret = kwq_uq_err(c->uq, ret);
		goto out;
	}
	a->used = 0;
	for (i = 0; i < ret; i++) {
		size = kwq_info_rec_put(recs + a->used, a->recs_len - a->used,
					&infos[i]);
		if (size < 0) {
			ret = size;
			goto out;
		}
		a->used += size;
	}
	a->nr = ret;
	a->cursor = cursor;
	ret = kwq_copy_args_out(c->arg, a, sizeof(*a));
out:
	kvfree(infos);
	if (key)
		kwq_buf_put(c->kf, key, small);
	return ret;
}

/*
 * --- rings ---
 *
 * RING_SETUP under kf->attach_lock (a file sets up one ring, once),
 * RING_ENTER; the rings themselves are ring.c's.
 */

/*
 * KWQ_IOC_RING_SETUP: this file's ring, once. Its memory is charged to
 * the caller's byte budget (none for CAP_SYS_ADMIN, as for queues). Not
 * on a kernel module's queue: its own getters would not see the ring.
 */
static int kwq_ioc_ring_setup(struct kwq_ioc *c)
{
	struct kwq_ring_setup_args *a = &c->a.ring_setup;
	struct kwq_user *user = NULL;
	struct kwq_ring *ring;
	int ret;

	if (c->uq->published)
		return -EOPNOTSUPP;
	if (!capable(CAP_SYS_ADMIN)) {
		mutex_lock(&kwq_uq_lock);
		user = kwq_user_get(current_user_ns(), current_euid());
		mutex_unlock(&kwq_uq_lock);
		if (!user)
			return -ENOMEM;
	}
	mutex_lock(&c->kf->attach_lock);
	ret = -EBUSY;
	if (!c->kf->ring)
		ret = kwq_ring_setup(&c->uq->rings, c->uq->q, c->kf,
				     &c->kf->armed,
				     user ? &user->budget : NULL, a, &ring);
	if (!ret) {
		/* Pairs with kwq_file_ring(): set up before it is seen. */
		smp_store_release(&c->kf->ring, ring);
	}
	mutex_unlock(&c->kf->attach_lock);
	/* The ring holds its own budget reference. */
	kwq_budget_put(user ? &user->budget : NULL);
	if (ret)
		return ret;
	return kwq_copy_args_out(c->arg, a, sizeof(*a));
}

static struct kwq_ring *kwq_file_ring(struct kwq_file *kf)
{
	/* Pairs with kwq_ioc_ring_setup(). */
	return smp_load_acquire(&kf->ring);
}

static int kwq_ioc_ring_enter(struct kwq_ioc *c)
{
	struct kwq_ring_enter_args *a = &c->a.ring_enter;
	struct kwq_ring *ring = kwq_file_ring(c->kf);
	int ret;

	if (!ring)
		return -ENXIO;
	if (!kwq_processing_timeout_ok(a->processing_timeout_ns))
		return -EINVAL;
	ret = kwq_ring_enter(&c->uq->rings, ring, a,
			     c->file->f_flags & O_NONBLOCK, &c->uq->dead);
	ret = kwq_uq_err(c->uq, ret);
	/* What was consumed and leased is reported either way. */
	if (kwq_copy_args_out(c->arg, a, sizeof(*a)))
		return -EFAULT;
	return ret;
}

/*
 * --- the ioctl table and dispatch ---
 *
 * kwq_ioctls[] is constant; the dispatch takes no lock (the attached
 * queue is read locklessly, kwq_file_uq()), the handlers take theirs.
 */

/*
 * An ioctl of /dev/kwq: its number (this version's: the direction it must
 * carry and the size of the struct copied in), its handler, and what
 * kwq_dev_ioctl() does before the call.
 */
struct kwq_ioc_desc {
	unsigned int cmd;
	int (*fn)(struct kwq_ioc *c);
	unsigned int flags;
	/* the first version's size, if the struct has grown since; else 0 */
	unsigned int min_size;
};

#define KWQ_IOCF_QUEUE	0x1	/* needs an attached queue (c->uq) */
#define KWQ_IOCF_IN	0x2	/* the struct is copied in (c->a) */
#define KWQ_IOCF_EXACT	0x4	/* not versioned: the size must match */
#define KWQ_IOCF_QIN	(KWQ_IOCF_QUEUE | KWQ_IOCF_IN)

static const struct kwq_ioc_desc kwq_ioctls[] = {
	[_IOC_NR(KWQ_IOC_CREATE)] = { KWQ_IOC_CREATE, kwq_ioc_create,
				      KWQ_IOCF_IN, KWQ_CREATE_ARGS_SIZE_VER1 },
	[_IOC_NR(KWQ_IOC_OPEN)] = { KWQ_IOC_OPEN, kwq_ioc_open, KWQ_IOCF_IN },
	[_IOC_NR(KWQ_IOC_DESTROY)] = { KWQ_IOC_DESTROY, kwq_ioc_destroy,
				       KWQ_IOCF_IN },
	[_IOC_NR(KWQ_IOC_LIST)] = { KWQ_IOC_LIST, kwq_ioc_list, KWQ_IOCF_IN },
	[_IOC_NR(KWQ_IOC_ADD)] = { KWQ_IOC_ADD, kwq_ioc_add, KWQ_IOCF_QIN },
	[_IOC_NR(KWQ_IOC_GET)] = { KWQ_IOC_GET, kwq_ioc_get, KWQ_IOCF_QIN,
				   KWQ_GET_ARGS_SIZE_VER1 },
	[_IOC_NR(KWQ_IOC_DONE)] = { KWQ_IOC_DONE, kwq_ioc_done, KWQ_IOCF_QIN },
	[_IOC_NR(KWQ_IOC_FORGET)] = { KWQ_IOC_FORGET, kwq_ioc_forget,
				      KWQ_IOCF_QIN },
	[_IOC_NR(KWQ_IOC_REMOVE)] = { KWQ_IOC_REMOVE, kwq_ioc_remove,
				      KWQ_IOCF_QIN },
	[_IOC_NR(KWQ_IOC_NUM_REQUEUES)] = { KWQ_IOC_NUM_REQUEUES,
					    kwq_ioc_num_requeues,
					    KWQ_IOCF_QIN },
	[_IOC_NR(KWQ_IOC_LEN)] = { KWQ_IOC_LEN, kwq_ioc_len,
				   KWQ_IOCF_QUEUE | KWQ_IOCF_EXACT },
	[_IOC_NR(KWQ_IOC_SHUTDOWN)] = { KWQ_IOC_SHUTDOWN, kwq_ioc_shutdown,
					KWQ_IOCF_QIN },
	/* Output only, versioned by size: the handler copies out. */
	[_IOC_NR(KWQ_IOC_STATS)] = { KWQ_IOC_STATS, kwq_ioc_stats,
				     KWQ_IOCF_QUEUE },
	[_IOC_NR(KWQ_IOC_DONE_GET)] = { KWQ_IOC_DONE_GET, kwq_ioc_done_get,
					KWQ_IOCF_QIN,
					KWQ_DONE_GET_ARGS_SIZE_VER1 },
	[_IOC_NR(KWQ_IOC_TOUCH)] = { KWQ_IOC_TOUCH, kwq_ioc_touch,
				     KWQ_IOCF_QIN },
	[_IOC_NR(KWQ_IOC_REVIVE)] = { KWQ_IOC_REVIVE, kwq_ioc_revive,
				      KWQ_IOCF_QIN },
	[_IOC_NR(KWQ_IOC_PURGE)] = { KWQ_IOC_PURGE, kwq_ioc_purge,
				     KWQ_IOCF_QIN },
	[_IOC_NR(KWQ_IOC_INSPECT)] = { KWQ_IOC_INSPECT, kwq_ioc_inspect,
				       KWQ_IOCF_QIN },
	[_IOC_NR(KWQ_IOC_RING_SETUP)] = { KWQ_IOC_RING_SETUP,
					  kwq_ioc_ring_setup,
					  KWQ_IOCF_QIN | KWQ_IOCF_EXACT },
	[_IOC_NR(KWQ_IOC_RING_ENTER)] = { KWQ_IOC_RING_ENTER,
					  kwq_ioc_ring_enter,
					  KWQ_IOCF_QIN | KWQ_IOCF_EXACT },
	/* Output only, versioned by size: the handler copies out. */
	[_IOC_NR(KWQ_IOC_INFO)] = { KWQ_IOC_INFO, kwq_ioc_info,
				    KWQ_IOCF_QUEUE },
};

/*
 * The one way into the handlers: the number checked against the table
 * (type, direction, and for an unversioned argument its size), the
 * attached queue found, the argument struct copied in, in this order.
 */
static long kwq_dev_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	struct kwq_ioc c __uninitialized;
	const struct kwq_ioc_desc *d;
	unsigned int nr = _IOC_NR(cmd);
	int ret;

	if (_IOC_TYPE(cmd) != KWQ_IOC_MAGIC || nr >= ARRAY_SIZE(kwq_ioctls))
		return -ENOTTY;
	d = &kwq_ioctls[array_index_nospec(nr, ARRAY_SIZE(kwq_ioctls))];
	if (!d->fn || _IOC_DIR(cmd) != _IOC_DIR(d->cmd) ||
	    (d->flags & KWQ_IOCF_EXACT && cmd != d->cmd))
		return -ENOTTY;
	c.file = file;
	c.kf = file->private_data;
	c.cmd = cmd;
	c.arg = arg;
	c.uq = NULL;
	if (d->flags & KWQ_IOCF_QUEUE) {
		c.uq = kwq_file_uq(c.kf);
		if (IS_ERR(c.uq))
			return PTR_ERR(c.uq);
	}
	if (d->flags & KWQ_IOCF_IN) {
		ret = kwq_copy_args(&c.a, _IOC_SIZE(d->cmd),
				    d->min_size ?: _IOC_SIZE(d->cmd), cmd, arg);
		if (ret)
			return ret;
	}
	return d->fn(&c);
}

/*
 * --- file operations, module init and exit ---
 *
 * open and release of a file (its lease owner's keys return to the queue
 * on release, its ring drained first, under the rings' locks), poll and
 * mmap without a lock of ours; the misc device registered at init, and
 * at exit the queues left are destroyed (kwq_uq_lock held to find each).
 */

static __poll_t kwq_dev_poll(struct file *file, poll_table *wait)
{
	struct kwq_file *kf = file->private_data;
	struct kwq_uq *uq = kwq_file_uq(kf);

	if (IS_ERR(uq))
		return PTR_ERR(uq) == -EIDRM ? EPOLLERR | EPOLLHUP : EPOLLERR;
	poll_wait(file, kwq_get_waitqueue(uq->q), wait);
	/*
	 * A poller waits outside kwq: producers ring until this file takes
	 * a key, and what they published before is pulled now.
	 */
	kwq_rings_arm(&uq->rings, &kf->armed);
	return kwq_poll(uq->q);
}

static int kwq_dev_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct kwq_file *kf = file->private_data;
	struct kwq_ring *ring = kwq_file_ring(kf);
	struct kwq_uq *uq = kwq_file_uq(kf);

	if (IS_ERR(uq))
		return PTR_ERR(uq);
	if (!ring)
		return -ENXIO;
	return kwq_ring_mmap(&uq->rings, ring, vma);
}

static int kwq_dev_open(struct inode *inode, struct file *file)
{
	struct kwq_file *kf;

	kf = kzalloc(sizeof(*kf), GFP_KERNEL_ACCOUNT);
	if (!kf)
		return -ENOMEM;
	kf->scratch = kmalloc(KWQ_SCRATCH_SIZE, GFP_KERNEL_ACCOUNT);
	if (!kf->scratch) {
		kfree(kf);
		return -ENOMEM;
	}
	mutex_init(&kf->out_lock);
	mutex_init(&kf->in_lock);
	mutex_init(&kf->attach_lock);
	kf->pid = get_pid(task_tgid(current));
	file->private_data = kf;
	return nonseekable_open(inode, file);
}

static int kwq_dev_release(struct inode *inode, struct file *file)
{
	struct kwq_file *kf = file->private_data;

	if (kf->uq) {
		/* What its ring published is applied before anything else. */
		if (kf->ring)
			kwq_ring_release(&kf->uq->rings, kf->ring);
		/* Leases end with the file: its keys go back to the queue. */
		kwq_release_owner_sleep(kf->uq->q, kf);
		/* It waits for nothing any more. */
		kwq_rings_disarm(&kf->uq->rings, &kf->armed);
		kwq_uq_detach(kf->uq);
		/* Often the last process of a namespace exiting. */
		kwq_ns_reap_kick();
	}
	mutex_destroy(&kf->attach_lock);
	mutex_destroy(&kf->out_lock);
	mutex_destroy(&kf->in_lock);
	put_pid(kf->pid);
	kfree(kf->scratch);
	kfree(kf);
	return 0;
}

static const struct file_operations kwq_dev_fops = {
	.owner = THIS_MODULE,
	.open = kwq_dev_open,
	.release = kwq_dev_release,
	.unlocked_ioctl = kwq_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = kwq_dev_poll,
	.mmap = kwq_dev_mmap,
	.llseek = KWQ_NO_LLSEEK,
};

static struct miscdevice kwq_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kwq",
	.fops = &kwq_dev_fops,
	.mode = 0666,
};

int kwq_dev_init(void)
{
	int ret = misc_register(&kwq_misc);

	if (!ret)
		kwq_registry_set_unpublish(kwq_unpublish);
	return ret;
}

/*
 * Queues nobody destroyed die with the module (no fd can be open now, so
 * the list holds the only kwq_uq reference). A published queue is only
 * unlisted (its module is gone already: its queue leaked).
 */
void kwq_dev_exit(void)
{
	struct kwq_uq *uq;
	struct kwq_ns *ns;

	misc_deregister(&kwq_misc);
	kwq_registry_set_unpublish(NULL);
	/* Nothing lists a queue in a new namespace now: it stays idle. */
	cancel_delayed_work_sync(&kwq_ns_reap_work);
	for (;;) {
		mutex_lock(&kwq_uq_lock);
		ns = list_first_entry_or_null(&kwq_ns_list, struct kwq_ns, node);
		uq = ns ? list_first_entry(&ns->queues, struct kwq_uq, node) : NULL;
		if (uq)
			kwq_uq_kill(uq);
		mutex_unlock(&kwq_uq_lock);
		if (!uq)
			break;
		if (!uq->published) {
			kwq_get_ref(uq->q);
			kwq_destroy(uq->q);
		}
		kwq_uq_put(uq);
	}
}
