// SPDX-License-Identifier: GPL-2.0
/*
 * Per-queue metrics file in the Prometheus text exposition format, with
 * client-go's workqueue_* names (label name="<queue>") and kwq_* extras:
 * /sys/kernel/debug/kwq/<queue>/metrics for the queues of kernel callers,
 * kwq/ipc:<inum>/<queue>/metrics for those created through /dev/kwq in
 * the IPC namespace of inode number <inum> (dev.c makes that directory;
 * ':' is not allowed in queue names, so it never collides with a queue).
 * Documentation/metrics.rst explains the choice of debugfs and every
 * metric; kwqctl stats --prometheus prints the same text from the stats
 * ioctl.
 *
 * Locking and lifetime: a queue's directory is created and removed under
 * the lock that guards its name: kwq_registry_lock for kernel queues
 * (kwq_create() and kwq_destroy(), registry.c), kwq_uq_lock for /dev/kwq
 * queues (dev.c), so a queue being destroyed and a new queue of the same
 * name never race for the directory. The file is a plain
 * debugfs_create_file(): debugfs wraps
 * every file operation in debugfs_file_get()/put(), and removing the
 * file waits for the operations in progress, so a reader never sees a
 * queue that kwq_destroy() let go. A reader takes only q->lock, through
 * kwq_get_stats_args(). The metrics and their text are
 * include/kwq/metrics.h's, which libkwq compiles too.
 *
 * debugfs is optional: without it (or with debugfs=off) every call here
 * fails quietly and the queues work as before.
 */

#include <linux/debugfs.h>
#include <linux/kwq.h>
#include <linux/seq_file.h>
#include <linux/stdarg.h>

#include "kwq/metrics.h"
#include "kwq_internal.h"
#include "queue.h"
#include "stats.h"

static struct dentry *kwq_debugfs_root;

/* kwq_metrics_render()'s printer: the seq_file. */
static __printf(2, 3) void kwq_metrics_seq(void *ctx, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	seq_vprintf(ctx, fmt, args);
	va_end(args);
}

/* The table and the renderer are libkwq's too: kwqctl stats --prometheus. */
static int kwq_metrics_show(struct seq_file *m, void *v)
{
	struct kwq *q = m->private;
	struct kwq_stats_args st;

	if (kwq_get_stats_args(q, &st))
		return -EINVAL;
	kwq_metrics_render(kwq_metrics_seq, m, q->name, &st);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kwq_metrics);

/* A directory for dev.c's queues of one namespace (an ERR_PTR if none). */
struct dentry *kwq_debugfs_dir(const char *name)
{
	return debugfs_create_dir(name, kwq_debugfs_root);
}

/* Under the lock of @q's name (see above); @parent NULL: kwq/. */
void kwq_debugfs_add(struct kwq *q, struct dentry *parent)
{
	q->debugfs = debugfs_create_dir(q->name, parent ?: kwq_debugfs_root);
	/* "." and ".." are valid queue names but not directory names. */
	if (!IS_ERR(q->debugfs))
		debugfs_create_file("metrics", 0444, q->debugfs, q,
				    &kwq_metrics_fops);
}

/* Under the lock of @q's name; waits for readers of the file. */
void kwq_debugfs_remove(struct kwq *q)
{
	debugfs_remove(q->debugfs);
	q->debugfs = NULL;
}

void kwq_debugfs_init(void)
{
	kwq_debugfs_root = debugfs_create_dir("kwq", NULL);
}

void kwq_debugfs_exit(void)
{
	debugfs_remove(kwq_debugfs_root);
	kwq_debugfs_root = NULL;
}
