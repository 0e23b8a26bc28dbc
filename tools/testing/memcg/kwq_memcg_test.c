// SPDX-License-Identifier: GPL-2.0
/*
 * kwq_memcg_test: a module that adds keys on behalf of userspace, for
 * userspace/tests/memcg_test.c. It creates two queues through kwq's
 * exported API, one with KWQ_CONFIG_CHARGE_CALLER and one kernel-owned
 * (no flag), and a debugfs file for each:
 *
 *	/sys/kernel/debug/kwq_memcg_test/caller
 *	/sys/kernel/debug/kwq_memcg_test/kernel
 *
 * write() adds its bytes as one key with kwq_add(), called in the
 * writing task's context (so that task's memory cgroup is the caller's),
 * and returns the length written or kwq_add()'s error. read() takes the
 * next ready key without waiting, finishes it (kwq_done()) and returns
 * it; 0 once no key is ready. Test-only: root-only files, no locking
 * beyond the queue's own.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kwq.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/uaccess.h>

static struct kwq *memcg_test_caller_q;
static struct kwq *memcg_test_kernel_q;
static struct dentry *memcg_test_dir;

static ssize_t memcg_test_write(struct file *file, const char __user *buf,
				size_t len, loff_t *ppos)
{
	struct kwq *q = file->private_data;
	char key[KWQ_KEY_MAX];
	int ret;

	if (!len || len > sizeof(key))
		return -EINVAL;
	if (copy_from_user(key, buf, len))
		return -EFAULT;
	ret = kwq_add(q, key, len);
	return ret ?: len;
}

static ssize_t memcg_test_read(struct file *file, char __user *buf,
			       size_t len, loff_t *ppos)
{
	struct kwq *q = file->private_data;
	char key[KWQ_KEY_MAX];
	struct kwq_item item;
	const void *k;
	size_t klen;
	int ret;

	if (len < sizeof(key))
		return -EINVAL;
	ret = kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &item);
	if (ret == -EAGAIN)
		return 0;
	if (ret)
		return ret;
	k = kwq_item_key(&item, &klen);
	memcpy(key, k, klen);
	ret = kwq_done(q, &item);
	if (ret)
		return ret;
	if (copy_to_user(buf, key, klen))
		return -EFAULT;
	return klen;
}

static const struct file_operations memcg_test_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = memcg_test_read,
	.write = memcg_test_write,
	.llseek = noop_llseek,
};

static int __init memcg_test_init(void)
{
	struct kwq_config cfg = { .flags = KWQ_CONFIG_CHARGE_CALLER };
	int ret;

	memcg_test_caller_q = kwq_create("kwq_memcg_test.caller", &cfg);
	if (IS_ERR(memcg_test_caller_q))
		return PTR_ERR(memcg_test_caller_q);
	/* All defaults: a kernel-owned queue, charged to no cgroup. */
	memcg_test_kernel_q = kwq_create("kwq_memcg_test.kernel", NULL);
	if (IS_ERR(memcg_test_kernel_q)) {
		ret = PTR_ERR(memcg_test_kernel_q);
		goto err_caller;
	}
	memcg_test_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	ret = -ENODEV;
	if (IS_ERR(memcg_test_dir))
		goto err_kernel;
	debugfs_create_file("caller", 0600, memcg_test_dir,
			    memcg_test_caller_q, &memcg_test_fops);
	debugfs_create_file("kernel", 0600, memcg_test_dir,
			    memcg_test_kernel_q, &memcg_test_fops);
	return 0;

err_kernel:
	kwq_destroy(memcg_test_kernel_q);
err_caller:
	kwq_destroy(memcg_test_caller_q);
	return ret;
}

static void __exit memcg_test_exit(void)
{
	/* Waits for the reads and writes in progress. */
	debugfs_remove(memcg_test_dir);
	kwq_destroy(memcg_test_kernel_q);
	kwq_destroy(memcg_test_caller_q);
}

module_init(memcg_test_init);
module_exit(memcg_test_exit);

MODULE_DESCRIPTION("kwq test: a module adding keys for the writing task (memcg charging)");
MODULE_LICENSE("GPL");
