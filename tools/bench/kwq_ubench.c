// SPDX-License-Identifier: GPL-2.0
/*
 * kwq_ubench: userspace benchmarks of /dev/kwq against POSIX mqueue, run
 * inside the benchmark VM by tools/bench/bench.sh.
 *
 *   kwq_ubench throughput kwq_single|kwq_batch|mqueue|kwq_ring|kwq_ring_batch
 *	ITEMS REP
 *	one producer process and one consumer process move ITEMS 16-byte
 *	keys; timed from "go" until both have exited. kwq_single: one add
 *	per key, and a worker loop of one done+get call (KWQ_IOC_DONE_GET)
 *	per key: two system calls per item, as mqueue. kwq_batch: 64 keys
 *	per add, and one done+get call per 64 keys (min_nr 64).
 *	mqueue: mq_send / mq_receive of the same 16 bytes.
 *	kwq_ring: the producer adds through its ring (libkwq's kwq_ring_add():
 *	no system call while the worker is busy, one doorbell when it
 *	sleeps); the worker processes one key a cycle (kwq_ring_next(): one
 *	DONE_LEASE record per key, and one KWQ_IOC_RING_ENTER, submit + get,
 *	whenever its lease slots are empty, leasing every ready key up to
 *	RING_PREFETCH). kwq_ring_batch:
 *	64 records per publish, 64 done records and a get of 64 (min 64,
 *	10 ms) per enter. The producer's ring holds RING_SQ records that
 *	count against the depth bound: the queue's max_items is
 *	MQ_DEPTH - RING_SQ, and the producer waits (as mq_send would) while
 *	the status page's ready count leaves no room for a full ring more.
 *	An add refused at the bound comes back as an ENOSPC completion and
 *	is added again (enospc= counts them).
 *	The kwq queue is created with max_items = MQ_DEPTH, the depth of the
 *	mqueue: the same bound (counting keys ready and processing). mq_send
 *	blocks on a full mqueue; kwq_add fails with ENOSPC instead, so the
 *	producer backs off and retries (sched_yield first, then sleeps of
 *	20 us doubling up to 1 ms: far shorter than the time the consumer
 *	needs to drain a full queue) and the retries are reported (enospc=).
 *	A batch add that stops at the bound is resumed from the first key
 *	that did not go in.
 *   kwq_ubench phases kwq_single|kwq_batch|mqueue|kwq_ring|kwq_ring_batch ITEMS REP
 *	one process: all ITEMS puts, then all takes, each side timed (the
 *	cost per item without contention; mqueue: ITEMS <= 65536). Both
 *	queues are ITEMS deep (kwq: max_items = ITEMS).
 *   kwq_ubench memory ITEMS REP
 *	add ITEMS 16-byte keys and report the kwq_node_104 slab growth (boot
 *	with slab_nomerge so the cache is kwq's alone).
 *
 * Results are lines "RESULT suite=... key=value ..." on stdout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libkwq.h"

#define QNAME		"kwq_ubench"
#define MQNAME		"/kwq_ubench"
#define BATCH		64
#define KEY_LEN		16
#define MQ_DEPTH	4096

/* The producer's submission ring (16-byte keys: one slot a record). */
#define RING_SQ		1024
/* kwq_ring's worker: most keys one enter leases (kwq_ring_next()) */
#define RING_PREFETCH	64

enum impl { KWQ_SINGLE, KWQ_BATCH, MQUEUE, KWQ_RING, KWQ_RING_BATCH, NR_IMPLS };

static const char *const impl_names[] = {
	"kwq_single", "kwq_batch", "mqueue", "kwq_ring", "kwq_ring_batch",
};

/* Counters the child processes report back (shared anonymous memory). */
struct shared {
	unsigned long enospc;	/* producer adds refused at max_items */
	unsigned long doorbells; /* producer publishes that rang */
	int consumer_done;	/* the consumer took every key */
};

static struct shared *shared;
/* kwq_ubench phases: one process, no consumer running beside the producer */
static int phases;

static void die(const char *what)
{
	fprintf(stderr, "kwq_ubench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* 16-byte keys: an index and a constant tag, as the kernel benchmark. */
static void make_key(unsigned char *key, uint64_t idx)
{
	static const uint64_t tag = 0x6b77712d62656e63ULL;

	memcpy(key, &idx, 8);
	memcpy(key + 8, &tag, 8);
}

static int open_queue(void)
{
	int fd = kwq_open_dev(NULL);

	if (fd < 0)
		die("open /dev/kwq");
	if (kwq_open(fd, QNAME))
		die("kwq_open");
	return fd;
}

/*
 * The queue is at max_items (ENOSPC): where mq_send would sleep until
 * the consumer takes a message, yield, then sleep 20 us, 40 us, ... 1 ms
 * until the add goes in. @tries counts the refusals of this add.
 */
static void backoff(unsigned int tries)
{
	struct timespec ts = { 0, 0 };

	if (!tries) {
		sched_yield();
		return;
	}
	ts.tv_nsec = 20000L << (tries < 6 ? tries - 1 : 5);
	if (ts.tv_nsec > 1000000L)
		ts.tv_nsec = 1000000L;
	nanosleep(&ts, NULL);
}

/* One refusal of an add: count it, back off. */
static void full_backoff(unsigned int tries)
{
	shared->enospc++;
	backoff(tries);
}

static int is_ring(enum impl impl)
{
	return impl == KWQ_RING || impl == KWQ_RING_BATCH;
}

/* The producer's ring: which key each slot held, the adds refused. */
struct ring_prod {
	struct kwq_ring *ring;
	uint64_t slot_key[RING_SQ];
	uint64_t *retry;	/* appended to by ring_prod_cqe() */
	uint64_t *again;	/* what ring_prod_retry() adds again */
	unsigned long nr_retry;
};

/* An error completion: ENOSPC at the bound means add the key again. */
static void ring_prod_cqe(void *arg, const struct kwq_cqe *cqe)
{
	struct ring_prod *rp = arg;

	if (cqe->op != KWQ_SQE_ADD || cqe->res != -ENOSPC) {
		fprintf(stderr, "kwq_ubench: ring completion op %u res %d\n",
			cqe->op, cqe->res);
		exit(1);
	}
	rp->retry[rp->nr_retry++] = rp->slot_key[cqe->index % RING_SQ];
	shared->enospc++;
}

static void ring_prod_one(struct ring_prod *rp, uint64_t idx)
{
	unsigned char key[KEY_LEN];
	uint32_t index;

	make_key(key, idx);
	if (kwq_ring_prep(rp->ring, KWQ_SQE_ADD, 0, key, KEY_LEN, 0, 0,
			  &index))
		die("kwq_ring_prep");
	rp->slot_key[index % RING_SQ] = idx;
}

static void ring_prod_publish(struct ring_prod *rp)
{
	int r = kwq_ring_publish(rp->ring);

	if (r < 0)
		die("kwq_ring_publish");
	shared->doorbells += r;
}

/*
 * Add again the keys refused at the bound (read from the completions),
 * backing off as the ioctl producer does; with @until_consumed, until the
 * consumer took every key (a refusal can come back until then).
 */
static void ring_prod_retry(struct ring_prod *rp, int until_consumed)
{
	unsigned int tries = 0;
	unsigned long i, n;

	for (;;) {
		kwq_ring_reap(rp->ring, NULL, 0);
		if (!rp->nr_retry) {
			if (!until_consumed ||
			    __atomic_load_n(&shared->consumer_done,
					    __ATOMIC_ACQUIRE))
				return;
			/* the last records drained, or refusals to come */
			if (kwq_ring_submit(rp->ring))
				die("kwq_ring_submit");
			nanosleep(&(struct timespec){ 0, 50000 }, NULL);
			continue;
		}
		backoff(tries++);	/* the refusals were counted */
		/* Adding them may read completions: new refusals append. */
		n = rp->nr_retry;
		memcpy(rp->again, rp->retry, n * sizeof(*rp->again));
		rp->nr_retry = 0;
		for (i = 0; i < n; i++)
			ring_prod_one(rp, rp->again[i]);
		ring_prod_publish(rp);
	}
}

static void produce_ring(enum impl impl, unsigned long items, int phases)
{
	struct ring_prod *rp = calloc(1, sizeof(*rp));
	unsigned long i, j, per = impl == KWQ_RING_BATCH ? BATCH : 1;
	unsigned int tries;
	int fd = open_queue();

	if (!rp)
		die("calloc");
	rp->retry = calloc(items, sizeof(*rp->retry));
	rp->again = calloc(items, sizeof(*rp->again));
	if (!rp->retry || !rp->again || kwq_ring_setup(fd, RING_SQ, RING_SQ, 0, &rp->ring))
		die("kwq_ring_setup");
	kwq_ring_set_callback(rp->ring, ring_prod_cqe, rp);
	for (i = 0; i < items; i += j) {
		/*
		 * Where mq_send would block: keys ready (the status page, no
		 * system call) and what the ring may hold within the bound,
		 * so that an add is seldom refused (and added again).
		 */
		for (tries = 0; !phases && kwq_ring_ready(rp->ring) + RING_SQ +
		     per > MQ_DEPTH - RING_SQ; tries++)
			backoff(tries);
		for (j = 0; j < per && i + j < items; j++)
			ring_prod_one(rp, i + j);
		ring_prod_publish(rp);
		/* Refusals at the bound come back here: back off at once. */
		kwq_ring_reap(rp->ring, NULL, 0);
		if (rp->nr_retry)
			ring_prod_retry(rp, 0);
	}
	ring_prod_retry(rp, !phases);
	if (kwq_ring_free(rp->ring))
		die("kwq_ring_free");
	free(rp->retry);
	free(rp->again);
	free(rp);
	close(fd);
}

static void produce(enum impl impl, unsigned long items)
{
	unsigned char key[KEY_LEN], recs[BATCH * KWQ_REC_SIZE(KEY_LEN)];
	struct kwq_recbuf rb = KWQ_RECBUF_INIT, rest;
	unsigned int tries, done;
	unsigned long i, j;
	size_t off;
	mqd_t mq;
	int fd;

	switch (impl) {
	case KWQ_SINGLE:
		fd = open_queue();
		for (i = 0; i < items; i++) {
			make_key(key, i);
			for (tries = 0; kwq_add(fd, key, KEY_LEN); tries++) {
				if (errno != ENOSPC)
					die("kwq_add");
				full_backoff(tries);
			}
		}
		break;
	case KWQ_BATCH:
		fd = open_queue();
		rb.buf = recs;
		rb.cap = sizeof(recs);
		for (i = 0; i < items; i += j) {
			rb.len = 0;
			for (j = 0; j < BATCH && i + j < items; j++) {
				make_key(key, i + j);
				rb.len += kwq_rec_pack(recs + rb.len,
						       sizeof(recs) - rb.len,
						       key, KEY_LEN, 0);
			}
			rb.nr = j;
			/* At the bound: resume from the first key not added. */
			rest = rb;
			for (tries = 0; kwq_add_batch(fd, &rest, NULL, &done);
			     tries++) {
				if (errno != ENOSPC)
					die("kwq_add_batch");
				off = (size_t)done * KWQ_REC_SIZE(KEY_LEN);
				rest.buf = (unsigned char *)rest.buf + off;
				rest.len -= off;
				rest.cap -= off;
				rest.nr -= done;
				if (done)
					tries = 0;
				full_backoff(tries);
			}
		}
		break;
	case MQUEUE:
		mq = mq_open(MQNAME, O_WRONLY);
		if (mq == (mqd_t)-1)
			die("mq_open");
		for (i = 0; i < items; i++) {
			make_key(key, i);
			if (mq_send(mq, (const char *)key, KEY_LEN, 0))
				die("mq_send");
		}
		break;
	case KWQ_RING:
	case KWQ_RING_BATCH:
		produce_ring(impl, items, phases);
		break;
	default:
		break;
	}
}

/*
 * The ring worker. kwq_ring: one key per processing cycle, through
 * kwq_ring_next(): the last key's DONE_LEASE record, then the next key
 * from the lease slots, entering the kernel (every ready key up to
 * RING_PREFETCH leased in one RING_ENTER) only when none is held.
 * kwq_ring_batch: one RING_ENTER a cycle of up to 64 keys (min 64, 10 ms).
 */
static void consume_ring(enum impl impl, unsigned long items)
{
	static struct kwq_ring_lease l[BATCH];
	unsigned int per = impl == KWQ_RING_BATCH ? BATCH : 1;
	int64_t timeout = per > 1 ? 10000000 : -1;
	struct kwq_ring *ring;
	struct kwq_cqe cqe;
	unsigned long got = 0;
	int fd = open_queue(), n = 0;

	if (kwq_ring_setup(fd, 4 * BATCH, 2 * BATCH,
			   per > 1 ? per : RING_PREFETCH, &ring))
		die("kwq_ring_setup");
	while (got < items) {
		if (per == 1)
			n = kwq_ring_next(ring, got ? l : NULL, l,
					  RING_PREFETCH, timeout);
		else
			n = kwq_ring_done_get(ring, l, (unsigned int)n, l,
					      per, per, timeout);
		if (n < 0 && errno == ETIMEDOUT) {
			n = 0;
			continue;
		}
		if (n < 0)
			die(per == 1 ? "kwq_ring_next" : "kwq_ring_done_get");
		got += n;
	}
	__atomic_store_n(&shared->consumer_done, 1, __ATOMIC_RELEASE);
	while (n > 0)
		if (kwq_ring_done_lease(ring, &l[--n]))
			die("kwq_ring_done_lease");
	if (kwq_ring_submit(ring))
		die("kwq_ring_submit");
	if (kwq_ring_reap(ring, &cqe, 1)) {
		fprintf(stderr, "kwq_ubench: worker completion op %u res %d\n",
			cqe.op, cqe.res);
		exit(1);
	}
	if (kwq_ring_free(ring))
		die("kwq_ring_free");
	close(fd);
}

static void consume(enum impl impl, unsigned long items)
{
	static unsigned char buf[BATCH * KWQ_REC_SIZE_MAX];
	unsigned long got = 0;
	struct kwq_recbuf rb;
	size_t used;
	mqd_t mq;
	long n;
	int fd;

	switch (impl) {
	case KWQ_SINGLE:
		/* A worker loop: finish the key held and take the next, one call. */
		fd = open_queue();
		n = 0;
		while (got < items) {
			n = kwq_done_get_one(fd, got ? buf : NULL, (size_t)n,
					     NULL, buf, sizeof(buf), 0, -1);
			if (n < 0)
				die("kwq_done_get_one");
			got++;
		}
		if (kwq_done(fd, buf, (size_t)n))
			die("kwq_done");
		break;
	case KWQ_BATCH:
		/*
		 * Finish the batch held and take the next in one call, waiting
		 * up to 10 ms for a full batch.
		 */
		fd = open_queue();
		rb.nr = 0;
		while (got < items) {
			n = kwq_done_get(fd, &rb, NULL, buf, sizeof(buf), BATCH,
					 BATCH, 0, 10000000, &used);
			if (n < 0 && errno == ETIMEDOUT) {
				rb.nr = 0;
				continue;
			}
			if (n < 0)
				die("kwq_done_get");
			/* Records of a get (priority 0) are valid for done. */
			rb.buf = buf;
			rb.len = used;
			rb.cap = sizeof(buf);
			rb.nr = n;
			got += n;
		}
		if (kwq_done_batch(fd, &rb, NULL))
			die("kwq_done_batch");
		break;
	case MQUEUE:
		mq = mq_open(MQNAME, O_RDONLY);
		if (mq == (mqd_t)-1)
			die("mq_open");
		while (got < items) {
			if (mq_receive(mq, (char *)buf, KEY_LEN, NULL) != KEY_LEN)
				die("mq_receive");
			got++;
		}
		break;
	case KWQ_RING:
	case KWQ_RING_BATCH:
		consume_ring(impl, items);
		break;
	default:
		break;
	}
}

/* Fork a child that signals @ready, waits for @go, then runs @fn. */
static pid_t spawn(void (*fn)(enum impl, unsigned long), enum impl impl,
		   unsigned long items, int ready, int go)
{
	pid_t pid = fork();
	char c = 0;

	if (pid < 0)
		die("fork");
	if (pid)
		return pid;
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		_exit(1);
	fn(impl, items);
	_exit(0);
}

static int throughput(enum impl impl, unsigned long items, unsigned int rep)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	struct mq_attr attr = { .mq_maxmsg = MQ_DEPTH, .mq_msgsize = KEY_LEN };
	/* The same depth bound as the mqueue. */
	struct kwq_queue_opts qopts = {
		/* the producer's ring holds the rest of the bound */
		.max_items = is_ring(impl) ? MQ_DEPTH - RING_SQ : MQ_DEPTH,
	};
	int ready[2], go[2], st, fd = -1, ok = 1;
	pid_t cons, prod;
	uint64_t t0, t1;
	char c[2] = {};
	mqd_t mq;

	if (impl == MQUEUE) {
		/* A deep queue needs more than the default 800 KiB. */
		setrlimit(RLIMIT_MSGQUEUE, &unlimited);
		mq_unlink(MQNAME);
		mq = mq_open(MQNAME, O_CREAT | O_EXCL | O_RDWR, 0600, &attr);
		if (mq == (mqd_t)-1)
			die("mq_open O_CREAT");
		mq_close(mq);
	} else {
		fd = kwq_open_dev(NULL);
		if (fd < 0)
			die("open /dev/kwq");
		kwq_destroy(fd, QNAME);
		if (kwq_create(fd, QNAME, &qopts))
			die("kwq_create");
	}
	shared->enospc = 0;
	shared->doorbells = 0;
	shared->consumer_done = 0;
	if (pipe(ready) || pipe(go))
		die("pipe");
	cons = spawn(consume, impl, items, ready[1], go[0]);
	prod = spawn(produce, impl, items, ready[1], go[0]);
	if (read(ready[0], c, 1) != 1 || read(ready[0], c, 1) != 1)
		die("read ready");
	t0 = now_ns();
	if (write(go[1], c, 2) != 2)
		die("write go");
	if (waitpid(cons, &st, 0) < 0)
		die("waitpid");
	ok &= WIFEXITED(st) && !WEXITSTATUS(st);
	if (waitpid(prod, &st, 0) < 0)
		die("waitpid");
	ok &= WIFEXITED(st) && !WEXITSTATUS(st);
	t1 = now_ns();
	if (impl == MQUEUE) {
		mq_unlink(MQNAME);
	} else {
		kwq_destroy(fd, QNAME);
		close(fd);
	}
	if (!ok) {
		fprintf(stderr, "kwq_ubench: %s: a child failed\n", impl_names[impl]);
		return 1;
	}
	printf("RESULT suite=user impl=%s rep=%u items=%lu ns=%llu depth=%d enospc=%lu",
	       impl_names[impl], rep, items, (unsigned long long)(t1 - t0),
	       MQ_DEPTH, shared->enospc);
	if (is_ring(impl))
		printf(" doorbells=%lu", shared->doorbells);
	printf("\n");
	return 0;
}

/*
 * The same work without a second process: all puts, then all takes, so
 * each side's cost per item is seen without contention or wakeups.
 */
static int run_phases(enum impl impl, unsigned long items, unsigned int rep)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	struct mq_attr attr = { .mq_maxmsg = items, .mq_msgsize = KEY_LEN };
	struct kwq_queue_opts qopts = { .max_items = items };
	uint64_t t0, t1, t2;
	mqd_t mq;
	int fd;

	if (impl == MQUEUE) {
		setrlimit(RLIMIT_MSGQUEUE, &unlimited);
		mq_unlink(MQNAME);
		mq = mq_open(MQNAME, O_CREAT | O_EXCL | O_RDWR, 0600, &attr);
		if (mq == (mqd_t)-1)
			die("mq_open O_CREAT (at most 65536 items)");
		mq_close(mq);
	} else {
		fd = kwq_open_dev(NULL);
		if (fd < 0)
			die("open /dev/kwq");
		kwq_destroy(fd, QNAME);
		if (kwq_create(fd, QNAME, &qopts))
			die("kwq_create");
	}
	t0 = now_ns();
	produce(impl, items);
	t1 = now_ns();
	consume(impl, items);
	t2 = now_ns();
	if (impl == MQUEUE) {
		mq_unlink(MQNAME);
	} else {
		kwq_destroy(fd, QNAME);
		close(fd);
	}
	printf("RESULT suite=uphases impl=%s rep=%u items=%lu put_ns=%llu take_ns=%llu\n",
	       impl_names[impl], rep, items, (unsigned long long)(t1 - t0),
	       (unsigned long long)(t2 - t1));
	return 0;
}

/* First number in a sysfs or procfs file (after @prefix, if given). */
static long long read_num(const char *path, const char *prefix)
{
	char line[256];
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (prefix && strncmp(line, prefix, strlen(prefix)))
			continue;
		v = strtoll(line + (prefix ? strlen(prefix) : 0), NULL, 10);
		break;
	}
	fclose(f);
	return v;
}

struct memsnap {
	long long slabs, objects;
};

#define SLAB_DIR "/sys/kernel/slab/kwq_node_104/"

static void snap(struct memsnap *m)
{
	m->slabs = read_num(SLAB_DIR "slabs", NULL);
	m->objects = read_num(SLAB_DIR "objects", NULL);
}

static int run_memory(unsigned long items, unsigned int rep)
{
	unsigned char key[KEY_LEN], recs[4096 * KWQ_REC_SIZE(KEY_LEN)];
	struct kwq_recbuf rb = { recs, 0, sizeof(recs), 0 };
	long long order, slab_size, object_size;
	struct memsnap a, b;
	unsigned long i, j;
	int fd;

	fd = kwq_open_dev(NULL);
	if (fd < 0)
		die("open /dev/kwq");
	kwq_destroy(fd, QNAME);
	if (kwq_create(fd, QNAME, NULL))
		die("kwq_create");
	order = read_num(SLAB_DIR "order", NULL);
	slab_size = read_num(SLAB_DIR "slab_size", NULL);
	object_size = read_num(SLAB_DIR "object_size", NULL);
	usleep(200000);
	snap(&a);
	for (i = 0; i < items; i += j) {
		rb.len = 0;
		for (j = 0; j < 4096 && i + j < items; j++) {
			make_key(key, i + j);
			rb.len += kwq_rec_pack(recs + rb.len, sizeof(recs) - rb.len,
					       key, KEY_LEN, 0);
		}
		rb.nr = j;
		if (kwq_add_batch(fd, &rb, NULL, NULL))
			die("kwq_add_batch");
	}
	usleep(200000);	/* the hash table resize runs from a work item */
	snap(&b);
	kwq_destroy(fd, QNAME);
	close(fd);
	if (a.slabs < 0 || order < 0) {
		fprintf(stderr, "kwq_ubench: no %s (boot with slab_nomerge)\n",
			SLAB_DIR);
		return 1;
	}
	printf("RESULT suite=memory rep=%u items=%lu object_size=%lld",
	       rep, items, object_size);
	printf(" slab_size=%lld slab_bytes=%lld objects=%lld\n", slab_size,
	       (b.slabs - a.slabs) * (4096LL << order), b.objects - a.objects);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long items;
	unsigned int rep;
	int i;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		die("mmap");
	if (argc == 5 && !strcmp(argv[1], "throughput")) {
		items = strtoul(argv[3], NULL, 0);
		rep = strtoul(argv[4], NULL, 0);
		for (i = 0; i < NR_IMPLS; i++)
			if (!strcmp(argv[2], impl_names[i]))
				return throughput(i, items, rep);
	} else if (argc == 5 && !strcmp(argv[1], "phases")) {
		items = strtoul(argv[3], NULL, 0);
		rep = strtoul(argv[4], NULL, 0);
		phases = 1;
		for (i = 0; i < NR_IMPLS; i++)
			if (!strcmp(argv[2], impl_names[i]))
				return run_phases(i, items, rep);
	} else if (argc == 4 && !strcmp(argv[1], "memory")) {
		items = strtoul(argv[2], NULL, 0);
		rep = strtoul(argv[3], NULL, 0);
		return run_memory(items, rep);
	}
	fprintf(stderr, "usage: kwq_ubench throughput|phases IMPL ITEMS REP\n"
		"       (IMPL: kwq_single, kwq_batch, mqueue, kwq_ring or\n"
		"       kwq_ring_batch)\n"
		"       kwq_ubench memory ITEMS REP\n");
	return 2;
}
