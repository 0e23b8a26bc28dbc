// SPDX-License-Identifier: GPL-2.0
/*
 * The delay index: where waiting keys (add_after, rate-limited adds) stay
 * until their deadline, and the one clock timer that says when to look.
 *
 * Owns, in struct kwq, under q->lock: ->delayed, ->seq, the wheel fields
 * (->wheel .. ->wheel_work) and ->timer_deadline; and, of a WAITING
 * node, ->delay_rb or ->wheel, ->wslot and ->seq. It arms and cancels the
 * queue's clock (struct kwq_clock, clock.c for the real one) but never
 * makes a key ready: queue.c's expiry takes the keys that are due
 * (kwq_wait_any(), kwq_wheel_floor()) and moves them on.
 *
 * Waiting keys are in the delay tree, ordered by (deadline, seq), or in
 * the delay wheel: KWQ_WHEEL_LEVELS levels of KWQ_WHEEL_SLOTS slots, a
 * level-l slot spanning 2^(KWQ_WHEEL_SHIFT + l * KWQ_WHEEL_LVL_SHIFT) ns,
 * as in the kernel's timer wheel (kernel/time/timer.c), but exact: a slot
 * is an unordered bucket of keys whose deadlines lie in its span, and it
 * is cascaded (each key placed again: in a finer slot or the tree) before
 * its span begins. Only the tree decides the order keys become ready in.
 *
 * Wheel times are in level-0 slots (ns >> KWQ_WHEEL_SHIFT). A level-l
 * slot holds the keys of one bucket b (time >> (l * KWQ_WHEEL_LVL_SHIFT))
 * and starts at b << (l * KWQ_WHEEL_LVL_SHIFT); level l takes the 64
 * buckets from the first that starts at or after ->wheel_clk, so a slot
 * never mixes two buckets. Invariants:
 *  - no non-empty slot starts before ->wheel_clk, and no level-0 slot at
 *    it (a key there goes to the tree: so does every key of a slot that
 *    cascades at the clock, to a finer slot or the tree, never back);
 *  - ->wheel_next is the start of the earliest non-empty slot (U64_MAX
 *    if none), ->wheel_next_slot that slot;
 *  - a tree key is made ready only if its deadline is before
 *    ->wheel_next: no wheel key (never due before its slot starts) can
 *    come first. A tree key due exactly at a slot's start waits for the
 *    cascade, after which ->seq decides;
 *  - a slot cascades once the clock is KWQ_WHEEL_LEAD level-0 slots
 *    before its start, and one level-0 slot more per 2^KWQ_WHEEL_NR_SHIFT
 *    keys it holds (about 256 ns a key: cascading is done by its start
 *    even for a million keys); ->wheel_due is the earliest such time of
 *    the first non-empty slot of each level (a later slot of a level is
 *    seen when it becomes the first), lowered as keys are added. The
 *    timer is armed at the earlier of ->wheel_due and the tree's first
 *    deadline, and slots cascade in order of their start: those before
 *    a slot that is due go early.
 * A key goes to the wheel only if the tree holds more than
 * KWQ_WHEEL_MIN_TREE keys and its deadline is past the next
 * KWQ_WHEEL_LEAD + 1 level-0 slots: a queue with few waiting keys never
 * allocates the wheel, and its timer is armed at the first deadline.
 */

#include <linux/memcontrol.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/rbtree.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "delay.h"

#define KWQ_WHEEL_LEAD		1
#define KWQ_WHEEL_NR_SHIFT	12
/* Its slots, 8 KiB: what kvcalloc() takes for them, and is charged. */
#define KWQ_WHEEL_BYTES		kwq_alloc_bytes(KWQ_WHEEL_LEVELS * \
						KWQ_WHEEL_SLOTS * \
						sizeof(struct kwq_wheel_slot))

static bool kwq_delay_less(struct rb_node *a, const struct rb_node *b)
{
	const struct kwq_node *x = rb_entry(a, struct kwq_node, delay_rb);
	const struct kwq_node *y = rb_entry(b, struct kwq_node, delay_rb);

	if (x->deadline != y->deadline)
		return x->deadline < y->deadline;
	return x->seq < y->seq;
}

/* Tree keys due before this may be made ready (no wheel key precedes). */
u64 kwq_wheel_floor(const struct kwq *q)
{
	return q->wheel_nr ? q->wheel_next << KWQ_WHEEL_SHIFT : U64_MAX;
}

/* The first bucket of level @lvl that starts at or after @clk. */
static u64 kwq_wheel_lo(u64 clk, unsigned int lvl)
{
	unsigned int shift = lvl * KWQ_WHEEL_LVL_SHIFT;

	return (clk + (1ULL << shift) - 1) >> shift;
}

/*
 * The slot of level-0 time @t (not before @clk): on the finest level
 * whose 64 buckets reach it. *@start is set to the slot's start.
 */
static unsigned int kwq_wheel_slot(u64 clk, u64 t, u64 *start)
{
	unsigned int lvl = 0, shift = 0;
	u64 b = t;

	while (b - kwq_wheel_lo(clk, lvl) >= KWQ_WHEEL_SLOTS &&
	       lvl < KWQ_WHEEL_LEVELS - 1) {
		lvl++;
		shift += KWQ_WHEEL_LVL_SHIFT;
		b = t >> shift;
	}
	*start = b << shift;
	return lvl * KWQ_WHEEL_SLOTS + (b & (KWQ_WHEEL_SLOTS - 1));
}

/* When a slot starting at @start with @nr keys must start cascading. */
static u64 kwq_wheel_due(u64 start, u32 nr)
{
	return start - min_t(u64, start,
			     KWQ_WHEEL_LEAD + (nr >> KWQ_WHEEL_NR_SHIFT));
}

/* Recompute ->wheel_next, ->wheel_next_slot and ->wheel_due. */
static void kwq_wheel_find_next(struct kwq *q)
{
	u64 next = U64_MAX, due = U64_MAX, b, start;
	unsigned int lvl, slot;

	/* From the top: of two slots starting together, the coarser first. */
	for (lvl = KWQ_WHEEL_LEVELS; lvl-- > 0;) {
		if (!q->wheel_map[lvl])
			continue;
		b = kwq_wheel_lo(q->wheel_clk, lvl);
		b += __ffs64(ror64(q->wheel_map[lvl],
				   b & (KWQ_WHEEL_SLOTS - 1)));
		start = b << (lvl * KWQ_WHEEL_LVL_SHIFT);
		slot = lvl * KWQ_WHEEL_SLOTS + (b & (KWQ_WHEEL_SLOTS - 1));
		due = min(due, kwq_wheel_due(start, q->wheel[slot].nr));
		if (start < next) {
			next = start;
			q->wheel_next_slot = slot;
		}
	}
	q->wheel_next = next;
	q->wheel_due = due;
}

/* Have wheel_work allocate the wheel (not under q->lock: it may sleep). */
static void kwq_wheel_want(struct kwq *q)
{
	if (q->wheel_alloc_queued || q->shutting_down)
		return;
	q->wheel_alloc_queued = true;
	schedule_work(&q->wheel_work);
}

/*
 * Allocate the wheel outside the lock, charged like the hash table: to
 * the queue's budget and its creator's memcg. Optional: without it,
 * waiting keys stay in the tree, and a later add past the tree's size
 * tries again.
 */
static void kwq_wheel_work(struct work_struct *work)
{
	struct kwq *q = container_of(work, struct kwq, wheel_work);
	struct kwq_wheel_slot *wheel = NULL;
	struct mem_cgroup *old_memcg;
	bool charged;

	spin_lock_irq(&q->lock);
	charged = !q->shutting_down && kwq_charge(q, KWQ_WHEEL_BYTES);
	spin_unlock_irq(&q->lock);
	if (charged) {
		old_memcg = set_active_memcg(q->memcg);
		wheel = kvcalloc(KWQ_WHEEL_LEVELS * KWQ_WHEEL_SLOTS,
				 sizeof(*wheel), GFP_KERNEL | q->gfp_account |
				 __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
		set_active_memcg(old_memcg);
	}
	spin_lock_irq(&q->lock);
	if (wheel) {
		q->wheel = wheel;
		q->wheel_clk = kwq_now(q) >> KWQ_WHEEL_SHIFT;
	} else if (charged) {
		kwq_uncharge(q, KWQ_WHEEL_BYTES);
	}
	q->wheel_alloc_queued = false;
	spin_unlock_irq(&q->lock);
}

/* Put waiting @n in a wheel slot if it belongs there; false: the tree's. */
static bool kwq_wheel_add(struct kwq *q, struct kwq_node *n, u64 now)
{
	u64 t = n->deadline >> KWQ_WHEEL_SHIFT, start;
	u64 now_t = now >> KWQ_WHEEL_SHIFT;
	struct kwq_wheel_slot *ws;
	unsigned int slot;

	/* A small tree stays in the cache; @n counts in ->nr_waiting. */
	if (q->nr_waiting - q->wheel_nr <= KWQ_WHEEL_MIN_TREE)
		return false;
	if (unlikely(!q->wheel)) {
		kwq_wheel_want(q);
		return false;
	}
	/* Catch up with the clock, skipping no slot that holds keys. */
	if (q->wheel_clk < now_t)
		q->wheel_clk = min(now_t, q->wheel_next);
	/*
	 * Due before its slot would cascade, or in the level-0 slot at the
	 * clock (which a cascade may have reached early): the tree.
	 */
	if (t <= q->wheel_clk || t <= now_t + KWQ_WHEEL_LEAD)
		return false;
	slot = kwq_wheel_slot(q->wheel_clk, t, &start);
	ws = &q->wheel[slot];
	hlist_add_head(&n->wheel, &ws->keys);
	ws->nr++;
	n->wslot = slot + 1;
	q->wheel_nr++;
	q->wheel_map[slot / KWQ_WHEEL_SLOTS] |=
		BIT_ULL(slot % KWQ_WHEEL_SLOTS);
	if (start < q->wheel_next) {
		q->wheel_next = start;
		q->wheel_next_slot = slot;
	}
	q->wheel_due = min(q->wheel_due, kwq_wheel_due(start, ws->nr));
	return true;
}

/* Take @n out of its wheel slot. */
static void kwq_wheel_unlink(struct kwq *q, struct kwq_node *n)
{
	unsigned int slot = n->wslot - 1;

	hlist_del(&n->wheel);
	q->wheel[slot].nr--;
	q->wheel_nr--;
	if (hlist_empty(&q->wheel[slot].keys)) {
		q->wheel_map[slot / KWQ_WHEEL_SLOTS] &=
			~BIT_ULL(slot % KWQ_WHEEL_SLOTS);
		if (slot == q->wheel_next_slot)
			kwq_wheel_find_next(q);
	}
}

/* Link waiting @n into the wheel or the tree. */
static void kwq_wait_place(struct kwq *q, struct kwq_node *n, u64 now)
{
	if (kwq_wheel_add(q, n, now))
		return;
	n->wslot = 0;
	rb_add_cached(&n->delay_rb, &q->delayed, kwq_delay_less);
}

void kwq_wait_insert(struct kwq *q, struct kwq_node *n, u64 deadline, u64 now)
{
	n->deadline = deadline;
	n->seq = q->seq++;
	WRITE_ONCE(n->state, KWQ_WAITING);
	q->nr_waiting++;
	kwq_wait_place(q, n, now);
}

void kwq_wait_unlink(struct kwq *q, struct kwq_node *n)
{
	if (n->wslot)
		kwq_wheel_unlink(q, n);
	else
		rb_erase_cached(&n->delay_rb, &q->delayed);
	q->nr_waiting--;
}

/* Any waiting key (shutdown drops them all), NULL if none. */
struct kwq_node *kwq_wait_any(struct kwq *q)
{
	struct rb_node *rb = rb_first_cached(&q->delayed);

	if (rb)
		return rb_entry(rb, struct kwq_node, delay_rb);
	if (q->wheel_nr)
		return hlist_entry(q->wheel[q->wheel_next_slot].keys.first,
				   struct kwq_node, wheel);
	return NULL;
}

/*
 * Cascade up to @max keys out of the slots due by @now, earliest slot
 * first, into finer slots or the tree; returns how many moved. Not
 * inlined: one call per chunk, which the host benchmark costs apart.
 */
noinline unsigned int kwq_wheel_cascade(struct kwq *q, u64 now,
					unsigned int max)
{
	unsigned int moved = 0, slot;
	struct kwq_wheel_slot *ws;
	struct hlist_head *head;
	struct kwq_node *n;

	while (moved < max && q->wheel_nr &&
	       q->wheel_due <= now >> KWQ_WHEEL_SHIFT) {
		/* Every slot before it is empty: the clock may move there. */
		q->wheel_clk = q->wheel_next;
		slot = q->wheel_next_slot;
		ws = &q->wheel[slot];
		head = &ws->keys;
		while (moved < max && !hlist_empty(head)) {
			n = hlist_entry(head->first, struct kwq_node, wheel);
			hlist_del(&n->wheel);
			ws->nr--;
			q->wheel_nr--;
			/* Its bucket starts at the clock: a finer one takes it. */
			kwq_wait_place(q, n, now);
			moved++;
		}
		if (hlist_empty(head)) {
			q->wheel_map[slot / KWQ_WHEEL_SLOTS] &=
				~BIT_ULL(slot % KWQ_WHEEL_SLOTS);
			kwq_wheel_find_next(q);
		}
	}
	q->wheel_moves += moved;
	return moved;
}

/*
 * Keep the clock armed at the earliest of the tree's first deadline, the
 * earliest slot's cascade and the first processing deadline, but not
 * before @not_before; touch it only on change.
 */
void kwq_timer_set(struct kwq *q, u64 not_before)
{
	struct rb_node *first = rb_first_cached(&q->delayed);
	u64 deadline = KWQ_NO_DEADLINE;

	/* Shutting down: waiting keys are dropped, never made ready. */
	if (first && !q->shutting_down)
		deadline = rb_entry(first, struct kwq_node, delay_rb)->deadline;
	if (q->wheel_nr && !q->shutting_down)
		deadline = min(deadline, q->wheel_due << KWQ_WHEEL_SHIFT);
	/* And the first processing deadline (queue.c, kwq_expire_due()). */
	first = rb_first_cached(&q->due);
	if (first)
		deadline = min(deadline, rb_entry(first, struct kwq_due,
						  rb)->due_ns);
	if (deadline != KWQ_NO_DEADLINE)
		deadline = max(deadline, not_before);
	if (deadline == q->timer_deadline)
		return;
	q->timer_deadline = deadline;
	if (deadline == KWQ_NO_DEADLINE)
		q->clock->cancel(q->clock, q);
	else
		q->clock->arm(q->clock, q, deadline);
}

void kwq_timer_update(struct kwq *q)
{
	kwq_timer_set(q, 0);
}

void kwq_delay_init(struct kwq *q)
{
	q->delayed = RB_ROOT_CACHED;
	q->wheel_next = U64_MAX;
	q->wheel_due = U64_MAX;
	INIT_WORK(&q->wheel_work, kwq_wheel_work);
	q->timer_deadline = KWQ_NO_DEADLINE;
}

void kwq_delay_free(struct kwq *q)
{
	cancel_work_sync(&q->wheel_work);
	kvfree(q->wheel);
}
