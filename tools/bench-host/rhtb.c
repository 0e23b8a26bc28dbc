// SPDX-License-Identifier: GPL-2.0
/*
 * Table benchmark: a user of the kernel's rhashtable (lib/rhashtable.c,
 * built from the kernel's source tarball), written as kernel code would
 * use it for kwq's keys: variable-length keys in the object, looked up by
 * a (pointer, length) key, so .obj_hashfn, .hashfn and .obj_cmpfn are
 * set; default sizes, no automatic shrinking; nothing in the table
 * structure is changed.
 *
 * The objects are as big as kwq's node for the same key, from the same
 * kind of slab cache (SLAB_TYPESAFE_BY_RCU, freed at once, as kwq frees
 * its nodes: rhashtable's nulls markers are what makes a lockless lookup
 * safe against that), so the two sides touch the same amount of node
 * memory; the key is right after the rhash_head, in the object's first
 * cache line, the best place for rhashtable's compare.
 *
 * What is measured per operation is split in two: rhtb_table_insert_*()
 * and rhtb_table_remove_*() are the table alone (hash, bucket lock,
 * chain walk, link or unlink); rhtb_insert() and rhtb_remove() add the
 * node's allocation, key copy and free.
 */
#include <linux/kernel.h>
#include <linux/random.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "queue.h"		/* struct kwq_node: its size for a key */

#include <linux/jhash.h>
#include <linux/rhashtable.h>

#include "rhtb.h"

struct rhtb_obj {
	struct rhash_head node;
	u32 len;
	u8 key[];
};

/* What a lookup passes as its key: rhashtable hashes and compares it. */
struct rhtb_key {
	const u8 *p;
	u32 len;
};

struct rhtb {
	struct rhashtable ht;
	enum rhtb_hash hash;
};

/*
 * The object sizes of kwq's first three node caches (src/queue.c,
 * kwq_cache_objs[]): an object is as big as kwq's node for its key.
 */
#define RHTB_KEY_MAX	32
#define RHTB_HDR	offsetof(struct kwq_node, key)
static const unsigned int rhtb_sizes[] = { 112, 120, 128 };
static struct kmem_cache *rhtb_caches[ARRAY_SIZE(rhtb_sizes)];
static hsiphash_key_t rhtb_hkey;

static struct kmem_cache *rhtb_cache_of(size_t len)
{
	unsigned int i = 0;

	while (RHTB_HDR + len > rhtb_sizes[i])
		i++;
	return rhtb_caches[i];
}

/*
 * hsiphash of the key under the secret key, with rhashtable's per-table
 * seed folded into the secret (a new table rehashes differently, as with
 * jhash's seed).
 */
static u32 rhtb_hsiphash(const void *p, u32 len, u32 seed)
{
	hsiphash_key_t k = { { rhtb_hkey.key[0] ^ seed, rhtb_hkey.key[1] } };

	return hsiphash(p, len, &k);
}

static u32 rhtb_sip_hashfn(const void *data, u32 len, u32 seed)
{
	const struct rhtb_key *k = data;

	return rhtb_hsiphash(k->p, k->len, seed);
}

static u32 rhtb_sip_obj_hashfn(const void *data, u32 len, u32 seed)
{
	const struct rhtb_obj *o = data;

	return rhtb_hsiphash(o->key, o->len, seed);
}

static u32 rhtb_jhash_hashfn(const void *data, u32 len, u32 seed)
{
	const struct rhtb_key *k = data;

	return jhash(k->p, k->len, seed);
}

static u32 rhtb_jhash_obj_hashfn(const void *data, u32 len, u32 seed)
{
	const struct rhtb_obj *o = data;

	return jhash(o->key, o->len, seed);
}

static int rhtb_cmpfn(struct rhashtable_compare_arg *arg, const void *obj)
{
	const struct rhtb_key *k = arg->key;
	const struct rhtb_obj *o = obj;

	return o->len != k->len || memcmp(o->key, k->p, k->len);
}

static const struct rhashtable_params rhtb_sip_params = {
	.head_offset = offsetof(struct rhtb_obj, node),
	.hashfn = rhtb_sip_hashfn,
	.obj_hashfn = rhtb_sip_obj_hashfn,
	.obj_cmpfn = rhtb_cmpfn,
	.automatic_shrinking = false,
};

static const struct rhashtable_params rhtb_jhash_params = {
	.head_offset = offsetof(struct rhtb_obj, node),
	.hashfn = rhtb_jhash_hashfn,
	.obj_hashfn = rhtb_jhash_obj_hashfn,
	.obj_cmpfn = rhtb_cmpfn,
	.automatic_shrinking = false,
};

/*
 * The table alone, one pair per hash (the params are constants, as in
 * every rhashtable user, so the inline fast paths specialise on them).
 * Not inlined: the report costs each call.
 */
noinline int rhtb_table_insert_sip(struct rhtb *t, const struct rhtb_key *k,
				   struct rhtb_obj *o);
noinline int rhtb_table_insert_sip(struct rhtb *t, const struct rhtb_key *k,
				   struct rhtb_obj *o)
{
	return rhashtable_lookup_insert_key(&t->ht, k, &o->node,
					    rhtb_sip_params);
}

noinline int rhtb_table_insert_jhash(struct rhtb *t, const struct rhtb_key *k,
				     struct rhtb_obj *o);
noinline int rhtb_table_insert_jhash(struct rhtb *t, const struct rhtb_key *k,
				     struct rhtb_obj *o)
{
	return rhashtable_lookup_insert_key(&t->ht, k, &o->node,
					    rhtb_jhash_params);
}

/* Lookup, then unlink what it found: how rhashtable users remove a key. */
noinline struct rhtb_obj *rhtb_table_remove_sip(struct rhtb *t,
						const struct rhtb_key *k);
noinline struct rhtb_obj *rhtb_table_remove_sip(struct rhtb *t,
						const struct rhtb_key *k)
{
	struct rhtb_obj *o;

	rcu_read_lock();
	o = rhashtable_lookup(&t->ht, k, rhtb_sip_params);
	if (o && rhashtable_remove_fast(&t->ht, &o->node, rhtb_sip_params))
		o = NULL;
	rcu_read_unlock();
	return o;
}

noinline struct rhtb_obj *rhtb_table_remove_jhash(struct rhtb *t,
						  const struct rhtb_key *k);
noinline struct rhtb_obj *rhtb_table_remove_jhash(struct rhtb *t,
						  const struct rhtb_key *k)
{
	struct rhtb_obj *o;

	rcu_read_lock();
	o = rhashtable_lookup(&t->ht, k, rhtb_jhash_params);
	if (o && rhashtable_remove_fast(&t->ht, &o->node, rhtb_jhash_params))
		o = NULL;
	rcu_read_unlock();
	return o;
}

int rhtb_insert(struct rhtb *t, const void *key, size_t len)
{
	struct rhtb_key k = { .p = key, .len = len };
	struct kmem_cache *c;
	struct rhtb_obj *o;
	int ret;

	BUILD_BUG_ON(RHTB_HDR + RHTB_KEY_MAX > 128);
	if (!len || len > RHTB_KEY_MAX)
		return -EINVAL;
	c = rhtb_cache_of(len);
	o = kmem_cache_alloc(c, GFP_KERNEL);
	if (!o)
		return -ENOMEM;
	o->len = len;
	memcpy(o->key, key, len);
	if (t->hash == RHTB_HSIPHASH)
		ret = rhtb_table_insert_sip(t, &k, o);
	else
		ret = rhtb_table_insert_jhash(t, &k, o);
	if (ret)
		kmem_cache_free(c, o);
	return ret;
}

int rhtb_remove(struct rhtb *t, const void *key, size_t len)
{
	struct rhtb_key k = { .p = key, .len = len };
	struct rhtb_obj *o;

	if (!len || len > RHTB_KEY_MAX)
		return -EINVAL;
	if (t->hash == RHTB_HSIPHASH)
		o = rhtb_table_remove_sip(t, &k);
	else
		o = rhtb_table_remove_jhash(t, &k);
	if (!o)
		return -ENOENT;
	kmem_cache_free(rhtb_cache_of(o->len), o);
	return 0;
}

struct rhtb *rhtb_create(enum rhtb_hash hash)
{
	static const char *const names[] = {
		"rhtb_obj_112", "rhtb_obj_120", "rhtb_obj_128",
	};
	unsigned int i;
	struct rhtb *t;

	for (i = 0; i < ARRAY_SIZE(rhtb_caches); i++) {
		if (rhtb_caches[i])
			continue;
		rhtb_caches[i] = kmem_cache_create(names[i], rhtb_sizes[i], 0,
						   SLAB_TYPESAFE_BY_RCU, NULL);
		if (!rhtb_caches[i])
			return NULL;
	}
	get_random_bytes(&rhtb_hkey, sizeof(rhtb_hkey));
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return NULL;
	t->hash = hash;
	if (rhashtable_init(&t->ht, hash == RHTB_HSIPHASH ? &rhtb_sip_params :
			    &rhtb_jhash_params)) {
		kfree(t);
		return NULL;
	}
	return t;
}

static void rhtb_free_obj(void *ptr, void *arg)
{
	struct rhtb_obj *o = ptr;

	kmem_cache_free(rhtb_cache_of(o->len), o);
}

void rhtb_destroy(struct rhtb *t)
{
	rhashtable_free_and_destroy(&t->ht, rhtb_free_obj, NULL);
	kfree(t);
}

unsigned long rhtb_count(struct rhtb *t)
{
	return atomic_read(&t->ht.nelems);
}

unsigned long rhtb_buckets(struct rhtb *t)
{
	return rcu_dereference_raw(t->ht.tbl)->size;
}

const void *rhtb_bucket0(struct rhtb *t)
{
	return rcu_dereference_raw(t->ht.tbl)->buckets;
}

int rhtb_longest_chains(struct rhtb *t, unsigned long *idx, int max,
			unsigned int *len)
{
	struct bucket_table *tbl = rcu_dereference_raw(t->ht.tbl);
	unsigned int i, n, longest = 0;
	struct rhash_head *he;
	int found = 0;

	for (i = 0; i < tbl->size; i++) {
		n = 0;
		rht_for_each(he, tbl, i)
			n++;
		if (n > longest) {
			longest = n;
			found = 0;
		}
		if (n == longest && found < max)
			idx[found++] = i;
	}
	*len = longest;
	return found;
}
