// SPDX-License-Identifier: GPL-2.0
/*
 * Names and ownership of /dev/kwq's queues: a namespace of names per IPC
 * namespace (struct kwq_ns, as POSIX message queues'), the queues as
 * /dev/kwq sees them (struct kwq_uq: owner, group, mode, checked on open
 * like SysV IPC), the reaper of dead namespaces, CREATE, OPEN, DESTROY
 * and LIST, and the publishing of kernel queues (kwq_publish()). What
 * each object is and how long it lives: dev.c's first comment.
 *
 * kwq_uq_lock (mutex; user.c, the lowest of the device's files, defines
 * it) guards kwq_ns_list, every kwq_ns's queue list, kwq_pub_list, the
 * queue counts of users (user.c), kwq_nr_foreign_ns and the debugfs
 * directories of user queues; it is taken before kwq_registry_lock and
 * never inside a queue operation.
 * kf->attach_lock (mutex) serialises CREATE and OPEN on one file.
 * Sections:
 *  - namespaces and the queues listed in them (kwq_uq_lock);
 *  - a queue's references, unlisting and death, and the reaper;
 *  - who may open or destroy a queue;
 *  - CREATE, OPEN, DESTROY, LIST (kwq_uq_lock, kf->attach_lock);
 *  - publishing kernel queues (kwq_uq_lock).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/ipc_namespace.h>
#include <linux/kwq.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/nsproxy.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>
#include <linux/workqueue.h>
#include <uapi/linux/kwq.h>

#include "compat.h"
#include "dev.h"
#include "kwq_internal.h"

static unsigned int max_queues_per_user = 64;
module_param(max_queues_per_user, uint, 0644);
MODULE_PARM_DESC(max_queues_per_user,
		 "Queues one user may create through /dev/kwq, per user namespace and counted in its ancestors (CAP_SYS_ADMIN is exempt; default 64)");

static unsigned int max_items_per_queue = 1U << 21;
module_param(max_items_per_queue, uint, 0644);
MODULE_PARM_DESC(max_items_per_queue,
		 "Largest item cap of a queue created through /dev/kwq; also the cap when none is given (default 2097152)");

LIST_HEAD(kwq_ns_list);
static LIST_HEAD(kwq_pub_list);
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
DECLARE_DELAYED_WORK(kwq_ns_reap_work, kwq_ns_reap_fn);
static unsigned long kwq_ns_reap_last;	/* jiffies; the last look */

/*
 * --- namespaces and the queues listed in them ---
 *
 * Under kwq_uq_lock: the kwq_ns of an IPC namespace, made by the first
 * queue listed in it, and the lookups of names there and of published
 * queues.
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
 * --- a queue's references, unlisting and death; the reaper ---
 *
 * A kwq_uq's last reference (not under kwq_uq_lock) frees it; unlisting
 * and death under kwq_uq_lock; the reaper, a delayed work item, unlists
 * the queues of dead namespaces.
 */

/*
 * Never under kwq_uq_lock: the last put may free the queue. Process
 * context. The queue leaves its creator's queue count and its bytes go
 * back to the budget before this returns (kwq_put_sync), so a DESTROY or
 * a close that drops the last reference makes room for the next CREATE
 * at once. The count is dropped first, while the queue's budget still
 * holds its kwq_user.
 */
void kwq_uq_put(struct kwq_uq *uq)
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
void kwq_uq_kill(struct kwq_uq *uq)
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
void kwq_ns_reap_kick(void)
{
	if (READ_ONCE(kwq_nr_foreign_ns) &&
	    time_after(jiffies, READ_ONCE(kwq_ns_reap_last) + KWQ_NS_REAP_KICK))
		mod_delayed_work(system_unbound_wq, &kwq_ns_reap_work, 0);
}

/*
 * --- who may open or destroy a queue ---
 *
 * As SysV IPC: owner, group and mode, checked against the caller.
 */

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
 * --- CREATE, OPEN, DESTROY, LIST ---
 *
 * Under kf->attach_lock (CREATE, OPEN: once per file) and kwq_uq_lock.
 */

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

/* A core error on a queue destroyed meanwhile reads as EIDRM. */
int kwq_uq_err(struct kwq_uq *uq, int err)
{
	return err && READ_ONCE(uq->dead) ? -EIDRM : err;
}

/* Under kf->attach_lock: publish @uq (and a reference) as @kf's queue. */
static void kwq_attach(struct kwq_file *kf, struct kwq_uq *uq)
{
	/* Pairs with kwq_file_uq(): the uq is complete before it is seen. */
	smp_store_release(&kf->uq, uq);
}

int kwq_ioc_create(struct kwq_ioc *c)
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

int kwq_ioc_open(struct kwq_ioc *c)
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

int kwq_ioc_destroy(struct kwq_ioc *c)
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
void kwq_uq_detach(struct kwq_uq *uq)
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

int kwq_ioc_list(struct kwq_ioc *c)
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

/*
 * --- publishing kernel queues ---
 *
 * Under kwq_uq_lock: a kernel queue listed in an IPC namespace.
 */

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
