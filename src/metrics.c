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
 * (kwq_create() and kwq_destroy(), queue.c), kwq_uq_lock for /dev/kwq
 * queues (dev.c), so a queue being destroyed and a new queue of the same
 * name never race for the directory. The file is a plain
 * debugfs_create_file(): debugfs wraps
 * every file operation in debugfs_file_get()/put(), and removing the
 * file waits for the operations in progress, so a reader never sees a
 * queue that kwq_destroy() let go. A reader takes only q->lock, through
 * kwq_get_stats().
 *
 * debugfs is optional: without it (or with debugfs=off) every call here
 * fails quietly and the queues work as before.
 */

#include <linux/debugfs.h>
#include <linux/kwq.h>
#include <linux/math64.h>
#include <linux/seq_file.h>

#include "kwq_internal.h"
#include "queue.h"

static struct dentry *kwq_debugfs_root;

/* Histogram bounds as client_golang prints them. */
static const char * const kwq_le[KWQ_HIST_BUCKETS] = {
	"1e-08", "1e-07", "1e-06", "1e-05", "0.0001",
	"0.001", "0.01", "0.1", "1", "10",
};

/* Nanoseconds as seconds, exactly, without trailing zeroes. */
static void kwq_seq_seconds(struct seq_file *m, u64 ns)
{
	u32 frac;
	u64 sec = div_u64_rem(ns, NSEC_PER_SEC, &frac);
	int width = 9;

	if (!frac) {
		seq_printf(m, "%llu\n", sec);
		return;
	}
	while (!(frac % 10)) {
		frac /= 10;
		width--;
	}
	seq_printf(m, "%llu.%0*u\n", sec, width, frac);
}

static void kwq_seq_head(struct seq_file *m, const char *metric,
			 const char *type, const char *help)
{
	seq_printf(m, "# HELP %s %s\n# TYPE %s %s\n", metric, help, metric,
		   type);
}

static void kwq_seq_u64(struct seq_file *m, const char *name,
			const char *metric, const char *type,
			const char *help, u64 val)
{
	kwq_seq_head(m, metric, type, help);
	seq_printf(m, "%s{name=\"%s\"} %llu\n", metric, name, val);
}

static void kwq_seq_secs(struct seq_file *m, const char *name,
			 const char *metric, const char *help, u64 ns)
{
	kwq_seq_head(m, metric, "gauge", help);
	seq_printf(m, "%s{name=\"%s\"} ", metric, name);
	kwq_seq_seconds(m, ns);
}

static void kwq_seq_hist(struct seq_file *m, const char *name,
			 const char *metric, const char *help,
			 const struct kwq_histogram *h)
{
	unsigned int i;

	kwq_seq_head(m, metric, "histogram", help);
	for (i = 0; i < KWQ_HIST_BUCKETS; i++)
		seq_printf(m, "%s_bucket{name=\"%s\",le=\"%s\"} %llu\n",
			   metric, name, kwq_le[i], h->le[i]);
	seq_printf(m, "%s_bucket{name=\"%s\",le=\"+Inf\"} %llu\n", metric,
		   name, h->count);
	seq_printf(m, "%s_sum{name=\"%s\"} ", metric, name);
	kwq_seq_seconds(m, h->sum_ns);
	seq_printf(m, "%s_count{name=\"%s\"} %llu\n", metric, name, h->count);
}

/* Keep in step with print_prometheus() in userspace/kwqctl.c. */
static int kwq_metrics_show(struct seq_file *m, void *v)
{
	struct kwq *q = m->private;
	const char *name = q->name;
	struct kwq_stats st;
	unsigned int i;

	if (kwq_get_stats(q, &st))
		return -EINVAL;
	kwq_seq_u64(m, name, "workqueue_depth", "gauge",
		    "Current depth of workqueue", st.workqueue_depth);
	kwq_seq_u64(m, name, "workqueue_adds_total", "counter",
		    "Total number of adds handled by workqueue",
		    st.adds_total);
	kwq_seq_hist(m, name, "workqueue_queue_duration_seconds",
		     "How long in seconds an item stays in workqueue before being requested.",
		     &st.queue_duration);
	kwq_seq_hist(m, name, "workqueue_work_duration_seconds",
		     "How long in seconds processing an item from workqueue takes.",
		     &st.work_duration);
	kwq_seq_secs(m, name, "workqueue_unfinished_work_seconds",
		     "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
		     st.unfinished_work_ns);
	kwq_seq_secs(m, name, "workqueue_longest_running_processor_seconds",
		     "How many seconds has the longest running processor for workqueue been running.",
		     st.longest_running_ns);
	kwq_seq_u64(m, name, "workqueue_retries_total", "counter",
		    "Total number of retries handled by workqueue",
		    st.retries_total);
	kwq_seq_u64(m, name, "kwq_ready", "gauge",
		    "Keys ready to be handed out (client-go Len)", st.depth);
	kwq_seq_u64(m, name, "kwq_waiting_depth", "gauge",
		    "Keys waiting for a delay to pass", st.waiting);
	kwq_seq_u64(m, name, "kwq_processing", "gauge",
		    "Keys handed out and not yet done", st.processing);
	kwq_seq_u64(m, name, "kwq_dropped_at_shutdown_total", "counter",
		    "Delayed keys dropped by shutdown", st.dropped_at_shutdown);
	kwq_seq_u64(m, name, "kwq_lease_returns_total", "counter",
		    "Processing keys put back because their holder went away",
		    st.lease_returns);
	kwq_seq_u64(m, name, "kwq_failure_records", "gauge",
		    "Keys with a non-zero rate limiter failure count",
		    st.failure_records);
	kwq_seq_u64(m, name, "kwq_failure_records_evicted_total", "counter",
		    "Idle failure records forgotten to honour the bound",
		    st.failure_records_evicted);
	kwq_seq_head(m, "kwq_priority_depth", "gauge",
		     "Ready keys of the highest priority levels; other: the rest");
	for (i = 0; i < st.nr_prio_levels; i++)
		seq_printf(m, "kwq_priority_depth{name=\"%s\",priority=\"%d\"} %llu\n",
			   name, st.prio_depth[i].priority,
			   st.prio_depth[i].depth);
	if (st.prio_depth_other)
		seq_printf(m, "kwq_priority_depth{name=\"%s\",priority=\"other\"} %llu\n",
			   name, st.prio_depth_other);
	kwq_seq_u64(m, name, "kwq_shutting_down", "gauge",
		    "1 once the queue was shut down", st.shutting_down);
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
