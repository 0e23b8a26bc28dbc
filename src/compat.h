/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API differences between the kernels kwq supports (6.1 onwards),
 * in one place. Each entry names the version that changed the API; where
 * distributions backport a helper, Kbuild probes the headers and passes
 * KWQ_HAVE_* so the probe wins over the version number.
 */
#ifndef _KWQ_COMPAT_H
#define _KWQ_COMPAT_H

#include <linux/version.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/ipc_namespace.h>
#include <linux/proc_ns.h>
#include <linux/slab.h>

/* 6.12 removed no_llseek: a NULL .llseek now means "not seekable". */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
#define KWQ_NO_LLSEEK no_llseek
#else
#define KWQ_NO_LLSEEK NULL
#endif

/* 6.13 added hrtimer_setup(); 6.15 deleted hrtimer_init(). */
#if !defined(KWQ_HAVE_HRTIMER_SETUP) && LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*function)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

/*
 * 6.13 made the namespace of MODULE_IMPORT_NS() a string literal; before,
 * the macro stringified a bare token. KWQ_MODULE_IMPORT_NS() takes the
 * token on every kernel.
 */
#if defined(KWQ_HAVE_IMPORT_NS_STRING) || LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define KWQ_MODULE_IMPORT_NS(ns) MODULE_IMPORT_NS(#ns)
#else
#define KWQ_MODULE_IMPORT_NS(ns) MODULE_IMPORT_NS(ns)
#endif

/*
 * put_ipc_ns() is exported only by later kernels (Debian's 6.12 has it,
 * 6.1 not). Every version drops a reference the way nsfs and setns() do,
 * through the namespace's own operations (ipcns_put() calls put_ipc_ns()),
 * so that is used everywhere. Without CONFIG_IPC_NS, get_ipc_ns() took
 * nothing.
 */
static inline void kwq_put_ipc_ns(struct ipc_namespace *ns)
{
#ifdef CONFIG_IPC_NS
	if (ns)
		ns->ns.ops->put(&ns->ns);
#endif
}

/*
 * Whether @ns has no reference left but the caller's one: no task, nsfs
 * file, bind mount or shm mapping holds it, so nothing can enter it or
 * take a reference to it any more except through the caller. 6.18 renamed
 * ns_common's count to __ns_ref, read through ns_ref_read() (Kbuild probes
 * the header for it). Without CONFIG_IPC_NS there is one IPC namespace,
 * the initial one, never unreferenced.
 */
static inline bool kwq_ipc_ns_last_ref(struct ipc_namespace *ns)
{
#if !defined(CONFIG_IPC_NS)
	return false;
#elif defined(KWQ_HAVE_NS_REF_READ)
	return ns_ref_read(ns) == 1;
#else
	return refcount_read(&ns->ns.count) == 1;
#endif
}

/*
 * A SLAB_TYPESAFE_BY_RCU cache of @size-byte objects whose free pointer
 * lives at @freeptr inside the object, where the kernel has struct
 * kmem_cache_args (6.12); before, SLUB puts it after the object, which
 * costs every object a pointer more.
 */
static inline struct kmem_cache *
kwq_cache_create_rcu(const char *name, unsigned int size, unsigned int freeptr)
{
#ifdef KWQ_HAVE_FREEPTR_OFFSET
	struct kmem_cache_args args = {
		.freeptr_offset = freeptr,
		.use_freeptr_offset = true,
	};

	return kmem_cache_create(name, size, &args, SLAB_TYPESAFE_BY_RCU);
#else
	return kmem_cache_create(name, size, 0, SLAB_TYPESAFE_BY_RCU, NULL);
#endif
}

/*
 * vm_flags_set() and vm_flags_clear(): 6.3 made vm_flags read-only
 * outside them; before, the field was written directly. For files that
 * included <linux/mm.h> (ring.c) only.
 */
#if !defined(KWQ_HAVE_VM_FLAGS_SET) && defined(_LINUX_MM_H)
static inline void vm_flags_set(struct vm_area_struct *vma,
				unsigned long flags)
{
	vma->vm_flags |= flags;
}

static inline void vm_flags_clear(struct vm_area_struct *vma,
				  unsigned long flags)
{
	vma->vm_flags &= ~flags;
}
#endif

#endif /* _KWQ_COMPAT_H */
