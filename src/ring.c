// SPDX-License-Identifier: GPL-2.0
/*
 * Shared rings: per fd, a submission ring the process writes, and
 * completions and lease slots the kernel writes into a region mapped
 * read-only; per queue, a status page. Documentation/rings.rst has the
 * design, the memory-ordering argument and the threat model.
 *
 * Memory shared with userspace is hostile: the process may write its
 * region at any time, from any thread. So the kernel keeps its own
 * sq_head (the shared one is only a copy it publishes), reads sq_tail
 * once per drain (acquire) and bounds it, copies each slot once into
 * kernel memory before looking at it, and never writes the user region.
 *
 * Locking: struct kwq_rings.lock (the queue's list of rings) before a
 * ring's ->lock, before the queue's spinlock (taken by the core calls).
 * A ring's ->lock guards its kernel-side state: ->sq_head, ->cq_tail, the
 * lease slots' records. No sleep waiting for a key happens under either:
 * a get reserves lease slots and completions under ->lock, drops it,
 * takes keys, then fills the reservation under ->lock again.
 *
 * This file owns the protocol: completions, the parse and the drain of
 * the submission ring, the queue's rings and status page, and gets into
 * lease slots. A ring's memory (setup, mapping, release) is ringmem.c's;
 * the structures both share are in ring_internal.h.
 *
 * Lifetime: a ring lives as long as its fd; kwq_ring_release() applies
 * what it published, unlists it and frees it. Its pages are mapped with
 * vm_insert_pages() (each mapping holds a page reference, so a mapping
 * outliving the ring keeps only memory) and the mapping's file is an
 * anonymous one, so that a mapping never keeps the fd, and with it the
 * fd's leases, alive.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/kwq.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/nospec.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <uapi/linux/kwq.h>

#include "budget.h"
#include "compat.h"
#include "kwq_internal.h"
#include "ring.h"
#include "ring_internal.h"

static u32 *kwq_ring_u32(u8 *region, u32 off)
{
	return (u32 *)(region + off);
}

static struct kwq_cqe *kwq_ring_cqe(struct kwq_ring *r, u32 pos)
{
	u32 i = array_index_nospec(pos & (r->cq_entries - 1), r->cq_entries);

	return (struct kwq_cqe *)(r->kern + KWQ_RK_CQES) + i;
}

static const u8 *kwq_ring_sqe(struct kwq_ring *r, u32 pos)
{
	u32 i = array_index_nospec(pos & (r->sq_entries - 1), r->sq_entries);

	return r->user + KWQ_RU_SQES + (size_t)i * KWQ_SQE_SIZE;
}

static struct kwq_lease_slot *kwq_ring_slot(struct kwq_ring *r, u32 slot)
{
	return (struct kwq_lease_slot *)(r->kern + r->leases_off +
					 (size_t)slot * KWQ_LEASE_SLOT_SIZE);
}

/* ------------------------------------------------------------------ */
/* Completions                                                         */

/*
 * Completions the process has room for, less those promised to gets. Its
 * cq_head is read once (acquire: it read the completions before it
 * stored it); one that makes no sense leaves no room.
 */
static u32 kwq_ring_cq_room(struct kwq_ring *r)
{
	u32 head, used;

	if (r->closing)
		return KWQ_RING_CHUNK;
	/* Pairs with the process's release store of cq_head. */
	head = smp_load_acquire(kwq_ring_u32(r->user, KWQ_RU_CQ_HEAD));
	used = r->cq_tail - head + r->cq_reserved;
	return used >= r->cq_entries ? 0 : r->cq_entries - used;
}

static void kwq_ring_post(struct kwq_ring *r, u32 index, u8 op, int res,
			  u64 value)
{
	struct kwq_cqe *cqe;

	if (r->closing)
		return;
	cqe = kwq_ring_cqe(r, r->cq_tail++);
	cqe->index = index;
	cqe->op = op;
	cqe->flags = 0;
	cqe->res = res;
	cqe->value = value;
}

/* The completions written, then the tail that shows them (release). */
static void kwq_ring_publish(struct kwq_ring *r)
{
	/* Pairs with the process's acquire load of cq_tail. */
	smp_store_release(kwq_ring_u32(r->kern, KWQ_RK_CQ_TAIL), r->cq_tail);
	/* The slots before sq_head were copied out: the process may reuse them. */
	smp_store_release(kwq_ring_u32(r->kern, KWQ_RK_SQ_HEAD), r->sq_head);
}

/* ------------------------------------------------------------------ */
/* Parsing: copy once, then check the copy                             */

/*
 * Whether the @len bytes at @p are zero: a record's padding, under 64
 * bytes, without memchr_inv()'s setup for long runs.
 */
static __always_inline bool kwq_ring_zero(const u8 *p, u32 len)
{
	u64 acc = 0, w;

	for (; len >= sizeof(w); p += sizeof(w), len -= sizeof(w)) {
		memcpy(&w, p, sizeof(w));
		acc |= w;
	}
	for (; len; p++, len--)
		acc |= *p;
	return !acc;
}

/* Whether the copied first slot @s is a sound record of its op. */
static bool kwq_sqe_ok(const struct kwq_sqe *s)
{
	const u8 add_flags = KWQ_SQE_F_AFTER | KWQ_SQE_F_RATE_LIMITED |
			     KWQ_SQE_F_REPLACE | KWQ_SQE_F_LATER;
	u8 flags = s->flags & ~KWQ_SQE_F_CQE;

	switch (s->op) {
	case KWQ_SQE_NOP:
	case KWQ_SQE_DONE_LEASE:
		return !flags && !s->len && s->nslots == 1 && !s->priority &&
		       (s->op == KWQ_SQE_NOP ? !s->lease_slot && !s->arg :
			!!s->arg) &&
		       kwq_ring_zero(s->key, sizeof(s->key));
	case KWQ_SQE_ADD:
		if (flags & ~add_flags ||
		    (flags & KWQ_SQE_F_AFTER && flags & KWQ_SQE_F_RATE_LIMITED) ||
		    (flags & KWQ_SQE_F_AFTER ? !s->arg || s->arg > S64_MAX :
		     !!s->arg))
			return false;
		break;
	case KWQ_SQE_DONE:
	case KWQ_SQE_FORGET:
	case KWQ_SQE_REMOVE:
		if (flags || s->priority || s->arg)
			return false;
		break;
	default:
		return false;
	}
	return !s->lease_slot && s->len && s->len <= KWQ_KEY_LEN_MAX &&
	       s->nslots == KWQ_SQE_SLOTS(s->len);
}

/*
 * Copy the record at ->sq_head (its first slot @s already copied) into
 * @rec, its key into the arena at *@used: the inline bytes, then each
 * further slot whole, once. Its padding must be zero. Returns whether
 * the record is sound.
 */
static bool kwq_ring_copy_key(struct kwq_ring *r, const struct kwq_sqe *s,
			      struct kwq_ring_rec *rec, u32 *used)
{
	u8 *key = r->arena + *used;
	u32 i, copied = KWQ_SQE_INLINE;

	memcpy(key, s->key, KWQ_SQE_INLINE);
	for (i = 1; i < s->nslots; i++) {
		memcpy(key + copied, kwq_ring_sqe(r, r->sq_head + i),
		       KWQ_SQE_SIZE);
		copied += KWQ_SQE_SIZE;
	}
	*used += copied;
	rec->key = key;
	return kwq_ring_zero(key + s->len, copied - s->len);
}

/*
 * Copy out and check up to @max whole records from ->sq_head (up to
 * *@avail published slots), moving ->sq_head past them. A bad record is
 * consumed (its nslots if those are published and in range, else one)
 * and gets -EINVAL. Stops before a record not wholly published yet.
 * Returns how many records are in ->recs.
 */
static u32 kwq_ring_parse(struct kwq_ring *r, u32 *avail, u32 max)
{
	struct kwq_sqe s;
	u32 n = 0, used = 0, take;
	struct kwq_ring_rec *rec;
	bool ok;

	while (n < max && *avail) {
		/* The one read of the first slot. */
		memcpy(&s, kwq_ring_sqe(r, r->sq_head), sizeof(s));
		rec = &r->recs[n];
		ok = kwq_sqe_ok(&s);
		take = s.nslots;
		if (ok && take > *avail)
			break;		/* not all published yet */
		if (ok && s.len) {
			if (used + KWQ_SQE_INLINE +
			    (take - 1) * KWQ_SQE_SIZE > KWQ_RING_ARENA)
				break;	/* the next chunk's */
			ok = kwq_ring_copy_key(r, &s, rec, &used);
		}
		if (!ok && (!take || take > *avail || take > KWQ_SQE_SLOTS_MAX))
			take = 1;
		rec->index = r->sq_head;
		rec->res = ok ? 0 : -EINVAL;
		/*
		 * An op kwq does not know completes as a NOP: echoed, 0xff
		 * would read as a KWQ_CQE_LEASE completion.
		 */
		rec->op = s.op <= KWQ_SQE_REMOVE ? s.op : KWQ_SQE_NOP;
		rec->flags = s.flags;
		rec->len = s.len;
		rec->priority = s.priority;
		rec->lease_slot = s.lease_slot;
		rec->arg = s.arg;
		rec->value = 0;
		/* Read without r->lock by kwq_rings_pull()'s peek. */
		WRITE_ONCE(r->sq_head, r->sq_head + take);
		*avail -= take;
		n++;
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* Applying records                                                    */

/* Whether ADD records @a and @b may go to the core in one batch. */
static bool kwq_ring_same_add(const struct kwq_ring_rec *a,
			      const struct kwq_ring_rec *b)
{
	return b->op == KWQ_SQE_ADD && !b->res &&
	       (a->flags & ~KWQ_SQE_F_CQE) == (b->flags & ~KWQ_SQE_F_CQE) &&
	       a->arg == b->arg;
}

/* The @n sound ADD records at @recs, alike (kwq_ring_same_add()). */
static void kwq_ring_adds(struct kwq_ring *r, struct kwq_ring_rec *recs,
			  u32 n)
{
	struct kwq_batch_opts o = {
		.gfp = GFP_KERNEL | __GFP_RETRY_MAYFAIL,
	};
	unsigned int done;
	u32 i, m, k = 0;
	bool one = false;
	int ret;

	if (recs->flags & KWQ_SQE_F_AFTER)
		o.after_ns = recs->arg;
	if (recs->flags & KWQ_SQE_F_RATE_LIMITED)
		o.flags |= KWQ_BATCH_RATE_LIMITED;
	if (recs->flags & KWQ_SQE_F_REPLACE)
		o.flags |= KWQ_AFTER_REPLACE;
	if (recs->flags & KWQ_SQE_F_LATER)
		o.flags |= KWQ_AFTER_LATER;
	for (i = 0; i < n; i++) {
		r->keys[i].key = recs[i].key;
		r->keys[i].len = recs[i].len;
		r->keys[i].priority = recs[i].priority;
	}
	/*
	 * The core stops at a failing key: note it, go on after it. After
	 * a refusal, key by key until one takes effect: a batch allocates
	 * nodes for all its keys first, and when the queue is full (ENOSPC)
	 * every one of them is refused, so each retry of the rest as a
	 * batch would allocate and free them all again.
	 */
	while (k < n) {
		o.delays = o.flags & KWQ_BATCH_RATE_LIMITED ? r->delays + k :
			   NULL;
		m = one ? 1 : n - k;
		if (m == 1 && !o.delays) {
			ret = kwq_add_key(r->q, &r->keys[k], &o);
			done = !ret;
		} else {
			ret = kwq_add_batch(r->q, &r->keys[k], m, &o, &done);
		}
		for (i = k; i < k + done; i++)
			if (o.delays)
				recs[i].value = r->delays[i];
		k += done;
		one = ret != 0;
		if (ret && k < n)
			recs[k++].res = ret;
		else if (!done)
			break;	/* no progress, no error: not the core's way */
	}
}

/* The lease of slot @slot ends: free again, also in the shared slot. */
static void kwq_ring_slot_free(struct kwq_ring *r, u32 slot)
{
	r->state[slot] = KWQ_SLOT_FREE;
	WRITE_ONCE(kwq_ring_slot(r, slot)->gen, 0);
	r->free[r->nfree++] = slot;
}

/*
 * A run of @n sound KWQ_SQE_DONE_LEASE records at @recs. Each generation
 * is checked against the kernel's copy of its slot, never the shared
 * one, and the slot is free again either way (so a second record of the
 * same slot is stale); then the leases still live end in one critical
 * section, kwq_done_batch() checking each is still its node's.
 */
static void kwq_ring_done_leases(struct kwq_ring *r,
				 struct kwq_ring_rec *recs, u32 n)
{
	unsigned int done;
	u32 i, slot, nr = 0, k = 0;
	int ret;

	for (i = 0; i < n; i++) {
		slot = recs[i].lease_slot;
		if (slot >= r->nleases) {
			recs[i].res = -EINVAL;
			continue;
		}
		slot = array_index_nospec(slot, r->nleases);
		if (r->state[slot] != KWQ_SLOT_LEASED ||
		    r->items[slot].lease != recs[i].arg) {
			recs[i].res = -ESTALE;
			continue;
		}
		r->done_items[nr] = r->items[slot];
		r->done_recs[nr++] = i;
		kwq_ring_slot_free(r, slot);
	}
	/* The core stops at a lease that ended: note it, go on after it. */
	while (k < nr) {
		ret = kwq_done_batch(r->q, r->done_items + k, nr - k, &done);
		k += done;
		if (!ret || k >= nr)
			break;
		recs[r->done_recs[k++]].res = ret;
	}
}

static int kwq_ring_apply_one(struct kwq_ring *r, struct kwq_ring_rec *rec)
{
	struct kwq_key key = { .key = rec->key, .len = rec->len };
	unsigned int done;

	switch (rec->op) {
	case KWQ_SQE_DONE:
		/* Leased to this fd, or detached, as KWQ_IOC_DONE. */
		return kwq_done_keys(r->q, &key, 1, r->owner, &done);
	case KWQ_SQE_FORGET:
		return kwq_forget(r->q, rec->key, rec->len);
	case KWQ_SQE_REMOVE:
		return kwq_remove(r->q, rec->key, rec->len);
	}
	return 0;
}

/* Apply the @n parsed records in order, then complete them. */
static void kwq_ring_apply(struct kwq_ring *r, u32 n)
{
	struct kwq_ring_rec *rec;
	u32 i, j;

	for (i = 0; i < n; i = j) {
		rec = &r->recs[i];
		j = i + 1;
		if (rec->res)
			continue;
		if (rec->op == KWQ_SQE_ADD) {
			while (j < n && kwq_ring_same_add(rec, &r->recs[j]))
				j++;
			kwq_ring_adds(r, rec, j - i);
			continue;
		}
		if (rec->op == KWQ_SQE_DONE_LEASE) {
			while (j < n && r->recs[j].op == KWQ_SQE_DONE_LEASE &&
			       !r->recs[j].res)
				j++;
			kwq_ring_done_leases(r, rec, j - i);
			continue;
		}
		rec->res = kwq_ring_apply_one(r, rec);
	}
	for (i = 0; i < n; i++) {
		rec = &r->recs[i];
		if (rec->res || rec->flags & KWQ_SQE_F_CQE)
			kwq_ring_post(r, rec->index, rec->op, rec->res,
				      rec->value);
	}
}

/* sq_tail ran past the ring: nothing more of it is read. */
static void kwq_ring_break(struct kwq_ring *r)
{
	r->broken = true;
	WRITE_ONCE(*kwq_ring_u32(r->kern, KWQ_RK_FLAGS), KWQ_RING_F_BROKEN);
	if (kwq_ring_cq_room(r))
		kwq_ring_post(r, r->sq_head, KWQ_SQE_NOP, -EINVAL, 0);
	kwq_ring_publish(r);
}

/*
 * Under r->lock: apply up to @max published records, a chunk at a time
 * with a scheduling point between chunks. Returns the records consumed,
 * or -EINVAL for a broken ring; *@full if it stopped with records left
 * because the completion ring had no room.
 */
int kwq_ring_drain(struct kwq_ring *r, u32 max, bool *full)
{
	struct mem_cgroup *old_memcg;
	u32 tail, avail, room, n, consumed = 0;

	lockdep_assert_held(&r->lock);
	*full = false;
	if (r->broken)
		return -EINVAL;
	/* The one read of the process's tail; its records before it. */
	tail = smp_load_acquire(kwq_ring_u32(r->user, KWQ_RU_SQ_TAIL));
	avail = tail - r->sq_head;
	if (avail > r->sq_entries) {
		kwq_ring_break(r);
		return -EINVAL;
	}
	/* New keys are charged to the ring's owner, whoever drains it. */
	old_memcg = set_active_memcg(r->memcg);
	while (avail && consumed < max) {
		room = kwq_ring_cq_room(r);
		if (!room) {
			*full = true;
			break;
		}
		n = kwq_ring_parse(r, &avail,
				   min3(room, max - consumed, (u32)KWQ_RING_CHUNK));
		if (!n)
			break;
		kwq_ring_apply(r, n);
		kwq_ring_publish(r);
		consumed += n;
		if (avail && consumed < max)
			cond_resched();
	}
	set_active_memcg(old_memcg);
	return consumed;
}

/* ------------------------------------------------------------------ */
/* The queue's rings and its status page                               */

int kwq_rings_init(struct kwq_rings *rs, bool status)
{
	struct page *page = NULL;

	if (status) {
		page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!page)
			return -ENOMEM;
	}
	mutex_init(&rs->lock);
	INIT_LIST_HEAD(&rs->list);
	rs->status_page = page;
	rs->status = page ? page_address(page) : NULL;
	return 0;
}

void kwq_rings_free(struct kwq_rings *rs, struct kwq *q)
{
	WARN_ON_ONCE(!list_empty(&rs->list));
	if (rs->status_page) {
		/* The core writes the ready count there under its lock. */
		if (rs->mirrored)
			kwq_set_ready_mirror(q, NULL);
		__free_page(rs->status_page);
	}
	mutex_destroy(&rs->lock);
}

void kwq_rings_set_status(struct kwq_rings *rs, u32 flags)
{
	mutex_lock(&rs->lock);
	if (rs->status)
		WRITE_ONCE(rs->status->flags, rs->status->flags | flags);
	mutex_unlock(&rs->lock);
}

/* The waiters count; NULL for a queue without a status page. */
static atomic_t *kwq_rings_waiters(struct kwq_rings *rs)
{
	return rs->status ? (atomic_t *)&rs->status->waiters : NULL;
}

/*
 * Drain every ring of the queue that published records, and @own (NULL:
 * none) whatever it published: its drain's result (the records consumed
 * or -EINVAL) is returned and *@own_full set as kwq_ring_drain() sets
 * it. So an enter that submits and gets drains its own ring in the same
 * walk as everyone else's.
 */
static int kwq_rings_drain_all(struct kwq_rings *rs, struct kwq_ring *own,
			       bool *own_full)
{
	struct kwq_ring *r;
	int ret = 0, n;
	bool full;

	mutex_lock(&rs->lock);
	/* Each ring at most one ring's worth: bounded by what it holds. */
	list_for_each_entry(r, &rs->list, node) {
		/* Nothing published since its last drain: not even its lock. */
		if (r != own &&
		    READ_ONCE(*kwq_ring_u32(r->user, KWQ_RU_SQ_TAIL)) ==
		    READ_ONCE(r->sq_head))
			continue;
		mutex_lock(&r->lock);
		n = kwq_ring_drain(r, r->sq_entries, &full);
		mutex_unlock(&r->lock);
		if (r == own) {
			ret = n;
			*own_full = full;
		}
	}
	mutex_unlock(&rs->lock);
	return ret;
}

void kwq_rings_pull(struct kwq_rings *rs)
{
	if (READ_ONCE(rs->nr))
		kwq_rings_drain_all(rs, NULL, NULL);
}

/*
 * Getter side of the need-wakeup protocol (Documentation/rings.rst):
 * the waiter counted, a full barrier, then every ring's tail read. A
 * producer stores its tail, a full barrier, then reads waiters: one of
 * the two sees the other's store.
 */
bool kwq_rings_wait_begin(struct kwq_rings *rs)
{
	atomic_t *w = kwq_rings_waiters(rs);

	if (!w)
		return false;
	atomic_inc(w);
	/* B in rings.rst: waiters stored before any ring's tail is read. */
	smp_mb__after_atomic();
	kwq_rings_pull(rs);
	return true;
}

void kwq_rings_wait_end(struct kwq_rings *rs, bool counted)
{
	if (counted)
		atomic_dec(kwq_rings_waiters(rs));
}

void kwq_rings_arm(struct kwq_rings *rs, unsigned long *armed)
{
	atomic_t *w = kwq_rings_waiters(rs);

	if (!w)
		return;
	if (!test_bit(0, armed) && !test_and_set_bit(0, armed))
		atomic_inc(w);
	/* As in kwq_rings_wait_begin(): counted before the tails are read. */
	smp_mb__after_atomic();
	kwq_rings_pull(rs);
}

void kwq_rings_disarm(struct kwq_rings *rs, unsigned long *armed)
{
	atomic_t *w = kwq_rings_waiters(rs);

	if (w && test_bit(0, armed) && test_and_clear_bit(0, armed))
		atomic_dec(w);
}

/* ------------------------------------------------------------------ */
/* Gets into lease slots                                               */

/* A get's reservation: slots (and completions) it may fill. */
struct kwq_ring_take {
	struct kwq_ring *r;
	u32 nr;
	u32 next;
	u16 slots[KWQ_RING_GET_ROUND];
};

/*
 * struct kwq_get_ctl's copy hook, under the queue lock: the key into the
 * next reserved slot. The bytes a longer key left there are cleared.
 */
static void kwq_ring_lease_copy(void *arg, const struct kwq_item *item)
{
	struct kwq_ring_take *t = arg;
	struct kwq_ring *r = t->r;
	u32 slot = t->slots[t->next++];
	struct kwq_lease_slot *ls = kwq_ring_slot(r, slot);

	memcpy(ls->key, item->key, item->len);
	if (r->slot_len[slot] > item->len)
		memset(ls->key + item->len, 0, r->slot_len[slot] - item->len);
	r->slot_len[slot] = item->len;
	ls->len = item->len;
	ls->priority = item->priority;
	WRITE_ONCE(ls->gen, item->lease);
}

/* Under r->lock: reserve up to @want slots and completions. */
static u32 kwq_ring_reserve(struct kwq_ring *r, struct kwq_ring_take *t,
			    u32 want)
{
	u32 i, n = min3(want, r->nfree, kwq_ring_cq_room(r));

	for (i = 0; i < n; i++) {
		t->slots[i] = r->free[--r->nfree];
		r->state[t->slots[i]] = KWQ_SLOT_RESERVED;
	}
	r->cq_reserved += n;
	t->nr = n;
	t->next = 0;
	return n;
}

/* Under r->lock: the @got keys taken into @t's slots, the rest freed. */
static void kwq_ring_fill(struct kwq_ring *r, struct kwq_ring_take *t,
			  const struct kwq_item *items, u32 got)
{
	u32 i, slot;

	r->cq_reserved -= t->nr;
	for (i = 0; i < t->nr; i++) {
		slot = t->slots[i];
		if (i >= got) {
			r->state[slot] = KWQ_SLOT_FREE;
			r->free[r->nfree++] = slot;
			continue;
		}
		r->items[slot] = items[i];
		r->state[slot] = KWQ_SLOT_LEASED;
		kwq_ring_post(r, slot, KWQ_CQE_LEASE, 0, items[i].lease);
	}
	kwq_ring_publish(r);
}

/*
 * One round of a get: reserve up to @max slots (and completions), take
 * keys into them (waiting up to @left for @min_nr, or without waiting if
 * @left is 0), fill them. Returns the keys taken or the core's error;
 * -EBUSY (no free completion) or -ENOBUFS (no free slot) if nothing
 * could be reserved. t->nr is what was reserved.
 */
static int kwq_ring_round(struct kwq_ring *r, struct kwq_ring_take *t,
			  const struct kwq_get_ctl *ctl, unsigned int flags,
			  s64 left, u32 min_nr, u32 max)
{
	struct kwq_item items[KWQ_RING_GET_ROUND] __uninitialized;
	u32 n;
	int ret;

	mutex_lock(&r->lock);
	n = kwq_ring_reserve(r, t, min_t(u32, max, KWQ_RING_GET_ROUND));
	if (!n)
		ret = r->nfree ? -EBUSY : -ENOBUFS;
	mutex_unlock(&r->lock);
	if (!n)
		return ret;
	ret = kwq_get_batch_ctl(r->q, r->owner,
				left ? flags : flags | KWQ_GET_NONBLOCK, left,
				items, min(min_nr, n), n, ctl);
	mutex_lock(&r->lock);
	kwq_ring_fill(r, t, items, max(ret, 0));
	mutex_unlock(&r->lock);
	return ret;
}

/*
 * The GET of an enter, the rings already pulled. Rounds take what is
 * ready without waiting; only once a round comes back short of what the
 * call needs is the getter counted in the waiters (then the rings are
 * pulled again) and may it sleep, so a worker that finds keys pays no
 * atomic or barrier on the status page. A call that may not wait and
 * finds nothing arms the file the same way, then tries once more.
 */
static int kwq_ring_get(struct kwq_rings *rs, struct kwq_ring *r,
			struct kwq_ring_enter_args *a, bool nonblock,
			const bool *abort)
{
	struct kwq_ring_take t = { .r = r };
	/* The call's rounds: none takes a key after the first is revoked. */
	struct kwq_get_window win = {};
	const struct kwq_get_ctl ctl = {
		.abort = abort, .copy = kwq_ring_lease_copy, .arg = &t,
		.processing_timeout_ns = a->processing_timeout_ns,
		.window = &win,
	};
	s64 timeout = a->timeout_ns < 0 ? KWQ_WAIT_FOREVER : a->timeout_ns;
	unsigned int flags = nonblock ? KWQ_GET_NONBLOCK : 0;
	u32 min_nr, want = max(a->get_min, 1U);
	bool waits = !nonblock && timeout, waiting = false, counted = false;
	bool armed = false;
	ktime_t start = timeout > 0 ? ktime_get() : 0;
	s64 left = 0;
	int ret = 0;

	while (a->leased < a->get_max) {
		left = 0;
		if (waiting && a->leased < want) {
			left = timeout;
			if (timeout > 0) {
				left -= ktime_to_ns(ktime_sub(ktime_get(),
							      start));
				if (left <= 0) {
					ret = -ETIMEDOUT;
					break;
				}
			}
		}
		min_nr = a->get_min > a->leased ? a->get_min - a->leased : 0;
		ret = kwq_ring_round(r, &t, &ctl, flags, left, min_nr,
				     a->get_max - a->leased);
		if (ret > 0)
			a->leased += ret;
		if (ret > 0 && (u32)ret == t.nr) {
			if (fatal_signal_pending(current))
				break;
			cond_resched();
			continue;
		}
		/* Short: nothing more was ready, or an error. */
		if (ret != -EAGAIN && ret < 0)
			break;
		if (waits && !waiting && a->leased < want) {
			/* Counted, the rings pulled again, then may sleep. */
			counted = kwq_rings_wait_begin(rs);
			waiting = true;
			continue;
		}
		if (!waits && !armed && !a->leased) {
			/* Producers ring from now on; what they published? */
			kwq_rings_arm(rs, r->armed);
			armed = true;
			continue;
		}
		break;
	}
	kwq_rings_wait_end(rs, counted);
	if (a->leased) {
		kwq_rings_disarm(rs, r->armed);
		return 0;
	}
	return ret;
}

int kwq_ring_enter(struct kwq_rings *rs, struct kwq_ring *r,
		   struct kwq_ring_enter_args *a, bool nonblock,
		   const bool *abort)
{
	bool full = false;
	int ret = 0;

	a->submitted = 0;
	a->leased = 0;
	if (a->flags & ~(KWQ_ENTER_SUBMIT | KWQ_ENTER_GET) || a->pad)
		return -EINVAL;
	if (a->flags & KWQ_ENTER_GET
	    ? !a->get_max || a->get_max > r->nleases || a->get_min > a->get_max
	    : a->get_max || a->get_min || a->timeout_ns ||
	      a->processing_timeout_ns)
		return -EINVAL;
	if (a->flags & KWQ_ENTER_SUBMIT) {
		/*
		 * This ring, and with a get every ring of the queue (what
		 * the get must see), in one walk.
		 */
		if (a->flags & KWQ_ENTER_GET) {
			ret = kwq_rings_drain_all(rs, r, &full);
		} else {
			mutex_lock(&r->lock);
			ret = kwq_ring_drain(r, r->sq_entries, &full);
			mutex_unlock(&r->lock);
		}
		if (ret < 0)
			return ret;
		a->submitted = ret;
		ret = 0;
	} else if (a->flags & KWQ_ENTER_GET) {
		kwq_rings_pull(rs);
	}
	if (a->flags & KWQ_ENTER_GET)
		ret = kwq_ring_get(rs, r, a, nonblock, abort);
	if (!ret && full && !a->leased)
		ret = -EBUSY;
	return ret;
}
