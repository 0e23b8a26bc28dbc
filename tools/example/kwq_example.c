// SPDX-License-Identifier: GPL-2.0
/*
 * kwq_example: a small controller built on kwq's exported API only.
 *
 * A producer kthread adds @keys keys; @workers worker kthreads get them,
 * "reconcile" (every @fail_every-th key fails its first @fail_times
 * attempts and is retried with kwq_add_rate_limited()), forget and mark
 * them done. At unload the module reports whether every key completed
 * exactly once and whether a key was ever held by two workers at once:
 *
 *	kwq_example: PASS: all 2000 keys completed once, 580 retries
 *	kwq_example: FAIL: ...
 *
 * With published=1 (at load, or written to its file in
 * /sys/module/kwq_example/parameters later) the queue is published to
 * userspace: processes of the IPC namespace of the task that sets it (the
 * loader's: the initial one, usually) find it in /dev/kwq as
 * "kwq_example", owned by publish_uid:publish_gid with publish_mode.
 * Writing 0 unpublishes it; unloading destroys it, which unpublishes it
 * too; kwq unpublishes it when that IPC namespace dies. Keys that users
 * add are not the example's: they count as errors.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/kwq.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/nsproxy.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uidgid.h>

static unsigned int workers = 4;
module_param(workers, uint, 0444);
MODULE_PARM_DESC(workers, "Worker kthreads (1..64, default 4)");

static unsigned int keys = 2000;
module_param(keys, uint, 0444);
MODULE_PARM_DESC(keys, "Keys the producer adds (1..1000000, default 2000)");

static unsigned int fail_every = 7;
module_param(fail_every, uint, 0444);
MODULE_PARM_DESC(fail_every, "Every Nth key fails at first (0 = none, default 7)");

static unsigned int fail_times = 3;
module_param(fail_times, uint, 0444);
MODULE_PARM_DESC(fail_times, "Failed attempts of a failing key (default 3)");

static unsigned int publish_mode = 0600;
module_param(publish_mode, uint, 0444);
MODULE_PARM_DESC(publish_mode, "Mode of the published queue (default 0600)");

static unsigned int publish_uid;
module_param(publish_uid, uint, 0444);
MODULE_PARM_DESC(publish_uid, "Owner of the published queue (default 0)");

static unsigned int publish_gid;
module_param(publish_gid, uint, 0444);
MODULE_PARM_DESC(publish_gid, "Group of the published queue (default 0)");

#define EXAMPLE_WORKERS_MAX	64
#define EXAMPLE_KEYS_MAX	1000000

static struct kwq *example_q;
static struct task_struct *example_producer;
static struct task_struct *example_workers[EXAMPLE_WORKERS_MAX];
static atomic_t *example_holders;	/* per key: workers holding it */
static atomic_t *example_completions;	/* per key: successful attempts */
static atomic_t example_done = ATOMIC_INIT(0);
static atomic_t example_retries = ATOMIC_INIT(0);
static atomic_t example_overlaps = ATOMIC_INIT(0);
static atomic_t example_errors = ATOMIC_INIT(0);
static DECLARE_COMPLETION(example_all_done);

static DEFINE_MUTEX(example_publish_lock);
static bool example_published;	/* under example_publish_lock */
static bool example_live;	/* example_q usable; same lock */

/* In the IPC namespace of the task that sets "published" (or loads us). */
static int example_publish(void)
{
	struct kwq_publish_opts opts = {
		.uid = make_kuid(&init_user_ns, publish_uid),
		.gid = make_kgid(&init_user_ns, publish_gid),
		.mode = publish_mode,
		.ipc_ns = current->nsproxy->ipc_ns,
	};

	return kwq_publish(example_q, &opts);
}

/* Writes of "published": publish or unpublish the queue if it is live. */
static int example_set_published(const char *val,
				 const struct kernel_param *kp)
{
	bool on;
	int ret;

	ret = kstrtobool(val, &on);
	if (ret)
		return ret;
	mutex_lock(&example_publish_lock);
	if (example_live && on && !example_published)
		ret = example_publish();
	else if (example_live && !on)
		kwq_unpublish(example_q);
	if (!ret)
		example_published = on;
	mutex_unlock(&example_publish_lock);
	return ret;
}

static const struct kernel_param_ops example_published_ops = {
	.set = example_set_published,
	.get = param_get_bool,
};
module_param_cb(published, &example_published_ops, &example_published, 0644);
MODULE_PARM_DESC(published,
		 "Publish the queue to /dev/kwq users of the IPC namespace of the task that sets it (default 0)");

static int example_key(char *buf, size_t size, unsigned int i)
{
	return snprintf(buf, size, "example/key-%u", i);
}

/* The key's index, or -1 if it is not one of ours. */
static long example_index(const void *key, size_t len)
{
	char buf[32];
	unsigned int i;

	if (len >= sizeof(buf) || len < 12)
		return -1;
	memcpy(buf, key, len);
	buf[len] = '\0';
	if (sscanf(buf, "example/key-%u", &i) != 1 || i >= keys)
		return -1;
	return i;
}

static int example_produce(void *unused)
{
	char key[32];
	unsigned int i;
	int len, ret;

	for (i = 0; i < keys && !kthread_should_stop(); i++) {
		len = example_key(key, sizeof(key), i);
		ret = kwq_add(example_q, key, len);
		if (ret) {
			pr_err("add %s: %d\n", key, ret);
			atomic_inc(&example_errors);
		}
		if (i % 256 == 255)
			cond_resched();
	}
	while (!kthread_should_stop())
		schedule_timeout_interruptible(HZ / 10);
	return 0;
}

/* One reconcile: false means "failed, retry later". */
static bool example_reconcile(unsigned int i, const void *key, size_t len)
{
	int attempts;

	if (!fail_every || i % fail_every)
		return true;
	attempts = kwq_num_requeues(example_q, key, len);
	return attempts >= (int)fail_times;
}

static void example_handle(const struct kwq_item *item)
{
	const void *key;
	u64 delay;
	size_t len;
	long i;

	key = kwq_item_key(item, &len);
	i = example_index(key, len);
	if (i < 0) {
		atomic_inc(&example_errors);
		kwq_done(example_q, item);
		return;
	}
	if (atomic_inc_return(&example_holders[i]) != 1)
		atomic_inc(&example_overlaps);
	if (example_reconcile(i, key, len)) {
		kwq_forget(example_q, key, len);
		atomic_dec(&example_holders[i]);
		kwq_done(example_q, item);
		if (atomic_inc_return(&example_completions[i]) == 1 &&
		    atomic_inc_return(&example_done) == keys)
			complete(&example_all_done);
		return;
	}
	if (kwq_add_rate_limited(example_q, key, len, NULL, &delay))
		atomic_inc(&example_errors);
	else
		atomic_inc(&example_retries);
	atomic_dec(&example_holders[i]);
	kwq_done(example_q, item);
}

static int example_work(void *unused)
{
	struct kwq_item item;	/* this worker's lease on its key */
	int ret;

	while (!kthread_should_stop()) {
		/* A bounded wait, so kthread_stop() is noticed. */
		ret = kwq_get(example_q, NULL, 0, 100 * NSEC_PER_MSEC, &item);
		if (ret) {
			if (ret == -ESHUTDOWN)
				schedule_timeout_interruptible(HZ / 10);
			continue;
		}
		example_handle(&item);
	}
	return 0;
}

static struct task_struct *example_start(int (*fn)(void *), const char *name,
					 unsigned int n)
{
	struct task_struct *t = kthread_run(fn, NULL, "%s/%u", name, n);

	if (!IS_ERR(t))
		get_task_struct(t);
	return t;
}

static void example_stop(struct task_struct *t)
{
	if (IS_ERR_OR_NULL(t))
		return;
	kthread_stop(t);
	put_task_struct(t);
}

static void example_stop_all(void)
{
	unsigned int i;

	example_stop(example_producer);
	for (i = 0; i < workers; i++)
		example_stop(example_workers[i]);
}

static int __init example_init(void)
{
	struct kwq_config cfg = {
		.nr_limiters = 1,
		.limiters[0] = {
			.type = KWQ_LIMITER_EXPONENTIAL,
			.exp = { .base_ns = NSEC_PER_MSEC, .max_ns = 20 * NSEC_PER_MSEC },
		},
	};
	unsigned int i;
	int ret = -ENOMEM;

	if (!workers || workers > EXAMPLE_WORKERS_MAX || !keys ||
	    keys > EXAMPLE_KEYS_MAX)
		return -EINVAL;
	example_holders = kvcalloc(keys, sizeof(*example_holders), GFP_KERNEL);
	example_completions = kvcalloc(keys, sizeof(*example_completions),
				       GFP_KERNEL);
	if (!example_holders || !example_completions)
		goto err_free;
	example_q = kwq_create("kwq_example", &cfg);
	if (IS_ERR(example_q)) {
		ret = PTR_ERR(example_q);
		pr_err("kwq_create: %d\n", ret);
		goto err_free;
	}
	for (i = 0; i < workers; i++) {
		example_workers[i] = example_start(example_work, "kwq_example_w", i);
		if (IS_ERR(example_workers[i])) {
			ret = PTR_ERR(example_workers[i]);
			goto err_stop;
		}
	}
	/* published=1 given at load: publish now; later writes go straight. */
	mutex_lock(&example_publish_lock);
	ret = example_published ? example_publish() : 0;
	example_live = !ret;
	mutex_unlock(&example_publish_lock);
	if (ret) {
		pr_err("kwq_publish: %d\n", ret);
		goto err_stop;
	}
	example_producer = example_start(example_produce, "kwq_example_p", 0);
	if (IS_ERR(example_producer)) {
		ret = PTR_ERR(example_producer);
		goto err_stop;
	}
	pr_info("started: %u workers, %u keys, every %u. key fails %u times%s\n",
		workers, keys, fail_every, fail_times,
		example_published ? ", published" : "");
	return 0;

err_stop:
	mutex_lock(&example_publish_lock);
	example_live = false;
	mutex_unlock(&example_publish_lock);
	example_stop_all();
	kwq_destroy(example_q);
err_free:
	kvfree(example_completions);
	kvfree(example_holders);
	return ret;
}

static void __exit example_exit(void)
{
	unsigned int i, missing = 0, twice = 0;
	unsigned long left;

	/* Generous: this is about completeness, not speed (QEMU TCG). */
	left = wait_for_completion_timeout(&example_all_done, 120 * HZ);
	/* No more publishing; kwq_destroy() unpublishes. */
	mutex_lock(&example_publish_lock);
	example_live = false;
	mutex_unlock(&example_publish_lock);
	kwq_shutdown(example_q);
	example_stop_all();
	kwq_destroy(example_q);

	for (i = 0; i < keys; i++) {
		int c = atomic_read(&example_completions[i]);

		missing += c == 0;
		twice += c > 1;
		if (c == 0 && missing <= 5)
			pr_err("key example/key-%u never completed\n", i);
	}
	if (!left || missing || twice || atomic_read(&example_overlaps) ||
	    atomic_read(&example_errors))
		pr_err("FAIL: %u of %u keys missing, %u completed twice, %d overlaps, %d errors\n",
		       missing, keys, twice, atomic_read(&example_overlaps),
		       atomic_read(&example_errors));
	else
		pr_info("PASS: all %u keys completed once, %d retries\n", keys,
			atomic_read(&example_retries));
	kvfree(example_completions);
	kvfree(example_holders);
}

module_init(example_init);
module_exit(example_exit);

MODULE_DESCRIPTION("Example kwq consumer: a controller with retries");
MODULE_LICENSE("GPL");
