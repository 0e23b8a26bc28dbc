// SPDX-License-Identifier: GPL-2.0
/* Harness self-test: a WARN at load time. */
#include <linux/bug.h>
#include <linux/module.h>

static int __init kwq_broken_warn_init(void)
{
	WARN_ON(1);
	return 0;
}

static void __exit kwq_broken_warn_exit(void)
{
}

module_init(kwq_broken_warn_init);
module_exit(kwq_broken_warn_exit);

MODULE_DESCRIPTION("kwq harness self-test: WARN_ON(1) at load");
MODULE_LICENSE("GPL");
