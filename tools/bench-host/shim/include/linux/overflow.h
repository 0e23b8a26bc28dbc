/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HOSTBENCH_OVERFLOW_H
#define _HOSTBENCH_OVERFLOW_H
#include <linux/compiler_types.h>
#define check_add_overflow(a, b, d)	__builtin_add_overflow(a, b, d)
#define check_sub_overflow(a, b, d)	__builtin_sub_overflow(a, b, d)
#define check_mul_overflow(a, b, d)	__builtin_mul_overflow(a, b, d)
static inline size_t size_mul(size_t a, size_t b)
{
	size_t r;

	return __builtin_mul_overflow(a, b, &r) ? SIZE_MAX : r;
}
static inline size_t size_add(size_t a, size_t b)
{
	size_t r;

	return __builtin_add_overflow(a, b, &r) ? SIZE_MAX : r;
}
#define array_size(a, b)	size_mul(a, b)
#define struct_size(p, member, count) \
	size_add(sizeof(*(p)), size_mul(sizeof(*(p)->member), count))
#define flex_array_size(p, member, count) size_mul(count, sizeof(*(p)->member))
#endif
