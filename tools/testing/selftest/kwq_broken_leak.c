// SPDX-License-Identifier: GPL-2.0
/* Harness self-test: an allocation nobody ever frees. */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

static void *kwq_broken_leak_ptr;

static int __init kwq_broken_leak_init(void)
{
	kwq_broken_leak_ptr = kmalloc(128, GFP_KERNEL);
	if (!kwq_broken_leak_ptr)
		return -ENOMEM;
	memset(kwq_broken_leak_ptr, 0x5a, 128);
	/* Forget the only reference: kmemleak must notice once unloaded. */
	kwq_broken_leak_ptr = NULL;
	return 0;
}

static void __exit kwq_broken_leak_exit(void)
{
}

module_init(kwq_broken_leak_init);
module_exit(kwq_broken_leak_exit);

MODULE_DESCRIPTION("kwq harness self-test: leaks one allocation");
MODULE_LICENSE("GPL");
