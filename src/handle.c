// SPDX-License-Identifier: GPL-2.0
/*
 * Key handles (layout.h, "Key handles"): kwq_key_get() pins a key's node
 * for as long as the handle lives, kwq_add_ref() adds it without taking
 * q->lock (the add is queued on q->ref_adds and applied by the next
 * holder of the lock, kwq_refs_apply() in queue.c), kwq_key_put() lets
 * the node go. The pins (q->pins, by node) are under q->lock.
 */

#include <linux/err.h>
#include <linux/kwq.h>
#include <linux/llist.h>
#include <linux/module.h>
#include <linux/rbtree.h>
#include <linux/slab.h>

#include "kwq_internal.h"
#include "queue.h"

static int kwq_pin_cmp(const void *node, const struct rb_node *rb)
{
	const struct kwq_node *a = node;
	const struct kwq_node *b = rb_entry(rb, struct kwq_key_ref, rb)->node;

	return a == b ? 0 : (uintptr_t)a < (uintptr_t)b ? -1 : 1;
}

static bool kwq_pin_less(struct rb_node *a, const struct rb_node *b)
{
	return kwq_pin_cmp(rb_entry(a, struct kwq_key_ref, rb)->node, b) < 0;
}

struct kwq_key_ref *kwq_key_get(struct kwq *q, const void *key, size_t len,
				gfp_t gfp)
{
	struct kwq_node *n, **link, *spare = NULL;
	struct kwq_key_ref *ref, *new;
	unsigned long flags;
	u32 hash;

	if (!q || !kwq_key_ok(key, len))
		return ERR_PTR(-EINVAL);
	/* Unused (freed below) if the key has a handle already. */
	new = kmalloc(sizeof(*new), gfp | q->gfp_account);
	if (!new)
		return ERR_PTR(-ENOMEM);
	hash = kwq_hash(q, key, len);
	if (kwq_seen_lockless(q, key, len, hash, 0, false) == KWQ_SEEN_NONE)
		spare = kwq_node_prealloc(len, gfp | q->gfp_account);
	spin_lock_irqsave(&q->lock, flags);
	ref = ERR_PTR(-ESHUTDOWN);
	if (q->shutting_down)
		goto unlock;
	link = kwq_chain_link(kwq_bucket(q, hash), key, len, hash);
	n = *link;
	if (!n) {
		n = kwq_node_insert(q, link, key, len, hash, &spare);
		ref = ERR_CAST(n);
		if (IS_ERR(n))
			goto unlock;
		/* IDLE, pinned, no failure record: in no list. */
		INIT_LIST_HEAD(&n->link);
	}
	if (kwq_pinned(n)) {
		ref = rb_entry(rb_find(n, &q->pins, kwq_pin_cmp),
			       struct kwq_key_ref, rb);
		refcount_inc(&ref->ref);
		goto unlock;
	}
	ref = new;
	new = NULL;
	ref->flags = 0;
	refcount_set(&ref->ref, 1);
	kwq_get_ref(q);
	ref->q = q;
	ref->node = n;
	rb_add(&ref->rb, &q->pins, kwq_pin_less);
	atomic_or(KWQ_NODE_PINNED, &n->hword);
unlock:
	kwq_unlock(q, flags, 0);
	kwq_node_slab_free(spare);
	kfree(new);
	return ref;
}
EXPORT_SYMBOL_GPL(kwq_key_get);

int kwq_add_ref(struct kwq_key_ref *ref)
{
	struct kwq *q;

	if (!ref)
		return -EINVAL;
	q = ref->q;
	if (unlikely(READ_ONCE(q->shutting_down)))
		return -ESHUTDOWN;
	/* Already ready or dirty, or an add on its way: nothing to do. */
	if (atomic_fetch_or(KWQ_NODE_PENDING, &ref->node->hword) &
	    KWQ_NODE_PENDING)
		return 0;
	if (!test_and_set_bit(KWQ_REF_QUEUED, &ref->flags))
		llist_add(&ref->pend, &q->ref_adds);
	/*
	 * wq_has_sleeper()'s barrier pairs with the one in the getter's
	 * prepare_to_wait_exclusive(): it sees the getter queued, or the
	 * getter splices this add when it checks under q->lock.
	 */
	if (wq_has_sleeper(&q->get_wq))
		wake_up_nr(&q->get_wq, 1);
	return 0;
}
EXPORT_SYMBOL_GPL(kwq_add_ref);

int kwq_add_ref_opts(struct kwq_key_ref *ref, const struct kwq_add_opts *opts)
{
	if (!ref)
		return -EINVAL;
	/* The node and its key stay while the handle pins them. */
	return kwq_add_opts(ref->q, ref->node->key, ref->node->key_len, opts);
}
EXPORT_SYMBOL_GPL(kwq_add_ref_opts);

void kwq_key_put(struct kwq_key_ref *ref)
{
	struct kwq_node *n;
	struct kwq *q;
	unsigned long flags;

	if (!ref)
		return;
	q = ref->q;
	n = ref->node;
	spin_lock_irqsave(&q->lock, flags);
	if (!refcount_dec_and_test(&ref->ref)) {
		spin_unlock_irqrestore(&q->lock, flags);
		return;
	}
	/* Its add, if on q->ref_adds, is applied: the handle can go. */
	kwq_refs_splice(q);
	rb_erase(&ref->rb, &q->pins);
	/* Nothing promises PENDING any more. */
	atomic_andnot(KWQ_NODE_PINNED | KWQ_NODE_PENDING, &n->hword);
	/* Kept only for its handle: it goes now. */
	if (n->state == KWQ_IDLE && list_empty(&n->link))
		kwq_node_drop(q, n, NULL);
	kwq_unlock(q, flags, 0);
	kwq_put(q);
	kfree(ref);
}
EXPORT_SYMBOL_GPL(kwq_key_put);
