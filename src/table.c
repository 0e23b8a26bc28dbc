// SPDX-License-Identifier: GPL-2.0
/*
 * The dedup table: a hash set of nodes, one per key, hashed with
 * hsiphash under a per-queue random key (the kernel's choice for hash
 * tables: fast, and keyed, so keys users pick cannot flood one bucket
 * without knowing the key), in singly linked chains kept oldest first.
 * The table grows by a work item that moves a few buckets per critical
 * section (kwq_grow_work()), never by a rehash under one lock hold.
 *
 * Nodes come from caches by object size and go back through a small
 * per-queue pool. What the hot paths call is inline in table.h; this file
 * has the caches, the slow allocation paths, the growth and the table's
 * creation and end. Everything runs under q->lock but the allocations
 * before it and the end (kwq_table_free(), once the queue is unreachable).
 * Documentation/design.rst, "The map", draws where this sits.
 */

#include <linux/memcontrol.h>
#include <linux/minmax.h>
#include <linux/rcupdate.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "table.h"

/*
 * Node caches by object size: an object is the node and its key, so a
 * short key does not pay for a long one's room. Sizes are multiples of 8
 * (no alignment padding), 8 apart for the short keys most queues hold;
 * each takes keys up to its size less the node; then fewer for the long
 * keys (a Kubernetes namespace/name of up to 317 bytes fits 448). The
 * last holds KWQ_KEY_MAX.
 */
static const u16 kwq_cache_objs[] = {
	104, 112, 120, 128, 144, 160, 192, 224, 288, 448, 704,
	ALIGN(KWQ_NODE_HDR + KWQ_KEY_MAX, 8),
};

static_assert(ARRAY_SIZE(kwq_cache_objs) == KWQ_NODE_CACHES);
static_assert(KWQ_NODE_HDR + 16 <= 104);
struct kmem_cache *kwq_node_caches[KWQ_NODE_CACHES];
/* kmem_cache_size() of each, what a node is charged */
unsigned int kwq_node_sizes[KWQ_NODE_CACHES];
/* The cache of a key of 4 * i + 1 .. 4 * i + 4 bytes */
u8 kwq_cache_of[DIV_ROUND_UP(KWQ_KEY_MAX, 4)];

/*
 * A blank node for a key of @len bytes, allocated with @gfp. Batch adds
 * call this before taking q->lock; kwq_node_insert() fills it in. Its
 * ->key_len says which cache it is from, from here on.
 */
struct kwq_node *kwq_node_prealloc(size_t len, gfp_t gfp)
{
	struct kwq_node *n;

	n = kmem_cache_alloc(kwq_node_cache_of(kwq_cache_index(len)),
			     gfp | __GFP_NOWARN);
	if (n)
		n->key_len = len;
	return n;
}

/*
 * Nodes freed under q->lock wait in q->free_list (through ->hnext) and go
 * back to the slab after the lock is dropped (kwq_unlock()). A queue that
 * does not charge its caller's memcg keeps up to KWQ_POOL_MAX freed nodes
 * per cache in q->pool instead, for its next new keys: producers and
 * workers on different CPUs then move no memory through the slab, whose
 * frees from a CPU other than the allocating one are its slow path. (A
 * charged node must not carry another caller's key.)
 */
void kwq_nodes_free(struct kwq_node *n)
{
	void *objs[KWQ_BULK] __uninitialized;
	struct kwq_node *next;
	unsigned int nr = 0;

	/*
	 * In bulk where interrupts are on (process or softirq context);
	 * kmem_cache_free() one by one serves any other.
	 */
	if (irqs_disabled()) {
		for (; n; n = next) {
			next = n->hnext;
			kwq_node_slab_free(n);
		}
		return;
	}
	for (; n; n = next) {
		next = n->hnext;
		objs[nr++] = n;
		if (nr == ARRAY_SIZE(objs) || !next) {
			/* NULL: each object's own cache. */
			kmem_cache_free_bulk(NULL, nr, objs);
			nr = 0;
		}
	}
}

/*
 * Preallocate nodes for the @nr keys at @keys whose @spare is not NULL
 * on entry (@spare[i] set to anything but NULL asks for one; every such
 * entry becomes a node or NULL). None if they all come from one cache
 * whose pool in @q holds as many (the adds take those under the lock);
 * else one kmem_cache_alloc_bulk() when they all come from one cache and
 * @gfp may sleep (process context, as the bulk call wants), else one
 * allocation each.
 */
void kwq_nodes_prealloc(struct kwq *q, const struct kwq_key *keys,
			unsigned int nr, struct kwq_node **spare, gfp_t gfp)
{
	unsigned int i, want = 0, index = KWQ_NODE_CACHES;
	void *objs[KWQ_BULK] __uninitialized;

	for (i = 0; i < nr; i++) {
		if (!spare[i])
			continue;
		if (index == KWQ_NODE_CACHES)
			index = kwq_cache_index(keys[i].len);
		else if (index != kwq_cache_index(keys[i].len))
			index = KWQ_NODE_CACHES + 1;
		want++;
	}
	if (want && index < KWQ_NODE_CACHES && !q->gfp_account &&
	    READ_ONCE(q->pool_nr[index]) >= want) {
		memset(spare, 0, nr * sizeof(*spare));
		return;
	}
	/*
	 * kmem_cache_alloc_bulk() is all or nothing. It returns the count (0
	 * or @want) on older kernels, a bool on newer ones (7.2): read it as
	 * whether it succeeded, never compare it with @want.
	 */
	if (want > 1 && index < KWQ_NODE_CACHES &&
	    gfpflags_allow_blocking(gfp) &&
	    kmem_cache_alloc_bulk(kwq_node_cache_of(index),
				  gfp | __GFP_NOWARN, want, objs)) {
		for (i = 0; i < nr; i++) {
			if (!spare[i])
				continue;
			spare[i] = objs[--want];
			spare[i]->key_len = keys[i].len;
		}
		return;
	}
	for (i = 0; i < nr; i++)
		if (spare[i])
			spare[i] = kwq_node_prealloc(keys[i].len, gfp);
}

/*
 * Under q->lock: charge a table of twice the buckets and have the work
 * item grow to it (or more: kwq_grow_work()). The charge is taken here,
 * in the add that made the growth due, so that a refusal is known before
 * any further key goes in.
 */
static void kwq_grow_start(struct kwq *q)
{
	unsigned int bits = q->hash_bits + 1;

	if (q->hash_bits >= KWQ_HASH_BITS_MAX) {
		q->grow_err = -ENOSPC;
	} else if (!kwq_charge(q, kwq_table_bytes(bits))) {
		q->grow_err = -EDQUOT;
	} else {
		q->grow_bits = bits;
		schedule_work(&q->grow_work);
	}
	/*
	 * Refused: every add of a new key comes here (a retry), but at the
	 * largest size, where only the bound is left to check.
	 */
	if (q->grow_err == -ENOSPC)
		q->grow_at = kwq_table_cap(q->hash_bits);
	else
		q->grow_at = q->grow_err ? kwq_grow_at(q->hash_bits) : ULONG_MAX;
}

int kwq_table_full(struct kwq *q)
{
	/*
	 * A growth that is due, or a retry of a refused one (one at a time:
	 * a charge here, the allocation in the work). ->grow_err stands
	 * until a growth completes, retry or not: a table that could not
	 * grow takes no key past kwq_table_cap(), even while a retry runs.
	 */
	if (!q->grow_bits && !q->shutting_down)
		kwq_grow_start(q);
	return q->nr_nodes < kwq_table_cap(q->hash_bits) ? 0 : q->grow_err;
}

/* Old buckets moved per critical section while the table grows. */
#define KWQ_REHASH_CHUNK	32

/*
 * Grow the hash table without a long critical section: allocate the new
 * table outside the lock, publish it, then move KWQ_REHASH_CHUNK old
 * buckets at a time, dropping the lock in between. kwq_bucket() sends
 * each key to the table its bucket is in meanwhile. At about two nodes a
 * bucket, a chunk moves some 64 nodes: microseconds, not the tens of
 * milliseconds a one-shot rehash of 1e6 keys held the lock for.
 */
void kwq_grow_work(struct work_struct *work)
{
	struct kwq *q = container_of(work, struct kwq, grow_work);
	unsigned long i, end, size;
	struct kwq_node **new, **old, **tail;
	struct mem_cgroup *old_memcg;
	unsigned int bits, charged;
	struct kwq_node *n;

	spin_lock_irq(&q->lock);
	charged = q->grow_bits;
	if (!charged) {
		spin_unlock_irq(&q->lock);
		return;
	}
	/*
	 * The fewest buckets for at most one key a bucket: the load stays
	 * between a half and one, 8..16 bytes of table per key, and a
	 * lookup of a key not in the table passes over one node or none.
	 * More than kwq_grow_start() charged for if the keys outgrew it
	 * meanwhile, if the budget has the difference.
	 */
	bits = clamp_t(unsigned int, fls_long(q->nr_nodes), charged,
		       KWQ_HASH_BITS_MAX);
	if (bits > charged && !kwq_charge(q, kwq_table_bytes(bits) -
					     kwq_table_bytes(charged)))
		bits = charged;
	spin_unlock_irq(&q->lock);

	/*
	 * A bigger table is optional: never OOM-kill for it. A queue that
	 * charges the caller charges the table to its creator's memcg.
	 */
	old_memcg = set_active_memcg(q->memcg);
	new = kvcalloc(1UL << bits, sizeof(*new), GFP_KERNEL | q->gfp_account |
		       __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
	set_active_memcg(old_memcg);

	spin_lock_irq(&q->lock);
	if (!new) {
		/* Full at the cap until a retry (kwq_table_full()) grows it. */
		kwq_uncharge(q, kwq_table_bytes(bits));
		q->grow_bits = 0;
		q->grow_err = -ENOMEM;
		q->grow_at = kwq_grow_at(q->hash_bits);
		spin_unlock_irq(&q->lock);
		return;
	}
	q->new_hash = new;
	q->new_bits = bits;
	q->rehash_pos = 0;
	size = 1UL << q->hash_bits;
	spin_unlock_irq(&q->lock);

	for (i = 0; i < size; i = end) {
		end = min(i + KWQ_REHASH_CHUNK, size);
		spin_lock_irq(&q->lock);
		for (; q->rehash_pos < end; q->rehash_pos++) {
			old = &q->hash[q->rehash_pos];
			while ((n = *old)) {
				WRITE_ONCE(*old, n->hnext);
				/* Oldest first here too: to the chain's end. */
				tail = &new[kwq_node_hash(n) &
					    ((1U << bits) - 1)];
				while (*tail)
					tail = &(*tail)->hnext;
				kwq_chain_append(tail, n);
			}
		}
		if (end == size) {
			/*
			 * All moved: the new table is the table. A lockless
			 * reader that sees the new size sees the new table.
			 */
			old = q->hash;
			WRITE_ONCE(q->hash, new);
			new = old;
			kwq_uncharge(q, kwq_table_bytes(q->hash_bits));
			/* Pairs with smp_rmb() in kwq_seen_lockless(). */
			smp_wmb();
			WRITE_ONCE(q->hash_bits, bits);
			q->new_hash = NULL;
			q->rehash_pos = 0;
			q->grow_bits = 0;
			q->grow_err = 0;
			q->grow_at = kwq_grow_at(bits);
		}
		spin_unlock_irq(&q->lock);
		cond_resched();
	}
	/* The old table, empty now, once no lockless reader can be in it. */
	synchronize_rcu();
	kvfree(new);
}

int kwq_table_alloc(struct kwq *q, u32 max_items)
{
	get_random_bytes(&q->hkey, sizeof(q->hkey));
	/*
	 * Start small even for a large item cap (a /dev/kwq queue's cap is
	 * 2^21 by default): the table grows with the keys it holds.
	 */
	q->hash_bits = KWQ_HASH_BITS_MIN;
	if (max_items)
		q->hash_bits = clamp_t(unsigned int, ilog2(max_items),
				       KWQ_HASH_BITS_MIN, KWQ_HASH_BITS_INIT);
	q->grow_at = kwq_grow_at(q->hash_bits);
	INIT_WORK(&q->grow_work, kwq_grow_work);
	if (!kwq_charge(q, kwq_table_bytes(q->hash_bits)))
		return -EDQUOT;
	q->hash = kvcalloc(1UL << q->hash_bits, sizeof(*q->hash),
			   GFP_KERNEL | q->gfp_account);
	return q->hash ? 0 : -ENOMEM;
}

void kwq_table_free(struct kwq *q)
{
	struct kwq_node *n;
	unsigned long i;

	/* No table (its allocation failed): no node and no grow work. */
	if (!q->hash)
		return;
	cancel_work_sync(&q->grow_work);
	for (i = 0; i < (1UL << q->hash_bits); i++) {
		while ((n = q->hash[i])) {
			q->hash[i] = n->hnext;
			kwq_node_slab_free(n);
		}
		/* A million keys: a scheduling point every 64 buckets. */
		if (!(i % KWQ_WALK_CHUNK))
			cond_resched();
	}
	kvfree(q->hash);
	kwq_nodes_free(q->free_list);
	for (i = 0; i < ARRAY_SIZE(q->pool); i++)
		kwq_nodes_free(q->pool[i]);
}

int kwq_table_init(void)
{
	static const char *const names[] = {
		"kwq_node_104", "kwq_node_112", "kwq_node_120", "kwq_node_128",
		"kwq_node_144", "kwq_node_160", "kwq_node_192", "kwq_node_224",
		"kwq_node_288", "kwq_node_448", "kwq_node_704", "kwq_node_max",
	};
	unsigned int i, c = 0;

	static_assert(ARRAY_SIZE(names) == ARRAY_SIZE(kwq_cache_objs));
	for (i = 0; i < ARRAY_SIZE(kwq_cache_of); i++) {
		while (KWQ_NODE_HDR + 4 * i + 4 > kwq_cache_objs[c])
			c++;
		kwq_cache_of[i] = c;
	}
	for (i = 0; i < ARRAY_SIZE(kwq_node_caches); i++) {
		/*
		 * No usercopy whitelist: dev.c copies keys out of nodes
		 * under the queue lock, never straight to userspace. No
		 * SLAB_ACCOUNT: a queue that charges the caller passes
		 * __GFP_ACCOUNT per allocation. Type-safe by RCU: a node
		 * kwq_seen_lockless() reaches stays a node, whatever key.
		 * The slab's free pointer goes in ->queued_ns, a field that
		 * reader never looks at.
		 */
		kwq_node_caches[i] =
			kwq_cache_create_rcu(names[i], kwq_cache_objs[i],
					     offsetof(struct kwq_node,
						      queued_ns));
		if (!kwq_node_caches[i]) {
			while (i--)
				kmem_cache_destroy(kwq_node_caches[i]);
			return -ENOMEM;
		}
		kwq_node_sizes[i] = kmem_cache_size(kwq_node_caches[i]);
	}
	return 0;
}

/* One node cache's end, run on an unbound worker (kwq_table_exit()). */
struct kwq_cache_end {
	struct work_struct work;
	struct kmem_cache *cache;
};

static void kwq_cache_end_fn(struct work_struct *work)
{
	kmem_cache_destroy(container_of(work, struct kwq_cache_end, work)->cache);
}

/*
 * The caches end side by side. kmem_cache_destroy() of a
 * SLAB_TYPESAFE_BY_RCU cache waits for in-flight kfree_rcu() and for
 * an rcu_barrier() (two with CONFIG_SLUB_RCU_DEBUG), and flushes KASAN's
 * quarantine of it: nine in a row made rmmod wait for some thirty RCU
 * barriers. Run at once, the waits overlap (an rcu_barrier() serves
 * every caller that waited for it): on the debug 7.2 kernel the nine
 * took 0.29 s instead of 0.47 s.
 */
void kwq_table_exit(void)
{
	struct kwq_cache_end ends[KWQ_NODE_CACHES];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ends); i++) {
		INIT_WORK_ONSTACK(&ends[i].work, kwq_cache_end_fn);
		ends[i].cache = kwq_node_caches[i];
		queue_work(system_unbound_wq, &ends[i].work);
	}
	for (i = 0; i < ARRAY_SIZE(ends); i++) {
		flush_work(&ends[i].work);
		destroy_work_on_stack(&ends[i].work);
		kwq_node_caches[i] = NULL;
	}
}
