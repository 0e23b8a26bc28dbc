/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: as the kernel's linux/unaligned.h (packed structs). */
#ifndef _HOSTBENCH_UNALIGNED_H
#define _HOSTBENCH_UNALIGNED_H
#include <linux/kernel.h>
#define __get_unaligned_t(type, ptr) ({					\
	const struct { type x; } __packed *__pptr = (typeof(__pptr))(ptr); \
	__pptr->x;							\
})
#define __put_unaligned_t(type, val, ptr) do {				\
	struct { type x; } __packed *__pptr = (typeof(__pptr))(ptr);	\
	__pptr->x = (val);						\
} while (0)
#define get_unaligned(ptr)	__get_unaligned_t(typeof(*(ptr)), (ptr))
#define put_unaligned(val, ptr)	__put_unaligned_t(typeof(*(ptr)), (val), (ptr))
static inline u16 get_unaligned_le16(const void *p) { return __get_unaligned_t(u16, p); }
static inline u32 get_unaligned_le32(const void *p) { return __get_unaligned_t(u32, p); }
static inline u64 get_unaligned_le64(const void *p) { return __get_unaligned_t(u64, p); }
static inline void put_unaligned_le16(u16 v, void *p) { __put_unaligned_t(u16, v, p); }
static inline void put_unaligned_le32(u32 v, void *p) { __put_unaligned_t(u32, v, p); }
static inline void put_unaligned_le64(u64 v, void *p) { __put_unaligned_t(u64, v, p); }
static inline u32 get_unaligned_be32(const void *p) { return __builtin_bswap32(__get_unaligned_t(u32, p)); }
static inline u64 get_unaligned_be64(const void *p) { return __builtin_bswap64(__get_unaligned_t(u64, p)); }
#endif
