// SPDX-License-Identifier: GPL-2.0
/*
 * The ioctls of /dev/kwq that move keys by records: ADD, DONE, FORGET
 * and REMOVE of a batch of key records (applied in chunks of
 * KWQ_KEYS_CHUNK keys per core call), GET (rounds of up to
 * KWQ_GET_ROUND keys, their records written under the queue lock into
 * the file's scratch buffer, then copied out) and DONE_GET (a done and a
 * get in one call, its last keys finished in the get's first critical
 * section). No lock of its own: the core takes the queue's, the record
 * buffers their scratch locks (record.c). Sections:
 *  - batches of key records: ADD, DONE, FORGET, REMOVE;
 *  - GET and DONE_GET.
 */

#include <linux/fs.h>
#include <linux/kwq.h>
#include <linux/minmax.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <uapi/linux/kwq.h>

#include "compat.h"
#include "dev.h"
#include "kwq_internal.h"
#include "ring.h"

enum kwq_keys_op { KWQ_OP_ADD, KWQ_OP_DONE, KWQ_OP_FORGET, KWQ_OP_REMOVE };

/* Keys handed to the core per batch call. */
#define KWQ_KEYS_CHUNK		32

/*
 * --- batches of key records: ADD, DONE, FORGET, REMOVE ---
 *
 * A checked record buffer applied KWQ_KEYS_CHUNK keys per core call; the
 * core takes the queue lock per call.
 */

/*
 * Apply @op to the @nr checked records at @buf, a chunk of keys per core
 * call; *@done counts the keys that took effect. The first error stops.
 * Once all took effect, *@end (if @end) is the offset past the records.
 * Process context: a scheduling point between chunks (a batch of the
 * longest keys hashes and copies 4 MiB), and a task being killed stops
 * there with -EINTR, the keys before taking effect as on any error.
 */
static noinline_for_stack int
kwq_recs_apply(struct kwq_file *kf, struct kwq *q, enum kwq_keys_op op,
	       const u8 *buf, u32 nr, const struct kwq_batch_opts *opts,
	       u32 *done, u32 *end)
{
	/*
	 * Here and in the other hot paths, arrays written before they are
	 * read are spared the stack's auto-initialisation
	 * (CONFIG_INIT_STACK_ALL_ZERO): zeroing them cost more than the rest
	 * of the call's own code.
	 */
	struct kwq_key keys[KWQ_KEYS_CHUNK] __uninitialized;
	struct kwq_batch_opts o;
	unsigned int n, k;
	u32 off = 0;
	int ret = 0;

	for (*done = 0; *done < nr && !ret; *done += k) {
		if (*done) {
			if (fatal_signal_pending(current)) {
				ret = -EINTR;
				break;
			}
			cond_resched();
		}
		n = min_t(u32, nr - *done, KWQ_KEYS_CHUNK);
		kwq_recs_keys(buf, &off, keys, n);
		switch (op) {
		case KWQ_OP_ADD:
			o = *opts;
			if (o.delays)
				o.delays += *done;
			/* One key: no batch machinery (the single-key ADD). */
			if (n == 1) {
				ret = kwq_add_key(q, keys, &o);
				k = !ret;
			} else {
				ret = kwq_add_batch(q, keys, n, &o, &k);
			}
			break;
		case KWQ_OP_DONE:
			/* Leased to this file, or detached (owned by nobody). */
			ret = kwq_done_keys(q, keys, n, kf, &k);
			break;
		case KWQ_OP_FORGET:
		case KWQ_OP_REMOVE:
			for (k = 0; k < n && !ret; k += !ret)
				ret = op == KWQ_OP_FORGET ?
				      kwq_forget(q, keys[k].key, keys[k].len) :
				      kwq_remove(q, keys[k].key, keys[k].len);
			break;
		}
	}
	if (end)
		*end = off;
	return ret;
}

/*
 * KWQ_IOC_ADD of one record and no delays to write back, a producer's
 * call: what kwq_ioc_keys() does (which checked the flags and made
 * @opts), without its buffers and chunks; the record is read in 8-byte
 * words.
 */
static noinline_for_stack int
kwq_ioc_add_one(struct kwq_ioc *c, const struct kwq_batch_opts *opts)
{
	struct kwq_keys_args __user *uarg = (void __user *)c->arg;
	u64 rec[KWQ_REC_SMALL / sizeof(u64)] __uninitialized;
	struct kwq_keys_args *a = &c->a.keys;
	struct kwq_key key;
	u32 off = 0;
	int ret;

	ret = kwq_copy_in(rec, u64_to_user_ptr(a->recs), a->recs_len);
	if (!ret)
		ret = kwq_rec_check_one(rec, a->recs_len, true);
	if (ret)
		return ret;
	kwq_recs_keys((u8 *)rec, &off, &key, 1);
	ret = kwq_add_key(c->uq->q, &key, opts);
	if (put_user(ret ? 0 : 1, &uarg->done))
		return -EFAULT;
	return kwq_uq_err(c->uq, ret);
}

static int kwq_ioc_keys(struct kwq_ioc *c, enum kwq_keys_op op)
{
	/*
	 * New keys' nodes are allocated before the queue lock: the memcg
	 * may reclaim, but never OOM-kills for us (__GFP_RETRY_MAYFAIL).
	 */
	struct kwq_batch_opts opts = {
		.gfp = GFP_KERNEL | __GFP_RETRY_MAYFAIL,
	};
	struct kwq_keys_args __user *uarg = (void __user *)c->arg;
	u64 __user *udelays = NULL;
	u8 small[KWQ_REC_SMALL] __aligned(8) __uninitialized;
	struct kwq_keys_args *a = &c->a.keys;
	u64 *delays = NULL;
	u8 *buf;
	int ret;

	if (a->pad || a->pad2)
		return -EINVAL;
	if (op == KWQ_OP_ADD) {
		if (a->flags & ~(KWQ_ADD_AFTER | KWQ_ADD_RATE_LIMITED |
				 KWQ_ADD_REPLACE | KWQ_ADD_LATER) ||
		    (a->flags & KWQ_ADD_AFTER &&
		     a->flags & KWQ_ADD_RATE_LIMITED) ||
		    (!(a->flags & KWQ_ADD_AFTER) && a->after_ns) ||
		    (!(a->flags & KWQ_ADD_RATE_LIMITED) && a->delays))
			return -EINVAL;
	} else if (a->flags || a->after_ns || a->delays) {
		return -EINVAL;
	}

	opts.after_ns = a->flags & KWQ_ADD_AFTER ? a->after_ns : 0;
	opts.flags = a->flags & KWQ_ADD_RATE_LIMITED ? KWQ_BATCH_RATE_LIMITED : 0;
	/* kwq_add_batch() checks them: only with a delay, one at most. */
	if (a->flags & KWQ_ADD_REPLACE)
		opts.flags |= KWQ_AFTER_REPLACE;
	if (a->flags & KWQ_ADD_LATER)
		opts.flags |= KWQ_AFTER_LATER;
	/* A producer's call: one key, no delays to write back. */
	if (op == KWQ_OP_ADD && a->nr == 1 && !a->delays &&
	    kwq_words_ok(u64_to_user_ptr(a->recs), a->recs_len))
		return kwq_ioc_add_one(c, &opts);

	buf = kwq_recs_in(c->kf, a->recs, a->recs_len, a->nr, op == KWQ_OP_ADD,
			  small);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	if (a->delays) {
		/* Prove the output writable before any key takes effect. */
		udelays = u64_to_user_ptr(a->delays);
		ret = -ENOMEM;
		delays = kvcalloc(a->nr, sizeof(*delays), GFP_KERNEL);
		if (!delays)
			goto out;
		ret = -EFAULT;
		if (copy_to_user(udelays, delays, a->nr * sizeof(*delays)))
			goto out;
	}
	opts.delays = delays;

	ret = kwq_recs_apply(c->kf, c->uq->q, op, buf, a->nr, &opts, &a->done,
			     NULL);
	ret = kwq_uq_err(c->uq, ret);
	if (delays && a->done &&
	    copy_to_user(udelays, delays, a->done * sizeof(*delays)))
		ret = -EFAULT;
	if (put_user(a->done, &uarg->done))
		ret = -EFAULT;
out:
	kvfree(delays);
	kwq_buf_put(c->kf, buf, small);
	return ret;
}

int kwq_ioc_add(struct kwq_ioc *c)
{
	return kwq_ioc_keys(c, KWQ_OP_ADD);
}

int kwq_ioc_done(struct kwq_ioc *c)
{
	return kwq_ioc_keys(c, KWQ_OP_DONE);
}

int kwq_ioc_forget(struct kwq_ioc *c)
{
	return kwq_ioc_keys(c, KWQ_OP_FORGET);
}

int kwq_ioc_remove(struct kwq_ioc *c)
{
	return kwq_ioc_keys(c, KWQ_OP_REMOVE);
}

/*
 * --- GET and DONE_GET ---
 *
 * Rounds of keys taken by the core, whose records kwq_rec_copy() writes
 * under the queue lock into the file's scratch buffer (its out_lock held
 * by the call), then copied out.
 */

/*
 * Keys taken per core call by GET: the records of a round of keys of up
 * to KWQ_KEY_LEN_MAX_VER1 bytes fit the scratch buffer; of longer keys,
 * a round takes what fits.
 */
#define KWQ_GET_ROUND		16
static_assert(KWQ_GET_ROUND * KWQ_REC_SMALL <= KWQ_SCRATCH_OUT_LEN);

/* Write @item as a record at @dst (zero-padded); its size. */
static size_t kwq_rec_put(u8 *dst, const struct kwq_item *item)
{
	struct kwq_rec *r = (struct kwq_rec *)dst;
	size_t size = KWQ_REC_SIZE(item->len);

	r->len = item->len;
	r->priority = item->priority;
	memcpy(r + 1, item->key, item->len);
	memset(dst + sizeof(*r) + item->len, 0,
	       size - sizeof(*r) - item->len);
	return size;
}

/*
 * Where a round's records go: kwq_rec_copy() runs under the queue lock.
 * @room: the bytes left at @buf + @len (struct kwq_get_ctl's room).
 */
struct kwq_recs_out {
	u8 *buf;
	u32 len;
	u32 room;
};

static void kwq_rec_copy(void *arg, const struct kwq_item *item)
{
	struct kwq_recs_out *out = arg;

	out->len += kwq_rec_put(out->buf + out->len, item);
}

/* Keys a DONE_GET finishes in the critical section of its first round. */
#define KWQ_DONE_LAST		16

/*
 * The done part of a KWQ_IOC_DONE_GET left to kwq_get_keys(): the last
 * @nr (at most KWQ_DONE_LAST) records of a checked buffer, all before
 * them finished.
 */
struct kwq_done_in {
	const u8 *recs;
	u32 nr;
	u32 done;		/* out: how many of the @nr were finished */
};

/*
 * Finish @din's keys and, if all were, take up to @max keys, in one
 * critical section: kwq_done_keys_take().
 */
static int kwq_done_take(struct kwq_file *kf, struct kwq *q,
			 struct kwq_done_in *din, void *owner,
			 struct kwq_item *items, u32 max,
			 const struct kwq_get_ctl *ctl)
{
	struct kwq_key keys[KWQ_DONE_LAST] __uninitialized;
	unsigned int done;
	u32 off = 0;
	int ret;

	kwq_recs_keys(din->recs, &off, keys, din->nr);
	/* Leased to this file, or detached (owned by nobody). */
	ret = kwq_done_keys_take(q, keys, din->nr, kf, &done, owner, items,
				 max, ctl);
	din->done = done;
	return ret;
}

/*
 * The GET part of KWQ_IOC_GET and KWQ_IOC_DONE_GET on a checked @a,
 * whose nr and used it fills. Returns 0 when keys were taken. @din (NULL:
 * none) is DONE_GET's done part, finished in the first round's critical
 * section: if one of its keys is not (din->done < din->nr), its error,
 * and no key is taken.
 */
static noinline_for_stack int
kwq_get_keys(struct file *file, struct kwq_file *kf, struct kwq_uq *uq,
	     struct kwq_get_args *a, struct kwq_done_in *din)
{
	struct kwq_item items[KWQ_GET_ROUND] __uninitialized;
	u8 one[KWQ_REC_SMALL] __aligned(8) __uninitialized;
	struct kwq_recs_out out;
	/* The call's rounds: none takes a key after the first is revoked. */
	struct kwq_get_window win = {};
	/* A DESTROY (uq->dead) ends the wait with EIDRM. */
	struct kwq_get_ctl ctl = {
		.abort = &uq->dead, .copy = kwq_rec_copy, .arg = &out,
		.processing_timeout_ns = a->processing_timeout_ns,
		.room = &out.room, .window = &win,
	};
	unsigned int flags = 0, rflags, rounds = 0;
	u32 n, want, min_nr, room, cap;
	bool counted = false, waiting = false, armed = false, tried;
	ktime_t start = 0;
	s64 timeout, left;
	void *owner;
	int ret = 0;

	owner = a->flags & KWQ_GET_DETACHED ? NULL : kf;
	timeout = a->timeout_ns < 0 ? KWQ_WAIT_FOREVER : a->timeout_ns;
	if (timeout > 0)
		start = ktime_get();
	if (file->f_flags & O_NONBLOCK)
		flags |= KWQ_GET_NONBLOCK;
	/*
	 * What the queue's rings published, first. A call that must wait is
	 * counted in their waiters once it found too few keys without
	 * waiting (below); one that may not wait and finds nothing may wait
	 * elsewhere (poll): producers ring until a get takes a key.
	 */
	kwq_rings_pull(&uq->rings);
	/* One key needs no shared buffer, unless it is a long one. */
	cap = a->max == 1 ? KWQ_REC_SMALL : KWQ_SCRATCH_OUT_LEN;
	out.buf = kwq_buf_get(kf, cap, one, true);
	if (!out.buf)
		return -ENOMEM;

	/*
	 * Rounds of KWQ_GET_ROUND keys, each taken in one critical section
	 * (where their records are written, before anyone could finish the
	 * keys) and copied out in one piece, each key only if its record
	 * fits in the buffer and in the caller's bytes left. Calls wait
	 * (within the timeout) until @min_nr keys are taken, then take only
	 * what is ready. A fault puts the round's keys back (kwq_unget) so
	 * none is lost; earlier rounds were written out and are handed over.
	 */
again:
	while (a->nr < a->max) {
		want = min(a->max - a->nr, (u32)KWQ_GET_ROUND);
		room = a->recs_len - a->used;
		if (room < KWQ_REC_SIZE(1))
			break;
		/* The first round may use the whole timeout, later ones the rest. */
		left = timeout;
		if (a->nr >= max(a->min_nr, 1U)) {
			left = 0;
		} else if (rounds++ && timeout > 0) {
			left = timeout - ktime_to_ns(ktime_sub(ktime_get(),
							       start));
			if (left <= 0)
				break;
		}
		out.len = 0;
		out.room = min(room, cap);
		rflags = left ? flags : flags | KWQ_GET_NONBLOCK;
		min_nr = min(a->min_nr > a->nr ? a->min_nr - a->nr : 0, want);
		/*
		 * What is ready first, without waiting (DONE_GET's done part
		 * never waits): a call that finds its keys is not counted in
		 * the rings' waiters.
		 */
		tried = din || (!(rflags & KWQ_GET_NONBLOCK) && !waiting);
		if (din) {
			/* The first round: want >= 1 (recs_len was checked). */
			ret = kwq_done_take(kf, uq->q, din, owner, items, want,
					    &ctl);
			if (din->done < din->nr)
				break;
			din = NULL;
		} else {
			ret = kwq_get_batch_ctl(uq->q, owner,
						tried ? rflags | KWQ_GET_NONBLOCK :
						rflags, left, items, min_nr,
						want, &ctl);
		}
		n = max(ret, 0);
		/*
		 * Too few taken, and room for more: counted as a waiter, then
		 * wait as a GET. A full buffer ends the call with what it has.
		 */
		if (tried && !(rflags & KWQ_GET_NONBLOCK) &&
		    (ret == -EAGAIN ||
		     (n && n < min_nr && out.room >= KWQ_REC_SIZE(1)))) {
			if (!waiting) {
				counted = kwq_rings_wait_begin(&uq->rings);
				waiting = true;
			}
			ret = kwq_get_batch_ctl(uq->q, owner, rflags, left,
						items + n,
						min_nr > n ? min_nr - n : 0,
						want - n, &ctl);
			n += max(ret, 0);
		}
		/* Keys taken before an error are handed over. */
		if (n)
			ret = n;
		/*
		 * A key too long for the stack's buffer: again with a larger
		 * one (ETIMEDOUT if the timeout passes before the retry).
		 */
		if (ret == -EMSGSIZE && out.buf == one && room > cap) {
			cap = KWQ_SCRATCH_OUT_LEN;
			out.buf = kwq_buf_get(kf, cap, one, true);
			ret = -ETIMEDOUT;
			if (out.buf)
				continue;
			out.buf = one;
			ret = -ENOMEM;
		}
		if (ret < 0)
			break;
		n = ret;
		ret = 0;
		if (kwq_copy_out(u64_to_user_ptr(a->recs) + a->used, out.buf,
				 out.len)) {
			/*
			 * Fault: the round's keys go back to the head of
			 * their levels, last taken first, so order holds.
			 */
			while (n--)
				kwq_unget(uq->q, &items[n]);
			ret = -EFAULT;
			break;
		}
		/* Only whole rounds count: @used covers exactly @nr records. */
		a->used += out.len;
		a->nr += n;
		/* Fewer than wanted, and not for want of room: none is ready. */
		if (n < want && out.room)
			break;
		/*
		 * A GET of many keys is many rounds: a scheduling point
		 * between them, and a task being killed stops with the keys
		 * it has (its close returns them).
		 */
		if (fatal_signal_pending(current))
			break;
		cond_resched();
	}
	/*
	 * A call that may not wait found nothing: the file is armed (it may
	 * wait in poll), then what producers published meanwhile is pulled
	 * and tried once more.
	 */
	if (!a->nr && ret == -EAGAIN && !din && !armed &&
	    (!timeout || flags & KWQ_GET_NONBLOCK)) {
		kwq_rings_arm(&uq->rings, &kf->armed);
		armed = true;
		goto again;
	}
	kwq_buf_put(kf, out.buf, one);
	kwq_rings_wait_end(&uq->rings, counted);
	/* Keys were handed out: the call succeeded. */
	if (a->nr) {
		kwq_rings_disarm(&uq->rings, &kf->armed);
		return 0;
	}
	return kwq_uq_err(uq, ret);
}

/*
 * Write the outputs of a struct kwq_get_args back to userspace (and
 * DONE_GET's done count at @udone if not NULL): one user access window,
 * not one per field.
 */
static int kwq_get_args_out(struct kwq_get_args __user *u,
			    const struct kwq_get_args *a, u32 __user *udone,
			    u32 done)
{
	if (udone) {
		/* struct kwq_done_get_args: done comes before get */
		if (!user_write_access_begin(udone, (u8 __user *)(u + 1) -
					     (u8 __user *)udone))
			return -EFAULT;
		unsafe_put_user(done, udone, efault);
	} else if (!user_write_access_begin(u, sizeof(*u))) {
		return -EFAULT;
	}
	unsafe_put_user(a->nr, &u->nr, efault);
	unsafe_put_user(a->used, &u->used, efault);
	user_write_access_end();
	return 0;
efault:
	user_write_access_end();
	return -EFAULT;
}

/* A processing timeout of a get or touch: 0, KWQ_TIMEOUT_NONE or in range. */
bool kwq_processing_timeout_ok(u64 ns)
{
	return !ns || ns == KWQ_TIMEOUT_NONE ||
	       (ns >= KWQ_PROCESSING_TIMEOUT_MIN &&
		ns <= KWQ_PROCESSING_TIMEOUT_MAX);
}

/* Check a copied-in struct kwq_get_args and clear its outputs. */
static int kwq_get_args_check(struct kwq_get_args *a)
{
	/* nr and used are outputs: whatever they held is overwritten. */
	a->nr = 0;
	a->used = 0;
	if (a->flags & ~KWQ_GET_DETACHED || !a->max || a->min_nr > a->max ||
	    a->recs_len < KWQ_REC_SIZE_MAX_VER1 || !a->recs ||
	    !kwq_processing_timeout_ok(a->processing_timeout_ns))
		return -EINVAL;
	return 0;
}

int kwq_ioc_get(struct kwq_ioc *c)
{
	struct kwq_get_args __user *uarg = (void __user *)c->arg;
	struct kwq_get_args *a = &c->a.get;
	int ret;

	ret = kwq_get_args_check(a);
	if (ret)
		return ret;
	/*
	 * The result is written back into @arg: prove that possible before
	 * a key is taken, or a read-only struct would strand taken keys.
	 */
	if (kwq_get_args_out(uarg, a, NULL, 0))
		return -EFAULT;
	ret = kwq_get_keys(c->file, c->kf, c->uq, a, NULL);
	if (ret)
		return ret;
	return kwq_get_args_out(uarg, a, NULL, 0);
}

/*
 * A one-key DONE_GET's inputs: its outputs zeroed first (proving them
 * writable before a key is finished or taken, as the general path does),
 * then the record to finish (at most KWQ_REC_SMALL bytes) read into
 * @rec.
 */
static int kwq_done_one_in(struct kwq_done_get_args __user *u,
			   const struct kwq_done_get_args *a, u64 *rec)
{
	if (kwq_get_args_out(&u->get, &a->get, &u->done, 0))
		return -EFAULT;
	return kwq_copy_in(rec, u64_to_user_ptr(a->done_recs), a->done_len);
}

/*
 * A one-key DONE_GET's outputs once it took a key: the key's record
 * (@rec, @len bytes), then done, nr and used. -EFAULT; if the record was
 * not written, *@handed is false and the caller puts the key back.
 */
static int kwq_done_one_out(struct kwq_done_get_args __user *u,
			    struct kwq_done_get_args *a, const u64 *rec,
			    u32 len, bool *handed)
{
	*handed = !kwq_copy_out(u64_to_user_ptr(a->get.recs), rec, len);
	if (!*handed)
		return -EFAULT;
	a->get.nr = 1;
	a->get.used = len;
	return kwq_get_args_out(&u->get, &a->get, &u->done, a->done);
}

/*
 * KWQ_IOC_DONE_GET of one key to finish and at most one to take, a worker
 * loop's call: what kwq_ioc_done_get() does, without its buffers and
 * rounds, the record copied in 8-byte words. Only a call that must wait
 * for a key goes on as the general path's get part does.
 */
static noinline_for_stack int kwq_ioc_done_get_one(struct kwq_ioc *c)
{
	struct kwq_done_get_args __user *uarg = (void __user *)c->arg;
	struct kwq_done_get_args *a = &c->a.done_get;
	u64 in[KWQ_REC_SMALL / sizeof(u64)] __uninitialized;
	u64 out[KWQ_REC_SMALL / sizeof(u64)] __uninitialized;
	struct kwq_recs_out ro = {
		.buf = (u8 *)out, .room = min(a->get.recs_len, KWQ_REC_SMALL),
	};
	const struct kwq_get_ctl ctl = {
		.abort = &c->uq->dead, .copy = kwq_rec_copy, .arg = &ro,
		.processing_timeout_ns = a->get.processing_timeout_ns,
		.room = &ro.room,
	};
	void *owner = a->get.flags & KWQ_GET_DETACHED ? NULL : c->kf;
	struct kwq_item item;
	struct kwq_key key;
	unsigned int done;
	bool handed;
	u32 off = 0;
	int ret;

	ret = kwq_done_one_in(uarg, a, in);
	if (!ret)
		ret = kwq_rec_check_one(in, a->done_len, false);
	if (ret)
		return ret;
	kwq_recs_keys((u8 *)in, &off, &key, 1);
	/* What the queue's rings published, first (kwq_get_keys()). */
	kwq_rings_pull(&c->uq->rings);
	/* Leased to this file, or detached (owned by nobody). */
	ret = kwq_done_keys_take(c->uq->q, &key, 1, c->kf, &done, owner,
				 &item, 1, &ctl);
	a->done = done;
	if (ret == 1)
		kwq_rings_disarm(&c->uq->rings, &c->kf->armed);
	/* The key was not finished: nothing was taken (done reads 0). */
	if (!done)
		return kwq_uq_err(c->uq, ret);
	if (ret == 1) {
		ret = kwq_done_one_out(uarg, a, out, ro.len, &handed);
		if (handed)
			return ret;
		/* As kwq_get_keys(): the key goes back, none is lost. */
		kwq_unget(c->uq->q, &item);
		ret = -EFAULT;
	}
	/*
	 * None ready: wait as the general path's get part does; a key too
	 * long for @out: take it there.
	 */
	if (ret == -EAGAIN || ret == -EMSGSIZE)
		ret = kwq_get_keys(c->file, c->kf, c->uq, &a->get, NULL);
	else
		ret = kwq_uq_err(c->uq, ret);
	/* As kwq_ioc_done_get(): the key finished is not finished again. */
	if (ret == -ERESTARTSYS)
		ret = -EINTR;
	if (kwq_get_args_out(&uarg->get, &a->get, &uarg->done, a->done))
		return -EFAULT;
	return ret;
}

/*
 * KWQ_IOC_DONE_GET: a worker's whole cycle in one call. The keys to
 * finish are checked and finished first; only if all were does the call
 * go on to take keys as KWQ_IOC_GET does. The last KWQ_DONE_LAST keys
 * are finished in the critical section that takes the first keys: a
 * cycle of up to that many keys takes the queue lock once.
 */
int kwq_ioc_done_get(struct kwq_ioc *c)
{
	struct kwq_done_get_args __user *uarg = (void __user *)c->arg;
	struct kwq_done_in din = {}, *pdin = NULL;
	u8 small[KWQ_REC_SMALL] __aligned(8) __uninitialized;
	struct kwq_done_get_args *a = &c->a.done_get;
	u8 *buf = NULL;
	u32 off = 0;
	int ret;

	ret = kwq_get_args_check(&a->get);
	if (ret)
		return ret;
	a->done = 0;
	if (a->pad || (!a->done_nr && (a->done_len || a->done_recs)))
		return -EINVAL;
	/* A worker loop's call: one key finished, one taken. */
	if (a->done_nr == 1 && a->get.max == 1 &&
	    kwq_words_ok(u64_to_user_ptr(a->done_recs), a->done_len))
		return kwq_ioc_done_get_one(c);
	if (kwq_get_args_out(&uarg->get, &a->get, &uarg->done, a->done))
		return -EFAULT;
	if (a->done_nr) {
		buf = kwq_recs_in(c->kf, a->done_recs, a->done_len, a->done_nr,
				  false, small);
		if (IS_ERR(buf))
			return PTR_ERR(buf);
		/* The keys before the last ones, as KWQ_IOC_DONE does. */
		din.nr = min_t(u32, a->done_nr, KWQ_DONE_LAST);
		if (a->done_nr > din.nr) {
			ret = kwq_recs_apply(c->kf, c->uq->q, KWQ_OP_DONE, buf,
					     a->done_nr - din.nr, NULL, &a->done,
					     &off);
			if (ret) {
				kwq_buf_put(c->kf, buf, small);
				ret = kwq_uq_err(c->uq, ret);
				return put_user(a->done, &uarg->done) ?
				       -EFAULT : ret;
			}
		}
		din.recs = buf + off;
		pdin = &din;
	}
	ret = kwq_get_keys(c->file, c->kf, c->uq, &a->get, pdin);
	if (pdin) {
		kwq_buf_put(c->kf, buf, small);
		a->done += din.done;
		/* A key not finished: nothing was taken. */
		if (din.done < din.nr)
			return put_user(a->done, &uarg->done) ? -EFAULT : ret;
		/*
		 * A signal ended the get part's wait after keys were finished:
		 * a restarted call would finish them again (ENOENT). The
		 * caller sees EINTR and how many were finished instead.
		 */
		if (ret == -ERESTARTSYS && a->done)
			ret = -EINTR;
	}
	/* What was finished stays finished: report it either way. */
	if (kwq_get_args_out(&uarg->get, &a->get, &uarg->done, a->done))
		return -EFAULT;
	return ret;
}
