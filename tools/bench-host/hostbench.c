// SPDX-License-Identifier: GPL-2.0
/*
 * Host benchmark driver: runs one scenario on the unmodified kwq core
 * (built against the shims in shim/) and marks its measured phases for
 * callgrind. Single threaded; gets never block; the queue runs on a fake
 * clock that advances 1 us per operation (frozen for add_after, so that
 * nothing expires while the delay tree fills).
 *
 *   hostbench fill N        add N distinct keys; then get + done them all
 *   hostbench steady N M    N keys ready; M rounds of add (a new key) +
 *                           get + done, so the queue stays at N
 *   hostbench after-near N M  add_after N distinct keys with deadlines
 *                           1-100 ms away; then M rounds of add_after (a
 *                           new key) + remove (the oldest), N waiting
 *   hostbench after-far N M   the same with deadlines 1-2 h away
 *                           after-near and after-far then run the fake
 *                           clock from one armed deadline to the next
 *                           until every key is ready (phase=expire)
 *
 * Under callgrind every measured phase starts with a dump (phase=setup:
 * whatever came before) and ends with one whose label says what it was:
 *   hb scen=S n=N phase=P ops=K groups=G
 * G lists the operations to cost, as name:fn+fn,...: report.py sums the
 * inclusive cost of the calls from this file's hb_* functions to those kwq
 * functions (so the driver's own work, key formatting and the loop, is
 * never counted) and checks that each was called K times. Work the core
 * queues (the hash table growth) runs right after the operation that
 * queued it, as an idle worker would, and is dumped apart: phase=grow for
 * the work outside q->lock, phase=grow_hold for each critical section.
 * The expiry's critical sections are dumped the same way, the first
 * HB_MAX_EXPIRE_HOLDS of them: phase=expire between them (and after the
 * last), phase=expire_hold for each; the last expire dump's label adds
 * keys=K (made ready) and moves=M (cascaded by the delay wheel). A dump
 * in the middle of a call splits its arc, so report.py costs this phase
 * from the dumps' totals (the driver's loop adds a few instructions per
 * expiry call) and the cascade from kwq_wheel_cascade's own arcs.
 *
 * Run natively, stdout gets wall clock (noisy) times; under valgrind they
 * read 0:
 *   native scen=S n=N phase=P ops=K ns=T
 *   hold scen=S n=N phase=P seq=I ns=T   one per deferred critical section
 *   holdmax scen=S n=N phase=P ns=T where=work|operation
 *                                        the longest lock hold of all (fill)
 *   mem scen=S n=N items=I obj_bytes=B slab_bytes=B table_bytes=B ...
 * Any unexpected return code stops the run with an error.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <valgrind/callgrind.h>

#include <linux/kwq.h>

#include "benchkeys.h"
#include "hostbench.h"

/* src/kwq_internal.h: the module init creates the node caches. */
int kwq_core_init(void);
void kwq_core_exit(void);

#define HB_CLOCK_STEP_NS	1000ULL

static const char *hb_scen;
static unsigned long hb_n;

static void __attribute__((format(printf, 1, 2), noreturn)) hb_fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "hostbench: %s n=%lu: ", hb_scen, hb_n);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/*
 * Under valgrind the clocks read 0: what the program does must not depend
 * on a time (printing one touches other memory than printing another), or
 * the simulated caches would differ between runs.
 */
static bool hb_on_valgrind;

static u64 hb_ns(void)
{
	struct timespec ts;

	if (hb_on_valgrind)
		return 0;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* --- the fake clock --- */

struct hb_clock {
	struct kwq_clock clock;
	u64 now;
	u64 armed;		/* U64_MAX: not armed */
	struct kwq *q;
};

static u64 hb_clock_now(const struct kwq_clock *clock)
{
	return ((const struct hb_clock *)clock)->now;
}

static void hb_clock_arm(const struct kwq_clock *clock, struct kwq *q,
			 u64 deadline_ns)
{
	((struct hb_clock *)clock)->armed = deadline_ns;
}

static void hb_clock_cancel(const struct kwq_clock *clock, struct kwq *q)
{
	((struct hb_clock *)clock)->armed = ~0ULL;
}

static struct hb_clock hb_clk = {
	.clock = {
		.now = hb_clock_now,
		.arm = hb_clock_arm,
		.cancel = hb_clock_cancel,
	},
	.now = 1000000000ULL,
	.armed = ~0ULL,
};

/* --- keys (benchkeys.h) --- */

/* Padded: see bench_key(). */
static char hb_key_buf[64] __attribute__((aligned(64)));

static size_t hb_key(u64 i)
{
	return bench_key(hb_key_buf, i);
}

/* --- deterministic deadlines --- */

static u64 hb_rng = 0x686f737462656e63ULL;

static u64 hb_rand(void)
{
	u64 z = (hb_rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* --- measurement --- */

#define HB_MAX_HOLDS	65536

static const char *hb_phase;
static u64 hb_work_ns;		/* native time spent in deferred work */
/*
 * Lock holds, timed with the TSC (cheap enough to watch every one):
 * those of deferred work one by one; with hb_watch_all (natively only,
 * where the hook costs no counted instructions) also the longest of all
 * of them, operations included, in case growth is not deferred at all.
 */
static u64 hb_hold_ticks[HB_MAX_HOLDS];
static unsigned int hb_holds, hb_depth;
static bool hb_in_work, hb_watch_all;
static u64 hb_hold_start, hb_max_ticks;
static bool hb_max_in_work;
/* The expiry's critical sections, dumped one by one up to a bound. */
#define HB_MAX_EXPIRE_HOLDS	8192
static bool hb_in_expire;
static unsigned int hb_expire_holds;
static u64 hb_tsc0, hb_ns0;
/* Made before the phase: nothing is formatted while collecting. */
static char hb_label_setup[256], hb_label_part[256], hb_label_grow[256];
static char hb_label_hold[256], hb_label_expire_hold[256];

static u64 hb_tsc(void)
{
	return hb_on_valgrind ? 0 : __builtin_ia32_rdtsc();
}

static void hb_label(char *buf, const char *phase, unsigned long ops,
		     const char *groups)
{
	snprintf(buf, 256, "hb scen=%s n=%lu phase=%s ops=%lu groups=%s",
		 hb_scen, hb_n, phase, ops, groups);
}

/* Every critical section of deferred work is one grow_hold dump. */
static void hb_lock_hook(void *lock, bool acquire)
{
	u64 d;

	bool expire = hb_in_expire && hb_expire_holds < HB_MAX_EXPIRE_HOLDS;

	if (acquire) {
		if (hb_depth++)
			return;
		if (hb_in_work)
			CALLGRIND_DUMP_STATS_AT(hb_label_grow);
		else if (expire)
			CALLGRIND_DUMP_STATS_AT(hb_label_part);
		hb_hold_start = hb_tsc();
		return;
	}
	if (--hb_depth)
		return;
	d = hb_tsc() - hb_hold_start;
	if (hb_in_work || expire) {
		CALLGRIND_DUMP_STATS_AT(hb_in_work ? hb_label_hold :
					hb_label_expire_hold);
		if (hb_holds < HB_MAX_HOLDS)
			hb_hold_ticks[hb_holds] = d;
		hb_holds++;
		hb_expire_holds += !hb_in_work;
	}
	/* Natively only: a branch on a time would make counts vary. */
	if (hb_watch_all && d > hb_max_ticks) {
		hb_max_ticks = d;
		hb_max_in_work = hb_in_work;
	}
}

static void hb_begin(const char *phase, const char *groups, bool watch_all)
{
	hb_phase = phase;
	hb_work_ns = 0;
	hb_holds = 0;
	hb_max_ticks = 0;
	hb_label(hb_label_setup, "setup", 0, "-");
	hb_label(hb_label_part, phase, 0, groups);
	hb_label(hb_label_grow, "grow", 0, "-");
	hb_label(hb_label_hold, "grow_hold", 1, "-");
	hb_label(hb_label_expire_hold, "expire_hold", 0, "-");
	hb_watch_all = watch_all && !hb_on_valgrind;
	if (hb_watch_all)
		hostbench_lock_hook = hb_lock_hook;
	hb_tsc0 = hb_tsc();
	hb_ns0 = hb_ns();
	/*
	 * Everything since the last phase goes to a dump of its own. (Not
	 * collecting outside phases would not do: callgrind still counts
	 * the calls, and a dump only clears arcs that have a cost.)
	 */
	CALLGRIND_DUMP_STATS_AT(hb_label_setup);
}

/* @extra: more fields for the phase's last dump label ("" for none). */
static void hb_end_extra(unsigned long ops, const char *groups,
			 const char *extra)
{
	u64 now = hb_ns(), ns = now - hb_ns0 - hb_work_ns;
	double ns_per_tick = (double)(now - hb_ns0) / (hb_tsc() - hb_tsc0 ?: 1);
	char label[256];
	unsigned int i;

	hb_label(label, hb_phase, ops, groups);
	strncat(label, extra, sizeof(label) - strlen(label) - 1);
	CALLGRIND_DUMP_STATS_AT(label);
	hostbench_lock_hook = NULL;
	printf("native scen=%s n=%lu phase=%s ops=%lu ns=%llu\n", hb_scen,
	       hb_n, hb_phase, ops, (unsigned long long)ns);
	if (hb_holds > HB_MAX_HOLDS)
		hb_fail("%u critical sections in deferred work, more than %d",
			hb_holds, HB_MAX_HOLDS);
	for (i = 0; i < hb_holds; i++)
		printf("hold scen=%s n=%lu phase=%s seq=%u ns=%.0f\n", hb_scen,
		       hb_n, hb_phase, i, hb_hold_ticks[i] * ns_per_tick);
	if (hb_watch_all)
		printf("holdmax scen=%s n=%lu phase=%s ns=%.0f where=%s\n",
		       hb_scen, hb_n, hb_phase, hb_max_ticks * ns_per_tick,
		       hb_max_in_work ? "work" : "operation");
	hb_phase = NULL;
}

static void hb_end(unsigned long ops, const char *groups)
{
	hb_end_extra(ops, groups, "");
}

/*
 * Run the work the last operation queued. Inside a measured phase its
 * cost goes to dumps of its own, never to the operation's.
 */
static void hb_run_work(void)
{
	u64 t0;

	if (!hostbench_work_pending())
		return;
	if (!hb_phase) {
		hostbench_run_work();
		return;
	}
	CALLGRIND_DUMP_STATS_AT(hb_label_part);
	t0 = hb_ns();
	hostbench_lock_hook = hb_lock_hook;
	hb_in_work = true;
	hostbench_run_work();
	hb_in_work = false;
	hostbench_lock_hook = hb_watch_all ? hb_lock_hook : NULL;
	CALLGRIND_DUMP_STATS_AT(hb_label_grow);
	hb_work_ns += hb_ns() - t0;
}

/* Fire the fake clock's timer if its deadline has passed. */
static void hb_tick(struct kwq *q)
{
	hb_clk.now += HB_CLOCK_STEP_NS;
	if (hb_clk.armed <= hb_clk.now) {
		hb_clk.armed = ~0ULL;
		kwq_clock_expired(q);
	}
}

/* --- operations; report.py counts the calls made from hb_* only --- */

static void hb_add(struct kwq *q, u64 i)
{
	size_t len = hb_key(i);
	int ret = kwq_add(q, hb_key_buf, len);

	if (ret)
		hb_fail("kwq_add(%.*s) = %d", (int)len, hb_key_buf, ret);
	hb_run_work();
}

static void hb_add_after(struct kwq *q, u64 i, s64 delay_ns)
{
	size_t len = hb_key(i);
	int ret = kwq_add_after(q, hb_key_buf, len, delay_ns);

	if (ret)
		hb_fail("kwq_add_after(%.*s) = %d", (int)len, hb_key_buf, ret);
	hb_run_work();
}

static void hb_remove(struct kwq *q, u64 i)
{
	size_t len = hb_key(i);
	int ret = kwq_remove(q, hb_key_buf, len);

	if (ret)
		hb_fail("kwq_remove(%.*s) = %d", (int)len, hb_key_buf, ret);
	hb_run_work();
}

static void hb_get_done(struct kwq *q)
{
	struct kwq_item item;
	int ret;

	ret = kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &item);
	if (ret)
		hb_fail("kwq_get() = %d", ret);
	ret = kwq_done(q, &item);
	if (ret)
		hb_fail("kwq_done() = %d", ret);
	hb_run_work();
}

static void hb_expect_len(struct kwq *q, long want)
{
	long len = kwq_len(q);

	if (len != want)
		hb_fail("kwq_len() = %ld, want %ld", len, want);
}

static void hb_mem(unsigned long items)
{
	struct hostbench_cache_stats st[16];
	u64 obj = 0, slab = 0, objects = 0;
	int i, n = hostbench_caches(st, 16);

	if (n > 16)
		hb_fail("more slab caches than expected: %d", n);
	for (i = 0; i < n; i++) {
		obj += (u64)st[i].live * st[i].object_size;
		slab += (u64)st[i].slabs * st[i].slab_bytes;
		objects += st[i].live;
		printf("cache scen=%s n=%lu name=%s object_size=%u slab_bytes=%u per_slab=%u live=%lu slabs=%lu\n",
		       hb_scen, hb_n, st[i].name, st[i].object_size,
		       st[i].slab_bytes, st[i].objects_per_slab, st[i].live,
		       st[i].slabs);
	}
	if (objects != items)
		hb_fail("%llu slab objects for %lu items", (unsigned long long)objects, items);
	printf("mem scen=%s n=%lu items=%lu obj_bytes=%llu slab_bytes=%llu table_bytes=%llu kmalloc_bytes=%llu\n",
	       hb_scen, hb_n, items, (unsigned long long)obj,
	       (unsigned long long)slab,
	       (unsigned long long)hostbench_kvmalloc_bytes(),
	       (unsigned long long)hostbench_kmalloc_bytes());
}

static struct kwq *hb_create(void)
{
	struct kwq_config cfg = { .clock = &hb_clk.clock };
	struct kwq *q = kwq_create("hostbench", &cfg);

	if (!q || (unsigned long)q >= (unsigned long)-4095)
		hb_fail("kwq_create() = %ld", (long)q);
	return q;
}

/* What report.py costs: the calls from hb_* functions to these. */
#define HB_ADD		"add:kwq_add"
#define HB_GET_DONE	"get_done:kwq_get+kwq_done"
#define HB_ADD_AFTER	"add_after:kwq_add_after"
#define HB_REMOVE	"remove:kwq_remove"

/* (a) add N distinct keys, then get + done all of them */
static void hb_fill(struct kwq *q, unsigned long n)
{
	unsigned long i;

	hb_begin("add", HB_ADD, true);
	for (i = 0; i < n; i++) {
		hb_add(q, i);
		hb_tick(q);
	}
	hb_end(n, HB_ADD);
	hb_expect_len(q, n);
	hb_mem(n);

	hb_begin("get_done", HB_GET_DONE, false);
	for (i = 0; i < n; i++) {
		hb_get_done(q);
		hb_tick(q);
	}
	hb_end(n, HB_GET_DONE);
	hb_expect_len(q, 0);
}

/* (b) the worker loop on a queue that holds N keys */
static void hb_steady(struct kwq *q, unsigned long n, unsigned long m)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		hb_add(q, i);
		hb_tick(q);
	}
	hb_expect_len(q, n);
	hb_mem(n);

	hb_begin("loop", HB_ADD "," HB_GET_DONE, false);
	for (i = 0; i < m; i++) {
		hb_add(q, n + i);
		hb_get_done(q);
		hb_tick(q);
	}
	hb_end(m, HB_ADD "," HB_GET_DONE);
	hb_expect_len(q, n);
}

/*
 * The timeline: step the fake clock to each armed deadline and run the
 * expiry until the @n waiting keys are all ready. Every critical section
 * is watched (natively: the longest; under callgrind: dumped, up to
 * HB_MAX_EXPIRE_HOLDS), the cascade's moves counted.
 */
static void hb_expire_all(struct kwq *q, unsigned long n)
{
	u64 moves = hostbench_wheel_moves(q);
	unsigned long calls = 0;
	char extra[64];

	hb_begin("expire", "-", true);
	hb_expire_holds = 0;
	hb_in_expire = true;
	hostbench_lock_hook = hb_lock_hook;
	while (hb_clk.armed != ~0ULL) {
		if (hb_clk.armed > hb_clk.now)
			hb_clk.now = hb_clk.armed;
		hb_clk.armed = ~0ULL;
		kwq_clock_expired(q);
		calls++;
	}
	hb_in_expire = false;
	moves = hostbench_wheel_moves(q) - moves;
	snprintf(extra, sizeof(extra), " keys=%lu moves=%llu", n,
		 (unsigned long long)moves);
	hb_end_extra(calls, "-", extra);
	printf("expire scen=%s n=%lu calls=%lu keys=%lu moves=%llu sections=%u\n",
	       hb_scen, hb_n, calls, n, (unsigned long long)moves,
	       hb_expire_holds);
	hb_expect_len(q, n);
}

/*
 * (c) add_after: N distinct keys into the delay tree; then M rounds of
 * add_after of a new key and remove of the oldest one, so N keys stay
 * waiting and new nodes reuse freed ones, as in a queue that runs for a
 * while (the fill's nodes all come from fresh slab pages).
 */
static void hb_after(struct kwq *q, unsigned long n, unsigned long m,
		     u64 base_ns, u64 span_ns)
{
	unsigned long i;

	hb_begin("fill", HB_ADD_AFTER, false);
	for (i = 0; i < n; i++)
		hb_add_after(q, i, base_ns + hb_rand() % span_ns);
	hb_end(n, HB_ADD_AFTER);
	hb_expect_len(q, 0);
	hb_mem(n);

	hb_begin("at_n", HB_ADD_AFTER "," HB_REMOVE, false);
	for (i = 0; i < m; i++) {
		hb_add_after(q, n + i, base_ns + hb_rand() % span_ns);
		hb_remove(q, i);
	}
	hb_end(m, HB_ADD_AFTER "," HB_REMOVE);
	if (hb_clk.armed == ~0ULL)
		hb_fail("no timer armed with keys waiting");
	hb_expire_all(q, n);
}

static char hb_stdout_buf[4096];

int main(int argc, char **argv)
{
	unsigned long m = 0;
	struct kwq *q;

	if (argc < 3) {
		fprintf(stderr, "usage: %s fill|steady|after-near|after-far N [M]\n",
			argv[0]);
		return 2;
	}
	hb_scen = argv[1];
	hb_n = strtoul(argv[2], NULL, 0);
	if (argc > 3)
		m = strtoul(argv[3], NULL, 0);
	if (!hb_n)
		hb_fail("N must be > 0");
	/* Not allocated at the first printf(), between two dumps. */
	setvbuf(stdout, hb_stdout_buf, _IOLBF, sizeof(hb_stdout_buf));
	hb_on_valgrind = RUNNING_ON_VALGRIND;

	if (kwq_core_init())
		hb_fail("kwq_core_init() failed");
	q = hb_create();
	hb_clk.q = q;

	if (!strcmp(hb_scen, "fill"))
		hb_fill(q, hb_n);
	else if (!strcmp(hb_scen, "steady") && m)
		hb_steady(q, hb_n, m);
	else if (!strcmp(hb_scen, "after-near") && m)
		hb_after(q, hb_n, m, 1000000ULL, 99000000ULL);
	else if (!strcmp(hb_scen, "after-far") && m)
		hb_after(q, hb_n, m, 3600000000000ULL, 3600000000000ULL);
	else
		hb_fail("unknown scenario, or M missing");

	kwq_destroy(q);
	hostbench_run_work();
	kwq_core_exit();
	printf("ok scen=%s n=%lu\n", hb_scen, hb_n);
	return 0;
}
