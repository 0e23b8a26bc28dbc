/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The dedup table (table.c): one node per key, found by hash. What the
 * hot paths call is inline here; the table's growth, the node caches and
 * the slow allocation paths are in table.c.
 *
 * Owns, in struct kwq: ->hkey, ->hash, ->hash_bits, ->new_hash,
 * ->new_bits, ->rehash_pos, ->grow_at, ->grow_bits, ->grow_err,
 * ->grow_work, ->nr_nodes, and the freed nodes (->free_list, ->pool,
 * ->pool_nr). All under q->lock but
 * for kwq_seen_lockless()'s RCU walk (queue.c), which the stores here
 * are ordered for.
 */
#ifndef _KWQ_TABLE_H
#define _KWQ_TABLE_H

#include <linux/err.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "layout.h"

#define KWQ_HASH_BITS_MIN	6
#define KWQ_HASH_BITS_INIT	10	/* largest table allocated at create */
#define KWQ_HASH_BITS_MAX	21	/* max_items_per_queue's default */
/* Nodes allocated or freed per slab bulk call (and a batch's chunk). */
#define KWQ_BULK		16

static inline u32 kwq_hash(const struct kwq *q, const void *key, size_t len)
{
	/* The node's word keeps the bits above for key handles. */
	return hsiphash(key, len, &q->hkey) & KWQ_HASH_MASK;
}

/*
 * The bucket of @hash. While the table grows, the buckets of the old
 * table below ->rehash_pos have moved to the new one (kwq_grow_work()).
 */
static inline struct kwq_node **kwq_bucket(struct kwq *q, u32 hash)
{
	u32 i = hash & ((1U << q->hash_bits) - 1);

	if (unlikely(q->new_hash) && i < q->rehash_pos)
		return &q->new_hash[hash & ((1U << q->new_bits) - 1)];
	return &q->hash[i];
}

/*
 * Chains keep their nodes oldest first: a new node is appended, so the
 * keys a FIFO workload finishes first are found first.
 */

/* Publish @n, initialized, at @end, a chain's end (kwq_seen_lockless()). */
static inline void kwq_chain_append(struct kwq_node **end, struct kwq_node *n)
{
	n->hnext = NULL;
	/* Pairs with the READ_ONCE() of the chain in kwq_seen_lockless(). */
	smp_store_release(end, n);
}

/*
 * The link to @key's node in the chain at @pp (@key's bucket): *link is
 * the node, or NULL and link is the chain's end.
 */
static inline struct kwq_node **
kwq_chain_link(struct kwq_node **pp, const void *key, size_t len, u32 hash)
{
	struct kwq_node *n;

	for (; (n = *pp); pp = &n->hnext)
		if (kwq_node_hash(n) == hash && n->key_len == len &&
		    !memcmp(n->key, key, len))
			break;
	return pp;
}

static inline struct kwq_node *kwq_lookup(struct kwq *q, const void *key,
					  size_t len, u32 hash)
{
	return *kwq_chain_link(kwq_bucket(q, hash), key, len, hash);
}

static inline size_t kwq_table_bytes(unsigned int bits)
{
	return sizeof(struct kwq_node *) << bits;
}

/*
 * Most keys a bucket, on average, of a table that cannot grow: its
 * growth was refused (by the byte budget or the allocator) or it is as
 * large as it gets. A new key past it is refused (kwq_table_full()):
 * the chains, and every lookup, stay short whatever the budget says.
 */
#define KWQ_LOAD_MAX		8

/* When the table of 2^@bits buckets is to grow: past a key a bucket. */
static inline unsigned long kwq_grow_at(unsigned int bits)
{
	return 1UL << bits;
}

/* The most nodes a table of 2^@bits buckets takes if it cannot grow. */
static inline unsigned long kwq_table_cap(unsigned int bits)
{
	return (unsigned long)KWQ_LOAD_MAX << bits;
}

/*
 * Under q->lock, before a new key's node goes in, once ->nr_nodes has
 * reached ->grow_at: start the table's growth (charged here, so that a
 * refusal is known at once), and refuse the key if the table is at
 * kwq_table_cap() and cannot grow. 0 or the errno of the refusal.
 */
int kwq_table_full(struct kwq *q);

/* The offset of the key in a node: a node's size less its key. */
#define KWQ_NODE_HDR		offsetof(struct kwq_node, key)
/* table.c: the node caches, what a node of each is charged, by key length */
extern struct kmem_cache *kwq_node_caches[KWQ_NODE_CACHES];
extern unsigned int kwq_node_sizes[KWQ_NODE_CACHES];
extern u8 kwq_cache_of[DIV_ROUND_UP(KWQ_KEY_MAX, 4)];

static inline unsigned int kwq_cache_index(size_t len)
{
	return kwq_cache_of[(len - 1) / 4];
}

static inline struct kmem_cache *kwq_node_cache_of(unsigned int index)
{
	return kwq_node_caches[index];
}

/*
 * A blank node for a key of @len bytes, allocated with @gfp. Batch adds
 * call this before taking q->lock; kwq_node_insert() fills it in. Its
 * ->key_len says which cache it is from, from here on.
 */
struct kwq_node *kwq_node_prealloc(size_t len, gfp_t gfp);
/* Back to its cache: an unused spare, or a node already out of the hash. */
static inline void kwq_node_slab_free(struct kwq_node *n)
{
	if (n)
		kmem_cache_free(kwq_node_cache_of(kwq_cache_index(n->key_len)),
				n);
}

/*
 * Free the list of nodes at @n (through ->hnext) to their caches, in bulk
 * where interrupts are on; after q->lock is dropped (kwq_unlock()).
 */
void kwq_nodes_free(struct kwq_node *n);
void kwq_nodes_prealloc(struct kwq *q, const struct kwq_key *keys,
			unsigned int nr, struct kwq_node **spare, gfp_t gfp);
/*
 * Put @key in the hash at @end, the end of its chain, with the node
 * *@spare if the caller preallocated
 * one (and take it: *@spare becomes NULL), else with a pooled node, else
 * with a node allocated here. Returns the node or ERR_PTR(-EDQUOT or
 * -ENOMEM), or the table's refusal (kwq_table_full()).
 */
static __always_inline struct kwq_node *
kwq_node_insert(struct kwq *q, struct kwq_node **end, const void *key,
		size_t len, u32 hash, struct kwq_node **spare)
{
	unsigned int index = kwq_cache_index(len);
	struct kwq_node *n = NULL;
	int err;

	/* One comparison: the table grows, or is full, past ->grow_at. */
	if (unlikely(q->nr_nodes >= q->grow_at)) {
		err = kwq_table_full(q);
		if (err)
			return ERR_PTR(err);
	}
	if (!kwq_charge(q, kwq_node_sizes[index]))
		return ERR_PTR(-EDQUOT);
	/* A spare was allocated for this very key. */
	if (spare && *spare) {
		n = *spare;
		*spare = NULL;
	} else if (q->pool[index]) {
		n = q->pool[index];
		WRITE_ONCE(q->pool[index], n->hnext);
		WRITE_ONCE(q->pool_nr[index], q->pool_nr[index] - 1);
	} else {
		/*
		 * Under q->lock, possibly in hard interrupt context; charged
		 * to the caller's memcg if the queue says so. Not GFP_ATOMIC:
		 * its __GFP_HIGH would let a charge exceed memory.max.
		 */
		n = kwq_node_prealloc(len, GFP_NOWAIT | q->gfp_account);
	}
	if (!n) {
		kwq_uncharge(q, kwq_node_sizes[index]);
		return ERR_PTR(-ENOMEM);
	}
	/*
	 * A slab object holds stale bytes: set what no state's insert sets
	 * (the links are set by it), and a ->state that no lockless reader
	 * takes for READY. The priorities start at 0, which holds no level
	 * (ready.h).
	 */
	n->state = KWQ_IDLE;
	n->deadline = 0;
	/* No flag: not pinned, nothing pending. */
	atomic_set(&n->hword, hash);
	n->failures = 0;
	n->prio = 0;
	n->requeue_prio = 0;
	n->requeue = KWQ_REQUEUE_NONE;
	n->key_len = len;
	memcpy(n->key, key, len);
	kwq_chain_append(end, n);
	q->nr_nodes++;
	return n;
}

/*
 * Unlink @n from the hash and free it. @pp is the link to it if the
 * caller just found it (NULL: walk the chain for it).
 */
static inline void kwq_node_free(struct kwq *q, struct kwq_node *n,
				 struct kwq_node **pp)
{
	unsigned int index = kwq_cache_index(n->key_len);

	/* No lockless reader takes it for ready again (nor its next life). */
	WRITE_ONCE(n->state, KWQ_IDLE);
	if (!pp) {
		/* Chains are short (a node or none per bucket): walk. */
		pp = kwq_bucket(q, kwq_node_hash(n));
		while (*pp != n)
			pp = &(*pp)->hnext;
	}
	WRITE_ONCE(*pp, n->hnext);
	q->nr_nodes--;
	if (n->failures)
		q->nr_failure_records--;
	kwq_uncharge(q, kwq_node_sizes[index]);
	if (!q->gfp_account && q->pool_nr[index] < KWQ_POOL_MAX) {
		n->hnext = q->pool[index];
		WRITE_ONCE(q->pool[index], n);
		WRITE_ONCE(q->pool_nr[index], q->pool_nr[index] + 1);
	} else {
		n->hnext = q->free_list;
		q->free_list = n;
	}
}

/* q->grow_work's function */
void kwq_grow_work(struct work_struct *work);
/* The first table of @q, sized for @max_items (0: unlimited). */
int kwq_table_alloc(struct kwq *q, u32 max_items);
/* Every node of @q and its table, once nothing else can reach them. */
void kwq_table_free(struct kwq *q);
int kwq_table_init(void);
void kwq_table_exit(void);

#endif /* _KWQ_TABLE_H */
