/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The shared rings' own structures, for ring.c (the protocol) and
 * ringmem.c (a ring's memory): the regions' layout, a ring's kernel-side
 * state (struct kwq_ring; its ->lock guards what is not constant) and a
 * record as the drain applies it. dev.c uses ring.h only.
 */
#ifndef _KWQ_RING_INTERNAL_H
#define _KWQ_RING_INTERNAL_H

#include <linux/build_bug.h>
#include <linux/kwq.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <uapi/linux/kwq.h>

struct kwq;
struct kwq_budget;
struct mem_cgroup;
struct page;

/* The regions' layout (struct kwq_ring_setup_args says it to the process) */
#define KWQ_RU_SQ_TAIL		0
#define KWQ_RU_CQ_HEAD		64
#define KWQ_RU_SQES		128
#define KWQ_RK_SQ_HEAD		0
#define KWQ_RK_CQ_TAIL		64
#define KWQ_RK_FLAGS		68
#define KWQ_RK_CQES		128

/* Records parsed and applied per chunk: the drain's unit of work. */
#define KWQ_RING_CHUNK		32
/* Keys of a chunk, copied out of the ring: room for one of any length. */
#define KWQ_RING_ARENA		4096
static_assert(KWQ_RING_ARENA >=
	      KWQ_SQE_INLINE + (KWQ_SQE_SLOTS_MAX - 1) * KWQ_SQE_SIZE);
/* struct kwq_ring.done_recs indexes a chunk */
static_assert(KWQ_RING_CHUNK - 1 <= U8_MAX);
/* Keys a get takes per core call (its items are on the stack). */
#define KWQ_RING_GET_ROUND	16

enum kwq_slot_state { KWQ_SLOT_FREE, KWQ_SLOT_RESERVED, KWQ_SLOT_LEASED };

/* A record copied out of the ring and checked: what the drain applies. */
struct kwq_ring_rec {
	u32 index;		/* ring position of its first slot */
	s32 res;		/* -EINVAL for a bad record; then its result */
	u8 op;
	u8 flags;
	u32 len;
	s32 priority;
	u32 lease_slot;
	u64 arg;
	u64 value;		/* the completion's */
	const u8 *key;		/* in the ring's arena */
};

struct kwq_ring {
	struct list_head node;		/* rs->list, under rs->lock */
	struct mutex lock;		/* everything below not constant */
	/* constant */
	struct kwq *q;
	void *owner;			/* the fd: its leases' owner */
	unsigned long *armed;		/* the fd's, for kwq_rings_arm() */
	struct mem_cgroup *memcg;	/* the setter's; NULL: none */
	struct kwq_budget *budget;	/* a reference; NULL: none */
	size_t charged;
	struct page **pages;		/* user region's, then kernel's */
	unsigned int nr_upages;
	unsigned int nr_kpages;
	u8 *user;			/* vmap()s of the two regions */
	u8 *kern;
	u32 sq_entries;
	u32 cq_entries;
	u32 nleases;
	u32 leases_off;

	u32 sq_head;			/* the kernel's own */
	u32 cq_tail;
	u32 cq_reserved;		/* completions promised to gets */
	bool broken;			/* sq_tail ran past the ring */
	bool closing;			/* the fd is closing: no completions */
	u32 nfree;
	u16 *free;			/* free lease slots, a stack */
	u8 *state;			/* enum kwq_slot_state per slot */
	u16 *slot_len;			/* key bytes each slot holds */
	struct kwq_item *items;		/* the kernel's copy of each lease */
	struct kwq_item *done_items;	/* KWQ_RING_CHUNK: a drain's dones */
	u8 done_recs[KWQ_RING_CHUNK];	/* their records in ->recs */
	struct kwq_ring_rec *recs;	/* KWQ_RING_CHUNK */
	u8 *arena;			/* KWQ_RING_ARENA */
	struct kwq_key keys[KWQ_RING_CHUNK];
	u64 delays[KWQ_RING_CHUNK];
};

/*
 * ring.c: under r->lock, apply up to @max published records (see
 * there); ringmem.c's release drains what the closing fd published.
 */
int kwq_ring_drain(struct kwq_ring *r, u32 max, bool *full);

#endif /* _KWQ_RING_INTERNAL_H */
