// SPDX-License-Identifier: GPL-2.0
/*
 * Per-key introspection: kwq_inspect() reports where one key is and why,
 * kwq_inspect_list() walks the keys of some states in bounded chunks.
 *
 * The walk visits the keys in the order of their hashes with the bits
 * reversed, their places. A bucket of a table of 2^k buckets holds one
 * run of places (those whose top k bits are its index reversed), so the
 * walk goes a bucket at a time in reverse binary order of the index, as
 * Redis's SCAN, and within a bucket sorts by place. No table size enters
 * the order: a growth between two calls moves keys to other buckets but
 * never to another place, so none is listed twice or skipped, even when
 * a call stopped in the middle of a bucket. The cursor holds, never a
 * pointer:
 *   bits  0..31  the next place,
 *   bits 32..47  keys at that place already listed (only when one 32-bit
 *                hash has more keys than the caller's room; else a call
 *                lists all the keys of a place or none),
 *   bits 48..63  the queue's cursor tag (random, not 0), so a cursor of
 *                another queue is told apart.
 * While the table grows (part in the old table, part in the new one),
 * the walk waits: -EAGAIN, the cursor kept.
 *
 * Owns nothing in struct kwq but ->holder; reads under q->lock.
 */

#include <kunit/visibility.h>
#include <linux/bitrev.h>
#include <linux/bits.h>
#include <linux/kwq.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <uapi/linux/kwq.h>

#include "kwq_internal.h"
#include "queue.h"
#include "table.h"

#define KWQ_CURSOR_SKIP_SHIFT	32
#define KWQ_CURSOR_SKIP_MAX	0xffff
#define KWQ_CURSOR_TAG_SHIFT	48

/* For dev.c: see kwq_internal.h. */
void kwq_set_holder(struct kwq *q, u32 (*holder)(const void *owner))
{
	q->holder = holder;
}

static u32 kwq_key_state(const struct kwq_node *n)
{
	switch (n->state) {
	case KWQ_READY:
		return KWQ_KEY_READY;
	case KWQ_WAITING:
		return KWQ_KEY_WAITING;
	case KWQ_PROCESSING:
		return KWQ_KEY_PROCESSING;
	case KWQ_DEAD:
		return KWQ_KEY_DEAD;
	default:
		return KWQ_KEY_IDLE;
	}
}

/* A deadline of @n, @deadline, into @info: time left at @now. */
static void kwq_info_due(struct kwq_key_info *info, u64 deadline, u64 now)
{
	if (!deadline)
		return;
	info->flags |= KWQ_KEY_DUE;
	info->due_ns = kwq_since(deadline, now);
}

/* Under q->lock: what @info says of @n at @now. */
static void kwq_info_fill(const struct kwq *q, const struct kwq_node *n,
			  u64 now, struct kwq_key_info *info)
{
	memset(info, 0, offsetof(struct kwq_key_info, key));
	info->state = kwq_key_state(n);
	info->priority = n->prio;
	info->failures = n->failures;
	info->key_len = n->key_len;
	memcpy(info->key, n->key, n->key_len);
	switch (n->state) {
	case KWQ_READY:
		info->since_ns = kwq_since(now, n->queued_ns);
		kwq_info_due(info, n->deadline, now);
		break;
	case KWQ_WAITING:
		kwq_info_due(info, n->deadline, now);
		break;
	case KWQ_PROCESSING:
		info->since_ns = kwq_since(now, n->start_ns);
		info->owner = n->owner;
		if (n->owner && q->holder)
			info->holder = q->holder(n->owner);
		if (n->requeue == KWQ_REQUEUE_READY)
			info->flags |= KWQ_KEY_DIRTY;
		else if (n->requeue == KWQ_REQUEUE_DELAYED)
			info->flags |= KWQ_KEY_DELAYED;
		else if (n->requeue == KWQ_REQUEUE_DEAD)
			info->flags |= KWQ_KEY_DYING;
		kwq_info_due(info, n->deadline, now);
		/* A deadline due this instant reads 1 ns: 0 means none. */
		if (kwq_node_has_due(n))
			info->timeout_ns =
				kwq_since(kwq_node_due(n)->due_ns, now) ?: 1;
		break;
	case KWQ_DEAD:
		info->since_ns = kwq_since(now, n->start_ns);
		break;
	default:
		break;
	}
}

/* For dev.c and metrics.c: see kwq_internal.h. */
void kwq_info_to_rec(const struct kwq_key_info *k, struct kwq_info_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->len = k->key_len;
	r->state = k->state;
	r->flags = k->flags;
	r->priority = k->priority;
	r->failures = k->failures;
	r->holder = k->holder;
	r->since_ns = k->since_ns;
	r->due_ns = k->due_ns;
	r->timeout_ns = k->timeout_ns;
}

int kwq_inspect(struct kwq *q, const void *key, size_t len,
		struct kwq_key_info *info)
{
	struct kwq_node *n;
	unsigned long flags;
	u32 hash;
	int ret = -ENOENT;

	if (!q || !key || !len || len > KWQ_KEY_MAX || !info)
		return -EINVAL;
	hash = kwq_hash(q, key, len);
	spin_lock_irqsave(&q->lock, flags);
	kwq_refs_splice(q);
	n = kwq_lookup(q, key, len, hash);
	if (n) {
		kwq_info_fill(q, n, kwq_now(q), info);
		ret = 0;
	}
	spin_unlock_irqrestore(&q->lock, flags);
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_inspect);

/*
 * A node's place in the walk: its hash with the bits reversed. A bucket
 * of a table of 2^k holds the hashes whose low k bits are its index, so
 * its places are one run, the one whose top k bits are the index
 * reversed; runs follow one another as the reversed index counts up.
 */
static u32 kwq_place(const struct kwq_node *n)
{
	return bitrev32(kwq_node_hash(n));
}

/*
 * Under q->lock: list into @infos (room @max, @nr used) the nodes of the
 * chain at @n in @states whose place is at or past *@pos, least place
 * first; at *@pos, past the first *@skip nodes there (in chain order,
 * whatever their state). Keys of one place are listed together if they
 * fit in the room left, else left for the next call, unless they alone
 * are more than @max. Leaves *@pos and *@skip where the walk goes on;
 * returns true if it stopped for want of room before the chain's end.
 */
static bool kwq_list_chain(const struct kwq *q, const struct kwq_node *chain,
			   u32 states, u64 now, u32 *pos, u32 *skip,
			   struct kwq_key_info *infos, unsigned int *nr,
			   unsigned int max)
{
	const struct kwq_node *n;
	unsigned int at, want;
	u32 place, next;

	for (;;) {
		/* The least place at or past *pos with keys to list: how many. */
		want = 0;
		next = 0;
		at = 0;
		for (n = chain; n; n = n->hnext) {
			place = kwq_place(n);
			if (place < *pos || (place == *pos && at++ < *skip) ||
			    !(states & BIT(kwq_key_state(n))))
				continue;
			if (!want || place < next) {
				next = place;
				want = 1;
			} else if (place == next) {
				want++;
			}
		}
		if (!want)
			return false;
		if (next != *pos) {
			*pos = next;
			*skip = 0;
		}
		if (*nr + want > max && *nr)
			return true;
		at = 0;
		for (n = chain; n; n = n->hnext) {
			if (kwq_place(n) != next || at++ < *skip ||
			    !(states & BIT(kwq_key_state(n))))
				continue;
			/*
			 * More keys of one place than the whole room: stop
			 * between them, counting. (A count past the cursor's
			 * field would take 2^16 keys of one 32-bit hash: the
			 * rest of them go unlisted.)
			 */
			if (*nr == max) {
				if (at - 1 > KWQ_CURSOR_SKIP_MAX)
					break;
				*skip = at - 1;
				return true;
			}
			kwq_info_fill(q, n, now, &infos[(*nr)++]);
		}
		/* That place is done: past it, or the walk's end. */
		*skip = 0;
		if (next == U32_MAX)
			return false;
		*pos = next + 1;
	}
}

int kwq_inspect_list(struct kwq *q, u32 states, u64 *cursor,
		     struct kwq_key_info *infos, unsigned int max)
{
	unsigned int nr = 0, buckets = 0, bits;
	unsigned long flags;
	u32 pos, skip, last;
	bool done = false;
	int ret = 0;
	u64 now;

	if (!q || !cursor || !infos || !max || !states ||
	    (states & ~KWQ_KEY_STATES_ALL))
		return -EINVAL;
	pos = lower_32_bits(*cursor);
	skip = (*cursor >> KWQ_CURSOR_SKIP_SHIFT) & KWQ_CURSOR_SKIP_MAX;
	spin_lock_irqsave(&q->lock, flags);
	kwq_refs_splice(q);
	if (*cursor && *cursor >> KWQ_CURSOR_TAG_SHIFT != q->cursor_tag)
		ret = -ESTALE;
	else if (q->new_hash)
		ret = -EAGAIN;
	if (ret)
		goto out;
	now = kwq_now(q);
	bits = q->hash_bits;
	do {
		/* The bucket holding *pos's place, and its last place. */
		last = pos | (U32_MAX >> bits);
		if (kwq_list_chain(q, q->hash[bitrev32(pos) & ((1U << bits) - 1)],
				   states, now, &pos, &skip, infos, &nr, max))
			break;
		skip = 0;
		if (last == U32_MAX) {
			done = true;
			break;
		}
		pos = last + 1;
	} while (++buckets < KWQ_INSPECT_BUCKETS);
	*cursor = done ? 0 : (u64)q->cursor_tag << KWQ_CURSOR_TAG_SHIFT |
			     (u64)skip << KWQ_CURSOR_SKIP_SHIFT | pos;
	ret = nr;
out:
	spin_unlock_irqrestore(&q->lock, flags);
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_inspect_list);
