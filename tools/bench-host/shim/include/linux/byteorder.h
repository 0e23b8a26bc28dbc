/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: x86-64 is little endian. */
#ifndef _HOSTBENCH_BYTEORDER_H
#define _HOSTBENCH_BYTEORDER_H
#include <linux/types.h>
#define __LITTLE_ENDIAN_BITFIELD
#define le16_to_cpu(x)		((u16)(__force u16)(x))
#define le32_to_cpu(x)		((u32)(__force u32)(x))
#define le64_to_cpu(x)		((u64)(__force u64)(x))
#define cpu_to_le16(x)		((__force __le16)(u16)(x))
#define cpu_to_le32(x)		((__force __le32)(u32)(x))
#define cpu_to_le64(x)		((__force __le64)(u64)(x))
#define be16_to_cpu(x)		__builtin_bswap16((__force u16)(x))
#define be32_to_cpu(x)		__builtin_bswap32((__force u32)(x))
#define be64_to_cpu(x)		__builtin_bswap64((__force u64)(x))
#define cpu_to_be16(x)		((__force __be16)__builtin_bswap16(x))
#define cpu_to_be32(x)		((__force __be32)__builtin_bswap32(x))
#define cpu_to_be64(x)		((__force __be64)__builtin_bswap64(x))
static inline u16 le16_to_cpup(const __le16 *p) { return *p; }
static inline u32 le32_to_cpup(const __le32 *p) { return *p; }
static inline u64 le64_to_cpup(const __le64 *p) { return *p; }
#endif
