// SPDX-License-Identifier: GPL-2.0
/*
 * Table benchmark driver (make bench-host-tables, tables.sh): the kernel's
 * rhashtable (through rhtb.c) against kwq's own hash table (through the
 * unmodified core's public API), on hostbench.c's keys and under the same
 * callgrind cache model. Single threaded; deferred work (the growths, and
 * RCU callbacks) runs right after the operation that queued it, as an
 * idle worker would, and is measured apart.
 *
 *   tablebench kwq|rht-sip|rht-jhash N M
 *
 * phase=fill: insert N distinct keys (0 -> N, growths included, dumped
 * apart); phase=at_n: M rounds of insert of a new key (lookup miss +
 * insert) and remove of the oldest one (lookup hit + unlink), N keys
 * present throughout. kwq: kwq_add() of a new key, kwq_remove() of a
 * ready one, what the queue does for a key (hash, lock, chain walk, node,
 * FIFO). rhashtable: rhtb_insert() (node allocation, key copy,
 * rhashtable_lookup_insert_key()) and rhtb_remove() (rhashtable_lookup(),
 * rhashtable_remove_fast(), free), and within them the table calls alone.
 *
 * Dump labels, as hostbench's:
 *   tb scen=S n=N phase=P ops=K groups=G [work=W]
 * G lists name:function pairs; tables.py sums the inclusive cost of the
 * calls to each function (each must have been called K times). Deferred
 * work is phase=grow, its critical sections phase=grow_hold, each dump
 * labelled with the work item's number W. Which sections: kwq, every
 * q->lock hold of its grow work; rhashtable, the bucket lock holds of
 * its rehash (the old bucket's bit lock, with the new buckets' taken
 * inside it) of the old table's longest chains, up to TB_MARKS a growth:
 * a hold's cost grows with its chain's length, and there are 2^20 holds
 * in the last growth, too many to dump. Which buckets those are, the
 * native run finds (walking the old table before each growth) and writes
 * to the file marks-SCEN-N in the working directory; the run under
 * callgrind, which hashes and grows exactly as the native one, reads it
 * at start, so it looks at no chain itself: a walk would bring the lines
 * the rehash reads into the simulated caches, and switching callgrind's
 * instrumentation off around it would clear them.
 *
 * Natively, stdout also gets the longest hold of any lock in deferred
 * work (TSC, noisy):
 *   holdmax scen=S n=N phase=P ns=T
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
#include "rhtb.h"

int kwq_core_init(void);
void kwq_core_exit(void);

static const char *tb_scen;
static unsigned long tb_n;
static bool tb_on_valgrind;

static void __attribute__((format(printf, 1, 2), noreturn)) tb_fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "tablebench: %s n=%lu: ", tb_scen, tb_n);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* --- kwq's clock: time does not matter here, it stands still --- */

static u64 tb_clock_now(const struct kwq_clock *clock)
{
	return 1000000000ULL;
}

static void tb_clock_arm(const struct kwq_clock *clock, struct kwq *q,
			 u64 deadline_ns)
{
}

static void tb_clock_cancel(const struct kwq_clock *clock, struct kwq *q)
{
}

static const struct kwq_clock tb_clock = {
	.now = tb_clock_now,
	.arm = tb_clock_arm,
	.cancel = tb_clock_cancel,
};

/* --- keys: hostbench.c's (benchkeys.h) --- */

/* Padded: see bench_key(). */
static char tb_key_buf[64] __attribute__((aligned(64)));

static size_t tb_key(u64 i)
{
	return bench_key(tb_key_buf, i);
}

/* --- the tables --- */

static struct kwq *tb_q;
static struct rhtb *tb_t;

/* What tables.py costs: the calls to these functions. */
#define TB_KWQ_INSERT	"insert:kwq_add"
#define TB_KWQ_REMOVE	"remove:kwq_remove"
#define TB_RHT_INSERT	"insert:rhtb_insert"
#define TB_RHT_REMOVE	"remove:rhtb_remove"
#define TB_SIP_TABLE	",table_insert:rhtb_table_insert_sip,table_remove:rhtb_table_remove_sip"
#define TB_JH_TABLE	",table_insert:rhtb_table_insert_jhash,table_remove:rhtb_table_remove_jhash"

static const char *tb_fill_groups, *tb_at_n_groups;

/* --- measurement --- */

#define TB_MARKS	64
#define TB_MAX_WORKS	64

static const char *tb_phase;
static char tb_label_part[256], tb_label_grow[256], tb_label_hold[256];
static unsigned int tb_work;		/* work items run, this phase */
static unsigned int tb_depth;
static bool tb_dumping;			/* inside a dumped hold */
/* Per growth of the fill: the old buckets whose holds are dumped. */
static unsigned long tb_marks[TB_MAX_WORKS][TB_MARKS];
static int tb_nr_marks[TB_MAX_WORKS];
static unsigned int tb_chain[TB_MAX_WORKS];
static int tb_works_marked;
/* The growth that runs: its old table, and the next marked bucket. */
static const char *tb_bucket0;
static unsigned long tb_buckets, *tb_next_mark, *tb_end_mark;
static u64 tb_hold_start, tb_max_ticks;

static u64 tb_tsc(void)
{
	return tb_on_valgrind ? 0 : __builtin_ia32_rdtsc();
}

static void tb_label(char *buf, const char *phase, unsigned long ops,
		     const char *groups, const char *extra)
{
	snprintf(buf, 256, "tb scen=%s n=%lu phase=%s ops=%lu groups=%s%s",
		 tb_scen, tb_n, phase, ops, groups, extra);
}

/*
 * The rehash takes the old buckets' locks in ascending order, each once:
 * one comparison with the next marked bucket tells a marked one.
 */
static bool tb_marked(const void *lock)
{
	unsigned long i;

	if (tb_q)
		return true;	/* kwq: every q->lock hold */
	i = ((const char *)lock - tb_bucket0) / sizeof(void *);
	if ((const char *)lock < tb_bucket0 || i >= tb_buckets ||
	    tb_next_mark == tb_end_mark || i != *tb_next_mark)
		return false;
	tb_next_mark++;
	return true;
}

/* Locks of deferred work: nested ones count as their outermost. */
static void tb_lock_hook(void *lock, bool acquire)
{
	u64 d;

	if (acquire) {
		if (tb_depth++)
			return;
		tb_dumping = tb_on_valgrind && tb_marked(lock);
		if (tb_dumping)
			CALLGRIND_DUMP_STATS_AT(tb_label_grow);
		tb_hold_start = tb_tsc();
		return;
	}
	if (!tb_depth)
		tb_fail("lock released that was not taken");
	if (--tb_depth)
		return;
	d = tb_tsc() - tb_hold_start;
	if (tb_dumping)
		CALLGRIND_DUMP_STATS_AT(tb_label_hold);
	tb_dumping = false;
	if (d > tb_max_ticks)
		tb_max_ticks = d;
}

static u64 tb_ns0, tb_tsc0;

static u64 tb_ns(void)
{
	struct timespec ts;

	if (tb_on_valgrind)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void tb_begin(const char *phase, const char *groups)
{
	char setup[256];

	tb_phase = phase;
	tb_work = 0;
	tb_max_ticks = 0;
	tb_label(setup, "setup", 0, "-", "");
	tb_label(tb_label_part, phase, 0, groups, "");
	tb_ns0 = tb_ns();
	tb_tsc0 = tb_tsc();
	CALLGRIND_DUMP_STATS_AT(setup);
}

static void tb_end(unsigned long ops, const char *groups)
{
	u64 ns = tb_ns() - tb_ns0, ticks = tb_tsc() - tb_tsc0;
	char label[256];

	tb_label(label, tb_phase, ops, groups, "");
	CALLGRIND_DUMP_STATS_AT(label);
	printf("native scen=%s n=%lu phase=%s ops=%lu ns=%llu works=%u\n",
	       tb_scen, tb_n, tb_phase, ops, (unsigned long long)ns, tb_work);
	if (ticks)
		printf("holdmax scen=%s n=%lu phase=%s ns=%.0f\n", tb_scen,
		       tb_n, tb_phase, (double)tb_max_ticks * ns / ticks);
	tb_phase = NULL;
}

/*
 * Run the work the last operation queued, dumped apart: phase=grow for
 * the work outside the dumped holds, phase=grow_hold for each of those.
 */
static void tb_run_work(void)
{
	char extra[64];

	if (!hostbench_work_pending())
		return;
	if (!tb_phase) {
		hostbench_run_work();
		return;
	}
	CALLGRIND_DUMP_STATS_AT(tb_label_part);
	if (tb_t) {
		unsigned int w = tb_work;

		if (w >= TB_MAX_WORKS)
			tb_fail("more than %d growths", TB_MAX_WORKS);
		if (!tb_on_valgrind) {
			tb_nr_marks[w] = rhtb_longest_chains(tb_t, tb_marks[w],
							     TB_MARKS, &tb_chain[w]);
			tb_works_marked = w + 1;
		} else if (w >= tb_works_marked) {
			tb_fail("growth %u not in the marks file", w);
		}
		tb_bucket0 = rhtb_bucket0(tb_t);
		tb_buckets = rhtb_buckets(tb_t);
		tb_next_mark = tb_marks[w];
		tb_end_mark = tb_marks[w] + tb_nr_marks[w];
	}
	snprintf(extra, sizeof(extra), " work=%u chain=%u buckets=%lu",
		 tb_work, tb_t ? tb_chain[tb_work] : 0, tb_t ? tb_buckets : 0UL);
	tb_label(tb_label_grow, "grow", 0, "-", extra);
	tb_label(tb_label_hold, "grow_hold", 1, "-", extra);
	tb_depth = 0;
	hostbench_lock_hook = tb_lock_hook;
	hostbench_run_work();
	hostbench_lock_hook = NULL;
	if (tb_depth)
		tb_fail("deferred work left %u locks held", tb_depth);
	CALLGRIND_DUMP_STATS_AT(tb_label_grow);
	tb_work++;
}

static void tb_insert(u64 i)
{
	size_t len = tb_key(i);
	int ret = tb_q ? kwq_add(tb_q, tb_key_buf, len) :
		  rhtb_insert(tb_t, tb_key_buf, len);

	if (ret)
		tb_fail("insert(%.*s) = %d", (int)len, tb_key_buf, ret);
	tb_run_work();
}

static void tb_remove(u64 i)
{
	size_t len = tb_key(i);
	int ret = tb_q ? kwq_remove(tb_q, tb_key_buf, len) :
		  rhtb_remove(tb_t, tb_key_buf, len);

	if (ret)
		tb_fail("remove(%.*s) = %d", (int)len, tb_key_buf, ret);
	tb_run_work();
}

static void tb_expect(unsigned long want)
{
	unsigned long have = tb_q ? (unsigned long)kwq_len(tb_q) :
			     rhtb_count(tb_t);

	if (have != want)
		tb_fail("%lu keys, want %lu", have, want);
}

static void tb_mem(void)
{
	struct hostbench_cache_stats st[16];
	u64 obj = 0, live = 0;
	int i, n = hostbench_caches(st, 16);

	for (i = 0; i < n && i < 16; i++) {
		obj += (u64)st[i].live * st[i].object_size;
		live += st[i].live;
	}
	printf("mem scen=%s n=%lu items=%llu obj_bytes=%llu table_bytes=%llu buckets=%lu\n",
	       tb_scen, tb_n, (unsigned long long)live,
	       (unsigned long long)obj,
	       (unsigned long long)hostbench_kvmalloc_bytes(),
	       tb_t ? rhtb_buckets(tb_t) : 0UL);
}

/* The marks file: one line per growth, "W CHAIN NR IDX...". */
static void tb_marks_path(char *buf, size_t size)
{
	snprintf(buf, size, "marks-%s-%lu", tb_scen, tb_n);
}

static void tb_marks_write(void)
{
	char path[128];
	FILE *f;
	int w, i;

	tb_marks_path(path, sizeof(path));
	f = fopen(path, "w");
	if (!f)
		tb_fail("cannot write %s", path);
	for (w = 0; w < tb_works_marked; w++) {
		fprintf(f, "%d %u %d", w, tb_chain[w], tb_nr_marks[w]);
		for (i = 0; i < tb_nr_marks[w]; i++)
			fprintf(f, " %lu", tb_marks[w][i]);
		fputc('\n', f);
	}
	if (fclose(f))
		tb_fail("cannot write %s", path);
}

static void tb_marks_read(void)
{
	char path[128];
	int w, i, nr;
	FILE *f;

	tb_marks_path(path, sizeof(path));
	f = fopen(path, "r");
	if (!f)
		tb_fail("no %s: run natively first, in the same directory", path);
	while (fscanf(f, "%d %u %d", &w, &tb_chain[tb_works_marked], &nr) == 3) {
		if (w != tb_works_marked || w >= TB_MAX_WORKS ||
		    nr < 0 || nr > TB_MARKS)
			tb_fail("bad line %d in %s", w, path);
		for (i = 0; i < nr; i++)
			if (fscanf(f, "%lu", &tb_marks[w][i]) != 1)
				tb_fail("bad line %d in %s", w, path);
		tb_nr_marks[w] = nr;
		tb_works_marked++;
	}
	fclose(f);
}

static char tb_stdout_buf[4096];

int main(int argc, char **argv)
{
	unsigned long m, i;

	if (argc != 4) {
		fprintf(stderr, "usage: %s kwq|rht-sip|rht-jhash N M\n", argv[0]);
		return 2;
	}
	tb_scen = argv[1];
	tb_n = strtoul(argv[2], NULL, 0);
	m = strtoul(argv[3], NULL, 0);
	if (!tb_n || m > tb_n)
		tb_fail("need 0 < M <= N");
	setvbuf(stdout, tb_stdout_buf, _IOLBF, sizeof(tb_stdout_buf));
	tb_on_valgrind = RUNNING_ON_VALGRIND;

	if (!strcmp(tb_scen, "kwq")) {
		struct kwq_config cfg = { .clock = &tb_clock };

		if (kwq_core_init())
			tb_fail("kwq_core_init() failed");
		tb_q = kwq_create("tablebench", &cfg);
		if (!tb_q || (unsigned long)tb_q >= (unsigned long)-4095)
			tb_fail("kwq_create() = %ld", (long)tb_q);
		tb_fill_groups = TB_KWQ_INSERT;
		tb_at_n_groups = TB_KWQ_INSERT "," TB_KWQ_REMOVE;
	} else if (!strcmp(tb_scen, "rht-sip") || !strcmp(tb_scen, "rht-jhash")) {
		bool sip = !strcmp(tb_scen, "rht-sip");

		tb_t = rhtb_create(sip ? RHTB_HSIPHASH : RHTB_JHASH);
		if (!tb_t)
			tb_fail("rhtb_create() failed");
		tb_fill_groups = sip ? TB_RHT_INSERT ",table_insert:rhtb_table_insert_sip" :
				 TB_RHT_INSERT ",table_insert:rhtb_table_insert_jhash";
		tb_at_n_groups = sip ? TB_RHT_INSERT "," TB_RHT_REMOVE TB_SIP_TABLE :
				 TB_RHT_INSERT "," TB_RHT_REMOVE TB_JH_TABLE;
		/* Before any phase: what stdio allocates is not counted. */
		if (tb_on_valgrind)
			tb_marks_read();
	} else {
		tb_fail("unknown table");
	}

	tb_begin("fill", tb_fill_groups);
	for (i = 0; i < tb_n; i++)
		tb_insert(i);
	tb_end(tb_n, tb_fill_groups);
	tb_expect(tb_n);
	if (tb_t && !tb_on_valgrind)
		tb_marks_write();
	tb_mem();

	tb_begin("at_n", tb_at_n_groups);
	for (i = 0; i < m; i++) {
		tb_insert(tb_n + i);
		tb_remove(i);
	}
	tb_end(m, tb_at_n_groups);
	tb_expect(tb_n);

	if (tb_q) {
		kwq_destroy(tb_q);
		hostbench_run_work();
		kwq_core_exit();
	} else {
		rhtb_destroy(tb_t);
		hostbench_run_work();
	}
	printf("ok scen=%s n=%lu\n", tb_scen, tb_n);
	return 0;
}
