// SPDX-License-Identifier: GPL-2.0
/*
 * Per-queue debugfs files: keys, every key of the queue and where it is
 * (kwq_inspect_list()), and metrics, in the Prometheus text exposition
 * format, with
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
#include <linux/delay.h>
#include <linux/kwq.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/string_helpers.h>
#include <linux/stdarg.h>

#include "kwq/keys.h"
#include "kwq/metrics.h"
#include "kwq_internal.h"
#include "layout.h"
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

/*
 * The keys file: every key of the queue, a line each, walked with
 * kwq_inspect_list() KWQ_KEYS_CHUNK keys per call, so a read holds the
 * queue lock for one chunk at a time however large the queue is. A
 * sequential reader sees each key present for the whole read once; a
 * read from offset 0 starts the walk over.
 */
#define KWQ_KEYS_CHUNK	16

struct kwq_keys_iter {
	struct kwq *q;
	u64 cursor;
	bool done;		/* the walk reached its end */
	unsigned int nr, pos;	/* keys in ->infos, the next to show */
	struct kwq_key_info infos[KWQ_KEYS_CHUNK];
};

/* The next key of the walk, NULL at its end (or on an error). */
static struct kwq_key_info *kwq_keys_next_info(struct kwq_keys_iter *it)
{
	int ret;

	while (it->pos == it->nr && !it->done) {
		ret = kwq_inspect_list(it->q, KWQ_KEY_STATES_ALL, &it->cursor,
				       it->infos, KWQ_KEYS_CHUNK);
		if (ret == -EAGAIN) {
			/* The table is being resized: a moment. */
			usleep_range(100, 1000);
			continue;
		}
		it->nr = max(ret, 0);
		it->pos = 0;
		it->done = ret < 0 || !it->cursor;
	}
	return it->pos < it->nr ? &it->infos[it->pos] : NULL;
}

static void *kwq_keys_start(struct seq_file *m, loff_t *pos)
{
	struct kwq_keys_iter *it = m->private;

	if (!*pos) {
		it->cursor = 0;
		it->done = false;
		it->nr = 0;
		it->pos = 0;
	}
	return kwq_keys_next_info(it);
}

static void *kwq_keys_next(struct seq_file *m, void *v, loff_t *pos)
{
	struct kwq_keys_iter *it = m->private;

	++*pos;
	it->pos++;
	return kwq_keys_next_info(it);
}

static void kwq_keys_stop(struct seq_file *m, void *v)
{
}

/* The key, escaped as the tracepoints do, then include/kwq/keys.h's line. */
static int kwq_keys_show(struct seq_file *m, void *v)
{
	const struct kwq_key_info *k = v;
	struct kwq_info_rec rec;

	seq_escape_mem(m, k->key, k->key_len, ESCAPE_ANY | ESCAPE_NAP,
		       " \\\"");
	kwq_info_to_rec(k, &rec);
	kwq_key_render(kwq_metrics_seq, m, &rec);
	return 0;
}

static const struct seq_operations kwq_keys_sops = {
	.start = kwq_keys_start,
	.next = kwq_keys_next,
	.stop = kwq_keys_stop,
	.show = kwq_keys_show,
};

static int kwq_keys_open(struct inode *inode, struct file *file)
{
	struct kwq_keys_iter *it;

	it = __seq_open_private(file, &kwq_keys_sops, sizeof(*it));
	if (!it)
		return -ENOMEM;
	it->q = inode->i_private;
	return 0;
}

static const struct file_operations kwq_keys_fops = {
	.owner = THIS_MODULE,
	.open = kwq_keys_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = seq_release_private,
};

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
	if (IS_ERR(q->debugfs))
		return;
	debugfs_create_file("metrics", 0444, q->debugfs, q, &kwq_metrics_fops);
	/* Keys are the queue's data: root only. */
	debugfs_create_file("keys", 0400, q->debugfs, q, &kwq_keys_fops);
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
