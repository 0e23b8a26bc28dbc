// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kwq: the misc device through which userspace reaches kwq queues.
 * The ABI is include/uapi/linux/kwq.h; its rules are written there.
 *
 * Names: queues created here are anonymous to the core (kwq_create_anon):
 * they never enter the registry of kernel queues, so kwq_find() never
 * returns one and a user never takes a kernel queue's name. Their names
 * live here, one namespace per IPC namespace, as POSIX message queues':
 * a process sees (CREATE, OPEN, DESTROY, LIST) the queues of the IPC
 * namespace it is in at the call. A kernel queue enters one of these
 * namespaces only when its module publishes it (kwq_publish()).
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
#include "kwq_internal.h"
#include "ring.h"
#include "stats.h"

static unsigned int max_queues_per_user = 64;
module_param(max_queues_per_user, uint, 0644);
MODULE_PARM_DESC(max_queues_per_user,
		 "Queues one user may create through /dev/kwq, per user namespace and counted in its ancestors (CAP_SYS_ADMIN is exempt; default 64)");

static unsigned int max_items_per_queue = 1U << 21;
module_param(max_items_per_queue, uint, 0644);
MODULE_PARM_DESC(max_items_per_queue,
		 "Largest item cap of a queue created through /dev/kwq; also the cap when none is given (default 2097152)");

static DEFINE_MUTEX(kwq_uq_lock);
static LIST_HEAD(kwq_ns_list);
static LIST_HEAD(kwq_pub_list);
static LIST_HEAD(kwq_user_list);
/* kwq_ns records of IPC namespaces other than the initial one. */
static unsigned int kwq_nr_foreign_ns;

/*
 * The reaper looks for dead namespaces every KWQ_NS_REAP_PERIOD while
 * kwq lists queues in namespaces other than the initial one; a file's
 * release (often the last process of a container exiting) asks for a
 * look at once, at most every KWQ_NS_REAP_KICK.
 */
#define KWQ_NS_REAP_PERIOD	(2 * HZ)
#define KWQ_NS_REAP_KICK	(HZ / 10)
static void kwq_ns_reap_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(kwq_ns_reap_work, kwq_ns_reap_fn);
static unsigned long kwq_ns_reap_last;	/* jiffies; the last look */

static unsigned long max_bytes_per_user = 64UL << 20;
static int kwq_set_max_bytes(const char *val, const struct kernel_param *kp);
static const struct kernel_param_ops kwq_max_bytes_ops = {
	.set = kwq_set_max_bytes,
	.get = param_get_ulong,
};
module_param_cb(max_bytes_per_user, &kwq_max_bytes_ops, &max_bytes_per_user,
		0644);
MODULE_PARM_DESC(max_bytes_per_user,
		 "Kernel memory the queues one user created through /dev/kwq may use, in bytes: queues, hash tables and keys, whoever adds them; per user namespace and counted in its ancestors (CAP_SYS_ADMIN is exempt; default 64 MiB)");

/* The largest record buffer a batch call reads. */
#define KWQ_RECS_LEN_MAX	(KWQ_BATCH_MAX * KWQ_REC_SIZE_MAX)

static_assert(KWQ_INFO_REC_SIZE(0) == sizeof(struct kwq_info_rec));
static_assert(KWQ_CREATE_ARGS_SIZE_VER1 ==
	      offsetof(struct kwq_create_args, processing_timeout_ns));
static_assert(KWQ_STATS_ARGS_SIZE_VER2 ==
	      offsetof(struct kwq_stats_args, processing_timeouts_total));

struct kwq_ns {
	struct list_head node;		/* kwq_ns_list */
	struct list_head queues;	/* its listed kwq_uq; never empty */
	struct ipc_namespace *ipc;	/* constant, a reference */
	struct dentry *debugfs;		/* kwq/ipc:<inum>, once a queue needs it */
};

/*
 * struct kwq_user - the limits of one user in one user namespace. Listed
 * in kwq_user_list while referenced: by the queues that charge its budget
 * (q->budget), by its children, and briefly by a creator.
 */
struct kwq_user {
	struct list_head node;		/* kwq_user_list */
	struct user_namespace *user_ns;	/* constant, a reference */
	kuid_t uid;			/* constant */
	struct kwq_user *parent;	/* constant, a reference; NULL: none */
	unsigned int nr_queues;		/* unfreed queues here or below */
	struct kwq_budget budget;
};

struct kwq_uq {
	struct list_head node;		/* ns->queues, while listed */
	struct list_head pub_node;	/* kwq_pub_list, while listed */
	refcount_t ref;
	struct kwq *q;			/* constant */
	struct kwq_ns *ns;		/* while listed, then NULL */
	struct kwq_user *user;		/* constant: counts it; NULL: none */
	kuid_t uid;			/* constant: creator's euid */
	kgid_t gid;			/* constant: creator's egid */
	umode_t mode;			/* constant */
	bool published;			/* constant: a kernel queue */
	bool ephemeral;			/* constant: KWQ_CREATE_EPHEMERAL */
	bool dead;			/* set once, when unlisted */
	unsigned int nr_files;		/* attached files; kwq_uq_lock */
	/* constant: its CREATE's arguments as accepted (KWQ_IOC_INFO) */
	struct kwq_create_args args;
	struct kwq_rings rings;		/* the rings of its files */
};

/*
 * The record of a key of up to KWQ_KEY_LEN_MAX_VER1 bytes, most keys:
 * the one-key paths keep it (or the key) in a buffer of this size on
 * their stack, a longer one in the file's scratch buffer or the heap
 * (kwq_buf_get()). A KWQ_REC_SIZE_MAX one would not leave room on the
 * stack for the rest of the call.
 */
#define KWQ_REC_SMALL		KWQ_REC_SIZE_MAX_VER1

/*
 * A file's scratch buffer, one allocation of KWQ_SCRATCH_SIZE bytes (the
 * slab object the largest GET round's records need anyway) in two parts
 * with a lock each: the records a GET round copies out (the first
 * KWQ_SCRATCH_OUT_LEN bytes) and the records a call copies in (the
 * rest), so that DONE_GET holds both at once.
 */
#define KWQ_SCRATCH_SIZE	8192
#define KWQ_SCRATCH_OUT_LEN	(16 * KWQ_REC_SMALL)
#define KWQ_SCRATCH_IN_LEN	(KWQ_SCRATCH_SIZE - KWQ_SCRATCH_OUT_LEN)
/* A round of 64 16-byte keys' records (1536 bytes) copies in here. */
static_assert(KWQ_SCRATCH_IN_LEN >= 64 * KWQ_REC_SIZE(16));
/* Any one key's record fits either part. */
static_assert(KWQ_SCRATCH_OUT_LEN >= KWQ_REC_SIZE_MAX);
static_assert(KWQ_SCRATCH_IN_LEN >= KWQ_REC_SIZE_MAX);

struct kwq_file {
	struct mutex attach_lock;	/* serialises CREATE/OPEN */
	struct kwq_uq *uq;		/* NULL until CREATE/OPEN */
	struct mutex out_lock;		/* held by the call using ->scratch */
	struct mutex in_lock;		/* ... using ->scratch + OUT_LEN */
	u8 *scratch;			/* KWQ_SCRATCH_SIZE bytes */
	struct pid *pid;		/* the opener: holder of its leases */
	/* set once under attach_lock (smp_store_release); NULL: none */
	struct kwq_ring *ring;
	unsigned long armed;		/* counted in the rings' waiters */
};

/*
 * The holder id KWQ_IOC_INSPECT reports for a key leased to an owner
 * cookie of ours: the opener of the file, in the reader's pid namespace
 * (0 if not visible there). Called under the queue lock while the key is
 * leased to the file, so the file is still open.
 */
static u32 kwq_file_holder(const void *owner)
{
	const struct kwq_file *kf = owner;

	return pid_vnr(kf->pid);
}

/* The IPC namespace of the caller: names are looked up there. */
static struct ipc_namespace *kwq_current_ipc_ns(void)
{
	return current->nsproxy->ipc_ns;
}

/* init_ipc_ns is not exported by every kernel (6.1); init_task has it. */
static struct ipc_namespace *kwq_init_ipc_ns(void)
{
	return init_task.nsproxy->ipc_ns;
}

/* Whose capabilities count for a queue: like SysV IPC, the namespace's. */
static struct user_namespace *kwq_ns_user_ns(const struct kwq_ns *ns)
{
	return ns->ipc ? ns->ipc->user_ns : &init_user_ns;
}

/* Under kwq_uq_lock: the kwq_ns of @ipc, or NULL. */
static struct kwq_ns *kwq_ns_find(struct ipc_namespace *ipc)
{
	struct kwq_ns *ns;

	lockdep_assert_held(&kwq_uq_lock);
	list_for_each_entry(ns, &kwq_ns_list, node)
		if (ns->ipc == ipc)
			return ns;
	return NULL;
}

/*
 * Under kwq_uq_lock: the kwq_ns of @ipc, made if none; NULL on allocation
 * failure. The caller lists a queue in it or calls kwq_ns_release().
 */
static struct kwq_ns *kwq_ns_get(struct ipc_namespace *ipc)
{
	struct kwq_ns *ns = kwq_ns_find(ipc);

	if (ns)
		return ns;
	ns = kzalloc(sizeof(*ns), GFP_KERNEL_ACCOUNT);
	if (!ns)
		return NULL;
	INIT_LIST_HEAD(&ns->queues);
	ns->ipc = get_ipc_ns(ipc);
	list_add(&ns->node, &kwq_ns_list);
	if (ipc != kwq_init_ipc_ns()) {
		WRITE_ONCE(kwq_nr_foreign_ns, kwq_nr_foreign_ns + 1);
		/* No-op while a look is pending already. */
		queue_delayed_work(system_unbound_wq, &kwq_ns_reap_work,
				   round_jiffies_relative(KWQ_NS_REAP_PERIOD));
	}
	return ns;
}

/* Under kwq_uq_lock: free @ns if it lists no queue. */
static void kwq_ns_release(struct kwq_ns *ns)
{
	lockdep_assert_held(&kwq_uq_lock);
	if (!list_empty(&ns->queues))
		return;
	list_del(&ns->node);
	if (ns->ipc != kwq_init_ipc_ns())
		WRITE_ONCE(kwq_nr_foreign_ns, kwq_nr_foreign_ns - 1);
	/* Its queues' directories went with them: this one is empty. */
	debugfs_remove(ns->debugfs);
	kwq_put_ipc_ns(ns->ipc);
	kfree(ns);
}

/* Under kwq_uq_lock: @q's metrics in kwq/ipc:<inum>/<name>. */
static void kwq_ns_debugfs_add(struct kwq_ns *ns, struct kwq *q)
{
	char dir[24];

	lockdep_assert_held(&kwq_uq_lock);
	/*
	 * An ERR_PTR (no debugfs) is kept: children fail quietly. Not one of
	 * -ENOMEM: that was this moment's, and the next queue tries again,
	 * or the namespace's queues would have no metrics while it lives.
	 */
	if (!ns->debugfs || PTR_ERR_OR_ZERO(ns->debugfs) == -ENOMEM) {
		snprintf(dir, sizeof(dir), "ipc:%u", ns->ipc ? ns->ipc->ns.inum : 0);
		ns->debugfs = kwq_debugfs_dir(dir);
	}
	kwq_debugfs_add(q, ns->debugfs);
}

/* Under kwq_uq_lock: the queue named @name in @ns, or NULL. */
static struct kwq_uq *kwq_ns_lookup(struct kwq_ns *ns, const char *name)
{
	struct kwq_uq *uq;

	list_for_each_entry(uq, &ns->queues, node)
		if (!strcmp(kwq_name(uq->q), name))
			return uq;
	return NULL;
}

/* Under kwq_uq_lock: the queue named @name in the caller's namespace. */
static struct kwq_uq *kwq_uq_find(const char *name)
{
	struct kwq_ns *ns = kwq_ns_find(kwq_current_ipc_ns());

	return ns ? kwq_ns_lookup(ns, name) : NULL;
}

/* Under kwq_uq_lock: the publication of @q, or NULL. */
static struct kwq_uq *kwq_pub_find(struct kwq *q)
{
	struct kwq_uq *uq;

	list_for_each_entry(uq, &kwq_pub_list, pub_node)
		if (uq->q == q)
			return uq;
	return NULL;
}

/*
 * Under kwq_uq_lock: free @u, whose last reference is gone, and each
 * parent whose last reference it held.
 */
static void kwq_user_free_locked(struct kwq_user *u)
{
	struct kwq_user *parent;

	lockdep_assert_held(&kwq_uq_lock);
	for (; u; u = parent) {
		parent = u->parent;
		list_del(&u->node);
		WARN_ON_ONCE(atomic_long_read(&u->budget.used) || u->nr_queues);
		put_user_ns(u->user_ns);
		kfree(u);
		if (parent && !refcount_dec_and_test(&parent->budget.ref))
			break;
	}
}

static void kwq_user_put_locked(struct kwq_user *u)
{
	if (u && refcount_dec_and_test(&u->budget.ref))
		kwq_user_free_locked(u);
}

/* The last kwq_budget_put() of a queue's budget, outside kwq_uq_lock. */
static void kwq_user_release(struct kwq_budget *b)
{
	mutex_lock(&kwq_uq_lock);
	kwq_user_free_locked(container_of(b, struct kwq_user, budget));
	mutex_unlock(&kwq_uq_lock);
}

/*
 * Under kwq_uq_lock: the limits of @uid in @user_ns, with a reference for
 * the caller, made (and their parents) if need be; NULL on allocation
 * failure. An entry whose last reference is being dropped is passed
 * over: it is unlisted as soon as its release gets the mutex.
 */
static struct kwq_user *kwq_user_get(struct user_namespace *user_ns,
				     kuid_t uid)
{
	struct kwq_user *u, *parent = NULL;

	lockdep_assert_held(&kwq_uq_lock);
	list_for_each_entry(u, &kwq_user_list, node)
		if (u->user_ns == user_ns && uid_eq(u->uid, uid) &&
		    refcount_inc_not_zero(&u->budget.ref))
			return u;
	/* The owner of a user namespace pays for it in the parent. */
	if (user_ns != &init_user_ns) {
		parent = kwq_user_get(user_ns->parent, user_ns->owner);
		if (!parent)
			return NULL;
	}
	u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
	if (!u) {
		kwq_user_put_locked(parent);
		return NULL;
	}
	u->user_ns = get_user_ns(user_ns);
	u->uid = uid;
	u->parent = parent;
	u->budget.limit = READ_ONCE(max_bytes_per_user);
	u->budget.parent = parent ? &parent->budget : NULL;
	u->budget.release = kwq_user_release;
	refcount_set(&u->budget.ref, 1);
	list_add(&u->node, &kwq_user_list);
	return u;
}

/* A new max_bytes_per_user applies to every user at once. */
static int kwq_set_max_bytes(const char *val, const struct kernel_param *kp)
{
	struct kwq_user *u;
	int ret;

	mutex_lock(&kwq_uq_lock);
	ret = param_set_ulong(val, kp);
	if (!ret)
		list_for_each_entry(u, &kwq_user_list, node)
			WRITE_ONCE(u->budget.limit, max_bytes_per_user);
	mutex_unlock(&kwq_uq_lock);
	return ret;
}

/*
 * Never under kwq_uq_lock: the last put may free the queue. Process
 * context. The queue leaves its creator's queue count and its bytes go
 * back to the budget before this returns (kwq_put_sync), so a DESTROY or
 * a close that drops the last reference makes room for the next CREATE
 * at once. The count is dropped first, while the queue's budget still
 * holds its kwq_user.
 */
static void kwq_uq_put(struct kwq_uq *uq)
{
	struct kwq_user *u;

	if (!refcount_dec_and_test(&uq->ref))
		return;
	if (uq->user) {
		mutex_lock(&kwq_uq_lock);
		for (u = uq->user; u; u = u->parent)
			u->nr_queues--;
		mutex_unlock(&kwq_uq_lock);
	}
	kwq_rings_free(&uq->rings, uq->q);
	kwq_put_sync(uq->q);
	kfree(uq);
}

/*
 * Under kwq_uq_lock: take @uq out of its namespace (its name is free
 * again; the namespace's record goes with its last queue). The list's
 * reference passes to the caller, who drops it after the mutex. The
 * queue still counts against its creator until it is freed.
 */
static void kwq_uq_unlist(struct kwq_uq *uq)
{
	struct kwq_ns *ns = uq->ns;

	lockdep_assert_held(&kwq_uq_lock);
	list_del(&uq->node);
	if (uq->published)
		list_del(&uq->pub_node);
	else
		/* Waits for readers of the metrics file (only take q->lock). */
		kwq_debugfs_remove(uq->q);
	uq->ns = NULL;
	kwq_ns_release(ns);
}

/* Under kwq_uq_lock: unlist @uq and mark it dead (EIDRM from now on). */
static void kwq_uq_kill(struct kwq_uq *uq)
{
	kwq_uq_unlist(uq);
	/* Pairs with kwq_file_uq() and the core's abortable get. */
	WRITE_ONCE(uq->dead, true);
	kwq_rings_set_status(&uq->rings, KWQ_STATUS_DESTROYED);
}

/*
 * Under kwq_uq_lock: unlist the queues of every namespace that only kwq
 * still references onto @reaped (through their ->node), published ones
 * killed (unpublished). A namespace is dead then: no task is in it and
 * no nsfs file, mount or shm mapping holds it, so nobody can enter it,
 * and as names resolve in the caller's namespace, nobody can reach its
 * queues by name again. Dropping the record's reference frees it. (Only
 * 6.18's namespace file handles could reopen such a namespace by its id,
 * with CAP_SYS_ADMIN over it; from 6.19 they open only namespaces a task
 * or file keeps active. One reopened so has lost its queues.) The
 * initial namespace never dies, and is never looked at: later kernels
 * keep its count at 1 whoever holds it.
 */
static void kwq_ns_reap_locked(struct list_head *reaped)
{
	struct kwq_ns *ns, *next;
	struct kwq_uq *uq;
	bool last;

	lockdep_assert_held(&kwq_uq_lock);
	WRITE_ONCE(kwq_ns_reap_last, jiffies);
	list_for_each_entry_safe(ns, next, &kwq_ns_list, node) {
		if (ns->ipc == kwq_init_ipc_ns() ||
		    !kwq_ipc_ns_last_ref(ns->ipc))
			continue;
		/* The last unlist frees @ns: do not look at it after that. */
		do {
			uq = list_first_entry(&ns->queues, struct kwq_uq, node);
			last = list_is_singular(&ns->queues);
			if (uq->published)
				kwq_uq_kill(uq);
			else
				kwq_uq_unlist(uq);
			list_add_tail(&uq->node, reaped);
		} while (!last);
	}
}

/*
 * Never under kwq_uq_lock: unlist the queues of dead namespaces and drop
 * their list references. A user's queue no file uses is freed now (its
 * count and bytes back to its creator); one a file still uses lives on,
 * unnamed, until that file is closed. A published queue is unpublished,
 * not destroyed: its module does that. Returns how many queues it
 * unlisted.
 */
static unsigned int kwq_ns_reap(void)
{
	struct kwq_uq *uq, *tmp;
	unsigned int n = 0;
	LIST_HEAD(reaped);

	mutex_lock(&kwq_uq_lock);
	kwq_ns_reap_locked(&reaped);
	mutex_unlock(&kwq_uq_lock);
	list_for_each_entry_safe(uq, tmp, &reaped, node) {
		list_del(&uq->node);
		if (uq->published)
			/* Blocked gets and pollers see it dead and leave. */
			kwq_wake_all(uq->q);
		kwq_uq_put(uq);
		n++;
	}
	return n;
}

static void kwq_ns_reap_fn(struct work_struct *work)
{
	kwq_ns_reap();
	/* A record made meanwhile armed the work already: then a no-op. */
	if (READ_ONCE(kwq_nr_foreign_ns))
		queue_delayed_work(system_unbound_wq, &kwq_ns_reap_work,
				   round_jiffies_relative(KWQ_NS_REAP_PERIOD));
}

/* A look for dead namespaces now, unless there was one just before. */
static void kwq_ns_reap_kick(void)
{
	if (READ_ONCE(kwq_nr_foreign_ns) &&
	    time_after(jiffies, READ_ONCE(kwq_ns_reap_last) + KWQ_NS_REAP_KICK))
		mod_delayed_work(system_unbound_wq, &kwq_ns_reap_work, 0);
}

/*
 * SysV IPC style (ipcperms()): owner bits, else group bits, else other
 * bits; CAP_IPC_OWNER in the user namespace owning the queue's IPC
 * namespace bypasses them.
 */
static bool kwq_uq_may_open(const struct kwq_uq *uq)
{
	umode_t granted = uq->mode;

	if (uid_eq(current_euid(), uq->uid))
		granted >>= 6;
	else if (in_group_p(uq->gid))
		granted >>= 3;
	if ((granted & 06) == 06)
		return true;
	return ns_capable(kwq_ns_user_ns(uq->ns), CAP_IPC_OWNER);
}

/* As IPC_RMID: the owner, or CAP_SYS_ADMIN over the namespace. */
static bool kwq_uq_may_destroy(const struct kwq_uq *uq)
{
	return uid_eq(current_euid(), uq->uid) ||
	       ns_capable(kwq_ns_user_ns(uq->ns), CAP_SYS_ADMIN);
}

/*
 * Small copies in whole 8-byte words: the argument structs and one key's
 * record, the copies every call makes. One user access window of plain
 * loads or stores, where copy_{from,to}_user() adds a run-time object
 * size check (the sizes are not constants) and a string copy: 30-80
 * guest instructions of a one-key ADD and 130-170 of a DONE_GET under
 * QEMU (Documentation/benchmarks.rst). Anything else goes through
 * copy_{from,to}_user(). @k is the caller's own buffer of @len bytes,
 * 8-byte aligned.
 */
#define KWQ_WORDS_MAX		KWQ_REC_SMALL

static bool kwq_words_ok(const void __user *u, size_t len)
{
	return len <= KWQ_WORDS_MAX && IS_ALIGNED(len, sizeof(u64)) &&
	       (IS_ENABLED(CONFIG_HAVE_EFFICIENT_UNALIGNED_ACCESS) ||
		IS_ALIGNED((unsigned long)u, sizeof(u64)));
}

static int kwq_copy_in(void *k, const void __user *u, size_t len)
{
	const u64 __user *src = u;
	u64 *dst = k;
	size_t i;

	if (!kwq_words_ok(u, len))
		return copy_from_user(k, u, len) ? -EFAULT : 0;
	if (!user_read_access_begin(u, len))
		return -EFAULT;
	for (i = 0; i < len / sizeof(u64); i++)
		unsafe_get_user(dst[i], &src[i], efault);
	user_read_access_end();
	return 0;
efault:
	user_read_access_end();
	return -EFAULT;
}

static int kwq_copy_out(void __user *u, const void *k, size_t len)
{
	u64 __user *dst = u;
	const u64 *src = k;
	size_t i;

	if (!kwq_words_ok(u, len))
		return copy_to_user(u, k, len) ? -EFAULT : 0;
	if (!user_write_access_begin(u, len))
		return -EFAULT;
	for (i = 0; i < len / sizeof(u64); i++)
		unsafe_put_user(src[i], &dst[i], efault);
	user_write_access_end();
	return 0;
efault:
	user_write_access_end();
	return -EFAULT;
}

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

static int kwq_copy_args_out(unsigned long arg, const void *src, size_t ksize)
{
	return kwq_copy_out((void __user *)arg, src, ksize);
}

static bool kwq_name_terminated(const char *name)
{
	return memchr(name, '\0', KWQ_NAME_LEN) && name[0];
}

static int kwq_limits_from_user(struct kwq_config *cfg,
				const struct kwq_create_args *a)
{
	u32 i;

	if (a->nr_limits > KWQ_LIMITS_MAX)
		return -EINVAL;
	cfg->nr_limiters = a->nr_limits;
	for (i = 0; i < a->nr_limits; i++) {
		const struct kwq_limit *l = &a->limits[i];
		struct kwq_limiter_config *c = &cfg->limiters[i];

		c->type = l->type;
		switch (l->type) {
		case KWQ_LIMIT_EXPONENTIAL:
			if (l->count)
				return -EINVAL;
			c->exp.base_ns = l->a;
			c->exp.max_ns = l->b;
			break;
		case KWQ_LIMIT_FAST_SLOW:
			c->fast_slow.fast_ns = l->a;
			c->fast_slow.slow_ns = l->b;
			c->fast_slow.max_fast = l->count;
			break;
		case KWQ_LIMIT_BUCKET:
			if (l->b)
				return -EINVAL;
			c->bucket.qps_milli = l->a;
			c->bucket.burst = l->count;
			break;
		default:
			return -EINVAL;
		}
	}
	/* Unused slots must be zero like any reserved field. */
	for (; i < KWQ_LIMITS_MAX; i++)
		if (memchr_inv(&a->limits[i], 0, sizeof(a->limits[i])))
			return -EINVAL;
	return 0;
}

/* Under kf->attach_lock: publish @uq (and a reference) as @kf's queue. */
static void kwq_attach(struct kwq_file *kf, struct kwq_uq *uq)
{
	/* Pairs with kwq_file_uq(): the uq is complete before it is seen. */
	smp_store_release(&kf->uq, uq);
}

/*
 * What kwq_dev_ioctl() hands every handler: the file, its queue if the
 * ioctl needs one (KWQ_IOCF_QUEUE, the file attached), and the argument
 * struct copied in (KWQ_IOCF_IN; its version checked). A handler holds
 * only its own operation and writes back what it answers.
 */
struct kwq_ioc {
	struct file *file;
	struct kwq_file *kf;
	struct kwq_uq *uq;
	unsigned int cmd;
	unsigned long arg;
	union {
		struct kwq_create_args create;
		struct kwq_open_args open;
		struct kwq_list_args list;
		struct kwq_keys_args keys;
		struct kwq_get_args get;
		struct kwq_done_get_args done_get;
		struct kwq_key_args key;
		struct kwq_shutdown_args shutdown;
		struct kwq_dead_args dead;
		struct kwq_inspect_args inspect;
		struct kwq_touch_args touch;
		struct kwq_ring_setup_args ring_setup;
		struct kwq_ring_enter_args ring_enter;
	} a;
};

static int kwq_ioc_create(struct kwq_ioc *c)
{
	struct kwq_user *user = NULL, *u;
	struct kwq_create_args *a = &c->a.create;
	struct kwq_config cfg = {};
	bool reaped = false;
	struct kwq_uq *uq;
	struct kwq_ns *ns;
	struct kwq *q;
	int ret;

	if (!kwq_name_terminated(a->name) || a->flags & ~KWQ_CREATE_FLAGS ||
	    a->mode & ~0777 ||
	    a->max_items > max_items_per_queue ||
	    (a->processing_timeout_ns &&
	     (a->processing_timeout_ns < KWQ_PROCESSING_TIMEOUT_MIN ||
	      a->processing_timeout_ns > KWQ_PROCESSING_TIMEOUT_MAX)))
		return -EINVAL;
	ret = kwq_limits_from_user(&cfg, a);
	if (ret)
		return ret;
	cfg.max_wait_ns = a->max_wait_ns;
	cfg.processing_timeout_ns = a->processing_timeout_ns;
	cfg.max_items = a->max_items ?: max_items_per_queue;
	/* The core checks their ranges (EINVAL). */
	cfg.max_retries = a->max_retries;
	cfg.max_dead = a->max_dead;
	/* Keys to the adding task's memcg, the queue to its creator's. */
	cfg.flags = KWQ_CONFIG_CHARGE_CALLER;

	uq = kzalloc(sizeof(*uq), GFP_KERNEL_ACCOUNT);
	if (!uq)
		return -ENOMEM;
	refcount_set(&uq->ref, 2);	/* the list's and this file's */
	/* Its rings' status page: waiters are counted from the start. */
	if (kwq_rings_init(&uq->rings, true)) {
		kfree(uq);
		return -ENOMEM;
	}
	uq->uid = current_euid();
	uq->gid = current_egid();
	uq->mode = a->mode ?: 0600;
	uq->ephemeral = a->flags & KWQ_CREATE_EPHEMERAL;
	uq->nr_files = 1;
	/* What other openers read (INFO): no byte past the name's NUL. */
	uq->args = *a;
	strscpy_pad(uq->args.name, a->name, sizeof(uq->args.name));
	uq->args.mode = uq->mode;

	mutex_lock(&c->kf->attach_lock);
	ret = -EISCONN;
	if (c->kf->uq)
		goto out_unlock_file;
again:
	mutex_lock(&kwq_uq_lock);
	ret = -ENOMEM;
	ns = kwq_ns_get(kwq_current_ipc_ns());
	if (!ns)
		goto out_unlock;
	ret = -EEXIST;
	if (kwq_ns_lookup(ns, a->name))
		goto out_ns;
	/* Limits per user: queues, and bytes through a budget. */
	if (!capable(CAP_SYS_ADMIN)) {
		ret = -ENOMEM;
		user = kwq_user_get(current_user_ns(), uq->uid);
		if (!user)
			goto out_ns;
		ret = -EDQUOT;
		for (u = user; u; u = u->parent)
			if (u->nr_queues >= max_queues_per_user)
				goto out_user;
	}
	q = kwq_create_anon(a->name, &cfg, user ? &user->budget : NULL);
	ret = PTR_ERR_OR_ZERO(q);
	if (ret)
		goto out_user;
	/* Its leases' owners are our files (or none). */
	kwq_set_holder(q, kwq_file_holder);
	for (u = user; u; u = u->parent)
		u->nr_queues++;
	uq->q = q;
	uq->user = user;
	uq->ns = ns;
	list_add_tail(&uq->node, &ns->queues);
	/* Under the mutex: a queue of the same name may be on its way out. */
	kwq_ns_debugfs_add(ns, q);
	/* The queue holds its own budget reference: not the last one. */
	kwq_user_put_locked(user);
	mutex_unlock(&kwq_uq_lock);
	kwq_attach(c->kf, uq);
	mutex_unlock(&c->kf->attach_lock);
	return 0;

out_user:
	kwq_user_put_locked(user);
out_ns:
	kwq_ns_release(ns);
out_unlock:
	mutex_unlock(&kwq_uq_lock);
	/*
	 * Queues of dead namespaces count until the reaper frees them: at a
	 * limit, free them now and try once more, so that what a user may
	 * create never depends on when the reaper last ran.
	 */
	if (ret == -EDQUOT && !reaped && kwq_ns_reap()) {
		reaped = true;
		user = NULL;
		goto again;
	}
out_unlock_file:
	mutex_unlock(&c->kf->attach_lock);
	kwq_rings_free(&uq->rings, NULL);
	kfree(uq);
	return ret;
}

static int kwq_ioc_open(struct kwq_ioc *c)
{
	struct kwq_open_args *a = &c->a.open;
	struct kwq_uq *uq;
	int ret;

	if (!kwq_name_terminated(a->name) || a->flags || a->pad)
		return -EINVAL;

	mutex_lock(&c->kf->attach_lock);
	ret = -EISCONN;
	if (c->kf->uq)
		goto out;
	mutex_lock(&kwq_uq_lock);
	uq = kwq_uq_find(a->name);
	if (!uq)
		ret = -ENOENT;
	else if (!kwq_uq_may_open(uq))
		ret = -EACCES;
	else
		ret = 0;
	if (!ret) {
		refcount_inc(&uq->ref);
		uq->nr_files++;
	}
	mutex_unlock(&kwq_uq_lock);
	if (!ret)
		kwq_attach(c->kf, uq);
out:
	mutex_unlock(&c->kf->attach_lock);
	return ret;
}

/*
 * After kwq_uq_kill(): the core queue is destroyed (shut down, its keys
 * dropped, its waiters woken) and the list's reference dropped. Attached
 * files keep their core references: the queue is unnamed now, and freed
 * when the last file closes.
 */
static void kwq_uq_destroy(struct kwq_uq *uq)
{
	kwq_get_ref(uq->q);
	kwq_destroy(uq->q);
	kwq_uq_put(uq);
}

static int kwq_ioc_destroy(struct kwq_ioc *c)
{
	struct kwq_open_args *a = &c->a.open;
	struct kwq_uq *uq;
	int ret = 0;

	if (!kwq_name_terminated(a->name) || a->flags || a->pad)
		return -EINVAL;

	mutex_lock(&kwq_uq_lock);
	uq = kwq_uq_find(a->name);
	if (!uq)
		ret = -ENOENT;
	/* A published queue belongs to its module: only it destroys it. */
	else if (uq->published || !kwq_uq_may_destroy(uq))
		ret = -EPERM;
	else
		kwq_uq_kill(uq);
	mutex_unlock(&kwq_uq_lock);
	if (ret)
		return ret;
	kwq_uq_destroy(uq);
	return 0;
}

/*
 * A file attached to @uq is closing: its reference goes. The last file
 * of an ephemeral queue still listed destroys the queue first, as
 * KWQ_IOC_DESTROY does (an OPEN racing with it either came first and
 * counts, or finds no queue). Never under kwq_uq_lock.
 */
static void kwq_uq_detach(struct kwq_uq *uq)
{
	bool last;

	mutex_lock(&kwq_uq_lock);
	/* Listed: not destroyed, nor unlisted with a dead namespace. */
	last = !--uq->nr_files && uq->ephemeral && uq->ns;
	if (last)
		kwq_uq_kill(uq);
	mutex_unlock(&kwq_uq_lock);
	if (last)
		kwq_uq_destroy(uq);
	kwq_uq_put(uq);
}

/* Under kwq_uq_lock: copy up to @slots names of the caller's namespace. */
static u32 kwq_list_names(char *buf, u32 slots)
{
	struct kwq_ns *ns = kwq_ns_find(kwq_current_ipc_ns());
	struct kwq_uq *uq;
	u32 n = 0;

	if (!ns)
		return 0;
	list_for_each_entry(uq, &ns->queues, node) {
		if (n < slots)
			strscpy(buf + (size_t)n * KWQ_NAME_LEN, kwq_name(uq->q),
				KWQ_NAME_LEN);
		n++;
	}
	return n;
}

static int kwq_ioc_list(struct kwq_ioc *c)
{
	struct kwq_list_args *a = &c->a.list;
	u32 n, slots;
	int ret = 0;
	char *buf;

	if (a->capacity && !a->names)
		return -EINVAL;

	/*
	 * Names are gathered under kwq_uq_lock and copied out after it:
	 * a fault on the user buffer (FUSE-backed mapping, say) may block
	 * for as long as its owner likes, and must not block every
	 * CREATE, OPEN and DESTROY meanwhile. The buffer is sized by a
	 * count taken before; if queues were created between the two and
	 * the caller has room for them, count again: every name counted
	 * within the caller's room is copied.
	 */
	mutex_lock(&kwq_uq_lock);
	n = kwq_list_names(NULL, 0);
	mutex_unlock(&kwq_uq_lock);
	for (;;) {
		slots = min(n, a->capacity);
		buf = kvcalloc(slots ?: 1, KWQ_NAME_LEN, GFP_KERNEL_ACCOUNT);
		if (!buf)
			return -ENOMEM;
		mutex_lock(&kwq_uq_lock);
		n = kwq_list_names(buf, slots);
		mutex_unlock(&kwq_uq_lock);
		if (n <= slots || slots == a->capacity)
			break;
		kvfree(buf);
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	if (copy_to_user(u64_to_user_ptr(a->names), buf,
			 (size_t)min(n, slots) * KWQ_NAME_LEN))
		ret = -EFAULT;
	kvfree(buf);
	if (ret)
		return ret;
	a->count = n;
	return kwq_copy_args_out(c->arg, a, sizeof(*a));
}

int kwq_publish(struct kwq *q, const struct kwq_publish_opts *opts)
{
	struct ipc_namespace *ipc;
	struct kwq_uq *uq;
	struct kwq_ns *ns;
	int ret;

	if (!q || !opts || opts->mode & ~0777 || !uid_valid(opts->uid) ||
	    !gid_valid(opts->gid))
		return -EINVAL;
	might_sleep();
	ipc = opts->ipc_ns ?: kwq_init_ipc_ns();
	uq = kzalloc(sizeof(*uq), GFP_KERNEL);
	if (!uq)
		return -ENOMEM;
	refcount_set(&uq->ref, 1);	/* the list's */
	/* No rings: the module's own getters would not pull them. */
	kwq_rings_init(&uq->rings, false);
	uq->q = q;
	uq->uid = opts->uid;
	uq->gid = opts->gid;
	uq->mode = opts->mode;
	uq->published = true;

	mutex_lock(&kwq_uq_lock);
	/* Under the mutex: kwq_destroy() unregisters, then unpublishes. */
	ret = kwq_check_publish(q);
	if (ret)
		goto out_unlock;
	ret = -EBUSY;
	if (kwq_pub_find(q))
		goto out_unlock;
	ret = -ENOMEM;
	ns = kwq_ns_get(ipc);
	if (!ns)
		goto out_unlock;
	if (kwq_ns_lookup(ns, kwq_name(q))) {
		kwq_ns_release(ns);
		ret = -EEXIST;
		goto out_unlock;
	}
	kwq_get_ref(q);
	uq->ns = ns;
	list_add_tail(&uq->node, &ns->queues);
	list_add_tail(&uq->pub_node, &kwq_pub_list);
	mutex_unlock(&kwq_uq_lock);
	return 0;

out_unlock:
	mutex_unlock(&kwq_uq_lock);
	kfree(uq);
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_publish);

void kwq_unpublish(struct kwq *q)
{
	struct kwq_uq *uq;

	if (!q)
		return;
	might_sleep();
	mutex_lock(&kwq_uq_lock);
	uq = kwq_pub_find(q);
	if (uq)
		kwq_uq_kill(uq);
	mutex_unlock(&kwq_uq_lock);
	if (!uq)
		return;
	/* Blocked gets and pollers look again, see it dead and leave. */
	kwq_wake_all(q);
	kwq_uq_put(uq);
}
EXPORT_SYMBOL_GPL(kwq_unpublish);

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

/* A core error on a queue destroyed meanwhile reads as EIDRM. */
static int kwq_uq_err(struct kwq_uq *uq, int err)
{
	return err && READ_ONCE(uq->dead) ? -EIDRM : err;
}

enum kwq_keys_op { KWQ_OP_ADD, KWQ_OP_DONE, KWQ_OP_FORGET, KWQ_OP_REMOVE };

/*
 * A buffer of @len bytes for one call: @small (KWQ_REC_SMALL bytes on
 * the caller's stack) when that is enough, else the file's scratch part
 * for records copied @out (else in) when it is big enough and no other
 * call on the file uses it, else a new one. kwq_buf_put() with the same
 * @small gives it back.
 */
static void *kwq_buf_get(struct kwq_file *kf, size_t len, u8 *small,
			 bool out)
{
	if (len <= KWQ_REC_SMALL)
		return small;
	if (out) {
		if (len <= KWQ_SCRATCH_OUT_LEN && mutex_trylock(&kf->out_lock))
			return kf->scratch;
	} else if (len <= KWQ_SCRATCH_IN_LEN && mutex_trylock(&kf->in_lock)) {
		return kf->scratch + KWQ_SCRATCH_OUT_LEN;
	}
	return kvmalloc(len, GFP_KERNEL_ACCOUNT);
}

static void kwq_buf_put(struct kwq_file *kf, void *buf, u8 *small)
{
	if (buf == small)
		return;
	if (buf == kf->scratch)
		mutex_unlock(&kf->out_lock);
	else if (buf == kf->scratch + KWQ_SCRATCH_OUT_LEN)
		mutex_unlock(&kf->in_lock);
	else
		kvfree(buf);
}

/*
 * The size of the record at @rec if it is whole and sound within @room
 * bytes: a header, a length in range, no priority unless @prio_ok, its
 * padding zero (tested in the record's last word, read little-endian:
 * records start 8-byte aligned in every record buffer); else -EINVAL.
 * A sound record is never smaller than a header, so no size can read as
 * "nothing" (an empty buffer once passed for one record: issue 30).
 * Reads only the first @room bytes: what the caller copied in.
 */
static __always_inline int kwq_rec_size(const u64 *rec, u32 room,
					bool prio_ok)
{
	const struct kwq_rec *r = (const void *)rec;
	u32 end;

	if (room < sizeof(*r) || !r->len || r->len > KWQ_KEY_LEN_MAX ||
	    (!prio_ok && r->priority) || KWQ_REC_SIZE(r->len) > room)
		return -EINVAL;
	end = sizeof(*r) + r->len;
	if (end % 8 &&
	    le64_to_cpu((__force __le64)rec[end / 8]) >>
	    (end % 8 * BITS_PER_BYTE))
		return -EINVAL;
	return KWQ_REC_SIZE(r->len);
}

/*
 * Check a whole record buffer (8-byte aligned) before any key takes
 * effect: each record sound (kwq_rec_size()), exactly @nr (at least one)
 * records filling exactly @len bytes.
 */
static int kwq_recs_check(const u8 *buf, u32 len, u32 nr, bool prio_ok)
{
	u32 off = 0, i;
	int size;

	if (!nr)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		size = kwq_rec_size((const u64 *)(buf + off), len - off,
				    prio_ok);
		if (size < 0)
			return size;
		off += size;
	}
	return off == len ? 0 : -EINVAL;
}

/*
 * kwq_recs_check() of one record, inline: the one-key paths' check. An
 * empty or short @len is -EINVAL: no sound record is that small.
 */
static __always_inline int kwq_rec_check_one(const u64 *rec, u32 len,
					     bool prio_ok)
{
	int size = kwq_rec_size(rec, len, prio_ok);

	return size > 0 && (u32)size == len ? 0 : -EINVAL;
}

/*
 * Bytes of a record buffer copied in between two scheduling points: a
 * whole buffer (up to KWQ_RECS_LEN_MAX, 4 MiB of the longest keys) is
 * not one stretch without one (issue 30, finding 5). A task being
 * killed stops between pieces: nothing has taken effect yet.
 */
#define KWQ_COPY_PIECE		SZ_64K

static int kwq_recs_copy_in(u8 *buf, const u8 __user *u, u32 len)
{
	u32 off, n;
	int ret;

	for (off = 0; off < len; off += n) {
		if (off) {
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
		}
		n = min_t(u32, len - off, KWQ_COPY_PIECE);
		ret = kwq_copy_in(buf + off, u + off, n);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Copy @nr records of @len bytes in and check them; kwq_buf_put() after
 * (@small: see kwq_buf_get()). The check reads a record's header and
 * last word, not its key: a fraction of a millisecond for a whole batch.
 */
static u8 *kwq_recs_in(struct kwq_file *kf, u64 uptr, u32 len, u32 nr,
		       bool prio_ok, u8 *small)
{
	u8 *buf;
	int ret;

	if (!nr || nr > KWQ_BATCH_MAX || !len || len > KWQ_RECS_LEN_MAX)
		return ERR_PTR(-EINVAL);
	buf = kwq_buf_get(kf, len, small, false);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	ret = kwq_recs_copy_in(buf, u64_to_user_ptr(uptr), len);
	if (!ret)
		ret = kwq_recs_check(buf, len, nr, prio_ok);
	if (ret) {
		kwq_buf_put(kf, buf, small);
		return ERR_PTR(ret);
	}
	return buf;
}

/* Keys handed to the core per batch call. */
#define KWQ_KEYS_CHUNK		32

/* The @n checked records at @buf + *@off as keys; *@off moves past them. */
static void kwq_recs_keys(const u8 *buf, u32 *off, struct kwq_key *keys,
			  u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		const struct kwq_rec *r = (const void *)(buf + *off);

		keys[i].key = r + 1;
		keys[i].len = r->len;
		keys[i].priority = r->priority;
		*off += KWQ_REC_SIZE(r->len);
	}
}

/*
 * Apply @op to the @nr checked records at @buf, a chunk of keys per core
 * call; *@done counts the keys that took effect. The first error stops.
 * Once all took effect, *@end (if @end) is the offset past the records.
 * Process context: a scheduling point between chunks (a batch of the
 * longest keys hashes and copies 4 MiB), and a task being killed stops
 * there with -EINTR, the keys before taking effect as on any error.
 */
static noinline_for_stack int
kwq_recs_apply(struct kwq_file *kf, struct kwq *q, enum kwq_keys_op op,
	       const u8 *buf, u32 nr, const struct kwq_batch_opts *opts,
	       u32 *done, u32 *end)
{
	/*
	 * Here and in the other hot paths, arrays written before they are
	 * read are spared the stack's auto-initialisation
	 * (CONFIG_INIT_STACK_ALL_ZERO): zeroing them cost more than the rest
	 * of the call's own code.
	 */
	struct kwq_key keys[KWQ_KEYS_CHUNK] __uninitialized;
	struct kwq_batch_opts o;
	unsigned int n, k;
	u32 off = 0;
	int ret = 0;

	for (*done = 0; *done < nr && !ret; *done += k) {
		if (*done) {
			if (fatal_signal_pending(current)) {
				ret = -EINTR;
				break;
			}
			cond_resched();
		}
		n = min_t(u32, nr - *done, KWQ_KEYS_CHUNK);
		kwq_recs_keys(buf, &off, keys, n);
		switch (op) {
		case KWQ_OP_ADD:
			o = *opts;
			if (o.delays)
				o.delays += *done;
			/* One key: no batch machinery (the single-key ADD). */
			if (n == 1) {
				ret = kwq_add_key(q, keys, &o);
				k = !ret;
			} else {
				ret = kwq_add_batch(q, keys, n, &o, &k);
			}
			break;
		case KWQ_OP_DONE:
			/* Leased to this file, or detached (owned by nobody). */
			ret = kwq_done_keys(q, keys, n, kf, &k);
			break;
		case KWQ_OP_FORGET:
		case KWQ_OP_REMOVE:
			for (k = 0; k < n && !ret; k += !ret)
				ret = op == KWQ_OP_FORGET ?
				      kwq_forget(q, keys[k].key, keys[k].len) :
				      kwq_remove(q, keys[k].key, keys[k].len);
			break;
		}
	}
	if (end)
		*end = off;
	return ret;
}

/*
 * KWQ_IOC_ADD of one record and no delays to write back, a producer's
 * call: what kwq_ioc_keys() does (which checked the flags and made
 * @opts), without its buffers and chunks; the record is read in 8-byte
 * words.
 */
static noinline_for_stack int
kwq_ioc_add_one(struct kwq_ioc *c, const struct kwq_batch_opts *opts)
{
	struct kwq_keys_args __user *uarg = (void __user *)c->arg;
	u64 rec[KWQ_REC_SMALL / sizeof(u64)] __uninitialized;
	struct kwq_keys_args *a = &c->a.keys;
	struct kwq_key key;
	u32 off = 0;
	int ret;

	ret = kwq_copy_in(rec, u64_to_user_ptr(a->recs), a->recs_len);
	if (!ret)
		ret = kwq_rec_check_one(rec, a->recs_len, true);
	if (ret)
		return ret;
	kwq_recs_keys((u8 *)rec, &off, &key, 1);
	ret = kwq_add_key(c->uq->q, &key, opts);
	if (put_user(ret ? 0 : 1, &uarg->done))
		return -EFAULT;
	return kwq_uq_err(c->uq, ret);
}

static int kwq_ioc_keys(struct kwq_ioc *c, enum kwq_keys_op op)
{
	/*
	 * New keys' nodes are allocated before the queue lock: the memcg
	 * may reclaim, but never OOM-kills for us (__GFP_RETRY_MAYFAIL).
	 */
	struct kwq_batch_opts opts = {
		.gfp = GFP_KERNEL | __GFP_RETRY_MAYFAIL,
	};
	struct kwq_keys_args __user *uarg = (void __user *)c->arg;
	u64 __user *udelays = NULL;
	u8 small[KWQ_REC_SMALL] __aligned(8) __uninitialized;
	struct kwq_keys_args *a = &c->a.keys;
	u64 *delays = NULL;
	u8 *buf;
	int ret;

	if (a->pad || a->pad2)
		return -EINVAL;
	if (op == KWQ_OP_ADD) {
		if (a->flags & ~(KWQ_ADD_AFTER | KWQ_ADD_RATE_LIMITED |
				 KWQ_ADD_REPLACE | KWQ_ADD_LATER) ||
		    (a->flags & KWQ_ADD_AFTER &&
		     a->flags & KWQ_ADD_RATE_LIMITED) ||
		    (!(a->flags & KWQ_ADD_AFTER) && a->after_ns) ||
		    (!(a->flags & KWQ_ADD_RATE_LIMITED) && a->delays))
			return -EINVAL;
	} else if (a->flags || a->after_ns || a->delays) {
		return -EINVAL;
	}

	opts.after_ns = a->flags & KWQ_ADD_AFTER ? a->after_ns : 0;
	opts.flags = a->flags & KWQ_ADD_RATE_LIMITED ? KWQ_BATCH_RATE_LIMITED : 0;
	/* kwq_add_batch() checks them: only with a delay, one at most. */
	if (a->flags & KWQ_ADD_REPLACE)
		opts.flags |= KWQ_AFTER_REPLACE;
	if (a->flags & KWQ_ADD_LATER)
		opts.flags |= KWQ_AFTER_LATER;
	/* A producer's call: one key, no delays to write back. */
	if (op == KWQ_OP_ADD && a->nr == 1 && !a->delays &&
	    kwq_words_ok(u64_to_user_ptr(a->recs), a->recs_len))
		return kwq_ioc_add_one(c, &opts);

	buf = kwq_recs_in(c->kf, a->recs, a->recs_len, a->nr, op == KWQ_OP_ADD,
			  small);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	if (a->delays) {
		/* Prove the output writable before any key takes effect. */
		udelays = u64_to_user_ptr(a->delays);
		ret = -ENOMEM;
		delays = kvcalloc(a->nr, sizeof(*delays), GFP_KERNEL);
		if (!delays)
			goto out;
		ret = -EFAULT;
		if (copy_to_user(udelays, delays, a->nr * sizeof(*delays)))
			goto out;
	}
	opts.delays = delays;

	ret = kwq_recs_apply(c->kf, c->uq->q, op, buf, a->nr, &opts, &a->done,
			     NULL);
	ret = kwq_uq_err(c->uq, ret);
	if (delays && a->done &&
	    copy_to_user(udelays, delays, a->done * sizeof(*delays)))
		ret = -EFAULT;
	if (put_user(a->done, &uarg->done))
		ret = -EFAULT;
out:
	kvfree(delays);
	kwq_buf_put(c->kf, buf, small);
	return ret;
}

static int kwq_ioc_add(struct kwq_ioc *c)
{
	return kwq_ioc_keys(c, KWQ_OP_ADD);
}

static int kwq_ioc_done(struct kwq_ioc *c)
{
	return kwq_ioc_keys(c, KWQ_OP_DONE);
}

static int kwq_ioc_forget(struct kwq_ioc *c)
{
	return kwq_ioc_keys(c, KWQ_OP_FORGET);
}

static int kwq_ioc_remove(struct kwq_ioc *c)
{
	return kwq_ioc_keys(c, KWQ_OP_REMOVE);
}

/*
 * Keys taken per core call by GET: the records of a round of keys of up
 * to KWQ_KEY_LEN_MAX_VER1 bytes fit the scratch buffer; of longer keys,
 * a round takes what fits.
 */
#define KWQ_GET_ROUND		16
static_assert(KWQ_GET_ROUND * KWQ_REC_SMALL <= KWQ_SCRATCH_OUT_LEN);

/* Write @item as a record at @dst (zero-padded); its size. */
static size_t kwq_rec_put(u8 *dst, const struct kwq_item *item)
{
	struct kwq_rec *r = (struct kwq_rec *)dst;
	size_t size = KWQ_REC_SIZE(item->len);

	r->len = item->len;
	r->priority = item->priority;
	memcpy(r + 1, item->key, item->len);
	memset(dst + sizeof(*r) + item->len, 0,
	       size - sizeof(*r) - item->len);
	return size;
}

/*
 * Where a round's records go: kwq_rec_copy() runs under the queue lock.
 * @room: the bytes left at @buf + @len (struct kwq_get_ctl's room).
 */
struct kwq_recs_out {
	u8 *buf;
	u32 len;
	u32 room;
};

static void kwq_rec_copy(void *arg, const struct kwq_item *item)
{
	struct kwq_recs_out *out = arg;

	out->len += kwq_rec_put(out->buf + out->len, item);
}

/* Keys a DONE_GET finishes in the critical section of its first round. */
#define KWQ_DONE_LAST		16

/*
 * The done part of a KWQ_IOC_DONE_GET left to kwq_get_keys(): the last
 * @nr (at most KWQ_DONE_LAST) records of a checked buffer, all before
 * them finished.
 */
struct kwq_done_in {
	const u8 *recs;
	u32 nr;
	u32 done;		/* out: how many of the @nr were finished */
};

/*
 * Finish @din's keys and, if all were, take up to @max keys, in one
 * critical section: kwq_done_keys_take().
 */
static int kwq_done_take(struct kwq_file *kf, struct kwq *q,
			 struct kwq_done_in *din, void *owner,
			 struct kwq_item *items, u32 max,
			 const struct kwq_get_ctl *ctl)
{
	struct kwq_key keys[KWQ_DONE_LAST] __uninitialized;
	unsigned int done;
	u32 off = 0;
	int ret;

	kwq_recs_keys(din->recs, &off, keys, din->nr);
	/* Leased to this file, or detached (owned by nobody). */
	ret = kwq_done_keys_take(q, keys, din->nr, kf, &done, owner, items,
				 max, ctl);
	din->done = done;
	return ret;
}

/*
 * The GET part of KWQ_IOC_GET and KWQ_IOC_DONE_GET on a checked @a,
 * whose nr and used it fills. Returns 0 when keys were taken. @din (NULL:
 * none) is DONE_GET's done part, finished in the first round's critical
 * section: if one of its keys is not (din->done < din->nr), its error,
 * and no key is taken.
 */
static noinline_for_stack int
kwq_get_keys(struct file *file, struct kwq_file *kf, struct kwq_uq *uq,
	     struct kwq_get_args *a, struct kwq_done_in *din)
{
	struct kwq_item items[KWQ_GET_ROUND] __uninitialized;
	u8 one[KWQ_REC_SMALL] __aligned(8) __uninitialized;
	struct kwq_recs_out out;
	/* A DESTROY (uq->dead) ends the wait with EIDRM. */
	struct kwq_get_ctl ctl = {
		.abort = &uq->dead, .copy = kwq_rec_copy, .arg = &out,
		.processing_timeout_ns = a->processing_timeout_ns,
		.room = &out.room,
	};
	unsigned int flags = 0, rflags, rounds = 0;
	u32 n, want, min_nr, room, cap;
	bool counted = false, waiting = false, armed = false, tried;
	ktime_t start = 0;
	s64 timeout, left;
	void *owner;
	int ret = 0;

	owner = a->flags & KWQ_GET_DETACHED ? NULL : kf;
	timeout = a->timeout_ns < 0 ? KWQ_WAIT_FOREVER : a->timeout_ns;
	if (timeout > 0)
		start = ktime_get();
	if (file->f_flags & O_NONBLOCK)
		flags |= KWQ_GET_NONBLOCK;
	/*
	 * What the queue's rings published, first. A call that must wait is
	 * counted in their waiters once it found too few keys without
	 * waiting (below); one that may not wait and finds nothing may wait
	 * elsewhere (poll): producers ring until a get takes a key.
	 */
	kwq_rings_pull(&uq->rings);
	/* One key needs no shared buffer, unless it is a long one. */
	cap = a->max == 1 ? KWQ_REC_SMALL : KWQ_SCRATCH_OUT_LEN;
	out.buf = kwq_buf_get(kf, cap, one, true);
	if (!out.buf)
		return -ENOMEM;

	/*
	 * Rounds of KWQ_GET_ROUND keys, each taken in one critical section
	 * (where their records are written, before anyone could finish the
	 * keys) and copied out in one piece, each key only if its record
	 * fits in the buffer and in the caller's bytes left. Calls wait
	 * (within the timeout) until @min_nr keys are taken, then take only
	 * what is ready. A fault puts the round's keys back (kwq_unget) so
	 * none is lost; earlier rounds were written out and are handed over.
	 */
again:
	while (a->nr < a->max) {
		want = min(a->max - a->nr, (u32)KWQ_GET_ROUND);
		room = a->recs_len - a->used;
		if (room < KWQ_REC_SIZE(1))
			break;
		/* The first round may use the whole timeout, later ones the rest. */
		left = timeout;
		if (a->nr >= max(a->min_nr, 1U)) {
			left = 0;
		} else if (rounds++ && timeout > 0) {
			left = timeout - ktime_to_ns(ktime_sub(ktime_get(),
							       start));
			if (left <= 0)
				break;
		}
		out.len = 0;
		out.room = min(room, cap);
		rflags = left ? flags : flags | KWQ_GET_NONBLOCK;
		min_nr = min(a->min_nr > a->nr ? a->min_nr - a->nr : 0, want);
		/*
		 * What is ready first, without waiting (DONE_GET's done part
		 * never waits): a call that finds its keys is not counted in
		 * the rings' waiters.
		 */
		tried = din || (!(rflags & KWQ_GET_NONBLOCK) && !waiting);
		if (din) {
			/* The first round: want >= 1 (recs_len was checked). */
			ret = kwq_done_take(kf, uq->q, din, owner, items, want,
					    &ctl);
			if (din->done < din->nr)
				break;
			din = NULL;
		} else {
			ret = kwq_get_batch_ctl(uq->q, owner,
						tried ? rflags | KWQ_GET_NONBLOCK :
						rflags, left, items, min_nr,
						want, &ctl);
		}
		n = max(ret, 0);
		/*
		 * Too few taken, and room for more: counted as a waiter, then
		 * wait as a GET. A full buffer ends the call with what it has.
		 */
		if (tried && !(rflags & KWQ_GET_NONBLOCK) &&
		    (ret == -EAGAIN ||
		     (n && n < min_nr && out.room >= KWQ_REC_SIZE(1)))) {
			if (!waiting) {
				counted = kwq_rings_wait_begin(&uq->rings);
				waiting = true;
			}
			ret = kwq_get_batch_ctl(uq->q, owner, rflags, left,
						items + n,
						min_nr > n ? min_nr - n : 0,
						want - n, &ctl);
			n += max(ret, 0);
		}
		/* Keys taken before an error are handed over. */
		if (n)
			ret = n;
		/*
		 * A key too long for the stack's buffer: again with a larger
		 * one (ETIMEDOUT if the timeout passes before the retry).
		 */
		if (ret == -EMSGSIZE && out.buf == one && room > cap) {
			cap = KWQ_SCRATCH_OUT_LEN;
			out.buf = kwq_buf_get(kf, cap, one, true);
			ret = -ETIMEDOUT;
			if (out.buf)
				continue;
			out.buf = one;
			ret = -ENOMEM;
		}
		if (ret < 0)
			break;
		n = ret;
		ret = 0;
		if (kwq_copy_out(u64_to_user_ptr(a->recs) + a->used, out.buf,
				 out.len)) {
			/*
			 * Fault: the round's keys go back to the head of
			 * their levels, last taken first, so order holds.
			 */
			while (n--)
				kwq_unget(uq->q, &items[n]);
			ret = -EFAULT;
			break;
		}
		/* Only whole rounds count: @used covers exactly @nr records. */
		a->used += out.len;
		a->nr += n;
		/* Fewer than wanted, and not for want of room: none is ready. */
		if (n < want && out.room)
			break;
		/*
		 * A GET of many keys is many rounds: a scheduling point
		 * between them, and a task being killed stops with the keys
		 * it has (its close returns them).
		 */
		if (fatal_signal_pending(current))
			break;
		cond_resched();
	}
	/*
	 * A call that may not wait found nothing: the file is armed (it may
	 * wait in poll), then what producers published meanwhile is pulled
	 * and tried once more.
	 */
	if (!a->nr && ret == -EAGAIN && !din && !armed &&
	    (!timeout || flags & KWQ_GET_NONBLOCK)) {
		kwq_rings_arm(&uq->rings, &kf->armed);
		armed = true;
		goto again;
	}
	kwq_buf_put(kf, out.buf, one);
	kwq_rings_wait_end(&uq->rings, counted);
	/* Keys were handed out: the call succeeded. */
	if (a->nr) {
		kwq_rings_disarm(&uq->rings, &kf->armed);
		return 0;
	}
	return kwq_uq_err(uq, ret);
}

/*
 * Write the outputs of a struct kwq_get_args back to userspace (and
 * DONE_GET's done count at @udone if not NULL): one user access window,
 * not one per field.
 */
static int kwq_get_args_out(struct kwq_get_args __user *u,
			    const struct kwq_get_args *a, u32 __user *udone,
			    u32 done)
{
	if (udone) {
		/* struct kwq_done_get_args: done comes before get */
		if (!user_write_access_begin(udone, (u8 __user *)(u + 1) -
					     (u8 __user *)udone))
			return -EFAULT;
		unsafe_put_user(done, udone, efault);
	} else if (!user_write_access_begin(u, sizeof(*u))) {
		return -EFAULT;
	}
	unsafe_put_user(a->nr, &u->nr, efault);
	unsafe_put_user(a->used, &u->used, efault);
	user_write_access_end();
	return 0;
efault:
	user_write_access_end();
	return -EFAULT;
}

/* A processing timeout of a get or touch: 0, KWQ_TIMEOUT_NONE or in range. */
static bool kwq_processing_timeout_ok(u64 ns)
{
	return !ns || ns == KWQ_TIMEOUT_NONE ||
	       (ns >= KWQ_PROCESSING_TIMEOUT_MIN &&
		ns <= KWQ_PROCESSING_TIMEOUT_MAX);
}

/* Check a copied-in struct kwq_get_args and clear its outputs. */
static int kwq_get_args_check(struct kwq_get_args *a)
{
	/* nr and used are outputs: whatever they held is overwritten. */
	a->nr = 0;
	a->used = 0;
	if (a->flags & ~KWQ_GET_DETACHED || !a->max || a->min_nr > a->max ||
	    a->recs_len < KWQ_REC_SIZE_MAX_VER1 || !a->recs ||
	    !kwq_processing_timeout_ok(a->processing_timeout_ns))
		return -EINVAL;
	return 0;
}

static int kwq_ioc_get(struct kwq_ioc *c)
{
	struct kwq_get_args __user *uarg = (void __user *)c->arg;
	struct kwq_get_args *a = &c->a.get;
	int ret;

	ret = kwq_get_args_check(a);
	if (ret)
		return ret;
	/*
	 * The result is written back into @arg: prove that possible before
	 * a key is taken, or a read-only struct would strand taken keys.
	 */
	if (kwq_get_args_out(uarg, a, NULL, 0))
		return -EFAULT;
	ret = kwq_get_keys(c->file, c->kf, c->uq, a, NULL);
	if (ret)
		return ret;
	return kwq_get_args_out(uarg, a, NULL, 0);
}

/*
 * A one-key DONE_GET's inputs: its outputs zeroed first (proving them
 * writable before a key is finished or taken, as the general path does),
 * then the record to finish (at most KWQ_REC_SMALL bytes) read into
 * @rec.
 */
static int kwq_done_one_in(struct kwq_done_get_args __user *u,
			   const struct kwq_done_get_args *a, u64 *rec)
{
	if (kwq_get_args_out(&u->get, &a->get, &u->done, 0))
		return -EFAULT;
	return kwq_copy_in(rec, u64_to_user_ptr(a->done_recs), a->done_len);
}

/*
 * A one-key DONE_GET's outputs once it took a key: the key's record
 * (@rec, @len bytes), then done, nr and used. -EFAULT; if the record was
 * not written, *@handed is false and the caller puts the key back.
 */
static int kwq_done_one_out(struct kwq_done_get_args __user *u,
			    struct kwq_done_get_args *a, const u64 *rec,
			    u32 len, bool *handed)
{
	*handed = !kwq_copy_out(u64_to_user_ptr(a->get.recs), rec, len);
	if (!*handed)
		return -EFAULT;
	a->get.nr = 1;
	a->get.used = len;
	return kwq_get_args_out(&u->get, &a->get, &u->done, a->done);
}

/*
 * KWQ_IOC_DONE_GET of one key to finish and at most one to take, a worker
 * loop's call: what kwq_ioc_done_get() does, without its buffers and
 * rounds, the record copied in 8-byte words. Only a call that must wait
 * for a key goes on as the general path's get part does.
 */
static noinline_for_stack int kwq_ioc_done_get_one(struct kwq_ioc *c)
{
	struct kwq_done_get_args __user *uarg = (void __user *)c->arg;
	struct kwq_done_get_args *a = &c->a.done_get;
	u64 in[KWQ_REC_SMALL / sizeof(u64)] __uninitialized;
	u64 out[KWQ_REC_SMALL / sizeof(u64)] __uninitialized;
	struct kwq_recs_out ro = {
		.buf = (u8 *)out, .room = min(a->get.recs_len, KWQ_REC_SMALL),
	};
	const struct kwq_get_ctl ctl = {
		.abort = &c->uq->dead, .copy = kwq_rec_copy, .arg = &ro,
		.processing_timeout_ns = a->get.processing_timeout_ns,
		.room = &ro.room,
	};
	void *owner = a->get.flags & KWQ_GET_DETACHED ? NULL : c->kf;
	struct kwq_item item;
	struct kwq_key key;
	unsigned int done;
	bool handed;
	u32 off = 0;
	int ret;

	ret = kwq_done_one_in(uarg, a, in);
	if (!ret)
		ret = kwq_rec_check_one(in, a->done_len, false);
	if (ret)
		return ret;
	kwq_recs_keys((u8 *)in, &off, &key, 1);
	/* What the queue's rings published, first (kwq_get_keys()). */
	kwq_rings_pull(&c->uq->rings);
	/* Leased to this file, or detached (owned by nobody). */
	ret = kwq_done_keys_take(c->uq->q, &key, 1, c->kf, &done, owner,
				 &item, 1, &ctl);
	a->done = done;
	if (ret == 1)
		kwq_rings_disarm(&c->uq->rings, &c->kf->armed);
	/* The key was not finished: nothing was taken (done reads 0). */
	if (!done)
		return kwq_uq_err(c->uq, ret);
	if (ret == 1) {
		ret = kwq_done_one_out(uarg, a, out, ro.len, &handed);
		if (handed)
			return ret;
		/* As kwq_get_keys(): the key goes back, none is lost. */
		kwq_unget(c->uq->q, &item);
		ret = -EFAULT;
	}
	/*
	 * None ready: wait as the general path's get part does; a key too
	 * long for @out: take it there.
	 */
	if (ret == -EAGAIN || ret == -EMSGSIZE)
		ret = kwq_get_keys(c->file, c->kf, c->uq, &a->get, NULL);
	else
		ret = kwq_uq_err(c->uq, ret);
	/* As kwq_ioc_done_get(): the key finished is not finished again. */
	if (ret == -ERESTARTSYS)
		ret = -EINTR;
	if (kwq_get_args_out(&uarg->get, &a->get, &uarg->done, a->done))
		return -EFAULT;
	return ret;
}

/*
 * KWQ_IOC_DONE_GET: a worker's whole cycle in one call. The keys to
 * finish are checked and finished first; only if all were does the call
 * go on to take keys as KWQ_IOC_GET does. The last KWQ_DONE_LAST keys
 * are finished in the critical section that takes the first keys: a
 * cycle of up to that many keys takes the queue lock once.
 */
static int kwq_ioc_done_get(struct kwq_ioc *c)
{
	struct kwq_done_get_args __user *uarg = (void __user *)c->arg;
	struct kwq_done_in din = {}, *pdin = NULL;
	u8 small[KWQ_REC_SMALL] __aligned(8) __uninitialized;
	struct kwq_done_get_args *a = &c->a.done_get;
	u8 *buf = NULL;
	u32 off = 0;
	int ret;

	ret = kwq_get_args_check(&a->get);
	if (ret)
		return ret;
	a->done = 0;
	if (a->pad || (!a->done_nr && (a->done_len || a->done_recs)))
		return -EINVAL;
	/* A worker loop's call: one key finished, one taken. */
	if (a->done_nr == 1 && a->get.max == 1 &&
	    kwq_words_ok(u64_to_user_ptr(a->done_recs), a->done_len))
		return kwq_ioc_done_get_one(c);
	if (kwq_get_args_out(&uarg->get, &a->get, &uarg->done, a->done))
		return -EFAULT;
	if (a->done_nr) {
		buf = kwq_recs_in(c->kf, a->done_recs, a->done_len, a->done_nr,
				  false, small);
		if (IS_ERR(buf))
			return PTR_ERR(buf);
		/* The keys before the last ones, as KWQ_IOC_DONE does. */
		din.nr = min_t(u32, a->done_nr, KWQ_DONE_LAST);
		if (a->done_nr > din.nr) {
			ret = kwq_recs_apply(c->kf, c->uq->q, KWQ_OP_DONE, buf,
					     a->done_nr - din.nr, NULL, &a->done,
					     &off);
			if (ret) {
				kwq_buf_put(c->kf, buf, small);
				ret = kwq_uq_err(c->uq, ret);
				return put_user(a->done, &uarg->done) ?
				       -EFAULT : ret;
			}
		}
		din.recs = buf + off;
		pdin = &din;
	}
	ret = kwq_get_keys(c->file, c->kf, c->uq, &a->get, pdin);
	if (pdin) {
		kwq_buf_put(c->kf, buf, small);
		a->done += din.done;
		/* A key not finished: nothing was taken. */
		if (din.done < din.nr)
			return put_user(a->done, &uarg->done) ? -EFAULT : ret;
		/*
		 * A signal ended the get part's wait after keys were finished:
		 * a restarted call would finish them again (ENOENT). The
		 * caller sees EINTR and how many were finished instead.
		 */
		if (ret == -ERESTARTSYS && a->done)
			ret = -EINTR;
	}
	/* What was finished stays finished: report it either way. */
	if (kwq_get_args_out(&uarg->get, &a->get, &uarg->done, a->done))
		return -EFAULT;
	return ret;
}

/*
 * The key of a one-key call, @len bytes at @uptr, copied in: into @small
 * (KWQ_REC_SMALL bytes on the caller's stack) or a larger buffer, as
 * kwq_buf_get() chooses; kwq_buf_put() after.
 */
static void *kwq_key_in(struct kwq_file *kf, u64 uptr, u32 len, u8 *small)
{
	void *key;

	if (!len || len > KWQ_KEY_LEN_MAX)
		return ERR_PTR(-EINVAL);
	key = kwq_buf_get(kf, len, small, false);
	if (!key)
		return ERR_PTR(-ENOMEM);
	if (copy_from_user(key, u64_to_user_ptr(uptr), len)) {
		kwq_buf_put(kf, key, small);
		return ERR_PTR(-EFAULT);
	}
	return key;
}

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
