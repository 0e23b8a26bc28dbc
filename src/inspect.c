// SPDX-License-Identifier: GPL-2.0
/*
 * Per-key introspection: kwq_inspect() reports where one key is and why,
 * kwq_inspect_list() walks the keys of some states in bounded chunks.
 *
 * The walk goes over the dedup table (table.h) a bucket at a time, in
 * reverse binary order of the bucket index (Redis's SCAN): the cursor
 * counts in the index's bits from the top down, so when the table grows
 * to 2^k times its size, the buckets already walked are exactly those
 * whose keys now sit in the buckets the cursor has passed, and none is
 * walked twice or skipped. The cursor holds, never a pointer:
 *   bits  0..31  the next bucket index (below the table's size),
 *   bits 32..47  keys of that bucket already listed (a bucket whose keys
 *                are more than the caller's room; any other bucket is
 *                listed whole or left for the next call),
 *   bits 48..63  the queue's cursor tag (random, not 0), so a cursor of
 *                another queue is told apart.
 * While the table grows (part in the old table, part in the new one),
 * the walk waits: -EAGAIN, the cursor kept.
 *
 * Owns nothing in struct kwq but ->holder; reads under q->lock.
 */

#include <kunit/visibility.h>
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
		if (n->due)
			info->timeout_ns = kwq_since(n->due->due_ns, now) ?: 1;
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
 * The bucket after @v in reverse binary order of a table of @mask + 1
 * buckets: add one at the index's top bit, the carry running down. 0
 * after the last.
 */
static u32 kwq_cursor_next(u32 v, u32 mask)
{
	u32 bit = (mask >> 1) + 1;

	while (bit && (v & bit)) {
		v &= ~bit;
		bit >>= 1;
	}
	return v | bit;
}

int kwq_inspect_list(struct kwq *q, u32 states, u64 *cursor,
		     struct kwq_key_info *infos, unsigned int max)
{
	unsigned int nr = 0, buckets = 0, seen, first;
	struct kwq_node *n;
	unsigned long flags;
	u32 v, skip, mask;
	int ret = 0;
	u64 now;

	if (!q || !cursor || !infos || !max || !states ||
	    (states & ~KWQ_KEY_STATES_ALL))
		return -EINVAL;
	v = lower_32_bits(*cursor);
	skip = (*cursor >> KWQ_CURSOR_SKIP_SHIFT) & KWQ_CURSOR_SKIP_MAX;
	spin_lock_irqsave(&q->lock, flags);
	mask = (1U << q->hash_bits) - 1;
	if (*cursor && *cursor >> KWQ_CURSOR_TAG_SHIFT != q->cursor_tag)
		ret = -ESTALE;
	else if (v & ~mask)
		ret = -EINVAL;
	else if (q->new_hash)
		ret = -EAGAIN;
	if (ret)
		goto out;
	now = kwq_now(q);
	do {
		seen = 0;
		first = nr;
		for (n = q->hash[v]; n; n = n->hnext) {
			if (!(states & BIT(kwq_key_state(n))) || seen++ < skip)
				continue;
			/*
			 * No room for the rest of the bucket: the next call
			 * takes the whole bucket again, unless it alone is
			 * more than the room. Only then does the cursor stop
			 * inside a bucket (counting keys), which a growth of
			 * the table before the next call would throw off.
			 */
			if (nr == max && first) {
				nr = first;
				skip = 0;
				goto stop;
			}
			if (nr == max) {
				skip = seen - 1;
				if (skip <= KWQ_CURSOR_SKIP_MAX)
					goto stop;
				/* A chain no table load makes: its tail unlisted. */
				break;
			}
			kwq_info_fill(q, n, now, &infos[nr++]);
		}
		skip = 0;
		v = kwq_cursor_next(v, mask);
	} while (v && ++buckets < KWQ_INSPECT_BUCKETS);
stop:
	*cursor = v || skip ? (u64)q->cursor_tag << KWQ_CURSOR_TAG_SHIFT |
			      (u64)skip << KWQ_CURSOR_SKIP_SHIFT | v : 0;
	ret = nr;
out:
	spin_unlock_irqrestore(&q->lock, flags);
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_inspect_list);
