/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Byte budgets (budget.c): charge and take back bytes along a chain of
 * budgets. struct kwq_budget and kwq_budget_put() are in kwq_internal.h,
 * for dev.c, which makes them.
 */
#ifndef _KWQ_BUDGET_H
#define _KWQ_BUDGET_H

#include <linux/types.h>

#include "kwq_internal.h"

/*
 * Charge @bytes to @b and each of its parents; false, and nothing
 * charged, if that takes any of them past its limit.
 */
bool kwq_budget_charge(struct kwq_budget *b, size_t bytes);
/* Take back @bytes from @b and its parents up to (not including) @end. */
void kwq_budget_uncharge(struct kwq_budget *b, struct kwq_budget *end,
			 size_t bytes);

#endif /* _KWQ_BUDGET_H */
