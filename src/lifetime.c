// SPDX-License-Identifier: GPL-2.0
/*
 * A queue's lifetime: shutdown and drain, the wait queue a getter or
 * poller waits on, its name's rules (kwq_name_ok()), creation of every
 * part (kwq_create_anon()), reference
 * counts and freeing (the last kwq_put() in any context hands the queue
 * to kwq_free_work, process context), and the core's init and exit.
 * Shutdown walks hold q->lock KWQ_WALK_CHUNK keys at a time; the list of
 * queues to free is a lockless llist.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/ctype.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/kwq.h>
#include <linux/llist.h>
#include <linux/memcontrol.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "kwq_internal.h"
#include "queue.h"
#include "delay.h"

/* For dev.c: see kwq_internal.h. */
wait_queue_head_t *kwq_get_waitqueue(struct kwq *q)
{
	return &q->get_wq;
}

__poll_t kwq_poll(struct kwq *q)
{
	unsigned long flags;
	__poll_t mask = 0;

	spin_lock_irqsave(&q->lock, flags);
	kwq_refs_splice(q);
	if (q->nr_ready)
		mask = EPOLLIN | EPOLLRDNORM;
	else if (q->shutting_down)
		mask = EPOLLHUP;
	spin_unlock_irqrestore(&q->lock, flags);
	return mask;
}
EXPORT_SYMBOL_IF_KUNIT(kwq_poll);

/*
 * Reject adds and drop waiting keys, KWQ_WALK_CHUNK per critical section:
 * q->lock is dropped in between (the expiry leaves the waiting keys of a
 * queue shutting down alone, and nothing adds to them), the nodes freed
 * so far go back to their caches (nobody is woken before the end), and
 * cond_resched() is called if @may_sleep. Every waiting key is dropped:
 * no signal ends this early.
 */
static void kwq_shutdown_locked(struct kwq *q, bool drain, bool may_sleep,
				unsigned long *flags)
	__must_hold(&q->lock)
{
	struct kwq_node *n, *freed;
	u64 dropped = 0;
	unsigned int i;

	/* The adds by handle that came before are applied, as adds. */
	kwq_refs_splice(q);
	WRITE_ONCE(q->shutting_down, true);
	for (;;) {
		for (i = 0; i < KWQ_WALK_CHUNK && (n = kwq_wait_any(q)); i++) {
			kwq_wait_unlink(q, n);
			kwq_release_node(q, n, NULL);
		}
		dropped += i;
		q->dropped_at_shutdown += i;
		if (i < KWQ_WALK_CHUNK)
			break;
		freed = q->free_list;
		q->free_list = NULL;
		spin_unlock_irqrestore(&q->lock, *flags);
		kwq_nodes_free(freed);
		if (may_sleep)
			cond_resched();
		spin_lock_irqsave(&q->lock, *flags);
	}
	kwq_timer_update(q);
	trace_queue_shutdown(q, drain, dropped, q->nr_ready, q->nr_processing);
}

static int kwq_shutdown_walk(struct kwq *q, bool may_sleep)
{
	unsigned long flags;

	if (!q)
		return -EINVAL;
	spin_lock_irqsave(&q->lock, flags);
	kwq_shutdown_locked(q, false, may_sleep, &flags);
	q->shutdown_seq++;
	kwq_unlock(q, flags, 0);
	wake_up_all(&q->get_wq);
	wake_up_all(&q->drain_wq);
	return 0;
}

int kwq_shutdown(struct kwq *q)
{
	return kwq_shutdown_walk(q, false);
}
EXPORT_SYMBOL_GPL(kwq_shutdown);

/* For dev.c: see kwq_internal.h. */
int kwq_shutdown_sleep(struct kwq *q)
{
	return kwq_shutdown_walk(q, true);
}

static bool kwq_drain_over(struct kwq *q, unsigned long seq, int *res)
{
	unsigned long flags;
	bool over = true;

	spin_lock_irqsave(&q->lock, flags);
	if (!q->nr_ready && !q->nr_processing)
		*res = 0;
	else if (q->shutdown_seq != seq)
		*res = -ECANCELED;
	else
		over = false;
	spin_unlock_irqrestore(&q->lock, flags);
	return over;
}

int kwq_shutdown_drain(struct kwq *q)
{
	unsigned long flags, seq;
	int ret, res = 0;

	if (!q)
		return -EINVAL;
	might_sleep();
	spin_lock_irqsave(&q->lock, flags);
	kwq_shutdown_locked(q, true, true, &flags);
	seq = q->shutdown_seq;
	kwq_unlock(q, flags, 0);
	wake_up_all(&q->get_wq);

	kwq_get_ref(q);
	ret = wait_event_interruptible(q->drain_wq,
				       kwq_drain_over(q, seq, &res));
	kwq_put(q);
	return ret ? ret : res;
}
EXPORT_SYMBOL_GPL(kwq_shutdown_drain);

/* For ring.c: see kwq_internal.h. */
void kwq_set_ready_mirror(struct kwq *q, u64 *mirror)
{
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	q->ready_mirror = mirror ?: &q->ready_sink;
	WRITE_ONCE(*q->ready_mirror, q->nr_ready);
	spin_unlock_irqrestore(&q->lock, flags);
}

bool kwq_shutting_down(struct kwq *q)
{
	return !q || READ_ONCE(q->shutting_down);
}
EXPORT_SYMBOL_GPL(kwq_shutting_down);

/* --- lifetime (the registry of names: registry.c) --- */

bool kwq_name_ok(const char *name)
{
	size_t i, len;

	if (!name)
		return false;
	len = strnlen(name, KWQ_NAME_MAX + 1);
	if (!len || len > KWQ_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum(name[i]) && !strchr("._-", name[i]))
			return false;
	return true;
}

/* Process context: waits for the timer callback and the resize work. */
static void kwq_free(struct kwq *q)
{
	hrtimer_cancel(&q->timer);
	kwq_delay_free(q);
	kwq_due_free_all(q);
	kfree(q->tombs);
	kwq_table_free(q);
	kwq_levels_free(q);
	kwq_budget_uncharge(q->budget, NULL, q->charged);
	kwq_budget_put(q->budget);
	mem_cgroup_put(q->memcg);
	kfree(q);
}

/*
 * For dev.c and registry.c: see kwq_internal.h. A queue starts anonymous;
 * kwq_create() (registry.c) then enters it in the registry of names.
 */
struct kwq *kwq_create_anon(const char *name, const struct kwq_config *cfg,
			    struct kwq_budget *budget)
{
	static const struct kwq_config defaults;
	const struct kwq_clock *clock;
	gfp_t account;
	struct kwq *q;
	int ret;

	if (!kwq_name_ok(name))
		return ERR_PTR(-EINVAL);
	if (!cfg)
		cfg = &defaults;
	if (cfg->flags & ~KWQ_CONFIG_CHARGE_CALLER ||
	    cfg->max_retries > KWQ_MAX_RETRIES_MAX ||
	    cfg->max_dead > KWQ_MAX_DEAD_MAX ||
	    (cfg->max_dead && !cfg->max_retries) ||
	    (cfg->processing_timeout_ns &&
	     (cfg->processing_timeout_ns < KWQ_PROCESSING_TIMEOUT_MIN_NS ||
	      cfg->processing_timeout_ns > KWQ_PROCESSING_TIMEOUT_MAX_NS)))
		return ERR_PTR(-EINVAL);
	clock = cfg->clock ?: &kwq_real_clock;
	if (!clock->now || !clock->arm || !clock->cancel)
		return ERR_PTR(-EINVAL);
	might_sleep();

	/* Charging the caller: the queue and its table go to the creator. */
	account = cfg->flags & KWQ_CONFIG_CHARGE_CALLER ? __GFP_ACCOUNT : 0;
	q = kzalloc(sizeof(*q), GFP_KERNEL | account);
	if (!q)
		return ERR_PTR(-ENOMEM);
	/* All that kwq_free() undoes is set up before the first failure. */
	q->gfp_account = account;
	/*
	 * The memcg that kzalloc(__GFP_ACCOUNT) above charged: the creating
	 * task's, as for any accounted allocation. The grow and wheel work
	 * charge it later; NULL without memcg. This and the signal check of
	 * a sleeping get are the core's only uses of current.
	 */
	if (account)
		q->memcg = get_mem_cgroup_from_mm(current->mm);
	spin_lock_init(&q->lock);
	refcount_set(&q->ref, 1);
	INIT_LIST_HEAD(&q->registry);
	q->anon = true;
	q->ready_mirror = &q->ready_sink;
	/* The queue's charges go back to @budget when it is freed. */
	q->budget = budget;
	if (budget)
		refcount_inc(&budget->ref);
	strscpy(q->name, name, sizeof(q->name));
	kwq_levels_init(q);
	kwq_delay_init(q);
	INIT_LIST_HEAD(&q->processing);
	q->due = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&q->idle);
	INIT_LIST_HEAD(&q->dead);
	q->max_retries = cfg->max_retries;
	q->max_dead = cfg->max_dead ?: KWQ_DEFAULT_MAX_DEAD;
	q->cursor_tag = (get_random_u32() & 0xffff) | 1;
	q->clock = clock;
	q->max_items = cfg->max_items;
	q->processing_timeout_ns = cfg->processing_timeout_ns;
	q->max_failure_records = cfg->max_failure_records ?:
				 KWQ_DEFAULT_FAILURE_RECORDS;
	init_llist_head(&q->ref_adds);
	q->pins = RB_ROOT;
	init_waitqueue_head(&q->get_wq);
	init_waitqueue_head(&q->drain_wq);
	kwq_real_clock_setup(q);

	ret = -EDQUOT;
	if (!kwq_charge(q, kwq_alloc_bytes(sizeof(*q))))
		goto err_free;
	ret = kwq_limiters_init(&q->limiters, cfg, clock->now(clock));
	if (ret)
		goto err_free;
	ret = kwq_table_alloc(q, cfg->max_items);
	if (ret)
		goto err_free;
	return q;

err_free:
	kwq_free(q);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_IF_KUNIT(kwq_create_anon);

/* For dev.c: wake every getter and poller; see kwq_internal.h. */
void kwq_wake_all(struct kwq *q)
{
	wake_up_all(&q->get_wq);
}
EXPORT_SYMBOL_IF_KUNIT(kwq_wake_all);

/* For registry.c: see queue.h. */
void kwq_retire(struct kwq *q)
{
	unsigned long flags;

	kwq_shutdown_walk(q, true);
	spin_lock_irqsave(&q->lock, flags);
	q->clock->cancel(q->clock, q);
	q->timer_deadline = KWQ_NO_DEADLINE;
	spin_unlock_irqrestore(&q->lock, flags);
	hrtimer_cancel(&q->timer);
	kwq_put_sync(q);
}

void kwq_get_ref(struct kwq *q)
{
	refcount_inc(&q->ref);
}
EXPORT_SYMBOL_GPL(kwq_get_ref);

/*
 * Queues whose last reference was dropped where sleeping is not allowed,
 * freed by kwq_free_work; kwq_core_exit() waits for it.
 */
static LLIST_HEAD(kwq_free_list);

static void kwq_free_fn(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&kwq_free_list);
	struct kwq *q, *tmp;

	llist_for_each_entry_safe(q, tmp, list, free_node)
		kwq_free(q);
}

static DECLARE_WORK(kwq_free_work, kwq_free_fn);

void kwq_put(struct kwq *q)
{
	if (!q || !refcount_dec_and_test(&q->ref))
		return;
	/* The first queue on the list schedules the work (delayed_fput). */
	if (llist_add(&q->free_node, &kwq_free_list))
		schedule_work(&kwq_free_work);
}
EXPORT_SYMBOL_GPL(kwq_put);

/* For dev.c: see kwq_internal.h. */
void kwq_put_sync(struct kwq *q)
{
	might_sleep();
	if (q && refcount_dec_and_test(&q->ref))
		kwq_free(q);
}

const char *kwq_name(const struct kwq *q)
{
	return q ? q->name : NULL;
}
EXPORT_SYMBOL_GPL(kwq_name);

int kwq_core_init(void)
{
	kwq_clock_init(kwq_clock_expired);
	kwq_hist_init();
	return kwq_table_init();
}

void kwq_core_exit(void)
{
	/* Queues put last from atomic context; freeing queues no others. */
	flush_work(&kwq_free_work);
	kwq_table_exit();
}
