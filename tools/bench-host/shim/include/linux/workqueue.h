/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host benchmark shim: queued work runs when the driver says so
 * (hostbench_run_work(), shim.c), never inside the caller of
 * schedule_work(): the caller may hold the lock the work takes. The driver
 * runs it right after the operation that queued it, as an idle worker
 * would, and measures it on its own.
 */
#ifndef _HOSTBENCH_WORKQUEUE_H
#define _HOSTBENCH_WORKQUEUE_H
#include <linux/kernel.h>
#include <linux/list.h>

struct work_struct;
typedef void (*work_func_t)(struct work_struct *work);

struct work_struct {
	struct list_head entry;
	work_func_t func;
	bool pending;
};

struct delayed_work {
	struct work_struct work;
};

struct workqueue_struct;
extern struct workqueue_struct *system_wq;
extern struct workqueue_struct *system_unbound_wq;
extern struct workqueue_struct *system_long_wq;

#define INIT_WORK(w, f) do {						\
	INIT_LIST_HEAD(&(w)->entry);					\
	(w)->func = (f);						\
	(w)->pending = false;						\
} while (0)
/* No debugobjects here: work on the stack is work like any other. */
#define INIT_WORK_ONSTACK(w, f)		INIT_WORK(w, f)
#define destroy_work_on_stack(w)	do { } while (0)
#define __WORK_INITIALIZER(n, f)	{ LIST_HEAD_INIT((n).entry), (f), false }
#define DECLARE_WORK(n, f)		struct work_struct n = __WORK_INITIALIZER(n, f)
#define INIT_DELAYED_WORK(dw, f)	INIT_WORK(&(dw)->work, f)
#define to_delayed_work(w)		container_of(w, struct delayed_work, work)

bool queue_work(struct workqueue_struct *wq, struct work_struct *work);
bool cancel_work(struct work_struct *work);
bool cancel_work_sync(struct work_struct *work);
bool flush_work(struct work_struct *work);

static inline bool schedule_work(struct work_struct *work)
{
	return queue_work(system_wq, work);
}

static inline bool work_pending(const struct work_struct *work)
{
	return work->pending;
}

/* The delay is not modelled: delayed work runs with the next run. */
static inline bool queue_delayed_work(struct workqueue_struct *wq,
				      struct delayed_work *dw,
				      unsigned long delay)
{
	return queue_work(wq, &dw->work);
}
#define schedule_delayed_work(dw, d)	queue_delayed_work(system_wq, dw, d)
#define mod_delayed_work(wq, dw, d)	queue_delayed_work(wq, dw, d)
#define cancel_delayed_work(dw)		cancel_work(&(dw)->work)
#define cancel_delayed_work_sync(dw)	cancel_work_sync(&(dw)->work)
#define flush_delayed_work(dw)		flush_work(&(dw)->work)
#define delayed_work_pending(dw)	work_pending(&(dw)->work)
#endif
