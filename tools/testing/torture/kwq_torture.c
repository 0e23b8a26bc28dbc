// SPDX-License-Identifier: GPL-2.0
/*
 * kwq_torture: kernel-thread producers and workers for the torture run
 * (userspace/tests/torture_test.c, issue 34). It creates one queue
 * through kwq's exported API, publishes it in /dev/kwq (root, 0600), so
 * the test's processes use it too, and runs kernel threads on it as the
 * test asks, through debugfs:
 *
 *	/sys/kernel/debug/kwq_torture/ctl	(write)
 *		"producer SLOT SEED", "worker SLOT SEED": start a thread that
 *		records its calls under the test's SLOT;
 *		"kill SLOT": stop it between two calls (kthread_stop()) and
 *		return the keys it held, as a crashed holder's are
 *		(kwq_release_owner());
 *		"calm 1", "calm 0": the test's calm spells (no adds here)
 *	/sys/kernel/debug/kwq_torture/history	(read)
 *		the threads' completed calls, struct kwq_torture_rec, oldest
 *		first; each record is read once
 *	/sys/kernel/debug/kwq_torture/stats	(read)
 *		threads running, killed, leases returned at kills
 *
 * One call in KT_FNTH_ONE_IN of a get or done, one in 8 of an add, runs
 * with fail-nth armed (current->fail_nth, the thread's
 * /proc/.../fail-nth), as the test's processes arm theirs: its Nth
 * fault-injection point (1 to 4) fails, so kwq's error paths run for
 * kernel callers too. Recorded in the call's record (@fnth); on kernels
 * without CONFIG_FAULT_INJECTION nothing is armed.
 *
 * The queue's configuration comes from module parameters, so that the
 * test's model of it is the test's own. Test-only: root-only files.
 *
 * Locking: kt_threads_lock guards the thread list and the counts;
 * kt_hist_lock the history buffer. A thread records a call in two steps:
 * it reserves a record before the call (waiting while the buffer is
 * full) and commits it after, so no call is made that cannot be recorded.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/kwq.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "kwq_torture.h"

static char *name;
module_param(name, charp, 0444);
MODULE_PARM_DESC(name, "name of the queue to create and publish (required)");
static unsigned int key_base;
module_param(key_base, uint, 0444);
MODULE_PARM_DESC(key_base, "added to every key number (the test's queue index << 28)");
static unsigned long base_ns = NSEC_PER_MSEC;
module_param(base_ns, ulong, 0444);
MODULE_PARM_DESC(base_ns, "exponential limiter: first delay");
static unsigned long max_ns = 20 * NSEC_PER_MSEC;
module_param(max_ns, ulong, 0444);
MODULE_PARM_DESC(max_ns, "exponential limiter: largest delay");
static unsigned long max_wait_ns = 100 * NSEC_PER_MSEC;
module_param(max_wait_ns, ulong, 0444);
MODULE_PARM_DESC(max_wait_ns, "the queue's max_wait_ns");
static unsigned long timeout_ns;
module_param(timeout_ns, ulong, 0444);
MODULE_PARM_DESC(timeout_ns, "the queue's processing deadline (0: none)");

#define KT_BATCH	8
#define KT_THREADS	16
#define KT_HIST		32768	/* records not yet read */
#define KT_GET_WAIT_NS	(200 * NSEC_PER_MSEC)
#define KT_FNTH_ONE_IN	40

struct kt_thread {
	struct list_head node;
	struct task_struct *task;
	struct rnd_state rnd;
	u16 slot;
	bool worker;
	/* a worker's keys: @nheld of @items, or one kept for a done_get */
	struct kwq_item items[KT_BATCH];
	unsigned int nheld;
};

static struct kwq *kt_q;
static struct dentry *kt_dir;
static atomic_t kt_calm = ATOMIC_INIT(0);
static atomic_t kt_uniq = ATOMIC_INIT(0);

static DEFINE_MUTEX(kt_threads_lock);
static LIST_HEAD(kt_threads);
static unsigned int kt_nthreads, kt_killed, kt_returned;

static DEFINE_MUTEX(kt_hist_lock);
static struct kwq_torture_rec *kt_hist;
static unsigned int kt_head, kt_count, kt_reserved;

/* --- the history -------------------------------------------------------- */

/* Sleep up to @ms, woken early by kthread_stop(). */
static void kt_sleep_ms(unsigned int ms)
{
	if (!kthread_should_stop())
		schedule_timeout_interruptible(msecs_to_jiffies(ms));
}

/* Room for one record, held until kt_cmp(); false once told to stop. */
static bool kt_reserve(void)
{
	for (;;) {
		mutex_lock(&kt_hist_lock);
		if (kt_count + kt_reserved < KT_HIST) {
			kt_reserved++;
			mutex_unlock(&kt_hist_lock);
			return true;
		}
		mutex_unlock(&kt_hist_lock);
		if (kthread_should_stop())
			return false;
		kt_sleep_ms(5);
	}
}

static u32 kt_rand(struct kt_thread *t, u32 n)
{
	return prandom_u32_state(&t->rnd) % n;
}

/* The invocation, in @r: false (nothing recorded) once told to stop. */
static bool kt_inv(struct kt_thread *t, struct kwq_torture_rec *r, int op,
		   int kind, s64 arg, const u32 *keys, unsigned int nk)
{
	if (!kt_reserve())
		return false;
	memset(r, 0, sizeof(*r));
	r->op = op;
	r->kind = kind;
	r->slot = t->slot;
	r->arg = arg;
	r->nk = nk;
	if (nk)
		memcpy(r->key, keys, sizeof(*keys) * nk);
#ifdef CONFIG_FAULT_INJECTION
	/*
	 * The test's choice of calls (torture_test.c, fnth_op()); adds more
	 * often, as only an add of a new key allocates here (a 60 s run:
	 * 7 of 440 armed calls reached their Nth point at one in 40 each).
	 */
	if (op != KWQ_TORTURE_OP_REMOVE && op != KWQ_TORTURE_OP_FORGET &&
	    op != KWQ_TORTURE_OP_PURGE &&
	    !kt_rand(t, op == KWQ_TORTURE_OP_ADD || op == KWQ_TORTURE_OP_ADDB ?
		     KT_FNTH_ONE_IN / 5 : KT_FNTH_ONE_IN)) {
		r->fnth = 1 + kt_rand(t, 4);
		WRITE_ONCE(current->fail_nth, r->fnth);
	}
#endif
	r->inv = ktime_get_ns();
	return true;
}

/* The completion: @ret as the test records it, @err a kernel -errno. */
static void kt_cmp(struct kwq_torture_rec *r, s64 ret, int err)
{
#ifdef CONFIG_FAULT_INJECTION
	/* it counts down to 0 at the point it fails; else disarm it */
	if (r->fnth && !READ_ONCE(current->fail_nth))
		r->fnth |= KWQ_TORTURE_FNTH_FAILED;
	WRITE_ONCE(current->fail_nth, 0);
#endif
	r->cmp = ktime_get_ns();
	r->ret = ret;
	r->err = -err;
	mutex_lock(&kt_hist_lock);
	kt_hist[(kt_head + kt_count) % KT_HIST] = *r;
	kt_count++;
	kt_reserved--;
	mutex_unlock(&kt_hist_lock);
}

/* --- keys --------------------------------------------------------------- */

static int kt_key_name(char *buf, u32 k)
{
	return snprintf(buf, 16, "k%u", k);
}

static u32 kt_key_of(const struct kwq_item *item)
{
	char tmp[16];
	size_t len;
	const void *k = kwq_item_key(item, &len);
	u32 v = 0;

	if (len < 2 || len >= sizeof(tmp))
		return 0;
	memcpy(tmp, k, len);
	tmp[len] = '\0';
	if (tmp[0] != 'k' || kstrtou32(tmp + 1, 10, &v))
		return 0;
	return v;
}

static u32 kt_pool_key(struct kt_thread *t)
{
	return key_base | kt_rand(t, KWQ_TORTURE_POOL);
}

static u32 kt_unique_key(void)
{
	return key_base | (KWQ_TORTURE_UNIQUE + (u32)atomic_inc_return(&kt_uniq));
}

/* --- a producer ---------------------------------------------------------- */

static void kt_add(struct kt_thread *t, u32 k, int kind, s64 arg)
{
	struct kwq_add_opts o = {};
	struct kwq_torture_rec r;
	char key[16];
	int len = kt_key_name(key, k), ret;
	u64 delay = 0;

	if (!kt_inv(t, &r, KWQ_TORTURE_OP_ADD, kind, arg, &k, 1))
		return;
	switch (kind) {
	case KWQ_TORTURE_K_PRIO:
		o.priority = (int)arg;
		ret = kwq_add_opts(kt_q, key, len, &o);
		break;
	case KWQ_TORTURE_K_AFTER:
		ret = kwq_add_after(kt_q, key, len, arg);
		break;
	case KWQ_TORTURE_K_RL:
		ret = kwq_add_rate_limited(kt_q, key, len, NULL, &delay);
		break;
	default:
		ret = kwq_add(kt_q, key, len);
	}
	kt_cmp(&r, ret ? -1 : (s64)delay, ret);
}

static void kt_add_batch(struct kt_thread *t, int kind, s64 after)
{
	struct kwq_batch_opts o = { .gfp = GFP_KERNEL };
	struct kwq_key keys[KT_BATCH];
	char names[KT_BATCH][16];
	u64 delays[KT_BATCH];
	unsigned int n = 1 + kt_rand(t, KT_BATCH), done = 0, i;
	struct kwq_torture_rec r;
	u32 k[KT_BATCH];
	int ret;

	for (i = 0; i < n; i++) {
		k[i] = kt_rand(t, 2) ? kt_pool_key(t) : kt_unique_key();
		keys[i].key = names[i];
		keys[i].len = kt_key_name(names[i], k[i]);
		keys[i].priority = kind == KWQ_TORTURE_K_PRIO ? 1 : 0;
	}
	if (kind == KWQ_TORTURE_K_AFTER) {
		o.after_ns = after;
	} else if (kind == KWQ_TORTURE_K_RL) {
		o.flags = KWQ_BATCH_RATE_LIMITED;
		o.delays = delays;
	}
	if (!kt_inv(t, &r, KWQ_TORTURE_OP_ADDB, kind, after, k, n))
		return;
	ret = kwq_add_batch(kt_q, keys, n, &o, &done);
	kt_cmp(&r, done, ret);
}

/* remove, forget, purge of one key */
static void kt_key_op(struct kt_thread *t, int op, u32 k)
{
	struct kwq_torture_rec r;
	char key[16];
	int len = kt_key_name(key, k), ret;

	if (!kt_inv(t, &r, op, 0, 0, &k, 1))
		return;
	if (op == KWQ_TORTURE_OP_REMOVE)
		ret = kwq_remove(kt_q, key, len);
	else if (op == KWQ_TORTURE_OP_FORGET)
		ret = kwq_forget(kt_q, key, len);
	else
		ret = kwq_purge(kt_q, key, len);
	kt_cmp(&r, ret ? -1 : 0, ret);
}

/* The test's producer mix (torture_test.c, producer()), one call. */
static void kt_produce(struct kt_thread *t)
{
	u32 dice = kt_rand(t, 100), kind;

	if (atomic_read(&kt_calm)) {
		/*
		 * The calm spells are the processes': their getters must
		 * wait, and adds here would end their waits.
		 */
		kt_sleep_ms(50);
		return;
	}
	if (dice < 25) {
		kt_add(t, kt_pool_key(t), KWQ_TORTURE_K_PLAIN, 0);
	} else if (dice < 33) {
		kt_add(t, kt_pool_key(t), KWQ_TORTURE_K_PRIO,
		       (s64)kt_rand(t, 4) - 1);
	} else if (dice < 43) {
		kt_add(t, kt_pool_key(t), KWQ_TORTURE_K_AFTER,
		       kt_rand(t, 50) * NSEC_PER_MSEC);
	} else if (dice < 50) {
		kt_add(t, kt_pool_key(t), KWQ_TORTURE_K_RL, 0);
	} else if (dice < 60) {
		kind = kt_rand(t, 4);
		kt_add_batch(t, kind, kind == KWQ_TORTURE_K_AFTER ?
			     (1 + kt_rand(t, 40)) * NSEC_PER_MSEC : 0);
	} else if (dice < 80) {
		/* a unique key, added once: its deadline is checked */
		kind = kt_rand(t, 4);
		kt_add(t, kt_unique_key(), kind,
		       kind == KWQ_TORTURE_K_AFTER ?
		       (1 + kt_rand(t, 40)) * NSEC_PER_MSEC :
		       kind == KWQ_TORTURE_K_PRIO ? 2 : 0);
	} else if (dice < 86) {
		kt_key_op(t, KWQ_TORTURE_OP_REMOVE, kt_pool_key(t));
	} else if (dice < 90) {
		kt_key_op(t, KWQ_TORTURE_OP_FORGET, kt_pool_key(t));
	} else if (dice < 93) {
		kt_key_op(t, KWQ_TORTURE_OP_PURGE, kt_pool_key(t));
	} else {
		kt_sleep_ms(kt_rand(t, 60));
	}
	/* paced: a thread's calls cost no system call and would flood */
	kt_sleep_ms(8 + kt_rand(t, 16));
}

/* --- a worker ------------------------------------------------------------ */

/* kwq_get() or kwq_get_batch() into @t->items: the number taken. */
static int kt_get(struct kt_thread *t, unsigned int max)
{
	struct kwq_torture_rec r;
	int n, i;

	if (!kt_inv(t, &r, KWQ_TORTURE_OP_GET, 0, 0, NULL, 0))
		return 0;
	r.aux = max;
	if (max == 1) {
		n = kwq_get(kt_q, t, 0, KT_GET_WAIT_NS, &t->items[0]);
		n = n ?: 1;
	} else {
		n = kwq_get_batch(kt_q, t, 0, KT_GET_WAIT_NS, t->items, 1, max);
	}
	for (i = 0; i < n; i++)
		r.key[i] = kt_key_of(&t->items[i]);
	r.nk = n > 0 ? n : 0;
	kt_cmp(&r, n > 0 ? n : -1, n > 0 ? 0 : n);
	t->nheld = r.nk;
	return r.nk;
}

/*
 * kwq_done_get() of the one key held (or none): the done part fails
 * only when the lease had ended (-ESTALE: nothing taken); any other
 * error is the get part's, after the done.
 */
static int kt_done_get(struct kt_thread *t)
{
	struct kwq_torture_rec r;
	unsigned int nd = t->nheld;
	u32 k = nd ? kt_key_of(&t->items[0]) : 0;
	int ret;

	if (!nd)
		memset(&t->items[0], 0, sizeof(t->items[0]));
	if (!kt_inv(t, &r, KWQ_TORTURE_OP_DONEGET, 0, 1, &k, nd))
		return 0;
	r.ndone = nd;
	ret = kwq_done_get(kt_q, t, 0, KT_GET_WAIT_NS, &t->items[0]);
	r.aux = ret == -ESTALE ? 0 : nd;
	if (!ret)
		r.key[r.nk++] = kt_key_of(&t->items[0]);
	kt_cmp(&r, ret ? -1 : 1, ret);
	t->nheld = ret ? 0 : 1;
	return t->nheld;
}

static void kt_done_one(struct kt_thread *t, const struct kwq_item *item)
{
	struct kwq_torture_rec r;
	u32 k = kt_key_of(item);
	int ret;

	if (!kt_inv(t, &r, KWQ_TORTURE_OP_DONE, 0, 0, &k, 1))
		return;
	ret = kwq_done(kt_q, item);
	kt_cmp(&r, ret ? -1 : 0, ret);
}

/* Finish what is held: one by one or in batches, past a revoked lease. */
static void kt_finish(struct kt_thread *t)
{
	struct kwq_torture_rec r;
	unsigned int i = 0, j, done;
	int ret;

	while (i < t->nheld && !kthread_should_stop()) {
		if (t->nheld - i == 1 || kt_rand(t, 2)) {
			kt_done_one(t, &t->items[i++]);
			continue;
		}
		if (!kt_inv(t, &r, KWQ_TORTURE_OP_DONEB, 0, 0, NULL, 0))
			break;
		for (j = i; j < t->nheld; j++)
			r.key[r.nk++] = kt_key_of(&t->items[j]);
		done = 0;
		ret = kwq_done_batch(kt_q, t->items + i, t->nheld - i, &done);
		kt_cmp(&r, done, ret);
		/* the key it stopped at had its lease end (-ESTALE) */
		i += done + (ret ? 1 : 0);
	}
	t->nheld = 0;
}

/*
 * Work on the keys held as the test's workers do (work()): each a short
 * time, now and then past the queue's processing deadline, some failed
 * (a rate-limited add first); then finished, or the one key kept for
 * the next call, a done_get.
 */
static void kt_work(struct kt_thread *t)
{
	unsigned int i, dice;

	for (i = 0; i < t->nheld && !kthread_should_stop(); i++) {
		dice = kt_rand(t, 100);
		if (dice >= 90)
			kt_sleep_ms(20 + kt_rand(t, 40));
		else if (dice >= 50)
			kt_sleep_ms(kt_rand(t, 5));
		if (!kt_rand(t, 5))
			kt_add(t, kt_key_of(&t->items[i]), KWQ_TORTURE_K_RL, 0);
	}
	if (t->nheld == 1 && !kt_rand(t, 3))
		return;
	kt_finish(t);
}

static void kt_worker_call(struct kt_thread *t)
{
	u32 dice = kt_rand(t, 100);

	if (t->nheld || dice >= 70)
		kt_done_get(t);
	else if (dice < 35)
		kt_get(t, 1);
	else
		kt_get(t, 1 + kt_rand(t, KT_BATCH));
	if (t->nheld)
		kt_work(t);
}

static int kt_thread_fn(void *arg)
{
	struct kt_thread *t = arg;

	/*
	 * Told to stop, a thread leaves between two calls, holding what it
	 * holds: its killer returns those keys.
	 */
	while (!kthread_should_stop()) {
		if (t->worker)
			kt_worker_call(t);
		else
			kt_produce(t);
	}
	return 0;
}

/* --- control ------------------------------------------------------------- */

static int kt_start(bool worker, unsigned int slot, unsigned int seed)
{
	struct kt_thread *t, *o;
	int ret = 0;

	if (!slot || slot > U16_MAX)
		return -EINVAL;
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->slot = slot;
	t->worker = worker;
	prandom_seed_state(&t->rnd, seed);
	mutex_lock(&kt_threads_lock);
	list_for_each_entry(o, &kt_threads, node)
		if (o->slot == slot)
			ret = -EEXIST;
	if (!ret && kt_nthreads >= KT_THREADS)
		ret = -ENOSPC;
	if (!ret) {
		t->task = kthread_run(kt_thread_fn, t, "kwq_torture/%u", slot);
		if (IS_ERR(t->task))
			ret = PTR_ERR(t->task);
	}
	if (!ret) {
		list_add_tail(&t->node, &kt_threads);
		kt_nthreads++;
	}
	mutex_unlock(&kt_threads_lock);
	if (ret)
		kfree(t);
	return ret;
}

/* Stop @t between two calls and return its keys: kt_threads_lock held. */
static void kt_stop(struct kt_thread *t)
{
	int n;

	list_del(&t->node);
	kt_nthreads--;
	kthread_stop(t->task);
	n = kwq_release_owner(kt_q, t);
	if (n > 0)
		kt_returned += n;
	kt_killed++;
	kfree(t);
}

static int kt_kill(unsigned int slot)
{
	struct kt_thread *t;
	int ret = -ENOENT;

	mutex_lock(&kt_threads_lock);
	list_for_each_entry(t, &kt_threads, node) {
		if (t->slot == slot) {
			kt_stop(t);
			ret = 0;
			break;
		}
	}
	mutex_unlock(&kt_threads_lock);
	return ret;
}

static ssize_t kt_ctl_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	unsigned int slot, seed;
	char buf[64];
	int ret = -EINVAL;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "producer %u %u", &slot, &seed) == 2) {
		ret = kt_start(false, slot, seed);
	} else if (sscanf(buf, "worker %u %u", &slot, &seed) == 2) {
		ret = kt_start(true, slot, seed);
	} else if (sscanf(buf, "kill %u", &slot) == 1) {
		ret = kt_kill(slot);
	} else if (sscanf(buf, "calm %u", &slot) == 1 && slot <= 1) {
		atomic_set(&kt_calm, slot);
		ret = 0;
	}
	return ret ?: len;
}

static ssize_t kt_hist_read(struct file *file, char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	const size_t sz = sizeof(struct kwq_torture_rec);
	unsigned int n, first, done = 0;
	ssize_t ret = 0;

	mutex_lock(&kt_hist_lock);
	n = min_t(size_t, len / sz, kt_count);
	while (done < n) {
		first = min(n - done, KT_HIST - kt_head);
		if (copy_to_user(ubuf + (size_t)done * sz, &kt_hist[kt_head],
				 first * sz)) {
			ret = -EFAULT;
			break;
		}
		kt_head = (kt_head + first) % KT_HIST;
		kt_count -= first;
		done += first;
	}
	mutex_unlock(&kt_hist_lock);
	return done ? (ssize_t)done * sz : ret;
}

static int kt_stats_show(struct seq_file *m, void *v)
{
	mutex_lock(&kt_threads_lock);
	seq_printf(m, "threads %u\nkilled %u\nreturned %u\n", kt_nthreads,
		   kt_killed, kt_returned);
	mutex_unlock(&kt_threads_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kt_stats);

static const struct file_operations kt_ctl_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = kt_ctl_write,
	.llseek = noop_llseek,
};

static const struct file_operations kt_hist_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = kt_hist_read,
	.llseek = noop_llseek,
};

static void kt_stop_all(void)
{
	struct kt_thread *t, *n;

	mutex_lock(&kt_threads_lock);
	list_for_each_entry_safe(t, n, &kt_threads, node)
		kt_stop(t);
	mutex_unlock(&kt_threads_lock);
}

static int __init kt_init(void)
{
	struct kwq_config cfg = {
		.nr_limiters = 1,
		.limiters = { {
			.type = KWQ_LIMITER_EXPONENTIAL,
			.exp = { .base_ns = base_ns, .max_ns = max_ns },
		} },
		.max_wait_ns = max_wait_ns,
		.processing_timeout_ns = timeout_ns,
	};
	struct kwq_publish_opts po = {
		.uid = GLOBAL_ROOT_UID,
		.gid = GLOBAL_ROOT_GID,
		.mode = 0600,
	};
	int ret;

	if (!name || !*name)
		return -EINVAL;
	kt_hist = vmalloc(array_size(KT_HIST, sizeof(*kt_hist)));
	if (!kt_hist)
		return -ENOMEM;
	kt_q = kwq_create(name, &cfg);
	ret = PTR_ERR_OR_ZERO(kt_q);
	if (ret)
		goto err_hist;
	ret = kwq_publish(kt_q, &po);
	if (ret)
		goto err_q;
	kt_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	ret = -ENODEV;
	if (IS_ERR(kt_dir))
		goto err_q;
	debugfs_create_file("ctl", 0200, kt_dir, NULL, &kt_ctl_fops);
	debugfs_create_file("history", 0400, kt_dir, NULL, &kt_hist_fops);
	debugfs_create_file("stats", 0400, kt_dir, NULL, &kt_stats_fops);
	return 0;

err_q:
	kwq_destroy(kt_q);
err_hist:
	vfree(kt_hist);
	return ret;
}

static void __exit kt_exit(void)
{
	/* Waits for the control writes in progress. */
	debugfs_remove(kt_dir);
	kt_stop_all();
	kwq_destroy(kt_q);
	vfree(kt_hist);
}

module_init(kt_init);
module_exit(kt_exit);

MODULE_DESCRIPTION("kwq test: kernel-thread producers and workers for the torture run");
MODULE_LICENSE("GPL");
