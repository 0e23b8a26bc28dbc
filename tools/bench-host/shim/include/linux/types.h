/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: the kernel's basic types (x86-64: int-ll64). */
#ifndef _HOSTBENCH_TYPES_H
#define _HOSTBENCH_TYPES_H

#include <linux/compiler_types.h>

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef signed char s8;
typedef short s16;
typedef int s32;
typedef long long s64;
typedef u8 __u8;
typedef u16 __u16;
typedef u32 __u32;
typedef u64 __u64;
typedef s8 __s8;
typedef s16 __s16;
typedef s32 __s32;
typedef s64 __s64;
typedef u16 __le16;
typedef u32 __le32;
typedef u64 __le64;
typedef u16 __be16;
typedef u32 __be32;
typedef u64 __be64;
typedef u16 __sum16;
typedef u32 __wsum;
typedef unsigned int gfp_t;
typedef unsigned int slab_flags_t;
typedef unsigned int __poll_t;
typedef unsigned int fmode_t;
typedef u64 phys_addr_t;
typedef unsigned long uintptr_t_kernel;

#define BITS_PER_LONG		64
#define BITS_PER_LONG_LONG	64
#define BITS_PER_BYTE		8
#define DECLARE_BITMAP(name, bits) \
	unsigned long name[((bits) + BITS_PER_LONG - 1) / BITS_PER_LONG]

typedef struct {
	int counter;
} atomic_t;

typedef struct {
	long counter;
} atomic_long_t;

typedef struct {
	s64 counter;
} atomic64_t;

struct list_head {
	struct list_head *next, *prev;
};

struct hlist_head {
	struct hlist_node *first;
};

struct hlist_node {
	struct hlist_node *next, **pprev;
};

struct callback_head {
	struct callback_head *next;
	void (*func)(struct callback_head *head);
} __attribute__((aligned(sizeof(void *))));
#define rcu_head callback_head

typedef void (*rcu_callback_t)(struct rcu_head *head);

#endif
