// SPDX-License-Identifier: GPL-2.0
/*
 * kwq ioctl fuzzer: seeded, reproducible (per thread), bounded in time.
 *
 *   fuzz_test [-s SEED] [-t SECONDS] [-p PROCS] [-j THREADS] [-o DIR] [-v]
 *   fuzz_test -r FILE		replay a reproducer, one call at a time
 *
 * PROCS worker processes x THREADS threads issue random and
 * structure-aware ioctl sequences on /dev/kwq over a pool of queues:
 * random struct sizes (_IOC(dir, KWQ_IOC_MAGIC, nr, size)), directions,
 * flags, pad and reserved fields, bad pointers (NULL, unmapped, PROT_NONE,
 * read-only, straddling a guard page, kernel and non-canonical addresses),
 * huge lengths and counts, concurrent close/destroy/shutdown/drain,
 * forked children using inherited fds that are SIGKILLed at random. Odd
 * worker processes drop root (uid 1000+i) so permission paths run too.
 *
 * Invariants checked while it runs:
 *  - every failing call's errno is in the documented set for that call;
 *  - a get returns well-formed records within the sizes it was given;
 *  - on the "tracked" queues (created here, never destroyed by the
 *    fuzz), no key is held by two getters at once (a shared table counts
 *    holders per key);
 *  - at the end every tracked queue drains: each remaining key comes out
 *    once, nothing stays processing;
 *  - with every worker gone and every queue destroyed, each worker uid's
 *    queue count is back to zero: it creates exactly max_queues_per_user
 *    queues, then EDQUOT (a queue counts until it is freed, whatever
 *    path freed it: destroy, close, a killed child's exit).
 *  - in the kernel (a WARN, which fails the run): a queue never holds
 *    more than two priority levels a key (one more during an add), with
 *    priorities drawn from the whole int range now and then.
 * Prints KTAP (suite kwq_fuzz) with the seed, calls made and calls/s.
 *
 * Coverage guidance: where /sys/kernel/debug/kcov exists, each thread
 * traces its own calls (KCOV_TRACE_PC; only kwq's objects are
 * instrumented when built with KWQ_KCOV=1, so every PC is kwq's). A call
 * that reaches a PC or an edge (hash of the previous and this PC) seen by
 * no call before is saved in a corpus shared by all workers; a fifth of
 * the steps then take a corpus entry, mutate it (bits, fields, sizes, key
 * bytes) and issue it again, recent entries first.
 *
 * Reproducers: every call (with its argument bytes and the key records
 * its pointer at offset 0 names), every open, close, fork and kill is
 * kept in a per-thread ring of the last RING events. When an invariant
 * fails or a worker dies, the rings of that process are merged in call
 * order into DIR/repro-<pid>-p<proc>.txt (format at repro_write());
 * fuzz_test -r replays such a file in one thread.
 */
#include "kwqtest.h"

#include <linux/kcov.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/time.h>

#define NQ_POOL		6	/* fuzzed queues: created, destroyed, shut down */
#define NQ_TRACKED	2	/* tracked queues: never destroyed or shut down */
#define NKEYS		256	/* tracked keyspace per queue */
#define MAXFD		6
#define HELD_MAX	512
#define ARENA		(256 * 1024)
#define RECBUF		(KWQ_BATCH_MAX * KWQ_REC_SIZE_MAX + 4096)
#define KEYBUF		4096	/* keys and one-record buffers */

/* Reproducers and the corpus: one event, with what it was given. */
#define ARG_CAP		512	/* argument bytes kept (larger: zeroes) */
#define DATA_CAP	3456	/* bytes kept at the argument's pointer at 0 */
#define RING		128	/* events kept per thread */
#define CORPUS_MAX	1024
#define COVER_SIZE	(64 * 1024)	/* kcov trace entries per thread */
#define PC_SLOTS	(1 << 16)	/* distinct PCs (open addressing) */
#define EDGE_BITS	20

enum { EV_CALL = 1, EV_OPEN, EV_CLOSE, EV_FORK, EV_KILL };
/* Memory a worker owns; pointers into it are relocated on replay. */
enum { R_ARENA, R_RO, R_RECS, R_KEYS, NREG };

struct call {
	atomic_ulong seq;	/* global order, 0 while being written */
	uint8_t ev;
	uint8_t child;		/* made by a forked child */
	int8_t op;		/* ops[] index, -1 raw */
	uint8_t thread;
	int32_t fd;
	uint32_t flags;		/* EV_OPEN: open flags */
	uint32_t arg_len;	/* bytes kept at @arg */
	uint32_t data_len;	/* bytes kept at the pointer at @arg + 0 */
	int32_t err;
	int64_t ret;
	uint64_t cmd, arg;
	uint64_t base[NREG];	/* the recording worker's regions */
	unsigned char argb[ARG_CAP];
	unsigned char data[DATA_CAP];
};

struct ring {
	atomic_uint pos;
	struct call ev[RING];
};

/* Ring mode's figures (report_figures()). */
enum {
	RN_SETUP, RN_MAP, RN_BADMAP, RN_REC, RN_BADREC, RN_ENTER, RN_CQE,
	RN_LEASE, RN_DONE_LEASE, RN_SCRIBBLE, RN_BROKEN, RN_CHECKED, RN_MAX
};
static const char *const rn_name[RN_MAX] = {
	"setups", "maps", "bad maps refused", "records", "malformed records",
	"enters", "completions", "leases", "lease dones", "scribbles",
	"rings broken", "completions checked exactly",
};

/* Shared between all processes (MAP_SHARED). */
struct shared {
	atomic_ulong calls;
	atomic_ulong calls_ok, calls_core, corpus_calls;
	atomic_ulong seq;
	atomic_ulong pcs, edges, corpus_new, corpus_new_from_corpus;
	atomic_ulong op_n[32], op_ns[32], fork_cpu_ns;
	atomic_int kcov_threads, kcov_failed, repro_saved[64], repro_pending[64];
	atomic_int ncorpus, recent[32];
	atomic_uint recent_pos;
	atomic_uint corpus_gen[CORPUS_MAX];
	struct call corpus[CORPUS_MAX];
	atomic_ulong pc[PC_SLOTS];
	atomic_ulong edge[(1 << EDGE_BITS) / 64];
	atomic_ulong bad_errno;
	atomic_ulong bad_result;
	atomic_ulong double_handout;
	atomic_ulong forks, kills;
	atomic_ulong ring_n[RN_MAX];
	atomic_int held[NQ_TRACKED][NKEYS];
	atomic_int nmsg;
	char msg[8][160];
	atomic_int stop;
};

static struct shared *sh;
static struct ring *rings;	/* procs x threads, MAP_SHARED */
static int g_threads;
static char names[NQ_POOL + NQ_TRACKED][KWQ_NAME_LEN];
static unsigned long long g_seed;
static int verbose;
static const char *repro_dir = "/tmp/kwq-repro";
static pid_t main_pid;

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static uint32_t rn(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(rnd(r) % n) : 0;
}

static int chance(struct rng *r, int pct)
{
	return (int)rn(r, 100) < pct;
}

/* --- errno sets --- */
typedef unsigned __int128 emask;
#define B(e)	((emask)1 << (e))
#define E_ARGS	(B(EINVAL) | B(EFAULT) | B(E2BIG) | B(ENOTTY))
#define E_Q	(E_ARGS | B(ENOTCONN) | B(EIDRM))

static const struct {
	const char *name;
	unsigned int nr;
	emask ok;
} ops[] = {
	{ "CREATE", 0x00, E_ARGS | B(EISCONN) | B(EDQUOT) | B(EEXIST) | B(ENOMEM) },
	{ "OPEN", 0x01, E_ARGS | B(EISCONN) | B(ENOENT) | B(EACCES) },
	{ "DESTROY", 0x02, E_ARGS | B(ENOENT) | B(EPERM) },
	{ "LIST", 0x03, E_ARGS | B(ENOMEM) },
	{ "ADD", 0x04, E_Q | B(ENOSPC) | B(EDQUOT) | B(ESHUTDOWN) | B(ENOMEM) },
	{ "GET", 0x05, E_Q | B(EAGAIN) | B(ETIMEDOUT) | B(ESHUTDOWN) | B(EINTR) |
	  B(EMSGSIZE) },
	{ "DONE", 0x06, E_Q | B(ENOENT) | B(EPERM) | B(ESTALE) | B(ENOMEM) },
	{ "FORGET", 0x07, E_Q | B(ENOMEM) },
	{ "REMOVE", 0x08, E_Q | B(ENOENT) | B(EBUSY) | B(ENOMEM) },
	{ "NUM_REQUEUES", 0x09, E_Q },
	{ "LEN", 0x0a, E_Q },
	{ "SHUTDOWN", 0x0b, E_Q | B(EINTR) | B(ECANCELED) },
	{ "STATS", 0x0c, E_Q },
	{ "DONE_GET", 0x0d, E_Q | B(ENOENT) | B(EPERM) | B(ESTALE) | B(ENOMEM) |
	  B(EAGAIN) | B(ETIMEDOUT) | B(ESHUTDOWN) | B(EINTR) | B(EMSGSIZE) },
	{ "TOUCH", 0x0e, E_Q | B(ENOENT) | B(EPERM) | B(ESTALE) },
	{ "REVIVE", 0x10, E_Q | B(ENOENT) | B(ENOSPC) | B(ESHUTDOWN) },
	{ "PURGE", 0x11, E_Q | B(ENOENT) },
	{ "INSPECT", 0x12, E_Q | B(ENOENT) | B(ESTALE) | B(EAGAIN) | B(ENOMEM) |
	  B(EMSGSIZE) },
	{ "RING_SETUP", 0x13, E_Q | B(EBUSY) | B(EDQUOT) | B(ENOMEM) },
	{ "RING_ENTER", 0x14, E_Q | B(ENXIO) | B(EBUSY) | B(ENOBUFS) | B(EAGAIN) |
	  B(ETIMEDOUT) | B(ESHUTDOWN) | B(EINTR) },
	/* Only user queues here: none is published (no EOPNOTSUPP). */
	{ "INFO", 0x15, E_Q },
};

enum { OP_RING_SETUP = 18, OP_RING_ENTER = 19, OP_INFO = 20 };

#define NOPS	((int)(sizeof(ops) / sizeof(ops[0])))

/* Any errno a kwq ioctl may return at all. */
#define E_ANY	(E_Q | B(EISCONN) | B(EDQUOT) | B(EEXIST) | B(ENOMEM) |	\
		 B(ENOENT) | B(EACCES) | B(EPERM) | B(ENOSPC) |		\
		 B(ESHUTDOWN) | B(EAGAIN) | B(ETIMEDOUT) | B(EINTR) |	\
		 B(EBUSY) | B(ECANCELED) | B(ESTALE) | B(EMSGSIZE) |	\
		 B(ENXIO) | B(ENOBUFS))

struct tfd {
	int fd;
	int tracked;		/* attached to tracked queue tq */
	int tq;
};

struct held {
	int fd;			/* -1: detached */
	int tq, key;
};

/*
 * A ring this thread set up (ring mode, op_ring()): its fd, its three
 * mappings, what it wrote where. Only ever on an untracked fd.
 */
#define WR_MAX		2	/* rings a thread keeps */

enum {
	RK_NONE, RK_ADD, RK_ADD_AFTER, RK_DONE, RK_LEASE_OK, RK_LEASE_BAD,
	RK_FORGET, RK_REMOVE, RK_NOP
};

struct wring {
	pthread_mutex_t lock;	/* held by the scribbler while it writes */
	int fd;			/* -1: none, or closed (maps may live on) */
	int scribbled;		/* the scribbler writes it too */
	int clean;		/* only well-formed records: exact checks */
	int jumped;		/* its tail was stored past the ring */
	struct kt_ring r;	/* its setup, mappings (NULL: none), tail */
	uint32_t cq_head;	/* completions read */
	uint64_t gen[KWQ_RING_LEASES_MAX];	/* leases announced, not done */
	/* per submission slot: the record that starts there (clean rings) */
	uint32_t pos[KWQ_RING_ENTRIES_MAX];
	uint8_t kind[KWQ_RING_ENTRIES_MAX];
	uint8_t op[KWQ_RING_ENTRIES_MAX];
	uint8_t fl[KWQ_RING_ENTRIES_MAX];
};

struct worker {
	struct rng r;
	int proc, thread;
	int in_child;
	struct tfd fds[MAXFD];
	int nfds;
	struct held held[HELD_MAX];
	int nheld;
	unsigned long calls;
	unsigned char *arena;	/* ARENA bytes RW, then a PROT_NONE page */
	unsigned char *ro;	/* one read-only page */
	unsigned char *recs;	/* RECBUF bytes */
	unsigned char *keys;	/* KEYBUF bytes */
	uintptr_t unmapped;
	struct ring *ring;	/* this thread's events */
	uint64_t *cover;	/* kcov trace, NULL without kcov */
	int no_corpus;		/* calls now are not corpus material */
	int from_corpus;	/* this call was mutated from the corpus */
	unsigned long pend, ok, core;	/* not yet in sh: calls, ok, core */
	unsigned long op_n[32], op_ns[32], fork_cpu_ns;
	struct call scratch;
	struct wring wr[WR_MAX];
};

static __thread struct worker *cur_w;
static void repro_save(int proc, const char *why);

/* An invariant failed: say why, keep what led here (repro_save()). */
static void note(const char *fmt, ...)
{
	int i = atomic_fetch_add(&sh->nmsg, 1);
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (i < 8)
		memcpy(sh->msg[i], why, sizeof(why));
	if (cur_w)
		repro_save(cur_w->proc, why);
}

/* --- regions, events, coverage --- */

static const size_t reg_size[NREG] = { ARENA + 4096, 4096, RECBUF, KEYBUF };

static unsigned char *reg_base(const struct worker *w, int r)
{
	switch (r) {
	case R_ARENA:
		return w->arena;
	case R_RO:
		return w->ro;
	case R_RECS:
		return w->recs;
	default:
		return w->keys;
	}
}

/* Bytes readable (@wr: writable) at @p in @w's regions; 0: not ours. */
static size_t own_room(const struct worker *w, uint64_t p, int wr)
{
	int r;

	for (r = 0; r < NREG; r++) {
		uint64_t off = p - (uintptr_t)reg_base(w, r);
		size_t room = r == R_ARENA ? ARENA : reg_size[r];

		if (off >= reg_size[r])
			continue;
		if (r == R_RO && wr)
			return 0;
		return off < room ? room - off : 0;
	}
	return 0;
}

static size_t min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;

	return m < c ? m : c;
}

/* Ioctls whose argument starts with a user pointer to input and its length. */
static int has_data(unsigned long cmd)
{
	if (_IOC_TYPE(cmd) != KWQ_IOC_MAGIC)
		return 0;
	switch (_IOC_NR(cmd)) {
	case 0x04: case 0x06: case 0x07: case 0x08: case 0x09:
	case 0x0d: case 0x0e: case 0x10: case 0x11: case 0x12:
		return 1;
	default:
		return 0;
	}
}

/* Is @off of @cmd's argument a user pointer (in or out)? */
static int ptr_field(unsigned long cmd, size_t off)
{
	if (_IOC_TYPE(cmd) != KWQ_IOC_MAGIC)
		return 0;
	switch (_IOC_NR(cmd)) {
	case 0x03: case 0x05:
		return off == 0;
	case 0x04:
		return off == 0 || off == offsetof(struct kwq_keys_args, delays);
	case 0x0d:
		return off == 0 || off == offsetof(struct kwq_done_get_args, get.recs);
	case 0x12:
		return off == 0 || off == offsetof(struct kwq_inspect_args, recs);
	default:
		return has_data(cmd) && off == 0;
	}
}

/* A new event in @w's ring; ev_end() publishes it. */
static struct call *ev_begin(struct worker *w, int ev, int fd)
{
	struct call *c = &w->ring->ev[atomic_fetch_add(&w->ring->pos, 1) % RING];
	int r;

	atomic_store(&c->seq, 0);
	c->ev = (uint8_t)ev;
	c->child = (uint8_t)w->in_child;
	c->op = -1;
	c->thread = (uint8_t)w->thread;
	c->fd = fd;
	c->flags = 0;
	c->arg_len = 0;
	c->data_len = 0;
	c->err = 0;
	c->ret = 0;
	c->cmd = 0;
	c->arg = 0;
	for (r = 0; r < NREG; r++)
		c->base[r] = (uintptr_t)reg_base(w, r);
	return c;
}

static void ev_end(struct call *c, uint64_t seq)
{
	atomic_store(&c->seq, seq ? seq : atomic_fetch_add(&sh->seq, 1) + 1);
}

static void ev_simple(struct worker *w, int ev, int fd, uint32_t flags)
{
	struct call *c = ev_begin(w, ev, fd);

	c->flags = flags;
	ev_end(c, 0);
}

/* Keep @cmd's argument at @arg and the input its pointer at 0 names. */
static void capture(struct worker *w, struct call *c, unsigned long cmd, void *arg)
{
	uint64_t dp;
	uint32_t dl;

	c->cmd = cmd;
	c->arg = (uintptr_t)arg;
	c->arg_len = (uint32_t)min3(_IOC_SIZE(cmd), own_room(w, c->arg, 0), ARG_CAP);
	memcpy(c->argb, arg, c->arg_len);
	if (c->arg_len < 12 || !has_data(cmd))
		return;
	memcpy(&dp, c->argb, 8);
	memcpy(&dl, c->argb + 8, 4);
	c->data_len = (uint32_t)min3(dl, own_room(w, dp, 0), DATA_CAP);
	memcpy(c->data, (void *)(uintptr_t)dp, c->data_len);
}

static int pc_add(uint64_t pc)
{
	uint64_t h = (pc * 0x9E3779B97F4A7C15ULL) >> 48;
	int i;

	for (i = 0; i < 64; i++) {
		atomic_ulong *slot = &sh->pc[(h + (uint64_t)i) & (PC_SLOTS - 1)];
		unsigned long v = atomic_load_explicit(slot, memory_order_relaxed);

		if (v == pc)
			return 0;
		if (v)
			continue;
		if (atomic_compare_exchange_strong(slot, &v, pc)) {
			atomic_fetch_add(&sh->pcs, 1);
			return 1;
		}
		if (v == pc)
			return 0;
	}
	return 0;
}

static int edge_add(uint64_t prev, uint64_t pc)
{
	uint64_t h = (((prev >> 1) ^ pc) * 0x9E3779B97F4A7C15ULL) >> (64 - EDGE_BITS);
	atomic_ulong *word = &sh->edge[h / 64];
	unsigned long bit = 1UL << (h % 64);

	if (atomic_load_explicit(word, memory_order_relaxed) & bit)
		return 0;
	if (atomic_fetch_or(word, bit) & bit)
		return 0;
	atomic_fetch_add(&sh->edges, 1);
	return 1;
}

static void corpus_add(struct worker *w, const struct call *c)
{
	int i = atomic_fetch_add(&sh->ncorpus, 1), slot;

	/* the first half stays; later entries replace in the second */
	slot = i < CORPUS_MAX ? i : CORPUS_MAX / 2 + (int)rn(&w->r, CORPUS_MAX / 2);
	atomic_fetch_add(&sh->corpus_gen[slot], 1);	/* odd: being written */
	memcpy((void *)&sh->corpus[slot], c, sizeof(*c));
	atomic_fetch_add(&sh->corpus_gen[slot], 1);
	atomic_store(&sh->recent[atomic_fetch_add(&sh->recent_pos, 1) % 32], slot);
	atomic_fetch_add(&sh->corpus_new, 1);
	if (w->from_corpus)
		atomic_fetch_add(&sh->corpus_new_from_corpus, 1);
}

static int fd_tracked(const struct worker *w, int fd)
{
	int i;

	for (i = 0; i < w->nfds; i++)
		if (w->fds[i].fd == fd)
			return w->fds[i].tracked;
	return 0;
}

/* The PCs the last call hit: anything new makes it corpus material. */
static void cover_check(struct worker *w, const struct call *c, int fd)
{
	uint64_t n = __atomic_load_n(&w->cover[0], __ATOMIC_RELAXED), i, prev = 0;
	int fresh = 0;

	if (n > COVER_SIZE - 1)
		n = COVER_SIZE - 1;
	for (i = 0; i < n; i++) {
		uint64_t pc = w->cover[i + 1];

		fresh |= pc_add(pc);
		fresh |= edge_add(prev, pc);
		prev = pc;
	}
	/* calls on tracked fds keep the invariants: never replayed */
	if (fresh && !w->no_corpus && !fd_tracked(w, fd))
		corpus_add(w, c);
}

static void flush_counts(struct worker *w)
{
	atomic_fetch_add(&sh->calls, w->pend);
	atomic_fetch_add(&sh->calls_ok, w->ok);
	atomic_fetch_add(&sh->calls_core, w->core);
	w->pend = 0;
	w->ok = 0;
	w->core = 0;
}

static long do_ioctl(struct worker *w, int fd, unsigned long cmd, void *arg,
		     int op)
{
	struct call *c = ev_begin(w, EV_CALL, fd);
	int slot = op >= 0 ? op : NOPS;
	uint64_t seq;
	int64_t t0;
	long ret;
	int e;

	c->op = (int8_t)op;
	capture(w, c, cmd, arg);
	seq = atomic_fetch_add(&sh->seq, 1) + 1;
	if (w->cover)
		__atomic_store_n(&w->cover[0], 0, __ATOMIC_RELAXED);
	t0 = kt_now();
	errno = 0;
	ret = ioctl(fd, cmd, arg);
	e = errno;
	w->op_ns[slot] += (unsigned long)(kt_now() - t0);
	w->op_n[slot]++;
	c->ret = ret;
	c->err = ret < 0 ? e : 0;
	ev_end(c, seq);
	if (w->cover && !w->in_child)
		cover_check(w, c, fd);
	/* counted as we go: a process that dies still counts its calls */
	w->calls++;
	if (ret >= 0)
		w->ok++;
	/* the core: past the argument checks */
	if (ret >= 0 || !(e == EINVAL || e == EFAULT || e == E2BIG ||
			  e == ENOTTY || e == ENOTCONN || e == EBADF))
		w->core++;
	if (++w->pend == 256)
		flush_counts(w);
	if (ret < 0) {
		emask ok = op >= 0 ? ops[op].ok : E_ANY;

		/* EBADF only where a forked child's fd may have gone */
		if (e <= 0 || e >= 128 || !(ok & B(e))) {
			atomic_fetch_add(&sh->bad_errno, 1);
			note("%s cmd %#lx: unexpected errno %d (%s)",
			     op >= 0 ? ops[op].name : "RAW", cmd, e, kt_ename(e));
		}
	}
	errno = e;
	return ret;
}

/*
 * A call whose argument @a (@size bytes) the caller keeps on its stack:
 * made from w->keys, the worker's own memory, which reproducers relocate.
 */
static long own_ioctl(struct worker *w, int fd, unsigned long cmd, void *a,
		      size_t size, int op)
{
	void *p = w->keys + KEYBUF - 512;
	long ret;

	memcpy(p, a, size);
	ret = do_ioctl(w, fd, cmd, p, op);
	memcpy(a, p, size);
	return ret;
}

/* --- pointers --- */

/* A pointer for an argument of @size bytes: usually good, sometimes bad. */
static void *arg_ptr_(struct worker *w, void *good, size_t size);

static void *arg_ptr(struct worker *w, void *good, size_t size, int out)
{
	(void)out;
	return arg_ptr_(w, good, size);
}

static void *arg_ptr_(struct worker *w, void *good, size_t size)
{
	switch (rn(&w->r, 40)) {
	case 0:
		return NULL;
	case 1:
		return (void *)w->unmapped;
	case 2:
		/* straddles the guard page */
		return w->arena + ARENA - (size > 1 ? rn(&w->r, (uint32_t)size - 1) + 1 : 1);
	case 3:
		/* read-only (zeroes): EFAULT for output */
		return w->ro;
	case 4:
		return (void *)0xffff888000000000ULL;
	case 5:
		return (void *)0x8000000000000000ULL;
	case 6:
		return (void *)(uintptr_t)rnd(&w->r);
	default:
		return good;
	}
}

/* An ioctl command for op @op with @ksize: usually right, sometimes not. */
static unsigned long cmd_for(struct worker *w, int op, unsigned long right,
			     size_t ksize, size_t *usize)
{
	unsigned int dir = _IOC_DIR(right);
	size_t size = ksize;

	switch (rn(&w->r, 30)) {
	case 0:
		size = rn(&w->r, (uint32_t)ksize);
		break;
	case 1:
		size = ksize + 1 + rn(&w->r, 64);	/* larger: tail must be 0 */
		break;
	case 2:
		size = rn(&w->r, _IOC_SIZEMASK + 1);
		break;
	case 3:
		dir = rn(&w->r, 4);
		break;
	default:
		break;
	}
	if (size > 8192)
		size = ksize + 8;
	*usize = size;
	(void)op;
	return _IOC(dir, KWQ_IOC_MAGIC, _IOC_NR(right), size);
}

/* Flip a random bit of @p (some reserved field, flag, length...). */
static void mutate(struct worker *w, void *p, size_t size, int pct)
{
	if (chance(&w->r, pct))
		((unsigned char *)p)[rn(&w->r, (uint32_t)size)] ^= 1u << rn(&w->r, 8);
}

/*
 * Issue struct-argument op @op: @a (@ksize bytes) is copied into the
 * arena followed by a zero or random tail (for larger sizes), then maybe
 * mutated, and passed through a maybe-bad pointer.
 */
static long struct_ioctl(struct worker *w, int fd, int op, unsigned long right,
			 void *a, size_t ksize, int out, int mpct, int optr)
{
	size_t usize;
	unsigned long cmd = cmd_for(w, op, right, ksize, &usize);
	unsigned char *buf = w->arena + rn(&w->r, 4096) * 8 % (ARENA / 2);
	void *p;
	long ret;

	memset(buf, 0, usize + 64);
	memcpy(buf, a, ksize);
	if (usize > ksize && chance(&w->r, 20))
		buf[ksize + rn(&w->r, (uint32_t)(usize - ksize))] = 1;
	mutate(w, buf, ksize, mpct);
	/*
	 * An output pointer stays as chosen (good or deliberately bad): a
	 * flipped bit could aim the kernel's writes at this process's own
	 * state, and the fuzzer would fuzz itself.
	 */
	if (optr >= 0)
		memcpy(buf + optr, (char *)a + optr, 8);
	p = arg_ptr(w, buf, usize, out);
	ret = do_ioctl(w, fd, cmd, p, op);
	if (p == buf)
		memcpy(a, buf, ksize);
	return ret;
}

/* --- fds --- */

static struct tfd *pick_fd(struct worker *w, int untracked_only)
{
	int i, n = 0, idx[MAXFD];

	/* children never touch the tracked queues (they are not counted) */
	untracked_only |= w->in_child;
	for (i = 0; i < w->nfds; i++)
		if (!untracked_only || !w->fds[i].tracked)
			idx[n++] = i;
	if (!n)
		return NULL;
	return &w->fds[idx[rn(&w->r, n)]];
}

static void drop_held_of_fd(struct worker *w, int fd)
{
	int i;

	for (i = 0; i < w->nheld; i++)
		if (w->held[i].fd == fd) {
			atomic_fetch_sub(&sh->held[w->held[i].tq][w->held[i].key], 1);
			w->held[i--] = w->held[--w->nheld];
		}
}

static void ring_fd_closing(struct worker *w, int fd);

static void close_fd(struct worker *w, struct tfd *t)
{
	/* Leases end with the fd: stop counting them before they return. */
	if (!w->in_child) {
		drop_held_of_fd(w, t->fd);
		ring_fd_closing(w, t->fd);
	}
	ev_simple(w, EV_CLOSE, t->fd, 0);
	close(t->fd);
	*t = w->fds[--w->nfds];
}

static struct tfd *new_fd(struct worker *w)
{
	int fd, flags = chance(&w->r, 20) ? O_NONBLOCK : 0;

	if (w->nfds == MAXFD)
		close_fd(w, &w->fds[rn(&w->r, MAXFD)]);
	fd = open("/dev/kwq", O_RDWR | O_CLOEXEC | flags);
	if (fd < 0)
		return NULL;
	ev_simple(w, EV_OPEN, fd, (uint32_t)flags);
	w->fds[w->nfds] = (struct tfd){ .fd = fd, .tracked = 0 };
	return &w->fds[w->nfds++];
}

/* --- the operations --- */

static const char *qname(struct worker *w)
{
	if (chance(&w->r, 5))
		return "no-such-queue";
	return names[rn(&w->r, NQ_POOL)];
}

static void op_create(struct worker *w)
{
	struct kwq_create_args a = {};
	struct tfd *t = chance(&w->r, 70) ? new_fd(w) : pick_fd(w, 1);
	int i;

	if (!t)
		return;
	strcpy(a.name, qname(w));
	a.mode = chance(&w->r, 50) ? 0666 : rn(&w->r, 01000);
	a.nr_limits = rn(&w->r, KWQ_LIMITS_MAX + 1);
	for (i = 0; i < (int)a.nr_limits; i++) {
		a.limits[i].type = 1 + rn(&w->r, 3);
		a.limits[i].a = rn(&w->r, 1000000);
		a.limits[i].b = a.limits[i].type == KWQ_LIMIT_BUCKET ? 0 : rn(&w->r, 100000000);
		a.limits[i].count = a.limits[i].type == KWQ_LIMIT_EXPONENTIAL ? 0 : rn(&w->r, 20);
	}
	a.max_items = chance(&w->r, 50) ? 0 : rn(&w->r, 300);
	a.max_wait_ns = rn(&w->r, 3) ? 0 : rnd(&w->r);
	/* A dead set, now and then a bound out of range. */
	if (chance(&w->r, 40)) {
		a.max_retries = chance(&w->r, 5) ? rn(&w->r, 0xffffffffu) :
						 rn(&w->r, 4);
		a.max_dead = chance(&w->r, 5) ? rn(&w->r, 0xffffffffu) :
					      rn(&w->r, 3);
	}
	/* Processing deadlines: none, a few ms (they pass), or out of range. */
	if (chance(&w->r, 30))
		a.processing_timeout_ns = chance(&w->r, 80) ?
			KWQ_PROCESSING_TIMEOUT_MIN * (1 + rn(&w->r, 5)) :
			rnd(&w->r);
	/* Ephemeral (gone with its last fd) now and then; unknown flags. */
	if (chance(&w->r, 25))
		a.flags = KWQ_CREATE_EPHEMERAL;
	else if (chance(&w->r, 3))
		a.flags = (uint32_t)rnd(&w->r);
	if (chance(&w->r, 3))
		memset(a.name, 'x', sizeof(a.name));	/* not terminated */
	struct_ioctl(w, t->fd, 0, KWQ_IOC_CREATE, &a, sizeof(a), 0, 25, -1);
}

static void op_open(struct worker *w)
{
	struct kwq_open_args a = {};
	struct tfd *t = chance(&w->r, 70) ? new_fd(w) : pick_fd(w, 1);

	if (!t)
		return;
	strcpy(a.name, qname(w));
	struct_ioctl(w, t->fd, 1, KWQ_IOC_OPEN, &a, sizeof(a), 0, 15, -1);
}

static void op_destroy(struct worker *w)
{
	struct kwq_open_args a = {};
	struct tfd *t = pick_fd(w, 0);

	if (!t)
		return;
	strcpy(a.name, qname(w));
	struct_ioctl(w, t->fd, 2, KWQ_IOC_DESTROY, &a, sizeof(a), 0, 10, -1);
}

static void op_list(struct worker *w)
{
	struct kwq_list_args a = {};
	struct tfd *t = pick_fd(w, 0);
	unsigned char *names_buf = w->arena + ARENA / 2;

	if (!t)
		return;
	a.capacity = chance(&w->r, 10) ? 0xffffffffu : rn(&w->r, 16);
	if (a.capacity > 1000)	/* writes run into the guard page */
		names_buf = w->arena + ARENA - 3 * KWQ_NAME_LEN;
	a.names = (uintptr_t)arg_ptr(w, names_buf, a.capacity * KWQ_NAME_LEN, 1);
	struct_ioctl(w, t->fd, 3, KWQ_IOC_LIST, &a, sizeof(a), 1, 10,
		     offsetof(struct kwq_list_args, names));
}

/* Key @k of tracked queue @tq, or a fuzzed key. */
static size_t make_key(struct worker *w, unsigned char *buf, int tracked, int *kid)
{
	size_t len;
	uint32_t i;

	if (tracked || chance(&w->r, 70)) {
		*kid = rn(&w->r, NKEYS);
		return (size_t)sprintf((char *)buf, "k%d", *kid);
	}
	*kid = -1;
	/* Mostly short; else any length up to the longest, often that. */
	len = 1 + rn(&w->r, chance(&w->r, 80) ? 16 : KWQ_KEY_LEN_MAX);
	if (chance(&w->r, 5))
		len = KWQ_KEY_LEN_MAX;
	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)rnd(&w->r);
	return len;
}

/*
 * A record's priority: mostly 0, else a few near it, sometimes any int
 * (each new one a priority level the queue must free again).
 */
static int make_prio(struct worker *w, int prio_ok)
{
	if (!prio_ok || !chance(&w->r, 30))
		return 0;
	if (chance(&w->r, 20))
		return (int)(uint32_t)rnd(&w->r);
	return (int)rn(&w->r, 7) - 3;
}

/* Pack @nr records into w->recs; returns the bytes used. */
static size_t pack(struct worker *w, unsigned int nr, int tracked, int prio_ok,
		   int *kids)
{
	unsigned char key[KWQ_KEY_LEN_MAX];
	size_t off = 0;
	unsigned int i;
	int kid;

	for (i = 0; i < nr; i++) {
		size_t len = make_key(w, key, tracked, &kid);
		long n = kwq_rec_pack(w->recs + off, RECBUF - off, key, len,
				      make_prio(w, prio_ok));

		if (n < 0)
			break;
		if (kids)
			kids[i] = kid;
		off += (size_t)n;
	}
	return off;
}

static unsigned int batch_nr(struct worker *w)
{
	switch (rn(&w->r, 20)) {
	case 0:
		return 1 + rn(&w->r, KWQ_BATCH_MAX);
	case 1:
		return 100 + rn(&w->r, 400);
	default:
		return 1 + rn(&w->r, 8);
	}
}

/* ADD/DONE/FORGET/REMOVE with random keys. */
/*
 * A size no record buffer of @good bytes may have, the shapes that once
 * slipped through (issue 30: an empty buffer read as one record): none,
 * one byte, a header short by one or alone, a byte short or over, odd.
 */
static uint32_t odd_size(struct worker *w, uint32_t good)
{
	switch (rn(&w->r, 7)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return sizeof(struct kwq_rec) - 1;
	case 3:
		return sizeof(struct kwq_rec);
	case 4:
		return good ? good - 1 : 0;
	case 5:
		return good + 1;
	default:
		return good | 4;
	}
}

static void op_keys(struct worker *w, int op)
{
	unsigned long cmd = op == 4 ? KWQ_IOC_ADD : op == 6 ? KWQ_IOC_DONE :
			    op == 7 ? KWQ_IOC_FORGET : KWQ_IOC_REMOVE;
	struct kwq_keys_args a = {};
	/* a random DONE could end a key another thread counts as held */
	struct tfd *t = pick_fd(w, op == 6);
	unsigned int nr = batch_nr(w);
	size_t used;

	if (!t)
		return;
	if (t->tracked && nr > 64)
		nr = 64;
	used = pack(w, nr, t->tracked, op == 4, NULL);
	a.nr = nr;
	a.recs_len = (uint32_t)used;
	a.recs = (uintptr_t)w->recs;
	if (op == 4) {
		switch (rn(&w->r, 4)) {
		case 1:
			a.flags = KWQ_ADD_AFTER;
			a.after_ns = chance(&w->r, 80) ? rn(&w->r, 5000000) :
				     (int64_t)rnd(&w->r);
			/* Which deadline wins; sometimes both (EINVAL). */
			if (chance(&w->r, 30))
				a.flags |= KWQ_ADD_REPLACE;
			if (chance(&w->r, 30))
				a.flags |= KWQ_ADD_LATER;
			break;
		case 2:
			a.flags = KWQ_ADD_RATE_LIMITED;
			a.delays = (uintptr_t)arg_ptr(w, w->arena + ARENA / 2,
						      nr * 8, 1);
			if (nr * 8 > ARENA / 2)
				a.delays = (uintptr_t)w->arena;
			break;
		default:
			break;
		}
	}
	switch (rn(&w->r, 25)) {
	case 0:
		a.recs_len = 0xffffffffu;
		break;
	case 1:
		a.recs_len = KWQ_BATCH_MAX * KWQ_REC_SIZE_MAX;	/* EFAULT or EINVAL */
		break;
	case 2:
		a.nr = chance(&w->r, 50) ? 0 : 0xffffffffu;
		break;
	case 3:
		a.recs = (uintptr_t)arg_ptr(w, w->recs, used, 0);
		break;
	case 4:
		/* corrupt one record header or its padding */
		mutate(w, w->recs, used, 100);
		break;
	case 5:
		a.recs_len = odd_size(w, (uint32_t)used);
		break;
	case 6:
		/* the one-key paths, with a size that holds no record */
		a.nr = 1;
		a.recs_len = odd_size(w, (uint32_t)KWQ_REC_SIZE(2));
		if (chance(&w->r, 30))
			a.recs = 0;
		break;
	default:
		break;
	}
	struct_ioctl(w, t->fd, op, cmd, &a, sizeof(a), 1, 8,
		     offsetof(struct kwq_keys_args, delays));
}

/*
 * The id of tracked key "k<id>" (0 <= id < NKEYS), or -1. Only that exact
 * key is ours: a fuzzed ADD (a mutated record header) can slip a near
 * miss such as "k12\x05" or "k1\0" into a tracked queue, which is
 * another key and must not count as k12 or k1.
 */
static int tracked_kid(const void *key, size_t len)
{
	char tmp[8] = {}, canon[16];
	int kid;

	if (len < 2 || len > 7)
		return -1;
	memcpy(tmp, key, len);
	kid = tmp[0] == 'k' ? atoi(tmp + 1) : -1;
	if (kid < 0 || kid >= NKEYS ||
	    (size_t)snprintf(canon, sizeof(canon), "k%d", kid) != len ||
	    memcmp(canon, key, len))
		return -1;
	return kid;
}

/* DONE a key that is not one of ours, through the fd that got it. */
static void done_foreign(struct worker *w, struct tfd *t, const void *key,
			 size_t len)
{
	struct kwq_keys_args a = {};
	unsigned char *rec = w->keys + KWQ_KEY_LEN_MAX + 1024;
	long m = kwq_rec_pack(rec, KWQ_REC_SIZE_MAX, key, len, 0);

	if (m <= 0)
		return;
	a.recs = (uintptr_t)rec;
	a.recs_len = (uint32_t)m;
	a.nr = 1;
	if (own_ioctl(w, t->fd, KWQ_IOC_DONE, &a, sizeof(a), 6) < 0) {
		atomic_fetch_add(&sh->bad_result, 1);
		note("DONE of a foreign key on tracked queue %d: %s", t->tq,
		     strerror(errno));
	}
}

static void take_records(struct worker *w, struct tfd *t, const unsigned char *buf,
			 const struct kwq_get_args *a, uint32_t recs_len, int detached)
{
	size_t off = 0;
	unsigned int n = 0;
	const void *key;
	size_t len;
	int prio;

	if (a->used > recs_len || a->nr == 0) {
		atomic_fetch_add(&sh->bad_result, 1);
		note("GET: nr %u used %u recs_len %u", a->nr, a->used, recs_len);
		return;
	}
	while (kwq_rec_next(buf, a->used, &off, &key, &len, &prio) > 0) {
		n++;
		if (!t->tracked || w->in_child)
			continue;
		{
			int kid = tracked_kid(key, len);

			/*
			 * A near miss would DONE the wrong key and strand
			 * this one: finish it here and do not count it.
			 */
			if (kid < 0) {
				done_foreign(w, t, key, len);
				continue;
			}
			if (atomic_fetch_add(&sh->held[t->tq][kid], 1) != 0) {
				atomic_fetch_add(&sh->double_handout, 1);
				note("key k%d of tracked queue %d handed out twice", kid, t->tq);
			}
			if (w->nheld < HELD_MAX)
				w->held[w->nheld++] = (struct held){
					detached ? -1 : t->fd, t->tq, kid };
			else
				atomic_fetch_sub(&sh->held[t->tq][kid], 1);
		}
	}
	if (n != a->nr) {
		atomic_fetch_add(&sh->bad_result, 1);
		note("GET: nr %u but %u records parse in %u bytes", a->nr, n, a->used);
	}
}

static void op_done_held(struct worker *w, int take_ok);

static void op_get(struct worker *w)
{
	struct kwq_get_args a = {};
	struct tfd *t = pick_fd(w, 0);
	unsigned char *buf = w->arena + ARENA / 2;
	uint32_t recs_len;
	size_t usize;
	unsigned long cmd;
	void *p;
	unsigned char *abuf = w->arena + 64;

	if (!t)
		return;
	a.max = chance(&w->r, 10) ? 0xffffffffu : 1 + rn(&w->r, 40);
	a.recs_len = KWQ_REC_SIZE_MAX * (1 + rn(&w->r, 40));
	a.flags = chance(&w->r, 25) ? KWQ_GET_DETACHED : 0;
	a.timeout_ns = chance(&w->r, 70) ? 0 : rn(&w->r, 3000000);
	if (t->tracked) {
		/* room to count what we get */
		while (w->nheld > HELD_MAX - 64) {
			int before = w->nheld;

			op_done_held(w, 0);
			if (w->nheld == before)
				return;
		}
		/* well-formed, results always readable */
		a.recs = (uintptr_t)buf;
		memcpy(abuf, &a, sizeof(a));
		errno = 0;
		if (do_ioctl(w, t->fd, KWQ_IOC_GET, abuf, 5) == 0) {
			memcpy(&a, abuf, sizeof(a));
			take_records(w, t, buf, &a, a.recs_len, a.flags != 0);
		}
		return;
	}
	switch (rn(&w->r, 12)) {
	case 0:	/* runs into the guard page */
		buf = w->arena + ARENA - KWQ_REC_SIZE_MAX * (1 + rn(&w->r, 3)) -
		      rn(&w->r, 64);
		a.recs_len = chance(&w->r, 50) ? 0xffffffffu : KWQ_REC_SIZE_MAX * 8;
		break;
	case 1:
		buf = w->ro;
		break;
	case 2:
		buf = (void *)w->unmapped;
		break;
	case 3:
		a.recs_len = rn(&w->r, KWQ_REC_SIZE_MAX);
		break;
	default:
		break;
	}
	if (chance(&w->r, 30))
		a.processing_timeout_ns = chance(&w->r, 20) ? KWQ_TIMEOUT_NONE :
			KWQ_PROCESSING_TIMEOUT_MIN * (1 + rn(&w->r, 5));
	a.recs = (uintptr_t)buf;
	mutate(w, &a, sizeof(a), 8);
	a.recs = (uintptr_t)buf;	/* see struct_ioctl() */
	/* no unbounded wait in a thread nobody kills */
	if (!w->in_child && (a.timeout_ns < 0 || a.timeout_ns > 3000000))
		a.timeout_ns = rn(&w->r, 3000000);
	recs_len = a.recs_len;
	cmd = cmd_for(w, 5, KWQ_IOC_GET, sizeof(a), &usize);
	memset(abuf, 0, usize + 8);
	memcpy(abuf, &a, sizeof(a));
	p = arg_ptr(w, abuf, usize, 1);
	if (do_ioctl(w, t->fd, cmd, p, 5) == 0 && p == abuf && cmd == KWQ_IOC_GET &&
	    a.recs == (uintptr_t)buf && recs_len == a.recs_len &&
	    buf != (void *)w->unmapped && buf != w->ro) {
		memcpy(&a, abuf, sizeof(a));
		take_records(w, t, buf, &a, recs_len, 0);
	}
}

/*
 * DONE_GET. On a tracked fd: a well-formed get through it (with a
 * min_nr to wait for), whose records are counted like GET's. On others:
 * fuzzed arguments, done records anywhere in the arena or unmapped.
 */
static void op_done_get(struct worker *w)
{
	struct kwq_done_get_args a = {};
	struct tfd *t = pick_fd(w, 0);
	unsigned char *buf = w->arena + ARENA / 2;
	unsigned char *abuf = w->arena + 64;

	if (!t)
		return;
	a.get.max = 1 + rn(&w->r, 40);
	a.get.min_nr = rn(&w->r, a.get.max + 1);
	a.get.recs_len = KWQ_REC_SIZE_MAX * (1 + rn(&w->r, 40));
	a.get.timeout_ns = chance(&w->r, 50) ? 0 : rn(&w->r, 2000000);
	a.get.recs = (uintptr_t)buf;
	if (t->tracked) {
		while (w->nheld > HELD_MAX - 64) {
			int before = w->nheld;

			op_done_held(w, 0);
			if (w->nheld == before)
				return;
		}
		memcpy(abuf, &a, sizeof(a));
		if (do_ioctl(w, t->fd, KWQ_IOC_DONE_GET, abuf, 13) == 0) {
			memcpy(&a, abuf, sizeof(a));
			take_records(w, t, buf, &a.get, a.get.recs_len, 0);
		}
		return;
	}
	a.done_nr = rn(&w->r, 5);
	a.done_len = KWQ_REC_SIZE(rn(&w->r, 40)) * a.done_nr;
	if (chance(&w->r, 15))
		a.done_len = odd_size(w, a.done_len);
	a.done_recs = (uintptr_t)(chance(&w->r, 20) ? (void *)w->unmapped :
				  chance(&w->r, 5) ? NULL : (void *)w->recs);
	mutate(w, &a, sizeof(a), 8);
	a.get.recs = (uintptr_t)buf;
	/* no unbounded wait in a thread nobody kills */
	if (!w->in_child && (a.get.timeout_ns < 0 ||
			     a.get.timeout_ns > 3000000))
		a.get.timeout_ns = rn(&w->r, 3000000);
	own_ioctl(w, t->fd, KWQ_IOC_DONE_GET, &a, sizeof(a), 13);
}

/*
 * A worker loop's call on held key @i (of tracked queue @tq, through @fd):
 * DONE_GET of that one key with max 1, dev.c's one-key path; the key it
 * takes is counted as GET's are.
 */
static void done_get_one_held(struct worker *w, int fd, int i)
{
	struct kwq_done_get_args a = {};
	unsigned char *buf = w->arena + ARENA / 2;
	struct held h = w->held[i];
	struct tfd *t = NULL;
	char key[16];
	int j;

	for (j = 0; j < w->nfds; j++)
		if (w->fds[j].fd == fd)
			t = &w->fds[j];
	if (!t)
		return;
	a.done_len = (uint32_t)kwq_rec_pack(w->recs, 4096, key,
					    (size_t)sprintf(key, "k%d", h.key), 0);
	atomic_fetch_sub(&sh->held[h.tq][h.key], 1);
	w->held[i] = w->held[--w->nheld];
	a.done_recs = (uintptr_t)w->recs;
	a.done_nr = 1;
	a.get.recs = (uintptr_t)buf;
	a.get.recs_len = KWQ_REC_SIZE_MAX;
	a.get.max = 1;
	if (own_ioctl(w, fd, KWQ_IOC_DONE_GET, &a, sizeof(a), 13) == 0) {
		take_records(w, t, buf, &a.get, a.get.recs_len, 0);
	} else if (a.done != 1) {
		atomic_fetch_add(&sh->bad_result, 1);
		note("DONE_GET of held key k%d on tracked queue %d: %s, done %u",
		     h.key, h.tq, strerror(errno), a.done);
	}
}

/*
 * Done (or lose) keys this thread holds on tracked queues. With @take_ok,
 * sometimes a one-key DONE_GET, which takes a key as it finishes one:
 * not where the caller needs fewer keys held (making room, giving back
 * at the end), where a loop that stops when nothing was given back would
 * leave the rest, detached ones included, processing for good.
 */
static void op_done_held(struct worker *w, int take_ok)
{
	struct kwq_keys_args a = {};
	unsigned char *p = w->recs;
	int i, tq, n = 0;
	char key[16];

	if (!w->nheld)
		return;
	tq = w->held[rn(&w->r, w->nheld)].tq;
	int fd = -1, hfd = w->held[0].fd;

	for (i = 0; i < w->nheld; i++) {
		if (w->held[i].tq != tq)
			continue;
		hfd = w->held[i].fd;
		break;
	}
	/* a leased key must be done through its fd; detached through any */
	if (hfd >= 0) {
		fd = hfd;
	} else {
		for (i = 0; i < w->nfds; i++)
			if (w->fds[i].tracked && w->fds[i].tq == tq)
				fd = w->fds[i].fd;
		if (fd < 0)
			return;
	}
	/* Sometimes one key, a worker loop's DONE_GET. */
	for (i = take_ok && chance(&w->r, 30) ? 0 : w->nheld; i < w->nheld; i++) {
		if (w->held[i].tq == tq && w->held[i].fd == hfd) {
			done_get_one_held(w, fd, i);
			return;
		}
	}
	for (i = 0; i < w->nheld && n < 32; i++) {
		struct held *h = &w->held[i];
		long m;

		if (h->tq != tq || h->fd != hfd)
			continue;
		m = kwq_rec_pack(p, 4096, key,
				 (size_t)sprintf(key, "k%d", h->key), 0);
		p += m;
		n++;
		/* stop counting before the key can be handed out again */
		atomic_fetch_sub(&sh->held[tq][h->key], 1);
		w->held[i--] = w->held[--w->nheld];
	}
	a.recs = (uintptr_t)w->recs;
	a.recs_len = (uint32_t)(p - w->recs);
	a.nr = (uint32_t)n;
	if (own_ioctl(w, fd, KWQ_IOC_DONE, &a, sizeof(a), 6) < 0 || a.done != a.nr) {
		atomic_fetch_add(&sh->bad_result, 1);
		note("DONE of %d held keys on tracked queue %d: %s, done %u",
		     n, tq, strerror(errno), a.done);
	}
}

/* A key at @key for a one-key ioctl: *@ptr and *@len, sometimes a bad length. */
static void one_key(struct worker *w, unsigned char *key, __u64 *ptr,
		    __u32 *len)
{
	int kid;

	*len = (uint32_t)make_key(w, key, 0, &kid);
	*ptr = (uintptr_t)arg_ptr(w, key, *len, 0);
	if (chance(&w->r, 5))
		*len = chance(&w->r, 50) ? 0 : KWQ_KEY_LEN_MAX + 1 + rn(&w->r, 1000);
}

static void op_num_requeues(struct worker *w)
{
	struct kwq_key_args a = {};
	struct tfd *t = pick_fd(w, 0);
	unsigned char *key = w->keys;

	if (!t)
		return;
	one_key(w, key, &a.key, &a.len);
	struct_ioctl(w, t->fd, 9, KWQ_IOC_NUM_REQUEUES, &a, sizeof(a), 1, 10, -1);
}

/* KWQ_IOC_REVIVE (@op 15) or KWQ_IOC_PURGE (16): a key, or all. */
static void op_dead(struct worker *w, int op)
{
	struct kwq_dead_args a = {};
	struct tfd *t = pick_fd(w, 0);
	unsigned char *key = w->keys;
	int kid;

	if (!t)
		return;
	if (chance(&w->r, 30)) {
		a.flags = KWQ_DEAD_ALL;
	} else {
		a.len = (uint32_t)make_key(w, key, 0, &kid);
		a.key = (uintptr_t)arg_ptr(w, key, a.len, 0);
	}
	if (chance(&w->r, 5))
		a.len = chance(&w->r, 50) ? 0 : KWQ_KEY_LEN_MAX + 1 + rn(&w->r, 1000);
	struct_ioctl(w, t->fd, op, op == 15 ? KWQ_IOC_REVIVE : KWQ_IOC_PURGE,
		     &a, sizeof(a), 1, 10, -1);
}

/* KWQ_IOC_INSPECT (@op 17): one key, or a chunk of a walk. */
static void op_inspect(struct worker *w)
{
	struct kwq_inspect_args a = {};
	struct tfd *t = pick_fd(w, 0);
	unsigned char *key = w->keys;
	int kid;

	if (!t)
		return;
	if (chance(&w->r, 40)) {
		a.len = (uint32_t)make_key(w, key, 0, &kid);
		a.key = (uintptr_t)arg_ptr(w, key, a.len, 0);
	} else {
		a.states = chance(&w->r, 90) ? rn(&w->r, KWQ_KEY_STATES_ALL + 1) :
					     (uint32_t)rnd(&w->r);
		a.max = chance(&w->r, 90) ? 1 + rn(&w->r, 8) : rn(&w->r, 1000);
		/* a cursor of this walk, of none, or made up */
		a.cursor = chance(&w->r, 70) ? 0 : rnd(&w->r);
	}
	a.recs_len = chance(&w->r, 90) ? 8 * KWQ_INFO_REC_SIZE_MAX :
					rn(&w->r, 2 * KWQ_INFO_REC_SIZE_MAX);
	a.recs = (uintptr_t)arg_ptr(w, w->arena + ARENA / 2,
				     8 * KWQ_INFO_REC_SIZE_MAX, 1);
	struct_ioctl(w, t->fd, 17, KWQ_IOC_INSPECT, &a, sizeof(a), 1, 10,
		     offsetof(struct kwq_inspect_args, recs));
}

/*
 * TOUCH on untracked fds (a deadline on a tracked queue's held key would
 * make its done ESTALE): keys anywhere, timeouts in and out of range.
 */
static void op_touch(struct worker *w)
{
	struct kwq_touch_args a = {};
	struct tfd *t = pick_fd(w, 1);
	unsigned char *key = w->keys;

	if (!t)
		return;
	one_key(w, key, &a.key, &a.len);
	switch (rn(&w->r, 4)) {
	case 0:
		a.processing_timeout_ns = 0;
		break;
	case 1:
		a.processing_timeout_ns = KWQ_TIMEOUT_NONE;
		break;
	case 2:
		a.processing_timeout_ns = KWQ_PROCESSING_TIMEOUT_MIN *
					  (1 + rn(&w->r, 5));
		break;
	default:
		a.processing_timeout_ns = rnd(&w->r);
		break;
	}
	struct_ioctl(w, t->fd, 14, KWQ_IOC_TOUCH, &a, sizeof(a), 0, 10, -1);
}

static void op_len(struct worker *w)
{
	struct tfd *t = pick_fd(w, 0);
	size_t usize;
	unsigned long cmd;

	if (!t)
		return;
	cmd = cmd_for(w, 10, KWQ_IOC_LEN, sizeof(uint64_t), &usize);
	do_ioctl(w, t->fd, cmd, arg_ptr(w, w->keys + KEYBUF - 512, sizeof(uint64_t), 1), 10);
}

static void op_stats(struct worker *w)
{
	struct kwq_stats_args a;
	struct tfd *t = pick_fd(w, 0);

	if (!t)
		return;
	memset(&a, 0, sizeof(a));
	struct_ioctl(w, t->fd, 12, KWQ_IOC_STATS, &a, sizeof(a), 1, 0, -1);
}

static void op_info(struct worker *w)
{
	struct kwq_create_args a;
	struct tfd *t = pick_fd(w, 0);

	if (!t)
		return;
	memset(&a, 0, sizeof(a));
	struct_ioctl(w, t->fd, OP_INFO, KWQ_IOC_INFO, &a, sizeof(a), 1, 0, -1);
}

static void op_shutdown(struct worker *w, int drain_ok)
{
	struct kwq_shutdown_args a = {};
	struct tfd *t = pick_fd(w, 1);

	if (!t)
		return;
	/* drain waits for other threads' keys: only in doomed children */
	a.flags = drain_ok && chance(&w->r, 50) ? KWQ_SHUTDOWN_DRAIN : 0;
	struct_ioctl(w, t->fd, 11, KWQ_IOC_SHUTDOWN, &a, sizeof(a), 0,
		     drain_ok ? 10 : 0, -1);
}

/* Fully random ioctl on an untracked fd: any number, size, direction. */
static void op_raw(struct worker *w)
{
	struct tfd *t = pick_fd(w, 1);
	unsigned int nr, size, dir, type = KWQ_IOC_MAGIC;
	unsigned char *buf = w->arena + ARENA / 2;
	uint32_t i;
	void *p;

	if (!t)
		return;
	nr = chance(&w->r, 90) ? rn(&w->r, 0x15) : rn(&w->r, 256);
	size = chance(&w->r, 50) ? rn(&w->r, 256) : rn(&w->r, _IOC_SIZEMASK + 1);
	dir = rn(&w->r, 4);
	if (chance(&w->r, 3))
		type = rn(&w->r, 256);
	if (size > ARENA / 2)
		size = ARENA / 2;
	/*
	 * Word by word: zero, a small number (sizes, counts, flags: below
	 * mmap_min_addr, so never a mapping), an arena pointer, or a value
	 * with the top bit set (kernel or non-canonical). Nothing random can
	 * aim the kernel's writes at the fuzzer's own memory.
	 */
	for (i = 0; i < size; i += 8) {
		uint64_t v = 0;
		uint32_t c = rn(&w->r, 10);

		if (c >= 6 && c < 8)
			v = rn(&w->r, 0x4000) | (uint64_t)rn(&w->r, 0x4000) << 32;
		else if (c == 8)
			v = (uintptr_t)(w->arena + rn(&w->r, ARENA / 2));
		else if (c == 9)
			v = rnd(&w->r) | 1ULL << 63;
		memcpy(buf + i, &v, size - i < 8 ? size - i : 8);
	}
	p = arg_ptr(w, buf, size, 1);
	if (nr == _IOC_NR(KWQ_IOC_GET) || nr == _IOC_NR(KWQ_IOC_SHUTDOWN) ||
	    nr == _IOC_NR(KWQ_IOC_DONE_GET) ||
	    nr == _IOC_NR(KWQ_IOC_RING_ENTER)) {
		/* no blocking forever: make gets/drains non-blocking here */
		if (nr == _IOC_NR(KWQ_IOC_GET) && size >= 24)
			memset(buf + 24, 0, 8);
		if (nr == _IOC_NR(KWQ_IOC_DONE_GET) && size >= 48)
			memset(buf + 48, 0, 8);
		if (nr == _IOC_NR(KWQ_IOC_RING_ENTER) && size >= 24)
			memset(buf + 16, 0, 8);
		if (nr == _IOC_NR(KWQ_IOC_SHUTDOWN) && size >= 1)
			buf[0] &= ~KWQ_SHUTDOWN_DRAIN;
		if (p != buf)
			p = buf;
	}
	do_ioctl(w, t->fd, _IOC(dir, type, nr, size), p, -1);
}

/* --- rings (Documentation/rings.rst) --- */

/*
 * Ring mode. A thread keeps up to WR_MAX rings, each on an untracked fd
 * attached to a pool queue, so no ring record ever reaches a tracked
 * queue: a ring's adds are applied whenever any getter of the queue
 * pulls, which the tracked model (keys counted when a get hands them
 * out) could not follow exactly. It writes records (mostly well-formed,
 * keys of every length, wrapping; some malformed, tail jumps), rings the
 * doorbell, reads completions and finishes leases by slot, while every
 * process's getters of the same pool queues pull its ring and a
 * scribbler thread per process writes random bytes over the user
 * region of the rings marked scribbled. Checked: each completion's
 * result is a documented errno (a well-formed record on a clean ring,
 * one only this thread wrote, gets exactly its op and a result its op
 * allows); a lease's completion names a slot whose generation is the
 * one announced; the kernel never posts more completions than there is
 * room for on a clean ring; a tail jump breaks the ring (EINVAL); a bad
 * mmap() of a region (offset, size, write on a read-only one,
 * MAP_PRIVATE) or mprotect() to writable fails.
 */
#define PAGE		4096UL

static int ring_errno_ok(int res)
{
	const emask ok = B(EINVAL) | B(ENOSPC) | B(EDQUOT) | B(ESHUTDOWN) |
			 B(ENOMEM) | B(EIDRM) | B(ENOENT) | B(EPERM) |
			 B(ESTALE) | B(EBUSY);

	return !res || (res < 0 && res > -128 && (ok & B(-res)));
}

/* What a well-formed record of kind @kind may complete with. */
static int ring_res_ok(int kind, int flags, int res)
{
	emask ok = B(EIDRM) | B(ESHUTDOWN);

	switch (kind) {
	case RK_ADD_AFTER:
		if (flags & (KWQ_SQE_F_REPLACE | KWQ_SQE_F_LATER))
			ok |= B(EINVAL);
		/* fall through */
	case RK_ADD:
		ok |= B(ENOSPC) | B(EDQUOT) | B(ENOMEM);
		break;
	case RK_DONE:
		ok |= B(ENOENT) | B(EPERM) | B(ESTALE) | B(ENOMEM);
		break;
	case RK_LEASE_OK:
		ok |= B(ESTALE);	/* its processing deadline passed */
		break;
	case RK_LEASE_BAD:
		ok = B(ESTALE) | B(EINVAL);
		if (!res)
			return 0;
		break;
	case RK_FORGET:
		ok |= B(ENOMEM);
		break;
	case RK_REMOVE:
		ok |= B(ENOENT) | B(EBUSY) | B(ENOMEM);
		break;
	case RK_NOP:
		ok = 0;
		break;
	}
	return !res || (res < 0 && res > -128 && (ok & B(-res)));
}

static void ring_bad(struct worker *w, struct wring *wr, const char *fmt, ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	atomic_fetch_add(&sh->bad_result, 1);
	note("ring fd %d (sq %u cq %u leases %u%s%s): %s", wr->fd,
	     wr->r.a.sq_entries, wr->r.a.cq_entries, wr->r.a.lease_slots,
	     wr->clean ? ", clean" : "", wr->scribbled ? ", scribbled" : "",
	     why);
	(void)w;
}

static void ring_st(unsigned char *region, uint32_t off, uint32_t v)
{
	__atomic_store_n((uint32_t *)(region + off), v, __ATOMIC_RELEASE);
}

static void ring_unmap(struct wring *wr)
{
	pthread_mutex_lock(&wr->lock);
	kt_ring_unmap(&wr->r);
	pthread_mutex_unlock(&wr->lock);
}

/* The fd of a ring closes: sometimes unmapped first, else close() alone. */
static void ring_fd_closing(struct worker *w, int fd)
{
	int i;

	for (i = 0; i < WR_MAX; i++) {
		struct wring *wr = &w->wr[i];

		if (wr->fd != fd)
			continue;
		if (chance(&w->r, 50))
			ring_unmap(wr);
		wr->fd = -1;
	}
}

/*
 * Read the completions: every one a documented result; a lease's slot
 * holds the generation announced; on a clean ring, a record's
 * completion names a record this thread wrote there, with its op and a
 * result its kind allows.
 */
static void ring_reap(struct worker *w, struct wring *wr)
{
	uint32_t tail, mask = wr->r.a.cq_entries - 1, n = 0;
	const struct kwq_lease_slot *ls;
	struct kwq_cqe c;

	if (!wr->r.k || !wr->r.u)
		return;
	tail = kt_ring_ld(wr->r.k, wr->r.a.cq_tail_off);
	if (tail - wr->cq_head > wr->r.a.cq_entries) {
		/* a scribbled cq_head let the kernel write over them */
		if (wr->clean)
			ring_bad(w, wr, "cq_tail %u, %u completions past cq_head %u",
				 tail, tail - wr->cq_head, wr->cq_head);
		wr->cq_head = tail - wr->r.a.cq_entries;
	}
	for (; wr->cq_head != tail; wr->cq_head++, n++) {
		uint32_t i, s;

		memcpy(&c, wr->r.k + wr->r.a.cqes_off +
		       (wr->cq_head & mask) * sizeof(c), sizeof(c));
		if (c.flags || !ring_errno_ok(c.res)) {
			ring_bad(w, wr, "completion %u: op %u flags %u res %d",
				 wr->cq_head, c.op, c.flags, c.res);
			continue;
		}
		if (c.op == KWQ_CQE_LEASE && wr->scribbled) {
			/* cq_head scribbled: the kernel may write it as we read */
			atomic_fetch_add(&sh->ring_n[RN_LEASE], 1);
			if (c.index < wr->r.a.lease_slots)
				wr->gen[c.index] = c.value;
			continue;
		}
		if (c.op == KWQ_CQE_LEASE) {
			atomic_fetch_add(&sh->ring_n[RN_LEASE], 1);
			if (c.index >= wr->r.a.lease_slots || !c.value || c.res) {
				ring_bad(w, wr, "lease completion: slot %u gen %llu res %d",
					 c.index, (unsigned long long)c.value, c.res);
				continue;
			}
			ls = (const void *)(wr->r.k + wr->r.a.leases_off +
					    (size_t)c.index * KWQ_LEASE_SLOT_SIZE);
			if (__atomic_load_n(&ls->gen, __ATOMIC_ACQUIRE) != c.value ||
			    !ls->len || ls->len > KWQ_KEY_LEN_MAX)
				ring_bad(w, wr, "lease slot %u: gen %llu len %u, completion's %llu",
					 c.index, (unsigned long long)ls->gen, ls->len,
					 (unsigned long long)c.value);
			wr->gen[c.index] = c.value;
			continue;
		}
		if (!c.res && c.op > KWQ_SQE_REMOVE && !wr->scribbled) {
			ring_bad(w, wr, "completion %u: op %u res 0", wr->cq_head, c.op);
			continue;
		}
		if (!wr->clean)
			continue;
		i = c.index & (wr->r.a.sq_entries - 1);
		if (wr->pos[i] != c.index)
			continue;	/* the slot was written again since */
		s = wr->kind[i];
		atomic_fetch_add(&sh->ring_n[RN_CHECKED], 1);
		if (s == RK_NONE || c.op != wr->op[i] ||
		    !ring_res_ok(s, wr->fl[i], c.res))
			ring_bad(w, wr, "record at %u (kind %u op %u): completed op %u res %d",
				 c.index, s, wr->op[i], c.op, c.res);
		wr->kind[i] = RK_NONE;
	}
	atomic_fetch_add(&sh->ring_n[RN_CQE], n);
	ring_st(wr->r.u, wr->r.a.cq_head_off, wr->cq_head);
}

/* A key of any length 1..KWQ_KEY_LEN_MAX, the slot boundaries often. */
static uint32_t ring_key(struct worker *w, unsigned char *key)
{
	static const uint32_t edge[] = {
		1, 39, 40, 41, 103, 104, 105, 167, 168, 169, 1000, 1023, 1024,
	};
	uint32_t len, i;

	switch (rn(&w->r, 4)) {
	case 0:
		return (uint32_t)sprintf((char *)key, "k%u", rn(&w->r, 64));
	case 1:
		len = edge[rn(&w->r, sizeof(edge) / sizeof(edge[0]))];
		break;
	case 2:
		len = 1 + rn(&w->r, KWQ_KEY_LEN_MAX);
		break;
	default:
		len = 1 + rn(&w->r, 64);
		break;
	}
	for (i = 0; i < len; i++)
		key[i] = (unsigned char)("abcdefgh"[rn(&w->r, 8)] ^
					 (chance(&w->r, 3) ? rnd(&w->r) : 0));
	return len;
}

/*
 * Write one record at this thread's tail, unpublished: @bad a malformed
 * one (the ring is not clean from then on). Returns the slots it took,
 * 0 if there was no room.
 */
static uint32_t ring_put(struct worker *w, struct wring *wr, uint32_t room,
			 int bad)
{
	unsigned char slots[KWQ_SQE_SLOTS_MAX * KWQ_SQE_SIZE] = {};
	unsigned char key[KWQ_KEY_LEN_MAX];
	struct kwq_sqe s = {};
	uint32_t len = 0, n, i, kind, mask = wr->r.a.sq_entries - 1;
	uint32_t c = rn(&w->r, 100), slot;

	if (c < 50) {
		s.op = KWQ_SQE_ADD;
		kind = RK_ADD;
		s.priority = make_prio(w, 1);
		switch (rn(&w->r, 5)) {
		case 0:
			s.flags = KWQ_SQE_F_AFTER;
			s.arg = 1 + rn(&w->r, 5000000);
			s.flags |= chance(&w->r, 20) ? KWQ_SQE_F_REPLACE :
				   chance(&w->r, 20) ? KWQ_SQE_F_LATER : 0;
			kind = RK_ADD_AFTER;
			break;
		case 1:
			s.flags = KWQ_SQE_F_RATE_LIMITED;
			break;
		}
	} else if (c < 60) {
		s.op = KWQ_SQE_DONE;
		kind = RK_DONE;
	} else if (c < 75) {
		s.op = KWQ_SQE_DONE_LEASE;
		kind = RK_LEASE_BAD;
		s.arg = rnd(&w->r) | 1;
		s.lease_slot = rn(&w->r, wr->r.a.lease_slots + 2);
		for (i = 0; i < wr->r.a.lease_slots && chance(&w->r, 80); i++) {
			slot = (i + s.lease_slot) % wr->r.a.lease_slots;
			if (!wr->gen[slot])
				continue;
			s.lease_slot = slot;
			s.arg = wr->gen[slot];
			if (chance(&w->r, 10)) {
				s.arg += 1 + rn(&w->r, 3);	/* stale */
			} else {
				kind = RK_LEASE_OK;
				wr->gen[slot] = 0;
			}
			break;
		}
	} else if (c < 83) {
		s.op = KWQ_SQE_FORGET;
		kind = RK_FORGET;
	} else if (c < 90) {
		s.op = KWQ_SQE_REMOVE;
		kind = RK_REMOVE;
	} else {
		s.op = KWQ_SQE_NOP;
		kind = RK_NOP;
	}
	if (chance(&w->r, 30))
		s.flags |= KWQ_SQE_F_CQE;
	if (s.op != KWQ_SQE_NOP && s.op != KWQ_SQE_DONE_LEASE)
		len = ring_key(w, key);
	s.len = len;
	s.nslots = (uint16_t)KWQ_SQE_SLOTS(len);
	n = s.nslots;
	memcpy(s.key, key, len < KWQ_SQE_INLINE ? len : KWQ_SQE_INLINE);
	if (len > KWQ_SQE_INLINE)
		memcpy(slots + KWQ_SQE_SIZE, key + KWQ_SQE_INLINE,
		       len - KWQ_SQE_INLINE);
	if (bad) {
		switch (rn(&w->r, 10)) {
		case 0:
			s.op = (uint8_t)(6 + rn(&w->r, 250));
			break;
		case 1:
			s.flags |= (uint8_t)(0x10 << rn(&w->r, 3));
			break;
		case 2:
			s.nslots = chance(&w->r, 30) ? 0 :
				   chance(&w->r, 30) ? 0xffff :
				   (uint16_t)(s.nslots + 1 + rn(&w->r, 17));
			break;
		case 3:
			s.len = chance(&w->r, 30) ? 0 : chance(&w->r, 50) ?
				KWQ_KEY_LEN_MAX + 1 + rn(&w->r, 4) :
				(uint32_t)rnd(&w->r);
			break;
		case 4:	/* a byte past the key, in its last slot */
			if (len && len < KWQ_SQE_INLINE)
				s.key[len] = 1;
			else if (len > KWQ_SQE_INLINE &&
				 (len - KWQ_SQE_INLINE) % KWQ_SQE_SIZE)
				slots[KWQ_SQE_SIZE + len - KWQ_SQE_INLINE] = 1;
			else
				s.lease_slot = 1;
			break;
		case 5:
			s.priority = s.op == KWQ_SQE_ADD ? 0 : 1 + (int)rn(&w->r, 9);
			s.lease_slot = s.op == KWQ_SQE_ADD ? 1 : s.lease_slot;
			break;
		case 6:
			s.arg = s.op == KWQ_SQE_DONE_LEASE ? 0 : 1ULL << 63;
			if (s.op == KWQ_SQE_ADD)
				s.flags |= KWQ_SQE_F_AFTER;
			break;
		case 7:
			s.flags |= KWQ_SQE_F_AFTER | KWQ_SQE_F_RATE_LIMITED;
			break;
		case 8:
			if (s.op == KWQ_SQE_NOP || s.op == KWQ_SQE_DONE_LEASE)
				s.key[rn(&w->r, KWQ_SQE_INLINE)] = 1;
			else
				s.nslots = (uint16_t)(s.nslots - 1);
			break;
		default:
			s.len = len + 1 + rn(&w->r, 100);
			break;
		}
		wr->clean = 0;
	}
	if (n > room)
		return 0;
	memcpy(slots, &s, sizeof(s));
	for (i = 0; i < n; i++) {
		slot = (wr->r.tail + i) & mask;
		memcpy(wr->r.u + wr->r.a.sqes_off + (size_t)slot * KWQ_SQE_SIZE,
		       slots + (size_t)i * KWQ_SQE_SIZE, KWQ_SQE_SIZE);
		wr->pos[slot] = wr->r.tail + i;
		wr->kind[slot] = i ? RK_NONE : (uint8_t)kind;
		wr->op[slot] = s.op;
		wr->fl[slot] = s.flags;
	}
	atomic_fetch_add(&sh->ring_n[bad ? RN_BADREC : RN_REC], 1);
	if (kind == RK_LEASE_OK)
		atomic_fetch_add(&sh->ring_n[RN_DONE_LEASE], 1);
	return n;
}

/* Write some records and publish them (sometimes half, or too far). */
static void ring_submit(struct worker *w, struct wring *wr)
{
	uint32_t head, used, room, nr = 1 + rn(&w->r, chance(&w->r, 20) ? 64 : 6);
	uint32_t i, took, pub;

	/* a tail stored past the ring stays there: the ring is dead */
	if (!wr->r.u || !wr->r.k || wr->fd < 0 || wr->jumped)
		return;
	head = kt_ring_ld(wr->r.k, wr->r.a.sq_head_off);
	used = wr->r.tail - head;
	if (used > wr->r.a.sq_entries)
		return;		/* broken, or scribbled past */
	room = wr->r.a.sq_entries - used;
	pub = wr->r.tail;
	for (i = 0; i < nr; i++) {
		took = ring_put(w, wr, room, chance(&w->r, 4));
		if (!took)
			break;
		room -= took;
		/* publish a record's first slots only: the kernel must wait */
		if (chance(&w->r, 5) && took > 1)
			ring_st(wr->r.u, wr->r.a.sq_tail_off,
				wr->r.tail + 1 + rn(&w->r, took - 1));
		wr->r.tail += took;
	}
	if (chance(&w->r, 2)) {
		/* past the ring: the kernel must refuse it, and stop */
		wr->clean = 0;
		wr->jumped = 1;
		ring_st(wr->r.u, wr->r.a.sq_tail_off,
			wr->r.tail + wr->r.a.sq_entries + 1 + rn(&w->r, 1000));
		return;
	}
	if (wr->r.tail != pub || chance(&w->r, 10))
		kt_ring_publish(&wr->r);
	/* the producer's side of the need-wakeup protocol */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (wr->r.st && __atomic_load_n((uint32_t *)wr->r.st,
					  __ATOMIC_RELAXED)) {
		struct kwq_ring_enter_args e = { .flags = KWQ_ENTER_SUBMIT };

		own_ioctl(w, wr->fd, KWQ_IOC_RING_ENTER, &e, sizeof(e),
			  OP_RING_ENTER);
	}
}

/* The doorbell: submit, get into lease slots, or both; then reap. */
static void ring_enter(struct worker *w, struct wring *wr)
{
	struct kwq_ring_enter_args e = {};
	int valid = 1;
	long ret;

	switch (rn(&w->r, 10)) {
	case 0:
		e.flags = KWQ_ENTER_GET;
		break;
	case 1:
		e.flags = 0;
		break;
	default:
		e.flags = KWQ_ENTER_SUBMIT |
			  (chance(&w->r, 60) ? KWQ_ENTER_GET : 0);
		break;
	}
	if (e.flags & KWQ_ENTER_GET) {
		if (!wr->r.a.lease_slots)
			valid = 0;
		e.get_max = 1 + rn(&w->r, wr->r.a.lease_slots ?: 1);
		e.get_min = rn(&w->r, e.get_max + 1);
		e.timeout_ns = chance(&w->r, 60) ? 0 : rn(&w->r, 2000000);
		if (chance(&w->r, 20))
			e.processing_timeout_ns = KWQ_PROCESSING_TIMEOUT_MIN *
						  (1 + rn(&w->r, 5));
	}
	if (chance(&w->r, 5)) {
		valid = 0;
		switch (rn(&w->r, 5)) {
		case 0:
			e.flags |= 4u << rn(&w->r, 29);
			break;
		case 1:
			e.pad = 1;
			break;
		case 2:
			e.get_max = e.flags & KWQ_ENTER_GET ?
				    wr->r.a.lease_slots + 1 : 1;
			break;
		case 3:
			e.get_min = e.get_max + 1;
			break;
		default:
			/* a get's fields without a get, or a get of none */
			if (e.flags & KWQ_ENTER_GET)
				e.get_max = 0;
			else
				e.timeout_ns = 5;
			break;
		}
	}
	atomic_fetch_add(&sh->ring_n[RN_ENTER], 1);
	ret = own_ioctl(w, wr->fd, KWQ_IOC_RING_ENTER, &e, sizeof(e),
			OP_RING_ENTER);
	if (ret < 0 && errno == EINVAL && valid && wr->clean)
		ring_bad(w, wr, "a valid enter (flags %#x get %u..%u) failed EINVAL",
			 e.flags, e.get_min, e.get_max);
	/* a tail past the ring: refused, whoever drained it first */
	if (wr->jumped && !wr->scribbled && valid &&
	    e.flags & KWQ_ENTER_SUBMIT && (ret == 0 || (errno != EINVAL &&
						       errno != EIDRM)))
		ring_bad(w, wr, "SUBMIT after a tail jump: %s",
			 ret ? strerror(errno) : "no error");
	if (wr->jumped && !wr->scribbled && wr->r.k && valid && ret < 0 &&
	    errno == EINVAL && !(kt_ring_ld(wr->r.k, wr->r.a.ring_flags_off) &
				 KWQ_RING_F_BROKEN))
		ring_bad(w, wr, "refused after a tail jump, but not marked broken");
	if (ret == 0 && e.leased > e.get_max)
		ring_bad(w, wr, "leased %u of get_max %u", e.leased, e.get_max);
	if (wr->r.k && (kt_ring_ld(wr->r.k, wr->r.a.ring_flags_off) &
			 KWQ_RING_F_BROKEN)) {
		if (wr->clean)
			ring_bad(w, wr, "broken, but only well-formed records written");
		wr->clean = 0;
	}
	ring_reap(w, wr);
}

/* The three regions, mapped right; -errno if one failed (none mapped). */
static int ring_map(struct wring *wr)
{
	int ret;

	pthread_mutex_lock(&wr->lock);
	ret = kt_ring_map(wr->fd, &wr->r) ? -errno : 0;
	pthread_mutex_unlock(&wr->lock);
	return ret;
}

/* Mappings that must fail: wrong offset or size, writable, private. */
static void ring_bad_maps(struct worker *w, struct wring *wr)
{
	static const uint64_t offs[] = { KWQ_RING_OFF_USER, KWQ_RING_OFF_KERNEL,
					 KWQ_RING_OFF_STATUS };
	const uint64_t sizes[] = { wr->r.a.user_size, wr->r.a.kernel_size,
				   wr->r.a.status_size };
	int r = (int)rn(&w->r, 3), how = (int)rn(&w->r, 6);
	uint64_t off = offs[r];
	size_t size = sizes[r];
	int prot = r ? PROT_READ : PROT_READ | PROT_WRITE, flags = MAP_SHARED;
	void *p;

	switch (how) {
	case 0:
		off += PAGE * (1 + rn(&w->r, 4));
		break;
	case 1:
		off = chance(&w->r, 50) ? 0x30000000ULL : (uint64_t)rn(&w->r, 0x40000) * PAGE;
		if (off == KWQ_RING_OFF_USER || off == KWQ_RING_OFF_KERNEL ||
		    off == KWQ_RING_OFF_STATUS)
			off += PAGE;
		break;
	case 2:
		size = chance(&w->r, 50) ? size + PAGE : size - PAGE;
		if (!size)
			size = 2 * PAGE;
		break;
	case 3:
		if (!r)
			r = 1 + (int)rn(&w->r, 2);
		off = offs[r];
		size = sizes[r];
		prot = PROT_READ | PROT_WRITE;
		break;
	case 4:
		flags = MAP_PRIVATE;
		break;
	default:
		/* a read-only region made writable afterwards */
		if (!r)
			r = 1 + (int)rn(&w->r, 2);
		p = mmap(NULL, sizes[r], PROT_READ, MAP_SHARED, wr->fd,
			 (off_t)offs[r]);
		if (p == MAP_FAILED)
			return;
		if (!mprotect(p, sizes[r], PROT_READ | PROT_WRITE))
			ring_bad(w, wr, "mprotect() made region %d writable", r);
		else
			atomic_fetch_add(&sh->ring_n[RN_BADMAP], 1);
		munmap(p, sizes[r]);
		return;
	}
	p = mmap(NULL, size, prot, flags, wr->fd, (off_t)off);
	if (p != MAP_FAILED) {
		ring_bad(w, wr, "mmap(off %#llx, size %zu, prot %d, flags %d) worked",
			 (unsigned long long)off, size, prot, flags);
		munmap(p, size);
	} else if (errno != EINVAL && errno != EPERM && errno != EACCES &&
		   errno != EIDRM) {
		ring_bad(w, wr, "bad mmap(off %#llx, size %zu): %s",
			 (unsigned long long)off, size, strerror(errno));
	} else {
		atomic_fetch_add(&sh->ring_n[RN_BADMAP], 1);
	}
}

/* A ring's setup arguments: valid, or now and then not. */
static int ring_args(struct worker *w, struct kwq_ring_setup_args *a)
{
	memset(a, 0, sizeof(*a));
	a->sq_entries = KWQ_RING_ENTRIES_MIN << (chance(&w->r, 5) ? rn(&w->r, 8) :
						 rn(&w->r, 3));
	a->cq_entries = KWQ_RING_ENTRIES_MIN << rn(&w->r, 4);
	a->lease_slots = chance(&w->r, 3) ? KWQ_RING_LEASES_MAX :
			 chance(&w->r, 20) ? 0 : 1 + rn(&w->r, 16);
	if (!chance(&w->r, 15))
		return 1;
	switch (rn(&w->r, 6)) {
	case 0:
		a->sq_entries = chance(&w->r, 50) ? KWQ_RING_ENTRIES_MIN / 2 :
				KWQ_RING_ENTRIES_MAX * 2;
		break;
	case 1:
		a->cq_entries += 1 + rn(&w->r, 31);
		break;
	case 2:
		a->lease_slots = KWQ_RING_LEASES_MAX + 1 + rn(&w->r, 1000);
		break;
	case 3:
		a->flags = 1u << rn(&w->r, 32);
		break;
	case 4:
		a->sq_entries = chance(&w->r, 50) ? 0 : 0x80000000u;
		break;
	default:
		a->cq_entries = 0;
		break;
	}
	return 0;
}

/* An untracked fd attached to a pool queue, for a new ring. */
static struct tfd *ring_fd(struct worker *w)
{
	struct kwq_open_args o = {};
	struct tfd *t;
	int i;

	if (chance(&w->r, 20)) {
		t = pick_fd(w, 1);
	} else {
		t = new_fd(w);
		if (!t)
			return NULL;
		strcpy(o.name, names[rn(&w->r, NQ_POOL)]);
		if (own_ioctl(w, t->fd, KWQ_IOC_OPEN, &o, sizeof(o), 1) < 0 &&
		    errno == ENOENT) {
			struct kwq_create_args c = { .mode = 0666 };

			strcpy(c.name, o.name);
			own_ioctl(w, t->fd, KWQ_IOC_CREATE, &c, sizeof(c), 0);
		}
	}
	for (i = 0; t && i < WR_MAX; i++)
		if (w->wr[i].fd == t->fd)
			return NULL;
	return t;
}

/* Set up a ring on an untracked fd (sometimes with bad arguments) and map it. */
static void ring_new(struct worker *w, struct wring *wr)
{
	struct kwq_ring_setup_args a;
	struct tfd *t = ring_fd(w);
	int valid = ring_args(w, &a), ret;

	wr->scribbled = 0;
	if (!t)
		return;
	if (!valid || chance(&w->r, 10)) {
		/* fuzzed: maybe a ring this thread does not know about */
		struct_ioctl(w, t->fd, OP_RING_SETUP, KWQ_IOC_RING_SETUP, &a,
			     sizeof(a), 1, 10, -1);
		return;
	}
	if (own_ioctl(w, t->fd, KWQ_IOC_RING_SETUP, &a, sizeof(a),
		      OP_RING_SETUP) < 0)
		return;
	atomic_fetch_add(&sh->ring_n[RN_SETUP], 1);
	if (a.user_size != ((a.sqes_off + a.sq_entries * KWQ_SQE_SIZE + PAGE - 1) & ~(PAGE - 1)) ||
	    a.status_size != PAGE || a.sq_tail_off + 4 > a.sqes_off ||
	    a.cq_head_off + 4 > a.sqes_off ||
	    a.cqes_off + a.cq_entries * sizeof(struct kwq_cqe) > a.leases_off ||
	    a.leases_off + (uint64_t)a.lease_slots * KWQ_LEASE_SLOT_SIZE > a.kernel_size ||
	    a.sq_head_off + 4 > a.cqes_off || a.cq_tail_off + 4 > a.cqes_off ||
	    a.ring_flags_off + 4 > a.cqes_off) {
		atomic_fetch_add(&sh->bad_result, 1);
		note("RING_SETUP sq %u cq %u leases %u: layout user %llu kernel %llu leases at %u",
		     a.sq_entries, a.cq_entries, a.lease_slots,
		     (unsigned long long)a.user_size, (unsigned long long)a.kernel_size,
		     a.leases_off);
		return;
	}
	/* one ring per fd */
	{
		struct kwq_ring_setup_args b = a;

		/* (EIDRM: its queue was destroyed meanwhile) */
		if (own_ioctl(w, t->fd, KWQ_IOC_RING_SETUP, &b, sizeof(b),
			      OP_RING_SETUP) == 0 ||
		    (errno != EBUSY && errno != EIDRM)) {
			atomic_fetch_add(&sh->bad_result, 1);
			note("a second RING_SETUP on an fd: %s", strerror(errno));
		}
	}
	wr->fd = t->fd;
	wr->r.a = a;
	wr->r.tail = 0;
	wr->cq_head = 0;
	wr->clean = 1;
	wr->jumped = 0;
	memset(wr->gen, 0, sizeof(wr->gen));
	memset(wr->kind, 0, sizeof(wr->kind));
	ret = ring_map(wr);
	if (ret && ret != -EIDRM && ret != -ENOMEM) {
		ring_bad(w, wr, "mmap of a new ring: %s", strerror(-ret));
		return;
	}
	if (!ret)
		atomic_fetch_add(&sh->ring_n[RN_MAP], 1);
	/* the scribbler takes it from here (ring_scribbler()) */
	if (chance(&w->r, 50)) {
		wr->clean = 0;
		wr->scribbled = 1;
	}
}

/* A ring's end: unmapped and closed, closed first, or only unmapped. */
static void ring_drop(struct worker *w, struct wring *wr)
{
	int i;

	if (wr->fd >= 0 && chance(&w->r, 60)) {
		for (i = 0; i < w->nfds; i++)
			if (w->fds[i].fd == wr->fd) {
				close_fd(w, &w->fds[i]);	/* ring_fd_closing() */
				break;
			}
	}
	if (wr->fd < 0 || chance(&w->r, 20)) {
		ring_reap(w, wr);	/* after close: what was posted before */
		ring_unmap(wr);
	}
	if (wr->fd < 0)
		wr->scribbled = 0;
}

/* A forked child: no mapping of the parent's (VM_DONTCOPY), only calls. */
static void op_ring_child(struct worker *w)
{
	struct kwq_ring_setup_args a;
	struct kwq_ring_enter_args e = {};
	struct tfd *t = pick_fd(w, 1);

	if (!t)
		return;
	if (chance(&w->r, 50)) {
		ring_args(w, &a);
		struct_ioctl(w, t->fd, OP_RING_SETUP, KWQ_IOC_RING_SETUP, &a,
			     sizeof(a), 1, 10, -1);
		return;
	}
	e.flags = rn(&w->r, 4);
	e.get_max = 1 + rn(&w->r, 16);
	e.get_min = rn(&w->r, e.get_max + 1);
	e.timeout_ns = chance(&w->r, 50) ? -1 : (int64_t)rn(&w->r, 3000000);
	struct_ioctl(w, t->fd, OP_RING_ENTER, KWQ_IOC_RING_ENTER, &e,
		     sizeof(e), 1, 10, -1);
}

static void op_ring(struct worker *w, int child)
{
	struct wring *wr = &w->wr[rn(&w->r, WR_MAX)];
	uint32_t c = rn(&w->r, 100), i;

	if (child) {
		op_ring_child(w);
		return;
	}
	/* a live ring rather than a new one: setups cost ~20 ms under TCG */
	for (i = 0; i < WR_MAX && (wr->fd < 0 || !wr->r.u); i++)
		wr = &w->wr[(wr - w->wr + 1) % WR_MAX];
	if (wr->fd < 0) {
		if (wr->r.u || wr->r.k || wr->r.st)
			ring_drop(w, wr);
		else
			ring_new(w, wr);
		return;
	}
	if (!wr->r.u) {
		/* the queue went, or it was never mapped: start again */
		ring_drop(w, wr);
		return;
	}
	if (wr->r.st &&
	    __atomic_load_n(&((struct kwq_ring_status *)wr->r.st)->flags,
			    __ATOMIC_RELAXED) & ~(KWQ_STATUS_SHUTDOWN |
						  KWQ_STATUS_DESTROYED))
		ring_bad(w, wr, "status flags %#x",
			 ((struct kwq_ring_status *)wr->r.st)->flags);
	if (c < 55) {
		ring_submit(w, wr);
		if (chance(&w->r, 50))
			ring_enter(w, wr);
	} else if (c < 85) {
		ring_enter(w, wr);
	} else if (c < 90) {
		ring_bad_maps(w, wr);
	} else if (c < 98) {
		ring_reap(w, wr);
	} else {
		ring_drop(w, wr);
	}
	if (wr->r.k && chance(&w->r, 30) &&
	    kt_ring_ld(wr->r.k, wr->r.a.ring_flags_off) & KWQ_RING_F_BROKEN) {
		atomic_fetch_add(&sh->ring_n[RN_BROKEN], 1);
		ring_drop(w, wr);
	}
}

/*
 * The scribbler of a worker process: random bytes over the user region
 * of its threads' scribbled rings (slots mostly, sometimes sq_tail or
 * cq_head, sometimes a plausible record header), while they and every
 * getter of the queue drain them.
 */
struct scribbler {
	struct worker *ws;
	int nthreads;
	struct rng r;
};

static void *ring_scribbler(void *arg)
{
	struct scribbler *sc = arg;
	struct rng *r = &sc->r;
	unsigned long n = 0;

	while (!atomic_load(&sh->stop)) {
		struct wring *wr = &sc->ws[rn(r, (uint32_t)sc->nthreads)].wr[rn(r, WR_MAX)];
		int i, burst = 1 + (int)rn(r, 16);

		if (!wr->scribbled || pthread_mutex_trylock(&wr->lock)) {
			kt_sleep_ms(1);
			continue;
		}
		for (i = 0; wr->r.u && i < burst; i++) {
			size_t slots = wr->r.a.sq_entries * (size_t)KWQ_SQE_SIZE;
			unsigned char *p = wr->r.u + wr->r.a.sqes_off;
			uint32_t v, o = rn(r, (uint32_t)slots), len, k;
			struct kwq_sqe s = {};

			switch (rn(r, 24)) {
			case 0:	/* sq_tail: a little ahead, or anywhere */
				v = kt_ring_ld(wr->r.u, wr->r.a.sq_tail_off);
				v = chance(r, 70) ? v + rn(r, 4) : (uint32_t)rnd(r);
				ring_st(wr->r.u, wr->r.a.sq_tail_off, v);
				break;
			case 1:
				v = kt_ring_ld(wr->r.u, wr->r.a.cq_head_off);
				v = chance(r, 70) ? v + rn(r, 3) - 1 : (uint32_t)rnd(r);
				ring_st(wr->r.u, wr->r.a.cq_head_off, v);
				break;
			case 2: case 3: case 4: case 5: case 6:
				/* a record header that may well parse */
				s.op = (uint8_t)rn(r, 7);
				s.flags = chance(r, 70) ? 0 : (uint8_t)rnd(r);
				s.len = chance(r, 80) ? 1 + rn(r, KWQ_KEY_LEN_MAX) :
					(uint32_t)rnd(r);
				s.nslots = (uint16_t)(chance(r, 80) ?
					KWQ_SQE_SLOTS(s.len) : rn(r, 20));
				s.arg = chance(r, 50) ? 0 : rnd(r);
				s.lease_slot = chance(r, 80) ? 0 : rn(r, 300);
				memcpy(p + o / KWQ_SQE_SIZE * KWQ_SQE_SIZE, &s,
				       chance(r, 50) ? sizeof(s) : 16);
				break;
			default:
				len = 1 + rn(r, chance(r, 80) ? 16 : 256);
				for (k = 0; k < len; k++)
					p[(o + k) % slots] = (unsigned char)rnd(r);
				break;
			}
			n++;
		}
		pthread_mutex_unlock(&wr->lock);
		if (n >= 256) {
			atomic_fetch_add(&sh->ring_n[RN_SCRIBBLE], n);
			n = 0;
		}
		/* a burst every 0.1 ms or so: drains run in between */
		nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
	}
	atomic_fetch_add(&sh->ring_n[RN_SCRIBBLE], n);
	return NULL;
}

/* --- the corpus --- */

/* @v from @c's recording worker's memory into @w's; see materialise(). */
static uint64_t reloc(const struct worker *w, const struct call *c, uint64_t v,
		      int field)
{
	int r;

	for (r = 0; r < NREG; r++)
		if (v - c->base[r] < reg_size[r])
			return (uintptr_t)reg_base(w, r) + (v - c->base[r]);
	/* any other user address: the guard page (it was bad there too) */
	if (field && v >= 0x10000 && v < 1ULL << 47)
		return (uintptr_t)w->arena + ARENA + (v & 0xfff);
	return v;
}

/* No unbounded wait where nobody kills the caller (see op_raw()). */
static void nonblock(struct call *c, int child)
{
	size_t off;
	int64_t t;

	if (child || _IOC_TYPE(c->cmd) != KWQ_IOC_MAGIC)
		return;
	switch (_IOC_NR(c->cmd)) {
	case 0x05:
		off = offsetof(struct kwq_get_args, timeout_ns);
		break;
	case 0x0d:
		off = offsetof(struct kwq_done_get_args, get.timeout_ns);
		break;
	case 0x14:
		off = offsetof(struct kwq_ring_enter_args, timeout_ns);
		break;
	case 0x0b:
		if (c->arg_len >= 1)
			c->argb[0] &= ~KWQ_SHUTDOWN_DRAIN;
		return;
	default:
		return;
	}
	if (c->arg_len < off + 8)
		return;		/* zeroes past what was kept: no wait */
	memcpy(&t, c->argb + off, 8);
	if (t < 0 || t > 3000000)
		t = 3000000;
	memcpy(c->argb + off, &t, 8);
}

/*
 * Lay out call @c (recorded by any worker) in @w's memory: its pointers
 * relocated into @w's regions, the input at its pointer at 0, then the
 * argument (zero past what was kept). Returns the argument pointer.
 */
static void *materialise(struct worker *w, struct call *c, int child)
{
	uint64_t p = reloc(w, c, c->arg, 1), v;
	size_t off, room;

	for (off = 0; off + 8 <= c->arg_len; off += 8) {
		memcpy(&v, c->argb + off, 8);
		v = reloc(w, c, v, ptr_field(c->cmd, off));
		memcpy(c->argb + off, &v, 8);
	}
	nonblock(c, child);
	if (c->data_len && c->arg_len >= 8) {
		memcpy(&v, c->argb, 8);
		room = own_room(w, v, 1);
		memcpy((void *)(uintptr_t)v, c->data, room < c->data_len ? room : c->data_len);
	}
	room = own_room(w, p, 1);
	if (room) {
		room = room < _IOC_SIZE(c->cmd) ? room : _IOC_SIZE(c->cmd);
		memset((void *)(uintptr_t)p, 0, room);
		memcpy((void *)(uintptr_t)p, c->argb, room < c->arg_len ? room : c->arg_len);
	}
	return (void *)(uintptr_t)p;
}

static int corpus_pick(struct worker *w, struct call *c)
{
	int n = atomic_load(&sh->ncorpus), slot, tries;
	unsigned int g;

	if (n > CORPUS_MAX)
		n = CORPUS_MAX;
	for (tries = 0; n && tries < 4; tries++) {
		/* half the time one of the 32 newest: new coverage first */
		slot = chance(&w->r, 50) && n > 32 ?
		       atomic_load(&sh->recent[rn(&w->r, 32)]) : (int)rn(&w->r, (uint32_t)n);
		g = atomic_load(&sh->corpus_gen[slot]);
		if (g & 1)
			continue;
		memcpy(c, (void *)&sh->corpus[slot], sizeof(*c));
		if (atomic_load(&sh->corpus_gen[slot]) != g)
			continue;
		if (c->arg_len > ARG_CAP)
			c->arg_len = ARG_CAP;
		if (c->data_len > DATA_CAP)
			c->data_len = DATA_CAP;
		return 1;
	}
	return 0;
}

static const uint64_t interesting[] = {
	0, 1, 2, 7, 8, 63, 64, 255, 256, 257, 264, 1023, 1024, 1025, 1032,
	4095, 4096, 4097, 0x7fffffff,
	0x80000000, 0xffffffff, ~0ULL, 1ULL << 63, KWQ_PROCESSING_TIMEOUT_MIN,
};

/* 1-3 mutations of @c; pointers into the worker's memory stay as they are. */
static void corpus_mutate(struct worker *w, struct call *c)
{
	uint64_t keep[ARG_CAP / 8], v;
	int i, r, n = 1 + (int)rn(&w->r, 3);
	size_t off, size;

	for (off = 0; off + 8 <= c->arg_len; off += 8)
		memcpy(&keep[off / 8], c->argb + off, 8);
	for (i = 0; i < n; i++) {
		switch (rn(&w->r, 8)) {
		case 0:
		case 1:
			mutate(w, c->argb, c->arg_len, c->arg_len ? 100 : 0);
			break;
		case 2:
			if (c->arg_len >= 4) {
				uint32_t x = (uint32_t)interesting[rn(&w->r, sizeof(interesting) / 8)];

				memcpy(c->argb + rn(&w->r, c->arg_len / 4) * 4, &x, 4);
			}
			break;
		case 3:
			if (c->arg_len >= 8)
				memcpy(c->argb + rn(&w->r, c->arg_len / 8) * 8,
				       &interesting[rn(&w->r, sizeof(interesting) / 8)], 8);
			break;
		case 4:
		case 5:
			if (c->data_len)
				mutate(w, c->data, c->data_len, 100);
			break;
		case 6:
			size = _IOC_SIZE(c->cmd) + rn(&w->r, 17) - 8;
			if (size <= _IOC_SIZEMASK)
				c->cmd = _IOC(_IOC_DIR(c->cmd), _IOC_TYPE(c->cmd),
					      _IOC_NR(c->cmd), size);
			break;
		default:
			break;	/* the same call again, in a new state */
		}
	}
	for (off = 0; off + 8 <= c->arg_len; off += 8)
		for (r = 0; r < NREG; r++)
			if (keep[off / 8] - c->base[r] < reg_size[r]) {
				v = keep[off / 8];
				memcpy(c->argb + off, &v, 8);
			}
}

/* A corpus call, mutated, on an untracked fd. */
static void op_corpus(struct worker *w)
{
	struct call *c = &w->scratch;
	struct tfd *t = pick_fd(w, 1);
	void *p;

	if (!t || !corpus_pick(w, c))
		return;
	corpus_mutate(w, c);
	p = materialise(w, c, w->in_child);
	atomic_fetch_add(&sh->corpus_calls, 1);
	w->from_corpus = 1;
	do_ioctl(w, t->fd, c->cmd, p, c->op);
	w->from_corpus = 0;
}

/* --- reproducers --- */

static int seq_cmp(const void *a, const void *b)
{
	unsigned long x = atomic_load(&((const struct call *)a)->seq);
	unsigned long y = atomic_load(&((const struct call *)b)->seq);

	return x < y ? -1 : x > y;
}

static void hex(FILE *f, const unsigned char *p, size_t n)
{
	size_t i;

	if (!n)
		fputc('-', f);
	for (i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
}

/*
 * Write the last events of worker process @proc, all its threads merged
 * in call order, to repro_dir/repro-<pid>-p<proc>.txt (once per process).
 * Text, one line each:
 *   # ...                          comments: why, seed, kernel
 *   uid U                          the process ran as uid (and gid) U
 *   tracked NAME                   a queue made before the calls (mode 0666)
 *   thread T ARENA RO RECS KEYS    thread T's memory (hex addresses)
 *   open SEQ T CHILD FD FLAGS      FD = open("/dev/kwq", O_RDWR | FLAGS)
 *   close SEQ T CHILD FD
 *   fork SEQ T                     thread T forked a child (CHILD 1 below)
 *   kill SEQ T                     ... and SIGKILLed it
 *   call SEQ T CHILD FD OP CMD ARG ARGBYTES DATABYTES RET ERRNO
 * OP is the ops[] index (-1: raw), CMD and ARG hex, ARGBYTES the argument
 * at ARG as passed (at most ARG_CAP bytes, zeroes beyond), DATABYTES what
 * its pointer at offset 0 named (key records, a key; at most DATA_CAP),
 * both hex or "-". Pointers into a thread's memory are relocated on
 * replay; others (NULL, kernel, unmapped) are passed as they were.
 */
static void repro_save(int proc, const char *why)
{
	size_t n = (size_t)g_threads * RING, i, k = 0;
	struct call *ev;
	char path[256];
	FILE *f;
	int t;

	if (!rings || proc < 0 || proc >= 64)
		return;
	/* a forked child is SIGKILLed any time: its parent writes it */
	if (cur_w && cur_w->in_child) {
		atomic_store(&sh->repro_pending[proc], 1);
		return;
	}
	if (atomic_exchange(&sh->repro_saved[proc], 1))
		return;
	ev = malloc(n * sizeof(*ev));
	if (!ev)
		return;
	for (t = 0; t < g_threads; t++) {
		struct ring *r = &rings[proc * g_threads + t];

		for (i = 0; i < RING; i++) {
			unsigned long seq = atomic_load(&r->ev[i].seq);

			if (!seq)
				continue;	/* empty, or being written */
			memcpy(&ev[k], (void *)&r->ev[i], sizeof(*ev));
			if (atomic_load(&r->ev[i].seq) == seq && ev[k].ev)
				k++;
		}
	}
	qsort(ev, k, sizeof(*ev), seq_cmp);
	snprintf(path, sizeof(path), "%s/repro-%d-p%d.txt", repro_dir, (int)main_pid, proc);
	f = fopen(path, "w");
	if (!f) {
		free(ev);
		return;
	}
	fprintf(f, "# kwq fuzz reproducer: fuzz_test -r FILE replays it\n# why: %s\n", why);
	fprintf(f, "# seed %llu, process %d of %d threads, %zu events\n", g_seed, proc,
		g_threads, k);
	fprintf(f, "uid %d\n", proc % 2 ? 1000 + proc : 0);
	for (t = 0; t < NQ_TRACKED; t++)
		fprintf(f, "tracked %s\n", names[NQ_POOL + t]);
	for (t = 0; t < g_threads; t++) {
		int r;

		for (i = 0; i < k && ev[i].thread != t; i++)
			;
		if (i == k)
			continue;
		fprintf(f, "thread %d", t);
		for (r = 0; r < NREG; r++)
			fprintf(f, " %#llx", (unsigned long long)ev[i].base[r]);
		fputc('\n', f);
	}
	for (i = 0; i < k; i++) {
		const struct call *c = &ev[i];
		unsigned long long seq = atomic_load(&c->seq);

		switch (c->ev) {
		case EV_OPEN:
			fprintf(f, "open %llu %d %d %d %#x\n", seq, c->thread, c->child,
				c->fd, c->flags);
			break;
		case EV_CLOSE:
			fprintf(f, "close %llu %d %d %d\n", seq, c->thread, c->child, c->fd);
			break;
		case EV_FORK:
		case EV_KILL:
			fprintf(f, "%s %llu %d\n", c->ev == EV_FORK ? "fork" : "kill", seq,
				c->thread);
			break;
		default:
			fprintf(f, "call %llu %d %d %d %d %#llx %#llx ", seq, c->thread,
				c->child, c->fd, c->op, (unsigned long long)c->cmd,
				(unsigned long long)c->arg);
			hex(f, c->argb, c->arg_len);
			fputc(' ', f);
			hex(f, c->data, c->data_len);
			fprintf(f, " %lld %s\n", (long long)c->ret, kt_ename(c->err));
			break;
		}
	}
	fclose(f);
	free(ev);
}

static void child_run(struct worker *w);

/* Fork a child that works on inherited fds; kill it at a random time. */
static void op_fork(struct worker *w)
{
	pid_t pid;
	int st;
	int64_t t0 = kt_now();
	struct timespec c0, c1;
	struct rusage ru;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	ev_simple(w, EV_FORK, -1, 0);
	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		w->in_child = 1;
		child_run(w);
		_exit(0);
	}
	atomic_fetch_add(&sh->forks, 1);
	/* the child may block (drain, get forever): it always dies */
	kt_sleep_ms(rn(&w->r, 40));
	kill(pid, SIGKILL);
	while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR)
		;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	w->fork_cpu_ns += (unsigned long)((c1.tv_sec - c0.tv_sec) * KT_SEC + c1.tv_nsec - c0.tv_nsec +
		(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * KT_SEC +
		(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000);
	ev_simple(w, EV_KILL, -1, 0);
	if (atomic_exchange(&sh->repro_pending[w->proc], 0))
		repro_save(w->proc, "an invariant failed in a forked child (see the notes)");
	w->op_n[NOPS + 1]++;
	w->op_ns[NOPS + 1] += (unsigned long)(kt_now() - t0);
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		atomic_fetch_add(&sh->kills, 1);
	else if (WIFSIGNALED(st)) {
		atomic_fetch_add(&sh->bad_result, 1);
		note("forked child died of signal %d", WTERMSIG(st));
	}
}

static void step(struct worker *w, int child)
{
	struct tfd *t;
	uint32_t c = rn(&w->r, 100);

	/* coverage found it: a fifth of the steps mutate from the corpus */
	if (w->cover && atomic_load_explicit(&sh->ncorpus, memory_order_relaxed) &&
	    chance(&w->r, 20)) {
		op_corpus(w);
		return;
	}
	if (c < 4)
		new_fd(w);
	else if (c < 7) {
		if ((t = pick_fd(w, !child && chance(&w->r, 70))) && (!t->tracked || !child))
			close_fd(w, t);
	} else if (c < 12)
		op_create(w);
	else if (c < 17)
		op_open(w);
	else if (c < 19)
		op_destroy(w);
	else if (c < 21)
		op_list(w);
	else if (c < 36)
		op_keys(w, 4);
	else if (c < 46)
		op_get(w);
	else if (c < 50)
		op_done_get(w);
	else if (c < 60)
		op_keys(w, 6);
	else if (c < 63)
		op_keys(w, 7);
	else if (c < 66)
		op_keys(w, 8);
	else if (c < 67)
		op_num_requeues(w);
	else if (c < 68)
		op_touch(w);
	else if (c < 71)
		op_len(w);
	else if (c < 72 && chance(&w->r, 50))
		op_stats(w);
	else if (c < 72)
		op_info(w);
	else if (c < 73)
		op_inspect(w);
	else if (c < 74)
		op_dead(w, chance(&w->r, 50) ? 15 : 16);
	else if (c < 75)
		op_shutdown(w, child);
	else if (c < 80)
		op_raw(w);
	else if (c < 87)
		op_ring(w, child);
	else if (c < 98) {
		if (!child)
			op_done_held(w, 1);
	} else if (!child && chance(&w->r, 6)) {
		/*
		 * About 0.1 % of the steps: a fork, its child and its exit
		 * cost about 155 ms of CPU on the debug kernel under TCG (at
		 * 1.2 % of the steps they took half the VM's CPU).
		 */
		op_fork(w);
	}
}

static void child_run(struct worker *w)
{
	int i, n = 5 + (int)rn(&w->r, 60);

	w->nheld = 0;	/* the parent's bookkeeping, not ours */
	w->pend = 0;	/* the parent counts its own */
	w->ok = 0;
	w->core = 0;
	for (i = 0; i < n; i++)
		step(w, 1);
	flush_counts(w);
}

static void attach_tracked(struct worker *w)
{
	int i;

	for (i = 0; i < NQ_TRACKED; i++) {
		struct tfd *t = new_fd(w);
		struct kwq_open_args a = {};
		long ret;

		if (!t)
			continue;
		strcpy(a.name, names[NQ_POOL + i]);
		w->no_corpus = 1;	/* tracked: never a corpus call */
		ret = own_ioctl(w, t->fd, KWQ_IOC_OPEN, &a, sizeof(a), 1);
		w->no_corpus = 0;
		if (ret < 0) {
			note("open tracked queue %s: %s", names[NQ_POOL + i],
			     strerror(errno));
			atomic_fetch_add(&sh->bad_result, 1);
			close_fd(w, t);
			continue;
		}
		t->tracked = 1;
		t->tq = i;
	}
}

/* The worker's memory (its regions), as fuzzing and replaying need it. */
static void *scratch_map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	/*
	 * Scratch memory: a forked child gets it zeroed instead of shared
	 * copy-on-write, so the parent's next writes take no COW fault (a
	 * fork cost several times more in page faults than in fork() under
	 * TCG and the debug kernel).
	 */
	if (p != MAP_FAILED)
		madvise(p, size, MADV_WIPEONFORK);
	return p;
}

static int worker_mem(struct worker *w)
{
	w->arena = scratch_map(ARENA + 4096);
	w->ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	w->recs = scratch_map(RECBUF);
	w->keys = scratch_map(KEYBUF);
	if (w->arena == MAP_FAILED || w->ro == MAP_FAILED || w->recs == MAP_FAILED ||
	    w->keys == MAP_FAILED)
		return -1;
	mprotect(w->arena + ARENA, 4096, PROT_NONE);
	memset(w->ro, 0, 4096);
	mprotect(w->ro, 4096, PROT_READ);
	/*
	 * Below mmap_min_addr: never mapped. (A page mmapped and unmapped
	 * here would be reused by a later mapping, another thread's stack
	 * say, and the kernel would write into it.)
	 */
	w->unmapped = 0x1000 + (uintptr_t)rn(&w->r, 8) * 4096 + rn(&w->r, 4096);
	return 0;
}

/* This thread's kcov trace of its own calls (Documentation/dev-tools/kcov.rst). */
static void kcov_start(struct worker *w)
{
	int fd = open("/sys/kernel/debug/kcov", O_RDWR | O_CLOEXEC);
	void *cover;

	if (fd < 0)
		return;
	if (ioctl(fd, KCOV_INIT_TRACE, COVER_SIZE) < 0)
		goto fail;
	cover = mmap(NULL, COVER_SIZE * sizeof(uint64_t), PROT_READ | PROT_WRITE,
		     MAP_SHARED, fd, 0);
	if (cover == MAP_FAILED)
		goto fail;
	if (ioctl(fd, KCOV_ENABLE, KCOV_TRACE_PC) < 0) {
		munmap(cover, COVER_SIZE * sizeof(uint64_t));
		goto fail;
	}
	w->cover = cover;	/* the fd stays open while the thread lives */
	atomic_fetch_add(&sh->kcov_threads, 1);
	return;
fail:
	atomic_fetch_add(&sh->kcov_failed, 1);
	close(fd);
}

static void *thread_main(void *arg)
{
	struct worker *w = arg;
	unsigned long n = 0;
	int i;

	cur_w = w;
	w->ring = &rings[w->proc * g_threads + w->thread];
	if (worker_mem(w) < 0)
		return NULL;
	kcov_start(w);

	attach_tracked(w);
	while (!atomic_load(&sh->stop)) {
		step(w, 0);
		if (++n % 64 == 0 && w->nfds < 2)
			attach_tracked(w);
	}
	/*
	 * Give back what we hold: done the tracked keys (detached ones need
	 * an fd on their queue: attach fresh ones), close everything.
	 */
	for (i = 0; i < WR_MAX; i++) {
		w->wr[i].scribbled = 0;
		ring_unmap(&w->wr[i]);
	}
	for (i = w->nfds - 1; i >= 0; i--)
		if (!w->fds[i].tracked)
			close_fd(w, &w->fds[i]);
	attach_tracked(w);
	while (w->nheld) {
		int before = w->nheld;

		op_done_held(w, 0);
		if (w->nheld == before)
			break;
	}
	for (i = w->nfds - 1; i >= 0; i--)
		close_fd(w, &w->fds[i]);
	flush_counts(w);
	for (i = 0; i < 32; i++) {
		atomic_fetch_add(&sh->op_n[i], w->op_n[i]);
		atomic_fetch_add(&sh->op_ns[i], w->op_ns[i]);
	}
	atomic_fetch_add(&sh->fork_cpu_ns, w->fork_cpu_ns);
	return NULL;
}

static int worker_proc(int proc, int nthreads)
{
	pthread_t th[16], scribbler;
	struct worker *ws = calloc((size_t)nthreads, sizeof(*ws));
	struct scribbler sc = { .ws = ws, .nthreads = nthreads };
	int i, j;

	if (!ws)
		return 1;
	sc.r.s = (g_seed ^ 0x5c81bb1e5ULL ^ (uint64_t)(proc + 1) << 40) | 1;
	for (i = 0; i < nthreads; i++)
		for (j = 0; j < WR_MAX; j++) {
			pthread_mutex_init(&ws[i].wr[j].lock, NULL);
			ws[i].wr[j].fd = -1;
		}
	if (proc % 2) {
		/* unprivileged: permissions, per-user limits */
		if (setgid(1000 + proc) < 0 || setuid(1000 + proc) < 0)
			return 1;
	}
	for (i = 0; i < nthreads; i++) {
		ws[i].proc = proc;
		ws[i].thread = i;
		ws[i].r.s = (g_seed ^ ((uint64_t)(proc + 1) << 32) ^
			     (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ULL) | 1;
		if (pthread_create(&th[i], NULL, thread_main, &ws[i]))
			return 1;
	}
	if (pthread_create(&scribbler, NULL, ring_scribbler, &sc))
		return 1;
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	pthread_join(scribbler, NULL);
	return 0;
}

/* Drain tracked queue @i: each key once, nothing processing after. */
static int drain_tracked(int i, char *why, size_t size)
{
	static unsigned char buf[KWQ_REC_SIZE_MAX * 64];
	static unsigned char seen[4096];
	struct kwq_stats_args st;
	int fd = kt_attach(names[NQ_POOL + i]);
	unsigned int total = 0, dup = 0, other = 0;
	size_t off, used;
	const void *key;
	size_t len;
	int prio, ok;

	memset(seen, 0, sizeof(seen));
	/* waiting keys (add --after) become ready within 5 ms; rate-limited
	 * ones may wait longer: shut down drops those. */
	kt_sleep_ms(20);
	kwq_shutdown(fd, 0);
	while (kwq_get_batch(fd, buf, sizeof(buf), 64, 0, 0, &used) > 0) {
		struct kwq_recbuf rb = {};

		off = 0;
		while (kwq_rec_next(buf, used, &off, &key, &len, &prio) > 0) {
			int kid = tracked_kid(key, len);

			if (kid < 0)
				other++;
			else if (seen[kid]++)
				dup++;
			kwq_recbuf_push(&rb, key, len, 0);
			total++;
		}
		kwq_done_batch(fd, &rb, NULL);
		kwq_recbuf_free(&rb);
	}
	ok = kwq_stats(fd, &st) == 0 && st.len == 0 && st.processing == 0 && !dup;
	snprintf(why, size, "queue %s: drained %u keys (%u duplicates, %u not k<id>), then len %llu processing %llu waiting %llu",
		 names[NQ_POOL + i], total, dup, other, (unsigned long long)st.len,
		 (unsigned long long)st.processing, (unsigned long long)st.waiting);
	kwq_destroy(fd, names[NQ_POOL + i]);
	close(fd);
	return ok;
}

/*
 * As uid @uid: create queues (each on its own fd, kept) until refused;
 * exit 0 if exactly @max were created and EDQUOT refused the next.
 */
static int count_child(uid_t uid, long max)
{
	char name[KWQ_NAME_LEN];
	int fds[1025], n, e = 0;

	if (setgid(uid) < 0 || setuid(uid) < 0)
		return 2;
	for (n = 0; n <= max; n++) {
		fds[n] = kt_dev();
		snprintf(name, sizeof(name), "fzc%d-%d", (int)getpid(), n);
		if (kwq_create(fds[n], name, NULL) < 0) {
			e = errno;
			close(fds[n]);
			break;
		}
	}
	printf("    # uid %d: created %d of %ld, then %s\n", (int)uid, n, max,
	       kt_ename(e));
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "fzc%d-%d", (int)getpid(), i);
		kwq_destroy(fds[i], name);
		close(fds[i]);
	}
	return n == max && e == EDQUOT ? 0 : 1;
}

/*
 * Every unprivileged worker's uid has its whole queue count again, once
 * the queues the workers made under mutated names (a CREATE from the
 * corpus or op_raw) are destroyed too: root destroys every queue left.
 */
static int counts_released(int procs)
{
	long max = kt_read_num("/sys/module/kwq/parameters/max_queues_per_user", NULL);
	static char left[256][KWQ_NAME_LEN];
	int proc, ok = 1, fd = kt_dev(), n, i;
	pid_t pid;

	n = kwq_list(fd, left, 256);
	for (i = 0; i < n && i < 256; i++)
		kwq_destroy(fd, left[i]);
	close(fd);
	printf("    # %d queues left under other names, destroyed\n", n);

	if (max < 1 || max > 1024) {
		printf("    # max_queues_per_user %ld: not checked\n", max);
		return 1;
	}
	for (proc = 1; proc < procs; proc += 2) {
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			_exit(count_child(1000 + proc, max));
		ok &= pid > 0 && kt_wait(pid) == 0;
	}
	return ok;
}

/* The VM's CPU time so far, in USER_HZ ticks: busy, idle, user. */
static void cpu_ticks(unsigned long long t[3])
{
	unsigned long long v[8] = {};
	FILE *f = fopen("/proc/stat", "r");

	t[0] = 0;
	t[1] = 0;
	t[2] = 0;
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
		t[0] = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
		t[1] = v[3] + v[4];
		t[2] = v[0] + v[1];
	}
	fclose(f);
}

static unsigned long long cpu0[3];

/* What the run did, beyond the call count: coverage, shares, where time went. */
static void report_figures(void)
{
	unsigned long long cpu1[3], all;
	unsigned long forks = atomic_load(&sh->forks);

	unsigned long calls = atomic_load(&sh->calls), total = 0, ns, n;
	int i;

	if (!calls)
		return;
	cpu_ticks(cpu1);
	all = cpu1[0] + cpu1[1] - cpu0[0] - cpu0[1];
	if (all)
		printf("    # VM CPU busy %.0f%% (userspace %.0f%%, idle %.0f%%); a fork and its child took %.1f ms CPU on average\n",
		       100.0 * (double)(cpu1[0] - cpu0[0]) / (double)all,
		       100.0 * (double)(cpu1[2] - cpu0[2]) / (double)all,
		       100.0 * (double)(cpu1[1] - cpu0[1]) / (double)all,
		       forks ? (double)atomic_load(&sh->fork_cpu_ns) / (double)forks / 1e6 : 0.0);
	printf("    # calls succeeded %.1f%%, reached the core (past argument checks) %.1f%%\n",
	       100.0 * (double)atomic_load(&sh->calls_ok) / (double)calls,
	       100.0 * (double)atomic_load(&sh->calls_core) / (double)calls);
	if (atomic_load(&sh->kcov_threads) && !atomic_load(&sh->pcs))
		printf("    # kcov pcs 0: no kwq PC traced (kwq.ko not built with KWQ_KCOV=1): no coverage guidance\n");
	else if (atomic_load(&sh->kcov_threads))
		printf("    # kcov pcs %lu, edges %lu; corpus %lu entries saved for new coverage (%lu of them found by corpus mutations), %lu corpus calls\n",
		       atomic_load(&sh->pcs), atomic_load(&sh->edges),
		       atomic_load(&sh->corpus_new), atomic_load(&sh->corpus_new_from_corpus),
		       atomic_load(&sh->corpus_calls));
	else
		printf("    # kcov: /sys/kernel/debug/kcov %s: no coverage guidance (random and structure-aware inputs only)\n",
		       access("/sys/kernel/debug/kcov", F_OK) ? "missing" : "unusable");
	printf("    # rings:");
	for (i = 0; i < RN_MAX; i++)
		printf(" %s %lu%s", rn_name[i], atomic_load(&sh->ring_n[i]),
		       i == RN_MAX - 1 ? "\n" : ",");
	for (i = 0; i < 32; i++)
		total += atomic_load(&sh->op_ns[i]);
	if (!total)
		return;
	printf("    # thread time in calls by op (ms, share, avg us):");
	for (i = 0; i < NOPS + 2; i++) {
		ns = atomic_load(&sh->op_ns[i]);
		n = atomic_load(&sh->op_n[i]);
		if (n && ns * 50 >= total)	/* 2 % or more */
			printf(" %s %lu %.0f%% %.0f;", i < NOPS ? ops[i].name :
			       i == NOPS ? "RAW" : "FORK", ns / 1000000,
			       100.0 * (double)ns / (double)total, (double)ns / (double)n / 1e3);
	}
	printf("\n");
}

/* --- replay (fuzz_test -r FILE) --- */

static void replay_tick(int sig)
{
	(void)sig;	/* only to end a blocking call with EINTR */
}

static size_t unhex(const char *h, unsigned char *out, size_t max)
{
	size_t n = 0;
	unsigned int b;

	if (!strcmp(h, "-"))
		return 0;
	while (n < max && h[0] && h[1] && sscanf(h, "%2x", &b) == 1) {
		out[n++] = (unsigned char)b;
		h += 2;
	}
	return n;
}

/* Record fd @fd of a replayed event: its fd now, opened fresh if unknown. */
static int replay_fd(int *map, int *cmap, int child, int fd)
{
	if (fd < 0 || fd >= 1024)
		return -1;
	if (child && cmap[fd] >= 0)
		return cmap[fd];
	if (map[fd] < 0) {
		map[fd] = open("/dev/kwq", O_RDWR | O_CLOEXEC);
		printf("    # fd %d was opened before the first event kept: a fresh fd\n", fd);
	}
	return map[fd];
}

static void replay_call(struct worker *w, char *rest, uint64_t (*bases)[NREG],
			int *map, int *cmap, unsigned long *ncalls,
			unsigned long *same)
{
	struct call *c = &w->scratch;
	char *tok[12], *save = NULL;
	struct itimerval it = { .it_value = { 1, 0 } }, off = {};
	int i, fd, t;
	long ret;
	int e;

	for (i = 0; i < 12 && (tok[i] = strtok_r(i ? NULL : rest, " \n", &save)); i++)
		;
	if (i < 11) {
		printf("    # malformed call line\n");
		return;
	}
	memset(c, 0, sizeof(*c));
	t = atoi(tok[1]);
	if (t < 0 || t >= 64)
		return;
	memcpy(c->base, bases[t], sizeof(c->base));
	c->child = (uint8_t)atoi(tok[2]);
	c->op = (int8_t)atoi(tok[4]);
	if (c->op >= NOPS)
		c->op = -1;
	c->cmd = strtoull(tok[5], NULL, 16);
	c->arg = strtoull(tok[6], NULL, 16);
	c->arg_len = (uint32_t)unhex(tok[7], c->argb, ARG_CAP);
	c->data_len = (uint32_t)unhex(tok[8], c->data, DATA_CAP);
	fd = replay_fd(map, cmap, c->child, atoi(tok[3]));
	setitimer(ITIMER_REAL, &it, NULL);
	ret = do_ioctl(w, fd, c->cmd, materialise(w, c, 0), c->op);
	e = errno;
	setitimer(ITIMER_REAL, &off, NULL);
	(*ncalls)++;
	if (ret == strtoll(tok[9], NULL, 10) && !strcmp(ret < 0 ? kt_ename(e) : "0", tok[10]))
		(*same)++;
	printf("    # %s t%d%s %s cmd %#llx: %ld%s%s (recorded %s%s%s)\n", tok[0], t,
	       c->child ? " child" : "", c->op >= 0 ? ops[c->op].name : "RAW",
	       (unsigned long long)c->cmd, ret, ret < 0 ? " " : "", ret < 0 ? kt_ename(e) : "",
	       tok[9], strcmp(tok[10], "0") ? " " : "", strcmp(tok[10], "0") ? tok[10] : "");
}

/* Replay reproducer @file (format at repro_save()) in one thread. */
static int replay(const char *file)
{
	static int map[1024], cmap[1024];
	static uint64_t bases[64][NREG];
	static struct worker w;
	struct sigaction sa = { .sa_handler = replay_tick };
	unsigned long events = 0, ncalls = 0, same = 0;
	char *line = NULL, kind[16];
	int uid = 0, dropped = 0, i, a, b, fd;
	unsigned long long seq;
	unsigned int flags;
	size_t cap = 0;
	FILE *f;

	kt_setup("kwq_fuzz_replay", 3, 900);
	/* SIGALRM ends a call that blocks (EINTR); alarm() is then unused */
	alarm(0);
	sigaction(SIGALRM, &sa, NULL);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	w.ring = calloc(1, sizeof(*w.ring));
	f = fopen(file, "r");
	if (sh == MAP_FAILED || !w.ring || !f || worker_mem(&w) < 0) {
		printf("    # %s: %s\n", file, strerror(errno));
		return 1;
	}
	cur_w = &w;
	printf("    # replaying %s\n", file);
	for (i = 0; i < 1024; i++)
		map[i] = cmap[i] = -1;
	while (getline(&line, &cap, f) > 0) {
		char *rest;

		if (line[0] == '#' || sscanf(line, "%15s", kind) != 1)
			continue;
		rest = line + strlen(kind) + 1;
		if (!strcmp(kind, "uid")) {
			uid = atoi(rest);
			continue;
		}
		if (!strcmp(kind, "tracked")) {
			struct kwq_queue_opts o = { .mode = 0666 };

			rest[strcspn(rest, " \n")] = 0;
			fd = kt_dev();
			if (kwq_create(fd, rest, &o) < 0)
				printf("    # create %s: %s\n", rest, strerror(errno));
			continue;
		}
		if (!strcmp(kind, "thread")) {
			unsigned long long r[NREG];

			if (sscanf(rest, "%d %llx %llx %llx %llx", &a, &r[0], &r[1], &r[2],
				   &r[3]) == 5 && a >= 0 && a < 64)
				for (i = 0; i < NREG; i++)
					bases[a][i] = r[i];
			continue;
		}
		if (!dropped && uid) {
			/* as the worker process was (see worker_proc()) */
			if (setgid((gid_t)uid) < 0 || setuid((uid_t)uid) < 0)
				printf("    # setuid %d: %s\n", uid, strerror(errno));
		}
		dropped = 1;
		events++;
		if (!strcmp(kind, "call")) {
			replay_call(&w, rest, bases, map, cmap, &ncalls, &same);
		} else if (!strcmp(kind, "open") &&
			   sscanf(rest, "%llu %d %d %d %x", &seq, &a, &b, &fd, &flags) == 5 &&
			   fd >= 0 && fd < 1024) {
			int *m = b ? cmap : map;

			if (m[fd] >= 0)
				close(m[fd]);
			m[fd] = open("/dev/kwq", O_RDWR | O_CLOEXEC | (int)flags);
			printf("    # %llu t%d%s open: fd %d\n", seq, a, b ? " child" : "", fd);
		} else if (!strcmp(kind, "close") &&
			   sscanf(rest, "%llu %d %d %d", &seq, &a, &b, &fd) == 4 &&
			   fd >= 0 && fd < 1024) {
			/* a child's close of an inherited fd leaves the parent's */
			int *m = b ? cmap : map;

			if (m[fd] >= 0)
				close(m[fd]);
			m[fd] = -1;
			printf("    # %llu t%d%s close: fd %d\n", seq, a, b ? " child" : "", fd);
		} else if (!strcmp(kind, "fork") || !strcmp(kind, "kill")) {
			/* the child's own fds end with it */
			for (i = 0; i < 1024; i++)
				if (cmap[i] >= 0) {
					close(cmap[i]);
					cmap[i] = -1;
				}
			printf("    # %s", line);
		}
	}
	fclose(f);
	printf("    # replayed %lu events, %lu calls; %lu gave the recorded result\n",
	       events, ncalls, same);
	ktap_check(events > 0, "reproducer_read", "no event in %s", file);
	ktap_check(ncalls > 0, "calls_replayed", "no call in %s", file);
	ktap_check(!atomic_load(&sh->bad_errno), "errnos_in_documented_set",
		   "%lu calls failed with an undocumented errno", atomic_load(&sh->bad_errno));
	return ktap_end();
}

int main(int argc, char **argv)
{
	int secs = 25, procs = 3, threads = 3, opt, i, bad_exit = 0;
	pid_t pids[64];
	int tracked_fd[NQ_TRACKED];
	int64_t t0, t1;
	double el;
	char why[256];

	g_seed = (unsigned long long)kt_now() ^ (unsigned long long)getpid() << 20;
	while ((opt = getopt(argc, argv, "s:t:p:j:o:r:v")) != -1) {
		switch (opt) {
		case 's':
			g_seed = strtoull(optarg, NULL, 0);
			break;
		case 't':
			secs = atoi(optarg);
			break;
		case 'p':
			procs = atoi(optarg);
			break;
		case 'j':
			threads = atoi(optarg);
			break;
		case 'o':
			repro_dir = optarg;
			break;
		case 'r':
			return replay(optarg);
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-s SEED] [-t SECONDS] [-p PROCS] [-j THREADS] [-o DIR] | -r FILE\n",
				argv[0]);
			return 2;
		}
	}
	if (procs < 1 || procs > 64 || threads < 1 || threads > 16 || secs < 1)
		return 2;
	kt_setup("kwq_fuzz", 7, (unsigned int)secs + 120);
	printf("    # seed %llu (rerun: fuzz_test -s %llu -t %d -p %d -j %d)\n",
	       g_seed, g_seed, secs, procs, threads);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	memset(sh, 0, sizeof(*sh));
	g_threads = threads;
	rings = mmap(NULL, sizeof(*rings) * (size_t)(procs * threads), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rings == MAP_FAILED)
		return 1;
	main_pid = getpid();
	/* reproducers: the unprivileged workers write them too */
	mkdir(repro_dir, 0777);
	chmod(repro_dir, 01777);
	for (i = 0; i < NQ_POOL; i++)
		snprintf(names[i], KWQ_NAME_LEN, "fz%d-%d", (int)getpid(), i);
	for (i = 0; i < NQ_TRACKED; i++) {
		struct kwq_queue_opts o = { .mode = 0666 };

		snprintf(names[NQ_POOL + i], KWQ_NAME_LEN, "fzt%d-%d", (int)getpid(), i);
		tracked_fd[i] = kt_dev();
		if (kwq_create(tracked_fd[i], names[NQ_POOL + i], &o) < 0) {
			printf("    # create %s: %s\n", names[NQ_POOL + i], strerror(errno));
			return 1;
		}
	}

	t0 = kt_now();
	cpu_ticks(cpu0);
	for (i = 0; i < procs; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(worker_proc(i, threads));
	}
	for (i = 0; i < secs; i += 60) {
		/* progress on the console: a run cut short still tells */
		FILE *k = fopen("/dev/kmsg", "w");

		kt_sleep_ms((secs - i < 60 ? secs - i : 60) * 1000L);
		if (k) {
			fprintf(k, "kwq-fuzz: %d s, %lu calls, %lu forks\n",
				i + (secs - i < 60 ? secs - i : 60), atomic_load(&sh->calls),
				atomic_load(&sh->forks));
			fclose(k);
		}
	}
	atomic_store(&sh->stop, 1);
	for (i = 0; i < procs; i++) {
		int st = kt_wait(pids[i]);

		if (st) {
			bad_exit++;
			note("worker %d: exit status %d", i, st);
			repro_save(i, "the worker process died or failed");
		}
	}
	t1 = kt_now();
	el = (double)(t1 - t0) / 1e9;

	printf("    # calls %lu in %.1f s: %.0f calls/s; forks %lu, SIGKILLs %lu\n",
	       atomic_load(&sh->calls), el, (double)atomic_load(&sh->calls) / el,
	       atomic_load(&sh->forks), atomic_load(&sh->kills));
	report_figures();
	for (i = 0; i < atomic_load(&sh->nmsg) && i < 8; i++)
		printf("    # %s\n", sh->msg[i]);
	ktap_check(atomic_load(&sh->calls) > 0, "made_calls", "no call made");
	ktap_check(!bad_exit, "workers_exited_cleanly", "%d workers failed", bad_exit);
	ktap_check(!atomic_load(&sh->bad_errno), "errnos_in_documented_set",
		   "%lu calls failed with an undocumented errno", atomic_load(&sh->bad_errno));
	ktap_check(!atomic_load(&sh->bad_result), "results_well_formed",
		   "%lu malformed results", atomic_load(&sh->bad_result));
	ktap_check(!atomic_load(&sh->double_handout), "no_key_handed_out_twice",
		   "%lu double handouts", atomic_load(&sh->double_handout));
	{
		int ok = 1;

		for (i = 0; i < NQ_TRACKED && ok; i++) {
			ok = drain_tracked(i, why, sizeof(why));
			printf("    # %s\n", why);
		}
		for (i = 0; i < procs && !ok; i++)
			repro_save(i, why);
		ktap_check(ok, "tracked_queues_drain_clean", "%s", why);
	}
	/* Leave nothing behind: destroy the pool (root may destroy any). */
	for (i = 0; i < NQ_POOL; i++) {
		int fd = kt_dev();

		kwq_destroy(fd, names[i]);
		close(fd);
	}
	for (i = 0; i < NQ_TRACKED; i++)
		close(tracked_fd[i]);
	ktap_check(counts_released(procs), "queue_counts_released",
		   "a worker uid's queue count did not come back to zero");
	return ktap_end();
}
