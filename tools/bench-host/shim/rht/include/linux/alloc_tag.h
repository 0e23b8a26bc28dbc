/* SPDX-License-Identifier: GPL-2.0 */
/* Table benchmark shim: !CONFIG_MEM_ALLOC_PROFILING, the hooks are the calls. */
#ifndef _HOSTBENCH_ALLOC_TAG_H
#define _HOSTBENCH_ALLOC_TAG_H
#define alloc_hooks(call)		(call)
#define alloc_hooks_tag(tag, call)	(call)
#define alloc_tag_record(p)		do { } while (0)
#endif
