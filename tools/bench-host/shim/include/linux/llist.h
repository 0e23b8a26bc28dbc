/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: lock-less lists, single threaded. */
#ifndef _HOSTBENCH_LLIST_H
#define _HOSTBENCH_LLIST_H
#include <linux/kernel.h>

struct llist_node {
	struct llist_node *next;
};

struct llist_head {
	struct llist_node *first;
};

#define LLIST_HEAD(name)	struct llist_head name = { NULL }

/* True if the list was empty before. */
static inline bool llist_add(struct llist_node *n, struct llist_head *h)
{
	n->next = h->first;
	h->first = n;
	return !n->next;
}

static inline struct llist_node *llist_del_all(struct llist_head *h)
{
	struct llist_node *first = h->first;

	h->first = NULL;
	return first;
}

static inline void init_llist_head(struct llist_head *h)
{
	h->first = NULL;
}

static inline bool llist_empty(const struct llist_head *h)
{
	return !READ_ONCE(h->first);
}

static inline struct llist_node *llist_reverse_order(struct llist_node *n)
{
	struct llist_node *r = NULL, *next;

	for (; n; n = next) {
		next = n->next;
		n->next = r;
		r = n;
	}
	return r;
}

#define llist_entry(ptr, type, member)	container_of(ptr, type, member)
#define llist_for_each_entry_safe(pos, n, node, member)			\
	for (pos = (node) ? llist_entry((node), typeof(*pos), member) : NULL; \
	     pos && (n = pos->member.next ?					\
		     llist_entry(pos->member.next, typeof(*pos), member) :	\
		     NULL, 1);						\
	     pos = n)
#endif
