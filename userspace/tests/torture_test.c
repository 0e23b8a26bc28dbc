// SPDX-License-Identifier: GPL-2.0
/*
 * Exactly once under chaos (issue 34): producer and worker processes,
 * and kernel threads (kwq_torture.ko, on a fifth queue the module
 * publishes and the processes share), run a realistic workload on five
 * queues (priorities, add_after, rate-limited adds, processing deadlines
 * short enough to pass, dead sets, batches, remove, forget, purge; half
 * the processes also through rings: adds, lease slots, DONE_LEASE
 * records) while the parent, the fault driver, SIGKILLs workers and
 * producers at random (also in the middle of a batch call,
 * mid-ring-submission, or while holding keys) and forks replacements,
 * stops kernel threads between two calls (the keys they hold returned
 * as a dead holder's), shuts down (half the time), destroys and
 * re-creates the fourth queue while it is attached, lowers
 * max_bytes_per_user for a moment, re-creates the fourth queue under a
 * lowered max_queues_per_user (refused EDQUOT) or max_items_per_queue (a
 * small cap: adds refused ENOSPC), limits the producers' memory cgroup,
 * churns IPC namespaces, takes a CPU offline and online, makes one call
 * in 40 fail an allocation (fail-nth), and tries rmmod (refused while in
 * use; at the end, with all closed, it must succeed, and the module is
 * loaded again).
 *
 * The kernel threads' calls are recorded by the module, on the same
 * clock, and merged into the history (kt_merge()).
 *
 * Every call is recorded: its invocation (process, queue, op, keys, args,
 * CLOCK_MONOTONIC time) before the call, its completion (result, errno,
 * time, the keys a get handed out) after it, in records of a MAP_SHARED
 * arena mapped before any fork, claimed in chunks per process. A record
 * is marked complete only once fully written: a SIGKILLed process's calls
 * survive, the one it was in as an invocation without completion (an
 * unknown outcome, as Jepsen treats it). At the end the parent revives
 * the dead sets, drains every queue (each remaining key comes out,
 * recorded too) and checks the merged history against the model, here in
 * C: the VM (a busybox initramfs) has no Python, and a checker in the
 * test judges the run through KTAP like every other suite, with no
 * history to carry out of the VM. Per key:
 *
 *  - no add lost: every add that returned success, and every lease that
 *    ended otherwise than by a successful done (revoked at its deadline,
 *    returned at its holder's death: both requeue the key), is followed
 *    by a consumption that completed after it: a hand-out, a remove or a
 *    purge (a dead key is revived for the drain, so dead-set moves need
 *    no exception; no shutdown drops a key here). Unknown outcomes count
 *    for the model: an unknown add obliges nothing, an unknown remove or
 *    purge may have consumed anything before its process died;
 *  - never two holders at once: a hold is surely live from its get's
 *    completion until the first moment it could have ended (its done's
 *    invocation; with no successful done, the earlier of its processing
 *    deadline counted from the get's invocation and its holder's kill);
 *    two such intervals of one key must not overlap;
 *  - no hand-out before an add_after (or rate-limited) deadline: the
 *    first hand-out of a key added once with a delay completes no earlier
 *    than the add's invocation plus the delay (tolerance 0: the kernel
 *    reads its clock after the invocation, both are CLOCK_MONOTONIC);
 *  - no lost wake-up: a key made ready by a plain add must not sit ready
 *    more than LOST_WAKE_NS while a getter of its queue waited from
 *    before (woken getters take keys at once; the getters wait 2 s, so a
 *    key nobody was woken for waits until a timeout or a new get). Calm
 *    spells without faults, a key now and then, let the workers wait. A
 *    hang detector with a wide margin, not a timing goal;
 *  - FIFO within a priority: of two fresh keys added at one priority,
 *    one surely ready before the other's add began is not surely taken
 *    after it (nor after it in one get);
 *  - the delay a rate-limited add answered is the limiters' for the
 *    key's failure count, known within bounds from the history (queues
 *    without a dead set; exact where no token bucket is combined);
 *  - calls on a destroyed queue's file fail EIDRM; adds fail only with
 *    EDQUOT, ENOSPC, ENOMEM, EIDRM or ESHUTDOWN; a destroy consumes
 *    every key and ends every lease of its queue;
 *  - after a shutdown no add takes effect, and a key surely ready at it
 *    is handed out before a get finds nothing ready (ESHUTDOWN);
 *  - the kernel's final statistics (KWQ_IOC_STATS) agree with the
 *    history's counts (bounds where calls have unknown outcomes).
 *
 * The first violating key is printed with its whole sub-history.
 *
 *   torture_test [-t SECONDS] [-s SEED] [-p PRODUCERS] [-w WORKERS]
 *                [-m MODULE]   (loaded again after the final rmmod;
 *                               default ../kwq.ko beside the test)
 */
#include "kwqtest.h"
#include "../../tools/testing/torture/kwq_torture.h"

#include <dirent.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#define NQ		5
#define QX		3		/* the queue faults destroy and re-create */
#define KQ		4		/* the kernel threads' published queue */
#define UQ_KEPT		(NQ - 2)	/* uid TORTURE_UID's queues but QX */
#define POOL		KWQ_TORTURE_POOL	/* shared keys per queue */
#define KMAX		KWQ_TORTURE_KMAX	/* keys in one record */
#define BATCH		8		/* keys in one batch call */
#define CHUNK		256		/* records a process claims at once */
#define ARENA_BYTES	(256UL << 20)
#define RESERVE		131072		/* kept for the parent: kthreads, drain */
#define MAX_SLOTS	16384
#define MAX_PROCS	16
#define GET_WAIT_NS	(2 * KT_SEC)
#define LOST_WAKE_NS	(1 * KT_SEC)
#define T_INF		INT64_MAX
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum { OP_ADD = 1, OP_ADDB, OP_GET, OP_DONEGET, OP_DONE, OP_DONEB,
	OP_REMOVE, OP_FORGET, OP_PURGE, OP_REVIVE_ALL, OP_KILL, OP_EXIT,
	OP_RADD, OP_RGET, OP_RDONE, OP_DESTROY, OP_CREATE, OP_PARAM, OP_RMMOD,
	OP_RFNTH, OP_SHUTDOWN, OP_NR };
/* Kinds of add (struct trec.kind). */
enum { K_PLAIN, K_PRIO, K_AFTER, K_RL };
/* kwq_torture.ko records the kernel threads' calls in the same terms */
#define KT_SAME(a, b)	_Static_assert((int)(a) == (int)(b), #a)
KT_SAME(OP_ADD, KWQ_TORTURE_OP_ADD);
KT_SAME(OP_ADDB, KWQ_TORTURE_OP_ADDB);
KT_SAME(OP_GET, KWQ_TORTURE_OP_GET);
KT_SAME(OP_DONEGET, KWQ_TORTURE_OP_DONEGET);
KT_SAME(OP_DONE, KWQ_TORTURE_OP_DONE);
KT_SAME(OP_DONEB, KWQ_TORTURE_OP_DONEB);
KT_SAME(OP_REMOVE, KWQ_TORTURE_OP_REMOVE);
KT_SAME(OP_FORGET, KWQ_TORTURE_OP_FORGET);
KT_SAME(OP_PURGE, KWQ_TORTURE_OP_PURGE);
KT_SAME(K_PLAIN, KWQ_TORTURE_K_PLAIN);
KT_SAME(K_PRIO, KWQ_TORTURE_K_PRIO);
KT_SAME(K_AFTER, KWQ_TORTURE_K_AFTER);
KT_SAME(K_RL, KWQ_TORTURE_K_RL);
static const char *const op_names[OP_NR] = {
	"?", "add", "add_batch", "get", "done_get", "done", "done_batch",
	"remove", "forget", "purge", "revive_all", "kill", "exit",
	"ring_add", "ring_get", "ring_done", "destroy", "create", "param",
	"rmmod", "ring_publish_failnth", "shutdown",
};

static const char *const kind_names[] = { "plain", "prio", "after", "rl" };

/*
 * One call. @state: 0 unwritten, 1 invoked (the rest of the invocation
 * is written), 2 completed. @keys: add/done/remove...: the keys given;
 * get: the keys handed out; done_get: @ndone keys finished first, then
 * the keys handed out. @ret: add/remove...: 0 or -1; rl add: the delay;
 * batches: the number handled; gets: the keys taken. @aux: done_get: the
 * keys finished; get: the most asked for; kill: the target's pid.
 */
struct trec {
	_Atomic uint32_t state;
	uint8_t op, q, nk, ndone;
	uint16_t slot, kind;
	int32_t err, aux;
	uint32_t gen;	/* the incarnation of queue q the fd was attached to */
	int64_t ret, inv, cmp;
	int64_t arg;	/* delay, priority, processing ns, target slot, min_nr */
	int64_t pub;	/* ring_add: when its publish returned (0: not yet) */
	uint32_t key[KMAX];
};

enum { S_PARENT, S_PRODUCER, S_WORKER, S_KPRODUCER, S_KWORKER };
struct slot {
	_Atomic int pid;
	int kind;
	_Atomic int cur_op;	/* the op of the call in progress, or 0 */
	_Atomic int holding;	/* keys held (workers) */
	_Atomic int ring_pending;	/* ring records not known consumed */
	int ring;		/* adds, gets and dones through rings */
};

struct arena {
	_Atomic uint64_t next;		/* records claimed */
	_Atomic uint32_t uniq[NQ];	/* unique keys made */
	_Atomic int stop, full, calm;
	_Atomic uint32_t nslots;
	_Atomic uint32_t ring_errors;	/* setups failed, stray completions */
	_Atomic uint32_t ring_edquot;	/* setups refused at the byte budget */
	_Atomic uint32_t qgen[NQ];	/* incarnations destroyed */
	_Atomic uint64_t fnth_armed;	/* calls with an allocation to fail */
	_Atomic uint64_t fnth_failed;	/* of those, refused ENOMEM */
	_Atomic uint32_t fnth_errors;	/* fail-nth could not be disarmed */
	struct slot slots[MAX_SLOTS];
	struct trec rec[];
};

static struct arena *ar;
static uint64_t nrec_max;
static char qname[NQ][KWQ_NAME_LEN];
static int qfd[NQ];
static uint32_t my_gen[NQ];	/* qfd[q]'s incarnation */
static int need_attach[NQ];	/* a call on qfd[q] failed EIDRM */
static int my_slot;
static uint64_t rec_cur, rec_end;

/* Processing deadline and get deadlines of each queue (see main()). */
/*
 * KQ has none: a kernel thread's lease ends by its done or its kill
 * (kwq_release_owner()), never by a deadline that would hide a lost
 * return; the processes' gets on it give deadlines of their own.
 */
static const int64_t q_timeout[NQ] = { 0, 30 * KT_MS, 200 * KT_MS, 0, 0 };

/* --- the history ------------------------------------------------------ */

static struct trec *rec_claim(void)
{
	if (rec_cur == rec_end) {
		uint64_t c = atomic_fetch_add(&ar->next, CHUNK);

		if (c + CHUNK > nrec_max - (my_slot ? RESERVE : 0)) {
			atomic_store(&ar->full, 1);
			return NULL;
		}
		rec_cur = c;
		rec_end = c + CHUNK;
	}
	return &ar->rec[rec_cur++];
}

/* The invocation: @r's fields are written; publish it, then the call. */
/*
 * fail-nth: a worker's or producer's ioctl (adds, gets, dones; not the
 * ring's records, whose calls are not the ones that apply them) has, one
 * in FNTH_ONE_IN, its Nth fault-injection point (a slab or page
 * allocation, N from 1 to 4) fail, as the harness's fault attributes let
 * fail-nth decide. Armed at the invocation, disarmed at the completion;
 * an allocation it never reached is not failed later.
 */
#define FNTH_ONE_IN	40
static int fnth_fd = -1, fnth_on;

static int fnth_op(int op)
{
	return op == OP_ADD || op == OP_ADDB || op == OP_GET ||
	       op == OP_DONEGET || op == OP_DONE || op == OP_DONEB;
}

static void fnth_open(void)
{
	/* per thread: opened by each process after its fork */
	fnth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
}

/*
 * Memory the kernel writes for a call is touched before it (see
 * rec_inv(), worker(), t_add_batch()): a first touch while armed would
 * have its page allocation fail, and the call fail EFAULT.
 */
static void fnth_arm_now(void)
{
	fnth_on = kt_fail_nth(fnth_fd, 1 + (unsigned int)(rand() % 4)) == 0;
	if (fnth_on)
		atomic_fetch_add(&ar->fnth_armed, 1);
}

static void fnth_arm(int op)
{
	if (fnth_fd < 0 || !fnth_op(op) || rand() % FNTH_ONE_IN)
		return;
	fnth_arm_now();
}

static void fnth_disarm(int err)
{
	if (!fnth_on)
		return;
	fnth_on = 0;
	if (kt_fail_nth(fnth_fd, 0) < 0)
		atomic_fetch_add(&ar->fnth_errors, 1);
	if (err == ENOMEM)
		atomic_fetch_add(&ar->fnth_failed, 1);
}

static struct trec *rec_inv(int op, int q, int kind, int64_t arg,
			    const uint32_t *keys, int nk)
{
	struct trec *r = rec_claim();

	if (!r) {
		/* The history is full: stop working (main() ends the run). */
		if (my_slot)
			pause();
		return NULL;
	}
	r->op = (uint8_t)op;
	r->q = (uint8_t)q;
	r->kind = (uint16_t)kind;
	r->slot = (uint16_t)my_slot;
	r->arg = arg;
	r->gen = my_gen[q];
	r->nk = (uint8_t)nk;
	/*
	 * The whole record written now (a get fills its keys in later): no
	 * page of it is first touched while fail-nth is armed.
	 */
	memset(r->key, 0, sizeof(r->key));
	if (nk)
		memcpy(r->key, keys, sizeof(*keys) * (size_t)nk);
	atomic_store(&ar->slots[my_slot].cur_op, op);
	r->inv = kt_now();
	atomic_store_explicit(&r->state, 1, memory_order_release);
	fnth_arm(op);
	return r;
}

static void rec_cmp(struct trec *r, int64_t ret, int err)
{
	r->cmp = kt_now();
	fnth_disarm(err);
	r->ret = ret;
	r->err = err;
	atomic_store_explicit(&r->state, 2, memory_order_release);
	atomic_store(&ar->slots[my_slot].cur_op, 0);
	if (err == EIDRM)
		need_attach[r->q] = 1;
}

static int key_name(char *buf, uint32_t k)
{
	return sprintf(buf, "k%u", k);
}

static int key_parse(const void *key, size_t len, uint32_t *k)
{
	char tmp[16];

	if (len < 2 || len >= sizeof(tmp))
		return -1;
	memcpy(tmp, key, len);
	tmp[len] = '\0';
	return sscanf(tmp, "k%u", k) == 1 ? 0 : -1;
}

static int key_q(uint32_t k)
{
	return (int)(k >> 28);
}

static int key_unique(uint32_t k)
{
	return (k & 0x0fffffff) >= POOL;
}

static uint32_t pool_key(int q)
{
	return (uint32_t)q << 28 | (uint32_t)(rand() % POOL);
}

static uint32_t unique_key(int q)
{
	return (uint32_t)q << 28 |
	       (POOL + atomic_fetch_add(&ar->uniq[q], 1));
}

/* Records of a packed buffer into keys[]: their number. */
static int keys_of(const void *buf, size_t used, uint32_t *keys, int max)
{
	const void *key;
	size_t off = 0, len;
	int prio, n = 0;

	while (n < max && kwq_rec_next(buf, used, &off, &key, &len, &prio) > 0)
		if (key_parse(key, len, &keys[n]) == 0)
			n++;
	return n;
}

static void rb_fill(struct kwq_recbuf *rb, const uint32_t *keys, int n,
		    int prio)
{
	char name[16];
	int i;

	kwq_recbuf_reset(rb);
	for (i = 0; i < n; i++)
		kwq_recbuf_push(rb, name, (size_t)key_name(name, keys[i]), prio);
}

/* --- recorded calls --------------------------------------------------- */

static void t_add(int q, uint32_t k, int kind, int64_t arg)
{
	char name[16];
	size_t len = (size_t)key_name(name, k);
	uint64_t delay = 0;
	struct trec *r = rec_inv(OP_ADD, q, kind, arg, &k, 1);
	int ret;

	if (!r)
		return;
	switch (kind) {
	case K_PRIO:
		ret = kwq_add_priority(qfd[q], name, len, (int)arg);
		break;
	case K_AFTER:
		ret = kwq_add_after(qfd[q], name, len, arg);
		break;
	case K_RL:
		ret = kwq_add_rate_limited(qfd[q], name, len, &delay);
		break;
	default:
		ret = kwq_add(qfd[q], name, len);
	}
	rec_cmp(r, ret < 0 ? -1 : (int64_t)delay, ret < 0 ? errno : 0);
}

static void t_add_batch(int q, const uint32_t *keys, int n, int kind,
			int64_t after)
{
	static uint64_t delays[BATCH];
	struct kwq_recbuf rb = KWQ_RECBUF_INIT;
	struct kwq_batch_opts o = { 0, 0, NULL };
	struct trec *r;
	unsigned int done = 0;
	int ret;

	rb_fill(&rb, keys, n, kind == K_PRIO ? 1 : 0);
	memset(delays, 0, sizeof(delays));	/* touched: see fnth_arm() */
	if (kind == K_AFTER) {
		o.flags = KWQ_ADD_AFTER;
		o.after_ns = after;
	} else if (kind == K_RL) {
		o.flags = KWQ_ADD_RATE_LIMITED;
		o.delays = delays;
	}
	r = rec_inv(OP_ADDB, q, kind, after, keys, n);
	if (r) {
		ret = kwq_add_batch(qfd[q], &rb, &o, &done);
		rec_cmp(r, done, ret < 0 ? errno : 0);
	}
	kwq_recbuf_free(&rb);
}

/*
 * A done's error about the key it stopped at (its lease was revoked, or
 * it is not the caller's): that key is finished with, for good. Any other
 * error (EINVAL for a call the kernel refuses whole, ENOMEM...) finished
 * nothing past the keys counted done: the key it stopped at is still held.
 */
static int done_key_err(int e)
{
	return e == ESTALE || e == ENOENT || e == EPERM;
}

/* remove, forget, purge of one key */
static void t_key_op(int op, int q, uint32_t k)
{
	char name[16];
	size_t len = (size_t)key_name(name, k);
	struct trec *r = rec_inv(op, q, 0, 0, &k, 1);
	int ret;

	if (!r)
		return;
	if (op == OP_REMOVE)
		ret = kwq_remove(qfd[q], name, len);
	else if (op == OP_FORGET)
		ret = kwq_forget(qfd[q], name, len);
	else
		ret = kwq_purge(qfd[q], name, len);
	rec_cmp(r, ret < 0 ? -1 : 0, ret < 0 ? errno : 0);
}

/*
 * Finish key @k held on queue @q by key: again after an error that
 * finished nothing (ENOMEM of fail-nth...), at most 3 calls; 0 if the
 * history is full.
 */
static int t_done_one(int q, uint32_t k)
{
	char name[16];
	size_t len = (size_t)key_name(name, k);
	struct trec *r;
	int tries, ret;

	for (tries = 0; tries < 3; tries++) {
		r = rec_inv(OP_DONE, q, 0, 0, &k, 1);
		if (!r)
			return 0;
		ret = kwq_done(qfd[q], name, len);
		rec_cmp(r, ret < 0 ? -1 : 0, ret < 0 ? errno : 0);
		if (!ret || done_key_err(r->err))
			break;
	}
	return 1;
}

/*
 * Finish @n keys held on queue @q: in batches, going on past a key whose
 * lease was revoked (ESTALE), one record a call; after a batch that
 * finished nothing more for another reason, one at a time.
 */
static void t_done(int q, const uint32_t *keys, int n)
{
	struct kwq_recbuf rb = KWQ_RECBUF_INIT;
	struct trec *r;
	unsigned int done;
	int i = 0, ret, one = 0;

	while (i < n) {
		if (one || n - i == 1 || rand() % 2) {
			if (!t_done_one(q, keys[i]))
				break;
			i++;
			continue;
		}
		rb_fill(&rb, keys + i, n - i, 0);
		r = rec_inv(OP_DONEB, q, 0, 0, keys + i, n - i);
		if (!r)
			break;
		done = 0;
		ret = kwq_done_batch(qfd[q], &rb, &done);
		rec_cmp(r, done, ret < 0 ? errno : 0);
		/* the key that failed is finished for good (ESTALE...) */
		i += (int)done + (ret < 0 && done_key_err(r->err));
		/* else still held */
		one = ret < 0 && !done_key_err(r->err);
	}
	kwq_recbuf_free(&rb);
}

/*
 * Rings: a process that uses them (slot's .ring) sets one up on each of
 * its fds. Every record asks for a completion (KWQ_SQE_F_CQE): an add or
 * a DONE_LEASE is invoked before its record is written and completes when
 * its completion is read, which proves the kernel consumed it; a process
 * killed in between leaves an unknown outcome. Completions name the ring
 * position of their record: pend[][] maps it back to the history.
 */
#define RING_SQ		64
#define RING_LEASES	16

static struct kwq_ring *ring[NQ];
static struct {
	uint64_t rec;
	uint32_t idx;
	int used;
} pend[NQ][RING_SQ];

static void ring_error(const char *what, int q, int err)
{
	atomic_fetch_add(&ar->ring_errors, 1);
	printf("    # slot %d q%d: %s: %s\n", my_slot, q, what, kt_ename(err));
}

static void ring_cqe(void *arg, const struct kwq_cqe *c)
{
	int q = (int)(intptr_t)arg;
	unsigned int i = c->index & (RING_SQ - 1);
	struct trec *r;

	if (!pend[q][i].used || pend[q][i].idx != c->index) {
		ring_error("a completion of no record written", q, -c->res);
		return;
	}
	r = &ar->rec[pend[q][i].rec];
	pend[q][i].used = 0;
	r->cmp = kt_now();
	r->err = c->res < 0 ? -c->res : 0;
	r->ret = c->res < 0 ? -1 :
		 r->op == OP_RADD && r->kind == K_RL ? (int64_t)c->value : 0;
	atomic_store_explicit(&r->state, 2, memory_order_release);
	atomic_fetch_sub(&ar->slots[my_slot].ring_pending, 1);
}

static void ring_reap(int q)
{
	kwq_ring_reap(ring[q], NULL, 0);
}

/* Write @r's record (op, flags...) into @q's ring, pending its completion. */
static int ring_put(struct trec *r, int q, unsigned int op, unsigned int flags,
		    const char *key, size_t len, int prio, uint64_t arg)
{
	uint32_t idx;

	if (kwq_ring_prep(ring[q], op, flags | KWQ_SQE_F_CQE, key, len, prio,
			  arg, &idx) < 0) {
		rec_cmp(r, -1, errno);
		return -1;
	}
	pend[q][idx & (RING_SQ - 1)].rec = (uint64_t)(r - ar->rec);
	pend[q][idx & (RING_SQ - 1)].idx = idx;
	pend[q][idx & (RING_SQ - 1)].used = 1;
	atomic_fetch_add(&ar->slots[my_slot].ring_pending, 1);
	return 0;
}

/*
 * Publish @q's ring records (the doorbell drains them). One publish in
 * FNTH_ONE_IN has fail-nth armed: the drain applies the records of every
 * ring of the queue that published, other processes' too, so the
 * allocation that fails can be any of theirs, and that record completes
 * -ENOMEM. The publish is recorded (OP_RFNTH, from before to after it):
 * a window in which a dead producer's published add may have been
 * refused (add_result()), as when max_bytes_per_user is lowered.
 */
static void t_publish(int q)
{
	struct trec *r;
	int ret;

	if (fnth_fd < 0 || rand() % FNTH_ONE_IN) {
		kwq_ring_publish(ring[q]);
		return;
	}
	r = rec_inv(OP_RFNTH, q, 0, 0, NULL, 0);
	if (r)
		fnth_arm_now();
	ret = kwq_ring_publish(ring[q]);
	if (r)
		rec_cmp(r, ret, ret < 0 ? errno : 0);
}

static void t_radd(int q, uint32_t k, int kind, int64_t arg)
{
	char name[16];
	size_t len = (size_t)key_name(name, k);
	struct trec *r = rec_inv(OP_RADD, q, kind, arg, &k, 1);
	unsigned int flags = 0;
	uint64_t a = 0;
	int prio = 0;

	if (!r)
		return;
	if (kind == K_PRIO)
		prio = (int)arg;
	else if (kind == K_AFTER && arg > 0)
		flags = KWQ_SQE_F_AFTER, a = (uint64_t)arg;
	else if (kind == K_RL)
		flags = KWQ_SQE_F_RATE_LIMITED;
	if (ring_put(r, q, KWQ_SQE_ADD, flags, name, len, prio, a) == 0) {
		/* -1: the doorbell failed, the record stays published */
		t_publish(q);
		r->pub = kt_now();
		ring_reap(q);
	}
	atomic_store(&ar->slots[my_slot].cur_op, 0);
}

/* Finish ring leases: a DONE_LEASE record each, then publish. */
static void t_rdone(int q, const uint32_t *keys,
		    const struct kwq_ring_lease *l, int n)
{
	struct trec *r;
	int i;

	for (i = 0; i < n; i++) {
		r = rec_inv(OP_RDONE, q, 0, 0, &keys[i], 1);
		if (!r)
			return;
		ring_put(r, q, KWQ_SQE_DONE_LEASE, 0, NULL, 0, (int)l[i].slot,
			 l[i].gen);
	}
	t_publish(q);
	ring_reap(q);
	atomic_store(&ar->slots[my_slot].cur_op, 0);
}

/*
 * Records by key through @q's ring: a DONE of each of @n keys this file
 * got by ioctl (the ring's DONE is KWQ_IOC_DONE's), or one REMOVE or
 * FORGET (@op OP_DONE, OP_REMOVE, OP_FORGET). Recorded as OP_RDONE, or
 * as the ioctl's op with kind 1, completed as the ioctl's would be.
 */
static void t_rkey(int op, int q, const uint32_t *keys, int n)
{
	unsigned int sqe = op == OP_REMOVE ? KWQ_SQE_REMOVE :
			   op == OP_FORGET ? KWQ_SQE_FORGET : KWQ_SQE_DONE;
	struct trec *r;
	char name[16];
	int i;

	for (i = 0; i < n; i++) {
		r = rec_inv(op == OP_DONE ? OP_RDONE : op, q, 1, 0, &keys[i], 1);
		if (!r)
			return;
		ring_put(r, q, sqe, 0, name, (size_t)key_name(name, keys[i]),
			 0, 0);
	}
	t_publish(q);
	ring_reap(q);
	atomic_store(&ar->slots[my_slot].cur_op, 0);
}

/* A get through @q's ring: up to @max leases into @l, their keys. */
static int t_rget(int q, uint32_t *keys, struct kwq_ring_lease *l,
		  unsigned int max)
{
	struct trec *r = rec_inv(OP_RGET, q, 0, 0, NULL, 0);
	int n, i, nk = 0;

	if (!r)
		return 0;
	r->aux = (int32_t)max;
	n = kwq_ring_get(ring[q], l, max, 1, GET_WAIT_NS);
	for (i = 0; i < n; i++) {
		if (key_parse(l[i].key, l[i].len, &r->key[nk]) == 0)
			l[nk++] = l[i];
		else
			ring_error("a leased key not ours", q, 0);
	}
	r->nk = (uint8_t)nk;
	memcpy(keys, r->key, sizeof(*keys) * (size_t)nk);
	rec_cmp(r, n < 0 ? -1 : nk, n < 0 ? errno : 0);
	return nk;
}

/* Before a producer exits: every record consumed and its completion read. */
static void ring_flush(void)
{
	int q, i;

	for (q = 0; q < NQ; q++)
		if (ring[q])
			kwq_ring_submit(ring[q]);
	for (i = 0; i < 200 && atomic_load(&ar->slots[my_slot].ring_pending);
	     i++) {
		for (q = 0; q < NQ; q++)
			if (ring[q]) {
				kwq_ring_submit(ring[q]);
				ring_reap(q);
			}
		if (atomic_load(&ar->slots[my_slot].ring_pending))
			kt_sleep_ms(5);
	}
	if (atomic_load(&ar->slots[my_slot].ring_pending))
		ring_error("records never consumed", 0, 0);
}

/* --- the processes ------------------------------------------------------ */

/*
 * Attach to queue @q, recording its incarnation: -1 if queue QX is not
 * there (destroyed, not yet re-created); the others must be (an attach
 * refused while max_bytes_per_user is lowered is retried).
 */
static int q_attach(int q)
{
	uint32_t g;
	int fd, i;

	for (i = 0; i < 400; i++) {
		g = atomic_load(&ar->qgen[q]);
		fd = kwq_open_dev(NULL);
		if (fd >= 0 && kwq_open(fd, qname[q]) == 0 &&
		    g == atomic_load(&ar->qgen[q])) {
			my_gen[q] = g;
			need_attach[q] = 0;
			return fd;
		}
		if (fd >= 0)
			close(fd);
		if (q == QX)
			return -1;
		kt_sleep_ms(5);
	}
	printf("    # slot %d: open %s: %s\n", my_slot, qname[q], strerror(errno));
	exit(1);
}

/* QX again after its destroy: 0 if attached. */
static int reattach(int q)
{
	if (qfd[q] >= 0 && !need_attach[q])
		return 0;
	if (qfd[q] >= 0)
		close(qfd[q]);
	qfd[q] = q_attach(q);
	return qfd[q] < 0 ? -1 : 0;
}

static void attach_all(void)
{
	int q;

	for (q = 0; q < NQ; q++) {
		if (qfd[q] >= 0)
			close(qfd[q]);
		qfd[q] = q_attach(q);
		ring[q] = NULL;
		/*
		 * no ring on QX: its destroy would strand the ring's records;
		 * none on KQ: published kernel queues have none (EOPNOTSUPP)
		 */
		if (!ar->slots[my_slot].ring || q == QX || q == KQ)
			continue;
		if (kwq_ring_setup(qfd[q], RING_SQ, RING_SQ,
				   ar->slots[my_slot].kind == S_WORKER ?
				   RING_LEASES : 0, &ring[q]) < 0) {
			if (errno == EDQUOT)	/* max_bytes_per_user lowered */
				atomic_fetch_add(&ar->ring_edquot, 1);
			else
				ring_error("ring setup", q, errno);
			ring[q] = NULL;
			continue;
		}
		kwq_ring_set_callback(ring[q], ring_cqe, (void *)(intptr_t)q);
	}
}

/* A single add: through the ring half the time if there is one. */
static void t_add1(int q, uint32_t k, int kind, int64_t arg)
{
	if (ring[q] && rand() % 2)
		t_radd(q, k, kind, arg);
	else
		t_add(q, k, kind, arg);
}

static void producer(void)
{
	uint32_t keys[BATCH];
	int q, n, i, dice;

	attach_all();
	while (!atomic_load(&ar->stop)) {
		q = rand() % NQ;
		dice = rand() % 100;
		if (reattach(q) < 0) {
			kt_sleep_ms(1);
			continue;
		}
		if (atomic_load(&ar->calm)) {
			/*
			 * A calm spell: the workers wait in their gets, a key
			 * now and then must wake one of them.
			 */
			t_add1(q, unique_key(q), K_PLAIN, 0);
			kt_sleep_ms(100 + rand() % 300);
		} else if (dice < 25) {
			t_add1(q, pool_key(q), K_PLAIN, 0);
		} else if (dice < 33) {
			t_add1(q, pool_key(q), K_PRIO, rand() % 4 - 1);
		} else if (dice < 43) {
			t_add1(q, pool_key(q), K_AFTER, (rand() % 50) * KT_MS);
		} else if (dice < 50) {
			t_add1(q, pool_key(q), K_RL, 0);
		} else if (dice < 60) {
			n = 1 + rand() % BATCH;
			for (i = 0; i < n; i++)
				keys[i] = rand() % 2 ? pool_key(q) : unique_key(q);
			i = rand() % 4;
			t_add_batch(q, keys, n, i,
				    i == K_AFTER ? (1 + rand() % 40) * KT_MS : 0);
		} else if (dice < 80) {
			/* a unique key, added once: its deadline is checked */
			i = rand() % 4;
			t_add1(q, unique_key(q), i,
			      i == K_AFTER ? (1 + rand() % 40) * KT_MS :
			      i == K_PRIO ? 2 : 0);
		} else if (dice < 90) {
			/* remove (6 in 10) or forget, through the ring half the time */
			i = dice < 86 ? OP_REMOVE : OP_FORGET;
			keys[0] = pool_key(q);
			if (ring[q] && rand() % 2)
				t_rkey(i, q, keys, 1);
			else
				t_key_op(i, q, keys[0]);
		} else if (dice < 93) {
			t_key_op(OP_PURGE, q, pool_key(q));
		} else {
			/* quiet spells: getters wait, wake-ups matter */
			kt_sleep_ms(rand() % 60);
		}
		if (rand() % 8 == 0)
			kt_sleep_ms(rand() % 4);
	}
	ring_flush();
	{
		struct trec *r = rec_inv(OP_EXIT, 0, 0, 0, NULL, 0);

		if (r)
			rec_cmp(r, 0, 0);
	}
	_exit(0);
}

/*
 * Work on @n keys of queue @q: each one "processed" a random short time
 * (sometimes past a short deadline), then finished or failed (a
 * rate-limited add, then done). Leaves the keys to finish in @done
 * (*@ndone of them) when the next call is a done_get, else finishes them.
 */
static void work(int q, const uint32_t *keys, int n, uint32_t *fin,
		 int *nfin, int fin_later, const struct kwq_ring_lease *l)
{
	int i;

	atomic_store(&ar->slots[my_slot].holding, n);
	for (i = 0; i < n; i++) {
		int dice = rand() % 100;

		if (dice < 50)
			;
		else if (dice < 90)
			kt_sleep_ms(rand() % 5);
		else
			kt_sleep_ms(20 + rand() % 40);
		if (rand() % 5 == 0)
			t_add(q, keys[i], K_RL, 0);
	}
	if (l) {
		/* ring leases end by DONE_LEASE records */
		t_rdone(q, keys, l, n);
	} else if (fin_later) {
		memcpy(fin, keys, sizeof(*keys) * (size_t)n);
		*nfin = n;
		return;
	} else if (ring[q] && rand() % 3 == 0) {
		/* DONE records by key (the keys came from an ioctl get) */
		t_rkey(OP_DONE, q, keys, n);
	} else {
		t_done(q, keys, n);
	}
	atomic_store(&ar->slots[my_slot].holding, 0);
	*nfin = 0;
}

static void worker(void)
{
	static unsigned char buf[KWQ_REC_SIZE_MAX * BATCH];
	static char key[KWQ_KEY_LEN_MAX + 1];
	struct kwq_recbuf rb = KWQ_RECBUF_INIT;
	struct kwq_ring_lease lease[BATCH];
	uint32_t keys[KMAX], fin[BATCH];
	int nfin = 0, fq = 0, q, n, dice, min_nr;
	unsigned int done, max;
	struct trec *r;
	int64_t pns;
	size_t used;

	/* touched: see fnth_arm() */
	memset(buf, 0, sizeof(buf));
	memset(key, 0, sizeof(key));
	attach_all();
	for (;;) {
		dice = rand() % 100;
		q = nfin ? fq : rand() % NQ;
		max = 1 + (unsigned int)rand() % BATCH;
		if (!nfin && reattach(q) < 0) {
			kt_sleep_ms(1);
			continue;
		}
		if (ring[q] && !nfin && rand() % 2) {
			/* through the ring: leases, DONE_LEASE records */
			n = t_rget(q, keys, lease, max);
			if (n > 0)
				work(q, keys, n, fin, &nfin, 0, lease);
			continue;
		}
		if (dice < 30 && !nfin) {
			long len;

			r = rec_inv(OP_GET, q, 0, 0, NULL, 0);
			if (!r)
				continue;
			r->aux = 1;
			len = kwq_get(qfd[q], key, sizeof(key), 0, GET_WAIT_NS);
			n = len >= 0 && key_parse(key, (size_t)len, &keys[0]) == 0;
			if (n) {
				r->key[0] = keys[0];
				r->nk = 1;
			}
			rec_cmp(r, len < 0 ? -1 : n, len < 0 ? errno : 0);
		} else if (dice < 60 && !nfin) {
			/* a processing deadline of the get's own, or none */
			pns = rand() % 3 == 0 ? (5 + rand() % 20) * KT_MS :
			      rand() % 2 ? 0 : (int64_t)KWQ_TIMEOUT_NONE;
			r = rec_inv(OP_GET, q, 0, pns, NULL, 0);
			if (!r)
				continue;
			r->aux = (int32_t)max;
			n = kwq_get_batch_deadline(qfd[q], buf, sizeof(buf), max,
						   0, GET_WAIT_NS, (uint64_t)pns,
						   &used);
			if (n > 0)
				r->nk = (uint8_t)keys_of(buf, used, r->key, BATCH);
			memcpy(keys, r->key, sizeof(*keys) * r->nk);
			rec_cmp(r, n, n < 0 ? errno : 0);
			n = n > 0 ? r->nk : 0;
		} else {
			/*
			 * done_get: finish what is held, take more. With max
			 * 1 and min_nr 2 the kernel refuses the call whole
			 * (EINVAL): nothing is finished, t_done() below does it.
			 */
			min_nr = rand() % 4 ? 1 : 2;
			rb_fill(&rb, fin, nfin, 0);
			memcpy(keys, fin, sizeof(*keys) * (size_t)nfin);
			r = rec_inv(OP_DONEGET, q, 0, min_nr, keys, nfin);
			if (!r)
				continue;
			r->ndone = (uint8_t)nfin;
			r->aux = 0;
			done = 0;
			n = kwq_done_get(qfd[q], &rb, &done, buf, sizeof(buf),
					 max, (unsigned int)min_nr, 0,
					 GET_WAIT_NS, &used);
			r->aux = (int32_t)done;
			if (n > 0)
				r->nk = (uint8_t)(nfin + keys_of(buf, used,
						r->key + nfin, BATCH));
			rec_cmp(r, n, n < 0 ? errno : 0);
			if (n < 0 && (int)done < nfin) {
				/*
				 * The done part stopped at fin[done]: finished
				 * for good if the error was about it, else
				 * still held. Then the rest.
				 */
				done += done_key_err(r->err);
				t_done(q, fin + done, nfin - (int)done);
			}
			nfin = 0;
			atomic_store(&ar->slots[my_slot].holding, 0);
			n = n > 0 ? r->nk - r->ndone : 0;
			memcpy(keys, r->key + r->ndone, sizeof(*keys) * (size_t)n);
		}
		if (n <= 0)
			continue;
		fq = q;
		work(q, keys, n, fin, &nfin, rand() % 3 == 0, NULL);
	}
}

/* --- the fault driver --------------------------------------------------- */

enum { F_KILL_WORKER, F_KILL_PRODUCER, F_KILL_IN_BATCH, F_KILL_HOLDING,
	F_KILL_IN_RING, F_KILL_KTHREAD, F_DESTROY, F_SHUTDOWN, F_PARAM,
	F_QUEUES, F_ITEMS, F_RMMOD, F_HOTPLUG, F_MEMCG, F_IPCNS, F_FAILNTH,
	F_NR };
static const char *const fault_names[F_NR] = {
	"kill_worker", "kill_producer", "kill_in_batch_call", "kill_holding",
	"kill_mid_ring_submission", "kill_kthread", "destroy_recreate",
	"shutdown_before_destroy",
	"max_bytes_lowered", "max_queues_lowered", "max_items_lowered",
	"rmmod_in_use", "cpu_hotplug", "memcg_max_lowered",
	"ipc_namespace_churn", "failnth_enomem",
};

static struct kwq_queue_opts qopts[NQ];
static unsigned long fault_bad;	/* a fault's own call misbehaved */
static int rmmod_errno;		/* what the last refused rmmod answered */

static unsigned long faults[F_NR];

static int new_slot(int kind)
{
	int s = (int)atomic_fetch_add(&ar->nslots, 1);

	if (s >= MAX_SLOTS) {
		printf("    # out of process slots\n");
		exit(1);
	}
	ar->slots[s].kind = kind;
	return s;
}

#define CG	"/sys/fs/cgroup"
#define CGP	CG "/kwq-torture-producers"

static int spawn(int kind, unsigned int seed)
{
	int s = new_slot(kind);
	pid_t pid;

	/* half the processes use rings (a key at a time through the ring) */
	ar->slots[s].ring = rand() % 2;
	pid = fork();

	if (pid == 0) {
		my_slot = s;
		fnth_open();
		rec_cur = 0;
		rec_end = 0;
		srand(seed);
		atomic_store(&ar->slots[s].pid, (int)getpid());
		/* producers live in their own memory cgroup (memcg_fault) */
		if (kind == S_PRODUCER &&
		    kt_write_file(CGP "/cgroup.procs", "0") < 0)
			_exit(4);
		if (kind == S_PRODUCER)
			producer();
		worker();
	}
	if (pid < 0) {
		printf("    # fork: %s\n", strerror(errno));
		exit(1);
	}
	atomic_store(&ar->slots[s].pid, (int)pid);
	return s;
}

/* SIGKILL the process of slot @s, recorded; returns how it ended. */
static int kill_slot(int s)
{
	struct trec *r;
	pid_t pid = atomic_load(&ar->slots[s].pid);
	int st;

	r = rec_inv(OP_KILL, 0, 0, s, NULL, 0);
	kill(pid, SIGKILL);
	st = kt_wait(pid);
	if (r)
		rec_cmp(r, st, 0);
	return st;
}

static int is_batch_op(int op)
{
	return op == OP_ADDB || op == OP_DONEB || op == OP_DONEGET ||
	       op == OP_GET;
}

/* Ring records written whose completion was not read yet, or being written. */
static int in_ring_op(int s)
{
	int op = atomic_load(&ar->slots[s].cur_op);

	return op == OP_RADD || op == OP_RDONE ||
	       atomic_load(&ar->slots[s].ring_pending) > 0;
}

/* One fault: kill a random worker or producer, start its successor. */
static int fault(int *slots, int nprod, int nproc, unsigned int seed)
{
	int i = rand() % nproc, s = slots[i], op, held, st, wait = rand() % 3;
	int64_t until = kt_now() + 30 * KT_MS;
	int in_ring;

	/*
	 * A third of the time, wait (a little) for a batch call in progress;
	 * a third, for a ring submission (a record written, its completion
	 * not read) of a process that uses rings.
	 */
	if (wait == 1)
		while (!is_batch_op(atomic_load(&ar->slots[s].cur_op)) &&
		       kt_now() < until)
			sched_yield();
	else if (wait == 2 && ar->slots[s].ring)
		while (!in_ring_op(s) && kt_now() < until)
			sched_yield();
	op = atomic_load(&ar->slots[s].cur_op);
	held = atomic_load(&ar->slots[s].holding);
	in_ring = in_ring_op(s);
	st = kill_slot(s);
	faults[F_KILL_IN_RING] += in_ring;
	faults[i < nprod ? F_KILL_PRODUCER : F_KILL_WORKER]++;
	if (is_batch_op(op))
		faults[F_KILL_IN_BATCH]++;
	if (i >= nprod && held)
		faults[F_KILL_HOLDING]++;
	slots[i] = spawn(i < nprod ? S_PRODUCER : S_WORKER, seed);
	return st == 128 + SIGKILL;
}

/* A file of /dev/kwq attached to queue @q: the fd, or -1 with errno. */
static int q_open(int q)
{
	int fd = kwq_open_dev(NULL), e;

	if (fd >= 0 && kwq_open(fd, qname[q]) < 0) {
		e = errno;
		close(fd);
		errno = e;
		fd = -1;
	}
	return fd;
}

/*
 * Kernel threads (kwq_torture.ko, tools/testing/torture): KT_PROD
 * producers and KT_WORK workers on queue KQ, which the module creates
 * and publishes in /dev/kwq, where the processes use it too. The threads
 * record their calls in the module (ktime_get_ns(): this CLOCK_MONOTONIC)
 * and kt_merge() copies them into the history, as the parent's records
 * under the threads' own slots; a thread stops only between two calls,
 * so each is complete. A kill stops a thread (kthread_stop()) and returns
 * the keys it held (kwq_release_owner()), as a dead process's file
 * release does; the kill is recorded here as a process's is.
 */
#define KT_DIR		"/sys/kernel/debug/kwq_torture/"
#define KT_PROD		2
#define KT_WORK		2

static int kslots[KT_PROD + KT_WORK];
static int kt_hist_fd = -1;
static unsigned long kt_errors;	/* control writes refused, records lost */
static uint64_t kt_merged;
/*
 * The threads' calls made with fail-nth armed; of those, the ones that
 * reached the allocation it failed, and the ones refused ENOMEM.
 */
static uint64_t kt_fnth_armed, kt_fnth_reached, kt_fnth_failed;

static int kt_ctl(const char *cmd)
{
	if (kt_write_file(KT_DIR "ctl", cmd) == 0)
		return 0;
	printf("    # kwq_torture ctl \"%s\": %s\n", cmd, strerror(errno));
	kt_errors++;
	return -1;
}

/* Copy the threads' records read so far into the history. */
static void kt_merge(void)
{
	static struct kwq_torture_rec buf[256];
	uint32_t nslots = atomic_load(&ar->nslots);
	struct trec *r;
	ssize_t n;
	size_t i;

	while (kt_hist_fd >= 0 &&
	       (n = read(kt_hist_fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < (size_t)n / sizeof(*buf); i++) {
			const struct kwq_torture_rec *k = &buf[i];
			int kind = k->slot < nslots ?
				   ar->slots[k->slot].kind : -1;

			r = rec_claim();
			if (!r || k->nk > KMAX || k->ndone > k->nk ||
			    (kind != S_KPRODUCER && kind != S_KWORKER)) {
				kt_errors++;
				continue;
			}
			r->op = k->op;
			r->q = KQ;
			r->nk = k->nk;
			r->ndone = k->ndone;
			r->slot = k->slot;
			r->kind = k->kind;
			r->err = k->err;
			r->aux = k->aux;
			r->gen = 0;
			r->ret = k->ret;
			r->inv = k->inv;
			r->cmp = k->cmp;
			r->arg = k->arg;
			r->pub = 0;
			memcpy(r->key, k->key, sizeof(r->key));
			atomic_store_explicit(&r->state, 2, memory_order_release);
			kt_merged++;
			if (k->fnth) {
				kt_fnth_armed++;
				kt_fnth_reached += !!(k->fnth & KWQ_TORTURE_FNTH_FAILED);
				kt_fnth_failed += k->err == ENOMEM;
			}
		}
	}
}

static int kt_spawn(int kind, unsigned int seed)
{
	int s = new_slot(kind);
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "%s %d %u",
		 kind == S_KWORKER ? "worker" : "producer", s, seed);
	kt_ctl(cmd);
	return s;
}

/* Stop kernel thread @i (of kslots[]), recorded as a kill. */
static void kt_kill(int i)
{
	struct trec *r = rec_inv(OP_KILL, 0, 0, kslots[i], NULL, 0);
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "kill %d", kslots[i]);
	kt_ctl(cmd);
	if (r)
		rec_cmp(r, 0, 0);
}

static void kt_fault(unsigned int seed)
{
	int i = rand() % (KT_PROD + KT_WORK);

	kt_kill(i);
	kslots[i] = kt_spawn(i < KT_PROD ? S_KPRODUCER : S_KWORKER, seed);
	faults[F_KILL_KTHREAD]++;
}

/*
 * Load kwq_torture.ko from @path: queue KQ, configured as qopts[KQ]
 * says (an exponential limiter, max_wait_ns, a processing deadline),
 * published to root; then attach to it. The fd, or -1 with errno.
 */
static int kt_load(const char *path)
{
	const struct kwq_limit *l = &qopts[KQ].limits[0];
	char params[512];
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -1;
	snprintf(params, sizeof(params),
		 "name=%s key_base=%u base_ns=%llu max_ns=%llu max_wait_ns=%llu timeout_ns=%lld",
		 qname[KQ], (unsigned int)KQ << 28, (unsigned long long)l->a,
		 (unsigned long long)l->b,
		 (unsigned long long)qopts[KQ].max_wait_ns,
		 (long long)q_timeout[KQ]);
	ret = (int)syscall(SYS_finit_module, fd, params, 0);
	close(fd);
	if (ret < 0)
		return -1;
	kt_hist_fd = open(KT_DIR "history", O_RDONLY | O_CLOEXEC);
	if (kt_hist_fd < 0)
		return -1;
	return q_open(KQ);
}

/*
 * rmmod @name, retried while the kernel answers EAGAIN (what a work
 * item frees, or a file still closing, holds it), up to 5 s: 0, or -1
 * with errno; *@tries is how many it took.
 */
static long rmmod_retry(const char *name, int *tries)
{
	long ret;

	for (*tries = 1;; ++*tries) {
		ret = syscall(SYS_delete_module, name, O_NONBLOCK);
		if (ret == 0 || errno != EAGAIN || *tries == 500)
			return ret;
		kt_sleep_ms(10);
	}
}

/*
 * After the workload: the threads stopped, their records merged; the
 * parent's file closed; kwq_torture unloaded, which destroys queue KQ
 * (userspace may not: EPERM). 0 if all went as it should.
 */
static int kt_unload(void)
{
	int ok = kwq_destroy(qfd[KQ], qname[KQ]) < 0 && errno == EPERM, i;
	long ret;

	if (!ok)
		printf("    # destroy of the published %s: %s, want EPERM\n",
		       qname[KQ], strerror(errno));
	close(qfd[KQ]);
	qfd[KQ] = -1;
	close(kt_hist_fd);
	kt_hist_fd = -1;
	/* the drain's files are closed; an ended worker's may still be */
	ret = rmmod_retry("kwq_torture", &i);
	if (ret)
		printf("    # rmmod kwq_torture: %s\n", strerror(errno));
	return ok && !ret;
}

/*
 * Queue @q created by an unprivileged user, TORTURE_UID (CAP_SYS_ADMIN
 * is exempt from max_bytes_per_user: its queues have no byte budget),
 * then attached here (root may open it): the fd, or -1 with errno.
 */
#define TORTURE_UID	3434

static int make_queue(int q)
{
	pid_t pid = fork();
	int st, fd;

	if (pid == 0) {
		if (setgid(TORTURE_UID) < 0 || setuid(TORTURE_UID) < 0)
			_exit(errno);
		fd = kwq_open_dev(NULL);
		if (fd < 0 || kwq_create(fd, qname[q], &qopts[q]) < 0)
			_exit(errno);
		_exit(0);
	}
	if (pid < 0)
		return -1;
	st = kt_wait(pid);
	if (st) {
		errno = st;
		return -1;
	}
	return q_open(q);
}

/*
 * Re-create queue QX (same name, same options), attached to qfd[QX];
 * -1 if refused (it is tried again at the next fault and before the
 * drain).
 */
static int create_qx_quiet(void)
{
	struct trec *r = rec_inv(OP_CREATE, QX, 0, 0, NULL, 0);
	int fd = make_queue(QX);
	int e = errno;

	if (r)
		rec_cmp(r, fd < 0 ? -1 : 0, fd < 0 ? e : 0);
	errno = e;
	if (fd < 0)
		return -1;
	qfd[QX] = fd;
	return 0;
}

static int create_qx(void)
{
	if (create_qx_quiet() < 0) {
		printf("    # re-create %s: %s\n", qname[QX], strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Destroy queue QX while workers and producers have it open (their
 * calls then fail EIDRM and they attach again), and create it anew.
 * The history records both: the checker treats a destroy as a purge of
 * every key of QX and as the end of every lease of the old queue.
 */
static int destroy_qx(void)
{
	struct trec *r = rec_inv(OP_DESTROY, QX, 0, my_gen[QX], NULL, 0);
	int ret = kwq_destroy(qfd[QX], qname[QX]);

	if (r)
		rec_cmp(r, ret, ret < 0 ? errno : 0);
	if (ret < 0) {
		printf("    # destroy %s: %s\n", qname[QX], strerror(errno));
		fault_bad++;
		return -1;
	}
	close(qfd[QX]);
	qfd[QX] = -1;
	my_gen[QX] = atomic_fetch_add(&ar->qgen[QX], 1) + 1;
	faults[F_DESTROY]++;
	return 0;
}

/*
 * Shut queue QX down before its destroy (KWQ_IOC_SHUTDOWN), 20-100 ms
 * before it: adds are refused from then on and waiting keys dropped,
 * while ready and processing keys are still handed out and finished,
 * and a get finds ESHUTDOWN only once nothing is ready (checked:
 * shutdown_check()).
 */
static unsigned long shutdown_dropped, shutdown_eshut;
static int take_all(int q);

static void shutdown_qx(void)
{
	uint32_t keys[BATCH];
	struct kwq_stats_args st;
	struct trec *r;
	int ret, e, i, j;

	/*
	 * Fresh keys ready at the shutdown: more than the workers waiting in
	 * gets take at once (up to 8 each), which the check leaves out.
	 */
	for (i = 0; i < 6; i++) {
		for (j = 0; j < BATCH; j++)
			keys[j] = unique_key(QX);
		t_add_batch(QX, keys, BATCH, K_PLAIN, 0);
	}
	r = rec_inv(OP_SHUTDOWN, QX, 0, my_gen[QX], NULL, 0);
	ret = kwq_shutdown(qfd[QX], 0);
	e = errno;

	if (r)
		rec_cmp(r, ret, ret < 0 ? e : 0);
	if (ret < 0) {
		printf("    # shutdown %s: %s\n", qname[QX], strerror(e));
		fault_bad++;
		return;
	}
	faults[F_SHUTDOWN]++;
	/* every waiting key was dropped before the shutdown returned */
	if (kwq_stats(qfd[QX], &st) == 0)
		shutdown_dropped += st.dropped_at_shutdown;
	kt_sleep_ms(20 + rand() % 80);
	/*
	 * The workers may not have found the queue empty yet: take what is
	 * still ready, until a get finds nothing (ESHUTDOWN, which
	 * shutdown_check() needs).
	 */
	if (take_all(QX) == ESHUTDOWN)
		shutdown_eshut++;
}

static void destroy_recreate(int shut)
{
	if (qfd[QX] >= 0 && shut)
		shutdown_qx();
	if (qfd[QX] < 0 || destroy_qx() == 0)
		create_qx();
}

/*
 * max_bytes_per_user lowered far below what the run uses for 20-100 ms,
 * then restored: adds of new keys (and ring setups, attaches) are
 * refused EDQUOT meanwhile; nothing that returned success may be lost.
 */
#define PARAM_DIR	"/sys/module/kwq/parameters/"
enum { P_BYTES, P_QUEUES, P_ITEMS, P_NR };
static const char *const param_names[P_NR] = {
	"max_bytes_per_user", "max_queues_per_user", "max_items_per_queue",
};
static char param_orig[P_NR][32];

/*
 * @kind, the record's: 1 for max_bytes_per_user lowered, 0 for it
 * restored (the checker's EDQUOT windows); 2 and 3 for the others.
 */
static int param_set(int p, const char *v, int kind)
{
	struct trec *r = rec_inv(OP_PARAM, 0, kind, strtoll(v, NULL, 0),
				 NULL, 0);
	char path[96];
	int ret;

	if (r)
		r->aux = p;
	snprintf(path, sizeof(path), PARAM_DIR "%s", param_names[p]);
	ret = kt_write_file(path, v);
	if (r)
		rec_cmp(r, ret, ret < 0 ? errno : 0);
	if (ret < 0) {
		printf("    # write %s to %s: %s\n", v, path, strerror(errno));
		fault_bad++;
	}
	return ret;
}

static int params_read(void)
{
	char path[96];
	FILE *f;
	int p;

	for (p = 0; p < P_NR; p++) {
		snprintf(path, sizeof(path), PARAM_DIR "%s", param_names[p]);
		f = fopen(path, "r");
		if (!f || !fgets(param_orig[p], sizeof(param_orig[p]), f)) {
			printf("    # %s: %s\n", path, strerror(errno));
			if (f)
				fclose(f);
			return -1;
		}
		fclose(f);
		param_orig[p][strcspn(param_orig[p], "\n")] = '\0';
	}
	return 0;
}

static void param_fault(void)
{
	char v[32];

	snprintf(v, sizeof(v), "%d", (1 + rand() % 16) * 4096);
	if (param_set(P_BYTES, v, 1) < 0)
		return;
	kt_sleep_ms(20 + rand() % 80);
	param_set(P_BYTES, param_orig[P_BYTES], 0);
	faults[F_PARAM]++;
}

/*
 * The limits a queue's creation meets, lowered under load while QX is
 * destroyed and created again (they bind creations only):
 * max_queues_per_user to the queues uid TORTURE_UID keeps besides QX
 * (UQ_KEPT: all but QX and KQ, which is kwq_torture's), so the create
 * is refused EDQUOT; max_items_per_queue to
 * 16-271, so QX is created with that cap (its options give none) and
 * adds past it are refused ENOSPC until the next re-create. Either
 * way the queues that exist are untouched, and nothing that returned
 * success may be lost.
 */
static void limit_fault(int p)
{
	char v[32];
	int ret;

	if (qfd[QX] < 0 && create_qx() < 0)
		return;
	snprintf(v, sizeof(v), "%d", p == P_QUEUES ? UQ_KEPT : 16 + rand() % 256);
	if (param_set(p, v, 2) < 0)
		return;
	if (destroy_qx() == 0) {
		ret = create_qx_quiet();
		if (p == P_QUEUES ? ret == 0 || errno != EDQUOT : ret < 0) {
			printf("    # create %s under %s %s: %s\n", qname[QX],
			       param_names[p], v, ret ? strerror(errno) : "created");
			fault_bad++;
		}
	}
	kt_sleep_ms(20 + rand() % 80);
	if (param_set(p, param_orig[p], 3) < 0)
		return;
	if (qfd[QX] < 0 && create_qx() < 0)
		fault_bad++;
	faults[p == P_QUEUES ? F_QUEUES : F_ITEMS]++;
}

/* rmmod while /dev/kwq is open: refused (EAGAIN or EBUSY), nothing else. */
static void rmmod_fault(void)
{
	struct trec *r = rec_inv(OP_RMMOD, 0, 0, 0, NULL, 0);
	long ret = syscall(SYS_delete_module, "kwq", O_NONBLOCK);
	int e = errno;

	if (r)
		rec_cmp(r, ret, ret < 0 ? e : 0);
	if (ret == 0 || (e != EAGAIN && e != EBUSY)) {
		printf("    # rmmod kwq while in use: %s\n",
		       ret == 0 ? "it succeeded" : strerror(e));
		fault_bad++;
		return;
	}
	rmmod_errno = e;
	faults[F_RMMOD]++;
}

/*
 * A CPU other than the boot CPU offline for 20-100 ms, then online again:
 * the hrtimers of kwq's clocks and the tasks on it migrate, wake-ups
 * cross CPUs. The VMs have 2 CPUs (try.sh -c N for more); with one, no
 * hotplug is possible and the run fails for want of this fault.
 */
static int ncpus;

static void hotplug_fault(void)
{
	char path[64];
	int cpu;

	if (ncpus < 2)
		return;
	cpu = 1 + rand() % (ncpus - 1);
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online",
		 cpu);
	if (kt_write_file(path, "0") < 0) {
		printf("    # offline cpu%d: %s\n", cpu, strerror(errno));
		fault_bad++;
		return;
	}
	kt_sleep_ms(20 + rand() % 80);
	if (kt_write_file(path, "1") < 0) {
		printf("    # online cpu%d: %s\n", cpu, strerror(errno));
		fault_bad++;
		return;
	}
	faults[F_HOTPLUG]++;
}

/*
 * Memory cgroup pressure on the producers (all in CGP, the workers not):
 * memory.max set 0-16 KiB above what they use, for 20-100 ms. Their
 * keys are charged to them (KWQ_CONFIG_CHARGE_CALLER) and allocated
 * __GFP_RETRY_MAYFAIL: an add over the limit is refused ENOMEM, never
 * answered by the OOM killer. A page of their own (the history arena, a
 * page table) can still be, and the memcg OOM killer may then SIGKILL a
 * producer: memcg_reap() finds it, records the kill from the window's
 * start (the earliest it can have died) to its reaping, and replaces it.
 */
static int64_t memcg_lowered_at;	/* start of the latest window */
static unsigned long memcg_oom_kills;

static int memcg_setup(void)
{
	if (access(CG "/cgroup.controllers", F_OK) &&
	    mount("cgroup2", CG, "cgroup2", 0, NULL) < 0)
		return -1;
	if (kt_write_file(CG "/cgroup.subtree_control", "+memory") < 0)
		return -1;
	rmdir(CGP);
	if (mkdir(CGP, 0755) < 0)
		return -1;
	return access(CGP "/memory.max", F_OK);
}

static int memcg_write(const char *file, const char *v)
{
	char path[96];

	snprintf(path, sizeof(path), CGP "/%s", file);
	if (kt_write_file(path, v) == 0)
		return 0;
	printf("    # %s %s: %s\n", path, v, strerror(errno));
	fault_bad++;
	return -1;
}

static long memcg_current(void)
{
	long cur = kt_read_num(CGP "/memory.current", NULL);

	if (cur < 0) {
		printf("    # %s: %s\n", CGP "/memory.current", strerror(errno));
		fault_bad++;
	}
	return cur;
}

/*
 * A window's start and end in the history, as max_bytes_per_user's
 * (kind 1, then 0): a ring add published by a producer that dies in it
 * is applied by the file's release, in the dying producer's cgroup, and
 * may be refused then (add_result()).
 */
static void memcg_rec(int kind)
{
	struct trec *r = rec_inv(OP_PARAM, 0, kind, 0, NULL, 0);

	if (r) {
		r->aux = P_NR;
		rec_cmp(r, 0, 0);
	}
}

static void memcg_fault(void)
{
	long cur = memcg_current();
	char v[32];
	int ok = 0;

	if (cur < 0)
		return;
	memcg_rec(1);
	/*
	 * memory.current counts the pages charged ahead to each CPU's stock
	 * (up to 64 a CPU), which the producers use without a charge: a
	 * limit just above it would not bind. A memory.high a page under
	 * it makes the kernel drain the stocks first (and, for the high
	 * limit, never OOM-kill); the usage after is what they hold.
	 */
	snprintf(v, sizeof(v), "%ld", cur - 4096);
	memcg_lowered_at = kt_now();
	if (memcg_write("memory.high", v) == 0) {
		cur = memcg_current();
		snprintf(v, sizeof(v), "%ld", cur + 4096L * (rand() % 5));
		ok = cur >= 0 && memcg_write("memory.max", v) == 0;
	}
	/* the high limit lifted in any case: only memory.max binds now */
	ok &= memcg_write("memory.high", "max") == 0;
	if (ok) {
		kt_sleep_ms(20 + rand() % 80);
		faults[F_MEMCG]++;
	}
	/* restored in any case, and the window closed after it */
	memcg_write("memory.max", "max");
	memcg_rec(0);
}

/*
 * A producer that died while nobody killed it, with kt_wait()'s status:
 * 0 if it was the memcg OOM killer's victim (SIGKILL, after a window
 * opened), recorded as killed from the window's start (the earliest it
 * can have died) to now; any other death is a failure.
 */
static int memcg_victim(int s, int st)
{
	struct trec *r = rec_inv(OP_KILL, 0, 0, s, NULL, 0);

	if (r) {
		r->inv = memcg_lowered_at ?: r->inv;
		rec_cmp(r, st, 0);
	}
	if (memcg_lowered_at && st == 128 + SIGKILL) {
		memcg_oom_kills++;
		return 0;
	}
	printf("    # producer of slot %d died unbidden: %d\n", s, st);
	return 1;
}

/* Replace the producers memcg_victim() accounts for: 0 if all were. */
static int memcg_reap(int *slots, int nprod, unsigned int seed)
{
	int i, st, bad = 0;
	pid_t pid;

	for (i = 0; i < nprod; i++) {
		pid = atomic_load(&ar->slots[slots[i]].pid);
		if (waitpid(pid, &st, WNOHANG) != pid)
			continue;
		bad += memcg_victim(slots[i], WIFEXITED(st) ? WEXITSTATUS(st) :
					      128 + WTERMSIG(st));
		slots[i] = spawn(S_PRODUCER, seed + (unsigned int)i);
	}
	return bad;
}

/*
 * IPC-namespace churn: a child unshares an IPC namespace and, as
 * TORTURE_UID, creates a queue there (its count is the user's, beside
 * the four), adds 1-64 keys, takes some with a processing deadline and
 * either exits holding them or is SIGKILLed 5-35 ms in, wherever it
 * is. Its namespace dies with it while the workload runs, and kwq's
 * reaper frees the namespace's queues; ipcns_left() checks that none
 * is left at the end. The queue at the user's limit (a lowered
 * max_queues_per_user's window is not one of these moments, but dead
 * namespaces not yet reaped count) is refused EDQUOT, as it must be.
 */
static void ipcns_child(unsigned int seed, int ready_fd)
{
	struct kwq_queue_opts o = { .processing_timeout_ns = 50 * KT_MS };
	char key[16], got[KWQ_KEY_LEN_MAX];
	int fd, i, n;

	srand(seed);
	if (unshare(CLONE_NEWIPC) < 0)
		_exit(10);
	if (setgid(TORTURE_UID) < 0 || setuid(TORTURE_UID) < 0)
		_exit(11);
	fd = kwq_open_dev(NULL);
	if (fd < 0)
		_exit(12);
	if (kwq_create(fd, "churn", &o) < 0)
		_exit(errno == EDQUOT && ready_fd < 0 ? 0 : 13);
	n = 1 + rand() % 64;
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "c%d", i);
		if (kwq_add(fd, key, strlen(key)) < 0)
			_exit(14);
	}
	for (i = 0; i < n / 2; i++)
		if (kwq_get(fd, got, sizeof(got), 0, 0) < 0)
			_exit(15);
	if (ready_fd >= 0 && write(ready_fd, "", 1) != 1)
		_exit(16);
	if (ready_fd >= 0 || rand() % 2)
		pause();
	_exit(0);
}

/*
 * @whole: the child is killed only once its queue holds keys (the last
 * churn, after the workload: after every create at the user's limit,
 * which reaps dead namespaces itself, so that only the reaper can free
 * this one).
 */
static void ipcns_fault(unsigned int seed, int whole)
{
	int st, p[2] = { -1, -1 };
	char c;
	pid_t pid;

	if (whole && pipe(p) < 0) {
		fault_bad++;
		return;
	}
	pid = fork();
	if (pid == 0) {
		if (whole)
			close(p[0]);
		ipcns_child(seed, p[1]);
	}
	if (whole) {
		close(p[1]);
		if (pid > 0 && read(p[0], &c, 1) != 1)
			printf("    # the last IPC-namespace child gave no sign of its queue\n");
		close(p[0]);
	}
	if (pid < 0) {
		fault_bad++;
		return;
	}
	if (!whole)
		kt_sleep_ms(5 + rand() % 30);
	kill(pid, SIGKILL);
	st = kt_wait(pid);
	if (st != 0 && st != 128 + SIGKILL) {
		printf("    # IPC-namespace child: exit %d (10 unshare, 11 setuid, 12 open, 13 create, 14 add, 15 get, 16 write)\n",
		       st);
		fault_bad++;
		return;
	}
	faults[F_IPCNS]++;
}

/*
 * IPC namespaces kwq still lists besides ours (debugfs: a directory
 * ipc:<inum> each), after waiting up to 10 s for the reaper (it looks
 * every 2 s): 0 once every churned namespace is gone, -1 if unknown.
 */
static int ipcns_left(void)
{
	char self[64], mine[32];
	ssize_t l = readlink("/proc/self/ns/ipc", self, sizeof(self) - 1);
	int left = -1, tries;
	struct dirent *d;
	DIR *dir;

	if (l < 0)
		return -1;
	self[l] = '\0';
	/* "ipc:[4026531839]" */
	snprintf(mine, sizeof(mine), "ipc:%lu", strtoul(self + 5, NULL, 10));
	for (tries = 0; tries < 50 && left; tries++) {
		if (tries)
			kt_sleep_ms(200);
		dir = opendir("/sys/kernel/debug/kwq");
		if (!dir)
			return -1;
		left = 0;
		while ((d = readdir(dir)))
			left += !strncmp(d->d_name, "ipc:", 4) &&
				strcmp(d->d_name, mine);
		closedir(dir);
	}
	return left;
}

/* --- the drain ---------------------------------------------------------- */

/*
 * Take and finish every key ready on queue @q, recorded, until a get
 * takes none: the errno of that get, -1 if the history is full.
 */
static int take_all(int q)
{
	static unsigned char buf[KWQ_REC_SIZE_MAX * BATCH];
	uint32_t keys[KMAX];
	struct trec *r;
	size_t used;
	int n;

	for (;;) {
		r = rec_inv(OP_GET, q, 0, (int64_t)KWQ_TIMEOUT_NONE, NULL, 0);
		if (!r)
			return -1;
		r->aux = BATCH;
		n = kwq_get_batch_deadline(qfd[q], buf, sizeof(buf), BATCH, 0, 0,
					   KWQ_TIMEOUT_NONE, &used);
		if (n > 0)
			r->nk = (uint8_t)keys_of(buf, used, r->key, BATCH);
		rec_cmp(r, n, n < 0 ? errno : 0);
		if (n <= 0)
			return r->err;
		memcpy(keys, r->key, sizeof(*keys) * r->nk);
		t_done(q, keys, r->nk);
	}
}

/* Revive the dead, take and finish every key left: 0 once all are empty. */
static int drain(struct kwq_stats_args *st)
{
	int q, i, left;
	struct trec *r;

	if (qfd[QX] < 0 && create_qx() < 0)
		return -1;
	for (i = 0; i < 3000; i++) {
		left = 0;
		for (q = 0; q < NQ; q++) {
			r = rec_inv(OP_REVIVE_ALL, q, 0, 0, NULL, 0);
			if (r) {
				long v = kwq_revive_all(qfd[q]);

				rec_cmp(r, v, v < 0 ? errno : 0);
			}
			if (take_all(q) < 0)
				return -1;
			if (kwq_stats(qfd[q], &st[q]) < 0)
				return -1;
			left += st[q].len || st[q].waiting ||
				st[q].processing || st[q].dead;
		}
		if (!left)
			return 0;
		kt_sleep_ms(10);
	}
	return -1;
}

/* --- the checker -------------------------------------------------------- */

struct ev {
	uint32_t key;
	uint32_t pos;	/* index in the record's keys */
	uint64_t rec;
};

static int ev_cmp(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;
	int64_t ta, tb;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	ta = ar->rec[x->rec].inv;
	tb = ar->rec[y->rec].inv;
	if (ta != tb)
		return ta < tb ? -1 : 1;
	if (x->rec != y->rec)
		return x->rec < y->rec ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Per slot: the earliest it can have died, and when it surely was gone. */
static int64_t *death, *gone;

struct hold {
	int slot;
	int64_t g_inv, g_cmp, end_lb;
	int64_t done_cmp;	/* when its done surely ended (T_INF: unknown) */
	int done_err;
	int done;		/* 0 none, 1 success, 2 failed, 3 unknown */
	uint64_t rec;
};

struct qcount {
	uint64_t handouts, unknown_get_max, done_ok, done_unknown;
	uint64_t rl_ok, rl_unknown, estale, holds_due, returns_lb, held_left;
};

static struct {
	uint64_t ops, unknown, keys, violations, deadline_checked;
	uint64_t ring_ops, ring_unknown;
	uint64_t fifo_checked, limiter_checked, limiter_exact;
	uint64_t add_refused, add_edquot, add_enospc, add_enomem;
	uint64_t after_destroy, call_violations, ring_enomem;
	uint64_t after_shutdown, shutdown_checked;
	uint64_t wait_measured;
	uint64_t *unknown_gets, nunknown_gets;
	int64_t max_ready_wait;
	int reported;
	const char *kinds[12];
	uint64_t kind_nr[12];
	struct qcount qc[NQ];
} ck;

static int hold_cmp(const void *a, const void *b)
{
	const struct hold *x = a, *y = b;

	return x->g_cmp < y->g_cmp ? -1 : x->g_cmp > y->g_cmp;
}

static const char *rec_state(const struct trec *r)
{
	return atomic_load(&r->state) == 2 ? "" : " UNKNOWN-OUTCOME";
}

/* Was @r's call made through a ring (t_rkey(): a key op of kind 1)? */
static int is_ring_rec(const struct trec *r)
{
	return r->op == OP_RADD || r->op == OP_RGET || r->op == OP_RDONE ||
	       ((r->op == OP_REMOVE || r->op == OP_FORGET) && r->kind == 1);
}

static int is_add(int op)
{
	return op == OP_ADD || op == OP_ADDB || op == OP_RADD;
}

static int is_get(int op)
{
	return op == OP_GET || op == OP_DONEGET || op == OP_RGET;
}

static void print_rec(const struct trec *r, uint32_t key, int64_t t0)
{
	char what[64] = "";
	int i;

	for (i = 0; i < r->nk; i++)
		if (r->key[i] == key)
			snprintf(what, sizeof(what), " [key #%d%s]", i,
				 r->op == OP_DONEGET && i < r->ndone ?
				 " done part" : "");
	printf("    #   %9.3f..%-9.3f ms slot %u %s %d %s q%u %s arg %lld nk %u ret %lld %s%s%s\n",
	       (double)(r->inv - t0) / 1e6,
	       atomic_load(&r->state) == 2 ? (double)(r->cmp - t0) / 1e6 : -1.0,
	       r->slot, ar->slots[r->slot].kind >= S_KPRODUCER ? "kthread" : "pid",
	       atomic_load(&ar->slots[r->slot].pid), op_names[r->op],
	       r->q, is_add(r->op) ? kind_names[r->kind] : "",
	       (long long)r->arg, r->nk, (long long)r->ret, kt_ename(r->err),
	       what, rec_state(r));
}

/*
 * The kernel's own account of the queues' failures: their
 * key_rate_limited and key_timed_out events (a revocation is both), on
 * the history's clock, printed with a violation (the buffer keeps the
 * newest 8 MiB a CPU). Best effort: without tracefs, none.
 */
#define TRACE_DIR "/sys/kernel/debug/tracing/"

static int trace_write(const char *file, const char *v)
{
	char path[128];

	snprintf(path, sizeof(path), TRACE_DIR "%s", file);
	return kt_write_file(path, v);
}

static int ktrace_on;

static void ktrace_start(void)
{
	static const char *const ev[] = { "key_rate_limited", "key_timed_out" };
	char file[96], filter[96];
	size_t i;

	/*
	 * Not under KCSAN: the mono trace clock reads the fast timekeeper
	 * (ktime_get_mono_fast_ns(), a seqcount latch read with plain
	 * loads), which KCSAN reports as a data race from kwq's tracepoints
	 * (seen: "race at unknown origin" in timekeeping_cycles_to_ns()).
	 */
	if (access("/sys/kernel/debug/kcsan", F_OK) == 0) {
		printf("    # kernel trace of the queues' failures: off (a KCSAN kernel)\n");
		return;
	}
	/* every queue of this run: kt_name()'s "torture-PID-N" */
	snprintf(filter, sizeof(filter), "queue ~ \"torture-%d-*\"",
		 (int)getpid());
	/* a new buffer size empties the buffers */
	if (trace_write("tracing_on", "0") || trace_write("trace_clock", "mono") ||
	    trace_write("buffer_size_kb", "8192"))
		return;
	for (i = 0; i < ARRAY_SIZE(ev); i++) {
		snprintf(file, sizeof(file), "events/kwq/%s/filter", ev[i]);
		if (trace_write(file, filter))
			return;
		snprintf(file, sizeof(file), "events/kwq/%s/enable", ev[i]);
		if (trace_write(file, "1"))
			return;
	}
	ktrace_on = !trace_write("tracing_on", "1");
	printf("    # kernel trace of the queues' failures: %s\n",
	       ktrace_on ? "on" : "unavailable");
}

static void ktrace_print(uint32_t key, int64_t t0)
{
	char want[32], line[512];
	double ts;
	FILE *f;

	if (!ktrace_on)
		return;
	f = fopen(TRACE_DIR "trace", "re");
	if (!f)
		return;
	snprintf(want, sizeof(want), " key=k%u len=", key);
	printf("    # the kernel's trace of it (ms from the first call):\n");
	while (fgets(line, sizeof(line), f)) {
		char *colon = strstr(line, ": key_"), *p;

		if (!strstr(line, want) || !colon)
			continue;
		/* "task-pid [cpu] flags 12345.678901: key_event: queue=..." */
		*colon = '\0';
		p = strrchr(line, ' ');
		ts = p ? strtod(p + 1, NULL) * 1e9 : 0;
		printf("    #   %9.3f ms %s", (ts - (double)t0) / 1e6, colon + 2);
	}
	fclose(f);
}

static size_t focus = SIZE_MAX;

static void violation(const char *kind, uint32_t key, const struct ev *e,
		      size_t n, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void violation(const char *kind, uint32_t key, const struct ev *e,
		      size_t n, const char *fmt, ...)
{
	int64_t t0 = ar->rec[0].inv;
	va_list ap;
	size_t i;

	ck.violations++;
	for (i = 0; i < ARRAY_SIZE(ck.kinds) && ck.kinds[i]; i++)
		if (!strcmp(ck.kinds[i], kind))
			break;
	if (i < ARRAY_SIZE(ck.kinds)) {
		ck.kinds[i] = kind;
		/* the first of each kind is reported */
		if (ck.kind_nr[i]++)
			return;
	}
	if (ck.reported++ >= (int)ARRAY_SIZE(ck.kinds))
		return;
	printf("    # VIOLATION %s: key k%u (queue %d): ", kind, key, key_q(key));
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n    # its history (%zu calls, ms from the first call):\n", n);
	for (i = 0; i < n && i < 200; i++)
		print_rec(&ar->rec[e[i].rec], key, t0);
	/* and the calls just before and after the one that broke the model */
	if (focus != SIZE_MAX && focus >= 200) {
		printf("    #   ... (calls %zu..%zu)\n",
		       focus > 300 ? focus - 100 : 200,
		       focus + 20 < n ? focus + 20 : n - 1);
		for (i = focus > 300 ? focus - 100 : 200;
		     i < n && i <= focus + 20; i++)
			print_rec(&ar->rec[e[i].rec], key, t0);
	}
	ktrace_print(key, t0);
	/* the kills: a holder's death ends its hold (each slot once) */
	for (i = 0; i < n; i++) {
		const struct trec *r = &ar->rec[e[i].rec];
		size_t j;

		for (j = 0; j < i; j++)
			if (ar->rec[e[j].rec].slot == r->slot)
				break;
		if (j == i && death[r->slot] != T_INF)
			printf("    #   slot %u died at %.3f ms\n", r->slot,
			       (double)(death[r->slot] - t0) / 1e6);
	}
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* The processing deadline a get gave its keys, 0 for none. */
static int64_t get_timeout(const struct trec *r)
{
	if (r->op == OP_GET && r->arg == (int64_t)KWQ_TIMEOUT_NONE)
		return 0;
	if (r->op == OP_GET && r->arg)
		return r->arg;
	return q_timeout[r->q];
}

/* Is key @i of @r a hand-out? A done? */
static int is_handout(const struct trec *r, int i)
{
	return (r->op == OP_GET || r->op == OP_RGET ||
		(r->op == OP_DONEGET && i >= r->ndone)) &&
	       atomic_load(&r->state) == 2 && r->ret > 0;
}

/* done: 1 success, 2 failed, 3 unknown, 0 not a done of this key */
static int done_result(const struct trec *r, int i)
{
	int complete = atomic_load(&r->state) == 2;

	/* 2 only for an error about the key: any other finished nothing */
	int key_err = complete && done_key_err(r->err);

	if (r->op == OP_RDONE)
		return !complete ? 3 : r->ret == 0 ? 1 : 2;
	if (r->op == OP_DONE)
		return !complete ? 3 : r->ret == 0 ? 1 : key_err ? 2 : 0;
	if (r->op == OP_DONEB)
		return !complete ? 3 : i < r->ret ? 1 :
		       i == r->ret && key_err ? 2 : 0;
	if (r->op == OP_DONEGET && i < r->ndone) {
		if (!complete)
			return 3;
		if (r->ret >= 0)
			return 1;
		return i < r->aux ? 1 : i == r->aux && key_err ? 2 : 0;
	}
	return 0;
}

/* When max_bytes_per_user was lowered: from the write to the restore's end. */
static int64_t (*lowered)[2];
static size_t nlowered;

static int lowered_during(int64_t from, int64_t to)
{
	size_t j;

	for (j = 0; j < nlowered; j++)
		if (lowered[j][0] <= to && lowered[j][1] >= from)
			return 1;
	return 0;
}

/*
 * Did the add of key @i of @r succeed (1), fail (0), or is it unknown (2)?
 * A ring add whose publish returned is applied even if its process was
 * killed before it read the completion: the file's release applies what
 * was published. It cannot fail then unless max_bytes_per_user was
 * lowered or the producers' memory cgroup limited meanwhile (the ring's
 * queues are never destroyed or full).
 */
static int add_result(const struct trec *r, int i)
{
	if (atomic_load(&r->state) != 2)
		return r->op == OP_RADD && r->pub &&
		       !lowered_during(r->inv, gone[r->slot]) ? 1 : 2;
	if (r->op == OP_ADD || r->op == OP_RADD)
		return !r->err;
	return i < r->ret;
}

/*
 * Worker gets of each queue (completed, whatever their result) by
 * invocation, with the latest completion of those invoked so far; and
 * the gets whose outcome is unknown.
 */
struct getspan {
	int64_t inv, cmp, max_cmp;
};

static struct getspan *gets[NQ];
static size_t ngets[NQ];

/* Successful destroys of QX: a purge of all its keys, the end of its leases. */
static const struct trec **destroys;
static size_t ndestroys;
/* Successful shutdowns of QX (each followed by its incarnation's destroy). */
static const struct trec **shutdowns;
static size_t nshutdowns;
static uint32_t final_gen;	/* the incarnation whose statistics are read */

static int getspan_cmp(const void *a, const void *b)
{
	const struct getspan *x = a, *y = b;

	return x->inv < y->inv ? -1 : x->inv > y->inv;
}

/*
 * Key @key (history @e, @n calls) was made ready by its first call, a
 * plain add, by @first's completion r0, and first handed out by @g. How
 * long did it wait while a worker waited in a get of its queue? If @g
 * waited already at r0: until @g returned. Else until @g began (or an
 * unknown get that may have taken it), if another get waited from before
 * r0 until then. A woken getter takes a key at once.
 */
static void ready_wait(uint32_t key, const struct ev *e, size_t n,
		       const struct trec *first, const struct trec *g)
{
	int q = key_q(key);
	/* a ring add's key is there for every get begun after its publish */
	int64_t r0 = first->op == OP_RADD && first->pub ? first->pub : first->cmp;
	int64_t w, until = g->inv, idle = INT64_MIN;
	size_t lo = 0, hi = ngets[q], i;
	const struct trec *u;

	if (!g->slot || (g->op == OP_DONEGET && g->arg > 1))
		return;
	if (g->inv < r0) {
		w = g->cmp - r0;
	} else {
		/* unknown gets of the queue: any might have taken it */
		for (i = 0; i < ck.nunknown_gets; i++) {
			u = &ar->rec[ck.unknown_gets[i]];
			if (u->q == q && u->inv < until && gone[u->slot] > r0)
				until = u->inv > r0 ? u->inv : r0;
		}
		/* the latest return of a get invoked before r0 */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (gets[q][mid].inv < r0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo)
			idle = gets[q][lo - 1].max_cmp;
		if (idle <= r0)
			return;
		w = min64(idle, until) - r0;
	}
	ck.wait_measured++;
	if (w > ck.max_ready_wait)
		ck.max_ready_wait = w;
	if (w > LOST_WAKE_NS)
		violation("lost_wakeup", key, e, n,
			  "ready at %lld ms, a getter waited, handed out by a get begun at %lld ms: %lld ms",
			  (long long)((r0 - ar->rec[e[0].rec].inv) / KT_MS),
			  (long long)((g->inv - ar->rec[e[0].rec].inv) / KT_MS),
			  (long long)(w / KT_MS));
}

/*
 * The rate limiters of queue @q: the delay of a key's failure number
 * @f + 1 (@f failures before it) as kwq computes it (client-go's
 * numerics), with the token buckets left out (*@bucket set if the queue
 * has one: the delay is then at least this).
 */
static const struct kwq_stats_args *final_st;

static uint64_t round_f64(uint64_t v)
{
	return (uint64_t)(double)v;
}

static int64_t lim_delay(int q, uint32_t f, int *bucket)
{
	const struct kwq_queue_opts *o = &qopts[q];
	uint64_t d = 0, x, fb;
	uint32_t i;

	*bucket = 0;
	for (i = 0; i < o->nr_limits; i++) {
		const struct kwq_limit *l = &o->limits[i];

		if (l->type == KWQ_LIMIT_EXPONENTIAL) {
			fb = round_f64(l->a);
			if (!fb)
				x = 0;
			else if (f >= 63 || fb >= (1ULL << (63 - f)))
				x = l->b;
			else
				x = fb << f < l->b ? fb << f : l->b;
		} else if (l->type == KWQ_LIMIT_FAST_SLOW) {
			x = (uint64_t)f + 1 <= l->count ? l->a : l->b;
		} else {
			*bucket = 1;
			x = 0;
		}
		d = d > x ? d : x;
	}
	if (o->max_wait_ns && d > o->max_wait_ns)
		d = o->max_wait_ns;
	return (int64_t)d;
}

/* A failure (rate-limited add or revoked lease) or a reset (forget). */
struct span {
	int64_t lo, hi;
	int sure;
	uint64_t rec;
};

/*
 * The delay a rate-limited add answered is the limiters' for the key's
 * failure count, which is known within bounds: at least the failures
 * surely counted before it with no reset possibly between, at most those
 * possibly counted after the last reset that surely came before it. A
 * failure is a rate-limited add (one that returned success surely
 * counted; an unknown or failed one maybe), or a lease revoked at its
 * processing deadline (surely when its done was refused ESTALE, maybe
 * when its holder died or its done's outcome is unknown: no earlier
 * than its get's invocation plus the deadline). A reset is a forget or
 * purge. Checked on queues without a dead set (a dead key's count is
 * reset by the add that revives it, which the history cannot place) and
 * whose idle failure records were never evicted (which forgets counts).
 */
static struct span incs[1 << 16], resets[1 << 16];

static void limiter_check(const struct ev *e, size_t n,
			  const struct hold *holds, size_t nh)
{
	uint32_t key = e[0].key;
	int q = key_q(key), bucket, ok;
	size_t i, j, ni = 0, nr = 0;
	int64_t rs, d, want;
	uint32_t lo, hi, f;

	if (qopts[q].max_retries || final_st[q].failure_records_evicted)
		return;
	for (i = 0; i < n && ni < ARRAY_SIZE(incs) && nr < ARRAY_SIZE(resets);
	     i++) {
		const struct trec *r = &ar->rec[e[i].rec];
		int res, c = atomic_load(&r->state) == 2;
		int64_t end = c ? r->cmp : gone[r->slot];

		if (is_add(r->op) && r->kind == K_RL) {
			res = add_result(r, (int)e[i].pos);
			incs[ni++] = (struct span){ r->inv, end, res == 1,
						    e[i].rec };
		} else if (r->op == OP_FORGET || r->op == OP_PURGE) {
			if (!c || !r->err)
				resets[nr++] = (struct span){ r->inv, end, c,
							      e[i].rec };
		}
	}
	for (j = 0; j < nh && ni < ARRAY_SIZE(incs); j++) {
		const struct hold *x = &holds[j];
		int64_t t = get_timeout(&ar->rec[x->rec]), end;

		if (!t || x->done == 1)
			continue;
		end = min64(x->done_cmp, gone[x->slot]);
		if (end < x->g_inv + t)
			continue;	/* it ended before its deadline */
		incs[ni++] = (struct span){ x->g_inv + t, end,
					    x->done == 2 && x->done_err == ESTALE,
					    UINT64_MAX };
	}
	/*
	 * A get of unknown outcome with a processing deadline may have taken
	 * the key, and its lease been revoked before its holder's death
	 * returned it.
	 */
	for (j = 0; j < ck.nunknown_gets && ni < ARRAY_SIZE(incs); j++) {
		const struct trec *u = &ar->rec[ck.unknown_gets[j]];
		int64_t t = get_timeout(u);

		if (u->q == q && t && gone[u->slot] >= u->inv + t)
			incs[ni++] = (struct span){ u->inv + t, gone[u->slot], 0,
						    UINT64_MAX };
	}
	for (i = 0; i < n; i++) {
		const struct trec *r = &ar->rec[e[i].rec];

		if ((r->op != OP_ADD && r->op != OP_RADD) || r->kind != K_RL ||
		    atomic_load(&r->state) != 2 || r->err || r->ret == -1)
			continue;
		rs = INT64_MIN;
		for (j = 0; j < nr; j++)
			if (resets[j].sure && resets[j].hi < r->inv &&
			    resets[j].lo > rs)
				rs = resets[j].lo;
		lo = 0;
		hi = 0;
		for (j = 0; j < ni; j++) {
			const struct span *p = &incs[j];
			size_t k;

			if (p->rec == e[i].rec)
				continue;
			/* "may": times of one clock tick may be in any order */
			if (p->lo <= r->cmp && p->hi >= rs)
				hi++;
			if (!p->sure || p->hi >= r->inv)
				continue;
			for (k = 0; k < nr; k++)
				if (resets[k].hi >= p->lo && resets[k].lo <= r->cmp)
					break;
			lo += k == nr;
		}
		d = r->ret;
		ok = 0;
		for (f = lo; f <= hi && f <= lo + 64 && !ok; f++) {
			want = lim_delay(q, f, &bucket);
			ok = bucket ? d >= want : d == want;
		}
		if (hi > lo + 64)
			ok |= d >= lim_delay(q, lo, &bucket);
		ck.limiter_checked++;
		ck.limiter_exact += lo == hi;
		if (!ok) {
			focus = i;
			violation("limiter_delay", key, e, n,
				  "a rate-limited add at %lld ms answered %lld us; with %u..%u failures before it the limiters give %lld..%lld us",
				  (long long)((r->inv - ar->rec[e[0].rec].inv) / KT_MS),
				  (long long)(d / 1000), lo, hi,
				  (long long)(lim_delay(q, lo, &bucket) / 1000),
				  (long long)(lim_delay(q, hi, &bucket) / 1000));
			return;
		}
	}
}

/*
 * FIFO within a priority: keys added once (fresh keys, plain or with a
 * priority, no delay) at the same priority of one queue. A key is ready
 * from some moment in its add (invocation .. completion; a ring add's
 * completion is read after it was applied) and is taken by the get that
 * first handed it out (invocation .. completion) or by a get of unknown
 * outcome that may have run then. If A surely was ready before B's add
 * began, B must not surely be taken before A could be: B's get completed
 * before the first moment A could have been taken. In one get (by ioctl:
 * its keys in the order taken) B must not come before A.
 */
struct fifo {
	uint32_t key;
	int q, prio;
	int64_t rfrom, rby, tfrom, tby;
	uint64_t grec;
	uint32_t gpos;
	size_t ev_off, n;
};

static struct fifo *fifos;
static size_t nfifos;
static const struct ev *ev_all;

static int add_prio(const struct trec *r)
{
	if (r->kind != K_PRIO)
		return 0;
	return r->op == OP_ADDB ? 1 : (int)r->arg;
}

static void fifo_note(const struct ev *e, size_t n, size_t gi)
{
	const struct trec *a = &ar->rec[e[0].rec], *g = &ar->rec[e[gi].rec];
	struct fifo *f = &fifos[nfifos++];
	int q = key_q(e[0].key);
	size_t i;

	f->key = e[0].key;
	f->q = q;
	f->prio = add_prio(a);
	f->rfrom = a->inv;
	f->rby = a->cmp;
	f->tby = g->cmp;
	f->tfrom = g->inv;
	f->grec = e[gi].rec;
	f->gpos = e[gi].pos;
	f->ev_off = (size_t)(e - ev_all);
	f->n = n;
	/* a get of unknown outcome running then may have taken it first */
	for (i = 0; i < ck.nunknown_gets; i++) {
		const struct trec *u = &ar->rec[ck.unknown_gets[i]];

		if (u->q == q && gone[u->slot] > f->rfrom)
			f->tfrom = min64(f->tfrom, u->inv > f->rfrom ?
					 u->inv : f->rfrom);
	}
}

static int fifo_by_rby(const void *x, const void *y)
{
	const struct fifo *a = x, *b = y;

	if (a->q != b->q)
		return a->q - b->q;
	if (a->prio != b->prio)
		return a->prio < b->prio ? -1 : 1;
	return a->rby < b->rby ? -1 : a->rby > b->rby;
}

static int fifo_by_rfrom(const void *x, const void *y)
{
	const struct fifo *a = x, *b = y;

	if (a->q != b->q)
		return a->q - b->q;
	if (a->prio != b->prio)
		return a->prio < b->prio ? -1 : 1;
	return a->rfrom < b->rfrom ? -1 : a->rfrom > b->rfrom;
}

static int fifo_by_get(const void *x, const void *y)
{
	const struct fifo *a = x, *b = y;

	if (a->grec != b->grec)
		return a->grec < b->grec ? -1 : 1;
	return a->gpos < b->gpos ? -1 : a->gpos > b->gpos;
}

static void fifo_violation(const struct fifo *b, const struct fifo *a,
			   const char *how)
{
	int64_t t0 = ar->rec[0].inv;

	violation("fifo", b->key, ev_all + b->ev_off, b->n,
		  "priority %d: handed out %s k%u, ready since %.3f ms, before this key was added at %.3f ms (this key's get ended at %.3f ms; k%u could be taken from %.3f ms)",
		  b->prio, how, a->key, (double)(a->rby - t0) / 1e6,
		  (double)(b->rfrom - t0) / 1e6, (double)(b->tby - t0) / 1e6,
		  a->key, (double)(a->tfrom - t0) / 1e6);
}

static void fifo_check(void)
{
	struct fifo *byf = malloc(sizeof(*byf) * (nfifos + 1));
	size_t i, j, g, gend, best;
	int same;

	if (!byf)
		return;
	memcpy(byf, fifos, sizeof(*byf) * nfifos);
	qsort(fifos, nfifos, sizeof(*fifos), fifo_by_rby);
	qsort(byf, nfifos, sizeof(*byf), fifo_by_rfrom);
	/* groups of one queue and priority: both arrays hold them in order */
	for (g = 0; g < nfifos; g = gend) {
		for (gend = g + 1; gend < nfifos && fifos[gend].q == fifos[g].q &&
		     fifos[gend].prio == fifos[g].prio; gend++)
			;
		best = SIZE_MAX;
		for (i = g, j = g; i < gend; i++) {
			const struct fifo *b = &byf[i];

			for (; j < gend && fifos[j].rby < b->rfrom; j++)
				if (best == SIZE_MAX ||
				    fifos[j].tfrom > fifos[best].tfrom)
					best = j;
			ck.fifo_checked++;
			if (best != SIZE_MAX && b->tby < fifos[best].tfrom)
				fifo_violation(b, &fifos[best], "while it waited");
		}
	}
	/* within one get by ioctl: in the order taken */
	qsort(fifos, nfifos, sizeof(*fifos), fifo_by_get);
	for (i = 0; i < nfifos; i++) {
		const struct trec *r = &ar->rec[fifos[i].grec];

		if (r->op == OP_RGET)
			continue;
		for (j = i + 1; j < nfifos && fifos[j].grec == fifos[i].grec; j++) {
			/*
			 * unless a get of unknown outcome may have taken the
			 * earlier key first (its holder's death sent it to the
			 * tail)
			 */
			same = fifos[j].q == fifos[i].q &&
			       fifos[j].prio == fifos[i].prio &&
			       fifos[j].tfrom == r->inv;
			if (same && fifos[j].rby < fifos[i].rfrom)
				fifo_violation(&fifos[i], &fifos[j],
					       "in the same get after");
		}
	}
	free(byf);
}

/*
 * After a shutdown ready keys are still handed out, and a get fails
 * ESHUTDOWN only once none is ready: a fresh key of QX added once (plain
 * or with a priority: ready at once) before the shutdown began, with
 * nothing else done to it before then (so ready at the shutdown, with no
 * failure that could send it to the dead set), must be handed out by a
 * get begun no later than the first get of that incarnation completed
 * ESHUTDOWN (eshut_at[]; an equal reading proves no order: the debug
 * VMs' refined-jiffies clock makes them common, and a CI run failed on
 * one), or taken by a get of unknown outcome begun by then (its holder's
 * death returns it, ready again). Waiting keys are dropped, and
 * keys with a delay, a failure or a holder at the shutdown may be:
 * only these are checked.
 */
static int64_t *eshut_at;	/* by incarnation of QX; T_INF: none */
static uint32_t eshut_gens;

static void shutdown_check(const struct ev *e, size_t n)
{
	const struct trec *first = &ar->rec[e[0].rec], *sd = NULL;
	int64_t until;
	size_t i, j;

	if (key_q(e[0].key) != QX || !key_unique(e[0].key) ||
	    !is_add(first->op) || add_result(first, (int)e[0].pos) != 1 ||
	    (first->kind != K_PLAIN && first->kind != K_PRIO) ||
	    first->gen >= eshut_gens || eshut_at[first->gen] == T_INF)
		return;
	for (j = 0; j < nshutdowns; j++)
		if ((uint32_t)shutdowns[j]->arg == first->gen)
			sd = shutdowns[j];
	/* strict both ways: an equal reading proves no order */
	if (!sd || first->cmp >= sd->inv ||
	    (n > 1 && ar->rec[e[1].rec].inv <= sd->inv))
		return;
	until = eshut_at[first->gen];
	ck.shutdown_checked++;
	for (i = 1; i < n; i++)
		if (is_handout(&ar->rec[e[i].rec], (int)e[i].pos) &&
		    ar->rec[e[i].rec].inv <= until)
			return;
	for (i = 0; i < ck.nunknown_gets; i++) {
		const struct trec *u = &ar->rec[ck.unknown_gets[i]];

		if (u->q == QX && u->gen == first->gen && u->inv <= until)
			return;
	}
	violation("shutdown_lost", e[0].key, e, n,
		  "ready at the shutdown (%lld ms), not handed out before a get found nothing ready (ESHUTDOWN, %lld ms)",
		  (long long)((sd->inv - first->inv) / KT_MS),
		  (long long)((until - first->inv) / KT_MS));
}

static void check_key(const struct ev *e, size_t n)
{
	static struct hold holds[1 << 16];
	uint32_t key = e[0].key;
	int64_t cons = INT64_MIN, first_out = T_INF, obl_t;
	size_t i, j, nh = 0, obl_i = 0;
	const struct trec *first = &ar->rec[e[0].rec];
	int h, k;

	ck.keys++;
	/* Pass 1: holds, consumptions. */
	for (i = 0; i < n; i++) {
		const struct trec *r = &ar->rec[e[i].rec];
		int pos = (int)e[i].pos, d;

		if (is_handout(r, pos)) {
			/*
			 * Never twice in one get: a get waiting for min_nr
			 * stops at its first key's processing deadline and
			 * takes nothing once that lease has ended
			 * (semantics.rst, "Every transition").
			 */
			for (j = 0; j < i; j++)
				if (e[j].rec == e[i].rec &&
				    is_handout(r, (int)e[j].pos))
					violation("handed_out_twice_in_one_get", key,
						  e, n, "one get returned it twice");
			cons = cons > r->cmp ? cons : r->cmp;
			first_out = min64(first_out, r->cmp);
			if (nh < ARRAY_SIZE(holds)) {
				struct hold *x = &holds[nh++];
				int64_t t = get_timeout(r);

				x->slot = r->slot;
				x->g_inv = r->inv;
				x->g_cmp = r->cmp;
				x->rec = e[i].rec;
				x->done = 0;
				x->done_cmp = T_INF;
				x->done_err = 0;
				x->end_lb = min64(t ? r->inv + t : T_INF,
						  death[r->slot]);
				/* a destroy of its queue ends it */
				for (j = 0; j < ndestroys; j++)
					if (r->q == QX &&
					    (uint32_t)destroys[j]->arg >= r->gen)
						x->end_lb = min64(x->end_lb,
								  destroys[j]->inv);
			}
			continue;
		}
		d = done_result(r, pos);
		if (d) {
			/* the latest hold of this process got before it */
			for (h = (int)nh - 1; h >= 0; h--)
				if (holds[h].slot == r->slot &&
				    holds[h].g_cmp <= r->inv && !holds[h].done)
					break;
			if (h >= 0) {
				holds[h].done = d;
				holds[h].done_cmp = d == 3 ? gone[r->slot] : r->cmp;
				holds[h].done_err = d == 3 ? 0 : r->err;
				if (d == 1)
					holds[h].end_lb = r->inv;
				else if (d == 3)
					holds[h].end_lb = min64(holds[h].end_lb,
								r->inv);
			}
			continue;
		}
		if ((r->op == OP_REMOVE || r->op == OP_PURGE)) {
			int64_t t = atomic_load(&r->state) == 2 ?
				    (r->ret == 0 ? r->cmp : INT64_MIN) :
				    gone[r->slot];

			cons = cons > t ? cons : t;
		}
	}
	/* a destroy of its queue consumes everything before it */
	for (j = 0; key_q(key) == QX && j < ndestroys; j++)
		cons = cons > destroys[j]->cmp ? cons : destroys[j]->cmp;
	/*
	 * No two holders at once: in the order of their gets' completions,
	 * no hold may begin before an earlier one surely ended.
	 */
	qsort(holds, nh, sizeof(*holds), hold_cmp);
	k = -1;
	for (h = 0; h < (int)nh; h++) {
		/* surely held from its get's completion on, at least a while */
		if (holds[h].end_lb <= holds[h].g_cmp)
			continue;
		if (k >= 0 && holds[k].end_lb > holds[h].g_cmp) {
			violation("two_holders", key, e, n,
				  "held by slot %d (got at %lld ms, surely held until %lld ms) and by slot %d (got at %lld ms)",
				  holds[k].slot,
				  (long long)((holds[k].g_cmp - first->inv) / KT_MS),
				  (long long)((holds[k].end_lb - first->inv) / KT_MS),
				  holds[h].slot,
				  (long long)((holds[h].g_cmp - first->inv) / KT_MS));
			break;
		}
		if (holds[h].end_lb > holds[h].g_cmp &&
		    (k < 0 || holds[h].end_lb > holds[k].end_lb))
			k = h;
	}
	/* No add lost; no lease end lost (a lease not ended by a done requeues). */
	obl_t = INT64_MIN;
	for (i = 0; i < n; i++) {
		const struct trec *r = &ar->rec[e[i].rec];

		if (is_add(r->op) &&
		    add_result(r, (int)e[i].pos) == 1 && r->inv > obl_t) {
			obl_t = r->inv;
			obl_i = i;
		}
	}
	for (h = 0; h < (int)nh; h++) {
		const struct hold *x = &holds[h];

		if (x->done == 1 || x->done == 3)
			continue;
		/* the statistics are the last incarnation's */
		if (key_q(key) != QX || ar->rec[x->rec].gen == final_gen)
			ck.qc[key_q(key)].returns_lb +=
				!get_timeout(&ar->rec[x->rec]) && !x->done;
		if (x->end_lb != T_INF && x->end_lb > obl_t) {
			obl_t = x->end_lb;
			obl_i = SIZE_MAX;
		}
		if (x->end_lb == T_INF &&
		    (key_q(key) != QX || ar->rec[x->rec].gen == final_gen))
			ck.qc[key_q(key)].held_left++;
	}
	if (obl_t != INT64_MIN && obl_t > cons)
		violation("lost", key, e, n,
			  "%s at %lld ms is followed by no hand-out, remove or purge (the last ended at %lld ms)",
			  obl_i == SIZE_MAX ? "a lease that ended without done" :
			  "a successful add",
			  (long long)((obl_t - first->inv) / KT_MS),
			  (long long)(cons == INT64_MIN ? -1 :
				      (cons - first->inv) / KT_MS));

	shutdown_check(e, n);
	limiter_check(e, n, holds, nh);

	/* Deadlines, wake-ups, FIFO: keys added once, by their first call. */
	if (!key_unique(key) || !is_add(first->op))
		return;
	if ((first->kind == K_AFTER && add_result(first, (int)e[0].pos)) ||
	    (first->kind == K_RL && first->op != OP_ADDB &&
	     atomic_load(&first->state) == 2 && !first->err &&
	     first->ret != -1)) {
		int64_t d = first->kind == K_AFTER ? first->arg : first->ret;

		ck.deadline_checked++;
		if (first_out != T_INF && first_out < first->inv + d)
			violation("early", key, e, n,
				  "handed out %lld us after an add with a delay of %lld us",
				  (long long)((first_out - first->inv) / 1000),
				  (long long)(d / 1000));
	}
	if ((first->kind == K_PLAIN || first->kind == K_PRIO) &&
	    add_result(first, (int)e[0].pos) == 1) {
		/* its first hand-out */
		for (i = 1; i < n; i++)
			if (is_handout(&ar->rec[e[i].rec], (int)e[i].pos))
				break;
		if (i < n)
			ready_wait(key, e, n, first, &ar->rec[e[i].rec]);
		if (i < n && atomic_load(&first->state) == 2)
			fifo_note(e, n, i);
	}
}

/* Was the incarnation @r's fd was attached to destroyed before @r began? */
static int after_destroy(const struct trec *r)
{
	size_t j;

	for (j = 0; j < ndestroys; j++)
		if ((uint32_t)destroys[j]->arg >= r->gen &&
		    destroys[j]->cmp < r->inv)
			return 1;
	return 0;
}

/* The shutdown of @r's incarnation of QX that completed before @r began. */
static const struct trec *after_shutdown(const struct trec *r)
{
	size_t j;

	for (j = 0; r->q == QX && j < nshutdowns; j++)
		if ((uint32_t)shutdowns[j]->arg == r->gen &&
		    shutdowns[j]->cmp < r->inv)
			return shutdowns[j];
	return NULL;
}

/* A call that no key's model explains (it has no key, or many). */
static void misbehaved(const struct trec *r, const char *what)
{
	ck.violations++;
	if (ck.call_violations++)
		return;
	printf("    # VIOLATION call: %s:\n", what);
	print_rec(r, UINT32_MAX, ar->rec[0].inv);
}

/* Count per queue what the kernel's statistics must agree with. */
static void count_rec(const struct trec *r)
{
	struct qcount *c = &ck.qc[r->q];
	int complete = atomic_load(&r->state) == 2, i;

	ck.ops++;
	ck.unknown += !complete;
	if (is_add(r->op) && complete && r->err) {
		ck.add_refused++;
		ck.add_edquot += r->err == EDQUOT;
		ck.add_enospc += r->err == ENOSPC;
		ck.add_enomem += r->err == ENOMEM;
		if (r->err != EDQUOT && r->err != ENOSPC && r->err != ENOMEM &&
		    r->err != EIDRM && r->err != ESHUTDOWN)
			misbehaved(r, "an add failed with an undocumented errno");
	}
	/* after a shutdown no add takes effect (ESHUTDOWN, or EIDRM later) */
	if (is_add(r->op) && complete && r->slot && after_shutdown(r)) {
		ck.after_shutdown++;
		if (!r->err || (r->op == OP_ADDB && r->ret > 0))
			misbehaved(r, "an add after its queue's shutdown took effect");
	}
	if (r->q == QX && r->slot && r->op < OP_DESTROY && complete &&
	    after_destroy(r)) {
		ck.after_destroy++;
		if (r->err != EIDRM)
			misbehaved(r, "a call on a destroyed queue's file did not fail EIDRM");
	}
	if (r->q == QX && r->gen != final_gen && r->op != OP_KILL &&
	    r->op != OP_EXIT)
		return;
	if (is_ring_rec(r)) {
		ck.ring_ops++;
		ck.ring_unknown += !complete;
		ck.ring_enomem += complete && r->err == ENOMEM;
	}
	switch (r->op) {
	case OP_GET:
	case OP_RGET:
	case OP_DONEGET:
		if (!complete) {
			c->unknown_get_max += r->op != OP_DONEGET ?
					      (uint64_t)r->aux : BATCH;
		} else if (r->ret > 0) {
			c->handouts += (uint64_t)(r->nk - r->ndone);
			if (get_timeout(r))
				c->holds_due += (uint64_t)(r->nk - r->ndone);
		}
		if (r->op != OP_DONEGET)
			break;
		/* the done part */
		__attribute__((fallthrough));
	case OP_DONE:
	case OP_RDONE:
	case OP_DONEB:
		for (i = 0; i < (r->op == OP_DONEGET ? r->ndone : r->nk); i++) {
			int d = done_result(r, i);

			c->done_ok += d == 1;
			c->done_unknown += d == 3;
			c->estale += d == 2 && r->err == ESTALE;
		}
		break;
	case OP_ADD:
	case OP_RADD:
	case OP_ADDB:
		if (r->kind != K_RL)
			break;
		for (i = 0; i < r->nk; i++) {
			c->rl_ok += add_result(r, i) == 1;
			c->rl_unknown += add_result(r, i) == 2;
		}
		break;
	}
}

static int in_range(int q, const char *what, uint64_t lo, uint64_t v,
		    uint64_t hi)
{
	if (v >= lo && v <= hi)
		return 1;
	printf("    # queue %d: %s %llu, the history says %llu..%llu\n", q,
	       what, (unsigned long long)v, (unsigned long long)lo,
	       (unsigned long long)hi);
	return 0;
}

static int check_stats(int q, const struct kwq_stats_args *st)
{
	const struct qcount *c = &ck.qc[q];
	uint64_t pto = st->processing_timeouts_total;
	int ok = 1;

	ok &= in_range(q, "hand-outs (queue_duration count)", c->handouts,
		       st->queue_duration.count,
		       c->handouts + c->unknown_get_max);
	ok &= in_range(q, "finishes (work_duration count)", c->done_ok + pto,
		       st->work_duration.count,
		       c->done_ok + c->done_unknown + pto);
	ok &= in_range(q, "rate-limited adds (retries_total)", c->rl_ok + pto,
		       st->retries_total, c->rl_ok + c->rl_unknown + pto);
	ok &= in_range(q, "leases revoked (processing_timeouts_total)",
		       c->estale, pto, c->holds_due + c->unknown_get_max);
	ok &= in_range(q, "lease returns", c->returns_lb, st->lease_returns,
		       c->handouts + c->unknown_get_max);
	ok &= in_range(q, "keys left (ready, waiting, processing, dead)", 0,
		       st->len + st->waiting + st->processing + st->dead, 0);
	ok &= in_range(q, "dead keys dropped", 0, st->dead_dropped_total, 0);
	return ok;
}

static int check_history(void)
{
	uint64_t n = atomic_load(&ar->next), i, nev = 0, a, b;
	uint32_t nslots = atomic_load(&ar->nslots);
	long open_w = -1;	/* the parent's window open, if any */
	struct ev *ev;
	int k;

	if (n > nrec_max)
		n = nrec_max;
	death = malloc(sizeof(*death) * MAX_SLOTS);
	gone = malloc(sizeof(*gone) * MAX_SLOTS);
	if (!death || !gone)
		return -1;
	for (i = 0; i < MAX_SLOTS; i++) {
		death[i] = T_INF;
		gone[i] = T_INF;
	}
	for (i = 0; i < n; i++) {
		const struct trec *r = &ar->rec[i];

		if (!atomic_load(&r->state))
			continue;
		nev += r->nk;
		if (r->op == OP_KILL && r->arg < nslots) {
			death[r->arg] = min64(death[r->arg], r->inv);
			if (atomic_load(&r->state) == 2)
				gone[r->arg] = min64(gone[r->arg], r->cmp);
		}
		if (r->op == OP_EXIT) {
			death[r->slot] = min64(death[r->slot], r->inv);
			gone[r->slot] = min64(gone[r->slot], r->cmp);
		}
	}
	ev = malloc(sizeof(*ev) * (nev + 1));
	fifos = malloc(sizeof(*fifos) * (nev + 1));
	ck.unknown_gets = malloc(sizeof(*ck.unknown_gets) * (n + 1));
	for (k = 0; k < NQ; k++)
		gets[k] = malloc(sizeof(*gets[k]) * (n + 1));
	for (k = 0; k < NQ; k++)
		if (!gets[k])
			return -1;
	if (!ev || !fifos || !ck.unknown_gets)
		return -1;
	destroys = malloc(sizeof(*destroys) * (n + 1));
	shutdowns = malloc(sizeof(*shutdowns) * (n + 1));
	eshut_gens = atomic_load(&ar->qgen[QX]) + 1;
	eshut_at = malloc(sizeof(*eshut_at) * eshut_gens);
	if (!destroys || !shutdowns || !eshut_at)
		return -1;
	for (i = 0; i < eshut_gens; i++)
		eshut_at[i] = T_INF;
	lowered = malloc(sizeof(*lowered) * (n + 1));
	if (!lowered)
		return -1;
	for (i = 0; i < n; i++) {
		const struct trec *r = &ar->rec[i];

		if (r->op == OP_DESTROY && atomic_load(&r->state) == 2 && !r->err)
			destroys[ndestroys++] = r;
		if (r->op == OP_SHUTDOWN && atomic_load(&r->state) == 2 && !r->err)
			shutdowns[nshutdowns++] = r;
		/* the first get of each incarnation that found nothing ready */
		if (r->q == QX && (r->op == OP_GET || r->op == OP_DONEGET) &&
		    atomic_load(&r->state) == 2 && r->err == ESHUTDOWN &&
		    r->gen < eshut_gens)
			eshut_at[r->gen] = min64(eshut_at[r->gen], r->cmp);
		if (r->op == OP_RFNTH) {
			lowered[nlowered][0] = r->inv;
			lowered[nlowered++][1] =
				atomic_load(&r->state) == 2 ? r->cmp : T_INF;
			continue;
		}
		/* the parent's windows, one at a time: its own records */
		if (r->op == OP_PARAM && r->kind == 1) {
			open_w = (long)nlowered;
			lowered[nlowered][0] = r->inv;
			lowered[nlowered++][1] = T_INF;
		} else if (r->op == OP_PARAM && r->kind == 0 && open_w >= 0 &&
			   atomic_load(&r->state) == 2 && !r->err) {
			lowered[open_w][1] = r->cmp;
			open_w = -1;
		}
	}
	for (i = 0; i < n; i++) {
		const struct trec *r = &ar->rec[i];

		if (!is_get(r->op) || !r->slot || r->err == EIDRM)
			continue;
		if (atomic_load(&r->state) == 1)
			ck.unknown_gets[ck.nunknown_gets++] = i;
		else if (atomic_load(&r->state) == 2)
			gets[r->q][ngets[r->q]++] =
				(struct getspan){ r->inv, r->cmp, 0 };
	}
	for (k = 0; k < NQ; k++) {
		qsort(gets[k], ngets[k], sizeof(*gets[k]), getspan_cmp);
		for (i = 0; i < ngets[k]; i++)
			gets[k][i].max_cmp = i && gets[k][i - 1].max_cmp >
					     gets[k][i].cmp ?
					     gets[k][i - 1].max_cmp : gets[k][i].cmp;
	}
	nev = 0;
	for (i = 0; i < n; i++) {
		const struct trec *r = &ar->rec[i];

		if (!atomic_load(&r->state))
			continue;
		count_rec(r);
		for (k = 0; k < r->nk; k++)
			ev[nev++] = (struct ev){ r->key[k], (uint32_t)k, i };
	}
	qsort(ev, nev, sizeof(*ev), ev_cmp);
	ev_all = ev;
	for (a = 0; a < nev; a = b) {
		for (b = a + 1; b < nev && ev[b].key == ev[a].key; b++)
			;
		check_key(ev + a, b - a);
	}
	fifo_check();
	free(fifos);
	free(ev);
	return 0;
}

/*
 * Everything is closed and destroyed: rmmod must succeed now (retried
 * while queues freed by a work item still hold the module, up to 5 s),
 * and the module is loaded again from @path for whatever runs next.
 */
static int unload_reload(const char *path)
{
	int tries;
	long ret = rmmod_retry("kwq", &tries);
	int fd, e = errno;

	ktap_check(ret == 0, "rmmod_when_unused", "%s after %d tries",
		   strerror(e), tries);
	if (ret)
		return 0;
	printf("    # rmmod succeeded after %d tries\n", tries);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ret = fd < 0 ? -1 : syscall(SYS_finit_module, fd, "", 0);
	ktap_check(ret == 0, "module_reloaded", "%s: %s", path,
		   strerror(errno));
	if (fd >= 0)
		close(fd);
	return ret == 0;
}

int main(int argc, char **argv)
{
	struct kwq_queue_opts o[NQ] = {
		/* no bucket: the limiter check is exact here */
		{ .mode = 0600, .max_wait_ns = 100 * KT_MS, .nr_limits = 1,
		  .limits = { { KWQ_LIMIT_EXPONENTIAL, 0, KT_MS, 50 * KT_MS } } },
		{ .mode = 0600, .max_wait_ns = 100 * KT_MS, .nr_limits = 1,
		  .limits = { { KWQ_LIMIT_EXPONENTIAL, 0, KT_MS, 20 * KT_MS } },
		  .max_retries = 5, .max_dead = KWQ_MAX_DEAD },
		{ .mode = 0600, .max_wait_ns = 50 * KT_MS, .nr_limits = 2,
		  .limits = { { KWQ_LIMIT_FAST_SLOW, 2, KT_MS, 30 * KT_MS },
			      { KWQ_LIMIT_BUCKET, 10, 200000, 0 } },
		  .max_retries = 3, .max_dead = KWQ_MAX_DEAD },
		/* QX, destroyed and re-created under load */
		{ .mode = 0600, .max_wait_ns = 100 * KT_MS, .nr_limits = 1,
		  .limits = { { KWQ_LIMIT_EXPONENTIAL, 0, KT_MS, 20 * KT_MS } },
		  .max_retries = 3, .max_dead = KWQ_MAX_DEAD },
		/* KQ, kwq_torture.ko's (kt_load() passes these on) */
		{ .mode = 0600, .max_wait_ns = 100 * KT_MS, .nr_limits = 1,
		  .limits = { { KWQ_LIMIT_EXPONENTIAL, 0, KT_MS, 20 * KT_MS } } },
	};
	struct kwq_stats_args st[NQ];
	unsigned int seed = (unsigned int)kt_now();
	int secs = 90, nprod = 3, nwork = 4, opt, q, i, bad = 0, ok;
	int slots[MAX_PROCS];
	int64_t t0, end, calm_at;
	unsigned long nfaults = 0, calms = 0;

	char modpath[4096] = "", ktpath[4096] = "";
	unsigned long ktkilled;
	ssize_t ml;

	/*
	 * The module to load again at the end, ../kwq.ko from the test; the
	 * kernel threads' module beside it.
	 */
	ml = readlink("/proc/self/exe", modpath, sizeof(modpath) - 32);
	if (ml > 0) {
		modpath[ml] = '\0';
		if (strrchr(modpath, '/'))
			strcpy(strrchr(modpath, '/'), "/../kwq.ko");
		memcpy(ktpath, modpath, sizeof(ktpath));
		strcpy(strrchr(ktpath, '/'), "/kwq_torture.ko");
	}
	while ((opt = getopt(argc, argv, "t:s:p:w:m:K:")) != -1) {
		if (opt == 't')
			secs = atoi(optarg);
		else if (opt == 's')
			seed = (unsigned int)strtoul(optarg, NULL, 0);
		else if (opt == 'p')
			nprod = atoi(optarg);
		else if (opt == 'w')
			nwork = atoi(optarg);
		else if (opt == 'm')
			snprintf(modpath, sizeof(modpath), "%s", optarg);
		else if (opt == 'K')
			snprintf(ktpath, sizeof(ktpath), "%s", optarg);
		else
			return 2;
	}
	if (nprod < 1 || nwork < 1 || nprod + nwork > MAX_PROCS || secs < 1)
		return 2;
	o[1].processing_timeout_ns = (uint64_t)q_timeout[1];
	o[2].processing_timeout_ns = (uint64_t)q_timeout[2];
	kt_setup("kwq_torture", 16, (unsigned int)secs * 3 + 300);
	printf("    # seed %u (rerun: torture_test -s %u -t %d -p %d -w %d)\n",
	       seed, seed, secs, nprod, nwork);
	srand(seed);
	ar = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ar == MAP_FAILED)
		return 1;
	nrec_max = (ARENA_BYTES - sizeof(*ar)) / sizeof(struct trec);
	my_slot = new_slot(S_PARENT);
	atomic_store(&ar->slots[0].pid, (int)getpid());
	memcpy(qopts, o, sizeof(qopts));
	for (q = 0; q < NQ; q++) {
		kt_name(qname[q], "torture");
		qfd[q] = q == KQ ? kt_load(ktpath) : make_queue(q);
		if (qfd[q] < 0 && q == KQ) {
			printf("    # load %s with queue %s: %s\n", ktpath,
			       qname[q], strerror(errno));
			return 1;
		}
		if (qfd[q] < 0) {
			printf("    # create %s as uid %d: %s\n", qname[q],
			       TORTURE_UID, strerror(errno));
			return 1;
		}
	}
	ktrace_start();
	ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (params_read() < 0)
		return 1;
	if (memcg_setup() < 0) {
		printf("    # no memory cgroup for the producers (%s): %s\n",
		       CGP, strerror(errno));
		return 1;
	}

	for (i = 0; i < nprod + nwork; i++)
		slots[i] = spawn(i < nprod ? S_PRODUCER : S_WORKER,
				 seed + 1 + (unsigned int)i);
	for (i = 0; i < KT_PROD + KT_WORK; i++)
		kslots[i] = kt_spawn(i < KT_PROD ? S_KPRODUCER : S_KWORKER,
				     seed + 100 + (unsigned int)i);
	t0 = kt_now();
	end = t0 + (int64_t)secs * KT_SEC;
	calm_at = t0 + 3 * KT_SEC;
	while (kt_now() < end && !atomic_load(&ar->full)) {
		/* every 4-8 s a calm spell of 2 s without faults */
		if (kt_now() >= calm_at) {
			atomic_store(&ar->calm, 1);
			kt_ctl("calm 1");
			kt_sleep_ms(2000);
			kt_ctl("calm 0");
			atomic_store(&ar->calm, 0);
			calm_at = kt_now() + (4 + rand() % 5) * KT_SEC;
			calms++;
		}
		kt_sleep_ms(20 + rand() % 130);
		/*
		 * Mostly SIGKILLs; every 20 faults one destroy, one lowered
		 * byte budget, one lowered creation limit (queues and items
		 * in turn), one rmmod attempt, one CPU hotplug, one memcg
		 * window, one IPC namespace and one kernel thread's kill
		 * for sure (a short run on a loaded host still has each
		 * kind), more at random.
		 */
		i = nfaults % 20 == 5 ? 0 : nfaults % 20 == 10 ? 6 :
		    nfaults % 20 == 15 ? 12 : nfaults % 20 == 18 ? 16 :
		    nfaults % 20 == 13 ? 20 + (int)(nfaults / 20 % 2) * 2 :
		    nfaults % 20 == 3 ? 24 : nfaults % 20 == 8 ? 28 :
		    nfaults % 20 == 1 ? 32 : rand() % 100;
		if (i < 6)
			destroy_recreate(nfaults % 20 == 5 ?
					 (int)(nfaults / 20 % 2) : rand() % 2);
		else if (i < 12)
			param_fault();
		else if (i < 16)
			rmmod_fault();
		else if (i < 20)
			hotplug_fault();
		else if (i < 24)
			limit_fault(i < 22 ? P_QUEUES : P_ITEMS);
		else if (i < 28)
			memcg_fault();
		else if (i < 32)
			ipcns_fault(seed + 9000 + (unsigned int)nfaults, 0);
		else if (i < 36)
			kt_fault(seed + 7000 + (unsigned int)nfaults);
		else
			bad += !fault(slots, nprod, nprod + nwork,
				      seed + 1000 + (unsigned int)nfaults);
		nfaults++;
		bad += memcg_reap(slots, nprod,
				  seed + 5000 + (unsigned int)nfaults);
		kt_merge();
	}
	ipcns_fault(seed + 8999, 1);
	if (atomic_load(&ar->full))
		printf("    # the history is full after %.1f s: the workload ends early\n",
		       (double)(kt_now() - t0) / 1e9);
	/* producers stop and exit; workers are killed (leases return) */
	atomic_store(&ar->stop, 1);
	for (i = 0; i < nprod; i++) {
		pid_t pid = atomic_load(&ar->slots[slots[i]].pid);
		int st2 = kt_wait(pid);

		/* a producer stuck in pause() (history full) */
		if (st2 != 0 && !atomic_load(&ar->full))
			bad += memcg_victim(slots[i], st2);
	}
	for (i = nprod; i < nprod + nwork; i++)
		bad += kill_slot(slots[i]) != 128 + SIGKILL;
	/* the kernel threads too: workers return the keys they hold */
	for (i = 0; i < KT_PROD + KT_WORK; i++)
		kt_kill(i);
	kt_merge();
	ktkilled = (unsigned long)kt_read_num(KT_DIR "stats", "killed");
	ktap_check(!kt_errors && kt_merged > 0 && kt_fnth_reached > 0 &&
		   kt_read_num(KT_DIR "stats", "threads") == 0 &&
		   ktkilled == faults[F_KILL_KTHREAD] + KT_PROD + KT_WORK,
		   "kthreads_behaved",
		   "%lu control writes refused or records lost, %llu records, %llu failed an allocation (fail-nth), %lu killed",
		   kt_errors, (unsigned long long)kt_merged,
		   (unsigned long long)kt_fnth_reached, ktkilled);
	printf("    # kernel threads: %llu calls, %lu stopped (%lu at random), %ld leases returned at their kills; fail-nth armed on %llu calls, %llu of them failed an allocation, %llu refused ENOMEM\n",
	       (unsigned long long)kt_merged, ktkilled, faults[F_KILL_KTHREAD],
	       kt_read_num(KT_DIR "stats", "returned"),
	       (unsigned long long)kt_fnth_armed,
	       (unsigned long long)kt_fnth_reached,
	       (unsigned long long)kt_fnth_failed);
	ktap_check(!bad, "processes_behaved", "%d unexpected exits", bad);
	ktap_check(!atomic_load(&ar->ring_errors), "rings_behaved",
		   "%u ring setups failed or stray completions (above)",
		   atomic_load(&ar->ring_errors));
	ktap_check(drain(st) == 0, "drained",
		   "keys left after the drain: q0 %llu/%llu/%llu/%llu",
		   (unsigned long long)st[0].len, (unsigned long long)st[0].waiting,
		   (unsigned long long)st[0].processing, (unsigned long long)st[0].dead);
	final_st = st;
	final_gen = my_gen[QX];
	ok = check_history() == 0;
	ktap_check(ok, "history_checked", "out of memory");
	printf("    # %llu calls (%llu unknown), %llu keys, %u processes, %lu faults, %lu calm\n",
	       (unsigned long long)ck.ops, (unsigned long long)ck.unknown,
	       (unsigned long long)ck.keys, atomic_load(&ar->nslots), nfaults,
	       calms);
	faults[F_FAILNTH] = atomic_load(&ar->fnth_failed) + kt_fnth_failed;
	printf("    # memcg: %lu windows, %ld times at memory.max, %lu producers OOM-killed\n",
	       faults[F_MEMCG], kt_read_num(CGP "/memory.events", "max"),
	       memcg_oom_kills);
	printf("    # fail-nth: %llu calls and ring publishes armed, %llu refused ENOMEM; %llu ring records completed ENOMEM\n",
	       (unsigned long long)(atomic_load(&ar->fnth_armed) + kt_fnth_armed),
	       (unsigned long long)faults[F_FAILNTH],
	       (unsigned long long)ck.ring_enomem);
	for (i = 0, ok = 1; i < F_NR; i++)
		ok &= faults[i] > 0;
	/* every figure below with a goal is one of these cases */
	printf("    # %llu ring calls (%llu unknown outcomes)\n",
	       (unsigned long long)ck.ring_ops,
	       (unsigned long long)ck.ring_unknown);
	printf("    # faults' effects: %llu adds refused (%llu EDQUOT, %llu ENOSPC, %llu ENOMEM), %llu calls on a destroyed queue's file, %u ring setups refused EDQUOT\n",
	       (unsigned long long)ck.add_refused,
	       (unsigned long long)ck.add_edquot,
	       (unsigned long long)ck.add_enospc,
	       (unsigned long long)ck.add_enomem,
	       (unsigned long long)ck.after_destroy,
	       atomic_load(&ar->ring_edquot));
	printf("    # shutdowns: %lu (%lu ending in a get refused ESHUTDOWN), %lu waiting keys dropped, %llu adds after them refused, %llu keys ready at one checked handed out\n",
	       faults[F_SHUTDOWN], shutdown_eshut, shutdown_dropped,
	       (unsigned long long)ck.after_shutdown,
	       (unsigned long long)ck.shutdown_checked);
	printf("    # FIFO: %llu keys checked; limiter: %llu delays checked (%llu with the failure count known exactly)\n",
	       (unsigned long long)ck.fifo_checked,
	       (unsigned long long)ck.limiter_checked,
	       (unsigned long long)ck.limiter_exact);
	ktap_check(ck.ops > 1000 && ok && ck.deadline_checked > 0 &&
		   ck.wait_measured > 0 && ck.ring_ops > 0 && ck.ring_unknown > 0 &&
		   ck.fifo_checked > 0 && ck.limiter_exact > 0 &&
		   ck.add_edquot > 0 && ck.after_destroy > 0,
		   "workload_ran",
		   "%llu calls, %lu faults (each kind?), %llu deadlines, %llu waits, %llu ring calls (%llu unknown), %llu fifo, %llu exact limiter, %llu EDQUOT, %llu after destroy",
		   (unsigned long long)ck.ops, nfaults,
		   (unsigned long long)ck.deadline_checked,
		   (unsigned long long)ck.wait_measured,
		   (unsigned long long)ck.ring_ops,
		   (unsigned long long)ck.ring_unknown,
		   (unsigned long long)ck.fifo_checked,
		   (unsigned long long)ck.limiter_exact,
		   (unsigned long long)ck.add_edquot,
		   (unsigned long long)ck.after_destroy);
	for (i = 0; i < (int)ARRAY_SIZE(ck.kinds) && ck.kinds[i]; i++)
		printf("    # %llu violations %s\n",
		       (unsigned long long)ck.kind_nr[i], ck.kinds[i]);
	if (ck.call_violations)
		printf("    # %llu violations call\n",
		       (unsigned long long)ck.call_violations);
	ktap_check(!ck.violations, "history_follows_the_model",
		   "%llu violations", (unsigned long long)ck.violations);
	ok = 1;
	for (q = 0; q < NQ; q++)
		ok &= check_stats(q, &st[q]);
	ktap_check(ok, "stats_agree_with_history", "see above");
	ktap_check(ck.max_ready_wait <= LOST_WAKE_NS, "no_lost_wakeup",
		   "a ready key waited %lld ms for a waiting getter",
		   (long long)(ck.max_ready_wait / KT_MS));
	for (q = 0; q < NQ; q++)
		printf("    # q%d: got %llu done %llu rl %llu revoked %llu back %llu dead %llu\n",
		       q, (unsigned long long)ck.qc[q].handouts,
		       (unsigned long long)ck.qc[q].done_ok,
		       (unsigned long long)ck.qc[q].rl_ok,
		       (unsigned long long)st[q].processing_timeouts_total,
		       (unsigned long long)st[q].lease_returns,
		       (unsigned long long)st[q].dead_total);
	ok = 1;
	for (q = 0; q < NQ; q++) {
		if (q == KQ)
			continue;
		ok &= kwq_destroy(qfd[q], qname[q]) == 0;
		close(qfd[q]);
	}
	ktap_check(ok, "queues_destroyed", "%s", strerror(errno));
	ktap_check(kt_unload(), "kthread_module_unloaded",
		   "see above (its queue refused to userspace, then rmmod)");
	i = ipcns_left();
	ktap_check(i == 0, "ipc_namespaces_freed",
		   "%d churned IPC namespaces still listed in /sys/kernel/debug/kwq 10 s after the workload",
		   i);
	fault_bad += atomic_load(&ar->fnth_errors);
	ktap_check(!fault_bad, "faults_behaved",
		   "%lu destroys, parameter writes, rmmods or hotplugs misbehaved (above)",
		   fault_bad);
	ktap_check(faults[F_RMMOD] > 0, "rmmod_refused_while_in_use",
		   "no rmmod attempt was refused");
	printf("    # rmmod while in use: %lu refused, %s\n", faults[F_RMMOD],
	       kt_ename(rmmod_errno));
	ok = unload_reload(modpath);

	printf("# figure torture_ops_checked %llu >0 %s\n",
	       (unsigned long long)ck.ops, ck.ops ? "met" : "missed");
	for (i = 0; i < F_NR; i++)
		printf("# figure torture_faults_%s %lu >0 %s\n", fault_names[i],
		       faults[i], faults[i] ? "met" : "missed");
	printf("# figure torture_ring_calls_checked %llu >0 %s\n",
	       (unsigned long long)ck.ring_ops, ck.ring_ops ? "met" : "missed");
	printf("# figure torture_fifo_keys_checked %llu >0 %s\n",
	       (unsigned long long)ck.fifo_checked,
	       ck.fifo_checked ? "met" : "missed");
	printf("# figure torture_limiter_delays_checked %llu >0 %s\n",
	       (unsigned long long)ck.limiter_checked,
	       ck.limiter_exact ? "met" : "missed");
	printf("# figure torture_violations %llu 0 %s\n",
	       (unsigned long long)ck.violations,
	       ck.violations ? "missed" : "met");
	printf("# figure torture_longest_ready_wait_ms %.1f <=%lld %s\n",
	       (double)ck.max_ready_wait / 1e6, LOST_WAKE_NS / KT_MS,
	       ck.max_ready_wait <= LOST_WAKE_NS ? "met" : "missed");
	return ktap_end();
}
