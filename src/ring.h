/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared rings (ring.c; a ring's setup, mapping and release: ringmem.c),
 * for dev.c: per fd, a submission ring the process writes, completions
 * and lease slots the kernel writes, and per queue a status page;
 * Documentation/rings.rst.
 */
#ifndef _KWQ_RING_H
#define _KWQ_RING_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>

struct kwq;
struct kwq_budget;
struct kwq_ring;
struct kwq_ring_enter_args;
struct kwq_ring_setup_args;
struct kwq_ring_status;
struct page;
struct vm_area_struct;

/*
 * The rings of one queue, in its struct kwq_uq. Lock order: ->lock, then
 * a ring's lock, then the queue's lock.
 */
struct kwq_rings {
	struct mutex lock;		/* ->list, ->status_page */
	struct list_head list;		/* struct kwq_ring.node */
	unsigned int nr;		/* listed; read without ->lock */
	/* constant: a user queue's status page; NULL: none, no rings */
	struct page *status_page;
	struct kwq_ring_status *status;	/* its kernel address */
	bool mirrored;			/* the core keeps ->status->ready */
};

/* A queue's rings; with a status page (and so rings) if @status. */
int kwq_rings_init(struct kwq_rings *rs, bool status);
/* Once no ring is left: the status page goes (@q no longer mirrors). */
void kwq_rings_free(struct kwq_rings *rs, struct kwq *q);
/* Set KWQ_STATUS_* @flags in the status page, if there is one. */
void kwq_rings_set_status(struct kwq_rings *rs, u32 flags);

/*
 * Apply what every ring of the queue published, before a call answers
 * about the queue's keys: an add published before the call began is
 * seen by it. Process context; a no-op while the queue has no ring.
 */
void kwq_rings_pull(struct kwq_rings *rs);
/*
 * A getter about to wait (begin ... end around the wait): counted in the
 * status page's waiters, so that producers ring, then the rings pulled.
 * Returns whether it was counted: pass that to kwq_rings_wait_end().
 */
bool kwq_rings_wait_begin(struct kwq_rings *rs);
void kwq_rings_wait_end(struct kwq_rings *rs, bool counted);
/*
 * A file whose getter may wait outside kwq (poll, epoll, a nonblocking
 * get): counted in the waiters once (bit 0 of *@armed, the file's), then
 * the rings pulled, until the file takes a key or closes (disarm): while
 * counted, producers ring.
 */
void kwq_rings_arm(struct kwq_rings *rs, unsigned long *armed);
void kwq_rings_disarm(struct kwq_rings *rs, unsigned long *armed);

int kwq_ring_setup(struct kwq_rings *rs, struct kwq *q, void *owner,
		   unsigned long *armed, struct kwq_budget *budget,
		   struct kwq_ring_setup_args *a, struct kwq_ring **ringp);
int kwq_ring_mmap(struct kwq_rings *rs, struct kwq_ring *r,
		  struct vm_area_struct *vma);
/*
 * KWQ_IOC_RING_ENTER. @nonblock: O_NONBLOCK; @abort: as struct
 * kwq_get_ctl's.
 */
int kwq_ring_enter(struct kwq_rings *rs, struct kwq_ring *r,
		   struct kwq_ring_enter_args *a, bool nonblock,
		   const bool *abort);
/*
 * The fd is closing: apply everything its ring published, then take the
 * ring off the queue and free it (mappings keep their pages until
 * munmap()). Its leases end with the fd's (kwq_release_owner()).
 */
void kwq_ring_release(struct kwq_rings *rs, struct kwq_ring *r);

#endif /* _KWQ_RING_H */
