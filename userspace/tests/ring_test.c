// SPDX-License-Identifier: GPL-2.0
/*
 * Rings (issue 31, Documentation/rings.rst): KWQ_IOC_RING_SETUP, the
 * three mmap() regions, submission records written to shared memory and
 * published with a release store of sq_tail, completions, lease slots,
 * KWQ_IOC_RING_ENTER, the status page and the need-wakeup protocol,
 * hostile records, completion backpressure, and what a SIGKILL or a
 * close() without munmap() leaves behind. Raw against the uapi header
 * (no libkwq ring API): what is checked is the ABI's contract. Each case
 * builds its own queue; errnos and states are checked exactly.
 */
#include "kwqtest.h"

#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <sys/mman.h>

#define NCASES 120

struct ring {
	int fd;
	struct kwq_ring_setup_args a;
	uint8_t *u, *k;
	struct kwq_ring_status *st;
	uint32_t tail;	/* ours: the next slot to write (published or not) */
	uint32_t cqh;	/* ours: the next completion to read */
};

static long pagesz;

static int ring_setup_raw(int fd, struct kwq_ring_setup_args *a,
			  uint32_t sq, uint32_t cq, uint32_t leases)
{
	memset(a, 0, sizeof(*a));
	a->sq_entries = sq;
	a->cq_entries = cq;
	a->lease_slots = leases;
	return ioctl(fd, KWQ_IOC_RING_SETUP, a);
}

static void *map_region(int fd, uint64_t off, uint64_t size, int prot)
{
	return mmap(NULL, size, prot, MAP_SHARED, fd, (off_t)off);
}

/* @r's regions as kwqtest.h's struct kt_ring names them. */
static struct kt_ring kt_of(const struct ring *r)
{
	struct kt_ring m = {
		.a = r->a, .u = r->u, .k = r->k, .st = (unsigned char *)r->st,
	};

	return m;
}

/*
 * Set up and map a ring on the attached @fd: 0, or the failing step's
 * errno after printing a diagnostic for case @name (which then fails).
 */
static int ring_open(struct ring *r, int fd, uint32_t sq, uint32_t cq,
		     uint32_t leases, const char *name)
{
	struct kt_ring m;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	if (ring_setup_raw(fd, &r->a, sq, cq, leases) < 0) {
		printf("    # %s: RING_SETUP(%u, %u, %u): %s\n", name, sq, cq,
		       leases, kt_ename(errno));
		return errno;
	}
	m = kt_of(r);
	if (kt_ring_map(fd, &m)) {
		printf("    # %s: mmap: %s\n", name, kt_ename(errno));
		return errno ? errno : EIO;
	}
	r->u = m.u;
	r->k = m.k;
	r->st = (struct kwq_ring_status *)m.st;
	return 0;
}

static void ring_unmap(struct ring *r)
{
	struct kt_ring m = kt_of(r);

	kt_ring_unmap(&m);
	r->u = NULL;
	r->k = NULL;
	r->st = NULL;
}

static uint32_t *sq_tail_p(struct ring *r)
{
	return (uint32_t *)(r->u + r->a.sq_tail_off);
}

static uint32_t sq_head(struct ring *r)
{
	return __atomic_load_n((uint32_t *)(r->k + r->a.sq_head_off),
			       __ATOMIC_ACQUIRE);
}

static uint32_t ring_flags(struct ring *r)
{
	return __atomic_load_n((uint32_t *)(r->k + r->a.ring_flags_off),
			       __ATOMIC_ACQUIRE);
}

static uint8_t *sq_slot(struct ring *r, uint32_t idx)
{
	return r->u + r->a.sqes_off +
	       (size_t)(idx & (r->a.sq_entries - 1)) * KWQ_SQE_SIZE;
}

static struct kwq_lease_slot *lease_slot(struct ring *r, uint32_t i)
{
	return (struct kwq_lease_slot *)(r->k + r->a.leases_off +
					 (size_t)i * KWQ_LEASE_SLOT_SIZE);
}

/*
 * Write a record at our tail without publishing it: the first slot is
 * @h (its key bytes ignored), then @klen bytes of @key from key[0] on,
 * over @nslots slots (zero past the key). Returns its ring index.
 */
static uint32_t sq_write(struct ring *r, const struct kwq_sqe *h,
			 const void *key, uint32_t klen, uint32_t nslots)
{
	const uint8_t *kb = key;
	uint32_t start = r->tail, s, done = 0, n;
	uint8_t *slot;

	for (s = 0; s < nslots; s++) {
		slot = sq_slot(r, start + s);
		memset(slot, 0, KWQ_SQE_SIZE);
		if (s == 0) {
			struct kwq_sqe tmp = *h;

			memset(tmp.key, 0, sizeof(tmp.key));
			n = klen < KWQ_SQE_INLINE ? klen : KWQ_SQE_INLINE;
			memcpy(tmp.key, kb, n);
			memcpy(slot, &tmp, sizeof(tmp));
		} else {
			n = klen - done < KWQ_SQE_SIZE ? klen - done : KWQ_SQE_SIZE;
			memcpy(slot, kb + done, n);
		}
		done += n;
	}
	r->tail = start + nslots;
	return start;
}

/* A well-formed record of @op for @key (@len bytes). */
static uint32_t sq_rec(struct ring *r, uint8_t op, uint8_t flags,
		       const void *key, uint32_t len, int32_t prio, uint64_t arg)
{
	struct kwq_sqe h;

	memset(&h, 0, sizeof(h));
	h.op = op;
	h.flags = flags;
	h.len = len;
	h.nslots = KWQ_SQE_SLOTS(len);
	h.priority = prio;
	h.arg = arg;
	return sq_write(r, &h, key, len, h.nslots);
}

static uint32_t sq_add(struct ring *r, const char *key)
{
	return sq_rec(r, KWQ_SQE_ADD, 0, key, strlen(key), 0, 0);
}

static uint32_t sq_done_lease(struct ring *r, uint8_t flags, uint32_t slot,
			      uint64_t gen)
{
	struct kwq_sqe h;

	memset(&h, 0, sizeof(h));
	h.op = KWQ_SQE_DONE_LEASE;
	h.flags = flags;
	h.nslots = 1;
	h.lease_slot = slot;
	h.arg = gen;
	return sq_write(r, &h, NULL, 0, 1);
}

/* Publish every record written: the release store, no system call. */
static void publish(struct ring *r)
{
	__atomic_store_n(sq_tail_p(r), r->tail, __ATOMIC_RELEASE);
}

/* The producer's side of need-wakeup: a full fence, then waiters. */
static uint32_t waiters_after_publish(struct ring *r)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&r->st->waiters, __ATOMIC_RELAXED);
}

static int enter(struct ring *r, uint32_t flags, uint32_t get_max,
		 uint32_t get_min, int64_t timeout_ns,
		 struct kwq_ring_enter_args *out)
{
	struct kwq_ring_enter_args e;

	memset(&e, 0, sizeof(e));
	e.flags = flags;
	e.get_max = get_max;
	e.get_min = get_min;
	e.timeout_ns = timeout_ns;
	if (!out)
		out = &e;
	else
		*out = e;
	return ioctl(r->fd, KWQ_IOC_RING_ENTER, out);
}

static int submit(struct ring *r)
{
	return enter(r, KWQ_ENTER_SUBMIT, 0, 0, 0, NULL);
}

/* Read up to @max completions (acquire cq_tail, then store cq_head). */
static int cq_take(struct ring *r, struct kwq_cqe *out, int max)
{
	uint32_t tail = __atomic_load_n((uint32_t *)(r->k + r->a.cq_tail_off),
					__ATOMIC_ACQUIRE);
	int n = 0;

	memset(out, 0, sizeof(*out) * max);
	while (r->cqh != tail && n < max) {
		memcpy(&out[n++], r->k + r->a.cqes_off +
		       (size_t)(r->cqh & (r->a.cq_entries - 1)) * sizeof(*out),
		       sizeof(*out));
		r->cqh++;
	}
	__atomic_store_n((uint32_t *)(r->u + r->a.cq_head_off), r->cqh,
			 __ATOMIC_RELEASE);
	return n;
}

static struct kwq_stats_args stats(int fd)
{
	struct kwq_stats_args s;

	memset(&s, 0, sizeof(s));
	if (kwq_stats(fd, &s) < 0)
		printf("    # KWQ_IOC_STATS: %s\n", kt_ename(errno));
	return s;
}

#define ULL(x) ((unsigned long long)(x))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The @n cases a step that failed cannot run, failed. */
static void kt_fail_n(int n, const char *name, const char *why)
{
	while (n--)
		ktap_check(0, name, "%s", why);
}

/* A producer fd with a mapped ring and a second (reader) fd on one queue. */
struct pair {
	char name[KWQ_NAME_LEN];
	int rfd;	/* reader: ioctls only */
	struct ring r;
	int ok;
};

static void pair_open(struct pair *p, const char *base, uint32_t sq,
		      uint32_t cq, uint32_t leases, const char *cname)
{
	p->rfd = kt_queue(base, NULL, p->name);
	p->ok = ring_open(&p->r, kt_attach(p->name), sq, cq, leases, cname) == 0;
}

static void pair_close(struct pair *p)
{
	ring_unmap(&p->r);
	close(p->r.fd);
	kwq_destroy(p->rfd, p->name);
	close(p->rfd);
}

/* --- setup --------------------------------------------------------------- */

static void setup_cases(void)
{
	static const struct {
		const char *name;
		uint32_t sq, cq, leases, flags;
	} bad[] = {
		{ "setup_sq_not_power_of_two_einval", 48, 32, 0, 0 },
		{ "setup_sq_below_min_einval", 16, 32, 0, 0 },
		{ "setup_sq_zero_einval", 0, 32, 0, 0 },
		{ "setup_sq_above_max_einval", 8192, 32, 0, 0 },
		{ "setup_cq_not_power_of_two_einval", 32, 96, 0, 0 },
		{ "setup_cq_below_min_einval", 32, 16, 0, 0 },
		{ "setup_cq_above_max_einval", 32, 8192, 0, 0 },
		{ "setup_lease_slots_over_max_einval", 32, 32, 257, 0 },
		{ "setup_flags_nonzero_einval", 32, 32, 0, 1 },
	};
	struct kwq_ring_setup_args a;
	char name[KWQ_NAME_LEN];
	int fd, qfd, r, e;
	size_t i;

	fd = kt_dev();
	KT_ERR(ring_setup_raw(fd, &a, 32, 32, 4), ENOTCONN,
	       "setup_unattached_enotconn");
	close(fd);

	qfd = kt_queue("rsetup", NULL, name);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&a, 0, sizeof(a));
		a.sq_entries = bad[i].sq;
		a.cq_entries = bad[i].cq;
		a.lease_slots = bad[i].leases;
		a.flags = bad[i].flags;
		errno = 0;
		r = ioctl(qfd, KWQ_IOC_RING_SETUP, &a);
		e = errno;
		ktap_check(r == -1 && e == EINVAL, bad[i].name,
			   "sq %u cq %u leases %u flags %#x: ret %d %s, want EINVAL",
			   bad[i].sq, bad[i].cq, bad[i].leases, bad[i].flags, r,
			   kt_ename(e));
	}
	/* the refused setups left no ring behind: the bounds themselves work */
	r = ring_setup_raw(qfd, &a, KWQ_RING_ENTRIES_MAX, KWQ_RING_ENTRIES_MAX,
			   KWQ_RING_LEASES_MAX);
	e = errno;
	ktap_check(r == 0, "setup_max_bounds_accepted_after_refusals",
		   "setup(4096, 4096, 256): %s", kt_ename(r ? e : 0));
	KT_ERR(ring_setup_raw(qfd, &a, 32, 32, 0), EBUSY, "setup_second_ebusy");
	kwq_destroy(qfd, name);
	close(qfd);
}

/* The returned layout: every index and slot inside its region, no overlap. */
static void layout_case(uint32_t sq, uint32_t cq, uint32_t leases,
			const char *cname)
{
	struct kwq_ring_setup_args a;
	char name[KWQ_NAME_LEN], why[256] = "";
	int fd = kt_queue("rlayout", NULL, name);
	uint64_t cq_end;

	if (ring_setup_raw(fd, &a, sq, cq, leases) < 0) {
		snprintf(why, sizeof(why), "setup: %s", kt_ename(errno));
	} else {
		cq_end = (uint64_t)a.cqes_off + (uint64_t)cq * sizeof(struct kwq_cqe);
		if (a.user_size % pagesz || a.kernel_size % pagesz ||
		    a.status_size % pagesz)
			snprintf(why, sizeof(why), "sizes not page multiples");
		else if (a.status_size < sizeof(struct kwq_ring_status))
			snprintf(why, sizeof(why), "status_size %llu", ULL(a.status_size));
		else if (a.sq_tail_off % 4 || a.cq_head_off % 4 ||
			 a.sq_head_off % 4 || a.cq_tail_off % 4 ||
			 a.ring_flags_off % 4 || a.sqes_off % 64 ||
			 a.cqes_off % 16 || a.leases_off % 64)
			snprintf(why, sizeof(why), "misaligned offset");
		else if (a.sq_tail_off / 64 == a.cq_head_off / 64 ||
			 a.sq_tail_off + 4 > a.sqes_off ||
			 a.cq_head_off + 4 > a.sqes_off ||
			 a.sqes_off + (uint64_t)sq * KWQ_SQE_SIZE > a.user_size)
			snprintf(why, sizeof(why),
				 "user region: tail %u head %u sqes %u size %llu",
				 a.sq_tail_off, a.cq_head_off, a.sqes_off,
				 ULL(a.user_size));
		else if (a.sq_head_off + 4 > a.cqes_off ||
			 a.cq_tail_off + 4 > a.cqes_off ||
			 a.ring_flags_off + 4 > a.cqes_off ||
			 a.sq_head_off == a.cq_tail_off ||
			 a.ring_flags_off == a.sq_head_off ||
			 a.ring_flags_off == a.cq_tail_off ||
			 cq_end > a.kernel_size ||
			 (leases && (a.leases_off < cq_end ||
				     a.kernel_size < a.leases_off +
				     (uint64_t)leases * KWQ_LEASE_SLOT_SIZE)))
			snprintf(why, sizeof(why),
				 "kernel region: sq_head %u cq_tail %u flags %u cqes %u leases %u size %llu",
				 a.sq_head_off, a.cq_tail_off, a.ring_flags_off,
				 a.cqes_off, a.leases_off, ULL(a.kernel_size));
		else if (a.sq_entries != sq || a.cq_entries != cq ||
			 a.lease_slots != leases || a.flags)
			snprintf(why, sizeof(why), "inputs changed");
	}
	ktap_check(!why[0], cname, "%s", why);
	kwq_destroy(fd, name);
	close(fd);
}

/* A fresh ring: indices 0, not broken, every lease slot free (gen 0). */
static void fresh_ring_case(void)
{
	struct pair p;
	char why[128] = "";
	uint32_t i;

	pair_open(&p, "rfresh", 32, 32, 4, "fresh_ring_zeroed");
	if (!p.ok) {
		ktap_check(0, "fresh_ring_zeroed", "no ring");
		pair_close(&p);
		return;
	}
	if (*sq_tail_p(&p.r) || sq_head(&p.r) || ring_flags(&p.r) ||
	    *(uint32_t *)(p.r.k + p.r.a.cq_tail_off) ||
	    *(uint32_t *)(p.r.u + p.r.a.cq_head_off))
		snprintf(why, sizeof(why), "sq_tail %u sq_head %u flags %#x",
			 *sq_tail_p(&p.r), sq_head(&p.r), ring_flags(&p.r));
	for (i = 0; i < 4 && !why[0]; i++)
		if (lease_slot(&p.r, i)->gen)
			snprintf(why, sizeof(why), "slot %u gen %llu", i,
				 ULL(lease_slot(&p.r, i)->gen));
	if (!why[0] && (p.r.st->ready || p.r.st->waiters || p.r.st->flags))
		snprintf(why, sizeof(why), "status ready %llu waiters %u flags %#x",
			 ULL(p.r.st->ready), p.r.st->waiters, p.r.st->flags);
	ktap_check(!why[0], "fresh_ring_zeroed", "%s", why);
	pair_close(&p);
}

/* A SIGSEGV caught in this process; the results in statics (longjmp). */
static sigjmp_buf segv_jmp;
static int store_done, read_ok;
static uint64_t read_sink;

static void segv_handler(int sig)
{
	(void)sig;
	siglongjmp(segv_jmp, 1);
}

/* Store a byte at @addr in this process: 1 if it faulted. */
static int store_faults(void *addr)
{
	store_done = 0;
	if (!sigsetjmp(segv_jmp, 1)) {
		signal(SIGSEGV, segv_handler);
		__atomic_store_n((uint8_t *)addr, 1, __ATOMIC_RELAXED);
		store_done = 1;
	}
	signal(SIGSEGV, SIG_DFL);
	return !store_done;
}

/* --- mmap ------------------------------------------------------------------ */

/* A mapping of @size bytes at @off that must fail with @want. */
static void mmap_refused(int fd, uint64_t off, uint64_t size, int prot,
			 int want, const char *cname)
{
	void *m;
	int e;

	errno = 0;
	m = map_region(fd, off, size, prot);
	e = errno;
	ktap_check(m == MAP_FAILED && e == want, cname, "mmap: %s, want %s",
		   m == MAP_FAILED ? kt_ename(e) : "mapped", kt_ename(want));
	if (m != MAP_FAILED)
		munmap(m, size);
}

/* Read a byte at @addr in a forked child: its exit status. */
static int touch_in_child(void *addr)
{
	pid_t pid = fork();

	if (pid == 0) {
		(void)__atomic_load_n((uint8_t *)addr, __ATOMIC_RELAXED);
		_exit(0);
	}
	return kt_wait(pid);
}

static void mmap_cases(void)
{
	struct kwq_ring_setup_args a;
	char name[KWQ_NAME_LEN];
	struct pair p;
	int fd, st;

	/* before setup: no region to map */
	fd = kt_queue("rmmap0", NULL, name);
	mmap_refused(fd, KWQ_RING_OFF_USER, pagesz, PROT_READ | PROT_WRITE,
		     ENXIO, "mmap_before_setup_enxio");
	{
		struct ring r0 = { .fd = fd };

		KT_ERR(submit(&r0), ENXIO, "enter_before_setup_enxio");
	}
	kwq_destroy(fd, name);
	close(fd);

	pair_open(&p, "rmmap", 32, 32, 2, "mmap_each_region_maps");
	ktap_check(p.ok, "mmap_each_region_maps", "see above");
	if (!p.ok) {
		kt_fail_n(11, "mmap_case", "no ring");
		pair_close(&p);
		return;
	}
	a = p.r.a;
	/* the user region is writable: a byte in the last sqe slot */
	p.r.u[a.sqes_off + 31 * KWQ_SQE_SIZE + 63] = 0;

	/* refused by mmap() itself: errno EPERM (not in the uapi's comments) */
	mmap_refused(p.r.fd, KWQ_RING_OFF_KERNEL, a.kernel_size,
		     PROT_READ | PROT_WRITE, EPERM,
		     "mmap_kernel_region_writable_eperm");
	mmap_refused(p.r.fd, KWQ_RING_OFF_STATUS, a.status_size,
		     PROT_READ | PROT_WRITE, EPERM,
		     "mmap_status_region_writable_eperm");

	KT_ERR(mprotect(p.r.k, a.kernel_size, PROT_READ | PROT_WRITE), EACCES,
	       "mprotect_kernel_region_write_eacces");
	KT_ERR(mprotect(p.r.st, a.status_size, PROT_READ | PROT_WRITE), EACCES,
	       "mprotect_status_region_write_eacces");
	ktap_check(store_faults(p.r.k + a.cqes_off) &&
		   store_faults((uint8_t *)p.r.st + pagesz - 1),
		   "read_only_regions_store_segv", "a store went through");

	mmap_refused(p.r.fd, 0x30000000ULL, pagesz, PROT_READ, EINVAL,
		     "mmap_unknown_offset_einval");
	mmap_refused(p.r.fd, KWQ_RING_OFF_USER, a.user_size + pagesz,
		     PROT_READ | PROT_WRITE, EINVAL, "mmap_user_oversize_einval");
	mmap_refused(p.r.fd, KWQ_RING_OFF_KERNEL, a.kernel_size + pagesz,
		     PROT_READ, EINVAL, "mmap_kernel_oversize_einval");

	/* VM_DONTCOPY: a forked child has none of the three mappings */
	st = touch_in_child(p.r.u);
	ktap_check(st == 128 + SIGSEGV, "fork_child_has_no_user_mapping",
		   "child status %d (0: it read the ring)", st);
	st = touch_in_child(p.r.k);
	ktap_check(st == 128 + SIGSEGV, "fork_child_has_no_kernel_mapping",
		   "child status %d", st);
	st = touch_in_child(p.r.st);
	ktap_check(st == 128 + SIGSEGV, "fork_child_has_no_status_mapping",
		   "child status %d", st);
	pair_close(&p);
}

/* --- the producer path ------------------------------------------------------ */

static void producer_cases(void)
{
	struct kwq_stats_args s;
	struct kwq_cqe c[8] = { 0 };
	struct pair p;
	char buf[256];
	int n;

	pair_open(&p, "rprod", 32, 32, 0, "producer");
	if (!p.ok) {
		kt_fail_n(8, "producer_case", "no ring");
		pair_close(&p);
		return;
	}
	sq_add(&p.r, "a");
	sq_add(&p.r, "b");
	sq_add(&p.r, "c");
	ktap_check(*sq_tail_p(&p.r) == 0 && kt_len(p.rfd) == 0,
		   "unpublished_records_invisible", "len %ld", kt_len(p.rfd));
	publish(&p.r);
	n = kt_take(p.rfd, KWQ_GET_DETACHED, 0, 10, buf, sizeof(buf));
	ktap_check(n == 3 && !strcmp(buf, "a,b,c"),
		   "published_adds_got_in_order_by_other_fd",
		   "got %d '%s', want 'a,b,c'", n, buf);
	ktap_check(sq_head(&p.r) == 3, "sq_head_published_after_drain",
		   "sq_head %u, want 3", sq_head(&p.r));
	ktap_check(cq_take(&p.r, c, 8) == 0, "successful_adds_post_no_completion",
		   "completion op %u res %d", c[0].op, c[0].res);

	for (n = 0; n < 5; n++) {
		snprintf(buf, sizeof(buf), "len-%d", n);
		sq_add(&p.r, buf);
	}
	publish(&p.r);
	ktap_check(kt_len(p.rfd) == 5, "len_counts_published_adds",
		   "len %ld, want 5", kt_len(p.rfd));
	ktap_check(p.r.st->ready == 5, "status_ready_after_adds",
		   "ready %llu, want 5", ULL(p.r.st->ready));
	kt_take(p.rfd, KWQ_GET_DETACHED, 0, 2, buf, sizeof(buf));
	ktap_check(p.r.st->ready == 3, "status_ready_after_gets",
		   "ready %llu, want 3", ULL(p.r.st->ready));

	/* an add-after waits; stats sees it without a doorbell */
	sq_rec(&p.r, KWQ_SQE_ADD, KWQ_SQE_F_AFTER, "later", 5, 0, 3600 * KT_SEC);
	publish(&p.r);
	s = stats(p.rfd);
	ktap_check(s.waiting == 1 && s.len == 3, "add_after_record_waits",
		   "waiting %llu len %llu", ULL(s.waiting), ULL(s.len));
	pair_close(&p);
}

/* The kernel never writes the user region: a drain leaves it as written. */
static void user_region_case(void)
{
	uint8_t *snap;
	struct pair p;
	long len;
	int i;

	pair_open(&p, "ruser", 32, 32, 0, "drain_leaves_user_region_as_written");
	if (!p.ok) {
		kt_fail_n(1, "drain_leaves_user_region_as_written", "no ring");
		pair_close(&p);
		return;
	}
	for (i = 0; i < 3; i++)
		sq_rec(&p.r, KWQ_SQE_ADD, 0, "user-region-key-of-some-length-over-40-bytes",
		       44, i, 0);
	publish(&p.r);
	snap = malloc(p.r.a.user_size);
	if (!snap)
		exit(1);
	memcpy(snap, p.r.u, p.r.a.user_size);
	len = kt_len(p.rfd);
	ktap_check(len == 1 && sq_head(&p.r) == 6 &&
		   !memcmp(snap, p.r.u, p.r.a.user_size),
		   "drain_leaves_user_region_as_written",
		   "len %ld (want 1) sq_head %u (want 6), user region %s", len,
		   sq_head(&p.r), memcmp(snap, p.r.u, p.r.a.user_size) ?
		   "changed" : "as written");
	free(snap);
	pair_close(&p);
}

/* kwq_sqe.priority: the key's priority, as KWQ_IOC_ADD's. */
static void priority_case(void)
{
	struct pair p;
	char buf[64];
	int n;

	pair_open(&p, "rprio", 32, 32, 0, "add_priority_honoured");
	if (p.ok) {
		sq_rec(&p.r, KWQ_SQE_ADD, 0, "low", 3, 0, 0);
		sq_rec(&p.r, KWQ_SQE_ADD, 0, "high", 4, 7, 0);
		publish(&p.r);
		n = kt_take(p.rfd, KWQ_GET_DETACHED, 0, 4, buf, sizeof(buf));
		ktap_check(n == 2 && !strcmp(buf, "high,low"),
			   "add_priority_honoured", "got '%s'", buf);
	} else {
		ktap_check(0, "add_priority_honoured", "no ring");
	}
	pair_close(&p);
}

/* DONE, FORGET and REMOVE records do what their ioctls do. */
static void other_ops_cases(void)
{
	struct kwq_stats_args s;
	struct kwq_cqe c[4] = { 0 };
	struct pair p;
	char key[KWQ_KEY_LEN_MAX + 1];
	long n, len;
	int rc, nc;

	pair_open(&p, "rops", 32, 32, 0, "ops");
	if (!p.ok) {
		ktap_check(0, "remove_record_removes_ready_key", "no ring");
		ktap_check(0, "done_record_finishes_ioctl_lease", "no ring");
		ktap_check(0, "done_record_of_foreign_key_eperm", "no ring");
		pair_close(&p);
		return;
	}
	kt_add(p.rfd, "x");
	kt_add(p.rfd, "y");
	sq_rec(&p.r, KWQ_SQE_REMOVE, KWQ_SQE_F_CQE, "x", 1, 0, 0);
	publish(&p.r);
	rc = submit(&p.r);
	nc = cq_take(&p.r, c, 4);
	len = kt_len(p.rfd);
	ktap_check(rc == 0 && nc == 1 && c[0].op == KWQ_SQE_REMOVE &&
		   c[0].res == 0 && len == 1, "remove_record_removes_ready_key",
		   "enter %d, %d cqes res %d, len %ld", rc, nc, c[0].res, len);

	/* a key leased to the ring's fd by an ioctl GET, done by record */
	n = kwq_get(p.r.fd, key, sizeof(key), 0, 0);
	sq_rec(&p.r, KWQ_SQE_DONE, KWQ_SQE_F_CQE, "y", 1, 0, 0);
	publish(&p.r);
	s = stats(p.rfd);
	nc = cq_take(&p.r, c, 4);
	ktap_check(n == 1 && s.processing == 0 && nc == 1 && c[0].res == 0,
		   "done_record_finishes_ioctl_lease",
		   "get %ld processing %llu, %d cqes res %d", n,
		   ULL(s.processing), nc, c[0].res);

	/* a key leased to another fd: EPERM, as KWQ_IOC_DONE */
	kt_add(p.rfd, "z");
	n = kwq_get(p.rfd, key, sizeof(key), 0, 0);
	sq_rec(&p.r, KWQ_SQE_DONE, 0, "z", 1, 0, 0);
	publish(&p.r);
	s = stats(p.rfd);
	nc = cq_take(&p.r, c, 4);
	ktap_check(n == 1 && s.processing == 1 && nc == 1 &&
		   c[0].op == KWQ_SQE_DONE && c[0].res == -EPERM,
		   "done_record_of_foreign_key_eperm",
		   "processing %llu, %d cqes res %d, want -EPERM",
		   ULL(s.processing), nc, c[0].res);
	pair_close(&p);
}

/* --- need-wakeup ----------------------------------------------------------- */

/* One key taken detached into @buf (KWQ_KEY_LEN_MAX + 1 bytes), a string. */
static long get_str(int fd, char *buf, int64_t timeout_ns)
{
	long n = kwq_get(fd, buf, KWQ_KEY_LEN_MAX, KWQ_GET_DETACHED, timeout_ns);

	buf[n > 0 ? n : 0] = '\0';
	return n;
}

struct getter {
	int fd;
	long n;
	int err;
	char key[KWQ_KEY_LEN_MAX + 1];
};

static void *getter_fn(void *arg)
{
	struct getter *g = arg;

	g->n = get_str(g->fd, g->key, 20 * KT_SEC);
	g->err = g->n < 0 ? errno : 0;
	return NULL;
}

static void wakeup_case(void)
{
	struct getter g;
	struct pair p;
	pthread_t t;
	uint32_t w = 0;
	int i, rc = -1, e = 0;

	pair_open(&p, "rwake", 32, 32, 0, "need_wakeup");
	if (!p.ok) {
		ktap_check(0, "status_waiters_set_while_getter_sleeps", "no ring");
		ktap_check(0, "enter_submit_wakes_getter", "no ring");
		ktap_check(0, "status_waiters_cleared_after_wakeup", "no ring");
		pair_close(&p);
		return;
	}
	memset(&g, 0, sizeof(g));
	g.fd = p.rfd;
	pthread_create(&t, NULL, getter_fn, &g);
	for (i = 0; i < 5000 && !__atomic_load_n(&p.r.st->waiters, __ATOMIC_ACQUIRE); i++)
		kt_sleep_ms(1);
	ktap_check(p.r.st->waiters != 0, "status_waiters_set_while_getter_sleeps",
		   "waiters 0 after 5 s");
	sq_add(&p.r, "wake-key");
	publish(&p.r);
	w = waiters_after_publish(&p.r);
	if (w) {
		rc = submit(&p.r);
		e = errno;
	}
	pthread_join(t, NULL);
	ktap_check(w && rc == 0 && g.n == 8 && !strcmp(g.key, "wake-key"),
		   "enter_submit_wakes_getter",
		   "waiters %u enter %d %s; getter %ld %s '%s'", w, rc,
		   kt_ename(rc ? e : 0), g.n, kt_ename(g.err), g.key);
	for (i = 0; i < 5000 && __atomic_load_n(&p.r.st->waiters, __ATOMIC_ACQUIRE); i++)
		kt_sleep_ms(1);
	ktap_check(p.r.st->waiters == 0, "status_waiters_cleared_after_wakeup",
		   "waiters %u", p.r.st->waiters);
	pair_close(&p);
}

/*
 * A getter that waits in poll() (a Go netpoller) after an empty
 * non-blocking GET: waiters stays set for it, so the producer rings and
 * poll() reports the key.
 */
struct poller {
	int fd, first_err, polled, revents, armed;
	long n;
	char key[KWQ_KEY_LEN_MAX + 1];
};

static void *poller_fn(void *arg)
{
	struct poller *g = arg;
	struct pollfd pf = { .fd = g->fd, .events = POLLIN };

	if (get_str(g->fd, g->key, 0) < 0)
		g->first_err = errno;
	__atomic_store_n(&g->armed, 1, __ATOMIC_RELEASE);
	g->polled = poll(&pf, 1, 20000);
	g->revents = pf.revents;
	g->n = get_str(g->fd, g->key, 0);
	return NULL;
}

static void poll_wakeup_case(void)
{
	struct poller g;
	struct pair p;
	pthread_t t;
	uint32_t w;
	int i, rc = -1;

	pair_open(&p, "rpollw", 32, 32, 0, "poll_getter_woken_by_doorbell");
	if (!p.ok) {
		kt_fail_n(1, "poll_getter_woken_by_doorbell", "no ring");
		pair_close(&p);
		return;
	}
	memset(&g, 0, sizeof(g));
	g.fd = p.rfd;
	g.n = -1;
	pthread_create(&t, NULL, poller_fn, &g);
	for (i = 0; i < 5000 && !__atomic_load_n(&g.armed, __ATOMIC_ACQUIRE); i++)
		kt_sleep_ms(1);
	sq_add(&p.r, "polled-key");
	publish(&p.r);
	w = waiters_after_publish(&p.r);
	if (w)
		rc = submit(&p.r);
	pthread_join(t, NULL);
	ktap_check(g.first_err == EAGAIN && w && rc == 0 && g.polled == 1 &&
		   (g.revents & POLLIN) && g.n == 10 &&
		   !strcmp(g.key, "polled-key"), "poll_getter_woken_by_doorbell",
		   "first get %s; waiters %u, enter %d; poll %d revents %#x; get %ld '%s'",
		   kt_ename(g.first_err), w, rc, g.polled, g.revents, g.n,
		   g.n >= 0 ? g.key : "");
	pair_close(&p);
}

/*
 * A drain (SHUTDOWN with KWQ_SHUTDOWN_DRAIN) waits for the keys being
 * processed, and a worker finishes its key by a DONE_LEASE record, ringing
 * the doorbell only if waiters says someone waits: the drain must be
 * counted there, or the record stays in the ring and the drain waits on.
 */
struct drainer {
	int fd, rc, err;
	int64_t took_ms;
};

static void *drainer_fn(void *arg)
{
	struct drainer *d = arg;
	int64_t t0 = kt_now();

	d->rc = kwq_shutdown(d->fd, KWQ_SHUTDOWN_DRAIN);
	d->err = d->rc ? errno : 0;
	d->took_ms = (kt_now() - t0) / KT_MS;
	__atomic_store_n(&d->fd, -1, __ATOMIC_RELEASE);
	return NULL;
}

static void drain_done_lease_case(void)
{
	const char *cname = "drain_counted_so_done_lease_rings_doorbell";
	struct kwq_ring_enter_args ea;
	struct drainer d = { 0 };
	struct kwq_cqe c[4];
	struct pair p;
	pthread_t t;
	uint32_t w = 0, slot;
	int i, rc, nc, ended = 0;

	pair_open(&p, "rdrain", 32, 32, 2, cname);
	if (!p.ok) {
		kt_fail_n(1, cname, "no ring");
		pair_close(&p);
		return;
	}
	kt_add(p.rfd, "drain-key");
	rc = enter(&p.r, KWQ_ENTER_GET, 1, 0, 0, &ea);
	nc = cq_take(&p.r, c, 4);
	if (rc || ea.leased != 1 || nc != 1 || c[0].op != KWQ_CQE_LEASE) {
		kt_fail_n(1, cname, "no lease");
		pair_close(&p);
		return;
	}
	slot = c[0].index;
	d.fd = p.rfd;
	pthread_create(&t, NULL, drainer_fn, &d);
	/* The drain is under way once the status page says shut down. */
	for (i = 0; i < 5000 &&
	     !(__atomic_load_n(&p.r.st->flags, __ATOMIC_ACQUIRE) &
	       KWQ_STATUS_SHUTDOWN); i++)
		kt_sleep_ms(1);
	kt_sleep_ms(100);
	sq_done_lease(&p.r, 0, slot, c[0].value);
	publish(&p.r);
	w = waiters_after_publish(&p.r);
	if (w)
		submit(&p.r);
	for (i = 0; i < 3000 && !ended; i++) {
		ended = __atomic_load_n(&d.fd, __ATOMIC_ACQUIRE) < 0;
		if (!ended)
			kt_sleep_ms(1);
	}
	/* Not ended: the record is applied now, so the drain ends. */
	if (!ended)
		submit(&p.r);
	pthread_join(t, NULL);
	ktap_check(w && ended && d.rc == 0, cname,
		   "waiters %u after publishing; drain %s (ret %d %s, %lld ms)",
		   w, ended ? "ended" : "still waiting 3 s later", d.rc,
		   kt_ename(d.err), (long long)d.took_ms);
	pair_close(&p);
}

/* --- long keys --------------------------------------------------------------- */

static void fill_key(uint8_t *k, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		k[i] = (uint8_t)('!' + (i * 7 + seed) % 90);
}

/* A @len-byte key (its record starting at ring index @pad) round trips. */
static void long_key_case(uint32_t len, uint32_t pad, const char *cname)
{
	uint8_t key[KWQ_KEY_LEN_MAX], got[KWQ_KEY_LEN_MAX + 1];
	struct kwq_sqe nop;
	struct pair p;
	uint32_t i, start;
	long n;

	pair_open(&p, "rlong", 32, 32, 0, cname);
	if (!p.ok) {
		ktap_check(0, cname, "no ring");
		pair_close(&p);
		return;
	}
	memset(&nop, 0, sizeof(nop));
	nop.op = KWQ_SQE_NOP;
	nop.nslots = 1;
	for (i = 0; i < pad; i++)
		sq_write(&p.r, &nop, NULL, 0, 1);
	if (pad) {	/* consumed first: the ring holds 32 slots at once */
		publish(&p.r);
		n = submit(&p.r);
		if (n || sq_head(&p.r) != pad) {
			ktap_check(0, cname, "NOPs: enter %ld %s sq_head %u",
				   n, kt_ename(n ? errno : 0), sq_head(&p.r));
			pair_close(&p);
			return;
		}
	}
	fill_key(key, len, len);
	start = sq_rec(&p.r, KWQ_SQE_ADD, 0, key, len, 0, 0);
	publish(&p.r);
	n = kwq_get(p.rfd, got, sizeof(got), KWQ_GET_DETACHED, 0);
	ktap_check(n == (long)len && !memcmp(got, key, len) &&
		   sq_head(&p.r) == p.r.tail, cname,
		   "record at %u, %u slots: get %ld (%s) want %u, bytes %s, sq_head %u tail %u",
		   start, (unsigned int)KWQ_SQE_SLOTS(len), n,
		   kt_ename(n < 0 ? errno : 0), len,
		   n == (long)len && !memcmp(got, key, len) ? "equal" : "differ",
		   sq_head(&p.r), p.r.tail);
	pair_close(&p);
}

static void long_key_cases(void)
{
	ktap_check(KWQ_SQE_SLOTS(40) == 1 && KWQ_SQE_SLOTS(41) == 2 &&
		   KWQ_SQE_SLOTS(104) == 2 && KWQ_SQE_SLOTS(105) == 3 &&
		   KWQ_SQE_SLOTS(317) == 6 && KWQ_SQE_SLOTS(1024) == 17 &&
		   KWQ_SQE_SLOTS_MAX == 17, "sqe_slots_macro",
		   "41:%d 105:%d 317:%d 1024:%d", (int)KWQ_SQE_SLOTS(41),
		   (int)KWQ_SQE_SLOTS(105), (int)KWQ_SQE_SLOTS(317),
		   (int)KWQ_SQE_SLOTS(1024));
	long_key_case(40, 0, "key_40_one_slot");
	long_key_case(41, 0, "key_41_two_slots");
	long_key_case(104, 0, "key_104_two_slots");
	long_key_case(105, 0, "key_105_three_slots");
	long_key_case(317, 0, "key_317_six_slots");
	long_key_case(1024, 0, "key_1024_seventeen_slots");
	long_key_case(317, 29, "record_wraps_ring_end");
	long_key_case(1024, 20, "key_1024_wraps_ring_end");
}

/* --- hostile records --------------------------------------------------------- */

enum mut {
	M_BAD_OP, M_BAD_FLAG, M_LEN0, M_LEN_OVER, M_NSLOTS_MORE, M_NSLOTS_LESS,
	M_NSLOTS0, M_TRAIL_BYTE, M_TRAIL_BYTE_LAST, M_LEASE_SLOT_ON_ADD,
	M_ARG_ON_ADD, M_AFTER_ZERO, M_PRIO_ON_REMOVE, M_DONE_LEASE_LEN,
	M_NOP_LEN, M_CQE_FLAG_ON_LEASE_FLAG,
};

/*
 * A bad record, then a good add: the bad one completes EINVAL (index =
 * its first slot, op = its op), changes nothing, and the next is applied.
 */
static void hostile_case(enum mut m, const char *cname)
{
	uint8_t key[KWQ_KEY_LEN_MAX + 1];
	struct kwq_cqe c[40] = { 0 };
	struct kwq_sqe h;
	struct pair p;
	uint32_t klen = 10, nslots, start;
	char buf[256];
	int rc, e, nc, n;

	pair_open(&p, "rhostile", 64, 64, 2, cname);
	if (!p.ok) {
		ktap_check(0, cname, "no ring");
		pair_close(&p);
		return;
	}
	fill_key(key, sizeof(key), 1);
	memset(&h, 0, sizeof(h));
	h.op = KWQ_SQE_ADD;
	h.len = klen;
	switch (m) {
	case M_BAD_OP:
		h.op = 6;
		break;
	case M_BAD_FLAG:
		h.flags = 0x40;
		break;
	case M_LEN0:
		klen = 0;
		h.len = 0;
		break;
	case M_LEN_OVER:	/* nslots as a naive producer computes them */
		klen = KWQ_KEY_LEN_MAX + 1;
		h.len = KWQ_KEY_LEN_MAX + 1;
		break;
	case M_NSLOTS_MORE:
		h.nslots = 2;
		break;
	case M_NSLOTS_LESS:
		klen = 100;
		h.len = 100;
		h.nslots = 1;
		break;
	case M_NSLOTS0:
		h.nslots = 0;
		break;
	case M_TRAIL_BYTE:
	case M_TRAIL_BYTE_LAST:
		break;
	case M_LEASE_SLOT_ON_ADD:
		h.lease_slot = 1;
		break;
	case M_ARG_ON_ADD:
		h.arg = 1000;
		break;
	case M_AFTER_ZERO:
		h.flags = KWQ_SQE_F_AFTER;
		break;
	case M_PRIO_ON_REMOVE:
		h.op = KWQ_SQE_REMOVE;
		h.priority = 1;
		break;
	case M_DONE_LEASE_LEN:
		h.op = KWQ_SQE_DONE_LEASE;
		h.arg = 1;
		klen = 0;
		h.len = 4;
		break;
	case M_NOP_LEN:
		h.op = KWQ_SQE_NOP;
		h.len = 3;
		break;
	case M_CQE_FLAG_ON_LEASE_FLAG:
		h.op = KWQ_SQE_DONE_LEASE;
		h.flags = KWQ_SQE_F_REPLACE;
		h.arg = 1;
		klen = 0;
		h.len = 0;
		break;
	}
	if (m == M_LEN_OVER)
		nslots = KWQ_SQE_SLOTS(KWQ_KEY_LEN_MAX + 1);
	else if (m == M_NSLOTS_MORE || m == M_NSLOTS_LESS || m == M_NSLOTS0)
		nslots = h.nslots;
	else
		nslots = KWQ_SQE_SLOTS(klen);
	if (m != M_NSLOTS_MORE && m != M_NSLOTS_LESS && m != M_NSLOTS0)
		h.nslots = nslots;
	start = sq_write(&p.r, &h, key, klen, nslots ? nslots : 1);
	if (m == M_TRAIL_BYTE)		/* a byte past the key, first slot */
		sq_slot(&p.r, start)[24 + klen] = 'x';
	if (m == M_TRAIL_BYTE_LAST) {	/* a 41-byte key: byte 63 of slot 2 */
		p.r.tail = start;
		h.len = 41;
		h.nslots = 2;
		start = sq_write(&p.r, &h, key, 41, 2);
		sq_slot(&p.r, start + 1)[63] = 'x';
	}
	sq_add(&p.r, "next");
	publish(&p.r);
	errno = 0;
	rc = submit(&p.r);
	e = errno;
	nc = cq_take(&p.r, c, 40);
	n = kt_take(p.rfd, KWQ_GET_DETACHED, 0, 10, buf, sizeof(buf));
	ktap_check(rc == 0 && nc >= 1 && c[0].index == start &&
		   /* an op of no KWQ_SQE_* completes as a NOP */
		   c[0].op == (h.op <= KWQ_SQE_REMOVE ? h.op : KWQ_SQE_NOP) &&
		   c[0].res == -EINVAL && c[0].value == 0 &&
		   n == 1 && !strcmp(buf, "next") && sq_head(&p.r) == p.r.tail &&
		   !(ring_flags(&p.r) & KWQ_RING_F_BROKEN), cname,
		   "enter %d %s; %d completions, first index %u (want %u) op %u res %d; got %d '%s' (want 'next'); sq_head %u tail %u flags %#x",
		   rc, kt_ename(rc ? e : 0), nc, nc ? c[0].index : 0, start,
		   nc ? c[0].op : 0, nc ? c[0].res : 0, n, buf, sq_head(&p.r),
		   p.r.tail, ring_flags(&p.r));
	if (nc > 1)
		printf("    # %s: %d completions (the bad record's slots parsed on)\n",
		       cname, nc);
	pair_close(&p);
}

static void hostile_cases(void)
{
	hostile_case(M_BAD_OP, "bad_op_einval_next_applied");
	hostile_case(M_BAD_FLAG, "unknown_flag_einval_next_applied");
	hostile_case(M_LEN0, "add_len_0_einval_next_applied");
	hostile_case(M_LEN_OVER, "add_len_1025_einval_next_applied");
	hostile_case(M_NSLOTS_MORE, "nslots_over_len_einval_next_applied");
	hostile_case(M_NSLOTS_LESS, "nslots_under_len_einval_next_applied");
	hostile_case(M_NSLOTS0, "nslots_0_einval_next_applied");
	hostile_case(M_TRAIL_BYTE, "byte_past_key_einval_next_applied");
	hostile_case(M_TRAIL_BYTE_LAST, "byte_past_key_last_slot_einval");
	hostile_case(M_LEASE_SLOT_ON_ADD, "lease_slot_on_add_einval");
	hostile_case(M_ARG_ON_ADD, "arg_on_plain_add_einval");
	hostile_case(M_AFTER_ZERO, "add_after_zero_delay_einval");
	hostile_case(M_PRIO_ON_REMOVE, "priority_on_remove_einval");
	hostile_case(M_DONE_LEASE_LEN, "done_lease_with_len_einval");
	hostile_case(M_NOP_LEN, "nop_with_len_einval");
	hostile_case(M_CQE_FLAG_ON_LEASE_FLAG, "add_flag_on_done_lease_einval");
}

/* sq_tail ran past the ring: broken, nothing of it applied, ever. */
static void broken_case(void)
{
	struct kwq_ring_enter_args ea;
	struct kwq_cqe c[8] = { 0 };
	struct pair p;
	char key[16];
	int i, rc, e, nc;
	long len;

	pair_open(&p, "rbroken", 32, 32, 1, "tail_past_ring_breaks_it");
	if (!p.ok) {
		kt_fail_n(3, "broken_ring", "no ring");
		pair_close(&p);
		return;
	}
	for (i = 0; i < 32; i++) {
		snprintf(key, sizeof(key), "b%d", i);
		sq_add(&p.r, key);
	}
	__atomic_store_n(sq_tail_p(&p.r), 33, __ATOMIC_RELEASE);
	errno = 0;
	rc = submit(&p.r);
	e = errno;
	nc = cq_take(&p.r, c, 8);
	len = kt_len(p.rfd);
	ktap_check((ring_flags(&p.r) & KWQ_RING_F_BROKEN) && rc == -1 &&
		   e == EINVAL && nc == 1 && c[0].res == -EINVAL &&
		   c[0].index == 0 && len == 0 && sq_head(&p.r) == 0,
		   "tail_past_ring_breaks_it",
		   "flags %#x enter %d %s; %d completions (res %d index %u); len %ld sq_head %u",
		   ring_flags(&p.r), rc, kt_ename(rc ? e : 0), nc, c[0].res,
		   c[0].index, len, sq_head(&p.r));
	/* a sane tail afterwards: still nothing applied, EINVAL again */
	__atomic_store_n(sq_tail_p(&p.r), 1, __ATOMIC_RELEASE);
	errno = 0;
	rc = submit(&p.r);
	e = errno;
	nc = cq_take(&p.r, c, 8);
	len = kt_len(p.rfd);
	ktap_check(rc == -1 && e == EINVAL && nc == 0 && len == 0 &&
		   (ring_flags(&p.r) & KWQ_RING_F_BROKEN),
		   "broken_ring_stays_dead",
		   "enter %d %s, %d completions, len %ld flags %#x", rc,
		   kt_ename(rc ? e : 0), nc, len, ring_flags(&p.r));
	/* its lease slots still work */
	kt_add(p.rfd, "after-broken");
	rc = enter(&p.r, KWQ_ENTER_GET, 1, 0, 0, &ea);
	e = errno;
	nc = cq_take(&p.r, c, 8);
	ktap_check(rc == 0 && ea.leased == 1 && nc == 1 &&
		   c[0].op == KWQ_CQE_LEASE && !memcmp(lease_slot(&p.r, 0)->key,
						       "after-broken", 12),
		   "broken_ring_lease_slots_work", "enter %d %s leased %u, %d cqes",
		   rc, kt_ename(rc ? e : 0), ea.leased, nc);
	pair_close(&p);
}

/* --- completion backpressure --------------------------------------------------- */

static void backpressure_cases(void)
{
	struct kwq_cqe c[64] = { 0 };
	struct kwq_sqe bad;
	struct pair p;
	char key[16];
	int i, rc, e, nc, ok;
	long len;

	/* 40 failing records then 5 adds, 32 completions of room */
	pair_open(&p, "rbp", 64, 32, 0, "cq_full_enter_ebusy");
	if (!p.ok) {
		kt_fail_n(5, "backpressure", "no ring");
		pair_close(&p);
		return;
	}
	memset(&bad, 0, sizeof(bad));
	bad.op = 0x7f;
	bad.nslots = 1;
	for (i = 0; i < 40; i++)
		sq_write(&p.r, &bad, NULL, 0, 1);
	for (i = 0; i < 5; i++) {
		snprintf(key, sizeof(key), "bp%d", i);
		sq_add(&p.r, key);
	}
	publish(&p.r);
	errno = 0;
	rc = submit(&p.r);
	e = errno;
	len = kt_len(p.rfd);
	ktap_check(rc == -1 && e == EBUSY && sq_head(&p.r) == 32 && len == 0,
		   "cq_full_enter_ebusy", "enter %d %s sq_head %u len %ld",
		   rc, kt_ename(rc ? e : 0), sq_head(&p.r), len);
	nc = cq_take(&p.r, c, 64);
	ok = nc == 32;
	for (i = 0; ok && i < 32; i++)
		ok = c[i].index == (uint32_t)i && c[i].res == -EINVAL;
	ktap_check(ok, "cq_full_holds_every_error_in_order",
		   "%d completions, [%d] index %u res %d", nc, i - 1,
		   nc ? c[i ? i - 1 : 0].index : 0, nc ? c[i ? i - 1 : 0].res : 0);
	errno = 0;
	rc = submit(&p.r);
	e = errno;
	nc = cq_take(&p.r, c, 64);
	len = kt_len(p.rfd);
	ktap_check(rc == 0 && nc == 8 && c[0].index == 32 && c[7].index == 39 &&
		   len == 5 && sq_head(&p.r) == 45,
		   "cq_room_resumes_no_record_lost",
		   "enter %d %s, %d completions, len %ld (want 5) sq_head %u",
		   rc, kt_ename(rc ? e : 0), nc, len, sq_head(&p.r));
	pair_close(&p);

	/* a get needs a completion per key: none free, EBUSY, key stays */
	pair_open(&p, "rbp3", 64, 32, 1, "enter_get_cq_full_ebusy");
	if (!p.ok) {
		kt_fail_n(1, "enter_get_cq_full_ebusy", "no ring");
	} else {
		for (i = 0; i < 32; i++)
			sq_write(&p.r, &bad, NULL, 0, 1);
		publish(&p.r);
		submit(&p.r);
		kt_add(p.rfd, "waits-for-room");
		errno = 0;
		rc = enter(&p.r, KWQ_ENTER_GET, 1, 0, 0, NULL);
		e = errno;
		len = kt_len(p.rfd);
		ktap_check(rc == -1 && e == EBUSY && len == 1 &&
			   !lease_slot(&p.r, 0)->gen, "enter_get_cq_full_ebusy",
			   "enter %d %s, len %ld (want 1)", rc,
			   kt_ename(rc ? e : 0), len);
	}
	pair_close(&p);

	/* adds that ask for a completion: the ones that found none wait */
	pair_open(&p, "rbp2", 64, 32, 0, "cq_full_cqe_adds_not_lost");
	if (!p.ok) {
		ktap_check(0, "cq_full_cqe_adds_not_lost", "no ring");
		pair_close(&p);
		return;
	}
	for (i = 0; i < 40; i++) {
		snprintf(key, sizeof(key), "cqe%d", i);
		sq_rec(&p.r, KWQ_SQE_ADD, KWQ_SQE_F_CQE, key, strlen(key), 0, 0);
	}
	publish(&p.r);
	len = kt_len(p.rfd);	/* a reader's drain meets the full ring too */
	nc = cq_take(&p.r, c, 64);
	rc = submit(&p.r);
	nc += cq_take(&p.r, c, 64);
	ktap_check(len == 32 && rc == 0 && nc == 40 && kt_len(p.rfd) == 40,
		   "cq_full_cqe_adds_not_lost",
		   "len at full %ld (want 32), completions %d, len %ld (want 40)",
		   len, nc, kt_len(p.rfd));
	pair_close(&p);
}

/* --- RING_ENTER GET and lease slots ---------------------------------------------- */

static int find_lease(struct kwq_cqe *c, int nc, uint32_t slot)
{
	int i;

	for (i = 0; i < nc; i++)
		if (c[i].op == KWQ_CQE_LEASE && c[i].index == slot)
			return i;
	return -1;
}

static void lease_cases(void)
{
	struct kwq_ring_enter_args ea;
	struct kwq_stats_args s;
	struct kwq_lease_slot *ls;
	struct kwq_cqe c[16] = { 0 };
	const char *keys[3] = { "k0", "k1", "k2" };
	uint64_t gen[4] = { 0 }, g;
	uint32_t slot_of[3];
	struct pair p;
	char why[256] = "";
	int i, j, rc, e, nc;

	pair_open(&p, "rlease", 32, 32, 4, "enter_get");
	if (!p.ok) {
		kt_fail_n(16, "lease_case", "no ring");
		pair_close(&p);
		return;
	}
	/* bad enter arguments */
	KT_ERR(enter(&p.r, KWQ_ENTER_GET, 0, 0, 0, NULL), EINVAL,
	       "enter_get_max_0_einval");
	KT_ERR(enter(&p.r, KWQ_ENTER_GET, 5, 0, 0, NULL), EINVAL,
	       "enter_get_max_over_slots_einval");
	KT_ERR(enter(&p.r, KWQ_ENTER_GET, 2, 3, 0, NULL), EINVAL,
	       "enter_get_min_over_max_einval");
	KT_ERR(enter(&p.r, 0x80, 0, 0, 0, NULL), EINVAL,
	       "enter_unknown_flag_einval");
	memset(&ea, 0, sizeof(ea));
	ea.flags = KWQ_ENTER_SUBMIT;
	ea.pad = 1;
	KT_ERR(ioctl(p.r.fd, KWQ_IOC_RING_ENTER, &ea), EINVAL,
	       "enter_pad_nonzero_einval");
	KT_ERR(enter(&p.r, KWQ_ENTER_GET, 1, 1, 20 * KT_MS, NULL), ETIMEDOUT,
	       "enter_get_min_times_out_empty");

	kwq_add_priority(p.rfd, "k0", 2, 3);
	kwq_add_priority(p.rfd, "k1", 2, 3);
	kwq_add_priority(p.rfd, "k2", 2, 3);
	rc = enter(&p.r, KWQ_ENTER_GET, 4, 0, 0, &ea);
	e = errno;
	nc = cq_take(&p.r, c, 16);
	if (rc)
		snprintf(why, sizeof(why), "enter: %s", kt_ename(e));
	else if (ea.leased != 3 || nc != 3)
		snprintf(why, sizeof(why), "leased %u, %d completions", ea.leased, nc);
	for (i = 0; !why[0] && i < 3; i++) {
		if (c[i].op != KWQ_CQE_LEASE || c[i].res || c[i].index >= 4 ||
		    !c[i].value) {
			snprintf(why, sizeof(why), "cqe %d: op %#x res %d index %u value %llu",
				 i, c[i].op, c[i].res, c[i].index, ULL(c[i].value));
			break;
		}
		for (j = 0; j < i; j++)
			if (c[j].index == c[i].index)
				snprintf(why, sizeof(why), "slot %u twice", c[i].index);
		ls = lease_slot(&p.r, c[i].index);
		if (ls->gen != c[i].value || ls->len != 2 || ls->priority != 3 ||
		    memcmp(ls->key, keys[i], 2))
			snprintf(why, sizeof(why),
				 "slot %u: gen %llu (cqe %llu) len %u prio %d key %.2s, want %s",
				 c[i].index, ULL(ls->gen), ULL(c[i].value), ls->len,
				 ls->priority, ls->key, keys[i]);
		slot_of[i] = c[i].index;
		gen[c[i].index] = c[i].value;
	}
	if (!ktap_check(!why[0], "enter_get_leases_into_slots_in_order", "%s", why)) {
		pair_close(&p);
		kt_fail_n(9, "lease_case", "no leases");
		return;
	}
	s = stats(p.rfd);
	ktap_check(s.processing == 3 && s.len == 0, "leased_keys_processing",
		   "processing %llu len %llu", ULL(s.processing), ULL(s.len));

	/* wrong generation: ESTALE, nothing changes */
	sq_done_lease(&p.r, 0, slot_of[0], gen[slot_of[0]] + 1);
	publish(&p.r);
	rc = submit(&p.r);
	nc = cq_take(&p.r, c, 16);
	s = stats(p.rfd);
	ktap_check(rc == 0 && nc == 1 && c[0].op == KWQ_SQE_DONE_LEASE &&
		   c[0].res == -ESTALE && s.processing == 3 &&
		   lease_slot(&p.r, slot_of[0])->gen == gen[slot_of[0]],
		   "done_lease_wrong_gen_estale",
		   "enter %d, %d cqes, res %d processing %llu", rc, nc,
		   nc ? c[0].res : 0, ULL(s.processing));

	/* out of range slot: EINVAL */
	sq_done_lease(&p.r, 0, 4, gen[slot_of[0]]);
	publish(&p.r);
	rc = submit(&p.r);
	nc = cq_take(&p.r, c, 16);
	s = stats(p.rfd);
	ktap_check(rc == 0 && nc == 1 && c[0].res == -EINVAL && s.processing == 3,
		   "done_lease_slot_out_of_range_einval",
		   "enter %d, %d cqes, res %d processing %llu", rc, nc,
		   nc ? c[0].res : 0, ULL(s.processing));

	/* a free slot: nothing to finish */
	for (i = 0; i < 4 && gen[i]; i++)
		;
	sq_done_lease(&p.r, 0, (uint32_t)i, 1);
	publish(&p.r);
	rc = submit(&p.r);
	nc = cq_take(&p.r, c, 16);
	ktap_check(rc == 0 && nc == 1 && c[0].res == -ESTALE,
		   "done_lease_free_slot_estale", "slot %d: %d cqes, res %d", i,
		   nc, nc ? c[0].res : 0);

	/* the right generation finishes it: slot freed, key not processing */
	g = gen[slot_of[0]];
	sq_done_lease(&p.r, KWQ_SQE_F_CQE, slot_of[0], g);
	publish(&p.r);
	rc = submit(&p.r);
	nc = cq_take(&p.r, c, 16);
	s = stats(p.rfd);
	ktap_check(rc == 0 && nc == 1 && c[0].res == 0 &&
		   c[0].op == KWQ_SQE_DONE_LEASE && s.processing == 2 &&
		   lease_slot(&p.r, slot_of[0])->gen == 0,
		   "done_lease_right_gen_finishes",
		   "enter %d, %d cqes, res %d processing %llu slot gen %llu", rc,
		   nc, nc ? c[0].res : 0, ULL(s.processing),
		   ULL(lease_slot(&p.r, slot_of[0])->gen));
	/* the same lease again: stale now */
	sq_done_lease(&p.r, 0, slot_of[0], g);
	publish(&p.r);
	rc = submit(&p.r);
	nc = cq_take(&p.r, c, 16);
	ktap_check(rc == 0 && nc == 1 && c[0].res == -ESTALE,
		   "done_lease_twice_estale", "%d cqes, res %d", nc,
		   nc ? c[0].res : 0);
	/* k0 finished: added again it is ready at once (not dirty) */
	kt_add(p.rfd, "k0");
	ktap_check(kt_len(p.rfd) == 1 && stats(p.rfd).processing == 2,
		   "finished_key_readded_ready",
		   "len %ld", kt_len(p.rfd));

	/* two free slots (the freed one and the unused one): both taken */
	kt_add(p.rfd, "k3");
	kt_add(p.rfd, "k4");
	rc = enter(&p.r, KWQ_ENTER_GET, 2, 0, 0, &ea);
	nc = cq_take(&p.r, c, 16);
	j = find_lease(c, nc, slot_of[0]);
	ktap_check(rc == 0 && ea.leased == 2 && nc == 2 && j >= 0 &&
		   lease_slot(&p.r, slot_of[0])->gen == c[j].value &&
		   c[j].value != g, "freed_slot_reused_new_gen",
		   "enter %d leased %u, %d cqes, slot %u gen %llu (old %llu)", rc,
		   ea.leased, nc, slot_of[0],
		   ULL(lease_slot(&p.r, slot_of[0])->gen), ULL(g));
	/* every slot held, a key ready: ENOBUFS, the key stays ready */
	errno = 0;
	rc = enter(&p.r, KWQ_ENTER_GET, 4, 0, 0, &ea);
	e = errno;
	ktap_check(rc == -1 && e == ENOBUFS && kt_len(p.rfd) == 1,
		   "enter_get_no_free_slot_enobufs", "enter %d %s, len %ld",
		   rc, kt_ename(rc ? e : 0), kt_len(p.rfd));
	pair_close(&p);
}

/* get_max above the free slots takes only the free ones. */
static void lease_partial_case(void)
{
	struct kwq_ring_enter_args ea;
	struct kwq_cqe c[8] = { 0 };
	struct pair p;
	int rc, nc, i;

	pair_open(&p, "rpart", 32, 32, 2, "enter_get_takes_only_free_slots");
	if (!p.ok) {
		ktap_check(0, "enter_get_takes_only_free_slots", "no ring");
		pair_close(&p);
		return;
	}
	for (i = 0; i < 4; i++) {
		char k[8];

		snprintf(k, sizeof(k), "p%d", i);
		kt_add(p.rfd, k);
	}
	rc = enter(&p.r, KWQ_ENTER_GET, 1, 0, 0, &ea);
	rc = rc ? rc : enter(&p.r, KWQ_ENTER_GET, 2, 0, 0, &ea);
	nc = cq_take(&p.r, c, 8);
	ktap_check(rc == 0 && ea.leased == 1 && nc == 2 && kt_len(p.rfd) == 2,
		   "enter_get_takes_only_free_slots",
		   "enter %d leased %u (want 1), %d cqes, len %ld (want 2)", rc,
		   ea.leased, nc, kt_len(p.rfd));
	pair_close(&p);
}

/* SUBMIT and GET in one call: the record applied, then its key leased. */
static void submit_get_case(void)
{
	struct kwq_ring_enter_args ea;
	struct kwq_cqe c[4] = { 0 };
	struct pair p;
	struct kwq_lease_slot *ls = NULL;
	int rc, nc;

	pair_open(&p, "rsubget", 32, 32, 1, "enter_submit_get_one_call");
	if (!p.ok) {
		kt_fail_n(2, "submit_get", "no ring");
		pair_close(&p);
		return;
	}
	sq_add(&p.r, "sg");
	publish(&p.r);
	rc = enter(&p.r, KWQ_ENTER_SUBMIT | KWQ_ENTER_GET, 1, 1, 5 * KT_SEC, &ea);
	nc = cq_take(&p.r, c, 4);
	if (nc == 1 && c[0].index == 0)
		ls = lease_slot(&p.r, 0);
	ktap_check(rc == 0 && ea.submitted == 1 && ea.leased == 1 && nc == 1 &&
		   c[0].op == KWQ_CQE_LEASE && ls && ls->len == 2 &&
		   !memcmp(ls->key, "sg", 2) && ls->gen == c[0].value,
		   "enter_submit_get_one_call",
		   "enter %d submitted %u leased %u, %d cqes op %#x index %u",
		   rc, ea.submitted, ea.leased, nc, c[0].op, c[0].index);
	ring_unmap(&p.r);
	close(p.r.fd);
	p.r.fd = kt_attach(p.name);	/* the same queue: a ring without slots */
	rc = ring_open(&p.r, p.r.fd, 32, 32, 0, "enter_get_without_slots_einval");
	errno = 0;
	rc = rc ? -2 : enter(&p.r, KWQ_ENTER_GET, 1, 0, 0, NULL);
	ktap_check(rc == -1 && errno == EINVAL, "enter_get_without_slots_einval",
		   "enter %d %s", rc, kt_ename(errno));
	pair_close(&p);
}

/* KWQ_SQE_F_RATE_LIMITED: the completion's value is the delay chosen. */
static void rate_limited_case(void)
{
	struct kwq_cqe c[4] = { 0 };
	struct ring r;
	char name[KWQ_NAME_LEN];
	struct kwq_queue_opts o;
	int qfd, nc1, nc2, ok;

	memset(&o, 0, sizeof(o));
	o.nr_limits = 1;
	o.limits[0].type = KWQ_LIMIT_EXPONENTIAL;
	o.limits[0].a = KT_MS;
	o.limits[0].b = 1000 * KT_SEC;
	o.max_retries = 2;
	qfd = kt_queue("rrate", &o, name);
	ok = ring_open(&r, kt_attach(name), 32, 32, 0, "rate_limited") == 0;
	if (!ok) {
		kt_fail_n(2, "rate_limited", "no ring");
		goto out;
	}
	sq_rec(&r, KWQ_SQE_ADD, KWQ_SQE_F_RATE_LIMITED | KWQ_SQE_F_CQE, "rl", 2, 0, 0);
	sq_rec(&r, KWQ_SQE_ADD, KWQ_SQE_F_RATE_LIMITED | KWQ_SQE_F_CQE, "rl", 2, 0, 0);
	publish(&r);
	submit(&r);
	nc1 = cq_take(&r, c, 4);
	ktap_check(nc1 == 2 && c[0].res == 0 && c[0].value == (uint64_t)KT_MS &&
		   c[1].res == 0 && c[1].value == 2 * (uint64_t)KT_MS,
		   "rate_limited_add_completes_with_delay",
		   "%d cqes, values %llu %llu (want 1 ms, 2 ms) res %d %d", nc1,
		   ULL(c[0].value), ULL(c[1].value), c[0].res, c[1].res);
	sq_rec(&r, KWQ_SQE_ADD, KWQ_SQE_F_RATE_LIMITED | KWQ_SQE_F_CQE, "rl", 2, 0, 0);
	publish(&r);
	submit(&r);
	nc2 = cq_take(&r, c, 4);
	ktap_check(nc2 == 1 && c[0].res == 0 && c[0].value == KWQ_DELAY_DEAD,
		   "rate_limited_add_past_retries_dead",
		   "%d cqes, value %llu res %d", nc2, ULL(c[0].value), c[0].res);
	ring_unmap(&r);
	close(r.fd);
out:
	kwq_destroy(qfd, name);
	close(qfd);
}

/*
 * poll(): POLLIN while keys are ready, not for completions (a process
 * reads those after its doorbell, or whenever cq_tail moved).
 */
static void poll_case(void)
{
	struct pollfd pf;
	struct kwq_cqe c[4] = { 0 };
	struct kwq_sqe bad;
	struct pair p;
	int r1, r2, ev1, nc;

	pair_open(&p, "rpoll", 32, 32, 0, "poll_completions");
	if (!p.ok) {
		kt_fail_n(1, "poll_completions", "no ring");
		pair_close(&p);
		return;
	}
	memset(&bad, 0, sizeof(bad));
	bad.op = KWQ_CQE_LEASE;
	bad.nslots = 1;
	sq_write(&p.r, &bad, NULL, 0, 1);
	publish(&p.r);
	submit(&p.r);
	pf.fd = p.r.fd;
	pf.events = POLLIN;
	pf.revents = 0;
	r1 = poll(&pf, 1, 0);
	ev1 = pf.revents;
	nc = cq_take(&p.r, c, 4);
	/* Its op is no KWQ_SQE_*: a NOP's error, not a lease. */
	ktap_check(nc == 1 && c[0].op == KWQ_SQE_NOP && c[0].res == -EINVAL,
		   "unknown_op_completes_as_nop_not_lease",
		   "%d cqes, op %#x res %d", nc, nc ? c[0].op : 0,
		   nc ? c[0].res : 0);
	pf.revents = 0;
	kt_add(p.r.fd, "polled");
	r2 = poll(&pf, 1, 0);
	ktap_check(r1 == 0 && !ev1 && nc == 1 && r2 == 1 &&
		   (pf.revents & POLLIN),
		   "poll_pollin_for_keys_not_completions",
		   "a completion waiting: %d revents %#x; %d cqes; a key ready: %d revents %#x",
		   r1, ev1, nc, r2, pf.revents);
	pair_close(&p);
}

/*
 * A lease whose processing deadline passed ends: the key goes back as a
 * failure (ready or waiting for the limiter's delay); DONE_LEASE of it
 * then is ESTALE (as KWQ_IOC_DONE after a revoked lease), the key there
 * once.
 */
static void deadline_case(void)
{
	struct kwq_ring_enter_args ea;
	struct kwq_stats_args s;
	struct kwq_cqe c[4] = { 0 };
	struct pair p;
	int i, rc, nc;
	uint64_t gen = 0;
	uint32_t slot = 0;

	pair_open(&p, "rdeadline", 32, 32, 1, "done_lease_after_deadline_estale");
	if (!p.ok) {
		kt_fail_n(1, "done_lease_after_deadline_estale", "no ring");
		pair_close(&p);
		return;
	}
	kt_add(p.rfd, "dl");
	memset(&ea, 0, sizeof(ea));
	ea.flags = KWQ_ENTER_GET;
	ea.get_max = 1;
	ea.processing_timeout_ns = KWQ_PROCESSING_TIMEOUT_MIN;
	rc = ioctl(p.r.fd, KWQ_IOC_RING_ENTER, &ea);
	if (cq_take(&p.r, c, 4) == 1) {
		slot = c[0].index;
		gen = c[0].value;
	}
	/* the deadline passes; wait (bounded) until the lease was taken back */
	for (i = 0; i < 5000; i++) {
		s = stats(p.rfd);
		if (!s.processing)
			break;
		kt_sleep_ms(1);
	}
	sq_done_lease(&p.r, 0, slot, gen);
	publish(&p.r);
	submit(&p.r);
	nc = cq_take(&p.r, c, 4);
	s = stats(p.rfd);
	ktap_check(rc == 0 && ea.leased == 1 && gen && nc == 1 &&
		   c[0].res == -ESTALE && s.processing == 0 &&
		   s.len + s.waiting == 1, "done_lease_after_deadline_estale",
		   "enter %d leased %u gen %llu; %d cqes res %d; processing %llu len %llu waiting %llu",
		   rc, ea.leased, ULL(gen), nc, c[0].res, ULL(s.processing),
		   ULL(s.len), ULL(s.waiting));
	pair_close(&p);
}

/* --- crash safety ---------------------------------------------------------------- */

/* A child attaches, sets up a ring and does @what, reports, then waits. */
static pid_t ring_child(const char *name, int what, int *rfd)
{
	int pp[2];
	pid_t pid;

	if (pipe(pp) < 0)
		exit(1);
	pid = fork();
	if (pid == 0) {
		struct kwq_ring_enter_args ea;
		struct ring r;
		char key[16];
		int i, v = -1;

		close(pp[0]);
		if (ring_open(&r, kt_attach(name), 32, 32, 4, "child") == 0) {
			if (what == 0) {	/* producer: 10 adds, no doorbell */
				for (i = 0; i < 10; i++) {
					snprintf(key, sizeof(key), "c%d", i);
					sq_add(&r, key);
				}
				publish(&r);
				v = 10;
			} else {		/* worker: lease 3 keys */
				v = enter(&r, KWQ_ENTER_GET, 4, 0, 0, &ea) ?
				    -errno : (int)ea.leased;
			}
		}
		dprintf(pp[1], "%d\n", v);
		for (;;)
			pause();
	}
	close(pp[1]);
	*rfd = pp[0];
	return pid;
}

static int read_int(int fd)
{
	char b[32];
	ssize_t n = read(fd, b, sizeof(b) - 1);

	close(fd);
	if (n <= 0)
		return -1000;
	b[n] = '\0';
	return atoi(b);
}

static void crash_cases(void)
{
	struct kwq_stats_args s0, s;
	char name[KWQ_NAME_LEN], buf[256];
	int fd, rfd, v, st, n;
	pid_t pid;

	fd = kt_queue("rcrash", NULL, name);
	pid = ring_child(name, 0, &rfd);
	v = read_int(rfd);
	kill(pid, SIGKILL);
	st = kt_wait(pid);
	n = kt_take(fd, KWQ_GET_DETACHED, 0, 20, buf, sizeof(buf));
	ktap_check(v == 10 && st == 128 + SIGKILL && n == 10 &&
		   !strcmp(buf, "c0,c1,c2,c3,c4,c5,c6,c7,c8,c9"),
		   "killed_producer_published_adds_applied",
		   "child %d status %d; got %d '%s'", v, st, n, buf);

	kwq_destroy(fd, name);
	close(fd);

	/* a fresh queue: the keys taken above are processing (detached) */
	fd = kt_queue("rcrashw", NULL, name);
	kt_add(fd, "w0");
	kt_add(fd, "w1");
	kt_add(fd, "w2");
	s0 = stats(fd);
	pid = ring_child(name, 1, &rfd);
	v = read_int(rfd);
	s = stats(fd);
	ktap_check(v == 3 && s.processing == 3 && s.len == 0,
		   "ring_worker_holds_leases", "child leased %d, processing %llu",
		   v, ULL(s.processing));
	kill(pid, SIGKILL);
	st = kt_wait(pid);
	s = stats(fd);
	ktap_check(st == 128 + SIGKILL && s.processing == 0 && s.len == 3 &&
		   s.lease_returns == s0.lease_returns + 3,
		   "killed_ring_worker_leases_come_back",
		   "status %d processing %llu len %llu lease_returns +%llu", st,
		   ULL(s.processing), ULL(s.len),
		   ULL(s.lease_returns - s0.lease_returns));
	kwq_destroy(fd, name);
	close(fd);
}

/* close() without munmap(): leases back at close, the memory stays mapped. */
static void close_case(void)
{
	struct kwq_ring_enter_args ea;
	struct kwq_stats_args s;
	struct kwq_cqe c[8] = { 0 };
	struct pair p;
	int rc, i;

	pair_open(&p, "rclose", 32, 32, 4, "close_without_munmap");
	if (!p.ok) {
		for (i = 0; i < 3; i++)
			ktap_check(0, "close_case", "no ring");
		pair_close(&p);
		return;
	}
	kt_add(p.rfd, "h0");
	kt_add(p.rfd, "h1");
	rc = enter(&p.r, KWQ_ENTER_GET, 4, 0, 0, &ea);
	cq_take(&p.r, c, 8);
	close(p.r.fd);
	s = stats(p.rfd);
	ktap_check(rc == 0 && ea.leased == 2 && s.processing == 0 && s.len == 2,
		   "close_without_munmap_returns_leases",
		   "leased %u; after close processing %llu len %llu", ea.leased,
		   ULL(s.processing), ULL(s.len));
	read_ok = 0;
	if (!sigsetjmp(segv_jmp, 1)) {
		signal(SIGSEGV, segv_handler);
		for (i = 0; i < 4; i++)
			read_sink += __atomic_load_n(&lease_slot(&p.r, i)->gen,
						     __ATOMIC_RELAXED);
		read_sink += __atomic_load_n(&p.r.st->ready, __ATOMIC_RELAXED) +
			     sq_head(&p.r) + *sq_tail_p(&p.r);
		read_ok = 1;
	}
	signal(SIGSEGV, SIG_DFL);
	ktap_check(read_ok, "mapping_readable_after_close", "SIGSEGV reading it");
	/* records published after close are not read by anyone */
	sq_add(&p.r, "orphan");
	publish(&p.r);
	ktap_check(kt_len(p.rfd) == 2, "closed_ring_not_drained",
		   "len %ld, want 2", kt_len(p.rfd));
	ring_unmap(&p.r);
	p.r.fd = -1;
	kwq_destroy(p.rfd, p.name);
	close(p.rfd);
}

/* --- queue state through the status page, permissions ---------------------------- */

static void state_cases(void)
{
	struct kwq_cqe c[4] = { 0 };
	struct pair p;
	int rc, e, nc;

	pair_open(&p, "rstate", 32, 32, 0, "status_shutdown");
	if (!p.ok) {
		ktap_check(0, "status_shutdown_flag", "no ring");
		ktap_check(0, "add_record_after_shutdown_eshutdown", "no ring");
		ktap_check(0, "status_destroyed_flag_enter_eidrm", "no ring");
		pair_close(&p);
		return;
	}
	kwq_shutdown(p.rfd, 0);
	ktap_check(p.r.st->flags == KWQ_STATUS_SHUTDOWN, "status_shutdown_flag",
		   "flags %#x", p.r.st->flags);
	sq_add(&p.r, "late");
	publish(&p.r);
	rc = submit(&p.r);
	nc = cq_take(&p.r, c, 4);
	ktap_check(rc == 0 && nc == 1 && c[0].res == -ESHUTDOWN,
		   "add_record_after_shutdown_eshutdown", "enter %d, %d cqes res %d",
		   rc, nc, nc ? c[0].res : 0);
	kwq_destroy(p.rfd, p.name);
	errno = 0;
	rc = submit(&p.r);
	e = errno;
	ktap_check((p.r.st->flags & KWQ_STATUS_DESTROYED) && rc == -1 &&
		   e == EIDRM, "status_destroyed_flag_enter_eidrm",
		   "flags %#x enter %d %s", p.r.st->flags, rc, kt_ename(rc ? e : 0));
	ring_unmap(&p.r);
	close(p.r.fd);
	close(p.rfd);
}

/*
 * A user the queue's mode refuses cannot attach, so has no ring: setup
 * ENOTCONN. A user it admits (0606) adds through a ring as by ioctl.
 */
static int perm_child(const char *name, int admitted)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct kwq_ring_setup_args a;
		struct ring r;
		int fd = kwq_open_dev(NULL), fd2 = kwq_open_dev(NULL);

		if (fd < 0 || fd2 < 0)
			_exit(254);
		if (setgroups(0, NULL) || setgid(1000) || setuid(1000))
			_exit(255);
		if (!admitted) {
			if (kwq_open(fd, name) == 0)
				_exit(200);
			if (errno != EACCES)
				_exit(201);
			_exit(ring_setup_raw(fd, &a, 32, 32, 0) ? errno : 0);
		}
		if (kwq_open(fd, name) < 0)
			_exit(202);
		if (ring_open(&r, fd, 32, 32, 0, "perm") != 0)
			_exit(203);
		sq_add(&r, "from-user");
		publish(&r);
		_exit(submit(&r) ? 204 : 0);
	}
	return kt_wait(pid);
}

static void perm_cases(void)
{
	struct kwq_queue_opts o;
	char q644[KWQ_NAME_LEN], q606[KWQ_NAME_LEN], buf[64];
	int fd644, fd606, r;

	memset(&o, 0, sizeof(o));
	o.mode = 0644;
	fd644 = kt_queue("rperm644", &o, q644);
	o.mode = 0606;
	fd606 = kt_queue("rperm606", &o, q606);
	r = perm_child(q644, 0);
	ktap_check(r == ENOTCONN, "read_only_user_no_ring_enotconn",
		   "got %d (%s)", r, kt_ename(r < 200 ? r : 0));
	ktap_check(kt_len(fd644) == 0, "read_only_user_added_nothing", "len %ld",
		   kt_len(fd644));
	r = perm_child(q606, 1);
	kt_take(fd606, KWQ_GET_DETACHED, 0, 4, buf, sizeof(buf));
	ktap_check(r == 0 && !strcmp(buf, "from-user"),
		   "admitted_user_adds_through_ring", "child %d, got '%s'", r, buf);

	/*
	 * /dev/kwq opened O_RDONLY and attached: the ring is set up, but its
	 * user region cannot be mapped writable (the mm's check of a shared
	 * writable mapping), so nothing can be submitted through it.
	 */
	{
		struct kwq_ring_setup_args a;
		int ro = open(KWQ_DEFAULT_DEVICE, O_RDONLY | O_CLOEXEC), e;
		void *m = MAP_FAILED;

		r = ro < 0 || kwq_open(ro, q606) ? -2 :
		    ring_setup_raw(ro, &a, 32, 32, 0);
		errno = 0;
		if (!r)
			m = map_region(ro, KWQ_RING_OFF_USER, a.user_size,
				       PROT_READ | PROT_WRITE);
		e = errno;
		ktap_check(!r && m == MAP_FAILED && e == EACCES,
			   "o_rdonly_fd_user_region_not_writable",
			   "setup %d, mmap %s", r,
			   m == MAP_FAILED ? kt_ename(e) : "mapped");
		if (m != MAP_FAILED)
			munmap(m, a.user_size);
		if (ro >= 0)
			close(ro);
	}
	kwq_destroy(fd644, q644);
	kwq_destroy(fd606, q606);
	close(fd644);
	close(fd606);
}

/*
 * Ring memory is charged to the byte budget: a user (not CAP_SYS_ADMIN)
 * whose budget is 256 KiB sets up no 4096/4096/256 ring (~0.6 MiB), and
 * a small ring still fits after the refusal.
 */
#define BPARAM		"/sys/module/kwq/parameters/max_bytes_per_user"
#define BUDGET_UID	4245

static void budget_case(void)
{
	char old[64] = "", name[KWQ_NAME_LEN];
	struct kwq_ring_setup_args a;
	int fd, st, big = -1, small = -1;
	pid_t pid;
	ssize_t n;

	fd = open(BPARAM, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, old, sizeof(old) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0 || kt_write_file(BPARAM, "262144") < 0) {
		kt_fail_n(2, "ring_budget", "cannot set " BPARAM);
		return;
	}
	kt_name(name, "rbudget");
	pid = fork();
	if (pid == 0) {
		int dfd = kwq_open_dev(NULL);

		if (dfd < 0 || setgroups(0, NULL) || setgid(BUDGET_UID) ||
		    setuid(BUDGET_UID) || kwq_create(dfd, name, NULL))
			_exit(255);
		big = ring_setup_raw(dfd, &a, KWQ_RING_ENTRIES_MAX,
				     KWQ_RING_ENTRIES_MAX, KWQ_RING_LEASES_MAX) ?
		      errno : 0;
		small = ring_setup_raw(dfd, &a, 32, 32, 0) ? errno : 0;
		kwq_destroy(dfd, name);
		_exit((big & 0x7f) | (small ? 0x80 : 0));
	}
	st = kt_wait(pid);
	kt_write_file(BPARAM, old);
	if (st >= 0 && st < 255) {
		big = st & 0x7f;
		small = st & 0x80 ? -1 : 0;
	}
	ktap_check(big == EDQUOT, "ring_over_byte_budget_edquot",
		   "child %d: big ring %s, want EDQUOT", st, kt_ename(big > 0 ? big : 0));
	ktap_check(small == 0, "small_ring_within_budget_after_refusal",
		   "child %d", st);
}

int main(void)
{
	pagesz = sysconf(_SC_PAGESIZE);
	kt_setup("kwq_ring", NCASES, 300);
	if (getuid() != 0) {
		printf("    # must run as root\n");
		return 1;
	}
	setup_cases();
	layout_case(32, 32, 0, "layout_min_no_leases_consistent");
	layout_case(64, 256, 7, "layout_odd_leases_consistent");
	layout_case(4096, 4096, 256, "layout_max_consistent");
	fresh_ring_case();
	mmap_cases();
	producer_cases();
	user_region_case();
	priority_case();
	other_ops_cases();
	wakeup_case();
	poll_wakeup_case();
	drain_done_lease_case();
	long_key_cases();
	hostile_cases();
	broken_case();
	backpressure_cases();
	lease_cases();
	lease_partial_case();
	submit_get_case();
	deadline_case();
	rate_limited_case();
	poll_case();
	crash_cases();
	close_case();
	state_cases();
	perm_cases();
	budget_case();
	return ktap_end();
}
