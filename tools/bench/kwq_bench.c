// SPDX-License-Identifier: GPL-2.0
/*
 * kwq_bench: in-kernel benchmarks of kwq against the kernel's own
 * workqueue, run once per insmod (tools/bench/bench.sh drives it inside
 * QEMU; never load it on a machine you care about).
 *
 *	insmod kwq_bench.ko suite=SUITE [rep=N] [items=N] ...
 *
 * Suites, each printing parseable lines
 *	kwq_bench: RESULT suite=... impl=... key=value ...
 *  - throughput: one producer kthread adds @items distinct 16-byte keys,
 *    @consumers kthreads take and finish them. Four implementations, in
 *    an order rotating with @rep:
 *      kwq        kwq_add() per key; a worker loop of kwq_done_get() per
 *                 key (finish the last, take the next: one call)
 *      kwq_batch  kwq_add_batch() of @batch keys (GFP_KERNEL);
 *                 kwq_get_batch(min_nr @batch_min, max_nr @batch) +
 *                 kwq_done_batch()
 *      workqueue  queue_work() of as many preallocated work items on an
 *                 alloc_workqueue(WQ_UNBOUND, @consumers): no dedup, no
 *                 lookup, no allocation (the bare-metal bound)
 *      wq_rhash   what a kernel developer writes instead of kwq: one
 *                 kmalloc'ed work_struct per key, found through an
 *                 rhashtable (allocated and inserted on first sight,
 *                 kept for reuse); queue_work() dedups through PENDING
 *                 and non-reentrancy is the processing set
 *    Timed from the first add until every item has run.
 *  - hotkey: as throughput, but the @items adds cycle over @hot_keys keys
 *    (work items), so every side deduplicates pending ones. One more
 *    implementation:
 *      kwq_ref    kwq_add_ref() of a key handle per key (kwq_key_get()
 *                 before the clock starts, as the workqueue's items are
 *                 set up before it), the consumers as for kwq
 *  - redundant: the add of a key already ready, alone: one thread adds
 *    one key @items times while it stays ready (no consumer). kwq
 *    (kwq_add()) and kwq_ref (kwq_add_ref()) against queue_work() of a
 *    pending work (workqueue: held pending behind a blocked work of an
 *    ordered workqueue) and wq_rhash (its lookup, then that queue_work()).
 *  - scaling: single thread; with N (1e3 .. @scale_max) keys ready, the
 *    cost of an add and of a get + done, and with N keys waiting the cost
 *    of an add_after (deadlines random within an hour).
 *  - timer: @timer_items keys added with delays uniform in 1..100 ms;
 *    lateness = time a getter has the key - deadline. The peer is a
 *    delayed_work per item with the same delay.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/kwq.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/rhashtable.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

static char *suite = "throughput";
module_param(suite, charp, 0444);
MODULE_PARM_DESC(suite, "throughput, hotkey, redundant, scaling or timer");

static unsigned int rep;
module_param(rep, uint, 0444);
MODULE_PARM_DESC(rep, "Repetition number, echoed in the results");

static unsigned int items = 200000;
module_param(items, uint, 0444);
MODULE_PARM_DESC(items, "Items (throughput) or adds (hotkey) per run");

static unsigned int consumers = 2;
module_param(consumers, uint, 0444);
MODULE_PARM_DESC(consumers, "Consumer kthreads = workqueue max_active (1..16)");

static unsigned int hot_keys = 16;
module_param(hot_keys, uint, 0444);
MODULE_PARM_DESC(hot_keys, "Distinct keys of the hotkey suite");

static unsigned int scale_max = 1000000;
module_param(scale_max, uint, 0444);
MODULE_PARM_DESC(scale_max, "Largest queue size of the scaling suite");

static unsigned int scale_ops = 10000;
module_param(scale_ops, uint, 0444);
MODULE_PARM_DESC(scale_ops, "Timed operations per size of the scaling suite");

static bool diag;
module_param(diag, bool, 0444);
MODULE_PARM_DESC(diag, "Count consumer waits (adds a non-blocking try per get)");

static unsigned int batch = 64;
module_param(batch, uint, 0444);
MODULE_PARM_DESC(batch, "kwq_batch: keys per kwq_add_batch() and max_nr of kwq_get_batch() (1..64)");

static unsigned int batch_min = 16;
module_param(batch_min, uint, 0444);
MODULE_PARM_DESC(batch_min, "kwq_batch: min_nr of kwq_get_batch() (hotkey: at most hot_keys / consumers)");

static unsigned int batch_window_us = 1000;
module_param(batch_window_us, uint, 0444);
MODULE_PARM_DESC(batch_window_us, "kwq_batch: timeout of each kwq_get_batch(), the batching window");

static char *impls = "workqueue,wq_rhash,kwq,kwq_batch,kwq_ref";
module_param(impls, charp, 0444);
MODULE_PARM_DESC(impls, "throughput/hotkey: implementations to run (comma-separated)");

static unsigned int timer_items = 5000;
module_param(timer_items, uint, 0444);
MODULE_PARM_DESC(timer_items, "Delayed items of the timer suite");

#define BENCH_CONSUMERS_MAX	16
#define BENCH_BATCH_MAX		64
#define BENCH_ITEMS_MAX		(4U << 20)
#define BENCH_ROUND		1000	/* scaling: ops between clock reads */

/* 16-byte keys: an index and a constant tag, cheap to make. */
struct bench_key {
	u64 idx;
	u64 tag;
};

static void bench_key(struct bench_key *k, u64 idx)
{
	k->idx = idx;
	k->tag = 0x6b77712d62656e63ULL;	/* "kwq-benc" */
}

static u64 bench_key_idx(const struct kwq_item *item)
{
	const struct bench_key *k;
	size_t len;

	k = kwq_item_key(item, &len);
	return len == sizeof(*k) ? k->idx : U64_MAX;
}

/* --- threads --- */

struct bench_ctx;

struct bench_work {
	struct work_struct work;
	struct bench_ctx *c;
};

/* wq_rhash: one per key, kmalloc'ed on first sight and kept. */
struct bench_rh {
	struct rhash_head node;
	struct bench_key key;
	struct work_struct work;
	struct bench_ctx *c;
};

static const struct rhashtable_params bench_rh_params = {
	.key_len = sizeof(struct bench_key),
	.key_offset = offsetof(struct bench_rh, key),
	.head_offset = offsetof(struct bench_rh, node),
};

struct bench_ctx {
	struct kwq *q;
	struct workqueue_struct *wq;
	struct bench_work *works;
	struct rhashtable ht;		/* wq_rhash */
	struct bench_key *bkeys;	/* kwq_batch producer: @batch keys */
	struct kwq_key *kkeys;		/* ... and their descriptors */
	struct kwq_item *citems;	/* kwq_batch consumers: @batch each */
	struct kwq_key_ref **refs;	/* kwq_ref: a handle per key */
	atomic_t next_cons;
	unsigned int min_nr;		/* kwq_batch: kwq_get_batch() min_nr */
	unsigned int adds;
	unsigned int key_mod;		/* hotkey: keys cycle modulo this */
	atomic_t allocs;		/* wq_rhash: entries allocated */
	atomic_t retries;		/* wq_rhash: inserts retried */
	struct completion go;
	struct completion produced;
	u64 prod_ns;			/* the producer's own time */
	atomic_t ran;
	atomic_t sleeps;		/* consumer gets that found nothing */
	atomic_t errors;
};

static struct task_struct *bench_start(int (*fn)(void *), void *arg,
				       const char *name, unsigned int n)
{
	struct task_struct *t = kthread_run(fn, arg, "%s/%u", name, n);

	if (!IS_ERR(t))
		get_task_struct(t);
	return t;
}

/* Threads finish their job, then wait here for kthread_stop(). */
static void bench_idle_until_stopped(void)
{
	while (!kthread_should_stop())
		schedule_timeout_interruptible(HZ / 10);
}

static void bench_stop(struct task_struct *t)
{
	if (IS_ERR_OR_NULL(t))
		return;
	kthread_stop(t);
	put_task_struct(t);
}

static int bench_kwq_producer(void *arg)
{
	struct bench_ctx *c = arg;
	struct bench_key k;
	unsigned int i;

	u64 t;

	wait_for_completion(&c->go);
	t = ktime_get_ns();
	for (i = 0; i < c->adds; i++) {
		bench_key(&k, c->key_mod ? i % c->key_mod : i);
		if (kwq_add(c->q, &k, sizeof(k)))
			atomic_inc(&c->errors);
		if (i % 256 == 255)
			cond_resched();
	}
	c->prod_ns = ktime_get_ns() - t;
	complete(&c->produced);
	bench_idle_until_stopped();
	return 0;
}

static int bench_kwqr_producer(void *arg)
{
	struct bench_ctx *c = arg;
	unsigned int i;
	u64 t;

	wait_for_completion(&c->go);
	t = ktime_get_ns();
	for (i = 0; i < c->adds; i++) {
		if (kwq_add_ref(c->refs[i % c->key_mod]))
			atomic_inc(&c->errors);
		if (i % 256 == 255)
			cond_resched();
	}
	c->prod_ns = ktime_get_ns() - t;
	complete(&c->produced);
	bench_idle_until_stopped();
	return 0;
}

static int bench_kwq_consumer(void *arg)
{
	struct bench_ctx *c = arg;
	struct kwq_item item = {};
	int ret;

	for (;;) {
		ret = -EAGAIN;
		/* diag: a first non-blocking try counts the waits. */
		if (diag)
			ret = kwq_done_get(c->q, NULL, KWQ_GET_NONBLOCK, 0,
					   &item);
		if (ret == -EAGAIN) {
			if (diag)
				atomic_inc(&c->sleeps);
			ret = kwq_done_get(c->q, NULL, 0, KWQ_WAIT_FOREVER,
					   &item);
		}
		if (ret) {
			if (ret != -ESHUTDOWN)
				atomic_inc(&c->errors);
			break;
		}
		if (bench_key_idx(&item) == U64_MAX)
			atomic_inc(&c->errors);
		/* Counted before kwq_done_get() finishes it: see the drain. */
		atomic_inc(&c->ran);
	}
	bench_idle_until_stopped();
	return 0;
}

static int bench_kwqb_producer(void *arg)
{
	struct bench_ctx *c = arg;
	struct kwq_batch_opts opts = { .gfp = GFP_KERNEL };
	unsigned int i, j, n;
	u64 t;

	wait_for_completion(&c->go);
	t = ktime_get_ns();
	for (i = 0; i < c->adds; i += n) {
		n = min(batch, c->adds - i);
		for (j = 0; j < n; j++)
			bench_key(&c->bkeys[j],
				  c->key_mod ? (i + j) % c->key_mod : i + j);
		if (kwq_add_batch(c->q, c->kkeys, n, &opts, NULL))
			atomic_inc(&c->errors);
		if ((i / batch) % 4 == 3)
			cond_resched();
	}
	c->prod_ns = ktime_get_ns() - t;
	complete(&c->produced);
	bench_idle_until_stopped();
	return 0;
}

static int bench_kwqb_consumer(void *arg)
{
	struct bench_ctx *c = arg;
	struct kwq_item *items;
	int i, n;

	items = c->citems + (atomic_inc_return(&c->next_cons) - 1) * batch;
	for (;;) {
		n = kwq_get_batch(c->q, NULL, 0,
				  (s64)batch_window_us * NSEC_PER_USEC, items,
				  c->min_nr, batch);
		if (n == -ETIMEDOUT)
			continue;
		if (n < 0) {
			if (n != -ESHUTDOWN)
				atomic_inc(&c->errors);
			break;
		}
		if (diag && (unsigned int)n < c->min_nr)
			atomic_inc(&c->sleeps);
		for (i = 0; i < n; i++)
			if (bench_key_idx(&items[i]) == U64_MAX)
				atomic_inc(&c->errors);
		if (kwq_done_batch(c->q, items, n, NULL))
			atomic_inc(&c->errors);
		atomic_add(n, &c->ran);
	}
	bench_idle_until_stopped();
	return 0;
}

static void bench_work_fn(struct work_struct *work)
{
	struct bench_work *w = container_of(work, struct bench_work, work);

	atomic_inc(&w->c->ran);
}

static int bench_wq_producer(void *arg)
{
	struct bench_ctx *c = arg;
	unsigned int i;
	u64 t;

	wait_for_completion(&c->go);
	t = ktime_get_ns();
	for (i = 0; i < c->adds; i++) {
		queue_work(c->wq, &c->works[c->key_mod ? i % c->key_mod : i].work);
		if (i % 256 == 255)
			cond_resched();
	}
	c->prod_ns = ktime_get_ns() - t;
	complete(&c->produced);
	bench_idle_until_stopped();
	return 0;
}

static void bench_rh_work_fn(struct work_struct *work)
{
	struct bench_rh *e = container_of(work, struct bench_rh, work);

	/* The processing: count, as every other consumer. The entry stays. */
	atomic_inc(&e->c->ran);
}

/*
 * Find the key's entry, or allocate and insert one. Entries are never
 * freed while the producer runs, so the pointer outlives the RCU read
 * section of the lookup.
 */
static struct bench_rh *bench_rh_get(struct bench_ctx *c,
				     const struct bench_key *k)
{
	struct bench_rh *e, *old;
	unsigned int tries;

	e = rhashtable_lookup_fast(&c->ht, k, bench_rh_params);
	if (likely(e))
		return e;
	e = kmalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return NULL;
	e->key = *k;
	e->c = c;
	INIT_WORK(&e->work, bench_rh_work_fn);
	atomic_inc(&c->allocs);
	/* -EBUSY/-EAGAIN/-ENOMEM while the table grows: retry. */
	for (tries = 0;; tries++) {
		old = rhashtable_lookup_get_insert_fast(&c->ht, &e->node,
							bench_rh_params);
		if (!IS_ERR(old) || tries == 1000)
			break;
		atomic_inc(&c->retries);
		cond_resched();
	}
	if (old) {
		/* Raced with another inserter (not here: one producer), or failed. */
		kfree(e);
		atomic_dec(&c->allocs);
		return IS_ERR(old) ? NULL : old;
	}
	return e;
}

static int bench_rh_producer(void *arg)
{
	struct bench_ctx *c = arg;
	struct bench_rh *e;
	struct bench_key k;
	unsigned int i;
	u64 t;

	wait_for_completion(&c->go);
	t = ktime_get_ns();
	for (i = 0; i < c->adds; i++) {
		bench_key(&k, c->key_mod ? i % c->key_mod : i);
		e = bench_rh_get(c, &k);
		if (e)
			queue_work(c->wq, &e->work);	/* PENDING: dedup */
		else
			atomic_inc(&c->errors);
		if (i % 256 == 255)
			cond_resched();
	}
	c->prod_ns = ktime_get_ns() - t;
	complete(&c->produced);
	bench_idle_until_stopped();
	return 0;
}

static void bench_rh_free(void *ptr, void *arg)
{
	kfree(ptr);
}

static void bench_ctx_init(struct bench_ctx *c, unsigned int adds,
			   unsigned int key_mod)
{
	memset(c, 0, sizeof(*c));
	c->adds = adds;
	c->key_mod = key_mod;
	init_completion(&c->go);
	init_completion(&c->produced);
}

static void bench_report_tput(const char *name, const char *impl,
			      struct bench_ctx *c, u64 ns)
{
	pr_info("RESULT suite=%s impl=%s rep=%u adds=%u ran=%d consumers=%u ns=%llu prod_ns=%llu sleeps=%d allocs=%d retries=%d errors=%d\n",
		name, impl, rep, c->adds, atomic_read(&c->ran), consumers, ns,
		c->prod_ns, atomic_read(&c->sleeps), atomic_read(&c->allocs),
		atomic_read(&c->retries), atomic_read(&c->errors));
}

enum bench_impl {
	IMPL_WQ, IMPL_WQ_RHASH, IMPL_KWQ, IMPL_KWQ_BATCH, IMPL_KWQ_REF, NR_IMPLS
};

static const char *const bench_impl_names[NR_IMPLS] = {
	[IMPL_WQ] = "workqueue",
	[IMPL_WQ_RHASH] = "wq_rhash",
	[IMPL_KWQ] = "kwq",
	[IMPL_KWQ_BATCH] = "kwq_batch",
	[IMPL_KWQ_REF] = "kwq_ref",
};

/* kwq_ref: a handle on each of the @key_mod keys of @c->q. */
static int bench_refs_get(struct bench_ctx *c)
{
	struct bench_key k;
	unsigned int i;

	c->refs = kvcalloc(c->key_mod, sizeof(*c->refs), GFP_KERNEL);
	if (!c->refs)
		return -ENOMEM;
	for (i = 0; i < c->key_mod; i++) {
		bench_key(&k, i);
		c->refs[i] = kwq_key_get(c->q, &k, sizeof(k), GFP_KERNEL);
		if (IS_ERR(c->refs[i])) {
			int ret = PTR_ERR(c->refs[i]);

			c->refs[i] = NULL;
			return ret;
		}
	}
	return 0;
}

static void bench_refs_put(struct bench_ctx *c)
{
	unsigned int i;

	if (!c->refs)
		return;
	for (i = 0; i < c->key_mod; i++)
		kwq_key_put(c->refs[i]);
	kvfree(c->refs);
	c->refs = NULL;
}

/*
 * kwq: one producer, @consumers consumers, timed until drained; with
 * IMPL_KWQ_BATCH, the batch calls (buffers are allocated before the
 * clock); with IMPL_KWQ_REF (hot keys only), adds by key handle.
 */
static int bench_kwq_tput(const char *name, unsigned int adds,
			  unsigned int key_mod, enum bench_impl impl)
{
	struct task_struct *prod, *cons[BENCH_CONSUMERS_MAX] = {};
	bool batched = impl == IMPL_KWQ_BATCH;
	int (*produce)(void *) = bench_kwq_producer;
	struct bench_ctx c;
	unsigned int i;
	u64 t0, t1;
	int ret = 0;

	if (batched)
		produce = bench_kwqb_producer;
	else if (impl == IMPL_KWQ_REF)
		produce = bench_kwqr_producer;
	bench_ctx_init(&c, adds, key_mod);
	if (batched) {
		c.bkeys = kcalloc(batch, sizeof(*c.bkeys), GFP_KERNEL);
		c.kkeys = kcalloc(batch, sizeof(*c.kkeys), GFP_KERNEL);
		c.citems = kcalloc(consumers * batch, sizeof(*c.citems),
				   GFP_KERNEL);
		if (!c.bkeys || !c.kkeys || !c.citems) {
			ret = -ENOMEM;
			goto out_free;
		}
		for (i = 0; i < batch; i++) {
			c.kkeys[i].key = &c.bkeys[i];
			c.kkeys[i].len = sizeof(c.bkeys[i]);
		}
		/*
		 * Hot keys: a consumer can hold at most its share of them, so
		 * a larger min_nr would only wait out the window.
		 */
		c.min_nr = batch_min;
		if (key_mod)
			c.min_nr = min(c.min_nr, max(key_mod / consumers, 1U));
		c.min_nr = min(c.min_nr, batch);
	}
	c.q = kwq_create("kwq_bench", NULL);
	if (IS_ERR(c.q)) {
		ret = PTR_ERR(c.q);
		goto out_free;
	}
	if (impl == IMPL_KWQ_REF) {
		ret = bench_refs_get(&c);
		if (ret)
			goto out;
	}
	for (i = 0; i < consumers; i++) {
		cons[i] = bench_start(batched ? bench_kwqb_consumer :
				      bench_kwq_consumer, &c, "kwq_bench_c", i);
		if (IS_ERR(cons[i])) {
			ret = PTR_ERR(cons[i]);
			goto out;
		}
	}
	prod = bench_start(produce, &c, "kwq_bench_p", 0);
	if (IS_ERR(prod)) {
		ret = PTR_ERR(prod);
		goto out;
	}
	t0 = ktime_get_ns();
	complete_all(&c.go);
	wait_for_completion(&c.produced);
	/* Nothing ready, nothing processing: every item has run. */
	ret = kwq_shutdown_drain(c.q);
	t1 = ktime_get_ns();
	bench_stop(prod);
	if (!ret)
		bench_report_tput(name, bench_impl_names[impl], &c, t1 - t0);
out:
	kwq_shutdown(c.q);
	for (i = 0; i < consumers; i++)
		bench_stop(cons[i]);
	bench_refs_put(&c);
	kwq_destroy(c.q);
out_free:
	kfree(c.citems);
	kfree(c.kkeys);
	kfree(c.bkeys);
	return ret;
}

/* The workqueue peer: work items are set up before the clock starts. */
static int bench_wq_tput(const char *name, unsigned int adds,
			 unsigned int nr_works, unsigned int key_mod)
{
	struct task_struct *prod;
	struct bench_ctx c;
	unsigned int i;
	u64 t0, t1;
	int ret = 0;

	bench_ctx_init(&c, adds, key_mod);
	c.works = kvcalloc(nr_works, sizeof(*c.works), GFP_KERNEL);
	if (!c.works)
		return -ENOMEM;
	for (i = 0; i < nr_works; i++) {
		INIT_WORK(&c.works[i].work, bench_work_fn);
		c.works[i].c = &c;
	}
	c.wq = alloc_workqueue("kwq_bench", WQ_UNBOUND, consumers);
	if (!c.wq) {
		ret = -ENOMEM;
		goto out_free;
	}
	prod = bench_start(bench_wq_producer, &c, "kwq_bench_p", 0);
	if (IS_ERR(prod)) {
		ret = PTR_ERR(prod);
		goto out_wq;
	}
	t0 = ktime_get_ns();
	complete_all(&c.go);
	wait_for_completion(&c.produced);
	flush_workqueue(c.wq);
	t1 = ktime_get_ns();
	bench_stop(prod);
	bench_report_tput(name, "workqueue", &c, t1 - t0);
out_wq:
	destroy_workqueue(c.wq);
out_free:
	kvfree(c.works);
	return ret;
}

/*
 * The peer a kernel developer writes instead of kwq: a work item per key
 * in an rhashtable. The table starts empty (default size) and grows as
 * keys are first seen, inside the timed run, as kwq's hash table does.
 */
static int bench_rh_tput(const char *name, unsigned int adds,
			 unsigned int key_mod)
{
	struct task_struct *prod;
	struct bench_ctx c;
	u64 t0, t1;
	int ret;

	bench_ctx_init(&c, adds, key_mod);
	ret = rhashtable_init(&c.ht, &bench_rh_params);
	if (ret)
		return ret;
	c.wq = alloc_workqueue("kwq_bench", WQ_UNBOUND, consumers);
	if (!c.wq) {
		ret = -ENOMEM;
		goto out_ht;
	}
	prod = bench_start(bench_rh_producer, &c, "kwq_bench_p", 0);
	if (IS_ERR(prod)) {
		ret = PTR_ERR(prod);
		goto out_wq;
	}
	t0 = ktime_get_ns();
	complete_all(&c.go);
	wait_for_completion(&c.produced);
	flush_workqueue(c.wq);
	t1 = ktime_get_ns();
	bench_stop(prod);
	bench_report_tput(name, "wq_rhash", &c, t1 - t0);
out_wq:
	destroy_workqueue(c.wq);
out_ht:
	/* Every work has run and none is queued: the entries are idle. */
	rhashtable_free_and_destroy(&c.ht, bench_rh_free, NULL);
	return ret;
}

static bool bench_impl_wanted(enum bench_impl impl)
{
	const char *name = bench_impl_names[impl], *p = impls;
	size_t len = strlen(name);

	while ((p = strstr(p, name))) {
		if ((p == impls || p[-1] == ',') && (!p[len] || p[len] == ','))
			return true;
		p += len;
	}
	return false;
}

/*
 * Every implementation back to back, the order rotating with @rep so
 * none always runs first (or last). @key_mod 0: distinct keys.
 */
static int bench_tput_suite(const char *name, unsigned int key_mod)
{
	unsigned int i, nr_works = key_mod ?: items;
	enum bench_impl impl;
	int ret = 0;

	for (i = 0; i < NR_IMPLS && !ret; i++) {
		impl = (i + rep) % NR_IMPLS;
		if (!bench_impl_wanted(impl))
			continue;
		switch (impl) {
		case IMPL_WQ:
			ret = bench_wq_tput(name, items, nr_works, key_mod);
			break;
		case IMPL_WQ_RHASH:
			ret = bench_rh_tput(name, items, key_mod);
			break;
		case IMPL_KWQ:
		case IMPL_KWQ_BATCH:
			ret = bench_kwq_tput(name, items, key_mod, impl);
			break;
		case IMPL_KWQ_REF:
			/* Handles are for long-lived keys: hot keys only. */
			if (key_mod)
				ret = bench_kwq_tput(name, items, key_mod,
						     impl);
			break;
		default:
			break;
		}
	}
	return ret;
}

/* --- redundant adds --- */

static void bench_red_report(const char *impl, u64 ops, u64 ns, u64 noops,
			     int errors)
{
	pr_info("RESULT suite=redundant impl=%s rep=%u ops=%llu ns=%llu noops=%llu errors=%d\n",
		impl, rep, ops, ns, noops, errors);
}

/* kwq: the key made ready once, then added @items times by key or handle. */
static int bench_red_kwq(bool by_ref)
{
	struct kwq_key_ref *ref = NULL;
	struct kwq_stats st;
	struct bench_key k;
	unsigned int i;
	int errors = 0;
	struct kwq *q;
	u64 t;

	q = kwq_create("kwq_bench_red", NULL);
	if (IS_ERR(q))
		return PTR_ERR(q);
	bench_key(&k, 0);
	if (by_ref) {
		ref = kwq_key_get(q, &k, sizeof(k), GFP_KERNEL);
		if (IS_ERR(ref)) {
			kwq_destroy(q);
			return PTR_ERR(ref);
		}
		errors += !!kwq_add_ref(ref);
	} else {
		errors += !!kwq_add(q, &k, sizeof(k));
	}
	/* Applied: what follows is the add of a key ready. */
	errors += kwq_len(q) != 1;
	t = ktime_get_ns();
	for (i = 0; i < items; i++) {
		if (by_ref)
			errors += !!kwq_add_ref(ref);
		else
			errors += !!kwq_add(q, &k, sizeof(k));
		if (i % 256 == 255)
			cond_resched();
	}
	t = ktime_get_ns() - t;
	/* Every add after the first changed nothing. */
	errors += !!kwq_get_stats(q, &st);
	errors += st.len != 1 || st.adds_total != 1;
	bench_red_report(by_ref ? "kwq_ref" : "kwq", items, t,
			 items - (st.adds_total - 1), errors);
	kwq_key_put(ref);
	kwq_destroy(q);
	return 0;
}

struct bench_block {
	struct work_struct work;
	struct completion release;
};

static void bench_block_fn(struct work_struct *work)
{
	struct bench_block *b = container_of(work, struct bench_block, work);

	wait_for_completion(&b->release);
}

/*
 * The workqueue peers: the work is held pending behind a blocked work of
 * an ordered workqueue, then queued @items times (workqueue), or looked
 * up in an rhashtable and queued (wq_rhash).
 */
static int bench_red_wq(bool rhash)
{
	struct bench_block block;
	struct bench_rh *e = NULL;
	struct bench_work w;
	struct work_struct *work;
	struct bench_key k;
	u64 t, noops = 0;
	struct bench_ctx c;
	unsigned int i;
	int errors = 0, ret;

	bench_ctx_init(&c, items, 1);
	bench_key(&k, 0);
	if (rhash) {
		ret = rhashtable_init(&c.ht, &bench_rh_params);
		if (ret)
			return ret;
		e = bench_rh_get(&c, &k);
		if (!e) {
			rhashtable_destroy(&c.ht);
			return -ENOMEM;
		}
		work = &e->work;
	} else {
		INIT_WORK_ONSTACK(&w.work, bench_work_fn);
		w.c = &c;
		work = &w.work;
	}
	c.wq = alloc_ordered_workqueue("kwq_bench_red", 0);
	if (!c.wq) {
		ret = -ENOMEM;
		goto out;
	}
	INIT_WORK_ONSTACK(&block.work, bench_block_fn);
	init_completion(&block.release);
	queue_work(c.wq, &block.work);
	errors += !queue_work(c.wq, work);
	t = ktime_get_ns();
	for (i = 0; i < items; i++) {
		if (rhash) {
			e = bench_rh_get(&c, &k);
			if (!e) {
				errors++;
				continue;
			}
			work = &e->work;
		}
		noops += !queue_work(c.wq, work);
		if (i % 256 == 255)
			cond_resched();
	}
	t = ktime_get_ns() - t;
	complete(&block.release);
	flush_workqueue(c.wq);
	/* It ran once: every queue_work() after the first found it pending. */
	errors += atomic_read(&c.ran) != 1;
	bench_red_report(rhash ? "wq_rhash" : "workqueue", items, t, noops,
			 errors);
	destroy_workqueue(c.wq);
	destroy_work_on_stack(&block.work);
	ret = 0;
out:
	if (!rhash)
		destroy_work_on_stack(&w.work);
	if (rhash)
		rhashtable_free_and_destroy(&c.ht, bench_rh_free, NULL);
	return ret;
}

static int bench_redundant(void)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < 4 && !ret; i++) {
		switch ((i + rep) % 4) {
		case 0:
			ret = bench_red_wq(false);
			break;
		case 1:
			ret = bench_red_wq(true);
			break;
		case 2:
			ret = bench_red_kwq(false);
			break;
		default:
			ret = bench_red_kwq(true);
			break;
		}
	}
	return ret;
}

/* --- scaling --- */

static s64 bench_far_delay(void)
{
	/* 1 h .. 2 h: never fires during the run, random tree positions. */
	return 3600LL * NSEC_PER_SEC + get_random_u32() * 838ULL;
}

static void bench_scale_report(const char *op, unsigned int n, u64 ops,
			       u64 ns, int errors)
{
	pr_info("RESULT suite=scaling op=%s rep=%u n=%u ops=%llu ns=%llu errors=%d\n",
		op, rep, n, ops, ns, errors);
}

static int bench_scale_ready(unsigned int n)
{
	u64 add_ns = 0, get_ns = 0, next = n, t;
	struct kwq_item item;
	struct bench_key k;
	unsigned int i, j;
	int errors = 0;
	struct kwq *q;

	q = kwq_create("kwq_bench_scale", NULL);
	if (IS_ERR(q))
		return PTR_ERR(q);
	for (i = 0; i < n; i++) {
		bench_key(&k, i);
		errors += !!kwq_add(q, &k, sizeof(k));
		if (i % 256 == 255)
			cond_resched();
	}
	msleep(20);	/* let a pending hash resize finish */
	/* Rounds keep the queue between n and n + BENCH_ROUND keys. */
	for (i = 0; i < scale_ops; i += BENCH_ROUND) {
		t = ktime_get_ns();
		for (j = 0; j < BENCH_ROUND; j++) {
			bench_key(&k, next++);
			errors += !!kwq_add(q, &k, sizeof(k));
		}
		add_ns += ktime_get_ns() - t;
		t = ktime_get_ns();
		for (j = 0; j < BENCH_ROUND; j++) {
			if (kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &item)) {
				errors++;
				continue;
			}
			errors += !!kwq_done(q, &item);
		}
		get_ns += ktime_get_ns() - t;
		cond_resched();
	}
	bench_scale_report("add", n, i, add_ns, errors);
	bench_scale_report("get_done", n, i, get_ns, errors);
	kwq_destroy(q);
	return 0;
}

static int bench_scale_waiting(unsigned int n)
{
	u64 ns = 0, next = n, t;
	struct bench_key k;
	unsigned int i, j;
	int errors = 0;
	struct kwq *q;
	s64 *delays;

	delays = kvmalloc_array(BENCH_ROUND, sizeof(*delays), GFP_KERNEL);
	if (!delays)
		return -ENOMEM;
	q = kwq_create("kwq_bench_scale", NULL);
	if (IS_ERR(q)) {
		kvfree(delays);
		return PTR_ERR(q);
	}
	for (i = 0; i < n; i++) {
		bench_key(&k, i);
		errors += !!kwq_add_after(q, &k, sizeof(k), bench_far_delay());
		if (i % 256 == 255)
			cond_resched();
	}
	msleep(20);
	for (i = 0; i < scale_ops; i += BENCH_ROUND) {
		for (j = 0; j < BENCH_ROUND; j++)
			delays[j] = bench_far_delay();
		t = ktime_get_ns();
		for (j = 0; j < BENCH_ROUND; j++) {
			bench_key(&k, next + j);
			errors += !!kwq_add_after(q, &k, sizeof(k), delays[j]);
		}
		ns += ktime_get_ns() - t;
		/* Untimed: back to n waiting keys. */
		for (j = 0; j < BENCH_ROUND; j++) {
			bench_key(&k, next + j);
			errors += !!kwq_remove(q, &k, sizeof(k));
		}
		next += BENCH_ROUND;
		cond_resched();
	}
	bench_scale_report("add_after", n, i, ns, errors);
	kwq_destroy(q);
	kvfree(delays);
	return 0;
}

static int bench_scaling(void)
{
	unsigned int n;
	int ret = 0;

	for (n = 1000; n <= scale_max && !ret; n *= 10) {
		ret = bench_scale_ready(n);
		if (!ret)
			ret = bench_scale_waiting(n);
	}
	return ret;
}

/* --- timer lateness --- */

struct bench_timer {
	struct kwq *q;
	u64 *deadline;
	s64 *late;
	atomic_t seen;
	atomic_t errors;
	struct completion all;
	unsigned int n;
};

static struct bench_timer *bench_dw_ctx;

static void bench_timer_seen(struct bench_timer *bt, u64 idx, u64 now)
{
	if (idx >= bt->n) {
		atomic_inc(&bt->errors);
		return;
	}
	bt->late[idx] = now - bt->deadline[idx];
	if (atomic_inc_return(&bt->seen) == bt->n)
		complete(&bt->all);
}

static int bench_timer_consumer(void *arg)
{
	struct bench_timer *bt = arg;
	struct kwq_item item;
	u64 now;
	int ret;

	for (;;) {
		ret = kwq_get(bt->q, NULL, 0, KWQ_WAIT_FOREVER, &item);
		now = ktime_get_ns();
		if (ret)
			break;
		bench_timer_seen(bt, bench_key_idx(&item), now);
		kwq_done(bt->q, &item);
	}
	bench_idle_until_stopped();
	return 0;
}

struct bench_dwork {
	struct delayed_work dw;
	u64 idx;
};

static void bench_dwork_fn(struct work_struct *work)
{
	struct bench_dwork *d = container_of(to_delayed_work(work),
					     struct bench_dwork, dw);

	bench_timer_seen(bench_dw_ctx, d->idx, ktime_get_ns());
}

static int bench_cmp_s64(const void *a, const void *b)
{
	s64 x = *(const s64 *)a, y = *(const s64 *)b;

	return x < y ? -1 : x > y;
}

static void bench_timer_report(const char *impl, struct bench_timer *bt)
{
	unsigned int n = bt->n, early = 0;

	sort(bt->late, n, sizeof(*bt->late), bench_cmp_s64, NULL);
	/* Items run before their deadline (negative lateness). */
	while (early < n && bt->late[early] < 0)
		early++;
	pr_info("RESULT suite=timer impl=%s rep=%u items=%u min_ns=%lld p50_ns=%lld p99_ns=%lld max_ns=%lld early=%u errors=%d\n",
		impl, rep, n, bt->late[0], bt->late[n / 2],
		bt->late[(u64)n * 99 / 100], bt->late[n - 1], early,
		atomic_read(&bt->errors));
}

static int bench_timer_kwq(struct bench_timer *bt, const s64 *delays)
{
	struct task_struct *cons[BENCH_CONSUMERS_MAX] = {};
	struct bench_key k;
	unsigned int i;
	int ret = 0;

	bt->q = kwq_create("kwq_bench_timer", NULL);
	if (IS_ERR(bt->q))
		return PTR_ERR(bt->q);
	for (i = 0; i < consumers; i++) {
		cons[i] = bench_start(bench_timer_consumer, bt, "kwq_bench_t", i);
		if (IS_ERR(cons[i])) {
			ret = PTR_ERR(cons[i]);
			goto out;
		}
	}
	for (i = 0; i < bt->n; i++) {
		bench_key(&k, i);
		bt->deadline[i] = ktime_get_ns() + delays[i];
		if (kwq_add_after(bt->q, &k, sizeof(k), delays[i]))
			atomic_inc(&bt->errors);
	}
	if (!wait_for_completion_timeout(&bt->all, 60 * HZ))
		ret = -ETIMEDOUT;
	else
		bench_timer_report("kwq", bt);
out:
	kwq_shutdown(bt->q);
	for (i = 0; i < consumers; i++)
		bench_stop(cons[i]);
	kwq_destroy(bt->q);
	return ret;
}

static int bench_timer_dwork(struct bench_timer *bt, const s64 *delays)
{
	struct workqueue_struct *wq;
	struct bench_dwork *dws;
	unsigned int i;
	int ret = 0;

	dws = kvcalloc(bt->n, sizeof(*dws), GFP_KERNEL);
	if (!dws)
		return -ENOMEM;
	wq = alloc_workqueue("kwq_bench_timer", WQ_UNBOUND, consumers);
	if (!wq) {
		kvfree(dws);
		return -ENOMEM;
	}
	bench_dw_ctx = bt;
	for (i = 0; i < bt->n; i++) {
		INIT_DELAYED_WORK(&dws[i].dw, bench_dwork_fn);
		dws[i].idx = i;
	}
	for (i = 0; i < bt->n; i++) {
		bt->deadline[i] = ktime_get_ns() + delays[i];
		/*
		 * Rounded up to whole jiffies, plus one: a timer of n
		 * jiffies fires once jiffies has advanced n times, which
		 * can be up to a tick sooner than n ticks of time. Without
		 * the + 1 work runs before its deadline, which kwq's
		 * add_after never does; every caller that must not run
		 * early adds it.
		 */
		queue_delayed_work(wq, &dws[i].dw,
				   nsecs_to_jiffies(delays[i] + TICK_NSEC - 1) + 1);
	}
	if (!wait_for_completion_timeout(&bt->all, 60 * HZ))
		ret = -ETIMEDOUT;
	else
		bench_timer_report("delayed_work", bt);
	for (i = 0; i < bt->n; i++)
		cancel_delayed_work_sync(&dws[i].dw);
	destroy_workqueue(wq);
	kvfree(dws);
	return ret;
}

static int bench_timer(void)
{
	struct bench_timer bt = { .n = timer_items };
	s64 *delays;
	unsigned int i;
	int ret = -ENOMEM;

	delays = kvmalloc_array(bt.n, sizeof(*delays), GFP_KERNEL);
	bt.deadline = kvmalloc_array(bt.n, sizeof(*bt.deadline), GFP_KERNEL);
	bt.late = kvmalloc_array(bt.n, sizeof(*bt.late), GFP_KERNEL);
	if (!delays || !bt.deadline || !bt.late)
		goto out;
	for (i = 0; i < bt.n; i++)
		delays[i] = NSEC_PER_MSEC +
			    get_random_u32_below(99 * NSEC_PER_MSEC);

	init_completion(&bt.all);
	ret = bench_timer_kwq(&bt, delays);
	if (ret)
		goto out;
	atomic_set(&bt.seen, 0);
	reinit_completion(&bt.all);
	ret = bench_timer_dwork(&bt, delays);
out:
	kvfree(bt.late);
	kvfree(bt.deadline);
	kvfree(delays);
	return ret;
}

static int __init bench_init(void)
{
	int ret;

	if (!consumers || consumers > BENCH_CONSUMERS_MAX || !items ||
	    items > BENCH_ITEMS_MAX || !hot_keys || hot_keys > items ||
	    scale_max > BENCH_ITEMS_MAX || !scale_ops ||
	    scale_ops % BENCH_ROUND || !batch || batch > BENCH_BATCH_MAX ||
	    !batch_window_us || !timer_items ||
	    timer_items > BENCH_ITEMS_MAX)
		return -EINVAL;
	if (!strcmp(suite, "throughput"))
		ret = bench_tput_suite("throughput", 0);
	else if (!strcmp(suite, "hotkey"))
		ret = bench_tput_suite("hotkey", hot_keys);
	else if (!strcmp(suite, "redundant"))
		ret = bench_redundant();
	else if (!strcmp(suite, "scaling"))
		ret = bench_scaling();
	else if (!strcmp(suite, "timer"))
		ret = bench_timer();
	else
		ret = -EINVAL;
	if (ret)
		pr_err("RESULT suite=%s rep=%u error=%d\n", suite, rep, ret);
	else
		pr_info("DONE suite=%s rep=%u\n", suite, rep);
	/* The work is done at load; stay loaded so the result is "ok". */
	return 0;
}

static void __exit bench_exit(void)
{
}

module_init(bench_init);
module_exit(bench_exit);

MODULE_DESCRIPTION("kwq benchmarks against the kernel workqueue and a workqueue + rhashtable peer");
MODULE_LICENSE("GPL");
