/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: the RCU list variants are the plain ones here. */
#ifndef _HOSTBENCH_RCULIST_H
#define _HOSTBENCH_RCULIST_H
#include <linux/list.h>
#include <linux/rcupdate.h>
#define list_add_rcu(n, h)		list_add(n, h)
#define list_add_tail_rcu(n, h)		list_add_tail(n, h)
#define list_del_rcu(e)			__list_del_entry(e)
#define list_replace_rcu(o, n)		list_replace(o, n)
#define hlist_add_head_rcu(n, h)	hlist_add_head(n, h)
#define hlist_add_before_rcu(n, next)	hlist_add_before(n, next)
#define hlist_add_behind_rcu(n, prev)	hlist_add_behind(n, prev)
#define hlist_del_rcu(n)		__hlist_del(n)
#define hlist_del_init_rcu(n)		hlist_del_init(n)
#define list_for_each_entry_rcu(pos, head, member, cond...) \
	list_for_each_entry(pos, head, member)
#define hlist_for_each_entry_rcu(pos, head, member, cond...) \
	hlist_for_each_entry(pos, head, member)
#define list_first_or_null_rcu(h, t, m)	list_first_entry_or_null(h, t, m)
#endif
