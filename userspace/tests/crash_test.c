// SPDX-License-Identifier: GPL-2.0
/*
 * No loss under crashes: producer processes add keys while consumer
 * processes lease them (get, work, done) and are SIGKILLed at random and
 * replaced. Keys have processing deadlines, some short enough to pass
 * while a consumer works (its done is then ESTALE and the key runs
 * again), so consumers are also killed with deadline timers armed. At
 * the end every key whose add was accepted has been completed at least
 * once, and nothing is left ready, waiting or processing.
 *
 * Rings (Documentation/rings.rst), each on a queue of its own: a producer
 * that published adds to its ring (sq_tail stored) but never rang the
 * doorbell is SIGKILLed: every add is applied, once. A worker holding
 * keys in lease slots is SIGKILLed: they are ready again. A worker that
 * close()s its fd but keeps the mapping (and sleeps): its leases return
 * and its published adds are applied at close(), while it lives on.
 *
 *   crash_test [-t SECONDS] [-s SEED]
 */
#include "kwqtest.h"

#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define PRODUCERS	2
#define CONSUMERS	4
#define PER_PRODUCER	60000

struct shared {
	atomic_uint accepted[PRODUCERS];	/* keys 0..accepted-1 added */
	atomic_uchar completed[PRODUCERS][PER_PRODUCER];
	atomic_ulong dones;
	atomic_ulong stale;		/* dones refused: deadline passed */
	atomic_int stop_producers;
	atomic_uint ring_published;	/* ring cases: keys published */
	atomic_uint ring_leased;	/* ... keys in lease slots */
	atomic_int ring_step;		/* ... the child's progress */
};

static struct shared *sh;
static char name[KWQ_NAME_LEN];

static void producer(int id, unsigned int seed)
{
	int fd = kt_attach(name);
	struct kwq_recbuf rb = KWQ_RECBUF_INIT;
	unsigned int i = 0, done;
	char key[32];

	srand(seed);
	while (i < PER_PRODUCER && !atomic_load(&sh->stop_producers)) {
		unsigned int j, n = 1 + (unsigned int)rand() % 32;

		kwq_recbuf_reset(&rb);
		for (j = 0; j < n && i + j < PER_PRODUCER; j++)
			kwq_recbuf_push(&rb, key, (size_t)sprintf(key, "p%d-%u", id, i + j), 0);
		done = 0;
		if (kwq_add_batch(fd, &rb, NULL, &done) < 0 && errno != ENOSPC) {
			printf("    # producer %d: add: %s\n", id, strerror(errno));
			_exit(1);
		}
		/* publish only what the kernel accepted */
		i += done;
		atomic_store(&sh->accepted[id], i);
		if (rand() % 4 == 0)
			kt_sleep_ms(1);
	}
	_exit(0);
}

static int parse_key(const void *key, size_t len, int *p, unsigned int *i)
{
	char tmp[32];

	if (len >= sizeof(tmp))
		return -1;
	memcpy(tmp, key, len);
	tmp[len] = '\0';
	return sscanf(tmp, "p%d-%u", p, i) == 2 && *p >= 0 && *p < PRODUCERS &&
	       *i < PER_PRODUCER ? 0 : -1;
}

/*
 * Mark each key of @buf completed, then done them all: one at a time, as
 * a key whose deadline passed meanwhile is ESTALE (it runs again).
 */
static int complete(int fd, const void *buf, size_t used)
{
	const void *key;
	size_t off = 0, len;
	unsigned int i;
	int prio, p;

	while (kwq_rec_next(buf, used, &off, &key, &len, &prio) > 0) {
		if (parse_key(key, len, &p, &i) == 0)
			atomic_store(&sh->completed[p][i], 1);
		if (kwq_done(fd, key, len) == 0)
			atomic_fetch_add(&sh->dones, 1);
		else if (errno == ESTALE)
			atomic_fetch_add(&sh->stale, 1);
		else
			return -1;
	}
	return 0;
}

static void consumer(unsigned int seed)
{
	static unsigned char buf[KWQ_REC_SIZE_MAX * 32];
	int fd = kt_attach(name);
	size_t used;
	int n;

	srand(seed);
	for (;;) {
		/* A quarter of the gets with a 20 ms deadline, the rest 2 s. */
		n = kwq_get_batch_deadline(fd, buf, sizeof(buf),
					   1 + (unsigned int)rand() % 32, 0,
					   50 * KT_MS,
					   rand() % 4 ? 0 : 20 * KT_MS, &used);
		if (n < 0) {
			if (errno == ETIMEDOUT || errno == EAGAIN)
				continue;
			_exit(errno == ESHUTDOWN ? 0 : 1);
		}
		/* "work": a kill here returns the keys (lease) */
		if (rand() % 3 == 0)
			kt_sleep_ms(rand() % 3);
		/* Sometimes past a short deadline: the key is taken back. */
		if (rand() % 16 == 0)
			kt_sleep_ms(30);
		if (complete(fd, buf, used) < 0) {
			printf("    # consumer: done: %s\n", strerror(errno));
			_exit(1);
		}
	}
}

/* --- rings --- */

#define RING_KEYS	600	/* keys a ring producer publishes */

/* An fd on queue @q with a ring of @sq slots and @leases lease slots, mapped. */
static int cring_open(int *fd, struct kt_ring *r, const char *q, uint32_t sq,
		      uint32_t leases)
{
	memset(r, 0, sizeof(*r));
	*fd = kt_attach(q);
	r->a.sq_entries = sq;
	r->a.cq_entries = 256;
	r->a.lease_slots = leases;
	if (ioctl(*fd, KWQ_IOC_RING_SETUP, &r->a) < 0)
		return -1;
	return kt_ring_map(*fd, r);
}

/* Key @i of the ring cases: "r<i>" padded to a length from 2 to 1024. */
static size_t ring_key(char *key, unsigned int i)
{
	static const size_t lens[] = { 4, 40, 41, 100, 104, 105, 317, 1024 };
	size_t len = lens[i % 8], n = (size_t)sprintf(key, "r%u-", i);

	memset(key + n, 'x', len > n ? len - n : 0);
	return len > n ? len : n;
}

/* Write key @i's ADD record at the tail, unpublished; 0 if no room. */
static int cring_add(struct kt_ring *r, unsigned int i)
{
	char key[KWQ_KEY_LEN_MAX + 32];
	size_t len = ring_key(key, i);

	return kt_ring_put(r, KWQ_SQE_ADD, 0, key, (uint32_t)len) >= 0;
}

/*
 * Take every key of queue fd @fd (they are ready: nothing waits); each
 * must be one of keys 0..@n-1 (ring_key()), seen once. Returns how many
 * of them there were, or -1 for a stranger, a duplicate or an error.
 */
static int ring_collect(int fd, unsigned int n)
{
	static unsigned char buf[KWQ_REC_SIZE_MAX * 64];
	static unsigned char seen[RING_KEYS];
	char want[KWQ_KEY_LEN_MAX + 32];
	unsigned int i, got = 0, missing = 0;
	const void *key;
	size_t off, used, len;
	int prio, k;

	memset(seen, 0, sizeof(seen));
	while ((k = kwq_get_batch(fd, buf, sizeof(buf), 64, 0, 0, &used)) > 0) {
		off = 0;
		while (kwq_rec_next(buf, used, &off, &key, &len, &prio) > 0) {
			if (sscanf(key, "r%u-", &i) != 1 || i >= n ||
			    ring_key(want, i) != len || memcmp(want, key, len) ||
			    seen[i]++) {
				printf("    # a stranger or a duplicate (%zu bytes: %.12s)\n",
				       len, (const char *)key);
				return -1;
			}
			got++;
			if (kwq_done(fd, key, len) < 0)
				return -1;
		}
	}
	if (k < 0 && errno != EAGAIN)
		return -1;
	for (i = 0; i < n; i++)
		if (!seen[i] && missing++ < 3)
			printf("    # key r%u- not there\n", i);
	return (int)got;
}

/* Wait until the child @pid says it reached @step (or died). */
static int ring_wait_step(pid_t pid, int step)
{
	int i, st;

	for (i = 0; i < 3000; i++) {
		if (atomic_load(&sh->ring_step) >= step)
			return 0;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			printf("    # ring child died early (status %#x)\n", st);
			return -1;
		}
		kt_sleep_ms(10);
	}
	return -1;
}

/*
 * A producer publishes RING_KEYS adds through a ring of 64 slots: rounds
 * it submits itself (the ring wraps), then a last ring's worth it only
 * publishes (sq_tail stored, no doorbell: nobody waits), and is killed.
 * Every add published is applied, once: its file's release drains it.
 */
static void ring_producer_killed(void)
{
	struct kt_ring r;
	char q[KWQ_NAME_LEN];
	int rfd, fd = kt_queue("crash-rprod", &(struct kwq_queue_opts){ .mode = 0600 }, q);
	unsigned int i = 0, before;
	int got = -1, ok;
	pid_t pid;

	atomic_store(&sh->ring_step, 0);
	pid = fork();
	if (pid == 0) {
		if (cring_open(&rfd, &r, q, 64, 0) < 0)
			_exit(1);
		while (i < RING_KEYS) {
			while (i < RING_KEYS && cring_add(&r, i))
				i++;
			kt_ring_publish(&r);
			atomic_store(&sh->ring_published, i);
			/* the last ring's worth: published, never submitted */
			if (i >= RING_KEYS - 40)
				break;
			if (kt_ring_enter(rfd, KWQ_ENTER_SUBMIT, 0, 0, NULL) < 0)
				_exit(2);
		}
		/* then more, up to a full ring, as far as there is room */
		while (i < RING_KEYS && cring_add(&r, i))
			i++;
		kt_ring_publish(&r);
		atomic_store(&sh->ring_published, i);
		atomic_store(&sh->ring_step, 1);
		for (;;)
			pause();
	}
	ok = ring_wait_step(pid, 1) == 0;
	kill(pid, SIGKILL);
	kt_wait(pid);
	before = atomic_load(&sh->ring_published);
	if (ok)
		got = ring_collect(fd, before);
	ktap_check(got >= 0 && (unsigned int)got == before && before > 64,
		   "ring_producer_killed_before_doorbell_all_applied",
		   "%u adds published, %d applied", before, got);
	kwq_destroy(fd, q);
	close(fd);
}

/*
 * A worker leases keys into lease slots and is SIGKILLed holding them,
 * or (@close_only) close()s its fd without munmap() and lives on holding
 * the mapping, after publishing adds it never submits: either way the
 * leases come back (every key is ready again) and the adds are applied.
 */
static void ring_worker_leases(int close_only)
{
	struct kwq_stats_args st = {};
	struct kt_ring r;
	char q[KWQ_NAME_LEN];
	int fd = kt_queue("crash-rwork", &(struct kwq_queue_opts){ .mode = 0600 }, q);
	unsigned int i, n = 40, adds = close_only ? 20 : 0, leased;
	int ok, got = -1, alive = 1, rfd;
	pid_t pid;

	for (i = 0; i < n; i++) {
		char key[KWQ_KEY_LEN_MAX + 32];
		size_t len = ring_key(key, i);

		kwq_add(fd, key, len);
	}
	atomic_store(&sh->ring_step, 0);
	atomic_store(&sh->ring_leased, 0);
	atomic_store(&sh->ring_published, 0);
	pid = fork();
	if (pid == 0) {
		const struct kwq_lease_slot *ls;

		if (cring_open(&rfd, &r, q, 64, 32) < 0 ||
		    kt_ring_enter(rfd, KWQ_ENTER_GET, 32, KT_SEC, &leased) < 0)
			_exit(1);
		atomic_store(&sh->ring_leased, leased);
		if (close_only) {
			/* as many as the ring holds */
			for (i = n; i < n + adds && cring_add(&r, i); i++)
				;
			kt_ring_publish(&r);
			atomic_store(&sh->ring_published, i - n);
			close(rfd);
		}
		/* the mapping lives on: its memory is still readable */
		ls = (const void *)(r.k + r.a.leases_off);
		atomic_store(&sh->ring_leased,
			     leased + !__atomic_load_n(&ls->gen, __ATOMIC_RELAXED));
		atomic_store(&sh->ring_step, 1);
		for (;;)
			pause();
	}
	ok = ring_wait_step(pid, 1) == 0;
	leased = atomic_load(&sh->ring_leased);
	adds = atomic_load(&sh->ring_published);
	if (ok && !close_only) {
		/* held until the kill */
		ok = kwq_stats(fd, &st) == 0 && st.processing == leased;
		if (!ok)
			printf("    # %u leased, %llu processing before the kill\n",
			       leased, (unsigned long long)st.processing);
		kill(pid, SIGKILL);
		kt_wait(pid);
		alive = 0;
	}
	if (ok) {
		ok = kwq_stats(fd, &st) == 0 && !st.processing &&
		     st.len == n + adds;
		if (!ok)
			printf("    # %u leased; after the %s: processing %llu, len %llu of %u\n",
			       leased, close_only ? "close()" : "kill",
			       (unsigned long long)st.processing,
			       (unsigned long long)st.len, n + adds);
		/* with the mapping still held by a live child */
		if (close_only && waitpid(pid, NULL, WNOHANG) != 0)
			ok = 0;
		got = ring_collect(fd, n + adds);
	}
	if (alive) {
		kill(pid, SIGKILL);
		kt_wait(pid);
	}
	ktap_check(ok && leased == 32 && got == (int)(n + adds) &&
		   (!close_only || adds > 10),
		   close_only ? "ring_close_without_munmap_returns_leases" :
				"ring_worker_killed_leases_return",
		   "leased %u, back and applied %d of %u", leased, got, n + adds);
	kwq_destroy(fd, q);
	close(fd);
}

int main(int argc, char **argv)
{
	static unsigned char buf[KWQ_REC_SIZE_MAX * 64];
	struct kwq_queue_opts o = {
		.mode = 0600, .processing_timeout_ns = 2 * KT_SEC,
		.nr_limits = 1,
		.limits[0] = { KWQ_LIMIT_EXPONENTIAL, 0, KT_MS, 10 * KT_MS },
	};
	struct kwq_stats_args st;
	unsigned int seed = (unsigned int)kt_now(), missing = 0, total = 0, i;
	pid_t prod[PRODUCERS], cons[CONSUMERS];
	int secs = 15, opt, fd, p, kills = 0, bad = 0, n;
	int64_t end;
	size_t used;

	while ((opt = getopt(argc, argv, "t:s:")) != -1) {
		if (opt == 't')
			secs = atoi(optarg);
		else if (opt == 's')
			seed = (unsigned int)strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	kt_setup("kwq_crash", 10, (unsigned int)secs + 120);
	printf("    # seed %u (rerun: crash_test -s %u -t %d)\n", seed, seed, secs);
	srand(seed);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	fd = kt_queue("crash", &o, name);

	for (p = 0; p < PRODUCERS; p++)
		if ((prod[p] = fork()) == 0)
			producer(p, seed + 1 + (unsigned int)p);
	for (i = 0; i < CONSUMERS; i++)
		if ((cons[i] = fork()) == 0)
			consumer(seed + 100 + i);

	/* Kill a random consumer every few ms, start a new one. */
	end = kt_now() + (int64_t)secs * KT_SEC;
	while (kt_now() < end) {
		kt_sleep_ms(5 + rand() % 40);
		i = (unsigned int)rand() % CONSUMERS;
		kill(cons[i], SIGKILL);
		if (kt_wait(cons[i]) != 128 + SIGKILL)
			bad++;
		kills++;
		if ((cons[i] = fork()) == 0)
			consumer(seed + 1000 + (unsigned int)kills);
	}
	atomic_store(&sh->stop_producers, 1);
	for (p = 0; p < PRODUCERS; p++)
		bad += kt_wait(prod[p]) != 0;
	/* Let the consumers finish the backlog, then kill them all anyway. */
	for (i = 0; i < 200 && kt_len(fd) > 0; i++)
		kt_sleep_ms(50);
	for (i = 0; i < CONSUMERS; i++) {
		kill(cons[i], SIGKILL);
		kt_wait(cons[i]);
		kills++;
	}
	ktap_check(!bad, "producers_and_consumers_behaved", "%d bad exits", bad);

	/*
	 * Whatever is ready now (leases of the last kills) is completed here,
	 * and what waits (taken back at a deadline, in its backoff) once due.
	 */
	for (i = 0; i < 100; i++) {
		while ((n = kwq_get_batch(fd, buf, sizeof(buf), 64, 0, 0,
					  &used)) > 0)
			complete(fd, buf, used);
		if (kwq_stats(fd, &st) == 0 && !st.waiting && !st.len &&
		    !st.processing)
			break;
		kt_sleep_ms(20);
	}

	for (p = 0; p < PRODUCERS; p++) {
		unsigned int acc = atomic_load(&sh->accepted[p]);

		total += acc;
		for (i = 0; i < acc; i++)
			if (!atomic_load(&sh->completed[p][i])) {
				if (missing++ < 3)
					printf("    # key p%d-%u accepted, never completed\n", p, i);
			}
	}
	ktap_check(kwq_stats(fd, &st) == 0, "stats", "%s", strerror(errno));
	printf("    # %u keys accepted, %lu dones, %d consumers SIGKILLed, %llu lease returns, %llu deadlines passed, %lu dones ESTALE\n",
	       total, atomic_load(&sh->dones), kills,
	       (unsigned long long)st.lease_returns,
	       (unsigned long long)st.processing_timeouts_total,
	       atomic_load(&sh->stale));
	ktap_check(total > 0 && kills > 10, "workload_ran", "%u keys, %d kills", total, kills);
	ktap_check(!missing, "every_accepted_key_completed", "%u keys lost", missing);
	ktap_check(st.len == 0 && st.processing == 0 && st.waiting == 0,
		   "nothing_left_processing", "len %llu processing %llu waiting %llu",
		   (unsigned long long)st.len, (unsigned long long)st.processing,
		   (unsigned long long)st.waiting);
	ktap_check(st.lease_returns > 0, "kills_returned_leases",
		   "lease_returns %llu", (unsigned long long)st.lease_returns);
	ktap_check(st.processing_timeouts_total > 0, "deadlines_took_keys_back",
		   "processing_timeouts_total %llu",
		   (unsigned long long)st.processing_timeouts_total);
	kwq_destroy(fd, name);
	close(fd);

	ring_producer_killed();
	ring_worker_leases(0);
	ring_worker_leases(1);
	return ktap_end();
}
