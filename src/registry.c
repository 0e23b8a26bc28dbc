// SPDX-License-Identifier: GPL-2.0
/*
 * The registry of kernel queues: the names kwq_create() gives out,
 * kwq_find() looks up and kwq_destroy() takes back, and each registered
 * queue's metrics directory in debugfs (kwq/<name>).
 *
 * Owns kwq_registry and kwq_registry_lock (a mutex): the list of
 * registered queues, each by its ->registry link, and every queue's
 * ->anon flag once created. It is never taken under a queue's lock, and
 * dev.c's locks (kwq_uq_lock) come before it.
 *
 * Queues created for /dev/kwq (kwq_create_anon()) never enter it: dev.c
 * keeps their names per IPC namespace. A queue's memory and lifetime are
 * the core's (queue.c); this file only adds the name on top and, at
 * kwq_destroy(), takes it away before the core retires the queue.
 *
 * dev.c can publish a registered queue on /dev/kwq. A destroyed queue
 * must disappear from there too, but this file sits below dev.c and calls
 * nothing of it: dev.c hands its unpublish function over once, through
 * kwq_registry_set_unpublish().
 */

#include <linux/err.h>
#include <linux/kwq.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/string.h>

#include "kwq_internal.h"
#include "queue.h"

static DEFINE_MUTEX(kwq_registry_lock);
static LIST_HEAD(kwq_registry);
/* dev.c's kwq_unpublish(), or NULL before dev.c is up. */
static void (*kwq_registry_unpublish)(struct kwq *q);

static struct kwq *kwq_registry_find(const char *name)
{
	struct kwq *q;

	lockdep_assert_held(&kwq_registry_lock);
	list_for_each_entry(q, &kwq_registry, registry)
		if (!strcmp(q->name, name))
			return q;
	return NULL;
}

struct kwq *kwq_create(const char *name, const struct kwq_config *cfg)
{
	struct kwq *q = kwq_create_anon(name, cfg, NULL);

	if (IS_ERR(q))
		return q;
	mutex_lock(&kwq_registry_lock);
	if (kwq_registry_find(name)) {
		mutex_unlock(&kwq_registry_lock);
		kwq_put_sync(q);
		return ERR_PTR(-EEXIST);
	}
	q->anon = false;
	list_add_tail(&q->registry, &kwq_registry);
	/* Under the mutex: a queue of the same name may be on its way out. */
	kwq_debugfs_add(q, NULL);
	mutex_unlock(&kwq_registry_lock);
	return q;
}
EXPORT_SYMBOL_GPL(kwq_create);

/* For dev.c: see kwq_internal.h. */
int kwq_check_publish(struct kwq *q)
{
	bool registered;

	mutex_lock(&kwq_registry_lock);
	registered = !list_empty(&q->registry);
	mutex_unlock(&kwq_registry_lock);
	/*
	 * A published queue outlives its creator's module as long as a
	 * file holds it: it must not call into that module's clock.
	 */
	return registered && q->clock == &kwq_real_clock ? 0 : -EINVAL;
}

/* For dev.c: see kwq_internal.h. */
void kwq_registry_set_unpublish(void (*unpublish)(struct kwq *q))
{
	mutex_lock(&kwq_registry_lock);
	kwq_registry_unpublish = unpublish;
	mutex_unlock(&kwq_registry_lock);
}

void kwq_destroy(struct kwq *q)
{
	void (*unpublish)(struct kwq *q);

	if (!q)
		return;
	if (!q->anon) {
		mutex_lock(&kwq_registry_lock);
		list_del_init(&q->registry);
		/* Waits for readers of the metrics file (only take q->lock). */
		kwq_debugfs_remove(q);
		unpublish = kwq_registry_unpublish;
		mutex_unlock(&kwq_registry_lock);
		/* Unregistered first: it cannot be published again. */
		if (unpublish)
			unpublish(q);
	}
	kwq_retire(q);
}
EXPORT_SYMBOL_GPL(kwq_destroy);

struct kwq *kwq_find(const char *name)
{
	struct kwq *q;

	if (!kwq_name_ok(name))
		return ERR_PTR(-EINVAL);
	mutex_lock(&kwq_registry_lock);
	q = kwq_registry_find(name);
	if (q)
		kwq_get_ref(q);
	mutex_unlock(&kwq_registry_lock);
	return q ?: ERR_PTR(-ENOENT);
}
EXPORT_SYMBOL_GPL(kwq_find);

/* At module exit: every kernel queue must have been destroyed. */
void kwq_registry_exit(void)
{
	WARN_ON(!list_empty(&kwq_registry));
}
