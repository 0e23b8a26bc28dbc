// SPDX-License-Identifier: GPL-2.0
/*
 * A shared ring's memory (Documentation/rings.rst): setup (the pages of
 * the process's region and the kernel's, their vmap()s, the charge to
 * the memcg and the user's budget, the lease slots' arrays, the queue's
 * status page mirrored), the mmap() of the regions through an anonymous
 * file, and the release when the fd closes (what it published applied
 * first). struct kwq_rings.lock, then the ring's ->lock, as in ring.c.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/kwq.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <uapi/linux/kwq.h>

#include "budget.h"
#include "compat.h"
#include "kwq_internal.h"
#include "ring.h"
#include "ring_internal.h"

static void kwq_ring_free(struct kwq_ring *r)
{
	unsigned int i;

	if (r->user)
		vunmap(r->user);
	if (r->kern)
		vunmap(r->kern);
	/* Pages still mapped somewhere live on until munmap(). */
	for (i = 0; r->pages && i < r->nr_upages + r->nr_kpages; i++)
		if (r->pages[i])
			put_page(r->pages[i]);
	kvfree(r->pages);
	kvfree(r->items);
	kfree(r->done_items);
	kfree(r->free);
	kfree(r->state);
	kfree(r->slot_len);
	kfree(r->recs);
	kfree(r->arena);
	if (r->budget) {
		kwq_budget_uncharge(r->budget, NULL, r->charged);
		kwq_budget_put(r->budget);
	}
	mem_cgroup_put(r->memcg);
	mutex_destroy(&r->lock);
	kfree(r);
}

static void *kwq_ring_vmap(struct page **pages, unsigned int nr)
{
	return vmap(pages, nr, VM_MAP, PAGE_KERNEL);
}

static int kwq_ring_alloc(struct kwq_ring *r)
{
	unsigned int i, nr = r->nr_upages + r->nr_kpages;

	r->pages = kvcalloc(nr, sizeof(*r->pages), GFP_KERNEL_ACCOUNT);
	if (!r->pages)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		r->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!r->pages[i])
			return -ENOMEM;
	}
	r->user = kwq_ring_vmap(r->pages, r->nr_upages);
	r->kern = kwq_ring_vmap(r->pages + r->nr_upages, r->nr_kpages);
	r->items = kvcalloc(r->nleases ?: 1, sizeof(*r->items),
			    GFP_KERNEL_ACCOUNT);
	r->free = kcalloc(r->nleases ?: 1, sizeof(*r->free),
			  GFP_KERNEL_ACCOUNT);
	r->state = kzalloc(r->nleases ?: 1, GFP_KERNEL_ACCOUNT);
	r->slot_len = kcalloc(r->nleases ?: 1, sizeof(*r->slot_len),
			      GFP_KERNEL_ACCOUNT);
	r->recs = kcalloc(KWQ_RING_CHUNK, sizeof(*r->recs),
			  GFP_KERNEL_ACCOUNT);
	r->done_items = kcalloc(KWQ_RING_CHUNK, sizeof(*r->done_items),
				GFP_KERNEL_ACCOUNT);
	r->arena = kmalloc(KWQ_RING_ARENA, GFP_KERNEL_ACCOUNT);
	if (!r->user || !r->kern || !r->items || !r->free || !r->state ||
	    !r->slot_len || !r->recs || !r->done_items || !r->arena)
		return -ENOMEM;
	for (i = 0; i < r->nleases; i++)
		r->free[i] = r->nleases - 1 - i;
	r->nfree = r->nleases;
	return 0;
}

/*
 * Under rs->lock, for the queue's first ring: the core keeps the ready
 * count in the status page from now on (queues without rings do not pay
 * for the store).
 */
static void kwq_rings_mirror(struct kwq_rings *rs, struct kwq *q)
{
	lockdep_assert_held(&rs->lock);
	if (rs->mirrored)
		return;
	rs->mirrored = true;
	if (kwq_shutting_down(q))
		rs->status->flags |= KWQ_STATUS_SHUTDOWN;
	kwq_set_ready_mirror(q, &rs->status->ready);
}

static bool kwq_ring_size_ok(u32 n)
{
	return is_power_of_2(n) && n >= KWQ_RING_ENTRIES_MIN &&
	       n <= KWQ_RING_ENTRIES_MAX;
}

int kwq_ring_setup(struct kwq_rings *rs, struct kwq *q, void *owner,
		   unsigned long *armed, struct kwq_budget *budget,
		   struct kwq_ring_setup_args *a, struct kwq_ring **ringp)
{
	size_t usize, ksize;
	struct kwq_ring *r;
	int ret;

	if (!rs->status)
		return -EOPNOTSUPP;
	if (!kwq_ring_size_ok(a->sq_entries) ||
	    !kwq_ring_size_ok(a->cq_entries) ||
	    a->lease_slots > KWQ_RING_LEASES_MAX || a->flags)
		return -EINVAL;
	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return -ENOMEM;
	mutex_init(&r->lock);
	r->q = q;
	r->owner = owner;
	r->armed = armed;
	r->sq_entries = a->sq_entries;
	r->cq_entries = a->cq_entries;
	r->nleases = a->lease_slots;
	r->leases_off = ALIGN(KWQ_RK_CQES + a->cq_entries *
			      sizeof(struct kwq_cqe), 64);
	usize = PAGE_ALIGN(KWQ_RU_SQES + (size_t)a->sq_entries * KWQ_SQE_SIZE);
	ksize = PAGE_ALIGN(r->leases_off +
			   (size_t)a->lease_slots * KWQ_LEASE_SLOT_SIZE);
	r->nr_upages = usize >> PAGE_SHIFT;
	r->nr_kpages = ksize >> PAGE_SHIFT;
	/* What a ring costs counts against its setter's budget. */
	r->charged = usize + ksize + a->lease_slots *
		     (sizeof(struct kwq_item) + 5) + KWQ_RING_ARENA +
		     KWQ_RING_CHUNK * (sizeof(struct kwq_ring_rec) +
				       sizeof(struct kwq_item)) + sizeof(*r);
	if (budget) {
		if (!kwq_budget_charge(budget, r->charged)) {
			kfree(r);
			return -EDQUOT;
		}
		r->budget = budget;
		refcount_inc(&budget->ref);
	}
	if (current->mm)
		r->memcg = get_mem_cgroup_from_mm(current->mm);
	ret = kwq_ring_alloc(r);
	if (ret)
		goto out_free;

	mutex_lock(&rs->lock);
	kwq_rings_mirror(rs, q);
	list_add_tail(&r->node, &rs->list);
	WRITE_ONCE(rs->nr, rs->nr + 1);
	mutex_unlock(&rs->lock);

	a->user_size = usize;
	a->kernel_size = ksize;
	a->status_size = PAGE_SIZE;
	a->sq_tail_off = KWQ_RU_SQ_TAIL;
	a->cq_head_off = KWQ_RU_CQ_HEAD;
	a->sqes_off = KWQ_RU_SQES;
	a->sq_head_off = KWQ_RK_SQ_HEAD;
	a->cq_tail_off = KWQ_RK_CQ_TAIL;
	a->ring_flags_off = KWQ_RK_FLAGS;
	a->cqes_off = KWQ_RK_CQES;
	a->leases_off = r->leases_off;
	*ringp = r;
	return 0;

out_free:
	kwq_ring_free(r);
	return ret;
}

/* The file a ring's mapping holds instead of the fd: nothing but itself. */
static const struct file_operations kwq_ring_map_fops = {
	.owner = THIS_MODULE,
};

int kwq_ring_mmap(struct kwq_rings *rs, struct kwq_ring *r,
		  struct vm_area_struct *vma)
{
	unsigned long size = vma->vm_end - vma->vm_start, nr;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	struct page **pages;
	struct file *file;
	bool ro = true;
	int ret;

	switch (off) {
	case KWQ_RING_OFF_USER:
		pages = r->pages;
		nr = r->nr_upages;
		ro = false;
		break;
	case KWQ_RING_OFF_KERNEL:
		pages = r->pages + r->nr_upages;
		nr = r->nr_kpages;
		break;
	case KWQ_RING_OFF_STATUS:
		/* Set before the ring was listed; constant since. */
		pages = &rs->status_page;
		nr = 1;
		break;
	default:
		return -EINVAL;
	}
	if (size != nr << PAGE_SHIFT || !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (ro) {
		if (vma->vm_flags & VM_WRITE)
			return -EPERM;
		vm_flags_clear(vma, VM_MAYWRITE);
	}
	/* Not inherited, not grown, not in core dumps. */
	vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	file = anon_inode_getfile("[kwq-ring]", &kwq_ring_map_fops, NULL,
				  O_RDWR);
	if (IS_ERR(file))
		return PTR_ERR(file);
	ret = vm_insert_pages(vma, vma->vm_start, pages, &nr);
	if (!ret)
		vma_set_file(vma, file);
	fput(file);
	return ret;
}

void kwq_ring_release(struct kwq_rings *rs, struct kwq_ring *r)
{
	u32 slot;
	bool full;

	mutex_lock(&rs->lock);
	mutex_lock(&r->lock);
	/*
	 * Everything published is applied, completions or not: at most one
	 * ring's worth (a thread still writing it gets no more than that).
	 */
	r->closing = true;
	kwq_ring_drain(r, r->sq_entries, &full);
	list_del(&r->node);
	WRITE_ONCE(rs->nr, rs->nr - 1);
	/* The leases end with the fd's (kwq_release_owner()). */
	for (slot = 0; slot < r->nleases; slot++)
		r->state[slot] = KWQ_SLOT_FREE;
	mutex_unlock(&r->lock);
	mutex_unlock(&rs->lock);
	kwq_ring_free(r);
}
