// SPDX-License-Identifier: GPL-2.0
/*
 * Leases: what a worker does with a key it got. kwq_get() and the batch
 * gets hand keys out as leases (struct kwq_item: the node's pointer, hash
 * and lease number; the node never leaves kwq), kwq_done() and its
 * variants end them, kwq_touch() moves a lease's processing deadline,
 * kwq_release_owner() returns the leases of an owner that goes away, and
 * kwq_unget() one lease. The deadlines themselves and the records of
 * revoked leases are deadline.c's; a lease's end is the state machine's
 * (queue.h, kwq_finish()).
 *
 * Everything here runs under q->lock (spinlock_t, irqsave), which guards
 * the processing list, the due tree and the counters; getters sleep on
 * q->get_wq without it. Sections:
 *  - handing out leases and finding them (kwq_get(), kwq_get_batch());
 *  - finishing leases (kwq_done() and its variants);
 *  - touching, returning and ungetting leases.
 */

#include <kunit/visibility.h>
#include <linux/hrtimer.h>
#include <linux/kwq.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>

#include "compat.h"
#include "kwq_internal.h"
#include "queue.h"

#define KWQ_LEASE_TAG		BIT_ULL(63)

/*
 * --- handing out leases and finding them ---
 *
 * Under q->lock: a ready key becomes processing under a new lease number
 * (q->lease_seq, tagged) in the processing list (start order), with its
 * deadline if it has one (deadline.c); kwq_get() and the batch gets take
 * keys so, and sleep on q->get_wq (exclusively, without q->lock) for
 * more. A lease is found again through its hash bucket by node pointer
 * and lease number, never by dereferencing the item's node.
 */

/*
 * Start processing @n, with the deadline @d (NULL: none) @timeout_ns
 * from @now. The deadline's work is out of line: a get without one pays
 * a test and a store.
 */
static __always_inline void kwq_processing_link(struct kwq *q,
						struct kwq_node *n, u64 now,
						u64 timeout_ns,
						struct kwq_due *d)
{
	q->nr_processing++;
	/* The list stays in start order: kwq_get_stats() relies on it. */
	list_add_tail(&n->link, &q->processing);
	kwq_node_proc_init(n);
	if (unlikely(d))
		kwq_due_insert(q, n, d, now, timeout_ns);
}

/*
 * Under q->lock: the link to the processing node @item leases (*link is
 * the node); NULL for a stale lease.
 */
static __always_inline struct kwq_node **
kwq_lease_link(struct kwq *q, const struct kwq_item *item)
{
	struct kwq_node **pp, *n;

	/* Only nodes still in the hash are looked at, never item->node. */
	for (pp = kwq_bucket(q, item->hash); (n = *pp); pp = &n->hnext)
		if (n == item->node)
			return n->state == KWQ_PROCESSING &&
			       n->lease == item->lease ? pp : NULL;
	return NULL;
}

static void kwq_lease_fill(const struct kwq_node *n, struct kwq_item *item)
{
	item->key = n->key;
	item->len = n->key_len;
	item->priority = n->prio;
	item->hash = kwq_node_hash(n);
	item->node = n;
	item->lease = n->lease;
	item->queued_ns = n->queued_ns;
}

/*
 * Under q->lock: hand the next ready key out into @item, with a deadline
 * @timeout_ns from @now (0: none). 1 if taken, 0 if none is ready,
 * -ENOMEM if its deadline could not be recorded (nothing taken). With
 * @room (struct kwq_get_ctl), -EMSGSIZE if its record does not fit there
 * (nothing taken, *@room then 0), else its record's size is taken off.
 */
static __always_inline int kwq_take_locked(struct kwq *q, void *owner,
					   u64 now, u64 timeout_ns,
					   struct kwq_item *item, u32 *room)
{
	struct rb_node *rb = rb_first_cached(&q->levels);
	struct kwq_due *d = NULL;
	struct kwq_level *l;
	struct kwq_node *n;

	if (!rb)
		return 0;
	l = rb_entry(rb, struct kwq_level, ready_rb);
	n = list_first_entry(&l->fifo, struct kwq_node, fifo);
	if (room) {
		if (KWQ_REC_SIZE(n->key_len) > *room) {
			*room = 0;
			return -EMSGSIZE;
		}
		*room -= KWQ_REC_SIZE(n->key_len);
	}
	if (unlikely(timeout_ns)) {
		d = kwq_due_alloc(q);
		if (!d)
			return -ENOMEM;
	}
	kwq_level_unlink(q, l, n);
	/*
	 * Never 0, so a zeroed struct kwq_item leases nothing; the top bit
	 * set, so no delay-tree sequence left in the union passes for one
	 * (kwq_seen_lockless() tells processing stays apart by it).
	 */
	n->lease = ++q->lease_seq | KWQ_LEASE_TAG;
	n->start_ns = now;
	/*
	 * A deadline remembered while ready is run by this get if it has
	 * passed, else once done, as if add_after came now.
	 */
	WRITE_ONCE(n->requeue, KWQ_REQUEUE_NONE);
	if (n->deadline > now) {
		WRITE_ONCE(n->requeue, KWQ_REQUEUE_DELAYED);
		kwq_prio_set(q, &n->requeue_prio, n->prio);
	} else {
		n->deadline = 0;
	}
	/*
	 * A full barrier after the state, paired with the one in
	 * kwq_seen_lockless(): an add that found the key ready (or already
	 * due to run again) and returned made its caller's writes visible
	 * to whoever processes the key now, as the workqueue's PENDING bit
	 * does.
	 */
	smp_store_mb(n->state, KWQ_PROCESSING);
	/* Over ->ready_epoch: only once the node is no longer READY. */
	n->owner = owner;
	q->start_ns_sum += now;
	kwq_hist_observe(&q->queue_hist, kwq_since(now, n->queued_ns));
	trace_key_taken(q, n->key, n->key_len, kwq_since(now, n->queued_ns),
			n->prio, 0);
	kwq_lease_fill(n, item);
	/* Over ->queued_ns, which the lease keeps. */
	kwq_processing_link(q, n, now, timeout_ns, d);
	return 1;
}

/*
 * Under q->lock: @win (if any) opens with the first of the @n > 0 keys
 * just taken at @now into @items, with a processing deadline @timeout
 * (0: none) from then: that deadline on CLOCK_MONOTONIC, which the real
 * clock reads (a clock of a test's: @timeout from the current time).
 */
static void kwq_window_open(const struct kwq *q, struct kwq_get_window *win,
			    const struct kwq_item *items, unsigned int n,
			    u64 now, u64 timeout)
{
	if (!win || win->open || !n)
		return;
	win->first = items[0];
	win->open = true;
	win->end = 0;
	if (timeout)
		win->end = q->clock == &kwq_real_clock ?
			   ns_to_ktime(now + timeout) :
			   ktime_add_ns(ktime_get(), timeout);
}

/*
 * Under q->lock: take up to @max ready keys into @items, each copied out
 * through @ctl's hook if any, while their records fit in @ctl's room (if
 * any); how many, or -EAGAIN if none is ready, -ESHUTDOWN if none ever
 * will be, -EMSGSIZE if the first key's record does not fit, -ETIMEDOUT
 * if the lease that opened @win (if any) has ended: its call is over.
 */
static int kwq_take_n_locked(struct kwq *q, void *owner, u64 now,
			     struct kwq_item *items, unsigned int max,
			     const struct kwq_get_ctl *ctl,
			     struct kwq_get_window *win)
{
	u64 timeout = kwq_timeout_of(q, ctl ? ctl->processing_timeout_ns : 0);
	unsigned int n = 0;
	int ret = 0;

	kwq_refs_splice(q);
	/* Revoked: the key may be ready again, and must not come twice. */
	if (win && win->open && !kwq_lease_link(q, &win->first))
		return -ETIMEDOUT;
	while (n < max &&
	       (ret = kwq_take_locked(q, owner, now, timeout, &items[n],
				      ctl ? ctl->room : NULL)) > 0) {
		if (ctl && ctl->copy)
			ctl->copy(ctl->arg, &items[n]);
		n++;
	}
	kwq_window_open(q, win, items, n, now, timeout);
	if (n)
		return n;
	if (ret < 0)
		return ret;
	return q->shutting_down ? -ESHUTDOWN : -EAGAIN;
}

/*
 * Take up to @max ready keys, KWQ_WALK_CHUNK per critical section (q->lock
 * dropped in between, without sleeping: any context may call this): how
 * many, or kwq_take_n_locked()'s error if none was taken. Getters that
 * run meanwhile take keys in between; each key is still handed out once.
 */
static int kwq_try_get(struct kwq *q, void *owner, struct kwq_item *items,
		       unsigned int max, const struct kwq_get_ctl *ctl,
		       struct kwq_get_window *win)
{
	unsigned int want, taken = 0;
	unsigned long flags;
	int ret;

	do {
		want = min(max - taken, (unsigned int)KWQ_WALK_CHUNK);
		spin_lock_irqsave(&q->lock, flags);
		ret = kwq_take_n_locked(q, owner, kwq_now(q), items + taken,
					want, ctl, win);
		spin_unlock_irqrestore(&q->lock, flags);
		if (ret > 0)
			taken += ret;
	} while (ret == (int)want && taken < max);
	return taken ?: ret;
}

/*
 * Sleep until keys are taken (how many), the queue is shut down and
 * empty, a signal arrives, *@expires (NULL: never) passes or @ctl's abort
 * flag (if any) is seen true after kwq_wake_all() (-EIDRM). Getters wait
 * exclusively: a key made ready wakes one of them, not all (the adds
 * wake as many as they made keys ready: wake_up_nr in kwq_unlock()).
 */
static int kwq_get_wait(struct kwq *q, void *owner, ktime_t *expires,
			struct kwq_item *items, unsigned int max,
			const struct kwq_get_ctl *ctl,
			struct kwq_get_window *win)
{
	const bool *abort = ctl ? ctl->abort : NULL;
	unsigned long flags;
	DEFINE_WAIT(wait);
	bool ready;
	int got;

	for (;;) {
		prepare_to_wait_exclusive(&q->get_wq, &wait,
					  TASK_INTERRUPTIBLE);
		/* Pairs with the store before kwq_wake_all(). */
		if (abort && READ_ONCE(*abort)) {
			got = -EIDRM;
			break;
		}
		got = kwq_try_get(q, owner, items, max, ctl, win);
		if (got != -EAGAIN)
			break;
		if (signal_pending(current)) {
			got = -ERESTARTSYS;
			break;
		}
		if (!expires) {
			schedule();
		} else if (!schedule_hrtimeout(expires, HRTIMER_MODE_ABS)) {
			got = kwq_try_get(q, owner, items, max, ctl, win);
			if (got == -EAGAIN)
				got = -ETIMEDOUT;
			break;
		}
	}
	finish_wait(&q->get_wq, &wait);
	if (got > 0 || got == -ESHUTDOWN)
		return got;
	/*
	 * Leaving without a key: a wake-up meant for this getter may have
	 * been spent on it. Hand it on while keys are ready, or a ready
	 * key could sit while other getters sleep.
	 */
	spin_lock_irqsave(&q->lock, flags);
	ready = q->nr_ready;
	spin_unlock_irqrestore(&q->lock, flags);
	if (ready)
		wake_up(&q->get_wq);
	return got;
}

/* Whether @ctl's room, if any, can still take the smallest record. */
static bool kwq_room_left(const struct kwq_get_ctl *ctl)
{
	return !ctl || !ctl->room || *ctl->room >= KWQ_REC_SIZE(1);
}

/*
 * When a wait ends: *@expires (NULL: never), or the end of @win if it
 * comes first (then in *@buf).
 */
static ktime_t *kwq_window_expires(const struct kwq_get_window *win,
				   ktime_t *expires, ktime_t *buf)
{
	if (!win || !win->open || !win->end ||
	    (expires && ktime_before(*expires, win->end)))
		return expires;
	*buf = win->end;
	return buf;
}

/* For dev.c: kwq_get_batch() as @ctl says; see kwq_internal.h. */
int kwq_get_batch_ctl(struct kwq *q, void *owner, unsigned int flags,
		      s64 timeout_ns, struct kwq_item *items,
		      unsigned int min_nr, unsigned int max_nr,
		      const struct kwq_get_ctl *ctl)
{
	ktime_t deadline, end, *expires = NULL;
	struct kwq_get_window own = {}, *win = NULL;
	unsigned int n;
	int got;

	if (!q || !items || !max_nr || min_nr > max_nr ||
	    (flags & ~KWQ_GET_NONBLOCK))
		return -EINVAL;
	/* Only a call that takes keys in rounds, or waits for more, has one. */
	if (ctl && ctl->window)
		win = ctl->window;
	else if (min_nr > 1 && timeout_ns && !(flags & KWQ_GET_NONBLOCK))
		win = &own;
	got = kwq_try_get(q, owner, items, max_nr, ctl, win);
	if ((flags & KWQ_GET_NONBLOCK) || !timeout_ns)
		return got;
	if (got == -EAGAIN || (got > 0 && got < min_nr)) {
		might_sleep();
		if (timeout_ns > 0) {
			deadline = ktime_add_ns(ktime_get(), timeout_ns);
			expires = &deadline;
		}
		kwq_get_ref(q);
		if (got == -EAGAIN)
			got = kwq_get_wait(q, owner,
					   kwq_window_expires(win, expires,
							      &end),
					   items, max_nr, ctl, win);
		/*
		 * Fewer than @min_nr: take more as they come, until the
		 * timeout or the first key's processing deadline, while
		 * there is room for them and that key is still held.
		 */
		n = max(got, 0);
		while (got > 0 && n < min_nr && kwq_room_left(ctl)) {
			got = kwq_get_wait(q, owner,
					   kwq_window_expires(win, expires,
							      &end),
					   items + n, max_nr - n, ctl, win);
			if (got > 0)
				n += got;
		}
		kwq_put(q);
		if (n)
			return n;
	}
	return got;
}
EXPORT_SYMBOL_IF_KUNIT(kwq_get_batch_ctl);

int kwq_get_batch(struct kwq *q, void *owner, unsigned int flags,
		  s64 timeout_ns, struct kwq_item *items, unsigned int min_nr,
		  unsigned int max_nr)
{
	return kwq_get_batch_ctl(q, owner, flags, timeout_ns, items, min_nr,
				 max_nr, NULL);
}
EXPORT_SYMBOL_GPL(kwq_get_batch);

int kwq_get(struct kwq *q, void *owner, unsigned int flags, s64 timeout_ns,
	    struct kwq_item *item)
{
	unsigned long irqflags;
	int got;

	if (!q || !item || (flags & ~KWQ_GET_NONBLOCK))
		return -EINVAL;
	/* A key ready: one critical section, as a worker loop mostly finds. */
	spin_lock_irqsave(&q->lock, irqflags);
	kwq_refs_splice(q);
	got = kwq_take_locked(q, owner, kwq_now(q), q->processing_timeout_ns,
			      item, NULL);
	spin_unlock_irqrestore(&q->lock, irqflags);
	if (got)
		return min(got, 0);
	got = kwq_get_batch(q, owner, flags, timeout_ns, item, 1, 1);
	return got > 0 ? 0 : got;
}
EXPORT_SYMBOL_GPL(kwq_get);
/*
 * --- finishing leases: done ---
 *
 * Under q->lock: a done by lease (kwq_done(), kwq_done_batch(),
 * kwq_done_get()) or by key for an owner (kwq_done_key(), the batch
 * kwq_done_keys()) ends processing (queue.h, kwq_finish()): the key is
 * requeued if it was added meanwhile, else released. A key whose lease
 * was revoked tells its old owner -ESTALE (deadline.c, the tombs).
 */

/*
 * Under q->lock: may @owner finish or touch @n (found by the key of @hash
 * and @len; NULL: not queued)? It holds it, or (unless @owner_only) nobody does: 0. Else
 * -ESTALE if its lease on the key was revoked, -ENOENT, -EPERM.
 */
static __always_inline int kwq_held_by(const struct kwq *q,
				       const struct kwq_node *n, u32 hash,
				       size_t len, const void *owner,
				       bool owner_only)
{
	/* Held again after a revocation: the record no longer applies. */
	if (likely(n && n->state == KWQ_PROCESSING && n->owner == owner))
		return 0;
	if (unlikely(q->nr_tombs) && owner &&
	    kwq_tomb_find(q, owner, hash, len))
		return -ESTALE;
	if (!n || n->state != KWQ_PROCESSING)
		return -ENOENT;
	return !owner_only && !n->owner ? 0 : -EPERM;
}

/*
 * Under q->lock: finish the @n keys at @keys (hashed: @hash) that are
 * leased to @owner or detached (no owner), in order, stopping at the
 * first that is neither (*@err: -ENOENT or -EPERM, else 0). Returns how
 * many were finished; *@ready counts the keys they made ready.
 */
static unsigned int kwq_done_keys_locked(struct kwq *q,
					 const struct kwq_key *keys,
					 const u32 *hash, unsigned int n,
					 void *owner, u64 now,
					 unsigned int *ready, int *err)
{
	struct kwq_node *node, **link;
	unsigned int i;

	kwq_refs_splice(q);
	*err = 0;
	for (i = 0; i < n; i++) {
		link = kwq_chain_link(kwq_bucket(q, hash[i]), keys[i].key,
				      keys[i].len, hash[i]);
		node = *link;
		*err = kwq_held_by(q, node, hash[i], keys[i].len, owner,
				   false);
		if (*err)
			break;
		*ready += kwq_finish(q, node, link, now);
	}
	return i;
}

/*
 * For dev.c: see kwq_internal.h. Finish processing keys leased to
 * @owner or detached (no owner), in order, stopping at the first that
 * is neither.
 */
int kwq_done_keys(struct kwq *q, const struct kwq_key *keys, unsigned int nr,
		  void *owner, unsigned int *done)
{
	u32 hash[KWQ_BATCH_CHUNK] __uninitialized;
	unsigned int n, k = 0, ready;
	unsigned long flags;
	int ret = 0;

	*done = 0;
	if (!q || !kwq_keys_ok(keys, nr))
		return -EINVAL;
	while (k < nr && !ret) {
		n = min_t(unsigned int, nr - k, KWQ_BATCH_CHUNK);
		kwq_hash_keys(q, keys + k, n, hash);
		ready = 0;
		spin_lock_irqsave(&q->lock, flags);
		n = kwq_done_keys_locked(q, keys + k, hash, n, owner,
					 kwq_now(q), &ready, &ret);
		kwq_unlock(q, flags, ready);
		k += n;
	}
	*done = k;
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(kwq_done_keys);

int kwq_done_batch(struct kwq *q, const struct kwq_item *items,
		   unsigned int nr, unsigned int *done)
{
	unsigned int i, ready = 0;
	struct kwq_node **link;
	unsigned long flags;
	int ret = 0;
	u64 now;

	if (done)
		*done = 0;
	if (!q || (nr && !items))
		return -EINVAL;
	spin_lock_irqsave(&q->lock, flags);
	kwq_refs_splice(q);
	now = kwq_now(q);
	for (i = 0; i < nr; i++) {
		link = kwq_lease_link(q, &items[i]);
		if (!link) {
			ret = -ESTALE;
			break;
		}
		ready += kwq_finish(q, *link, link, now);
	}
	kwq_unlock(q, flags, ready);
	if (done)
		*done = i;
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_done_batch);

int kwq_done(struct kwq *q, const struct kwq_item *item)
{
	struct kwq_node **link;
	unsigned long flags;
	bool ready = false;
	int ret = -ESTALE;

	if (!q || !item)
		return -EINVAL;
	spin_lock_irqsave(&q->lock, flags);
	/* Adds by handle before the done: a dirty key is requeued. */
	kwq_refs_splice(q);
	link = kwq_lease_link(q, item);
	if (link) {
		ready = kwq_finish(q, *link, link, kwq_now(q));
		ret = 0;
	}
	kwq_unlock(q, flags, ready);
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_done);

int kwq_done_get(struct kwq *q, void *owner, unsigned int flags,
		 s64 timeout_ns, struct kwq_item *item)
{
	unsigned int ready = 0;
	struct kwq_node **link;
	unsigned long irqflags;
	int got;
	u64 now;

	if (!q || !item || (flags & ~KWQ_GET_NONBLOCK))
		return -EINVAL;
	spin_lock_irqsave(&q->lock, irqflags);
	kwq_refs_splice(q);
	now = kwq_now(q);
	if (item->lease) {
		link = kwq_lease_link(q, item);
		if (!link) {
			spin_unlock_irqrestore(&q->lock, irqflags);
			return -ESTALE;
		}
		ready = kwq_finish(q, *link, link, now);
	}
	/*
	 * No wake-up if a key is taken: a key the done made ready is taken
	 * here (this or one before it), so no more keys are ready than
	 * before. If none could be, one the done made ready wakes a getter.
	 */
	got = kwq_take_locked(q, owner, now, q->processing_timeout_ns, item,
			      NULL);
	kwq_unlock(q, irqflags, got > 0 ? 0 : ready);
	if (got > 0)
		return 0;
	memset(item, 0, sizeof(*item));
	if (got < 0)
		return got;
	got = kwq_get_batch(q, owner, flags, timeout_ns, item, 1, 1);
	return got > 0 ? 0 : got;
}
EXPORT_SYMBOL_GPL(kwq_done_get);

/*
 * For dev.c: see kwq_internal.h. kwq_done_keys(), then, once every key
 * is finished, what kwq_try_get() does, in the critical section of the
 * last keys: a worker's cycle takes the queue lock once, not twice.
 */
int kwq_done_keys_take(struct kwq *q, const struct kwq_key *keys,
		       unsigned int nr, void *owner, unsigned int *done,
		       void *get_owner, struct kwq_item *items,
		       unsigned int max, const struct kwq_get_ctl *ctl)
{
	u32 hash[KWQ_BATCH_CHUNK] __uninitialized;
	unsigned int k, n, ready = 0, taken = 0;
	unsigned long flags;
	int ret = 0;
	u64 now;

	*done = 0;
	if (!q || !items || !max || !kwq_keys_ok(keys, nr))
		return -EINVAL;
	/* All chunks but the last as kwq_done_keys() finishes them. */
	k = nr > KWQ_BATCH_CHUNK ? rounddown(nr - 1, KWQ_BATCH_CHUNK) : 0;
	if (k) {
		ret = kwq_done_keys(q, keys, k, owner, done);
		if (ret)
			return ret;
	}
	n = nr - k;
	kwq_hash_keys(q, keys + k, n, hash);
	spin_lock_irqsave(&q->lock, flags);
	now = kwq_now(q);
	n = kwq_done_keys_locked(q, keys + k, hash, n, owner, now, &ready,
				 &ret);
	/* A done that failed takes nothing: the earlier keys stay finished. */
	if (!ret) {
		ret = kwq_take_n_locked(q, get_owner, now, items, max, ctl,
					ctl ? ctl->window : NULL);
		taken = max(ret, 0);
	}
	/*
	 * Wake getters only for the keys made ready here and not taken
	 * here, as kwq_done_get() reasons: no more keys are ready than
	 * before for the others.
	 */
	kwq_unlock(q, flags, ready > taken ? ready - taken : 0);
	*done = k + n;
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(kwq_done_keys_take);

int kwq_done_key(struct kwq *q, const void *key, size_t len, void *owner)
{
	struct kwq_node *n;
	unsigned long flags;
	bool wake = false;
	int ret = 0;
	u32 hash;

	if (!q || !kwq_key_ok(key, len))
		return -EINVAL;
	hash = kwq_hash(q, key, len);
	spin_lock_irqsave(&q->lock, flags);
	n = kwq_lookup(q, key, len, hash);
	ret = kwq_held_by(q, n, hash, len, owner, true);
	if (!ret)
		wake = kwq_finish(q, n, NULL, kwq_now(q));
	kwq_unlock(q, flags, wake);
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_done_key);
/*
 * --- touching, returning and ungetting leases ---
 *
 * Under q->lock: a touch moves a lease's processing deadline; an owner's
 * release (an fd's close) returns all its leases to the ready queue in
 * walks of KWQ_WALK_CHUNK list entries per hold of q->lock; an unget
 * returns one lease as if it had never been taken.
 */

/*
 * Return processing @n to the queue: a lease return. True if it went back
 * to the ready queue, false if it died there (its last retry failed).
 */
static bool kwq_return_lease(struct kwq *q, struct kwq_node *n, u64 now)
{
	kwq_processing_unlink(q, n);
	q->start_ns_sum -= n->start_ns;
	n->owner = NULL;
	q->lease_returns++;
	/* A key that failed its last retry dies, returned or not. */
	if (kwq_bury_dying(q, n))
		return false;
	if (n->requeue != KWQ_REQUEUE_NONE)
		kwq_prio_set(q, &n->prio, max(n->prio, n->requeue_prio));
	kwq_set_requeue(q, n, KWQ_REQUEUE_NONE, now);
	kwq_make_ready(q, n, n->prio, now);
	return true;
}

int kwq_touch(struct kwq *q, const struct kwq_item *item, u64 timeout_ns)
{
	struct kwq_node **link;
	unsigned long flags;
	int ret = -ESTALE;

	if (!q || !item || !kwq_timeout_ok(timeout_ns))
		return -EINVAL;
	spin_lock_irqsave(&q->lock, flags);
	link = kwq_lease_link(q, item);
	if (link)
		ret = kwq_due_move(q, *link, kwq_timeout_of(q, timeout_ns));
	spin_unlock_irqrestore(&q->lock, flags);
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_touch);

/* For dev.c: see kwq_internal.h. */
int kwq_touch_key(struct kwq *q, const void *key, size_t len, void *owner,
		  u64 timeout_ns)
{
	struct kwq_node *n;
	unsigned long flags;
	u32 hash;
	int ret;

	if (!q || !kwq_key_ok(key, len) || !kwq_timeout_ok(timeout_ns))
		return -EINVAL;
	hash = kwq_hash(q, key, len);
	spin_lock_irqsave(&q->lock, flags);
	n = kwq_lookup(q, key, len, hash);
	ret = kwq_held_by(q, n, hash, len, owner, false);
	if (!ret)
		ret = kwq_due_move(q, n, kwq_timeout_of(q, timeout_ns));
	spin_unlock_irqrestore(&q->lock, flags);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(kwq_touch_key);

/*
 * Return @owner's processing keys, KWQ_WALK_CHUNK list entries per
 * critical section; between them q->lock is dropped and, if @may_sleep,
 * cond_resched() called. The cursor is @mark, an entry of the processing
 * list that is no key (lease 0: kwq_get_stats() and other walks pass
 * over marks), moved past each entry looked at: nodes before and after
 * it may come and go while the lock is dropped, the mark stays where the
 * walk is. The list is in lease order, so the walk ends at the first
 * lease handed out after it began: every key @owner held then is
 * returned once (none twice: a returned key leaves the list); keys
 * @owner gets while the walk runs may or may not be. It never ends
 * early, not even for a fatal signal: a lease it skipped would never end.
 */
static int kwq_release_walk(struct kwq *q, void *owner, bool may_sleep)
{
	struct kwq_node mark = { .lease = 0 }, *n;
	unsigned int i, ready;
	unsigned long flags;
	int count = 0;
	bool end;
	u64 now, last;

	if (!q || !owner)
		return -EINVAL;
	spin_lock_irqsave(&q->lock, flags);
	last = q->lease_seq | KWQ_LEASE_TAG;
	list_add(&mark.link, &q->processing);
	for (;;) {
		now = kwq_now(q);
		ready = 0;
		end = false;
		for (i = 0; i < KWQ_WALK_CHUNK; i++) {
			n = list_next_entry(&mark, link);
			end = list_entry_is_head(n, &q->processing, link) ||
			      n->lease > last;
			if (end)
				break;
			list_move(&mark.link, &n->link);
			/* Another walk's mark has lease 0 and owner NULL. */
			if (n->lease && n->owner == owner) {
				/* A lease ended, ready again or dead. */
				ready += kwq_return_lease(q, n, now);
				count++;
			}
		}
		if (end) {
			list_del(&mark.link);
			/*
			 * A later owner at the same address starts with no
			 * revoked lease.
			 */
			if (q->nr_tombs)
				kwq_tomb_forget(q, owner);
		}
		kwq_unlock(q, flags, ready);
		if (end)
			return count;
		if (may_sleep)
			cond_resched();
		spin_lock_irqsave(&q->lock, flags);
	}
}

int kwq_release_owner(struct kwq *q, void *owner)
{
	return kwq_release_walk(q, owner, false);
}
EXPORT_SYMBOL_GPL(kwq_release_owner);

/* For dev.c: see kwq_internal.h. */
int kwq_release_owner_sleep(struct kwq *q, void *owner)
{
	return kwq_release_walk(q, owner, true);
}

/* For dev.c: see kwq_internal.h. */
void kwq_unget(struct kwq *q, const struct kwq_item *item)
{
	struct kwq_node **link, *n;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	link = kwq_lease_link(q, item);
	n = link ? *link : NULL;
	if (!n) {
		/* Finished meanwhile (through the same file): nothing to undo. */
		spin_unlock_irqrestore(&q->lock, flags);
		return;
	}
	kwq_processing_unlink(q, n);
	q->start_ns_sum -= n->start_ns;
	/* The get did not happen: take its queue duration back. */
	kwq_hist_unobserve(&q->queue_hist,
			   kwq_since(n->start_ns, item->queued_ns));
	n->owner = NULL;
	if (kwq_bury_dying(q, n)) {
		kwq_unlock(q, flags, 0);
		return;
	}
	if (n->requeue != KWQ_REQUEUE_NONE)
		kwq_prio_set(q, &n->prio, max(n->prio, n->requeue_prio));
	kwq_set_requeue(q, n, KWQ_REQUEUE_NONE, 0);
	/* Back where get took it from, with the time it was queued. */
	n->queued_ns = item->queued_ns;
	kwq_ready_insert(q, n, n->prio, true);
	kwq_unlock(q, flags, 1);
}
EXPORT_SYMBOL_IF_KUNIT(kwq_unget);
