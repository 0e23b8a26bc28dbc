// SPDX-License-Identifier: GPL-2.0
/*
 * Processing deadlines and revoked leases, for the state machine's lease
 * calls (lease.c) and the expiry (queue.c):
 *  - the deadline records (struct kwq_due): a processing key's deadline
 *    is a small object apart from the node, in the due tree (q->due, by
 *    deadline then lease), which the clock timer also covers; the queue
 *    keeps up to KWQ_DUE_KEEP freed ones for its next gets;
 *  - the records of revoked leases (q->tombs): an owner whose lease was
 *    revoked at its deadline gets -ESTALE from a done or touch by key
 *    while a record of it lasts.
 * Everything here runs under q->lock, except kwq_due_free_all(), called
 * once the queue is unreachable.
 */

#include <linux/kwq.h>
#include <linux/rbtree.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "queue.h"
#include "delay.h"

/* --- revoked leases (q->tombs) --- */

/* The @i-th record, oldest first. */
static struct kwq_tomb *kwq_tomb(const struct kwq *q, unsigned int i)
{
	return &q->tombs[(q->tomb_head + i) % KWQ_TOMBS];
}

/*
 * Whether @owner's lease on the key of @hash and @len was revoked. A
 * record names the key by its hash and length, so it outlives the key's
 * node (the key may have left the queue since): another key matches it
 * only through a collision of its 29-bit hash.
 */
bool kwq_tomb_find(const struct kwq *q, const void *owner, u32 hash,
		   size_t len)
{
	const struct kwq_tomb *t;
	unsigned int i;

	for (i = 0; i < q->nr_tombs; i++) {
		t = kwq_tomb(q, i);
		if (t->hash == hash && t->owner == owner && t->len == len)
			return true;
	}
	return false;
}

/*
 * Record that @owner's lease on @n was revoked; the oldest record goes
 * when KWQ_TOMBS are kept. The records are allocated by the first
 * revocation (none if that fails: the owner then gets -ENOENT or -EPERM,
 * which change nothing either).
 */
void kwq_tomb_add(struct kwq *q, const void *owner,
		  const struct kwq_node *n)
{
	struct kwq_tomb *t;

	if (unlikely(!q->tombs)) {
		if (!kwq_charge(q, kwq_alloc_bytes(KWQ_TOMBS * sizeof(*t))))
			return;
		q->tombs = kmalloc_array(KWQ_TOMBS, sizeof(*t), GFP_NOWAIT |
					 __GFP_NOWARN | q->gfp_account);
		if (!q->tombs) {
			kwq_uncharge(q, kwq_alloc_bytes(KWQ_TOMBS * sizeof(*t)));
			return;
		}
	}
	if (q->nr_tombs == KWQ_TOMBS) {
		q->tomb_head = (q->tomb_head + 1) % KWQ_TOMBS;
		q->nr_tombs--;
	}
	t = kwq_tomb(q, q->nr_tombs++);
	t->owner = owner;
	t->hash = kwq_node_hash(n);
	t->len = n->key_len;
}

/* Forget the records of @owner (released: its address may come back). */
void kwq_tomb_forget(struct kwq *q, const void *owner)
{
	unsigned int i, kept = 0;

	for (i = 0; i < q->nr_tombs; i++)
		if (kwq_tomb(q, i)->owner != owner)
			*kwq_tomb(q, kept++) = *kwq_tomb(q, i);
	q->nr_tombs = kept;
}

/* --- processing deadlines --- */

/*
 * A deadline record for a get or touch, under q->lock: a kept one, else a
 * new one (possibly in hard interrupt context; GFP_NOWAIT as for nodes,
 * table.h), or NULL: the caller then fails with -ENOMEM, nothing taken.
 */
struct kwq_due *kwq_due_alloc(struct kwq *q)
{
	struct kwq_due *d = q->due_free;

	if (d) {
		q->due_free = d->next_free;
		q->nr_due_free--;
		return d;
	}
	if (!kwq_charge(q, kwq_alloc_bytes(sizeof(*d))))
		return NULL;
	d = kmalloc(sizeof(*d), GFP_NOWAIT | __GFP_NOWARN | q->gfp_account);
	if (!d)
		kwq_uncharge(q, kwq_alloc_bytes(sizeof(*d)));
	return d;
}

static void kwq_due_free(struct kwq *q, struct kwq_due *d)
{
	kfree(d);
	kwq_uncharge(q, kwq_alloc_bytes(sizeof(*d)));
}

/* Under q->lock: keep @d for the next gets, or free it. */
void kwq_due_release(struct kwq *q, struct kwq_due *d)
{
	if (!q->gfp_account && q->nr_due_free < KWQ_DUE_KEEP) {
		d->next_free = q->due_free;
		q->due_free = d;
		q->nr_due_free++;
		return;
	}
	kwq_due_free(q, d);
}

/*
 * Once the queue is unreachable: free every deadline record, those in
 * the tree (in post-order, no rebalancing) and the kept ones.
 */
void kwq_due_free_all(struct kwq *q)
{
	struct kwq_due *d, *next;

	rbtree_postorder_for_each_entry_safe(d, next, &q->due.rb_root, rb)
		kwq_due_free(q, d);
	q->due = RB_ROOT_CACHED;
	while ((d = q->due_free)) {
		q->due_free = d->next_free;
		kwq_due_free(q, d);
	}
	q->nr_due_free = 0;
}

static bool kwq_due_less(struct rb_node *a, const struct rb_node *b)
{
	const struct kwq_due *x = rb_entry(a, struct kwq_due, rb);
	const struct kwq_due *y = rb_entry(b, struct kwq_due, rb);

	return x->due_ns < y->due_ns ||
	       (x->due_ns == y->due_ns && x->node->lease < y->node->lease);
}

/* Give processing @n the deadline @d, due @timeout_ns after @now. */
noinline void kwq_due_insert(struct kwq *q, struct kwq_node *n,
			     struct kwq_due *d, u64 now, u64 timeout_ns)
{
	d->node = n;
	d->due_ns = kwq_deadline(now, timeout_ns);
	kwq_node_set_due(n, d);
	rb_add_cached(&d->rb, &q->due, kwq_due_less);
	q->nr_due++;
	/* Re-armed only if this deadline is the first. */
	kwq_timer_update(q);
}

/* Take processing @n's deadline out of the due tree; returns it. */
noinline struct kwq_due *kwq_due_erase(struct kwq *q,
				       struct kwq_node *n)
{
	struct kwq_due *d = kwq_node_due(n);

	/* The timer may stay armed: it then finds nothing due. */
	rb_erase_cached(&d->rb, &q->due);
	q->nr_due--;
	kwq_node_clear_due(n);
	return d;
}

/* The processing deadline of a get or touch that asks for @timeout_ns. */
u64 kwq_timeout_of(const struct kwq *q, u64 timeout_ns)
{
	if (!timeout_ns)
		return q->processing_timeout_ns;
	return timeout_ns == KWQ_NO_TIMEOUT ? 0 : timeout_ns;
}

/* A timeout a get or touch may ask for: 0, KWQ_NO_TIMEOUT or in range. */
bool kwq_timeout_ok(u64 timeout_ns)
{
	return !timeout_ns || timeout_ns == KWQ_NO_TIMEOUT ||
	       (timeout_ns >= KWQ_PROCESSING_TIMEOUT_MIN_NS &&
		timeout_ns <= KWQ_PROCESSING_TIMEOUT_MAX_NS);
}

/*
 * Under q->lock: give processing @n a deadline @timeout_ns (0: none) from
 * now on. -ENOMEM (nothing changed) if a new deadline cannot be recorded.
 */
int kwq_due_move(struct kwq *q, struct kwq_node *n, u64 timeout_ns)
{
	struct kwq_due *d = kwq_node_due(n);

	if (d) {
		kwq_due_erase(q, n);
		if (!timeout_ns) {
			kwq_due_release(q, d);
			kwq_timer_update(q);
			return 0;
		}
	} else if (timeout_ns) {
		d = kwq_due_alloc(q);
		if (!d)
			return -ENOMEM;
	} else {
		return 0;
	}
	/* Re-arms the timer if the new deadline is the first. */
	kwq_due_insert(q, n, d, kwq_now(q), timeout_ns);
	return 0;
}
