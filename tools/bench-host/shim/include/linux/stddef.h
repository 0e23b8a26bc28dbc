/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HOSTBENCH_STDDEF_H
#define _HOSTBENCH_STDDEF_H
#include <linux/compiler_types.h>
#define sizeof_field(TYPE, MEMBER) sizeof((((TYPE *)0)->MEMBER))
#define offsetofend(TYPE, MEMBER) \
	(offsetof(TYPE, MEMBER) + sizeof_field(TYPE, MEMBER))
#define DECLARE_FLEX_ARRAY(TYPE, NAME) \
	struct { struct { } __empty_##NAME; TYPE NAME[]; }
#endif
