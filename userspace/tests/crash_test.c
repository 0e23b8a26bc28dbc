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
 *   crash_test [-t SECONDS] [-s SEED]
 */
#include "kwqtest.h"

#include <stdatomic.h>
#include <sys/mman.h>

#define PRODUCERS	2
#define CONSUMERS	4
#define PER_PRODUCER	60000

struct shared {
	atomic_uint accepted[PRODUCERS];	/* keys 0..accepted-1 added */
	atomic_uchar completed[PRODUCERS][PER_PRODUCER];
	atomic_ulong dones;
	atomic_ulong stale;		/* dones refused: deadline passed */
	atomic_int stop_producers;
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
	kt_setup("kwq_crash", 7, (unsigned int)secs + 120);
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
	return ktap_end();
}
