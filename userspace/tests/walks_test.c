// SPDX-License-Identifier: GPL-2.0
/*
 * Walks of the whole queue (issue 30, finding 5): with many keys (-n
 * COUNT, default and make check's a million), the calls that handle
 * every key of a queue must hold interrupts off for at most 1 ms and go
 * at most 10 ms without a scheduling point. The kernel's latency tracers
 * measure both, each armed around one call at a time, its
 * tracing_max_latency read after:
 *
 *  - irqsoff: the longest section with interrupts off, anywhere in the
 *    system while the call runs; where it began and ended is printed
 *    (the callers of the lock functions: the latency kernel has frame
 *    pointers). The goal is kwq's: a section kwq's code began or ended
 *    counts; a longer one of other code (the page allocator freeing, in
 *    batches of up to 2^CONFIG_PCP_BATCH_SCALE_MAX x its batch, the
 *    memory a destroy dropped; RCU callbacks) hides kwq's, which were
 *    shorter, and is printed as "longest ... of any code".
 *  - noresched, on a kernel without full preemption (Debian's voluntary
 *    model; check.sh's latency kernel): wakeup_rt, the longest a
 *    real-time task waited for the CPU after its wake-up. A waker thread
 *    of this test, SCHED_FIFO on the caller's CPU, wakes every 500 us;
 *    while the call runs in the kernel it gets the CPU only at the
 *    call's next scheduling point (cond_resched()) or its return, so its
 *    longest wait is the longest stretch without one. The waker's own
 *    longest lateness is printed beside it as a check on the tracer.
 *    On a fully preemptible kernel (the debug kernels) preemptirqsoff
 *    instead: the longest section with preemption or interrupts off.
 *
 * The calls, each measured once per figure: GET of every key
 * (processing), close() of the fd holding them all, a rate-limited
 * re-add of every key (each moves to the delay wheel), PURGE of a dead
 * set of every key, SHUTDOWN with every key waiting, REVIVE of a dead set
 * of every key, and DESTROY (and the last close) of a queue holding every
 * key. Each call is a case, failed if a goal is missed; two "figure"
 * lines give the longest of all. With -x COMMAND, COMMAND (make check:
 * the fuzzer, every ioctl path with hostile arguments as root and other
 * users) runs once under each tracer after the walks, a case each, and
 * two more figures (load_*) give its longest sections. walks_test -B is
 * such a load (big_batches(): the longest batch calls, 4096 keys of
 * 1024 bytes in one call). The guest needs a fine clock (the TSC:
 * check.sh boots the latency VM with tsc=reliable): on jiffies the
 * tracers read in 4 ms steps. Runs as root, which no byte budget limits.
 */
#include "kwqtest.h"

#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>

#define TRACING		"/sys/kernel/tracing"
#define IRQS_GOAL_US	1000
#define SCHED_GOAL_US	10000
#define KEY_LEN		8

#define WAKER_PERIOD_NS	500000
#define WAKER_CPU	0

/* Each figure's tracer: the first of its list this kernel has. */
static const char *const tracer_lists[2][3] = {
	{ "irqsoff" },
	{ "wakeup_rt", "preemptirqsoff" },
};
static const char *tracers[2];
static const char *const goal_names[] = { "irqsoff", "noresched" };
static const long goals[] = { IRQS_GOAL_US, SCHED_GOAL_US };
/* The longest of each figure: [0] the walks, [1] the -x load. */
static long worst[2][2];
/* And the longest of each tracer's sections, kwq's or not. */
static long longest_any[2];
static unsigned int worst_of;
static unsigned int count = 1000000;
/* -x: a command run once under each tracer after the walks (the fuzzer) */
static const char *load;
/* Every key, in batches of KWQ_BATCH_MAX records. */
static struct kwq_recbuf *batches;
static unsigned int nr_batches;

static int tr_write(const char *file, const char *val)
{
	char path[128];
	int fd, ok;

	snprintf(path, sizeof(path), TRACING "/%s", file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

static long tr_max_us(void)
{
	FILE *f = fopen(TRACING "/tracing_max_latency", "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* kwq.ko's functions (/proc/kallsyms, "[kwq]"), to tell its sections. */
static char **kwq_syms;
static size_t nr_kwq_syms;

static void kwq_syms_load(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256], sym[128];
	size_t cap = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "\t[kwq]") ||
		    sscanf(line, "%*s %*s %127s", sym) != 1)
			continue;
		if (nr_kwq_syms == cap) {
			cap = cap ? 2 * cap : 1024;
			kwq_syms = realloc(kwq_syms, cap * sizeof(*kwq_syms));
			if (!kwq_syms)
				exit(1);
		}
		kwq_syms[nr_kwq_syms++] = strdup(sym);
	}
	fclose(f);
}

/* "=> started at: kwq_get_keys+0x1c/0x90 [kwq]": is it kwq's? */
static int kwq_owns(const char *where)
{
	char sym[128];
	size_t i;

	if (sscanf(where, " %127[^+ \n]", sym) != 1)
		return 0;
	for (i = 0; i < nr_kwq_syms; i++)
		if (!strcmp(kwq_syms[i], sym))
			return 1;
	return 0;
}

/*
 * Where the longest section was: the trace's header (where it began and
 * ended: with frame pointers, the callers of the lock functions) and its
 * entries (the functions at either end, the stack where it ended).
 * True if kwq's code began or ended it.
 */
static int tr_print_where(void)
{
	FILE *f = fopen(TRACING "/trace", "r");
	char line[256], *at;
	int n = 0, kwq = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && n < 48) {
		if (strchr("#\n", line[0]) && !strstr(line, "=> started at:") &&
		    !strstr(line, "=> ended at:"))
			continue;
		n++;
		printf("    #   %s", line + (line[0] == '#' ? 2 : 0));
		at = strstr(line, " at: ");
		if (line[0] == '#' && at && kwq_owns(at + 5))
			kwq = 1;
	}
	fclose(f);
	return kwq;
}

/*
 * The waker (noresched under wakeup_rt): a child process, SCHED_FIFO on
 * WAKER_CPU beside this one, asleep but for a moment every
 * WAKER_PERIOD_NS. Its longest lateness since the parent last cleared
 * it is in shared memory.
 */
struct waker {
	volatile long late_ns;
	volatile int clear;
};

static struct waker *waker;
static pid_t waker_pid;

static void waker_run(void)
{
	struct sched_param sp = { .sched_priority = 50 };
	struct timespec next, now;
	long late;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		_exit(1);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		next.tv_nsec += WAKER_PERIOD_NS;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		late = (now.tv_sec - next.tv_sec) * 1000000000L +
		       now.tv_nsec - next.tv_nsec;
		if (waker->clear) {
			waker->clear = 0;
			waker->late_ns = 0;
		}
		if (late > waker->late_ns)
			waker->late_ns = late;
		/* Late by more than a period: the next wake-up from now. */
		if (late > WAKER_PERIOD_NS)
			next = now;
	}
}

/* Both on WAKER_CPU: this process and (with wakeup_rt) the waker. */
static int waker_start(void)
{
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(WAKER_CPU, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		return -1;
	if (!tracers[1] || strcmp(tracers[1], "wakeup_rt"))
		return 0;
	waker = mmap(NULL, sizeof(*waker), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (waker == MAP_FAILED)
		return -1;
	waker_pid = fork();
	if (waker_pid < 0)
		return -1;
	if (!waker_pid)
		waker_run();
	return 0;
}

static void waker_stop(void)
{
	if (waker_pid > 0) {
		kill(waker_pid, SIGKILL);
		waitpid(waker_pid, NULL, 0);
	}
}

static int tr_arm(unsigned int t)
{
	if (!tracers[t])
		return 0;
	if (tr_write("tracing_thresh", "0") ||
	    tr_write("current_tracer", tracers[t]) ||
	    tr_write("tracing_max_latency", "0") ||
	    tr_write("tracing_on", "1"))
		return -1;
	if (waker && t == 1) {
		waker->clear = 1;
		/* Cleared at its next wake-up, before the call starts. */
		usleep(2 * WAKER_PERIOD_NS / 1000);
	}
	return 0;
}

/*
 * The measurement of one call: its case passes if it worked (@ok) and
 * the longest section stayed within the goal.
 */
static void tr_result(unsigned int t, const char *op, int ok, int64_t start)
{
	long us = tracers[t] ? tr_max_us() : -1;
	long long ms = (kt_now() - start) / KT_MS;
	char name[64];
	int met, kwq;

	snprintf(name, sizeof(name), "%s_%s", op, goal_names[t]);
	if (!tracers[t]) {
		/* Without the tracer the calls still must work. */
		printf("    # %s: call %lld ms\n", op, ms);
		if (ok)
			ktap_skip(name, "no latency tracer for it in this kernel");
		else
			ktap_check(0, name, "the call failed");
		return;
	}
	printf("    # %s under %s: longest %ld us (goal <= %ld us), call %lld ms\n",
	       op, tracers[t], us, goals[t], ms);
	if (waker && t == 1)
		printf("    #   the waker's longest lateness: %ld us\n",
		       waker->late_ns / 1000);
	kwq = tr_print_where();
	tr_write("current_tracer", "nop");
	if (us > longest_any[t])
		longest_any[t] = us;
	if (t == 0 && !kwq) {
		/*
		 * Interrupts off: the goal is kwq's. A longer section of
		 * other code (the page allocator freeing what the call
		 * dropped, RCU callbacks) hides kwq's, which were shorter.
		 */
		printf("    #   held by code outside kwq: kwq's own sections were shorter\n");
		us = 0;
	}
	if (us > worst[worst_of][t])
		worst[worst_of][t] = us;
	met = us >= 0 && us <= goals[t];
	ktap_check(ok && met, name, "%s%s", ok ? "" : "the call failed; ",
		   met ? "" : "goal missed");
}

/* Add every key, batch by batch, with @o (NULL: plain); 0 if all took. */
static int add_all(int fd, const struct kwq_batch_opts *o, const char *what)
{
	unsigned int i, done;
	int64_t start = kt_now();

	for (i = 0; i < nr_batches; i++) {
		if (kwq_add_batch(fd, &batches[i], o, &done) < 0) {
			printf("    # %s: batch %u: %s after %u\n", what, i,
			       strerror(errno), done);
			return -1;
		}
	}
	printf("    # %s: %u keys in %lld ms\n", what, count,
	       (long long)((kt_now() - start) / KT_MS));
	return 0;
}

static const struct kwq_batch_opts limited = { KWQ_ADD_RATE_LIMITED, 0, NULL };

/*
 * A queue whose keys die at their second failure (a dead set as large as
 * all keys) and wait 1000 s after their first.
 */
static int walk_queue(char *name)
{
	struct kwq_queue_opts o;

	memset(&o, 0, sizeof(o));
	o.nr_limits = 1;
	o.limits[0].type = KWQ_LIMIT_EXPONENTIAL;
	o.limits[0].a = 1000 * KT_SEC;
	o.limits[0].b = 1000 * KT_SEC;
	o.max_retries = 1;
	o.max_dead = count;
	o.max_items = count;
	return kt_queue("walks", &o, name);
}

/*
 * A new queue @name whose every key is dead (a rate-limited add of a new
 * key is its first failure, a second one its last), then @op of the
 * whole dead set measured with tracer @t. The queue's fd.
 */
static int dead_op(unsigned int t, char *name, const char *what,
		   long (*op)(int fd))
{
	int64_t start;
	int fd, ok;
	long r;

	fd = walk_queue(name);
	ok = !add_all(fd, &limited, "add rate-limited") &&
	     !add_all(fd, &limited, "kill");
	tr_arm(t);
	start = kt_now();
	r = op(fd);
	tr_result(t, what, ok && r == (long)count, start);
	if (r != (long)count)
		printf("    # %s: %ld of %u: %s\n", what, r, count, strerror(errno));
	return fd;
}

/* One pass: every call measured with tracer @t. */
static void pass(unsigned int t)
{
	size_t cap = (size_t)count * KWQ_REC_SIZE(KEY_LEN) + KWQ_REC_SIZE_MAX;
	char name[KWQ_NAME_LEN];
	void *buf = malloc(cap);
	int64_t start;
	size_t used;
	long r;
	int fd, ok;

	if (!buf) {
		printf("    # no memory for %zu bytes\n", cap);
		exit(1);
	}
	/* GET of every key, then close() of the fd that holds them. */
	fd = walk_queue(name);
	ok = !add_all(fd, NULL, "add");
	tr_arm(t);
	start = kt_now();
	r = kwq_get_batch(fd, buf, cap, count, 0, 0, &used);
	tr_result(t, "get", ok && r == (long)count, start);
	if (r != (long)count)
		printf("    # get: %ld of %u: %s\n", r, count, strerror(errno));
	free(buf);

	tr_arm(t);
	start = kt_now();
	close(fd);
	tr_result(t, "close", 1, start);
	fd = kt_attach(name);
	r = kt_len(fd);
	if (r != (long)count)
		printf("    # after close: %ld keys queued, want %u\n", r, count);

	/* A rate-limited re-add of every key: each waits in the wheel. */
	tr_arm(t);
	start = kt_now();
	ok = !add_all(fd, &limited, "rate-limited re-add");
	tr_result(t, "readd", ok, start);

	/* SHUTDOWN with every key waiting. */
	tr_arm(t);
	start = kt_now();
	r = kwq_shutdown(fd, 0);
	/* The re-added keys stay ready (their deadline is remembered). */
	tr_result(t, "shutdown", ok && !r, start);
	if (kwq_destroy(fd, name) < 0)
		printf("    # destroy %s: %s\n", name, strerror(errno));
	close(fd);

	/* A dead set of every key: REVIVE of all, then DESTROY and the close. */
	fd = dead_op(t, name, "revive", kwq_revive_all);
	tr_arm(t);
	start = kt_now();
	ok = kwq_destroy(fd, name) == 0;
	close(fd);
	tr_result(t, "destroy", ok, start);

	/* Another dead set of every key: PURGE of all. */
	fd = dead_op(t, name, "purge", kwq_purge_all);
	if (kwq_destroy(fd, name) < 0)
		printf("    # destroy %s: %s\n", name, strerror(errno));
	close(fd);
}

/*
 * The -x load, measured with tracer @t: every ioctl path, as root and as
 * other users, not only the walks. Its output goes to a file, shown if
 * it fails.
 */
static void run_load(unsigned int t)
{
	const char *out = "/tmp/walks-load.log";
	int64_t start;
	int status = -1;
	pid_t pid;

	tr_arm(t);
	start = kt_now();
	pid = fork();
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl("/bin/sh", "sh", "-c", load, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	printf("    # load: %s\n", load);
	tr_result(t, "load", WIFEXITED(status) && !WEXITSTATUS(status), start);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "tail -20 %s | sed 's/^/    # | /'", out);
		if (system(cmd))
			printf("    # (no output in %s)\n", out);
	}
}

/*
 * -B: a load for -x of its own, the longest batch calls any user can
 * make: KWQ_BATCH_MAX records of KWQ_KEY_LEN_MAX-byte keys (about 4 MiB
 * to copy in, check, hash and copy into nodes) in one ADD, then GET of
 * all, DONE of all in one call, ADD again, FORGET of all, GET of all,
 * DONE_GET finishing all (its get part finds none), ADD again, REMOVE of
 * all; @rounds times. 0 if every call handled every key.
 */
#define BIG_KEYS	KWQ_BATCH_MAX

/*
 * A call of big_batches() handled every key: @ret its return, *@n its
 * count (read after the call: an argument of this function).
 */
static int big_ok(const char *what, long ret, const unsigned int *n)
{
	if (ret >= 0 && *n == BIG_KEYS)
		return 1;
	printf("%s: returned %ld, %u of %u keys: %s\n", what, ret, *n,
	       BIG_KEYS, strerror(errno));
	return 0;
}

/* GET of every key: kwq_get_batch(), its count at *@n. */
static long big_get(int fd, void *buf, size_t cap, unsigned int *n)
{
	long r = kwq_get_batch(fd, buf, cap, BIG_KEYS, 0, 0, NULL);

	*n = r > 0 ? (unsigned int)r : 0;
	return r;
}

/* DONE_GET finishing every key, none left to take (EAGAIN). */
static long big_done_get(int fd, const struct kwq_recbuf *rb, void *buf,
			 size_t cap, unsigned int *done)
{
	long r = kwq_done_get(fd, rb, done, buf, cap, 1, 0, 0, 0, NULL);

	return r < 0 && errno == EAGAIN ? 0 : -1;
}

static int big_batches(unsigned int rounds)
{
	struct kwq_recbuf rb = KWQ_RECBUF_INIT;
	size_t cap = (size_t)BIG_KEYS * KWQ_REC_SIZE_MAX;
	unsigned int i, r, n = 0, none = BIG_KEYS;
	char key[KWQ_KEY_LEN_MAX];
	void *buf = malloc(cap);
	int fd, ok = 1;

	if (!buf)
		return 1;
	for (i = 0; i < BIG_KEYS; i++) {
		memset(key, 'b', sizeof(key));
		memcpy(key, &i, sizeof(i));
		if (kwq_recbuf_push(&rb, key, sizeof(key), 0))
			return 1;
	}
	fd = kt_queue("walks-big", NULL, NULL);
	for (r = 0; r < rounds && ok; r++)
		ok = big_ok("add", kwq_add_batch(fd, &rb, NULL, &n), &n) &&
		     big_ok("get", big_get(fd, buf, cap, &n), &n) &&
		     big_ok("done", kwq_done_batch(fd, &rb, &n), &n) &&
		     big_ok("add", kwq_add_batch(fd, &rb, NULL, &n), &n) &&
		     big_ok("forget", kwq_forget_batch(fd, &rb, &n), &n) &&
		     big_ok("get", big_get(fd, buf, cap, &n), &n) &&
		     big_ok("done_get", big_done_get(fd, &rb, buf, cap, &n),
			    &n) &&
		     big_ok("add", kwq_add_batch(fd, &rb, NULL, &n), &n) &&
		     big_ok("remove", kwq_remove_batch(fd, &rb, &n), &n) &&
		     big_ok("empty", kt_len(fd) ? -1 : 0, &none);
	printf("%u rounds of %u keys of %u bytes: %s\n", rounds, BIG_KEYS,
	       KWQ_KEY_LEN_MAX, ok ? "ok" : "failed");
	close(fd);
	kwq_recbuf_free(&rb);
	free(buf);
	return !ok;
}

int main(int argc, char **argv)
{
	unsigned int i, t;
	char key[16];
	int opt, big = 0;

	while ((opt = getopt(argc, argv, "n:x:B")) != -1) {
		if (opt == 'n')
			count = (unsigned int)strtoul(optarg, NULL, 0);
		else if (opt == 'x')
			load = optarg;
		else if (opt == 'B')
			big = 1;
		else
			count = 0;
	}
	if (!count || count > KWQ_MAX_DEAD) {
		printf("usage: walks_test [-n 1..%u] [-x COMMAND] | -B\n", KWQ_MAX_DEAD);
		return 2;
	}
	if (big)
		return big_batches(2);
	kt_setup("kwq_walks", 2 * 7 + (load ? 2 : 0), 1800);
	printf("    # %u keys\n", count);
	mount("tracefs", TRACING, "tracefs", 0, NULL);
	for (t = 0; t < 2; t++) {
		for (i = 0; tracer_lists[t][i] && !tracers[t]; i++)
			if (!access(TRACING "/tracing_max_latency", W_OK) &&
			    !tr_write("current_tracer", tracer_lists[t][i]))
				tracers[t] = tracer_lists[t][i];
		printf("    # %s: %s\n", goal_names[t],
		       tracers[t] ? tracers[t] : "no tracer in this kernel, unmeasured");
	}
	tr_write("current_tracer", "nop");
	kwq_syms_load();
	printf("    # kwq.ko's functions: %zu\n", nr_kwq_syms);
	if (waker_start()) {
		printf("    # cannot start the waker: %s\n", strerror(errno));
		return 1;
	}
	nr_batches = (count + KWQ_BATCH_MAX - 1) / KWQ_BATCH_MAX;
	batches = calloc(nr_batches, sizeof(*batches));
	for (i = 0; i < count; i++) {
		snprintf(key, sizeof(key), "w%07u", i % 10000000);
		if (kwq_recbuf_push(&batches[i / KWQ_BATCH_MAX], key, KEY_LEN, 0)) {
			printf("    # no memory for the keys\n");
			return 1;
		}
	}
	for (t = 0; t < 2; t++)
		pass(t);
	if (load) {
		worst_of = 1;
		for (t = 0; t < 2; t++)
			run_load(t);
	}
	waker_stop();
	for (t = 0; t < 2; t++)
		if (tracers[t])
			printf("    # longest under %s of any code: %ld us\n",
			       tracers[t], longest_any[t]);
	for (i = 0; i < (load ? 2u : 1u); i++)
		for (t = 0; t < 2; t++)
			if (tracers[t])
				printf("    # figure %s_%s_us %ld <=%ld %s\n",
				       i ? "load" : "walks", goal_names[t],
				       worst[i][t], goals[t],
				       worst[i][t] >= 0 && worst[i][t] <= goals[t] ?
				       "met" : "missed");
	return ktap_end();
}
