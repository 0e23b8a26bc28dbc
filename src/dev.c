// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kwq: the misc device through which userspace reaches kwq queues.
 * The ABI is include/uapi/linux/kwq.h; its rules are written there.
 *
 * Objects:
 *  - struct kwq_uq: a queue created through the device. It carries what
 *    the core does not know: owner, group, mode (checked on open like SysV
 *    IPC) and whether it was destroyed. Queues that other modules create
 *    are not visible here.
 *  - struct kwq_file: one open file. It attaches to at most one kwq_uq and
 *    is the lease owner of the keys it gets (unless KWQ_GET_DETACHED), so
 *    closing it returns them to the queue.
 *
 * Locking:
 *  - kwq_uq_lock (mutex) protects kwq_uq_list and the per-user counts;
 *    it is never taken inside a queue operation.
 *  - kf->attach_lock (mutex) serialises CREATE/OPEN on one file; kf->uq is
 *    written once under it and read locklessly (smp_load_acquire).
 *  - Queue operations go to the core without any lock of ours; the core
 *    takes its own spinlock.
 *
 * Lifetime: a kwq_uq is reference counted (the list holds one reference
 * until DESTROY, every attached file one more); it holds a core reference
 * to its queue, dropped when the last kwq_uq reference goes. DESTROY
 * unlists it, marks it dead (later calls on attached files see EIDRM),
 * and destroys the core queue, which wakes every waiter. The misc device
 * holds a module reference per open file (fops->owner), so the module
 * cannot be unloaded while an fd is open.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/kwq.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <uapi/linux/kwq.h>

#include "compat.h"
#include "kwq_internal.h"

static unsigned int max_queues_per_user = 64;
module_param(max_queues_per_user, uint, 0644);
MODULE_PARM_DESC(max_queues_per_user,
		 "Queues one user may create through /dev/kwq (CAP_SYS_ADMIN is exempt; default 64)");

static unsigned int max_items_per_queue = 1U << 21;
module_param(max_items_per_queue, uint, 0644);
MODULE_PARM_DESC(max_items_per_queue,
		 "Largest item cap of a queue created through /dev/kwq; also the cap when none is given (default 2097152)");

static DEFINE_MUTEX(kwq_uq_lock);
static LIST_HEAD(kwq_uq_list);
static LIST_HEAD(kwq_user_list);

static unsigned long max_bytes_per_user = 64UL << 20;
static int kwq_set_max_bytes(const char *val, const struct kernel_param *kp);
static const struct kernel_param_ops kwq_max_bytes_ops = {
	.set = kwq_set_max_bytes,
	.get = param_get_ulong,
};
module_param_cb(max_bytes_per_user, &kwq_max_bytes_ops, &max_bytes_per_user,
		0644);
MODULE_PARM_DESC(max_bytes_per_user,
		 "Kernel memory the queues one user created through /dev/kwq may use, in bytes: queues, hash tables and keys, whoever adds them (CAP_SYS_ADMIN is exempt; default 64 MiB)");

/* The largest record buffer a batch call reads. */
#define KWQ_RECS_LEN_MAX	(KWQ_BATCH_MAX * KWQ_REC_SIZE_MAX)

static_assert(KWQ_NAME_MAX + 1 == KWQ_NAME_LEN);
static_assert(KWQ_KEY_LEN_MAX == KWQ_KEY_MAX);
static_assert(KWQ_LIMITS_MAX == KWQ_MAX_LIMITERS);
static_assert(KWQ_LIMIT_EXPONENTIAL == KWQ_LIMITER_EXPONENTIAL);
static_assert(KWQ_LIMIT_FAST_SLOW == KWQ_LIMITER_FAST_SLOW);
static_assert(KWQ_LIMIT_BUCKET == KWQ_LIMITER_BUCKET);
static_assert(KWQ_STATS_BUCKETS == KWQ_HIST_BUCKETS);
static_assert(KWQ_STATS_PRIOS == KWQ_STATS_PRIO_LEVELS);

struct kwq_uq {
	struct list_head node;		/* kwq_uq_list */
	refcount_t ref;
	struct kwq *q;			/* constant */
	kuid_t uid;			/* constant: creator's euid */
	kgid_t gid;			/* constant: creator's egid */
	umode_t mode;			/* constant */
	bool dead;			/* set once by DESTROY */
};

/*
 * struct kwq_user - the byte budget of one user's queues. Listed in
 * kwq_user_list (under kwq_uq_lock) while any queue charges it; freed by
 * the last queue's kwq_put(), which may come after its kwq_uq is gone.
 */
struct kwq_user {
	struct list_head node;		/* kwq_user_list */
	kuid_t uid;			/* constant */
	struct kwq_budget budget;
};

struct kwq_file {
	struct mutex attach_lock;	/* serialises CREATE/OPEN */
	struct kwq_uq *uq;		/* NULL until CREATE/OPEN */
};

static void kwq_user_release(struct kwq_budget *b)
{
	struct kwq_user *u = container_of(b, struct kwq_user, budget);

	mutex_lock(&kwq_uq_lock);
	list_del(&u->node);
	mutex_unlock(&kwq_uq_lock);
	WARN_ON_ONCE(atomic_long_read(&b->used));
	kfree(u);
}

/*
 * Under kwq_uq_lock: @uid's budget with a reference for the caller, made
 * if it has none; NULL on allocation failure.
 */
static struct kwq_budget *kwq_user_budget(kuid_t uid)
{
	struct kwq_user *u;

	lockdep_assert_held(&kwq_uq_lock);
	list_for_each_entry(u, &kwq_user_list, node)
		if (uid_eq(u->uid, uid) && refcount_inc_not_zero(&u->budget.ref))
			return &u->budget;
	u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
	if (!u)
		return NULL;
	u->uid = uid;
	u->budget.limit = READ_ONCE(max_bytes_per_user);
	u->budget.release = kwq_user_release;
	refcount_set(&u->budget.ref, 1);
	list_add(&u->node, &kwq_user_list);
	return &u->budget;
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
 * Process context. The queue's bytes go back to its creator's budget
 * before this returns (kwq_put_sync), so a DESTROY or a close that drops
 * the last reference makes room for the next CREATE at once.
 */
static void kwq_uq_put(struct kwq_uq *uq)
{
	if (refcount_dec_and_test(&uq->ref)) {
		kwq_put_sync(uq->q);
		kfree(uq);
	}
}

/* Under kwq_uq_lock. */
static struct kwq_uq *kwq_uq_find(const char *name)
{
	struct kwq_uq *uq;

	list_for_each_entry(uq, &kwq_uq_list, node)
		if (!strcmp(kwq_name(uq->q), name))
			return uq;
	return NULL;
}

/* Under kwq_uq_lock. */
static unsigned int kwq_uq_count(kuid_t uid)
{
	struct kwq_uq *uq;
	unsigned int n = 0;

	list_for_each_entry(uq, &kwq_uq_list, node)
		n += uid_eq(uq->uid, uid);
	return n;
}

/* SysV IPC style: owner bits, else group bits, else other bits. */
static bool kwq_uq_may_open(const struct kwq_uq *uq)
{
	umode_t granted = uq->mode;

	if (capable(CAP_SYS_ADMIN))
		return true;
	if (uid_eq(current_euid(), uq->uid))
		granted >>= 6;
	else if (in_group_p(uq->gid))
		granted >>= 3;
	return (granted & 06) == 06;
}

static bool kwq_uq_may_destroy(const struct kwq_uq *uq)
{
	return uid_eq(current_euid(), uq->uid) || capable(CAP_SYS_ADMIN);
}

/*
 * Copy a size-versioned argument struct in. The size comes from the ioctl
 * number: smaller than the first version is EINVAL, a larger one must have
 * a zero tail (E2BIG otherwise, from copy_struct_from_user()).
 */
static int kwq_copy_args(void *dst, size_t ksize, unsigned int cmd,
			 unsigned long arg)
{
	size_t usize = _IOC_SIZE(cmd);

	if (usize < ksize)
		return -EINVAL;
	return copy_struct_from_user(dst, ksize, (void __user *)arg, usize);
}

static int kwq_copy_args_out(unsigned long arg, const void *src, size_t ksize)
{
	return copy_to_user((void __user *)arg, src, ksize) ? -EFAULT : 0;
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

static int kwq_ioc_create(struct kwq_file *kf, unsigned int cmd,
			  unsigned long arg)
{
	struct kwq_create_args a;
	struct kwq_budget *budget;
	struct kwq_config cfg = {};
	struct kwq_uq *uq;
	struct kwq *q;
	int ret;

	ret = kwq_copy_args(&a, sizeof(a), cmd, arg);
	if (ret)
		return ret;
	if (!kwq_name_terminated(a.name) || a.flags || a.mode & ~0777 ||
	    a.max_items > max_items_per_queue)
		return -EINVAL;
	ret = kwq_limits_from_user(&cfg, &a);
	if (ret)
		return ret;
	cfg.max_wait_ns = a.max_wait_ns;
	cfg.max_items = a.max_items ?: max_items_per_queue;
	/* Keys to the adding task's memcg, the queue to its creator's. */
	cfg.flags = KWQ_CONFIG_CHARGE_CALLER;

	uq = kzalloc(sizeof(*uq), GFP_KERNEL_ACCOUNT);
	if (!uq)
		return -ENOMEM;
	refcount_set(&uq->ref, 2);	/* the list's and this file's */
	uq->uid = current_euid();
	uq->gid = current_egid();
	uq->mode = a.mode ?: 0600;

	budget = NULL;
	mutex_lock(&kf->attach_lock);
	ret = -EISCONN;
	if (kf->uq)
		goto out_unlock_file;
	mutex_lock(&kwq_uq_lock);
	/* Limits per user: queues, and bytes through a budget. */
	if (!capable(CAP_SYS_ADMIN)) {
		ret = -EDQUOT;
		if (kwq_uq_count(uq->uid) >= max_queues_per_user)
			goto out_unlock;
		ret = -ENOMEM;
		budget = kwq_user_budget(uq->uid);
		if (!budget)
			goto out_unlock;
	}
	q = kwq_create_budget(a.name, &cfg, budget);
	ret = PTR_ERR_OR_ZERO(q);
	if (ret)
		goto out_unlock;
	uq->q = q;
	list_add_tail(&uq->node, &kwq_uq_list);
	mutex_unlock(&kwq_uq_lock);
	/* The queue holds its own reference; the last put takes the mutex. */
	kwq_budget_put(budget);
	kwq_attach(kf, uq);
	mutex_unlock(&kf->attach_lock);
	return 0;

out_unlock:
	mutex_unlock(&kwq_uq_lock);
	kwq_budget_put(budget);
out_unlock_file:
	mutex_unlock(&kf->attach_lock);
	kfree(uq);
	return ret;
}

static int kwq_ioc_open(struct kwq_file *kf, unsigned int cmd,
			unsigned long arg)
{
	struct kwq_open_args a;
	struct kwq_uq *uq;
	int ret;

	ret = kwq_copy_args(&a, sizeof(a), cmd, arg);
	if (ret)
		return ret;
	if (!kwq_name_terminated(a.name) || a.flags || a.pad)
		return -EINVAL;

	mutex_lock(&kf->attach_lock);
	ret = -EISCONN;
	if (kf->uq)
		goto out;
	mutex_lock(&kwq_uq_lock);
	uq = kwq_uq_find(a.name);
	if (!uq)
		ret = -ENOENT;
	else if (!kwq_uq_may_open(uq))
		ret = -EACCES;
	else
		ret = 0;
	if (!ret)
		refcount_inc(&uq->ref);
	mutex_unlock(&kwq_uq_lock);
	if (!ret)
		kwq_attach(kf, uq);
out:
	mutex_unlock(&kf->attach_lock);
	return ret;
}

static int kwq_ioc_destroy(unsigned int cmd, unsigned long arg)
{
	struct kwq_open_args a;
	struct kwq_uq *uq;
	int ret;

	ret = kwq_copy_args(&a, sizeof(a), cmd, arg);
	if (ret)
		return ret;
	if (!kwq_name_terminated(a.name) || a.flags || a.pad)
		return -EINVAL;

	mutex_lock(&kwq_uq_lock);
	uq = kwq_uq_find(a.name);
	if (!uq) {
		ret = -ENOENT;
	} else if (!kwq_uq_may_destroy(uq)) {
		ret = -EPERM;
	} else {
		list_del(&uq->node);
		WRITE_ONCE(uq->dead, true);
	}
	mutex_unlock(&kwq_uq_lock);
	if (ret)
		return ret;
	/*
	 * Attached files keep their core references: the queue is shut
	 * down and unnamed now, and freed when the last file closes.
	 */
	kwq_get_ref(uq->q);
	kwq_destroy(uq->q);
	kwq_uq_put(uq);
	return 0;
}

static int kwq_ioc_list(unsigned int cmd, unsigned long arg)
{
	struct kwq_list_args a;
	struct kwq_uq *uq;
	u32 n = 0, slots;
	char *buf;
	int ret;

	ret = kwq_copy_args(&a, sizeof(a), cmd, arg);
	if (ret)
		return ret;
	if (a.capacity && !a.names)
		return -EINVAL;

	/*
	 * Names are gathered under kwq_uq_lock and copied out after it:
	 * a fault on the user buffer (FUSE-backed mapping, say) may block
	 * for as long as its owner likes, and must not block every
	 * CREATE, OPEN and DESTROY meanwhile.
	 */
	mutex_lock(&kwq_uq_lock);
	list_for_each_entry(uq, &kwq_uq_list, node)
		n++;
	mutex_unlock(&kwq_uq_lock);
	slots = min(n, a.capacity);
	buf = kvcalloc(slots ?: 1, KWQ_NAME_LEN, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;
	n = 0;
	mutex_lock(&kwq_uq_lock);
	list_for_each_entry(uq, &kwq_uq_list, node) {
		if (n < slots)
			strscpy(buf + (size_t)n * KWQ_NAME_LEN, kwq_name(uq->q),
				KWQ_NAME_LEN);
		n++;
	}
	mutex_unlock(&kwq_uq_lock);
	if (copy_to_user(u64_to_user_ptr(a.names), buf,
			 (size_t)min(n, slots) * KWQ_NAME_LEN))
		ret = -EFAULT;
	kvfree(buf);
	if (ret)
		return ret;
	a.count = n;
	return kwq_copy_args_out(arg, &a, sizeof(a));
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

/* A core error on a queue destroyed meanwhile reads as EIDRM. */
static int kwq_uq_err(struct kwq_uq *uq, int err)
{
	return err && READ_ONCE(uq->dead) ? -EIDRM : err;
}

enum kwq_keys_op { KWQ_OP_ADD, KWQ_OP_DONE, KWQ_OP_FORGET, KWQ_OP_REMOVE };

/*
 * Check a whole record buffer before any key takes effect: lengths in
 * range, padding zero, exactly @nr records filling exactly @len bytes.
 */
static int kwq_recs_check(const u8 *buf, u32 len, u32 nr, bool prio_ok)
{
	u32 off = 0, i;

	for (i = 0; i < nr; i++) {
		const struct kwq_rec *r = (const void *)(buf + off);
		size_t size;

		if (len - off < sizeof(*r))
			return -EINVAL;
		if (!r->len || r->len > KWQ_KEY_LEN_MAX)
			return -EINVAL;
		if (!prio_ok && r->priority)
			return -EINVAL;
		size = KWQ_REC_SIZE(r->len);
		if (size > len - off)
			return -EINVAL;
		if (memchr_inv(buf + off + sizeof(*r) + r->len, 0,
			       size - sizeof(*r) - r->len))
			return -EINVAL;
		off += size;
	}
	return off == len ? 0 : -EINVAL;
}

static int kwq_add_key(struct kwq *q, const u8 *key, u32 len, u32 flags,
		       struct kwq_add_opts *opts, u64 *delay)
{
	if (flags & KWQ_ADD_RATE_LIMITED)
		return kwq_add_rate_limited(q, key, len, opts, delay);
	return kwq_add_opts(q, key, len, opts);
}

/*
 * The core allocates nodes without sleeping (GFP_NOWAIT) and our queues
 * charge the adding task's memcg, so at the memcg limit an add fails
 * even when the cgroup could reclaim. Here we may sleep: charge one page
 * the sleeping way, which reclaims in the memcg (without invoking the
 * OOM killer: __GFP_RETRY_MAYFAIL). True if that made room, so the add
 * is worth retrying once.
 */
static bool kwq_reclaim(void)
{
	struct page *page;

	page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL |
			  __GFP_NOWARN);
	if (!page)
		return false;
	__free_page(page);
	return true;
}

static int kwq_key_op(struct kwq_file *kf, struct kwq *q, enum kwq_keys_op op,
		      const struct kwq_keys_args *a, const struct kwq_rec *r,
		      u64 *delay)
{
	const u8 *key = (const u8 *)(r + 1);
	struct kwq_add_opts opts = { .priority = r->priority };
	int ret;

	switch (op) {
	case KWQ_OP_ADD:
		if (a->flags & KWQ_ADD_AFTER)
			opts.after_ns = a->after_ns;
		ret = kwq_add_key(q, key, r->len, a->flags, &opts, delay);
		if (ret == -ENOMEM && kwq_reclaim())
			ret = kwq_add_key(q, key, r->len, a->flags, &opts,
					  delay);
		return ret;
	case KWQ_OP_DONE:
		/* Leased to this file, or detached (owned by nobody). */
		ret = kwq_done_key(q, key, r->len, kf);
		if (ret == -EPERM)
			ret = kwq_done_key(q, key, r->len, NULL);
		return ret;
	case KWQ_OP_FORGET:
		return kwq_forget(q, key, r->len);
	case KWQ_OP_REMOVE:
		return kwq_remove(q, key, r->len);
	}
	return -EINVAL;
}

static int kwq_ioc_keys(struct kwq_file *kf, enum kwq_keys_op op,
			unsigned int cmd, unsigned long arg)
{
	u64 __user *udelays = NULL;
	struct kwq_keys_args a;
	struct kwq_uq *uq;
	u64 *delays = NULL;
	u8 *buf = NULL;
	u32 off = 0;
	int ret;

	uq = kwq_file_uq(kf);
	if (IS_ERR(uq))
		return PTR_ERR(uq);
	ret = kwq_copy_args(&a, sizeof(a), cmd, arg);
	if (ret)
		return ret;
	if (a.pad || a.pad2 || !a.nr || a.nr > KWQ_BATCH_MAX ||
	    !a.recs_len || a.recs_len > KWQ_RECS_LEN_MAX)
		return -EINVAL;
	if (op == KWQ_OP_ADD) {
		if (a.flags & ~(KWQ_ADD_AFTER | KWQ_ADD_RATE_LIMITED) ||
		    a.flags == (KWQ_ADD_AFTER | KWQ_ADD_RATE_LIMITED) ||
		    (!(a.flags & KWQ_ADD_AFTER) && a.after_ns) ||
		    (!(a.flags & KWQ_ADD_RATE_LIMITED) && a.delays))
			return -EINVAL;
	} else if (a.flags || a.after_ns || a.delays) {
		return -EINVAL;
	}

	buf = kvmalloc(a.recs_len, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	ret = -EFAULT;
	if (copy_from_user(buf, u64_to_user_ptr(a.recs), a.recs_len))
		goto out;
	ret = kwq_recs_check(buf, a.recs_len, a.nr, op == KWQ_OP_ADD);
	if (ret)
		goto out;
	if (a.delays) {
		/* Prove the output writable before any key takes effect. */
		udelays = u64_to_user_ptr(a.delays);
		ret = -ENOMEM;
		delays = kvcalloc(a.nr, sizeof(*delays), GFP_KERNEL);
		if (!delays)
			goto out;
		ret = -EFAULT;
		if (copy_to_user(udelays, delays, a.nr * sizeof(*delays)))
			goto out;
	}

	ret = 0;
	for (a.done = 0; a.done < a.nr; a.done++) {
		const struct kwq_rec *r = (const void *)(buf + off);

		ret = kwq_key_op(kf, uq->q, op, &a, r,
				 delays ? &delays[a.done] : NULL);
		if (ret)
			break;
		off += KWQ_REC_SIZE(r->len);
	}
	ret = kwq_uq_err(uq, ret);
	if (delays && a.done &&
	    copy_to_user(udelays, delays, a.done * sizeof(*delays)))
		ret = -EFAULT;
	if (kwq_copy_args_out(arg, &a, sizeof(a)))
		ret = -EFAULT;
out:
	kvfree(delays);
	kvfree(buf);
	return ret;
}

/* Write one key as a record at @dst; false if the user memory faulted. */
static bool kwq_put_rec(u8 __user *dst, const struct kwq_item *item)
{
	static const u8 zeroes[8];
	struct kwq_rec r = {};
	const void *key;
	size_t len, pad;

	key = kwq_item_key(item, &len);
	r.len = len;
	r.priority = kwq_item_priority(item);
	pad = KWQ_REC_SIZE(len) - sizeof(r) - len;
	return !copy_to_user(dst, &r, sizeof(r)) &&
	       !copy_to_user(dst + sizeof(r), key, len) &&
	       !copy_to_user(dst + sizeof(r) + len, zeroes, pad);
}

static int kwq_ioc_get(struct file *file, struct kwq_file *kf,
		       unsigned int cmd, unsigned long arg)
{
	struct kwq_item items[16];
	unsigned int flags = 0;
	struct kwq_get_args a;
	struct kwq_uq *uq;
	u8 __user *dst;
	void *owner, *token;
	s64 timeout;
	u32 i, used;
	int ret;

	uq = kwq_file_uq(kf);
	if (IS_ERR(uq))
		return PTR_ERR(uq);
	ret = kwq_copy_args(&a, sizeof(a), cmd, arg);
	if (ret)
		return ret;
	/* nr and used are outputs: whatever they held is overwritten. */
	a.nr = 0;
	a.used = 0;
	if (a.flags & ~KWQ_GET_DETACHED || a.pad || !a.max ||
	    a.recs_len < KWQ_REC_SIZE_MAX || !a.recs)
		return -EINVAL;
	/*
	 * The result is written back into @arg: prove that possible before
	 * a key is taken, or a read-only struct would strand taken keys.
	 */
	if (kwq_copy_args_out(arg, &a, sizeof(a)))
		return -EFAULT;
	owner = a.flags & KWQ_GET_DETACHED ? NULL : kf;
	/*
	 * Keys are taken with a private owner (this call's @a) and handed
	 * to @owner only once written out: until then no DONE through any
	 * fd can match them (EPERM), so none is finished, freed or handed
	 * out again while this call still copies or ungets it.
	 */
	token = &a;
	timeout = a.timeout_ns < 0 ? KWQ_WAIT_FOREVER : a.timeout_ns;
	if (file->f_flags & O_NONBLOCK)
		flags |= KWQ_GET_NONBLOCK;
	dst = u64_to_user_ptr(a.recs);

	/*
	 * Wait for the first key only, then take what is ready, while a
	 * whole record of the largest size still fits. Keys are taken in
	 * rounds of ARRAY_SIZE(items) and written out; a fault puts the
	 * round's keys back (kwq_unget) so none is lost; earlier rounds
	 * were written out and are handed over.
	 */
	while (a.nr < a.max) {
		u32 n = 0, want = min_t(u32, a.max - a.nr, ARRAY_SIZE(items));

		while (n < want && a.recs_len - a.used - n * KWQ_REC_SIZE_MAX >=
		       KWQ_REC_SIZE_MAX) {
			ret = kwq_get(uq->q, token, flags, timeout, &items[n]);
			if (ret)
				break;
			n++;
			flags |= KWQ_GET_NONBLOCK;
		}
		for (i = 0, used = a.used; i < n; i++) {
			size_t len;

			kwq_item_key(&items[i], &len);
			if (!kwq_put_rec(dst + used, &items[i]))
				break;
			used += KWQ_REC_SIZE(len);
		}
		if (i < n) {
			/*
			 * Fault: the round's keys go back to the head of
			 * their levels, last taken first, so order holds.
			 */
			while (n--)
				kwq_unget(uq->q, &items[n]);
			ret = -EFAULT;
			break;
		}
		kwq_set_owner(uq->q, items, n, owner);
		/* Only whole rounds count: @used covers exactly @nr records. */
		a.used = used;
		a.nr += n;
		if (n < want || ret)
			break;
	}
	if (a.nr) {
		/* Keys were handed out: the call succeeded. */
		return kwq_copy_args_out(arg, &a, sizeof(a));
	}
	return kwq_uq_err(uq, ret);
}

static int kwq_ioc_num_requeues(struct kwq_file *kf, unsigned int cmd,
				unsigned long arg)
{
	u8 key[KWQ_KEY_LEN_MAX];
	struct kwq_key_args a;
	struct kwq_uq *uq;
	int ret;

	uq = kwq_file_uq(kf);
	if (IS_ERR(uq))
		return PTR_ERR(uq);
	ret = kwq_copy_args(&a, sizeof(a), cmd, arg);
	if (ret)
		return ret;
	if (!a.len || a.len > KWQ_KEY_LEN_MAX)
		return -EINVAL;
	if (copy_from_user(key, u64_to_user_ptr(a.key), a.len))
		return -EFAULT;
	ret = kwq_num_requeues(uq->q, key, a.len);
	if (ret < 0)
		return kwq_uq_err(uq, ret);
	a.count = ret;
	return kwq_copy_args_out(arg, &a, sizeof(a));
}

static int kwq_ioc_len(struct kwq_file *kf, unsigned long arg)
{
	struct kwq_uq *uq = kwq_file_uq(kf);
	long len;

	if (IS_ERR(uq))
		return PTR_ERR(uq);
	len = kwq_len(uq->q);
	if (len < 0)
		return kwq_uq_err(uq, len);
	return put_user((u64)len, (u64 __user *)arg);
}

static int kwq_ioc_shutdown(struct kwq_file *kf, unsigned int cmd,
			    unsigned long arg)
{
	struct kwq_shutdown_args a;
	struct kwq_uq *uq;
	int ret;

	uq = kwq_file_uq(kf);
	if (IS_ERR(uq))
		return PTR_ERR(uq);
	ret = kwq_copy_args(&a, sizeof(a), cmd, arg);
	if (ret)
		return ret;
	if (a.flags & ~KWQ_SHUTDOWN_DRAIN || a.pad)
		return -EINVAL;
	if (a.flags & KWQ_SHUTDOWN_DRAIN)
		ret = kwq_shutdown_drain(uq->q);
	else
		ret = kwq_shutdown(uq->q);
	return kwq_uq_err(uq, ret);
}

static void kwq_hist_to_user(struct kwq_stats_hist *dst,
			     const struct kwq_histogram *src)
{
	memcpy(dst->le, src->le, sizeof(dst->le));
	dst->count = src->count;
	dst->sum_ns = src->sum_ns;
}

static int kwq_ioc_stats(struct kwq_file *kf, unsigned int cmd,
			 unsigned long arg)
{
	struct kwq_stats_args a = {};
	struct kwq_stats st;
	struct kwq_uq *uq;
	size_t usize;
	unsigned int i;
	int ret;

	uq = kwq_file_uq(kf);
	if (IS_ERR(uq))
		return PTR_ERR(uq);
	/* Output only: an older (smaller) struct gets its prefix. */
	usize = _IOC_SIZE(cmd);
	if (usize < KWQ_STATS_ARGS_SIZE_VER1)
		return -EINVAL;
	ret = kwq_get_stats(uq->q, &st);
	if (ret)
		return kwq_uq_err(uq, ret);
	a.len = st.depth;
	a.waiting = st.waiting;
	a.processing = st.processing;
	a.adds_total = st.adds_total;
	a.retries_total = st.retries_total;
	a.dropped_at_shutdown = st.dropped_at_shutdown;
	a.lease_returns = st.lease_returns;
	a.failure_records = st.failure_records;
	a.shutting_down = st.shutting_down;
	a.depth = st.workqueue_depth;
	a.failure_records_evicted = st.failure_records_evicted;
	a.unfinished_work_ns = st.unfinished_work_ns;
	a.longest_running_ns = st.longest_running_ns;
	kwq_hist_to_user(&a.queue_duration, &st.queue_duration);
	kwq_hist_to_user(&a.work_duration, &st.work_duration);
	a.nr_prios = st.nr_prio_levels;
	for (i = 0; i < st.nr_prio_levels; i++) {
		a.prios[i].priority = st.prio_depth[i].priority;
		a.prios[i].depth = st.prio_depth[i].depth;
	}
	a.prios_other = st.prio_depth_other;
	if (kwq_copy_args_out(arg, &a, min(usize, sizeof(a))))
		return -EFAULT;
	/* A newer, larger struct: fields we do not know read as zero. */
	if (usize > sizeof(a) &&
	    clear_user((u8 __user *)arg + sizeof(a), usize - sizeof(a)))
		return -EFAULT;
	return 0;
}

/*
 * The direction each ioctl number must carry. Its size is not checked
 * here: it is the version of the argument struct (kwq_copy_args).
 */
static const u8 kwq_ioc_dir[] = {
	[_IOC_NR(KWQ_IOC_CREATE)] = _IOC_DIR(KWQ_IOC_CREATE),
	[_IOC_NR(KWQ_IOC_OPEN)] = _IOC_DIR(KWQ_IOC_OPEN),
	[_IOC_NR(KWQ_IOC_DESTROY)] = _IOC_DIR(KWQ_IOC_DESTROY),
	[_IOC_NR(KWQ_IOC_LIST)] = _IOC_DIR(KWQ_IOC_LIST),
	[_IOC_NR(KWQ_IOC_ADD)] = _IOC_DIR(KWQ_IOC_ADD),
	[_IOC_NR(KWQ_IOC_GET)] = _IOC_DIR(KWQ_IOC_GET),
	[_IOC_NR(KWQ_IOC_DONE)] = _IOC_DIR(KWQ_IOC_DONE),
	[_IOC_NR(KWQ_IOC_FORGET)] = _IOC_DIR(KWQ_IOC_FORGET),
	[_IOC_NR(KWQ_IOC_REMOVE)] = _IOC_DIR(KWQ_IOC_REMOVE),
	[_IOC_NR(KWQ_IOC_NUM_REQUEUES)] = _IOC_DIR(KWQ_IOC_NUM_REQUEUES),
	[_IOC_NR(KWQ_IOC_LEN)] = _IOC_DIR(KWQ_IOC_LEN),
	[_IOC_NR(KWQ_IOC_SHUTDOWN)] = _IOC_DIR(KWQ_IOC_SHUTDOWN),
	[_IOC_NR(KWQ_IOC_STATS)] = _IOC_DIR(KWQ_IOC_STATS),
};

static long kwq_dev_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	struct kwq_file *kf = file->private_data;
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != KWQ_IOC_MAGIC || nr >= ARRAY_SIZE(kwq_ioc_dir) ||
	    _IOC_DIR(cmd) != kwq_ioc_dir[nr])
		return -ENOTTY;
	switch (nr) {
	case _IOC_NR(KWQ_IOC_CREATE):
		return kwq_ioc_create(kf, cmd, arg);
	case _IOC_NR(KWQ_IOC_OPEN):
		return kwq_ioc_open(kf, cmd, arg);
	case _IOC_NR(KWQ_IOC_DESTROY):
		return kwq_ioc_destroy(cmd, arg);
	case _IOC_NR(KWQ_IOC_LIST):
		return kwq_ioc_list(cmd, arg);
	case _IOC_NR(KWQ_IOC_ADD):
		return kwq_ioc_keys(kf, KWQ_OP_ADD, cmd, arg);
	case _IOC_NR(KWQ_IOC_GET):
		return kwq_ioc_get(file, kf, cmd, arg);
	case _IOC_NR(KWQ_IOC_DONE):
		return kwq_ioc_keys(kf, KWQ_OP_DONE, cmd, arg);
	case _IOC_NR(KWQ_IOC_FORGET):
		return kwq_ioc_keys(kf, KWQ_OP_FORGET, cmd, arg);
	case _IOC_NR(KWQ_IOC_REMOVE):
		return kwq_ioc_keys(kf, KWQ_OP_REMOVE, cmd, arg);
	case _IOC_NR(KWQ_IOC_NUM_REQUEUES):
		return kwq_ioc_num_requeues(kf, cmd, arg);
	case _IOC_NR(KWQ_IOC_LEN):
		/* Not a versioned struct: the size must match too. */
		if (cmd != KWQ_IOC_LEN)
			return -ENOTTY;
		return kwq_ioc_len(kf, arg);
	case _IOC_NR(KWQ_IOC_SHUTDOWN):
		return kwq_ioc_shutdown(kf, cmd, arg);
	case _IOC_NR(KWQ_IOC_STATS):
		return kwq_ioc_stats(kf, cmd, arg);
	}
	return -ENOTTY;
}

static __poll_t kwq_dev_poll(struct file *file, poll_table *wait)
{
	struct kwq_uq *uq = kwq_file_uq(file->private_data);

	if (IS_ERR(uq))
		return PTR_ERR(uq) == -EIDRM ? EPOLLERR | EPOLLHUP : EPOLLERR;
	return kwq_poll(uq->q, file, wait);
}

static int kwq_dev_open(struct inode *inode, struct file *file)
{
	struct kwq_file *kf;

	kf = kzalloc(sizeof(*kf), GFP_KERNEL_ACCOUNT);
	if (!kf)
		return -ENOMEM;
	mutex_init(&kf->attach_lock);
	file->private_data = kf;
	return nonseekable_open(inode, file);
}

static int kwq_dev_release(struct inode *inode, struct file *file)
{
	struct kwq_file *kf = file->private_data;

	if (kf->uq) {
		/* Leases end with the file: its keys go back to the queue. */
		kwq_release_owner(kf->uq->q, kf);
		kwq_uq_put(kf->uq);
	}
	mutex_destroy(&kf->attach_lock);
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
	return misc_register(&kwq_misc);
}

/* Queues nobody destroyed die with the module (no fd can be open now). */
void kwq_dev_exit(void)
{
	struct kwq_uq *uq, *tmp;

	misc_deregister(&kwq_misc);
	list_for_each_entry_safe(uq, tmp, &kwq_uq_list, node) {
		list_del(&uq->node);
		kwq_destroy(uq->q);
		kfree(uq);
	}
}
