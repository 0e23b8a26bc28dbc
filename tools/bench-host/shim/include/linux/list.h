/* SPDX-License-Identifier: GPL-2.0 */
/* Host shim: the kernel tree's tools/include list.h, and what it lacks. */
#ifndef _SHIM_LINUX_LIST_H
#define _SHIM_LINUX_LIST_H
#include_next <linux/list.h>

#ifndef list_entry_is_head
#define list_entry_is_head(pos, head, member)	(&(pos)->member == (head))
#endif
#endif
