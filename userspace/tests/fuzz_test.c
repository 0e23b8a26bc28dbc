// SPDX-License-Identifier: GPL-2.0
/*
 * kwq ioctl fuzzer: seeded, reproducible (per thread), bounded in time.
 *
 *   fuzz_test [-s SEED] [-t SECONDS] [-p PROCS] [-j THREADS] [-v]
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
 *    once, nothing stays processing.
 * Prints KTAP (suite kwq_fuzz) with the seed, calls made and calls/s.
 */
#include "kwqtest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

#define NQ_POOL		6	/* fuzzed queues: created, destroyed, shut down */
#define NQ_TRACKED	2	/* tracked queues: never destroyed or shut down */
#define NKEYS		256	/* tracked keyspace per queue */
#define MAXFD		6
#define HELD_MAX	512
#define ARENA		(256 * 1024)
#define RECBUF		(KWQ_BATCH_MAX * KWQ_REC_SIZE_MAX + 4096)

/* Shared between all processes (MAP_SHARED). */
struct shared {
	atomic_ulong calls;
	atomic_ulong bad_errno;
	atomic_ulong bad_result;
	atomic_ulong double_handout;
	atomic_ulong forks, kills;
	atomic_int held[NQ_TRACKED][NKEYS];
	atomic_int nmsg;
	char msg[8][160];
	atomic_int stop;
};

static struct shared *sh;
static char names[NQ_POOL + NQ_TRACKED][KWQ_NAME_LEN];
static unsigned long long g_seed;
static int verbose;

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

static void note(const char *fmt, ...)
{
	int i = atomic_fetch_add(&sh->nmsg, 1);
	va_list ap;

	if (i >= 8)
		return;
	va_start(ap, fmt);
	vsnprintf(sh->msg[i], sizeof(sh->msg[i]), fmt, ap);
	va_end(ap);
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
	{ "GET", 0x05, E_Q | B(EAGAIN) | B(ETIMEDOUT) | B(ESHUTDOWN) | B(EINTR) },
	{ "DONE", 0x06, E_Q | B(ENOENT) | B(EPERM) | B(ENOMEM) },
	{ "FORGET", 0x07, E_Q | B(ENOMEM) },
	{ "REMOVE", 0x08, E_Q | B(ENOENT) | B(EBUSY) | B(ENOMEM) },
	{ "NUM_REQUEUES", 0x09, E_Q },
	{ "LEN", 0x0a, E_Q },
	{ "SHUTDOWN", 0x0b, E_Q | B(EINTR) | B(ECANCELED) },
	{ "STATS", 0x0c, E_Q },
	{ "DONE_GET", 0x0d, E_Q | B(ENOENT) | B(EPERM) | B(ENOMEM) | B(EAGAIN) |
	  B(ETIMEDOUT) | B(ESHUTDOWN) | B(EINTR) },
	{ "REVIVE", 0x10, E_Q | B(ENOENT) | B(ENOSPC) | B(ESHUTDOWN) },
	{ "PURGE", 0x11, E_Q | B(ENOENT) },
	{ "INSPECT", 0x12, E_Q | B(ENOENT) | B(ESTALE) | B(EAGAIN) | B(ENOMEM) },
};

#define NOPS	((int)(sizeof(ops) / sizeof(ops[0])))

/* Any errno a kwq ioctl may return at all. */
#define E_ANY	(E_Q | B(EISCONN) | B(EDQUOT) | B(EEXIST) | B(ENOMEM) |	\
		 B(ENOENT) | B(EACCES) | B(EPERM) | B(ENOSPC) |		\
		 B(ESHUTDOWN) | B(EAGAIN) | B(ETIMEDOUT) | B(EINTR) |	\
		 B(EBUSY) | B(ECANCELED) | B(ESTALE))

struct tfd {
	int fd;
	int tracked;		/* attached to tracked queue tq */
	int tq;
};

struct held {
	int fd;			/* -1: detached */
	int tq, key;
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
	uintptr_t unmapped;
};

static long do_ioctl(struct worker *w, int fd, unsigned long cmd, void *arg,
		     int op)
{
	long ret;
	int e;

	errno = 0;
	ret = ioctl(fd, cmd, arg);
	e = errno;
	/* counted as we go: a process that dies still counts its calls */
	if (++w->calls % 256 == 0)
		atomic_fetch_add(&sh->calls, 256);
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

static void close_fd(struct worker *w, struct tfd *t)
{
	/* Leases end with the fd: stop counting them before they return. */
	if (!w->in_child)
		drop_held_of_fd(w, t->fd);
	close(t->fd);
	*t = w->fds[--w->nfds];
}

static struct tfd *new_fd(struct worker *w)
{
	int fd;

	if (w->nfds == MAXFD)
		close_fd(w, &w->fds[rn(&w->r, MAXFD)]);
	fd = open("/dev/kwq", O_RDWR | O_CLOEXEC | (chance(&w->r, 20) ? O_NONBLOCK : 0));
	if (fd < 0)
		return NULL;
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
	len = 1 + rn(&w->r, chance(&w->r, 80) ? 16 : KWQ_KEY_LEN_MAX);
	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)rnd(&w->r);
	return len;
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
				      prio_ok && chance(&w->r, 30) ?
				      (int)rn(&w->r, 7) - 3 : 0);

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
	default:
		break;
	}
	struct_ioctl(w, t->fd, op, cmd, &a, sizeof(a), 1, 8,
		     offsetof(struct kwq_keys_args, delays));
}

/* DONE a key that is not one of ours, through the fd that got it. */
static void done_foreign(struct worker *w, struct tfd *t, const void *key,
			 size_t len)
{
	struct kwq_keys_args a = {};
	unsigned char rec[KWQ_REC_SIZE_MAX];
	long m = kwq_rec_pack(rec, sizeof(rec), key, len, 0);

	if (m <= 0)
		return;
	a.recs = (uintptr_t)rec;
	a.recs_len = (uint32_t)m;
	a.nr = 1;
	if (do_ioctl(w, t->fd, KWQ_IOC_DONE, &a, 6) < 0) {
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
			char tmp[8] = {}, canon[16];
			int kid;

			memcpy(tmp, key, len < 7 ? len : 7);
			kid = len >= 2 && tmp[0] == 'k' ? atoi(tmp + 1) : -1;
			/*
			 * Only the exact key "k<id>" is ours. A fuzzed ADD
			 * (mutated arguments) can slip a near miss such as
			 * "k12\x05" into a tracked queue: counting it as k12
			 * would DONE the wrong key and strand this one, so
			 * finish it here and do not count it.
			 */
			if (kid < 0 || kid >= NKEYS ||
			    (size_t)snprintf(canon, sizeof(canon), "k%d", kid) != len ||
			    memcmp(canon, key, len)) {
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

static void op_done_held(struct worker *w);

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

			op_done_held(w);
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

			op_done_held(w);
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
	a.done_recs = (uintptr_t)(chance(&w->r, 20) ? (void *)w->unmapped :
				  (void *)w->recs);
	mutate(w, &a, sizeof(a), 8);
	a.get.recs = (uintptr_t)buf;
	/* no unbounded wait in a thread nobody kills */
	if (!w->in_child && (a.get.timeout_ns < 0 ||
			     a.get.timeout_ns > 3000000))
		a.get.timeout_ns = rn(&w->r, 3000000);
	do_ioctl(w, t->fd, KWQ_IOC_DONE_GET, &a, 13);
}

/* Done (or lose) keys this thread holds on tracked queues. */
static void op_done_held(struct worker *w)
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
	if (do_ioctl(w, fd, KWQ_IOC_DONE, &a, 6) < 0 || a.done != a.nr) {
		atomic_fetch_add(&sh->bad_result, 1);
		note("DONE of %d held keys on tracked queue %d: %s, done %u",
		     n, tq, strerror(errno), a.done);
	}
}

static void op_num_requeues(struct worker *w)
{
	struct kwq_key_args a = {};
	struct tfd *t = pick_fd(w, 0);
	unsigned char key[KWQ_KEY_LEN_MAX];
	int kid;

	if (!t)
		return;
	a.len = (uint32_t)make_key(w, key, 0, &kid);
	a.key = (uintptr_t)arg_ptr(w, key, a.len, 0);
	if (chance(&w->r, 5))
		a.len = chance(&w->r, 50) ? 0 : KWQ_KEY_LEN_MAX + 1 + rn(&w->r, 1000);
	struct_ioctl(w, t->fd, 9, KWQ_IOC_NUM_REQUEUES, &a, sizeof(a), 1, 10, -1);
}

/* KWQ_IOC_REVIVE (@op 14) or KWQ_IOC_PURGE (15): a key, or all. */
static void op_dead(struct worker *w, int op)
{
	struct kwq_dead_args a = {};
	struct tfd *t = pick_fd(w, 0);
	unsigned char key[KWQ_KEY_LEN_MAX];
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
	struct_ioctl(w, t->fd, op, op == 14 ? KWQ_IOC_REVIVE : KWQ_IOC_PURGE,
		     &a, sizeof(a), 1, 10, -1);
}

/* KWQ_IOC_INSPECT (@op 16): one key, or a chunk of a walk. */
static void op_inspect(struct worker *w)
{
	struct kwq_inspect_args a = {};
	struct tfd *t = pick_fd(w, 0);
	unsigned char key[KWQ_KEY_LEN_MAX];
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
	struct_ioctl(w, t->fd, 16, KWQ_IOC_INSPECT, &a, sizeof(a), 1, 10,
		     offsetof(struct kwq_inspect_args, recs));
}

static void op_len(struct worker *w)
{
	struct tfd *t = pick_fd(w, 0);
	uint64_t len;
	size_t usize;
	unsigned long cmd;

	if (!t)
		return;
	cmd = cmd_for(w, 10, KWQ_IOC_LEN, sizeof(len), &usize);
	do_ioctl(w, t->fd, cmd, arg_ptr(w, &len, sizeof(len), 1), 10);
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
	nr = chance(&w->r, 90) ? rn(&w->r, 0x14) : rn(&w->r, 256);
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
	    nr == _IOC_NR(KWQ_IOC_DONE_GET)) {
		/* no blocking forever: make gets/drains non-blocking here */
		if (nr == _IOC_NR(KWQ_IOC_GET) && size >= 24)
			memset(buf + 24, 0, 8);
		if (nr == _IOC_NR(KWQ_IOC_DONE_GET) && size >= 48)
			memset(buf + 48, 0, 8);
		if (nr == _IOC_NR(KWQ_IOC_SHUTDOWN) && size >= 1)
			buf[0] &= ~KWQ_SHUTDOWN_DRAIN;
		if (p != buf)
			p = buf;
	}
	do_ioctl(w, t->fd, _IOC(dir, type, nr, size), p, -1);
}

static void child_run(struct worker *w);

/* Fork a child that works on inherited fds; kill it at a random time. */
static void op_fork(struct worker *w)
{
	pid_t pid;
	int st;

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
	kt_sleep_ms(rn(&w->r, 20));
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
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
	else if (c < 68)
		op_num_requeues(w);
	else if (c < 71)
		op_len(w);
	else if (c < 72)
		op_stats(w);
	else if (c < 73)
		op_inspect(w);
	else if (c < 74)
		op_dead(w, chance(&w->r, 50) ? 14 : 15);
	else if (c < 75)
		op_shutdown(w, child);
	else if (c < 87)
		op_raw(w);
	else if (c < 98) {
		if (!child)
			op_done_held(w);
	} else if (!child && chance(&w->r, 60)) {
		op_fork(w);
	}
}

static void child_run(struct worker *w)
{
	int i, n = 5 + (int)rn(&w->r, 60);

	w->nheld = 0;	/* the parent's bookkeeping, not ours */
	w->calls = 0;	/* the parent counts its own */
	for (i = 0; i < n; i++)
		step(w, 1);
	atomic_fetch_add(&sh->calls, w->calls % 256);
}

static void attach_tracked(struct worker *w)
{
	int i;

	for (i = 0; i < NQ_TRACKED; i++) {
		struct tfd *t = new_fd(w);

		if (!t)
			continue;
		if (kwq_open(t->fd, names[NQ_POOL + i]) < 0) {
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

static void *thread_main(void *arg)
{
	struct worker *w = arg;
	unsigned long n = 0;
	int i;

	w->arena = mmap(NULL, ARENA + 4096, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	w->ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	w->recs = malloc(RECBUF);
	if (w->arena == MAP_FAILED || w->ro == MAP_FAILED || !w->recs)
		return NULL;
	mprotect(w->arena + ARENA, 4096, PROT_NONE);
	memset(w->ro, 0, 4096);
	mprotect(w->ro, 4096, PROT_READ);
	/*
	 * Below mmap_min_addr: never mapped. (A page mmapped and unmapped
	 * here would be reused by a later mapping, another thread's stack
	 * say, and the kernel would write into it.)
	 */
	w->unmapped = 0x1000 + (uintptr_t)rn(&w->r, 8) * 4096 + rn(&w->r, 4096);

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
	for (i = w->nfds - 1; i >= 0; i--)
		if (!w->fds[i].tracked)
			close_fd(w, &w->fds[i]);
	attach_tracked(w);
	while (w->nheld) {
		int before = w->nheld;

		op_done_held(w);
		if (w->nheld == before)
			break;
	}
	for (i = w->nfds - 1; i >= 0; i--)
		close_fd(w, &w->fds[i]);
	atomic_fetch_add(&sh->calls, w->calls % 256);
	return NULL;
}

static int worker_proc(int proc, int nthreads)
{
	pthread_t th[16];
	struct worker *ws = calloc((size_t)nthreads, sizeof(*ws));
	int i;

	if (!ws)
		return 1;
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
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/* Drain tracked queue @i: each key once, nothing processing after. */
static int drain_tracked(int i, char *why, size_t size)
{
	static unsigned char buf[KWQ_REC_SIZE_MAX * 64];
	static unsigned char seen[4096];
	struct kwq_stats_args st;
	int fd = kt_attach(names[NQ_POOL + i]);
	unsigned int total = 0, dup = 0;
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
			if (len >= 2 && ((const char *)key)[0] == 'k' && len < 6) {
				char tmp[8] = {};
				int kid;

				memcpy(tmp, key, len);
				kid = atoi(tmp + 1);
				if (kid >= 0 && kid < NKEYS && seen[kid]++)
					dup++;
			}
			kwq_recbuf_push(&rb, key, len, 0);
			total++;
		}
		kwq_done_batch(fd, &rb, NULL);
		kwq_recbuf_free(&rb);
	}
	ok = kwq_stats(fd, &st) == 0 && st.len == 0 && st.processing == 0 && !dup;
	snprintf(why, size, "queue %s: drained %u keys (%u duplicates), then len %llu processing %llu waiting %llu",
		 names[NQ_POOL + i], total, dup, (unsigned long long)st.len,
		 (unsigned long long)st.processing, (unsigned long long)st.waiting);
	kwq_destroy(fd, names[NQ_POOL + i]);
	close(fd);
	return ok;
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
	while ((opt = getopt(argc, argv, "s:t:p:j:v")) != -1) {
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
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-s SEED] [-t SECONDS] [-p PROCS] [-j THREADS]\n",
				argv[0]);
			return 2;
		}
	}
	if (procs < 1 || procs > 64 || threads < 1 || threads > 16 || secs < 1)
		return 2;
	kt_setup("kwq_fuzz", 6, (unsigned int)secs + 120);
	printf("    # seed %llu (rerun: fuzz_test -s %llu -t %d -p %d -j %d)\n",
	       g_seed, g_seed, secs, procs, threads);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	memset(sh, 0, sizeof(*sh));
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
	for (i = 0; i < procs; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(worker_proc(i, threads));
	}
	kt_sleep_ms((long)secs * 1000);
	atomic_store(&sh->stop, 1);
	for (i = 0; i < procs; i++) {
		int st = kt_wait(pids[i]);

		if (st) {
			bad_exit++;
			note("worker %d: exit status %d", i, st);
		}
	}
	t1 = kt_now();
	el = (double)(t1 - t0) / 1e9;

	printf("    # calls %lu in %.1f s: %.0f calls/s; forks %lu, SIGKILLs %lu\n",
	       atomic_load(&sh->calls), el, (double)atomic_load(&sh->calls) / el,
	       atomic_load(&sh->forks), atomic_load(&sh->kills));
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
	return ktap_end();
}
