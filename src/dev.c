// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kwq: the misc device through which userspace reaches kwq queues.
 *
 * Lifetime: the misc device holds a module reference for every open file
 * (fops->owner), so the module cannot be unloaded while any fd is open.
 */

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

#include "compat.h"
#include "kwq_internal.h"

static int kwq_dev_open(struct inode *inode, struct file *file)
{
	return nonseekable_open(inode, file);
}

static int kwq_dev_release(struct inode *inode, struct file *file)
{
	return 0;
}

static long kwq_dev_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	return -ENOTTY;
}

static const struct file_operations kwq_dev_fops = {
	.owner = THIS_MODULE,
	.open = kwq_dev_open,
	.release = kwq_dev_release,
	.unlocked_ioctl = kwq_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = KWQ_NO_LLSEEK,
};

static struct miscdevice kwq_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kwq",
	.fops = &kwq_dev_fops,
	.mode = 0666,
};

int kwq_dev_init(void)
{
	return misc_register(&kwq_misc);
}

void kwq_dev_exit(void)
{
	misc_deregister(&kwq_misc);
}
