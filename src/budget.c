// SPDX-License-Identifier: GPL-2.0
/*
 * Byte budgets (struct kwq_budget, kwq_internal.h): what a queue
 * allocates for itself, its hash table and its nodes is charged to its
 * owner's budget, if it has one, and to each of that budget's parents.
 *
 * A budget's ->used is an atomic counter: charges from queues on other
 * CPUs need no common lock. ->limit is read once per charge; a charge
 * that takes a level past its limit is taken back from that level and
 * every one below it, so a refused charge leaves no trace. This file
 * knows nothing of queues: layout.h's kwq_charge() keeps a queue's own
 * part (->charged, under the queue's lock).
 */

#include <kunit/visibility.h>
#include <linux/atomic.h>
#include <linux/refcount.h>

#include "budget.h"

void kwq_budget_uncharge(struct kwq_budget *b, struct kwq_budget *end,
			 size_t bytes)
{
	for (; b != end; b = b->parent)
		atomic_long_sub(bytes, &b->used);
}

bool kwq_budget_charge(struct kwq_budget *budget, size_t bytes)
{
	struct kwq_budget *b;

	for (b = budget; b; b = b->parent) {
		if (atomic_long_add_return(bytes, &b->used) >
		    READ_ONCE(b->limit)) {
			/* Take back this level's charge and those below. */
			kwq_budget_uncharge(budget, b->parent, bytes);
			return false;
		}
	}
	return true;
}

void kwq_budget_put(struct kwq_budget *b)
{
	if (b && refcount_dec_and_test(&b->ref))
		b->release(b);
}
EXPORT_SYMBOL_IF_KUNIT(kwq_budget_put);
