// SPDX-License-Identifier: GPL-2.0
/*
 * Per-user limits of /dev/kwq (struct kwq_user): one per user (an euid)
 * and user namespace, its queue count and byte budget, each also counted
 * against the owner of that user namespace in the parent namespace, up
 * to the initial one (as ucounts do for RLIMIT_MSGQUEUE). The budget's
 * bytes are charged by the core (budget.c); the max_bytes_per_user
 * parameter. kwq_uq_lock guards kwq_user_list and every kwq_user's
 * queue count; it is defined here, in the lowest file of the device
 * side, for namespace.c and dev.c too (what else it guards: namespace.c).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/kwq.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>

#include "dev.h"
#include "kwq_internal.h"

/* The device side's lock: what it guards is in namespace.c. */
DEFINE_MUTEX(kwq_uq_lock);
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
		 "Kernel memory the queues one user created through /dev/kwq may use, in bytes: queues, hash tables and keys, whoever adds them; per user namespace and counted in its ancestors (CAP_SYS_ADMIN is exempt; default 64 MiB)");

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

void kwq_user_put_locked(struct kwq_user *u)
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
struct kwq_user *kwq_user_get(struct user_namespace *user_ns,
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
