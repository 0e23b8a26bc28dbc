// SPDX-License-Identifier: GPL-2.0
/*
 * Systematic allocation-failure injection through /dev/kwq, the method of
 * syzkaller: write N to /proc/thread-self/fail-nth, make one ioctl, read
 * the file back. 0 means the Nth allocation (slab, or page with
 * fail_page_alloc) of that call was failed; non-zero means the call
 * finished before its Nth allocation. Every scenario below is run with
 * N = 1, 2, ... until the call completes without reaching N, each step on
 * a fresh queue in the same known state:
 *
 *	ready      a0..a9 (priority 0)
 *	processing p0..p3 (leased to the fd)
 *	waiting    w0 (after 1 h), r0 (rate-limited once: failure count 1)
 *
 * After each step: the call either succeeded or failed with ENOMEM (no
 * other error), and the queue holds exactly what it should: on ENOMEM
 * what it held before, or for a batch exactly its first @done keys
 * applied. This is checked on the stats counters (len, waiting,
 * processing, depth, adds, retries, failure records, histogram counts,
 * priority levels), by draining every ready key and comparing the set,
 * by finishing the processing keys and by the failure count of r0. Then
 * an add, get and done of a fresh key must work on the same queue.
 *
 * At the end kmemleak is scanned and must report nothing (the harness
 * scans again after the whole plan). The number of failure points
 * reached (steps where the read-back was 0) is printed per scenario, per
 * ioctl and in total as "# " diagnostics.
 *
 * The debug kernel only: it needs CONFIG_FAULT_INJECTION_DEBUG_FS,
 * CONFIG_FAILSLAB and CONFIG_FAIL_PAGE_ALLOC, which Debian's stock
 * kernels lack. tools/testing/check.sh lists this program in the debug
 * kernel's plan alone (not a skip: the stock plans do not run it), and a
 * kernel without the knobs fails it.
 *
 * Asynchronous allocations (the hash table's growth and the timer wheel,
 * both in a work item) are not the calling task's and are not reached by
 * fail-nth; the adds that schedule them are.
 */
#include "kwqtest.h"

#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#define NCLASS		26
#define NIDX		4100
/*
 * Batches beyond the per-file scratch buffer (KWQ_SCRATCH_IN_LEN, 3968
 * bytes): BIG keys of the classes 'b' and 'c' are KWQ_KEY_LEN_MAX bytes,
 * so their records (1032 bytes each, 41280 in all) are a kvmalloc() of
 * an order-4 page block (or vmalloc()'s pages), which fail_page_alloc
 * reaches, and span 3 of the
 * core's chunks of 16; the other keys are KLEN bytes. Few keys keep the
 * steps few: the debug kernel allocates on every node freed too
 * (SLUB_RCU_DEBUG's delayed free of a SLAB_TYPESAFE_BY_RCU object), each
 * one a failure point.
 */
#define BIG		40
#define KLEN		20
#define KBUF		(KWQ_KEY_LEN_MAX + 1)
#define NGROW		100	/* past the table's 64 buckets of a small queue */
#define NDELAY		100	/* the delayed batches */
#define MAX_STEPS	20000
#define RING_RECS	13	/* ring adds: n0..n9, then b0..b2 (long) */
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static int fnth = -1, mif = -1;
static unsigned long ring_enomem;	/* ring adds that completed ENOMEM */
static unsigned char bufs[2][(NGROW + BIG) * KWQ_REC_SIZE_MAX];
static unsigned char out[(BIG + 64) * KWQ_REC_SIZE_MAX];

/* --- fail-nth and the fault attributes --------------------------------- */

static void die(const char *what)
{
	printf("    # %s: %s\n", what, strerror(errno));
	printf("not ok 1 kwq_failnth\n");
	exit(1);
}

static void fnth_set(unsigned int n)
{
	if (kt_fail_nth(fnth, n) < 0)
		die("write /proc/thread-self/fail-nth");
}

static unsigned int fnth_get(void)
{
	char b[16] = "";

	if (pread(fnth, b, sizeof(b) - 1, 0) <= 0)
		die("read /proc/thread-self/fail-nth");
	return (unsigned int)strtoul(b, NULL, 10);
}

/* Set one fault attribute; 0 or -1. */
static int attr(const char *dir, const char *file, const char *val)
{
	char p[128];

	snprintf(p, sizeof(p), "/sys/kernel/debug/%s/%s", dir, file);
	if (kt_write_file(p, val) < 0) {
		printf("    # %s: %s\n", p, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * fail-nth decides, or make-it-fail of this task (@on: probability 100
 * for the tasks that ask, no one else): nothing fails at random,
 * sleeping allocations and order-0 pages are failable too, no dumps on
 * the console. Off again (@on 0) at the end, for the programs after.
 */
static int attrs_setup(int on)
{
	static const char *const dirs[] = { "failslab", "fail_page_alloc" };
	unsigned int i;
	int r = 0;

	for (i = 0; i < 2; i++) {
		/* Never probability 100 without the task filter. */
		if (on)
			r |= attr(dirs[i], "task-filter", "Y");
		else
			r |= attr(dirs[i], "probability", "0");
		r |= attr(dirs[i], "interval", "1");
		r |= attr(dirs[i], "times", "-1");
		if (on)
			r |= attr(dirs[i], "probability", "100");
		else
			r |= attr(dirs[i], "task-filter", "N");
		r |= attr(dirs[i], "verbose", "0");
		r |= attr(dirs[i], "ignore-gfp-wait", "N");
	}
	r |= attr("fail_page_alloc", "ignore-gfp-highmem", "N");
	r |= attr("fail_page_alloc", "min-order", "0");
	return r;
}

/* --- the model: what the queue must hold ------------------------------- */

/* Key length of class @c */
static size_t klen(char c)
{
	return c == 'b' || c == 'c' ? KWQ_KEY_LEN_MAX : KLEN;
}

/* Key @i of class @c: "c123" padded with '.' to klen(c) bytes, at @b */
static const char *key(char *b, char c, unsigned int i)
{
	int n = snprintf(b, KBUF, "%c%u", c, i);

	memset(b + n, '.', klen(c) - n);
	b[klen(c)] = '\0';
	return b;
}

struct model {
	unsigned char ready[NCLASS][NIDX];	/* 1: must be ready */
	unsigned char proc[NCLASS][NIDX];	/* 1: processing, leased to fd */
	struct kwq_stats_args st;		/* counters checked */
	long r0_fails;
};

static struct model pre, want;

static void m_ready(struct model *m, char c, unsigned int from,
		    unsigned int to, int v)
{
	for (; from < to; from++)
		m->ready[c - 'a'][from] = v;
}

/* The counters a call may change; durations are not (time). */
static int stats_eq(const struct kwq_stats_args *a,
		    const struct kwq_stats_args *b, char *why, size_t size)
{
#define F(f) if (a->f != b->f) { \
	snprintf(why, size, #f " %llu, want %llu", \
		 (unsigned long long)a->f, (unsigned long long)b->f); \
	return 0; }
	F(len) F(waiting) F(processing) F(adds_total) F(retries_total)
	F(dropped_at_shutdown) F(lease_returns) F(failure_records)
	F(shutting_down) F(depth) F(failure_records_evicted)
	F(queue_duration.count) F(work_duration.count) F(nr_prios)
	F(prios_other)
#undef F
	for (unsigned int i = 0; i < a->nr_prios && i < KWQ_STATS_PRIOS; i++)
		if (a->prios[i].priority != b->prios[i].priority ||
		    a->prios[i].len != b->prios[i].len) {
			snprintf(why, size, "prios[%u] %d:%llu, want %d:%llu", i,
				 a->prios[i].priority,
				 (unsigned long long)a->prios[i].len,
				 b->prios[i].priority,
				 (unsigned long long)b->prios[i].len);
			return 0;
		}
	return 1;
}

/* Parse a key of key() into class and index; 0 if not one of ours. */
static int parse(const void *k, size_t len, int *c, unsigned int *i)
{
	char b[KBUF];

	if (len < 2 || len > KWQ_KEY_LEN_MAX)
		return 0;
	memcpy(b, k, len);
	b[len] = '\0';
	if (b[0] < 'a' || b[0] > 'z' || len != klen(b[0]))
		return 0;
	*c = b[0] - 'a';
	*i = (unsigned int)strtoul(b + 1, NULL, 10);
	return *i < NIDX;
}

/*
 * Compare the queue behind @fd with @want: counters, then the ready set
 * (drained), the processing keys (finished), r0's failure count. Leaves
 * the queue drained. 1 if all match, else 0 with @why.
 */
static int verify(int fd, char *why, size_t size)
{
	static unsigned char seen[NCLASS][NIDX];
	struct kwq_recbuf rb = KWQ_RECBUF_INIT;
	struct kwq_stats_args st;
	unsigned int i, done, drained = 0;
	size_t used, off;
	const void *k;
	size_t len;
	char b[KBUF];
	int c, n;
	long f;

	if (kwq_stats(fd, &st) < 0) {
		snprintf(why, size, "STATS: %s", kt_ename(errno));
		return 0;
	}
	if (!stats_eq(&st, &want.st, why, size))
		return 0;
	f = kwq_num_requeues(fd, key(b, 'r', 0), KLEN);
	if (f != want.r0_fails) {
		snprintf(why, size, "r0 failures %ld, want %ld", f,
			 want.r0_fails);
		return 0;
	}
	memset(seen, 0, sizeof(seen));
	for (;;) {
		n = kwq_get_batch(fd, out, sizeof(out), BIG, KWQ_GET_DETACHED,
				  0, &used);
		if (n < 0)
			break;
		off = 0;
		while (kwq_rec_next(out, used, &off, &k, &len, NULL) == 1) {
			if (!parse(k, len, &c, &i) || seen[c][i]) {
				snprintf(why, size, "ready key %.*s unknown or twice",
					 (int)len, (const char *)k);
				return 0;
			}
			seen[c][i] = 1;
			drained++;
		}
	}
	if (errno != (want.st.shutting_down ? ESHUTDOWN : EAGAIN)) {
		snprintf(why, size, "drain: %s", kt_ename(errno));
		return 0;
	}
	for (c = 0; c < NCLASS; c++)
		for (i = 0; i < NIDX; i++)
			if (seen[c][i] != want.ready[c][i]) {
				snprintf(why, size, "key %c%u %s", 'a' + c, i,
					 seen[c][i] ? "ready, should not be" :
					 "not ready, should be");
				return 0;
			}
	/* Processing keys: leased to this fd, each can be finished once. */
	for (c = 0; c < NCLASS; c++)
		for (i = 0; i < NIDX; i++)
			if (want.proc[c][i])
				kwq_recbuf_push_str(&rb, key(b, 'a' + c, i), 0);
	if (rb.nr && (kwq_done_batch(fd, &rb, &done) < 0 || done != rb.nr)) {
		snprintf(why, size, "done of the processing keys: %u of %u, %s",
			 done, rb.nr, kt_ename(errno));
		kwq_recbuf_free(&rb);
		return 0;
	}
	kwq_recbuf_free(&rb);
	/* What is left processing: the keys just drained. */
	if (kwq_stats(fd, &st) < 0 || st.processing != drained) {
		snprintf(why, size, "%llu keys processing, want %u",
			 (unsigned long long)st.processing, drained);
		return 0;
	}
	return 1;
}

/* Later operations work: add, get, done of a fresh key. */
static int still_works(int fd, char *why, size_t size)
{
	char k[KWQ_KEY_LEN_MAX];
	long n;

	if (want.st.shutting_down) {
		/* Shut down: adds refused, as after any shutdown. */
		if (kwq_add(fd, "zz", 2) == 0 || errno != ESHUTDOWN) {
			snprintf(why, size, "add after shutdown: %s",
				 kt_ename(errno));
			return 0;
		}
		return 1;
	}
	if (kwq_add(fd, "zz", 2) < 0) {
		snprintf(why, size, "add after: %s", kt_ename(errno));
		return 0;
	}
	n = kwq_get(fd, k, sizeof(k), 0, 0);
	if (n != 2 || memcmp(k, "zz", 2)) {
		snprintf(why, size, "get after: %ld %s", n, kt_ename(errno));
		return 0;
	}
	if (kwq_done(fd, "zz", 2) < 0) {
		snprintf(why, size, "done after: %s", kt_ename(errno));
		return 0;
	}
	return 1;
}

/* --- scenarios ---------------------------------------------------------- */

struct step {
	int fd;
	char name[KWQ_NAME_LEN];
	unsigned long cmd;
	void *arg;
	/* argument structs, filled by prepare */
	struct kwq_keys_args keys;
	struct kwq_get_args get;
	struct kwq_done_get_args dg;
	struct kwq_key_args key;
	struct kwq_touch_args touch;
	struct kwq_dead_args dead;
	struct kwq_create_args create;
	struct kwq_open_args open;
	struct kwq_list_args list;
	struct kwq_shutdown_args shut;
	struct kwq_stats_args stats;
	struct kwq_inspect_args inspect;
	__u64 len;
	/* rings: the call (cmd 0) if not an ioctl; what a check found */
	int (*call)(struct step *s);
	struct kt_ring ring;
	struct kwq_ring_enter_args enter;
	uint32_t rec_at[RING_RECS];
	char why[160];
	__u64 delays[BIG];
	char names[8][KWQ_NAME_LEN];
	int fd2;
};

struct scen {
	const char *ioctl;
	const char *what;
	void (*prepare)(struct step *s);
	/* Adjust @want from @pre for a call that returned @err. */
	void (*expect)(struct step *s, int err);
	int small;	/* base(): a queue of at most 127 keys */
};

/* Records of keys @c@from..@to-1 (priority @prio, or i % 10 if < 0) */
static void recs(struct kwq_keys_args *a, unsigned char *buf, char c,
		 unsigned int from, unsigned int to, int prio)
{
	size_t off = 0;
	char b[KBUF];
	unsigned int i;

	memset(a, 0, sizeof(*a));
	for (i = from; i < to; i++)
		off += kwq_rec_pack(buf + off, sizeof(bufs[0]) - off,
				    key(b, c, i), strlen(key(b, c, i)),
				    prio < 0 ? (int)(i % 10) : prio);
	a->recs = (uintptr_t)buf;
	a->recs_len = off;
	a->nr = to - from;
}

static int q_opts_limit(struct kwq_queue_opts *o)
{
	memset(o, 0, sizeof(*o));
	/* Rate-limited keys wait an hour: nothing moves while we look. */
	o->nr_limits = 1;
	o->limits[0].type = KWQ_LIMIT_EXPONENTIAL;
	o->limits[0].a = 3600 * KT_SEC;
	o->limits[0].b = 3600 * KT_SEC;
	return 0;
}

/*
 * A fresh queue in the known state; its stats and model in pre/want.
 * @small: at most 127 keys, so its table starts at 64 buckets.
 */
static int base(struct step *s, int small)
{
	struct kwq_queue_opts o;
	char k[KWQ_KEY_LEN_MAX], b[KBUF];
	uint64_t d;
	unsigned int i;

	q_opts_limit(&o);
	if (small)
		o.max_items = 127;
	s->fd = kt_queue("fnth", &o, s->name);
	memset(&pre, 0, sizeof(pre));
	for (i = 0; i < 4; i++)
		if (kwq_add(s->fd, key(b, 'p', i), KLEN) < 0)
			return -1;
	for (i = 0; i < 4; i++) {
		if (kwq_get(s->fd, k, sizeof(k), 0, 0) != KLEN)
			return -1;
		pre.proc['p' - 'a'][i] = 1;
	}
	for (i = 0; i < 10; i++)
		if (kwq_add(s->fd, key(b, 'a', i), KLEN) < 0)
			return -1;
	m_ready(&pre, 'a', 0, 10, 1);
	if (kwq_add_after(s->fd, key(b, 'w', 0), KLEN, 3600 * KT_SEC) < 0 ||
	    kwq_add_rate_limited(s->fd, key(b, 'r', 0), KLEN, &d) < 0)
		return -1;
	pre.r0_fails = 1;
	if (kwq_stats(s->fd, &pre.st) < 0)
		return -1;
	want = pre;
	return 0;
}

/* ADD of one key @c@i (plain, priority, after, rate-limited) */
static void p_add1(struct step *s, unsigned int flags, __s64 after, int prio,
		   char c, unsigned int i)
{
	recs(&s->keys, bufs[0], c, i, i + 1, prio);
	s->keys.flags = flags;
	s->keys.after_ns = after;
	if (flags & KWQ_ADD_RATE_LIMITED)
		s->keys.delays = (uintptr_t)s->delays;
	s->cmd = KWQ_IOC_ADD;
	s->arg = &s->keys;
}

static void p_add(struct step *s) { p_add1(s, 0, 0, 0, 'n', 0); }
static void p_add_prio(struct step *s) { p_add1(s, 0, 0, 7, 'n', 0); }
static void p_add_after(struct step *s)
{
	p_add1(s, KWQ_ADD_AFTER, 3600 * KT_SEC, 0, 'w', 1);
}

static void p_add_rl(struct step *s)
{
	p_add1(s, KWQ_ADD_RATE_LIMITED, 0, 0, 'r', 1);
}

static void p_add_rl_again(struct step *s)
{
	p_add1(s, KWQ_ADD_RATE_LIMITED, 0, 0, 'r', 0);
}

static void p_add_ready(struct step *s) { p_add1(s, 0, 0, 5, 'a', 3); }

/* Ready keys: the new ones (done of them) counted in want. */
static void e_new_ready(struct step *s, int err, char c, int prio)
{
	unsigned int n = err ? s->keys.done : s->keys.nr;

	m_ready(&want, c, 0, n, 1);
	want.st.len += n;
	want.st.depth += n;
	want.st.adds_total += n;
	(void)prio;
}

/*
 * Recompute the priority levels: a0..a9 at 0 and @nr_new new keys at
 * prio(i); the KWQ_STATS_PRIOS highest listed, the rest in prios_other.
 */
static void e_prios(unsigned int nr_new, int (*prio)(unsigned int))
{
	unsigned long depth[16] = { 0 };
	unsigned int i, n = 0;
	int p;

	depth[0] = 10;		/* a0..a9 */
	for (i = 0; i < nr_new; i++)
		depth[prio(i)]++;
	want.st.prios_other = 0;
	for (p = 15; p >= 0; p--) {
		if (!depth[p])
			continue;
		if (n == KWQ_STATS_PRIOS) {
			want.st.prios_other += depth[p];
			continue;
		}
		want.st.prios[n].priority = p;
		want.st.prios[n].len = depth[p];
		n++;
	}
	want.st.nr_prios = n;
}

static int prio0(unsigned int i) { (void)i; return 0; }
static int prio7(unsigned int i) { (void)i; return 7; }
static int prio_mod(unsigned int i) { return (int)(i % 10); }

static void e_add(struct step *s, int err)
{
	e_new_ready(s, err, 'n', 0);
	e_prios(err ? 0 : 1, prio0);
}

static void e_add_prio(struct step *s, int err)
{
	e_new_ready(s, err, 'n', 7);
	e_prios(err ? 0 : 1, prio7);
}

static void e_add_after(struct step *s, int err)
{
	(void)s;
	if (err)
		return;
	want.st.waiting++;
	want.st.adds_total++;
}

static void e_add_rl(struct step *s, int err)
{
	(void)s;
	if (err)
		return;
	want.st.waiting++;
	want.st.adds_total++;
	want.st.retries_total++;
	want.st.failure_records++;
}

static void e_add_rl_again(struct step *s, int err)
{
	(void)s;
	if (err)
		return;
	/* r0 waits already: the deadline stays, its failure count grows. */
	want.st.retries_total++;
	want.r0_fails = 2;
	(void)s;
}

static void e_add_ready(struct step *s, int err)
{
	(void)s;
	if (err)
		return;
	/* a3 moves up to priority 5: same keys, one level more. */
	want.st.adds_total++;
	want.st.nr_prios = 2;
	want.st.prios[0].priority = 5;
	want.st.prios[0].len = 1;
	want.st.prios[1].priority = 0;
	want.st.prios[1].len = 9;
	(void)s;
}

/* ADD of BIG new keys, priorities 0..9: many levels, a kvmalloc buffer */
static void p_add_big(struct step *s)
{
	recs(&s->keys, bufs[0], 'b', 0, BIG, -1);
	s->cmd = KWQ_IOC_ADD;
	s->arg = &s->keys;
}

static void e_add_big(struct step *s, int err)
{
	e_new_ready(s, err, 'b', 0);
	e_prios(err ? s->keys.done : s->keys.nr, prio_mod);
}

/* ADD of NGROW new keys at priority 0: the table of 64 buckets grows */
static void p_add_grow(struct step *s)
{
	recs(&s->keys, bufs[0], 'g', 0, NGROW, 0);
	s->cmd = KWQ_IOC_ADD;
	s->arg = &s->keys;
}

static void e_add_grow(struct step *s, int err)
{
	unsigned int n = err ? s->keys.done : s->keys.nr;

	e_new_ready(s, err, 'g', 0);
	want.st.prios[0].len = 10 + n;
}

/* ADD_AFTER and ADD_RATE_LIMITED of NDELAY keys (delays array) */
static void p_add_after_batch(struct step *s)
{
	recs(&s->keys, bufs[0], 'd', 0, NDELAY, 0);
	s->keys.flags = KWQ_ADD_AFTER;
	s->keys.after_ns = 3600 * KT_SEC;
	s->cmd = KWQ_IOC_ADD;
	s->arg = &s->keys;
}

static void e_add_after_batch(struct step *s, int err)
{
	unsigned int n = err ? s->keys.done : s->keys.nr;

	want.st.waiting += n;
	want.st.adds_total += n;
}

static void p_add_rl_batch(struct step *s)
{
	recs(&s->keys, bufs[0], 'e', 0, NDELAY, 0);
	s->keys.flags = KWQ_ADD_RATE_LIMITED;
	s->keys.delays = (uintptr_t)s->delays;
	s->cmd = KWQ_IOC_ADD;
	s->arg = &s->keys;
}

static void e_add_rl_batch(struct step *s, int err)
{
	unsigned int n = err ? s->keys.done : s->keys.nr;

	want.st.waiting += n;
	want.st.adds_total += n;
	want.st.retries_total += n;
	want.st.failure_records += n;
}

/* GET of one key, and of up to 64 (the out scratch or a kvmalloc) */
static void p_get(struct step *s, unsigned int max)
{
	memset(&s->get, 0, sizeof(s->get));
	s->get.recs = (uintptr_t)out;
	s->get.recs_len = sizeof(out);
	s->get.max = max;
	s->cmd = KWQ_IOC_GET;
	s->arg = &s->get;
}

static void p_get1(struct step *s) { p_get(s, 1); }
static void p_get64(struct step *s) { p_get(s, 64); }

/* GET of one key with a processing deadline: a record for the deadline */
static void p_get_deadline(struct step *s)
{
	p_get(s, 1);
	s->get.processing_timeout_ns = 3600ULL * 1000000000ULL;
}

/* Keys taken from a0.. in order: now processing. */
static void e_taken(unsigned int nr)
{
	m_ready(&want, 'a', 0, nr, 0);
	for (unsigned int i = 0; i < nr; i++)
		want.proc[0][i] = 1;
	want.st.len -= nr;
	want.st.depth -= nr;
	want.st.processing += nr;
	want.st.queue_duration.count += nr;
	want.st.prios[0].len -= nr;
	if (!want.st.prios[0].len)
		want.st.nr_prios = 0;
}

static void e_get(struct step *s, int err)
{
	if (!err)
		e_taken(s->get.nr);
}

/* DONE of p0..p3, of BIG processing keys; FORGET and REMOVE */
static void p_done(struct step *s)
{
	recs(&s->keys, bufs[0], 'p', 0, 4, 0);
	s->cmd = KWQ_IOC_DONE;
	s->arg = &s->keys;
}

static void e_done_p(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		want.proc['p' - 'a'][i] = 0;
	want.st.processing -= n;
	want.st.work_duration.count += n;
}

static void e_done(struct step *s, int err)
{
	e_done_p(err ? s->keys.done : s->keys.nr);
}

static void p_forget(struct step *s)
{
	recs(&s->keys, bufs[0], 'r', 0, 1, 0);
	s->cmd = KWQ_IOC_FORGET;
	s->arg = &s->keys;
}

static void e_forget(struct step *s, int err)
{
	if (err && !s->keys.done)
		return;
	want.r0_fails = 0;
	want.st.failure_records--;
}

static void p_remove(struct step *s)
{
	recs(&s->keys, bufs[0], 'a', 0, 5, 0);
	s->cmd = KWQ_IOC_REMOVE;
	s->arg = &s->keys;
}

static void e_remove(struct step *s, int err)
{
	unsigned int n = err ? s->keys.done : s->keys.nr;

	m_ready(&want, 'a', 0, n, 0);
	want.st.len -= n;
	want.st.depth -= n;
	want.st.prios[0].len -= n;
}

/* DONE_GET: finish p0..p3, take up to 8 */
static void p_done_get(struct step *s)
{
	struct kwq_keys_args k;

	recs(&k, bufs[1], 'p', 0, 4, 0);
	memset(&s->dg, 0, sizeof(s->dg));
	s->dg.done_recs = k.recs;
	s->dg.done_len = k.recs_len;
	s->dg.done_nr = k.nr;
	s->dg.get.recs = (uintptr_t)out;
	s->dg.get.recs_len = sizeof(out);
	s->dg.get.max = 8;
	s->cmd = KWQ_IOC_DONE_GET;
	s->arg = &s->dg;
}

static void e_done_get(struct step *s, int err)
{
	e_done_p(s->dg.done);
	if (!err)
		e_taken(s->dg.get.nr);
}

static void p_requeues(struct step *s)
{
	memset(&s->key, 0, sizeof(s->key));
	static char b[KBUF];

	s->key.key = (uintptr_t)key(b, 'r', 0);
	s->key.len = KLEN;
	s->cmd = KWQ_IOC_NUM_REQUEUES;
	s->arg = &s->key;
}

/* TOUCH of p0 (leased to the fd, no deadline): its first deadline */
static void p_touch(struct step *s)
{
	static char b[KBUF];

	memset(&s->touch, 0, sizeof(s->touch));
	s->touch.key = (uintptr_t)key(b, 'p', 0);
	s->touch.len = KLEN;
	s->touch.processing_timeout_ns = 3600ULL * 1000000000ULL;
	s->cmd = KWQ_IOC_TOUCH;
	s->arg = &s->touch;
}

/* REVIVE and PURGE of every dead key (there is none): no allocation */
static void p_dead_all(struct step *s, unsigned long cmd)
{
	memset(&s->dead, 0, sizeof(s->dead));
	s->dead.flags = KWQ_DEAD_ALL;
	s->cmd = cmd;
	s->arg = &s->dead;
}

static void p_revive_all(struct step *s) { p_dead_all(s, KWQ_IOC_REVIVE); }
static void p_purge_all(struct step *s) { p_dead_all(s, KWQ_IOC_PURGE); }

static void p_len(struct step *s)
{
	s->cmd = KWQ_IOC_LEN;
	s->arg = &s->len;
}

static void p_stats(struct step *s)
{
	s->cmd = KWQ_IOC_STATS;
	s->arg = &s->stats;
}

static void p_list(struct step *s)
{
	memset(&s->list, 0, sizeof(s->list));
	s->list.names = (uintptr_t)s->names;
	s->list.capacity = 8;
	s->cmd = KWQ_IOC_LIST;
	s->arg = &s->list;
}

/* INSPECT: of a0 (@one), or a walk's first chunk of up to 64 keys */
static void p_inspect(struct step *s, int one)
{
	static char b[KBUF];

	memset(&s->inspect, 0, sizeof(s->inspect));
	if (one) {
		s->inspect.key = (uintptr_t)key(b, 'a', 0);
		s->inspect.len = KLEN;
	} else {
		s->inspect.states = KWQ_KEY_STATES_ALL;
		s->inspect.max = 64;
	}
	s->inspect.recs = (uintptr_t)out;
	s->inspect.recs_len = sizeof(out);
	s->cmd = KWQ_IOC_INSPECT;
	s->arg = &s->inspect;
}

static void p_inspect1(struct step *s) { p_inspect(s, 1); }
static void p_inspect64(struct step *s) { p_inspect(s, 0); }

static void e_none(struct step *s, int err)
{
	(void)s;
	(void)err;
}

static void p_shutdown(struct step *s)
{
	memset(&s->shut, 0, sizeof(s->shut));
	s->cmd = KWQ_IOC_SHUTDOWN;
	s->arg = &s->shut;
}

static void e_shutdown(struct step *s, int err)
{
	if (err)
		return;
	/* The delayed keys are dropped. */
	want.st.shutting_down = 1;
	want.st.dropped_at_shutdown += want.st.waiting;
	want.st.waiting = 0;
	(void)s;
}

/* BIG keys c0.. set up before the call: processing, or ready */
static void setup_big(struct step *s, int take)
{
	struct kwq_keys_args a;
	unsigned int i, got = 0;
	size_t used;
	int n;

	recs(&a, bufs[1], 'c', 0, BIG, 0);
	if (ioctl(s->fd, KWQ_IOC_ADD, &a) < 0)
		die("setting up the batch's keys");
	/* a0..a9 come first (FIFO), then c0.. */
	while (take && got < BIG + 10) {
		n = kwq_get_batch(s->fd, out, sizeof(out), BIG + 10 - got, 0, 0,
				  &used);
		if (n <= 0)
			die("taking the batch's keys");
		got += n;
	}
	if (take) {
		for (i = 0; i < BIG; i++)
			pre.proc['c' - 'a'][i] = 1;
		for (i = 0; i < 10; i++)
			pre.proc[0][i] = 1;
		m_ready(&pre, 'a', 0, 10, 0);
	} else {
		m_ready(&pre, 'c', 0, BIG, 1);
	}
	if (kwq_stats(s->fd, &pre.st) < 0)
		die("STATS");
	want = pre;
}

static void p_done_big(struct step *s)
{
	setup_big(s, 1);
	recs(&s->keys, bufs[0], 'c', 0, BIG, 0);
	s->cmd = KWQ_IOC_DONE;
	s->arg = &s->keys;
}

static void e_done_big(struct step *s, int err)
{
	unsigned int n = err ? s->keys.done : s->keys.nr;

	for (unsigned int i = 0; i < n; i++)
		want.proc['c' - 'a'][i] = 0;
	want.st.processing -= n;
	want.st.work_duration.count += n;
}

/* DONE_GET: finish BIG long keys (a kvmalloc'ed buffer), take n0 */
static void p_done_get_big(struct step *s)
{
	struct kwq_keys_args k;
	char b[KBUF];

	setup_big(s, 1);
	if (kwq_add(s->fd, key(b, 'n', 0), KLEN) < 0 ||
	    kwq_stats(s->fd, &pre.st) < 0)
		die("DONE_GET setup");
	m_ready(&pre, 'n', 0, 1, 1);
	want = pre;
	recs(&k, bufs[1], 'c', 0, BIG, 0);
	memset(&s->dg, 0, sizeof(s->dg));
	s->dg.done_recs = k.recs;
	s->dg.done_len = k.recs_len;
	s->dg.done_nr = k.nr;
	s->dg.get.recs = (uintptr_t)out;
	s->dg.get.recs_len = sizeof(out);
	s->dg.get.max = 8;
	s->cmd = KWQ_IOC_DONE_GET;
	s->arg = &s->dg;
}

static void e_done_get_big(struct step *s, int err)
{
	for (unsigned int i = 0; i < s->dg.done; i++)
		want.proc['c' - 'a'][i] = 0;
	want.st.processing -= s->dg.done;
	want.st.work_duration.count += s->dg.done;
	if (err)
		return;
	/* n0 taken */
	want.ready['n' - 'a'][0] = 0;
	want.proc['n' - 'a'][0] = 1;
	want.st.len--;
	want.st.depth--;
	want.st.processing++;
	want.st.queue_duration.count++;
	want.st.nr_prios = 0;
	want.st.prios[0].len = 0;
}

static void p_remove_big(struct step *s)
{
	setup_big(s, 0);
	recs(&s->keys, bufs[0], 'c', 0, BIG, 0);
	s->cmd = KWQ_IOC_REMOVE;
	s->arg = &s->keys;
}

static void e_remove_big(struct step *s, int err)
{
	unsigned int n = err ? s->keys.done : s->keys.nr;

	m_ready(&want, 'c', 0, n, 0);
	want.st.len -= n;
	want.st.depth -= n;
	want.st.prios[0].len -= n;
}

/*
 * Rings: setup, the mmap() of its regions, a drain of adds of new keys
 * (short and long, wrapping around the ring's end), a get into lease
 * slots. A record's add that fails is an error completion (ENOMEM) and
 * changes nothing; the call itself succeeds: the model counts exactly
 * the adds whose completion says 0, every record completes once.
 */
static void ring_args(struct step *s, uint32_t sq, uint32_t leases)
{
	memset(&s->ring, 0, sizeof(s->ring));
	s->ring.a.sq_entries = sq;
	s->ring.a.cq_entries = 128;
	s->ring.a.lease_slots = leases;
}

/* Set up and map the ring of s->ring.a (not under fail-nth). */
static void ring_up(struct step *s)
{
	if (ioctl(s->fd, KWQ_IOC_RING_SETUP, &s->ring.a) < 0 ||
	    kt_ring_map(s->fd, &s->ring) < 0)
		die("setting up the ring");
}

static void p_ring_setup(struct step *s)
{
	ring_args(s, 64, 8);
	s->cmd = KWQ_IOC_RING_SETUP;
	s->arg = &s->ring.a;
}

/* A failed setup left nothing behind (setup works); a ring is one. */
static void e_ring_setup(struct step *s, int err)
{
	struct kwq_ring_setup_args again = s->ring.a;
	int r = ioctl(s->fd, KWQ_IOC_RING_SETUP, err ? &s->ring.a : &again);

	if (err ? r < 0 : r == 0 || errno != EBUSY)
		snprintf(s->why, sizeof(s->why), "setup after a %s one: %s",
			 err ? "failed" : "good", r ? kt_ename(errno) : "worked");
	else if (kt_ring_map(s->fd, &s->ring) < 0)
		snprintf(s->why, sizeof(s->why), "mmap: %s", kt_ename(errno));
}

static int ring_map_call(struct step *s)
{
	return kt_ring_map(s->fd, &s->ring);
}

static void p_ring_map(struct step *s)
{
	ring_args(s, 64, 8);
	if (ioctl(s->fd, KWQ_IOC_RING_SETUP, &s->ring.a) < 0)
		die("setting up the ring");
	s->call = ring_map_call;
	s->arg = s;
}

/* A failed mmap() maps nothing (kt_ring_map() unmaps); the next works. */
static void e_ring_map(struct step *s, int err)
{
	if (err && kt_ring_map(s->fd, &s->ring) < 0)
		snprintf(s->why, sizeof(s->why), "mmap after a failed one: %s",
			 kt_ename(errno));
	else if (kt_ring_ld(s->ring.k, s->ring.a.sq_head_off) ||
		 kt_ring_ld(s->ring.k, s->ring.a.cq_tail_off))
		snprintf(s->why, sizeof(s->why), "a new ring's indices not 0");
}

static void p_ring_submit(struct step *s)
{
	char b[KBUF];
	unsigned int i;

	ring_args(s, 128, 0);
	ring_up(s);
	/* 120 slots consumed: the adds wrap around the ring's end */
	for (i = 0; i < 120; i++)
		kt_ring_put(&s->ring, KWQ_SQE_NOP, 0, NULL, 0);
	kt_ring_publish(&s->ring);
	if (kt_ring_enter(s->fd, KWQ_ENTER_SUBMIT, 0, 0, NULL) < 0)
		die("submitting the NOPs");
	for (i = 0; i < RING_RECS; i++) {
		char c = i < 10 ? 'n' : 'b';
		unsigned int k = i < 10 ? i : i - 10;

		s->rec_at[i] = (uint32_t)kt_ring_put(&s->ring, KWQ_SQE_ADD,
						     KWQ_SQE_F_CQE, key(b, c, k),
						     (uint32_t)klen(c));
	}
	kt_ring_publish(&s->ring);
	s->enter.flags = KWQ_ENTER_SUBMIT;
	s->cmd = KWQ_IOC_RING_ENTER;
	s->arg = &s->enter;
}

/*
 * Every record completed once, 0 or ENOMEM; the model gains exactly the
 * keys whose add says 0. What the armed call left is submitted first.
 */
static void e_ring_submit(struct step *s, int err)
{
	const struct kwq_cqe *cqe;
	uint32_t tail, head = 0, i;
	unsigned int seen[RING_RECS] = { 0 }, added = 0;

	(void)err;
	if (kt_ring_enter(s->fd, KWQ_ENTER_SUBMIT, 0, 0, NULL) < 0) {
		snprintf(s->why, sizeof(s->why), "submit after: %s",
			 kt_ename(errno));
		return;
	}
	tail = kt_ring_ld(s->ring.k, s->ring.a.cq_tail_off);
	for (; head != tail; head++) {
		cqe = (const void *)(s->ring.k + s->ring.a.cqes_off +
				     (head & (s->ring.a.cq_entries - 1)) *
				     sizeof(*cqe));
		for (i = 0; i < RING_RECS && s->rec_at[i] != cqe->index; i++)
			;
		if (i == RING_RECS || seen[i]++ || cqe->op != KWQ_SQE_ADD ||
		    (cqe->res && cqe->res != -ENOMEM)) {
			snprintf(s->why, sizeof(s->why),
				 "completion %u: index %u op %u res %d", head,
				 cqe->index, cqe->op, cqe->res);
			return;
		}
		if (cqe->res) {
			ring_enomem++;
			continue;
		}
		m_ready(&want, i < 10 ? 'n' : 'b', i < 10 ? i : i - 10,
			(i < 10 ? i : i - 10) + 1, 1);
		added++;
	}
	for (i = 0; i < RING_RECS; i++)
		if (!seen[i]) {
			snprintf(s->why, sizeof(s->why),
				 "record %u (at %u) never completed", i,
				 s->rec_at[i]);
			return;
		}
	want.st.len += added;
	want.st.depth += added;
	want.st.adds_total += added;
	e_prios(added, prio0);
}

static void p_ring_get(struct step *s)
{
	ring_args(s, 64, 8);
	ring_up(s);
	s->enter.flags = KWQ_ENTER_GET;
	s->enter.get_max = 8;
	/* a processing deadline: one more allocation per key */
	s->enter.processing_timeout_ns = 3600ULL * 1000000000ULL;
	s->cmd = KWQ_IOC_RING_ENTER;
	s->arg = &s->enter;
}

/* Keys a0.. leased, one completion and one slot each; none if it failed. */
static void e_ring_get(struct step *s, int err)
{
	const struct kwq_lease_slot *ls;
	const struct kwq_cqe *cqe;
	uint32_t tail = kt_ring_ld(s->ring.k, s->ring.a.cq_tail_off), i;
	char b[KBUF];

	if (err ? s->enter.leased || tail : tail != s->enter.leased) {
		snprintf(s->why, sizeof(s->why), "%s: %u leased, %u completions",
			 err ? kt_ename(err) : "ok", s->enter.leased, tail);
		return;
	}
	for (i = 0; i < tail; i++) {
		cqe = (const void *)(s->ring.k + s->ring.a.cqes_off +
				     i * sizeof(*cqe));
		ls = (const void *)(s->ring.k + s->ring.a.leases_off +
				    cqe->index * KWQ_LEASE_SLOT_SIZE);
		if (cqe->op != KWQ_CQE_LEASE || cqe->res ||
		    cqe->index >= 8 || ls->gen != cqe->value ||
		    ls->len != KLEN || memcmp(ls->key, key(b, 'a', i), KLEN)) {
			snprintf(s->why, sizeof(s->why),
				 "lease %u: slot %u op %u res %d len %u", i,
				 cqe->index, cqe->op, cqe->res, ls->len);
			return;
		}
	}
	e_taken(s->enter.leased);
}

static const struct scen scens[] = {
	{ "ADD", "one new key", p_add, e_add, 0 },
	{ "ADD", "one new key, new priority", p_add_prio, e_add_prio, 0 },
	{ "ADD", "one ready key to a new priority", p_add_ready, e_add_ready, 0 },
	{ "ADD", "KWQ_ADD_AFTER, one key", p_add_after, e_add_after, 0 },
	{ "ADD", "KWQ_ADD_RATE_LIMITED, one new key", p_add_rl, e_add_rl, 0 },
	{ "ADD", "KWQ_ADD_RATE_LIMITED, a waiting key", p_add_rl_again,
	  e_add_rl_again, 0 },
	{ "ADD", "batch of 40 long keys, 10 priorities", p_add_big, e_add_big, 0 },
	{ "ADD", "batch of 100 keys growing the table", p_add_grow,
	  e_add_grow, 1 },
	{ "ADD", "KWQ_ADD_AFTER batch of 100", p_add_after_batch,
	  e_add_after_batch, 0 },
	{ "ADD", "KWQ_ADD_RATE_LIMITED batch of 100", p_add_rl_batch,
	  e_add_rl_batch, 0 },
	{ "GET", "one key", p_get1, e_get, 0 },
	{ "GET", "up to 64 keys", p_get64, e_get, 0 },
	{ "GET", "one key with a processing deadline", p_get_deadline, e_get,
	  0 },
	{ "TOUCH", "p0, its first deadline", p_touch, e_none, 0 },
	{ "REVIVE", "every dead key", p_revive_all, e_none, 0 },
	{ "PURGE", "every dead key", p_purge_all, e_none, 0 },
	{ "DONE", "4 keys", p_done, e_done, 0 },
	{ "DONE_GET", "finish 4, take up to 8", p_done_get, e_done_get, 0 },
	{ "FORGET", "a key with a failure count", p_forget, e_forget, 0 },
	{ "REMOVE", "5 ready keys", p_remove, e_remove, 0 },
	{ "NUM_REQUEUES", "r0", p_requeues, e_none, 0 },
	{ "LEN", "", p_len, e_none, 0 },
	{ "STATS", "", p_stats, e_none, 0 },
	{ "LIST", "", p_list, e_none, 0 },
	{ "INSPECT", "a0", p_inspect1, e_none, 0 },
	{ "INSPECT", "a walk's first 64 keys", p_inspect64, e_none, 0 },
	{ "SHUTDOWN", "", p_shutdown, e_shutdown, 0 },
	{ "DONE", "batch of 40 long keys", p_done_big, e_done_big, 0 },
	{ "REMOVE", "batch of 40 long keys", p_remove_big, e_remove_big, 0 },
	{ "DONE_GET", "finish 40 long keys, take 1", p_done_get_big, e_done_get_big,
	  0 },
	{ "RING_SETUP", "64 slots, 8 lease slots", p_ring_setup, e_ring_setup,
	  0 },
	{ "mmap", "a ring's three regions", p_ring_map, e_ring_map, 0 },
	{ "RING_ENTER", "submit 10 adds and 3 of long keys, wrapping",
	  p_ring_submit, e_ring_submit, 0 },
	{ "RING_ENTER", "get 8 keys into lease slots, with a deadline",
	  p_ring_get, e_ring_get, 0 },
};

/* Failure points reached, per ioctl (names as in the tallies). */
static const char *const iocs[] = {
	"open", "CREATE", "OPEN", "DESTROY", "LIST", "ADD", "GET", "DONE",
	"FORGET", "REMOVE", "NUM_REQUEUES", "LEN", "SHUTDOWN", "STATS",
	"DONE_GET", "INSPECT", "TOUCH", "REVIVE", "PURGE", "RING_SETUP", "mmap",
	"RING_ENTER",
};

static unsigned long points[ARRAY_SIZE(iocs)], total;

static void tally(const char *ioc, unsigned long n)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(iocs); i++)
		if (!strcmp(iocs[i], ioc))
			points[i] += n;
	total += n;
}

/*
 * Arm fail-nth at @n, make the one ioctl (@cmd 0: the call of step
 * @arg, a ring's mmap()), read back: 1 if the Nth
 * allocation was failed. *@err: 0 or the errno. @n == 0: fail every
 * allocation of the call instead (make-it-fail with probability 100),
 * which reaches the paths a single failure cannot: those behind a
 * fallback allocation (a node preallocated, else allocated under the
 * lock; kvmalloc(), else vmalloc).
 */
static int armed_ioctl(int fd, unsigned long cmd, void *arg, unsigned int n,
		       int *err)
{
	struct step *s = arg;
	unsigned int left;
	int r;

	if (!n) {
		if (pwrite(mif, "1", 1, 0) != 1)
			die("write /proc/thread-self/make-it-fail");
		r = cmd ? ioctl(fd, cmd, arg) : s->call(s);
		*err = r < 0 ? errno : 0;
		if (pwrite(mif, "0", 1, 0) != 1)
			die("write /proc/thread-self/make-it-fail");
		return 1;
	}
	fnth_set(n);
	r = cmd ? ioctl(fd, cmd, arg) : s->call(s);
	*err = r < 0 ? errno : 0;
	left = fnth_get();
	if (left)
		fnth_set(0);
	return !left;
}

/*
 * One step of @sc: fail the @n th allocation (0: all); *@inj whether a
 * fault was injected. 1 if all held, else 0 with @why.
 */
static int step(const struct scen *sc, struct step *s, unsigned int n,
		int *inj, int *enomem, char *why, size_t size)
{
	int err, ok = 1;

	memset(s, 0, offsetof(struct step, delays));
	if (base(s, sc->small) < 0)
		die("setting up the queue");
	sc->prepare(s);
	*inj = armed_ioctl(s->fd, s->cmd, s->arg, n, &err);
	*enomem += err == ENOMEM;
	if (err && err != ENOMEM) {
		snprintf(why, size, "%s", kt_ename(err));
		ok = 0;
	} else if (!*inj && err) {
		snprintf(why, size, "ENOMEM, no fault injected");
		ok = 0;
	} else {
		sc->expect(s, err);
		ok = verify(s->fd, why, size) && still_works(s->fd, why, size);
		if (ok && s->why[0]) {
			snprintf(why, size, "%s", s->why);
			ok = 0;
		}
	}
	kt_ring_unmap(&s->ring);
	kwq_destroy(s->fd, s->name);
	close(s->fd);
	return ok;
}

/*
 * One scenario on the queue: N = 1, 2, ... until nothing is failed, then
 * every allocation at once.
 */
static void run_scen(const struct scen *sc)
{
	char why[256] = "", what[128], where[32] = "";
	int inj = 0, ok = 1, enomem = 0;
	int64_t t0 = kt_now();
	struct step *s;
	unsigned int n;

	s = calloc(1, sizeof(*s));
	if (!s)
		die("calloc");
	/* Every page touched: make-it-fail would fail a user page fault. */
	memset(s, 0, sizeof(*s));
	for (n = 1; n <= MAX_STEPS && ok; n++) {
		ok = step(sc, s, n, &inj, &enomem, why, sizeof(why));
		if (!ok)
			snprintf(where, sizeof(where), "N=%u: ", n);
		if (!inj)
			break;
	}
	if (ok) {
		ok = step(sc, s, 0, &inj, &enomem, why, sizeof(why));
		if (!ok)
			snprintf(where, sizeof(where), "all failing: ");
	}
	snprintf(what, sizeof(what), "%s%s%s: ENOMEM or success, nothing lost",
		 sc->ioctl, *sc->what ? " " : "", sc->what);
	ktap_check(ok && n <= MAX_STEPS, what, "%s%s", where, why);
	printf("    # %s%s%s: %u failure points, ENOMEM at %d steps (%.1f s)\n",
	       sc->ioctl, *sc->what ? " " : "", sc->what, n - 1, enomem,
	       (double)(kt_now() - t0) / KT_SEC);
	tally(sc->ioctl, n - 1);
	free(s);
}

/*
 * 1 if the queue @name has its metrics in debugfs, in the directory of
 * this IPC namespace: kwq/ipc:<inum>/<name>/metrics.
 */
static int has_metrics(const char *name)
{
	unsigned long inum = kt_ipc_inum();
	char path[160];
	struct stat sb;

	if (!inum)
		return 0;
	snprintf(path, sizeof(path), "/sys/kernel/debug/kwq/ipc:%lu/%s/metrics",
		 inum, name);
	return stat(path, &sb) == 0;
}

/* Queues named @prefix in this IPC namespace (LIST). */
static int count_queues(int fd)
{
	return kwq_list(fd, NULL, 0);
}

/*
 * open(/dev/kwq), CREATE, OPEN and DESTROY: the fd and the namespace's
 * queues are the state. On ENOMEM the fd is as it was (unattached, or
 * still attached) and the queue list unchanged; a retry succeeds.
 */
static void run_lifecycle(void)
{
	char qname[KWQ_NAME_LEN], why[200] = "";
	struct kwq_create_args ca;
	struct kwq_open_args oa;
	unsigned int n, nc = 0, no = 0, nd = 0, nf = 0, all = 0;
	int ctl, fd, err = 0, inj = 0, before, bad = 0, left;
	uint64_t len;

	ctl = kt_dev();
	/* open(): a kwq_file and its scratch buffer */
	for (n = 1; n <= MAX_STEPS && !bad; n++) {
		before = count_queues(ctl);
		fnth_set(n);
		fd = open("/dev/kwq", O_RDWR | O_CLOEXEC);
		err = fd < 0 ? errno : 0;
		left = fnth_get();
		if (left)
			fnth_set(0);
		if (fd < 0 && (err != ENOMEM || left)) {
			snprintf(why, sizeof(why), "open N=%u: %s", n,
				 kt_ename(err));
			bad = 1;
		}
		if (fd >= 0) {
			kt_name(qname, "fnth-open");
			if (kwq_create(fd, qname, NULL) < 0 ||
			    kwq_destroy(fd, qname) < 0) {
				snprintf(why, sizeof(why), "fd of open N=%u "
					 "unusable: %s", n, kt_ename(errno));
				bad = 1;
			}
			close(fd);
		}
		if (count_queues(ctl) != before) {
			snprintf(why, sizeof(why), "open N=%u: queues changed",
				 n);
			bad = 1;
		}
		if (left)
			break;
		nf++;
	}
	ktap_check(!bad, "open(/dev/kwq): ENOMEM or a working fd", "%s", why);

	/* Each section on its own: a failure above does not stop it. */
	bad = 0;
	why[0] = '\0';
	/* CREATE; the last step (N=0 below) fails every allocation */
	for (n = 1; n <= MAX_STEPS && !bad; n++) {
		fd = kt_dev();
		before = count_queues(ctl);
		memset(&ca, 0, sizeof(ca));
		kt_name(ca.name, "fnth-create");
		if (all)
			n = 0;
		inj = armed_ioctl(fd, KWQ_IOC_CREATE, &ca, n, &err);
		if (err && (err != ENOMEM || !inj)) {
			snprintf(why, sizeof(why), "CREATE N=%u: %s", n,
				 kt_ename(err));
			bad = 1;
		} else if (err) {
			/* Nothing published, fd unattached, name free. */
			memset(&oa, 0, sizeof(oa));
			memcpy(oa.name, ca.name, sizeof(oa.name));
			if (count_queues(ctl) != before ||
			    kwq_len(fd, &len) == 0 || errno != ENOTCONN ||
			    ioctl(ctl, KWQ_IOC_OPEN, &oa) == 0 ||
			    errno != ENOENT) {
				snprintf(why, sizeof(why), "CREATE N=%u failed "
					 "but left a trace (%s)", n,
					 kt_ename(errno));
				bad = 1;
			} else if (ioctl(fd, KWQ_IOC_CREATE, &ca) < 0) {
				snprintf(why, sizeof(why), "CREATE N=%u retry: "
					 "%s", n, kt_ename(errno));
				bad = 1;
			}
		}
		if (!bad && (count_queues(ctl) != before + 1 ||
			     kwq_add(fd, "x", 1) < 0 || kt_len(fd) != 1)) {
			snprintf(why, sizeof(why), "CREATE N=%u: queue not "
				 "usable", n);
			bad = 1;
		}
		/*
		 * The queue itself may lack its debugfs metrics (best
		 * effort), but not the next one of the namespace: a failed
		 * allocation must not lose the namespace's directory.
		 */
		if (!bad) {
			char n2[KWQ_NAME_LEN];
			int f3 = kt_queue("fnth-create2", NULL, n2);

			if (!has_metrics(n2)) {
				snprintf(why, sizeof(why), "CREATE N=%u: the "
					 "next queue has no debugfs metrics", n);
				bad = 1;
			}
			kwq_destroy(f3, n2);
			close(f3);
		}
		kwq_destroy(ctl, ca.name);
		close(fd);
		if (all)
			break;
		if (!inj) {
			all = 1;
			n = nc + 1;
			continue;
		}
		nc++;
	}
	ktap_check(!bad, "CREATE: ENOMEM with nothing published, or a queue",
		   "%s", why);

	/* Each section on its own: a failure above does not stop it. */
	bad = 0;
	why[0] = '\0';
	/* OPEN and DESTROY of a queue with a key */
	fd = kt_queue("fnth-q", NULL, qname);
	kt_add(fd, "x");
	memset(&oa, 0, sizeof(oa));
	memcpy(oa.name, qname, sizeof(oa.name));
	for (n = 1; n <= MAX_STEPS && !bad; n++) {
		int f2 = kt_dev();

		inj = armed_ioctl(f2, KWQ_IOC_OPEN, &oa, n, &err);
		if (err && (err != ENOMEM || !inj)) {
			snprintf(why, sizeof(why), "OPEN N=%u: %s", n,
				 kt_ename(err));
			bad = 1;
		} else if (err && (kwq_len(f2, &len) == 0 ||
				   errno != ENOTCONN ||
				   ioctl(f2, KWQ_IOC_OPEN, &oa) < 0)) {
			snprintf(why, sizeof(why), "OPEN N=%u: ENOMEM but "
				 "attached, or no retry (%s)", n,
				 kt_ename(errno));
			bad = 1;
		}
		if (!bad && kt_len(f2) != 1) {
			snprintf(why, sizeof(why), "OPEN N=%u: len %ld", n,
				 kt_len(f2));
			bad = 1;
		}
		close(f2);
		if (!inj)
			break;
		no++;
	}
	ktap_check(!bad, "OPEN: ENOMEM unattached, or attached", "%s", why);

	/* Each section on its own: a failure above does not stop it. */
	bad = 0;
	why[0] = '\0';
	for (n = 1; n <= MAX_STEPS && !bad; n++) {
		before = count_queues(ctl);
		inj = armed_ioctl(ctl, KWQ_IOC_DESTROY, &oa, n, &err);
		if (err && (err != ENOMEM || !inj)) {
			snprintf(why, sizeof(why), "DESTROY N=%u: %s", n,
				 kt_ename(err));
			bad = 1;
		} else if (err && (count_queues(ctl) != before ||
				   kt_len(fd) != 1)) {
			snprintf(why, sizeof(why), "DESTROY N=%u: ENOMEM but "
				 "the queue changed", n);
			bad = 1;
		} else if (!err) {
			if (count_queues(ctl) != before - 1 ||
			    kwq_len(fd, &len) == 0 || errno != EIDRM) {
				snprintf(why, sizeof(why), "DESTROY N=%u: "
					 "queue still there", n);
				bad = 1;
			}
			close(fd);
			if (inj) {
				/* Destroyed although a fault: next N anew. */
				fd = kt_queue("fnth-q", NULL, qname);
				kt_add(fd, "x");
				memcpy(oa.name, qname, sizeof(oa.name));
			}
		}
		if (!inj)
			break;
		nd++;
	}
	if (!inj && !err)
		fd = -1;
	if (fd >= 0) {
		kwq_destroy(ctl, qname);
		close(fd);
	}
	ktap_check(!bad, "DESTROY: ENOMEM with the queue kept, or gone", "%s",
		   why);
	close(ctl);
	printf("    # open: %u, CREATE: %u, OPEN: %u, DESTROY: %u failure "
	       "points\n", nf, nc, no, nd);
	tally("open", nf);
	tally("CREATE", nc);
	tally("OPEN", no);
	tally("DESTROY", nd);
}

/*
 * One step of run_create_first(), in a child: a new IPC namespace, an
 * unprivileged user of its own (@uid), CREATE with its @n th allocation
 * failed. Exit status: 0 the fault hit and all held, 1 no fault was
 * injected (all held), 2 something did not hold (said on stdout).
 */
static int create_first_step(unsigned int n, uid_t uid)
{
	struct kwq_create_args ca;
	int fd, err, inj;
	uint64_t len;

	if (unshare(CLONE_NEWIPC) < 0 || setresgid(uid, uid, uid) < 0 ||
	    setresuid(uid, uid, uid) < 0) {
		printf("    # N=%u: unshare or setresuid: %s\n", n,
		       strerror(errno));
		return 2;
	}
	/* Ours now: the parent's files are its own thread's. */
	prctl(PR_SET_DUMPABLE, 1);
	fnth = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	fd = open("/dev/kwq", O_RDWR | O_CLOEXEC);
	if (fnth < 0 || fd < 0) {
		printf("    # N=%u: open: %s\n", n, strerror(errno));
		return 2;
	}
	memset(&ca, 0, sizeof(ca));
	snprintf(ca.name, sizeof(ca.name), "fnth-first");
	inj = armed_ioctl(fd, KWQ_IOC_CREATE, &ca, n, &err);
	if (err && (err != ENOMEM || !inj)) {
		printf("    # N=%u: CREATE: %s\n", n, kt_ename(err));
		return 2;
	}
	/* ENOMEM: nothing listed, the fd unattached; a retry works. */
	if (err && (count_queues(fd) != 0 || kwq_len(fd, &len) == 0 ||
		    errno != ENOTCONN || ioctl(fd, KWQ_IOC_CREATE, &ca) < 0)) {
		printf("    # N=%u: ENOMEM left a trace, or no retry (%s)\n",
		       n, kt_ename(errno));
		return 2;
	}
	if (count_queues(fd) != 1 || kwq_add(fd, "x", 1) < 0 ||
	    kt_len(fd) != 1 || kwq_destroy(fd, ca.name) < 0) {
		printf("    # N=%u: queue not usable: %s\n", n,
		       kt_ename(errno));
		return 2;
	}
	return inj ? 0 : 1;
}

/*
 * CREATE of the first queue of an IPC namespace by a user without
 * CAP_SYS_ADMIN allocates more than run_lifecycle()'s: the namespace's
 * record and the user's limits (dev.c: kwq_ns_get(), kwq_user_get()).
 * Each step forks a child that makes both new (another uid each time),
 * so that every step reaches them.
 */
static void run_create_first(void)
{
	unsigned int n, nc = 0;
	int status = 0, bad = 0;
	pid_t pid;

	for (n = 1; n <= MAX_STEPS && !bad; n++) {
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			die("fork");
		if (!pid) {
			status = create_first_step(n, 20000 + n);
			fflush(stdout);
			_exit(status);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) == 2) {
			bad = 1;
			break;
		}
		if (WEXITSTATUS(status) == 1)
			break;
		nc++;
	}
	ktap_check(!bad && n > 1,
		   "CREATE of a namespace's first queue, unprivileged: ENOMEM "
		   "with nothing left, or a queue", "step %u (status %#x)", n,
		   status);
	printf("    # CREATE (new namespace, new user): %u failure points\n",
	       nc);
	tally("CREATE", nc);
}

/* kmemleak: scan twice (objects must be 5 s old and stable), expect none */
static void leak_check(void)
{
	char buf[512];
	ssize_t n;
	int fd;

	kt_sleep_ms(6000);
	kt_write_file("/sys/kernel/debug/kmemleak", "scan");
	kt_write_file("/sys/kernel/debug/kmemleak", "scan");
	fd = open("/sys/kernel/debug/kmemleak", O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n > 0)
		buf[n] = '\0';
	/* Not cleared before: a leak of an earlier program fails here too. */
	ktap_check(n == 0, "kmemleak: nothing leaked by the failed calls",
		   "%s", n < 0 ? strerror(errno) : buf);
}

int main(void)
{
	unsigned int i;
	struct stat sb;

	kt_setup("kwq_failnth", (int)ARRAY_SIZE(scens) + 7, 1500);
	fnth = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	mif = open("/proc/thread-self/make-it-fail", O_RDWR | O_CLOEXEC);
	memset(out, 0, sizeof(out));
	memset(bufs, 0, sizeof(bufs));
	ktap_check(fnth >= 0 && mif >= 0 &&
		   stat("/sys/kernel/debug/fail_page_alloc", &sb) == 0 &&
		   attrs_setup(1) == 0,
		   "fail-nth, failslab and fail_page_alloc available",
		   "CONFIG_FAULT_INJECTION_DEBUG_FS, CONFIG_FAILSLAB and "
		   "CONFIG_FAIL_PAGE_ALLOC needed: %s", strerror(errno));
	if (fnth < 0 || mif < 0 ||
	    stat("/sys/kernel/debug/fail_page_alloc", &sb))
		return ktap_end();

	run_lifecycle();
	run_create_first();
	for (i = 0; i < ARRAY_SIZE(scens); i++)
		run_scen(&scens[i]);
	for (i = 0; i < ARRAY_SIZE(iocs); i++)
		printf("    # failure points %s: %lu\n", iocs[i], points[i]);
	printf("    # failure points reached in total: %lu\n", total);
	printf("    # ring adds refused by an ENOMEM completion: %lu\n",
	       ring_enomem);
	attrs_setup(0);
	leak_check();
	return ktap_end();
}
