/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host benchmark shim: wait queues that nobody ever waits on. A wake-up
 * takes the wait queue's lock and looks at its list, as __wake_up() does;
 * waiting stops the benchmark.
 */
#ifndef _HOSTBENCH_WAIT_H
#define _HOSTBENCH_WAIT_H
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/sched.h>

struct wait_queue_entry;
typedef int (*wait_queue_func_t)(struct wait_queue_entry *wq_entry,
				 unsigned int mode, int flags, void *key);

struct wait_queue_entry {
	unsigned int flags;
	void *private;
	wait_queue_func_t func;
	struct list_head entry;
};
typedef struct wait_queue_entry wait_queue_entry_t;

struct wait_queue_head {
	spinlock_t lock;
	struct list_head head;
};
typedef struct wait_queue_head wait_queue_head_t;

#define __WAIT_QUEUE_HEAD_INITIALIZER(name) {				\
	.lock = __SPIN_LOCK_UNLOCKED(name.lock),			\
	.head = LIST_HEAD_INIT(name.head) }
#define DECLARE_WAIT_QUEUE_HEAD(name) \
	struct wait_queue_head name = __WAIT_QUEUE_HEAD_INITIALIZER(name)

static inline void init_waitqueue_head(struct wait_queue_head *wq_head)
{
	spin_lock_init(&wq_head->lock);
	INIT_LIST_HEAD(&wq_head->head);
}

void __wake_up(struct wait_queue_head *wq_head, unsigned int mode, int nr,
	       void *key);
void prepare_to_wait(struct wait_queue_head *wq_head,
		     struct wait_queue_entry *wq_entry, int state);
void prepare_to_wait_exclusive(struct wait_queue_head *wq_head,
			       struct wait_queue_entry *wq_entry, int state);
void finish_wait(struct wait_queue_head *wq_head,
		 struct wait_queue_entry *wq_entry);

#define wake_up(x)			__wake_up(x, TASK_NORMAL, 1, NULL)
#define wake_up_nr(x, nr)		__wake_up(x, TASK_NORMAL, nr, NULL)
#define wake_up_all(x)			__wake_up(x, TASK_NORMAL, 0, NULL)
#define wake_up_interruptible(x)	__wake_up(x, TASK_INTERRUPTIBLE, 1, NULL)
#define wake_up_interruptible_nr(x, nr)	__wake_up(x, TASK_INTERRUPTIBLE, nr, NULL)
#define wake_up_interruptible_all(x)	__wake_up(x, TASK_INTERRUPTIBLE, 0, NULL)
#define wake_up_poll(x, m)		__wake_up(x, TASK_NORMAL, 1, (void *)(unsigned long)(m))
#define wake_up_interruptible_poll(x, m) __wake_up(x, TASK_INTERRUPTIBLE, 1, (void *)(unsigned long)(m))

static inline int waitqueue_active(struct wait_queue_head *wq_head)
{
	return !list_empty(&wq_head->head);
}

static inline bool wq_has_sleeper(struct wait_queue_head *wq_head)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return waitqueue_active(wq_head);
}

#define DEFINE_WAIT_FUNC(name, function)				\
	struct wait_queue_entry name = {				\
		.private = current,					\
		.func = function,					\
		.entry = LIST_HEAD_INIT((name).entry),			\
	}
#define DEFINE_WAIT(name)	DEFINE_WAIT_FUNC(name, NULL)
#define init_wait(w)		do { INIT_LIST_HEAD(&(w)->entry); (w)->flags = 0; } while (0)

#define __hb_wait_event(wq, cond) ({					\
	if (!(cond))							\
		hostbench_die(__FILE__, __LINE__, "wait_event: would sleep"); \
	0; })
#define wait_event(wq, cond)				((void)__hb_wait_event(wq, cond))
#define wait_event_interruptible(wq, cond)		__hb_wait_event(wq, cond)
#define wait_event_killable(wq, cond)			__hb_wait_event(wq, cond)
#define wait_event_timeout(wq, cond, t)			(__hb_wait_event(wq, cond), 1L)
#define wait_event_interruptible_timeout(wq, cond, t)	(__hb_wait_event(wq, cond), 1L)
#endif
