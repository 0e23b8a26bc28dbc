// SPDX-License-Identifier: GPL-2.0
/*
 * kwq: a keyed work queue with client-go workqueue semantics.
 *
 * Module entry points: bring the pieces up in dependency order and tear
 * them down in reverse.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "kwq_internal.h"

static int __init kwq_init(void)
{
	int ret;

	ret = kwq_core_init();
	if (ret)
		return ret;
	kwq_debugfs_init();
	ret = kwq_dev_init();
	if (ret) {
		kwq_debugfs_exit();
		kwq_core_exit();
		return ret;
	}
	pr_info("version " KWQ_VERSION " loaded\n");
	return 0;
}

static void __exit kwq_exit(void)
{
	kwq_dev_exit();
	kwq_registry_exit();
	kwq_debugfs_exit();
	kwq_core_exit();
	pr_info("unloaded\n");
}

module_init(kwq_init);
module_exit(kwq_exit);

MODULE_DESCRIPTION("Keyed work queue with client-go workqueue semantics");
MODULE_AUTHOR("kwq developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(KWQ_VERSION);
