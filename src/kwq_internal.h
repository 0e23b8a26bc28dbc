/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Declarations shared between kwq's own source files; not an API.
 */
#ifndef _KWQ_INTERNAL_H
#define _KWQ_INTERNAL_H

#define KWQ_VERSION "0.1.0"

#include <linux/atomic.h>
#include <linux/refcount.h>
#include <linux/types.h>

int kwq_core_init(void);
void kwq_core_exit(void);
/* queue.c, for dev.c */

/**
 * struct kwq_budget - a byte budget that queues charge their memory to
 * @used: bytes charged: queue structs, hash tables and key nodes
 * @limit: most bytes; an allocation past it fails with -EDQUOT
 * @ref: one per queue charging it, plus whatever its creator holds
 * @release: called when the last reference is dropped (process context)
 *
 * dev.c keeps one per user; kernel callers' queues have none.
 */
struct kwq_budget {
	atomic_long_t used;
	unsigned long limit;
	refcount_t ref;
	void (*release)(struct kwq_budget *budget);
};

struct kwq_config;
struct kwq *kwq_create_budget(const char *name, const struct kwq_config *cfg,
			      struct kwq_budget *budget);
void kwq_budget_put(struct kwq_budget *budget);

struct kwq;
/*
 * kwq_put() that frees the queue before it returns if it dropped the last
 * reference (kwq_put() leaves that to a work item), so the memory and the
 * budget's bytes are back when it returns. Process context, may sleep.
 */
void kwq_put_sync(struct kwq *q);

struct file;
struct kwq_item;
struct poll_table_struct;
void kwq_unget(struct kwq *q, const struct kwq_item *item);
void kwq_set_owner(struct kwq *q, const struct kwq_item *items,
		   unsigned int nr, void *owner);
__poll_t kwq_poll(struct kwq *q, struct file *file,
		  struct poll_table_struct *wait);

int kwq_dev_init(void);
void kwq_dev_exit(void);

#endif /* _KWQ_INTERNAL_H */
