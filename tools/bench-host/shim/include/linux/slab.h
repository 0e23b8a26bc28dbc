/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host benchmark shim: a small SLUB model (shim.c). Objects are packed into
 * 4 KiB << order slabs at their size rounded to 8 bytes, the free pointer
 * sits in the middle of a free object, and frees to a slab that is not the
 * current one go to that slab's own freelist, as in SLUB; the memory of
 * every cache and of every kmalloc/kvmalloc is counted (hostbench.h).
 */
#ifndef _HOSTBENCH_SLAB_H
#define _HOSTBENCH_SLAB_H
#include <linux/kernel.h>
#include <linux/gfp.h>

struct kmem_cache;

#define SLAB_HWCACHE_ALIGN	0x00002000u
#define SLAB_PANIC		0x00040000u
#define SLAB_TYPESAFE_BY_RCU	0x00080000u
#define SLAB_ACCOUNT		0x04000000u
#define SLAB_RECLAIM_ACCOUNT	0x00020000u
#define SLAB_NO_MERGE		0x01000000u

/* 6.12's struct kmem_cache_args, the fields the shim models */
struct kmem_cache_args {
	unsigned int align;
	unsigned int useroffset;
	unsigned int usersize;
	unsigned int freeptr_offset;
	bool use_freeptr_offset;
	void (*ctor)(void *);
};

struct kmem_cache *hb_kmem_cache_create(const char *name, unsigned int size,
					struct kmem_cache_args *args,
					slab_flags_t flags);
static inline struct kmem_cache *kmem_cache_create_usercopy(const char *name,
		unsigned int size, unsigned int align, slab_flags_t flags,
		unsigned int useroffset, unsigned int usersize,
		void (*ctor)(void *))
{
	struct kmem_cache_args args = {
		.align = align, .useroffset = useroffset,
		.usersize = usersize, .ctor = ctor,
	};

	return hb_kmem_cache_create(name, size, &args, flags);
}
static inline struct kmem_cache *hb_kmem_cache_create_legacy(const char *name,
		unsigned int size, unsigned int align, slab_flags_t flags,
		void (*ctor)(void *))
{
	return kmem_cache_create_usercopy(name, size, align, flags, 0, 0, ctor);
}
/* As 6.12: (name, size, args, flags) or (name, size, align, flags, ctor) */
#define kmem_cache_create(name, size, args, ...)			\
	_Generic((args),						\
		struct kmem_cache_args *: hb_kmem_cache_create,		\
		default: hb_kmem_cache_create_legacy)(name, size, args, __VA_ARGS__)
#define KMEM_CACHE(s, flags) \
	kmem_cache_create(#s, sizeof(struct s), __alignof__(struct s), (flags), NULL)
void kmem_cache_destroy(struct kmem_cache *s);
void *kmem_cache_alloc(struct kmem_cache *s, gfp_t flags);
void kmem_cache_free(struct kmem_cache *s, void *obj);
/* SLUB's all-or-nothing bulk calls, one object at a time (no cheaper). */
int kmem_cache_alloc_bulk(struct kmem_cache *s, gfp_t flags, size_t nr,
			  void **p);
void kmem_cache_free_bulk(struct kmem_cache *s, size_t nr, void **p);
unsigned int kmem_cache_size(struct kmem_cache *s);
static inline void *kmem_cache_zalloc(struct kmem_cache *s, gfp_t flags)
{
	return kmem_cache_alloc(s, flags | __GFP_ZERO);
}

void *kmalloc(size_t size, gfp_t flags);
void kfree(const void *obj);
void *kvmalloc(size_t size, gfp_t flags);
void kvfree(const void *obj);
size_t ksize(const void *obj);
/*
 * SLUB's kmalloc buckets on x86-64: powers of two from 8, with 96 and 192,
 * up to 8 KiB; page orders above.
 */
static inline size_t kmalloc_size_roundup(size_t size)
{
	size_t b = 8;

	if (size > 8192) {
		while (b < size)
			b <<= 1;
		return b < 4096 ? 4096 : b;
	}
	if (size > 64 && size <= 96)
		return 96;
	if (size > 128 && size <= 192)
		return 192;
	while (b < size)
		b <<= 1;
	return b;
}
#define kzalloc(size, flags)		kmalloc(size, (flags) | __GFP_ZERO)
#define kmalloc_array(n, size, flags)	kmalloc(size_mul(n, size), flags)
#define kcalloc(n, size, flags)		kmalloc_array(n, size, (flags) | __GFP_ZERO)
#define kvzalloc(size, flags)		kvmalloc(size, (flags) | __GFP_ZERO)
#define kvmalloc_array(n, size, flags)	kvmalloc(size_mul(n, size), flags)
#define kvcalloc(n, size, flags)	kvmalloc_array(n, size, (flags) | __GFP_ZERO)
#define vmalloc(size)			kvmalloc(size, GFP_KERNEL)
#define vzalloc(size)			kvmalloc(size, GFP_KERNEL | __GFP_ZERO)
#define vfree(p)			kvfree(p)
#define kfree_sensitive(p)		kfree(p)
#endif
