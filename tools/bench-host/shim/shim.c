// SPDX-License-Identifier: GPL-2.0
/*
 * Host benchmark shims: the kernel services src/ uses, for one thread in
 * userspace. See the headers under include/ for what each one models.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "hostbench.h"

void hostbench_die(const char *file, int line, const char *what)
{
	fflush(stdout);
	fprintf(stderr, "hostbench: %s:%d: %s\n", file, line, what);
	abort();
}

int hostbench_printk(const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vfprintf(stderr, fmt, ap);
	va_end(ap);
	return ret;
}

static struct task_struct hostbench_task = { .pid = 1, .comm = "hostbench" };
struct task_struct *hostbench_current = &hostbench_task;

/* --- spinlocks --- */

void (*hostbench_lock_hook)(void *lock, bool acquire);

void hostbench_spin_lock(spinlock_t *lock)
{
	if (__atomic_exchange_n(&lock->locked, 1, __ATOMIC_ACQUIRE))
		hostbench_die(__FILE__, __LINE__, "spinlock taken twice (self-deadlock)");
	if (unlikely(hostbench_lock_hook))
		hostbench_lock_hook(lock, true);
}

void hostbench_spin_unlock(spinlock_t *lock)
{
	if (unlikely(hostbench_lock_hook))
		hostbench_lock_hook(lock, false);
	if (unlikely(!lock->locked))
		hostbench_die(__FILE__, __LINE__, "unlock of an unlocked spinlock");
	__atomic_store_n(&lock->locked, 0, __ATOMIC_RELEASE);
}

int hostbench_spin_trylock(spinlock_t *lock)
{
	if (__atomic_exchange_n(&lock->locked, 1, __ATOMIC_ACQUIRE))
		return 0;
	if (unlikely(hostbench_lock_hook))
		hostbench_lock_hook(lock, true);
	return 1;
}

unsigned long hostbench_spin_lock_irqsave(spinlock_t *lock)
{
	hostbench_spin_lock(lock);
	return 0;
}

void hostbench_spin_unlock_irqrestore(spinlock_t *lock, unsigned long flags)
{
	hostbench_spin_unlock(lock);
}

/* --- wait queues: never waited on --- */

void __wake_up(struct wait_queue_head *wq_head, unsigned int mode, int nr,
	       void *key)
{
	unsigned long flags;

	spin_lock_irqsave(&wq_head->lock, flags);
	if (!list_empty(&wq_head->head))
		hostbench_die(__FILE__, __LINE__, "a wait queue has a waiter");
	spin_unlock_irqrestore(&wq_head->lock, flags);
}

void prepare_to_wait(struct wait_queue_head *wq_head,
		     struct wait_queue_entry *wq_entry, int state)
{
	hostbench_die(__FILE__, __LINE__, "prepare_to_wait(): would sleep");
}

void prepare_to_wait_exclusive(struct wait_queue_head *wq_head,
			       struct wait_queue_entry *wq_entry, int state)
{
	hostbench_die(__FILE__, __LINE__, "prepare_to_wait_exclusive(): would sleep");
}

void finish_wait(struct wait_queue_head *wq_head,
		 struct wait_queue_entry *wq_entry)
{
}

/* --- deferred work and RCU callbacks --- */

static LIST_HEAD(hostbench_work);
static struct rcu_head *hostbench_rcu_head;
static struct rcu_head **hostbench_rcu_tail = &hostbench_rcu_head;
struct workqueue_struct *system_wq, *system_unbound_wq, *system_long_wq;
unsigned long hostbench_nr_pending;

bool queue_work(struct workqueue_struct *wq, struct work_struct *work)
{
	if (work->pending)
		return false;
	work->pending = true;
	list_add_tail(&work->entry, &hostbench_work);
	hostbench_nr_pending++;
	return true;
}

bool cancel_work(struct work_struct *work)
{
	if (!work->pending)
		return false;
	list_del_init(&work->entry);
	work->pending = false;
	hostbench_nr_pending--;
	return true;
}

bool cancel_work_sync(struct work_struct *work)
{
	return cancel_work(work);
}

bool flush_work(struct work_struct *work)
{
	if (!cancel_work(work))
		return false;
	work->func(work);
	return true;
}

void call_rcu(struct rcu_head *head, rcu_callback_t func)
{
	head->func = func;
	head->next = NULL;
	*hostbench_rcu_tail = head;
	hostbench_rcu_tail = &head->next;
	hostbench_nr_pending++;
}

int hostbench_run_work(void)
{
	struct work_struct *work;
	struct rcu_head *head;
	int n = 0;

	for (;;) {
		if (!list_empty(&hostbench_work)) {
			work = list_first_entry(&hostbench_work,
						struct work_struct, entry);
			cancel_work(work);
			work->func(work);
		} else if (hostbench_rcu_head) {
			/* A grace period has passed for everything queued. */
			head = hostbench_rcu_head;
			hostbench_rcu_head = NULL;
			hostbench_rcu_tail = &hostbench_rcu_head;
			while (head) {
				struct rcu_head *next = head->next;
				unsigned long off = (unsigned long)head->func;

				if (off < 4096)
					kfree((void *)head - off);
				else
					head->func(head);
				head = next;
				hostbench_nr_pending--;
				n++;
			}
			continue;
		} else {
			return n;
		}
		n++;
	}
}

/* --- randomness: fixed seed, so every run hashes alike --- */

static u64 hostbench_rng = 0x6b77712d62656e63ULL;	/* "kwq-benc" */

u64 get_random_u64(void)
{
	u64 z = (hostbench_rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

u32 get_random_u32(void)
{
	return (u32)get_random_u64();
}

void get_random_bytes(void *buf, size_t len)
{
	u8 *p = buf;

	while (len) {
		u64 r = get_random_u64();
		size_t n = min_t(size_t, len, sizeof(r));

		memcpy(p, &r, n);
		p += n;
		len -= n;
	}
}

u64 ktime_get_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

ssize_t strscpy(char *dst, const char *src, size_t count)
{
	size_t len;

	if (!count)
		return -E2BIG;
	len = strnlen(src, count);
	if (len == count) {
		memcpy(dst, src, count - 1);
		dst[count - 1] = '\0';
		return -E2BIG;
	}
	memcpy(dst, src, len + 1);
	return len;
}

/* --- page allocator for the slab model --- */

/*
 * One reservation, handed out in pages; freed slabs' pages are kept per
 * order and reused last in, first out. The per-page metadata (struct slab
 * in the kernel, which lives in struct page) is a separate array, as the
 * kernel's vmemmap is: touching it costs its own cache line.
 */
#define HB_ARENA_BYTES	(16ULL << 30)
#define HB_VMALLOC_BYTES	(16ULL << 30)
#define HB_MAX_ORDER	3

struct hb_slab {
	struct kmem_cache *cache;
	struct hb_slab *head;		/* first page of the slab */
	void *freelist;			/* objects freed while not the cpu slab */
	struct list_head partial;	/* on cache->partial */
	unsigned int inuse;		/* objects not on ->freelist */
	bool on_partial;
	u8 order;
	u8 pad[64 - 46];
};

static char *hb_arena, *hb_arena_next;
static struct hb_slab *hb_meta;
static void *hb_free_pages[HB_MAX_ORDER + 1];

static char *hb_vmalloc_area, *hb_vmalloc_next;

static void *hb_reserve(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		hostbench_die(__FILE__, __LINE__, "cannot reserve address space");
	return p;
}

/*
 * Everything big is mapped here, before main() and so before the first
 * callgrind dump: where a later mmap() lands under valgrind depends on
 * valgrind's own allocations (dump file names, for one), and where memory
 * lands decides which cache sets it uses.
 */
static void __attribute__((constructor)) hb_arena_init(void)
{
	BUILD_BUG_ON(sizeof(struct hb_slab) != 64);
	hb_arena = hb_reserve(HB_ARENA_BYTES);
	hb_meta = hb_reserve((HB_ARENA_BYTES >> PAGE_SHIFT) * sizeof(struct hb_slab));
	hb_arena_next = hb_arena;
	hb_vmalloc_area = hb_reserve(HB_VMALLOC_BYTES);
	hb_vmalloc_next = hb_vmalloc_area;
}

static struct hb_slab *hb_page_meta(const void *addr)
{
	return &hb_meta[((const char *)addr - hb_arena) >> PAGE_SHIFT];
}

static void *hb_alloc_pages(unsigned int order)
{
	void *p = hb_free_pages[order];

	if (p) {
		hb_free_pages[order] = *(void **)p;
		return p;
	}
	if (hb_arena_next + (PAGE_SIZE << order) > hb_arena + HB_ARENA_BYTES)
		hostbench_die(__FILE__, __LINE__, "slab arena exhausted");
	p = hb_arena_next;
	hb_arena_next += PAGE_SIZE << order;
	return p;
}

static void hb_free_pages_order(void *p, unsigned int order)
{
	*(void **)p = hb_free_pages[order];
	hb_free_pages[order] = p;
}

/* --- slab caches (a small SLUB) --- */

struct kmem_cache {
	void *cpu_freelist;		/* objects of ->cpu_slab, LIFO */
	struct hb_slab *cpu_slab;
	unsigned int size;		/* object size rounded to 8 bytes */
	unsigned int object_size;	/* as asked */
	unsigned int offset;		/* free pointer offset in an object */
	unsigned int order;
	unsigned int objects;		/* per slab */
	unsigned int min_partial;
	unsigned long random;		/* freelist pointer hardening */
	struct list_head partial;
	unsigned long nr_partial;
	unsigned long nr_slabs;
	unsigned long live;
	const char *name;
	struct list_head list;
};

static LIST_HEAD(hb_caches);

/* CONFIG_SLAB_FREELIST_HARDENED, as Debian builds it. */
static inline void *hb_get_fp(struct kmem_cache *s, void *obj)
{
	unsigned long ptr_addr = (unsigned long)obj + s->offset;

	return (void *)(*(unsigned long *)ptr_addr ^ s->random ^
			__builtin_bswap64(ptr_addr));
}

static inline void hb_set_fp(struct kmem_cache *s, void *obj, void *fp)
{
	unsigned long ptr_addr = (unsigned long)obj + s->offset;

	*(unsigned long *)ptr_addr = (unsigned long)fp ^ s->random ^
				     __builtin_bswap64(ptr_addr);
}

struct kmem_cache *hb_kmem_cache_create(const char *name, unsigned int size,
					struct kmem_cache_args *args,
					slab_flags_t flags)
{
	struct kmem_cache *s = calloc(1, sizeof(*s));
	unsigned int order, slab_size, align = args->align;

	if (!s)
		return NULL;
	if (args->ctor)
		hostbench_die(__FILE__, __LINE__, "slab constructors are not modelled");
	if (args->use_freeptr_offset &&
	    (!(flags & SLAB_TYPESAFE_BY_RCU) || args->freeptr_offset >= size ||
	     args->freeptr_offset % sizeof(void *)))
		hostbench_die(__FILE__, __LINE__, "bad freeptr_offset");
	if (flags & SLAB_HWCACHE_ALIGN)
		align = max_t(unsigned int, align, L1_CACHE_BYTES);
	align = max_t(unsigned int, align, sizeof(void *));
	s->name = name;
	s->object_size = size;
	/*
	 * SLUB's calculate_sizes(): an RCU-typesafe object keeps its bytes
	 * when freed, so the free pointer goes where the creator said, or
	 * after the object (a pointer more an object); else mid-object.
	 */
	if (args->use_freeptr_offset) {
		s->offset = args->freeptr_offset;
		s->size = ALIGN(size, align);
	} else if (flags & SLAB_TYPESAFE_BY_RCU) {
		s->offset = ALIGN(size, sizeof(void *));
		s->size = ALIGN(s->offset + sizeof(void *), align);
	} else {
		s->size = ALIGN(size, align);
		s->offset = ALIGN_DOWN(s->object_size / 2, sizeof(void *));
	}
	/* SLUB's calculate_order(): the smallest order wasting <= 1/16. */
	for (order = 0; order < HB_MAX_ORDER; order++) {
		slab_size = PAGE_SIZE << order;
		if (slab_size / s->size >= 4 &&
		    slab_size % s->size <= slab_size / 16)
			break;
	}
	s->order = order;
	s->objects = (PAGE_SIZE << order) / s->size;
	if (!s->objects)
		hostbench_die(__FILE__, __LINE__, "slab object larger than a slab");
	s->min_partial = clamp(ilog2(s->size) / 2, 5, 10);
	s->random = get_random_u64();
	INIT_LIST_HEAD(&s->partial);
	list_add_tail(&s->list, &hb_caches);
	return s;
}

void kmem_cache_destroy(struct kmem_cache *s)
{
	if (!s)
		return;
	if (s->live)
		hostbench_die(__FILE__, __LINE__, "kmem_cache_destroy of a cache in use");
	list_del(&s->list);
	free(s);
}

unsigned int kmem_cache_size(struct kmem_cache *s)
{
	return s->object_size;
}

static void hb_partial_add(struct kmem_cache *s, struct hb_slab *slab)
{
	list_add(&slab->partial, &s->partial);
	slab->on_partial = true;
	s->nr_partial++;
}

static void hb_partial_del(struct kmem_cache *s, struct hb_slab *slab)
{
	list_del(&slab->partial);
	slab->on_partial = false;
	s->nr_partial--;
}

static void hb_discard_slab(struct kmem_cache *s, struct hb_slab *slab)
{
	void *base = hb_arena + ((slab - hb_meta) << PAGE_SHIFT);

	slab->cache = NULL;
	hb_free_pages_order(base, slab->order);
	s->nr_slabs--;
}

static struct hb_slab *hb_new_slab(struct kmem_cache *s)
{
	char *base = hb_alloc_pages(s->order), *obj;
	struct hb_slab *slab = hb_page_meta(base);
	unsigned int i;

	for (i = 0; i < (1U << s->order); i++) {
		slab[i].cache = s;
		slab[i].head = slab;
	}
	slab->order = s->order;
	slab->on_partial = false;
	/* Threaded through every object in order, as allocate_slab(). */
	obj = base;
	for (i = 0; i + 1 < s->objects; i++, obj += s->size)
		hb_set_fp(s, obj, obj + s->size);
	hb_set_fp(s, obj, NULL);
	slab->freelist = base;
	slab->inuse = 0;
	s->nr_slabs++;
	return slab;
}

static void *hb_slab_alloc_slow(struct kmem_cache *s)
{
	struct hb_slab *slab = s->cpu_slab;

	/* Objects freed to the cpu slab from elsewhere (get_freelist()). */
	if (!slab || !slab->freelist) {
		/* The cpu slab is full: leave it, take a partial or new one. */
		if (!list_empty(&s->partial)) {
			slab = list_first_entry(&s->partial, struct hb_slab,
						partial);
			hb_partial_del(s, slab);
		} else {
			slab = hb_new_slab(s);
		}
		s->cpu_slab = slab;
	}
	s->cpu_freelist = slab->freelist;
	slab->freelist = NULL;
	slab->inuse = s->objects;
	return s->cpu_freelist;
}

void *kmem_cache_alloc(struct kmem_cache *s, gfp_t flags)
{
	void *obj = s->cpu_freelist;

	if (unlikely(!obj))
		obj = hb_slab_alloc_slow(s);
	s->cpu_freelist = hb_get_fp(s, obj);
	s->live++;
	if (flags & __GFP_ZERO)
		memset(obj, 0, s->object_size);
	return obj;
}

void kmem_cache_free(struct kmem_cache *s, void *obj)
{
	struct hb_slab *slab;
	bool was_full;

	if (!obj)
		return;
	slab = hb_page_meta(obj)->head;
	if (unlikely(slab->cache != s))
		hostbench_die(__FILE__, __LINE__, "kmem_cache_free to the wrong cache");
	s->live--;
	if (likely(slab == s->cpu_slab)) {
		hb_set_fp(s, obj, s->cpu_freelist);
		s->cpu_freelist = obj;
		return;
	}
	/* __slab_free(): to the slab's own freelist. */
	was_full = !slab->freelist;
	hb_set_fp(s, obj, slab->freelist);
	slab->freelist = obj;
	slab->inuse--;
	if (!slab->inuse && s->nr_partial >= s->min_partial) {
		if (slab->on_partial)
			hb_partial_del(s, slab);
		hb_discard_slab(s, slab);
	} else if (was_full && !slab->on_partial) {
		hb_partial_add(s, slab);
	}
}

int kmem_cache_alloc_bulk(struct kmem_cache *s, gfp_t flags, size_t nr,
			  void **p)
{
	size_t i;

	for (i = 0; i < nr; i++)
		p[i] = kmem_cache_alloc(s, flags);
	return nr;
}

/* @s NULL: each object's own cache, as SLUB's kfree_bulk(). */
void kmem_cache_free_bulk(struct kmem_cache *s, size_t nr, void **p)
{
	size_t i;

	for (i = 0; i < nr; i++)
		kmem_cache_free(s ? s : hb_page_meta(p[i])->head->cache, p[i]);
}

int hostbench_caches(struct hostbench_cache_stats *st, int max)
{
	struct kmem_cache *s;
	int n = 0;

	list_for_each_entry(s, &hb_caches, list) {
		if (n < max) {
			st[n].name = s->name;
			st[n].object_size = s->object_size;
			st[n].slab_bytes = PAGE_SIZE << s->order;
			st[n].objects_per_slab = s->objects;
			st[n].live = s->live;
			st[n].slabs = s->nr_slabs;
		}
		n++;
	}
	return n;
}

/* --- kmalloc: glibc, 64-byte aligned, sizes counted --- */

#define HB_HDR	64
#define HB_KMALLOC_MAGIC 0x6b6d616c6c6f6321ULL
static u64 hb_kmalloc_bytes, hb_kvmalloc_bytes;

void *kmalloc(size_t size, gfp_t flags)
{
	char *p = aligned_alloc(HB_HDR, ALIGN(size + HB_HDR, HB_HDR));

	if (!p)
		return NULL;
	((u64 *)p)[0] = size;
	((u64 *)p)[1] = HB_KMALLOC_MAGIC;
	hb_kmalloc_bytes += size;
	if (flags & __GFP_ZERO)
		memset(p + HB_HDR, 0, size);
	return p + HB_HDR;
}

void kfree(const void *obj)
{
	u64 *hdr;

	if (!obj)
		return;
	hdr = (u64 *)((char *)obj - HB_HDR);
	if (hdr[1] != HB_KMALLOC_MAGIC)
		hostbench_die(__FILE__, __LINE__, "kfree of a pointer kmalloc did not give");
	hb_kmalloc_bytes -= hdr[0];
	free(hdr);
}

size_t ksize(const void *obj)
{
	return ((const u64 *)((const char *)obj - HB_HDR))[0];
}

/*
 * kvmalloc() is vmalloc() here, whatever the size: page-aligned, from its
 * own area, after a page that holds the size. Address space is not
 * reused; the pages of a freed area go back to the system.
 */
void *kvmalloc(size_t size, gfp_t flags)
{
	size_t bytes = ALIGN(size, PAGE_SIZE) + PAGE_SIZE;
	char *p = hb_vmalloc_next;

	if (p + bytes > hb_vmalloc_area + HB_VMALLOC_BYTES)
		hostbench_die(__FILE__, __LINE__, "vmalloc area exhausted");
	hb_vmalloc_next += bytes;
	*(u64 *)p = size;
	hb_kvmalloc_bytes += size;
	p += PAGE_SIZE;
	/* Fresh pages are zero, but the kernel clears them: count it. */
	if (flags & __GFP_ZERO)
		memset(p, 0, size);
	return p;
}

void kvfree(const void *obj)
{
	char *p = (char *)obj - PAGE_SIZE;
	u64 size;

	if (!obj)
		return;
	if (p < hb_vmalloc_area || p >= hb_vmalloc_next) {
		/* kvmalloc() may have given kmalloc() memory in the kernel. */
		kfree(obj);
		return;
	}
	size = *(u64 *)p;
	hb_kvmalloc_bytes -= size;
	madvise(p, ALIGN(size, PAGE_SIZE) + PAGE_SIZE, MADV_DONTNEED);
}

void *kmemdup(const void *src, size_t len, gfp_t gfp)
{
	void *p = kmalloc(len, gfp);

	if (p)
		memcpy(p, src, len);
	return p;
}

u64 hostbench_kmalloc_bytes(void)
{
	return hb_kmalloc_bytes;
}

u64 hostbench_kvmalloc_bytes(void)
{
	return hb_kvmalloc_bytes;
}
