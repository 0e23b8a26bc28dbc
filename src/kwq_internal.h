/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Declarations shared between kwq's own source files; not an API.
 */
#ifndef _KWQ_INTERNAL_H
#define _KWQ_INTERNAL_H

#define KWQ_VERSION "0.1.0"

int kwq_core_init(void);
void kwq_core_exit(void);
/* queue.c, for dev.c */
struct file;
struct kwq;
struct kwq_item;
struct poll_table_struct;
void kwq_unget(struct kwq *q, struct kwq_item *item);
void kwq_set_owner(struct kwq *q, struct kwq_item **items, unsigned int n,
		   void *owner);
__poll_t kwq_poll(struct kwq *q, struct file *file,
		  struct poll_table_struct *wait);

int kwq_dev_init(void);
void kwq_dev_exit(void);

#endif /* _KWQ_INTERNAL_H */
