// SPDX-License-Identifier: GPL-2.0
/*
 * Batches through /dev/kwq: KWQ_IOC_DONE_GET (a worker's cycle in one
 * call), GET's min_nr batching window, and batch ADD/DONE edge cases:
 * duplicate keys in one batch, keys not held, keys held by another fd,
 * oversized batches. Every failure says how far the batch got and loses
 * nothing. DONE_GET finishes its last keys and takes the first in one
 * critical section: a done failing there, or before, takes nothing, and
 * keys it made ready but did not take wake other getters. A task killed
 * during a batch stops between its chunks, with the first keys done.
 */
#include "kwqtest.h"

#include <pthread.h>
#include <sys/mman.h>

static struct kwq_recbuf rb = KWQ_RECBUF_INIT;
static unsigned char buf[64 * KWQ_REC_SIZE_MAX];

/* Records of "a,b,c" style lists. */
static const struct kwq_recbuf *keys(const char *list)
{
	char tmp[256], *save = NULL, *k;

	kwq_recbuf_reset(&rb);
	snprintf(tmp, sizeof(tmp), "%s", list);
	for (k = strtok_r(tmp, ",", &save); k; k = strtok_r(NULL, ",", &save))
		kwq_recbuf_push_str(&rb, k, 0);
	return &rb;
}

/* Join the keys of the first @n records of buf into @out. */
static const char *names(int n, size_t used, char *out, size_t size)
{
	size_t off = 0, len, o = 0;
	const void *k;

	out[0] = '\0';
	while (n-- > 0 && kwq_rec_next(buf, used, &off, &k, &len, NULL) == 1 &&
	       o + len + 2 < size) {
		if (o)
			out[o++] = ',';
		memcpy(out + o, k, len);
		o += len;
		out[o] = '\0';
	}
	return out;
}

/* A child that adds @key to queue @name 150 ms from now: its pid. */
static pid_t add_later(const char *name, const char *key)
{
	pid_t pid = fork();

	if (pid == 0) {
		kt_sleep_ms(150);
		_exit(kt_add(kt_attach(name), key) ? 1 : 0);
	}
	return pid;
}

/*
 * A thread's start: once the main thread sleeps (in its call's wait),
 * make the page at @arg read-only.
 */
static void *protect_later(void *arg)
{
	char path[64], st[512], *p;
	int i, fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)getpid());
	for (i = 0; i < 1000; i++) {
		kt_sleep_ms(5);
		fd = open(path, O_RDONLY);
		n = fd < 0 ? -1 : read(fd, st, sizeof(st) - 1);
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			break;
		st[n] = '\0';
		p = strrchr(st, ')');
		if (p && p[1] == ' ' && p[2] == 'S')
			break;
	}
	mprotect(arg, 4096, PROT_READ);
	return NULL;
}

/* "k00,k01,...,k19", key @bad (if not -1) written as "nope" */
static const char *klist(char *out, size_t size, int bad)
{
	size_t o = 0;
	int i;

	for (i = 0; i < 20 && o < size; i++)
		o += (size_t)snprintf(out + o, size - o, i == bad ? "%snope" :
				      "%sk%02d", i ? "," : "", i);
	return out;
}

static volatile sig_atomic_t usr1_seen;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_seen++;
}

/* SIGUSR1 from a child @ms from now, to a handler that asks for restarts. */
static pid_t usr1_after_ms(long ms)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	pid_t parent = getpid(), pid;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	pid = fork();
	if (pid == 0) {
		kt_sleep_ms(ms);
		kill(parent, SIGUSR1);
		_exit(0);
	}
	return pid;
}

static long processing(int fd)
{
	struct kwq_stats_args st;

	return kwq_stats(fd, &st) ? -1 : (long)st.processing;
}

/*
 * A child ADDs @big (distinct keys, each starting with its index) to a
 * new queue and is killed (SIGKILL) @delay_us after it said it is about
 * to. Returns the keys the queue then holds if they are the batch's
 * first ones in order (what took effect before the kill), else -1.
 */
static long killed_add(const struct kwq_recbuf *big, long delay_us,
		       void *out, size_t cap)
{
	char name[KWQ_NAME_LEN];
	size_t used, off = 0, len;
	const void *k;
	unsigned int i;
	int fd, p[2];
	pid_t pid;
	long n;
	char c;

	fd = kt_queue("batch-kill", NULL, name);
	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		int cfd = kt_attach(name);

		if (write(p[1], "x", 1) != 1)
			_exit(1);
		kwq_add_batch(cfd, big, NULL, NULL);
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1)
		return -1;
	close(p[0]);
	if (delay_us)
		usleep(delay_us);
	kill(pid, SIGKILL);
	kt_wait(pid);
	n = kwq_get_batch(fd, out, cap, big->nr, 0, 0, &used);
	if (n < 0 && errno == EAGAIN)
		n = 0;
	for (i = 0; n > 0 && i < (unsigned int)n; i++)
		if (kwq_rec_next(out, used, &off, &k, &len, NULL) != 1 ||
		    memcmp(k, &i, sizeof(i)))
			n = -1;
	kwq_destroy(fd, name);
	close(fd);
	return n;
}

int main(void)
{
	char name[KWQ_NAME_LEN], got[256];
	struct kwq_done_get_args raw, *ra;
	pthread_t th;
	unsigned int done;
	size_t used;
	int fd, fd2, n, finished;
	int64_t t0;
	pid_t pid, ticker;
	long len;
	char key[KWQ_KEY_LEN_MAX];
	void *ro;

	kt_setup("kwq_batch", 37, 120);
	fd = kt_queue("batch", NULL, name);

	/* duplicate keys inside one ADD batch: one key, all counted done */
	n = kwq_add_batch(fd, keys("a,a,b,a"), NULL, &done);
	ktap_check(n == 0 && done == 4 && kt_len(fd) == 2,
		   "add_batch_duplicates_dedup", "ret %d done %u len %ld", n,
		   done, kt_len(fd));

	/*
	 * One record (the kernel's one-key ADD): a nonzero byte anywhere in
	 * the padding, or a length that is not the record's, is EINVAL and
	 * adds nothing; a key filling its last word has no padding.
	 */
	{
		const struct kwq_recbuf *one = keys("pad7");
		unsigned char *b = (unsigned char *)one->buf;
		struct kwq_rec *r = (struct kwq_rec *)one->buf;
		long before = kt_len(fd);
		int bad = 0, i;

		for (i = sizeof(*r) + 4; i < 16; i++) {
			b[i] = 0x80;
			errno = 0;
			bad += kwq_add_batch(fd, one, NULL, NULL) < 0 &&
			       errno == EINVAL;
			b[i] = 0;
		}
		r->len = 9;
		errno = 0;
		bad += kwq_add_batch(fd, one, NULL, NULL) < 0 && errno == EINVAL;
		r->len = 0;
		errno = 0;
		bad += kwq_add_batch(fd, one, NULL, NULL) < 0 && errno == EINVAL;
		ktap_check(bad == 6 && kt_len(fd) == before,
			   "add_one_bad_record_einval", "%d of 6 EINVAL, len %ld -> %ld",
			   bad, before, kt_len(fd));
		n = kwq_add_batch(fd, keys("eightchr"), NULL, &done);
		ktap_check(n == 0 && done == 1 && kt_len(fd) == before + 1 &&
			   kwq_remove(fd, "eightchr", 8) == 0,
			   "add_one_key_filling_its_word", "ret %d done %u len %ld",
			   n, done, kt_len(fd));
	}
	kwq_add_batch(fd, keys("c,d"), NULL, NULL);

	/* a worker cycle: finish two, take two */
	n = kwq_get_batch(fd, buf, sizeof(buf), 2, 0, 0, &used);
	ktap_check(n == 2 && !strcmp(names(n, used, got, sizeof(got)), "a,b"),
		   "get_two", "n %d got '%s'", n, got);
	n = kwq_done_get(fd, keys("a,b"), &done, buf, sizeof(buf), 2, 0, 0, 0,
			 &used);
	ktap_check(n == 2 && done == 2 &&
		   !strcmp(names(n, used, got, sizeof(got)), "c,d"),
		   "done_get_finishes_then_takes", "n %d done %u got '%s'", n,
		   done, got);
	ktap_check(processing(fd) == 2, "done_get_holds_only_new_keys",
		   "processing %ld", processing(fd));

	/* a key not held: ENOENT, nothing finished, nothing taken */
	kwq_add_batch(fd, keys("e,f"), NULL, NULL);
	errno = 0;
	n = kwq_done_get(fd, keys("x"), &done, buf, sizeof(buf), 4, 0, 0, 0,
			 &used);
	ktap_check(n < 0 && errno == ENOENT && done == 0 && kt_len(fd) == 2 &&
		   processing(fd) == 2, "done_get_not_held_enoent_takes_none",
		   "n %d errno %s done %u len %ld", n, kt_ename(errno), done,
		   kt_len(fd));

	/* the same key twice: the second is no longer held */
	errno = 0;
	n = kwq_done_get(fd, keys("c,c"), &done, buf, sizeof(buf), 4, 0, 0, 0,
			 &used);
	ktap_check(n < 0 && errno == ENOENT && done == 1 && processing(fd) == 1 &&
		   kt_len(fd) == 2, "done_get_duplicate_key_stops_after_first",
		   "n %d errno %s done %u processing %ld", n, kt_ename(errno),
		   done, processing(fd));

	/* a key leased to another fd: EPERM, and that fd still holds it */
	fd2 = kt_attach(name);
	n = kwq_get_batch(fd2, buf, sizeof(buf), 1, 0, 0, &used);
	names(n, used, got, sizeof(got));
	errno = 0;
	n = kwq_done_get(fd, keys(got), &done, buf, sizeof(buf), 4, 0, 0, 0,
			 &used);
	ktap_check(n < 0 && errno == EPERM && done == 0,
		   "done_get_other_fds_key_eperm", "n %d errno %s done %u", n,
		   kt_ename(errno), done);
	KT_OK(kwq_done(fd2, got, strlen(got)), "other_fd_still_holds_it");
	close(fd2);

	/* an fd that holds nothing: ENOENT for a key nobody holds */
	fd2 = kt_attach(name);
	errno = 0;
	n = kwq_done_get(fd2, keys("zz"), &done, buf, sizeof(buf), 1, 0, 0, 0,
			 &used);
	ktap_check(n < 0 && errno == ENOENT && done == 0,
		   "done_get_fd_holding_none_enoent", "n %d errno %s", n,
		   kt_ename(errno));
	close(fd2);

	/* the get part fails after the done part: the done stays done */
	kwq_done(fd, "d", 1);
	n = kwq_get_batch(fd, buf, sizeof(buf), 4, 0, 0, &used);
	errno = 0;
	n = kwq_done_get(fd, keys(names(n, used, got, sizeof(got))), &done, buf,
			 sizeof(buf), 4, 0, 0, 0, &used);
	ktap_check(n < 0 && errno == EAGAIN && done == rb.nr &&
		   processing(fd) == 0, "done_get_reports_done_when_get_fails",
		   "n %d errno %s done %u of %u processing %ld", n,
		   kt_ename(errno), done, rb.nr, processing(fd));

	/* no done part: a plain get */
	kt_add(fd, "g");
	n = kwq_done_get(fd, NULL, &done, buf, sizeof(buf), 4, 0, 0, 0, &used);
	ktap_check(n == 1 && done == 0, "done_get_without_done_is_get",
		   "n %d done %u", n, done);
	kt_done(fd, "g");

	/* malformed calls change nothing */
	kt_add(fd, "h");
	memset(&raw, 0, sizeof(raw));
	raw.done_recs = (uintptr_t)keys("h")->buf;
	raw.done_len = (uint32_t)rb.len;
	raw.done_nr = KWQ_BATCH_MAX + 1;
	raw.get.recs = (uintptr_t)buf;
	raw.get.recs_len = sizeof(buf);
	raw.get.max = 1;
	KT_ERR(ioctl(fd, KWQ_IOC_DONE_GET, &raw), EINVAL,
	       "done_get_oversized_batch_einval");
	raw.done_nr = 1;
	raw.pad = 1;
	KT_ERR(ioctl(fd, KWQ_IOC_DONE_GET, &raw), EINVAL, "done_get_pad_einval");
	raw.pad = 0;
	raw.get.min_nr = 2;
	KT_ERR(ioctl(fd, KWQ_IOC_DONE_GET, &raw), EINVAL,
	       "done_get_min_over_max_einval");
	raw.get.min_nr = 0;
	raw.done_recs = 8;
	KT_ERR(ioctl(fd, KWQ_IOC_DONE_GET, &raw), EFAULT,
	       "done_get_bad_done_pointer_efault");
	ktap_check(kt_len(fd) == 1 && processing(fd) == 0,
		   "malformed_done_get_changes_nothing", "len %ld processing %ld",
		   kt_len(fd), processing(fd));

	/* min_nr: wait for more keys than are ready, within the timeout */
	pid = fork();
	if (pid == 0) {
		int cfd = kt_attach(name);

		kt_sleep_ms(100);
		kt_add(cfd, "i");
		kt_sleep_ms(100);
		_exit(kt_add(cfd, "j") ? 1 : 0);
	}
	t0 = kt_now();
	n = kwq_done_get(fd, NULL, NULL, buf, sizeof(buf), 8, 3, 0,
			 20 * KT_SEC, &used);
	ktap_check(n == 3 && kt_now() - t0 >= 150 * KT_MS && kt_wait(pid) == 0,
		   "get_waits_for_min_nr", "n %d after %lld ms", n,
		   (long long)((kt_now() - t0) / KT_MS));
	kwq_done_batch(fd, keys(names(n, used, got, sizeof(got))), NULL);

	kt_add(fd, "k");
	t0 = kt_now();
	n = kwq_done_get(fd, NULL, NULL, buf, sizeof(buf), 8, 3, 0,
			 100 * KT_MS, &used);
	ktap_check(n == 1 && kt_now() - t0 >= 100 * KT_MS,
		   "min_nr_timeout_returns_what_was_taken", "n %d after %lld ms",
		   n, (long long)((kt_now() - t0) / KT_MS));
	kt_done(fd, "k");

	/*
	 * The window ends at the first key's processing deadline (300 ms
	 * here), not at the call's 10 s timeout: the call returns the key
	 * it has (once) before its lease would be revoked in its hands.
	 */
	{
		struct kwq_queue_opts po;
		char pname[KWQ_NAME_LEN];
		int pfd;

		memset(&po, 0, sizeof(po));
		po.processing_timeout_ns = 300 * KT_MS;
		pfd = kt_queue("batch-window", &po, pname);
		kt_add(pfd, "m");
		t0 = kt_now();
		n = kwq_done_get(pfd, NULL, NULL, buf, sizeof(buf), 8, 2, 0,
				 10 * KT_SEC, &used);
		ktap_check(n == 1 && kt_now() - t0 >= 250 * KT_MS &&
			   kt_now() - t0 < 5 * KT_SEC,
			   "min_nr_window_ends_at_the_first_deadline",
			   "n %d after %lld ms", n,
			   (long long)((kt_now() - t0) / KT_MS));
		kwq_destroy(pfd, pname);
		close(pfd);
	}

	/* the one-key helper a worker loop uses */
	kt_add(fd, "x1");
	len = kwq_done_get_one(fd, NULL, 0, &finished, key, sizeof(key), 0, 0);
	kt_add(fd, "x2");
	n = (int)kwq_done_get_one(fd, key, (size_t)len, &finished, key,
				  sizeof(key), 0, 0);
	ktap_check(len == 2 && n == 2 && finished == 1 && !memcmp(key, "x2", 2) &&
		   processing(fd) == 1, "done_get_one_cycles",
		   "len %ld n %d finished %d", len, n, finished);
	errno = 0;
	n = (int)kwq_done_get_one(fd, key, 2, &finished, key, sizeof(key), 0, 0);
	ktap_check(n < 0 && errno == EAGAIN && finished == 1 &&
		   processing(fd) == 0, "done_get_one_finishes_on_empty_queue",
		   "n %d errno %s finished %d", n, kt_ename(errno), finished);

	/*
	 * The one-key call's faults. A record that cannot be written puts
	 * the key taken back (the done stays done); arguments that cannot
	 * be written back, or a bad record, finish nothing.
	 */
	ro = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	kt_add(fd, "f1");
	n = kwq_get_batch(fd, buf, sizeof(buf), 1, 0, 0, &used);
	kt_add(fd, "f2");
	mprotect(ro, 4096, PROT_READ);
	errno = 0;
	finished = kwq_done_get(fd, keys("f1"), &done, ro, KWQ_REC_SIZE_MAX, 1,
				0, 0, 0, &used);
	len = errno;
	ktap_check(n == 1 && finished < 0 && len == EFAULT && done == 1 &&
		   processing(fd) == 0 && kt_len(fd) == 1,
		   "done_get_one_unwritable_record_puts_key_back",
		   "ret %d errno %s done %u processing %ld len %ld", finished,
		   kt_ename((int)len), done, processing(fd), kt_len(fd));
	n = kwq_get_batch(fd, buf, sizeof(buf), 1, 0, 0, &used);
	kt_add(fd, "f3");
	ra = (struct kwq_done_get_args *)((char *)ro + 4096);
	memset(ra, 0, sizeof(*ra));
	ra->done_recs = (uintptr_t)keys("f2")->buf;
	ra->done_len = (uint32_t)rb.len;
	ra->done_nr = 1;
	ra->get.recs = (uintptr_t)buf;
	ra->get.recs_len = sizeof(buf);
	ra->get.max = 1;
	mprotect(ra, 4096, PROT_READ);
	errno = 0;
	finished = ioctl(fd, KWQ_IOC_DONE_GET, ra);
	len = errno;
	ktap_check(finished < 0 && len == EFAULT && processing(fd) == 1 &&
		   kt_len(fd) == 1, "done_get_one_read_only_args_finish_nothing",
		   "ret %d errno %s processing %ld len %ld", finished,
		   kt_ename((int)len), processing(fd), kt_len(fd));
	mprotect(ra, 4096, PROT_READ | PROT_WRITE);
	/* a nonzero pad byte after the key: EINVAL */
	((unsigned char *)rb.buf)[sizeof(struct kwq_rec) + 2] = 1;
	errno = 0;
	finished = ioctl(fd, KWQ_IOC_DONE_GET, ra);
	len = errno;
	ktap_check(n == 1 && finished < 0 && len == EINVAL &&
		   processing(fd) == 1 && kt_len(fd) == 1,
		   "done_get_one_bad_call_finishes_nothing",
		   "ret %d errno %s processing %ld len %ld", finished,
		   kt_ename((int)len), processing(fd), kt_len(fd));
	/* a done record outside user space: EFAULT, nothing finished */
	((unsigned char *)rb.buf)[sizeof(struct kwq_rec) + 2] = 0;
	ra->done_recs = (uintptr_t)-4096;
	ra->done = 7;
	ra->get.nr = 7;
	errno = 0;
	finished = ioctl(fd, KWQ_IOC_DONE_GET, ra);
	len = errno;
	ktap_check(finished < 0 && len == EFAULT && processing(fd) == 1 &&
		   kt_len(fd) == 1 && ra->done == 0 && ra->get.nr == 0,
		   "done_get_one_record_outside_user_space_efault",
		   "ret %d errno %s processing %ld len %ld done %u nr %u",
		   finished, kt_ename((int)len), processing(fd), kt_len(fd),
		   ra->done, ra->get.nr);
	munmap(ro, 8192);
	kt_done(fd, "f2");
	kt_take(fd, 0, 0, 1, got, sizeof(got));
	kt_done(fd, got);

	/* A batch DONE_GET finds nothing ready after its done: it waits. */
	kt_add(fd, "v1");
	n = kwq_get_batch(fd, buf, sizeof(buf), 1, 0, 0, &used);
	pid = add_later(name, "v2");
	t0 = kt_now();
	finished = kwq_done_get(fd, keys("v1"), &done, buf, sizeof(buf), 2, 0,
				0, 5 * KT_SEC, &used);
	ktap_check(n == 1 && finished == 1 && done == 1 &&
		   !strcmp(names(finished, used, got, sizeof(got)), "v2") &&
		   kt_wait(pid) == 0 && kt_now() - t0 >= 100 * KT_MS,
		   "done_get_batch_waits_after_its_done",
		   "ret %d done %u got '%s' after %lld ms", finished, done, got,
		   (long long)((kt_now() - t0) / KT_MS));
	kt_done(fd, "v2");

	/*
	 * Its first take finds fewer ready than min_nr: it waits for the
	 * rest, then hands over both.
	 */
	kt_add(fd, "w1");
	n = kwq_get_batch(fd, buf, sizeof(buf), 1, 0, 0, &used);
	kt_add(fd, "w2");
	pid = add_later(name, "w3");
	t0 = kt_now();
	finished = kwq_done_get(fd, keys("w1"), &done, buf, sizeof(buf), 3, 2,
				0, 5 * KT_SEC, &used);
	ktap_check(n == 1 && finished == 2 && done == 1 &&
		   !strcmp(names(finished, used, got, sizeof(got)), "w2,w3") &&
		   kt_wait(pid) == 0 && kt_now() - t0 >= 100 * KT_MS,
		   "done_get_batch_waits_for_min_nr_after_its_first_take",
		   "ret %d done %u got '%s' after %lld ms", finished, done, got,
		   (long long)((kt_now() - t0) / KT_MS));
	kt_done(fd, "w2");
	kt_done(fd, "w3");

	/*
	 * A one-key DONE_GET whose arguments, proven writable when it
	 * started, are not when its wait ends (another thread's mprotect):
	 * EFAULT, the key finished, none taken.
	 */
	kt_add(fd, "x1");
	n = kwq_get_batch(fd, buf, sizeof(buf), 1, 0, 0, &used);
	ra = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ra == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	ra->done_recs = (uintptr_t)keys("x1")->buf;
	ra->done_len = (uint32_t)rb.len;
	ra->done_nr = 1;
	ra->get.recs = (uintptr_t)buf;
	ra->get.recs_len = sizeof(buf);
	ra->get.max = 1;
	ra->get.timeout_ns = 1 * KT_SEC;
	errno = 0;
	finished = pthread_create(&th, NULL, protect_later, ra) ? -2 :
		   ioctl(fd, KWQ_IOC_DONE_GET, ra);
	len = errno;
	if (finished != -2)
		pthread_join(th, NULL);
	munmap(ra, 4096);
	ktap_check(n == 1 && finished == -1 && len == EFAULT &&
		   processing(fd) == 0 && kt_len(fd) == 0,
		   "done_get_one_args_unwritable_after_its_wait_efault",
		   "ret %d errno %s processing %ld len %ld", finished,
		   kt_ename((int)len), processing(fd), kt_len(fd));

	/*
	 * 20 keys, more than the critical section that takes finishes: the
	 * 19th is not held. The 18 before it are finished, nothing taken.
	 */
	kwq_add_batch(fd, keys(klist(got, sizeof(got), -1)), NULL, NULL);
	n = kwq_get_batch(fd, buf, sizeof(buf), 20, 0, 0, &used);
	kt_add(fd, "r");
	errno = 0;
	finished = kwq_done_get(fd, keys(klist(got, sizeof(got), 18)), &done,
				buf, sizeof(buf), 4, 0, 0, 0, &used);
	ktap_check(n == 20 && finished < 0 && errno == ENOENT && done == 18 &&
		   processing(fd) == 2 && kt_len(fd) == 1,
		   "done_get_fails_midway_finishes_before_takes_none",
		   "got %d ret %d errno %s done %u processing %ld len %ld", n,
		   finished, kt_ename(errno), done, processing(fd), kt_len(fd));

	/* the last key fails (ready, not processing): the rest finished */
	errno = 0;
	n = kwq_done_get(fd, keys("k18,k19,r"), &done, buf, sizeof(buf), 4, 0,
			 0, 0, &used);
	ktap_check(n < 0 && errno == ENOENT && done == 2 &&
		   processing(fd) == 0 && kt_len(fd) == 1,
		   "done_get_fails_at_last_key_takes_none",
		   "n %d errno %s done %u processing %ld len %ld", n,
		   kt_ename(errno), done, processing(fd), kt_len(fd));
	n = kwq_get_batch(fd, buf, sizeof(buf), 1, 0, 0, &used);
	kt_done(fd, "r");

	/* a key added while processing: its done makes it ready, taken again */
	kt_add(fd, "d1");
	n = kwq_get_batch(fd, buf, sizeof(buf), 1, 0, 0, &used);
	kt_add(fd, "d1");
	n = kwq_done_get(fd, keys("d1"), &done, buf, sizeof(buf), 1, 0, 0, 0,
			 &used);
	ktap_check(n == 1 && done == 1 &&
		   !strcmp(names(n, used, got, sizeof(got)), "d1") &&
		   processing(fd) == 1 && kt_len(fd) == 0,
		   "done_get_retakes_its_dirty_key", "n %d done %u got '%s'", n,
		   done, got);
	kt_done(fd, "d1");

	/*
	 * Two dirty keys finished, one taken: the other wakes a getter
	 * blocked on another fd.
	 */
	kwq_add_batch(fd, keys("w1,w2"), NULL, NULL);
	n = kwq_get_batch(fd, buf, sizeof(buf), 2, 0, 0, &used);
	kwq_add_batch(fd, keys("w1,w2"), NULL, NULL);
	pid = fork();
	if (pid == 0) {
		int cfd = kt_attach(name);

		len = kwq_get(cfd, key, sizeof(key), 0, 5 * KT_SEC);
		_exit(len == 2 && !memcmp(key, "w2", 2) ? 0 : 1);
	}
	kt_sleep_ms(200);
	t0 = kt_now();
	n = kwq_done_get(fd, keys("w1,w2"), &done, buf, sizeof(buf), 1, 0, 0,
			 0, &used);
	finished = kt_wait(pid);
	ktap_check(n == 1 && done == 2 &&
		   !strcmp(names(n, used, got, sizeof(got)), "w1") &&
		   finished == 0 && kt_now() - t0 < 3 * KT_SEC,
		   "done_get_wakes_getter_for_key_not_taken",
		   "n %d done %u got '%s' child %d after %lld ms", n, done, got,
		   finished, (long long)((kt_now() - t0) / KT_MS));
	kt_done(fd, "w1");

	/*
	 * A signal whose handler asks for restarts ends a DONE_GET's wait
	 * after its done: EINTR with the key counted finished, not a
	 * restart that would finish it again (ENOENT). Go's runtime sends
	 * such signals (SIGURG) to preempt goroutines.
	 */
	kwq_destroy(fd, name);
	close(fd);
	fd = kt_queue("batch-signal", NULL, name);
	kt_add(fd, "s1");
	n = kwq_get_batch(fd, buf, sizeof(buf), 1, 0, 0, &used);
	ticker = usr1_after_ms(200);
	errno = 0;
	finished = kwq_done_get(fd, keys("s1"), &done, buf, sizeof(buf), 1, 0,
				0, 5 * KT_SEC, &used);
	len = errno;
	kt_wait(ticker);
	ktap_check(n == 1 && finished < 0 && len == EINTR && done == 1 &&
		   usr1_seen == 1 && processing(fd) == 0 && kt_len(fd) == 0,
		   "done_get_signal_after_done_eintr_not_restarted",
		   "ret %d errno %s done %u signals %d processing %ld", finished,
		   kt_ename((int)len), done, (int)usr1_seen, processing(fd));

	/* A GET that finished nothing is restarted: the key comes. */
	pid = fork();
	if (pid == 0) {
		kt_sleep_ms(600);
		_exit(kt_add(kt_attach(name), "s2") ? 1 : 0);
	}
	ticker = usr1_after_ms(200);
	errno = 0;
	len = kwq_get(fd, key, sizeof(key), 0, 5 * KT_SEC);
	finished = kt_wait(pid) | kt_wait(ticker);
	ktap_check(len == 2 && !memcmp(key, "s2", 2) && finished == 0 &&
		   usr1_seen == 2, "get_signal_restarts_wait",
		   "len %ld errno %s children %d signals %d", len,
		   kt_ename(errno), finished, (int)usr1_seen);
	kt_done(fd, "s2");

	kwq_destroy(fd, name);
	close(fd);

	/*
	 * A task killed during a batch stops between its chunks: what took
	 * effect is the batch's first keys, none after them, none twice.
	 * 4096 keys of 1024 bytes, the longest batch; the code before
	 * stopping there finished every batch it began. A kill during the
	 * copy-in takes none; the window that counts is the apply after it,
	 * which may be short: the delay doubles until a kill comes too late
	 * (all took effect), then halves the gap between the latest delay
	 * that took none and the earliest that took all.
	 */
	{
		size_t cap = (size_t)KWQ_BATCH_MAX * KWQ_REC_SIZE_MAX;
		long delay = 0, got = 0, tries = 0, lo = 0, hi = -1;
		void *out = malloc(cap);
		unsigned int i;

		kwq_recbuf_reset(&rb);
		for (i = 0; i < KWQ_BATCH_MAX; i++) {
			memset(key, 'k', sizeof(key));
			memcpy(key, &i, sizeof(i));
			kwq_recbuf_push(&rb, key, sizeof(key), 0);
		}
		while (out && rb.nr == KWQ_BATCH_MAX && tries < 24) {
			if (hi < 0 && tries > 14)
				break;	/* 4 s: the kill never comes too late */
			if (hi < 0)
				delay = tries ? 250L << (tries - 1) : 0;
			else
				delay = lo + (hi - lo) / 2;
			tries++;
			got = killed_add(&rb, delay, out, cap);
			if (got < 0 || (got > 0 && got < KWQ_BATCH_MAX))
				break;
			if (!got)
				lo = delay;
			else if (hi < 0 || delay < hi)
				hi = delay;
			if (hi >= 0 && hi <= lo)
				lo = 0;
		}
		ktap_check(got > 0 && got < KWQ_BATCH_MAX,
			   "add_batch_killed_stops_between_chunks",
			   "%ld of %u keys took effect (-1: not the first ones), "
			   "killed %ld us after its start, try %ld", got,
			   KWQ_BATCH_MAX, delay, tries);
		free(out);
	}
	kwq_recbuf_free(&rb);
	return ktap_end();
}
