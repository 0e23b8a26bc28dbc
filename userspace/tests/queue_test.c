// SPDX-License-Identifier: GPL-2.0
/*
 * Queue semantics through libkwq: dedup, priorities, the processing set,
 * delay ordering (add after), batches, the item cap, timeouts, O_NONBLOCK,
 * EINTR, shutdown (plain and drain), list and stats. Timing checks assert
 * order, never speed: QEMU TCG is slow and noisy.
 */
#include "kwqtest.h"

static void on_usr1(int sig)
{
	(void)sig;
}

/* Fork a child that sends SIGUSR1 to us after @ms. */
static pid_t signal_later(long ms)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0) {
		kt_sleep_ms(ms);
		kill(parent, SIGUSR1);
		_exit(0);
	}
	return pid;
}

/* Whether @name is among the first @n of @names. */
static int list_has(char (*names)[KWQ_NAME_LEN], int n, const char *name)
{
	int i;

	for (i = 0; i < n && i < 1024; i++)
		if (!strncmp(names[i], name, KWQ_NAME_LEN))
			return 1;
	return 0;
}

/*
 * LIST while a child creates and destroys queues: each call fills every
 * slot it counts (room permitting) and finds @name, which stays. The
 * kernel sizes its buffer by a count taken before the names.
 */
static void list_while_queues_come_and_go(int fd, const char *name,
					  char (*names)[KWQ_NAME_LEN])
{
	int calls = 0, short_lists = 0, missing = 0, n, i, r;
	char qn[KWQ_NAME_LEN];
	int64_t end;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		for (i = 0; getppid() != 1; i++) {
			int cfd = kwq_open_dev(NULL);

			kt_name(qn, "churn");
			if (cfd < 0 || kwq_create(cfd, qn, NULL) ||
			    kwq_destroy(cfd, qn))
				_exit(1);
			close(cfd);
		}
		_exit(0);
	}
	end = kt_now() + 1500 * (KT_SEC / 1000);
	while (kt_now() < end) {
		memset(names, 0, (size_t)1024 * KWQ_NAME_LEN);
		n = kwq_list(fd, names, 1024);
		calls++;
		for (i = 0; i < n && i < 1024; i++)
			if (!names[i][0])
				break;
		short_lists += i < n && i < 1024;
		missing += !list_has(names, n, name);
	}
	kill(pid, SIGKILL);
	r = kt_wait(pid);
	ktap_check(calls > 0 && !short_lists && !missing && r == 128 + SIGKILL,
		   "list_fills_what_it_counts_while_queues_change",
		   "%d calls: %d with empty slots, %d without '%s'; churn exit %d",
		   calls, short_lists, missing, name, r);
}

int main(void)
{
	struct kwq_queue_opts o;
	struct kwq_stats_args st;
	struct kwq_recbuf rb = KWQ_RECBUF_INIT;
	struct sigaction sa;
	char name[KWQ_NAME_LEN], buf[512];
	unsigned int done;
	int64_t t0;
	pid_t pid;
	int fd, fd2, r, i;

	kt_setup("kwq_queue", 47, 120);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;	/* no SA_RESTART: blocking calls see EINTR */
	sigaction(SIGUSR1, &sa, NULL);

	fd = kt_queue("queue", NULL, name);

	/* dedup and FIFO */
	kt_add(fd, "a");
	kt_add(fd, "b");
	kt_add(fd, "a");
	ktap_check(kt_len(fd) == 2, "add_dedups", "len %ld", kt_len(fd));
	kt_take(fd, 0, 0, 10, buf, sizeof(buf));
	ktap_check(strcmp(buf, "a,b") == 0, "fifo_order", "got '%s'", buf);

	/* processing set: a key re-added while processing waits for done */
	kt_add(fd, "a");
	ktap_check(kt_len(fd) == 0, "readd_while_processing_not_ready",
		   "len %ld", kt_len(fd));
	KT_OK(kt_done(fd, "a"), "done_dirty_key");
	ktap_check(kt_len(fd) == 1, "dirty_key_requeued_by_done", "len %ld",
		   kt_len(fd));
	KT_OK(kt_done(fd, "b"), "done_clean_key");
	KT_ERR(kt_done(fd, "b"), ENOENT, "done_not_processing_enoent");
	kt_take(fd, 0, 0, 10, buf, sizeof(buf));
	ktap_check(strcmp(buf, "a") == 0, "requeued_key_gettable", "got '%s'", buf);
	KT_ERR(kwq_remove(fd, "a", 1), EBUSY, "remove_processing_key_ebusy");
	kt_done(fd, "a");

	/* priorities: higher first, FIFO within one */
	kwq_recbuf_push_str(&rb, "p0", 0);
	kwq_recbuf_push_str(&rb, "p5", 5);
	kwq_recbuf_push_str(&rb, "p1", 1);
	kwq_recbuf_push_str(&rb, "p5b", 5);
	kwq_recbuf_push_str(&rb, "neg", -3);
	KT_OK(kwq_add_batch(fd, &rb, NULL, &done), "add_batch_with_priorities");
	kt_take(fd, 0, 0, 10, buf, sizeof(buf));
	ktap_check(strcmp(buf, "p5,p5b,p1,p0,neg") == 0, "priority_order",
		   "got '%s'", buf);
	/* done records carry no priority */
	KT_ERR(kwq_done_batch(fd, &rb, &done), EINVAL, "done_with_priority_einval");
	kwq_recbuf_reset(&rb);
	kwq_recbuf_push_str(&rb, "p0", 0);
	kwq_recbuf_push_str(&rb, "p5", 0);
	kwq_recbuf_push_str(&rb, "p1", 0);
	kwq_recbuf_push_str(&rb, "p5b", 0);
	kwq_recbuf_push_str(&rb, "neg", 0);
	KT_OK(kwq_done_batch(fd, &rb, &done), "done_batch");
	ktap_check(done == 5, "done_batch_count", "done %u", done);

	/* batch get: nr and records */
	kwq_recbuf_reset(&rb);
	for (i = 0; i < 20; i++) {
		char k[16];

		snprintf(k, sizeof(k), "k%02d", i);
		kwq_recbuf_push_str(&rb, k, 0);
	}
	KT_OK(kwq_add_batch(fd, &rb, NULL, &done), "add_batch_of_20");
	{
		static unsigned char gb[32 * KWQ_REC_SIZE_MAX];
		const void *k;
		size_t used, off = 0, len;
		int n, ok = 1;

		n = kwq_get_batch(fd, gb, sizeof(gb), 32, 0, 0, &used);
		for (i = 0; n == 20 && i < 20; i++) {
			char want[16];

			snprintf(want, sizeof(want), "k%02d", i);
			ok &= kwq_rec_next(gb, used, &off, &k, &len, NULL) == 1 &&
			      len == 3 && memcmp(k, want, 3) == 0;
		}
		ktap_check(n == 20 && ok && off == used && used == 20 * 16,
			   "get_batch_returns_all_ready", "n %d ok %d used %zu", n,
			   ok, used);
	}
	KT_OK(kwq_done_batch(fd, &rb, &done), "done_batch_of_20");

	/* delay ordering: add after, assert order only */
	t0 = kt_now();
	kwq_add_after(fd, "d1200", 5, 1200 * KT_MS);
	kwq_add_after(fd, "d400", 4, 400 * KT_MS);
	kwq_add_after(fd, "d800", 4, 800 * KT_MS);
	kt_add(fd, "now");
	ktap_check(kwq_stats(fd, &st) == 0 && st.waiting == 3 && st.len == 1,
		   "stats_waiting_and_len", "waiting %llu len %llu",
		   (unsigned long long)st.waiting, (unsigned long long)st.len);
	kt_take(fd, 0, 20 * KT_SEC, 4, buf, sizeof(buf));
	ktap_check(strcmp(buf, "now,d400,d800,d1200") == 0, "add_after_order",
		   "got '%s'", buf);
	ktap_check(kt_now() - t0 >= 1200 * KT_MS, "add_after_not_early",
		   "all four after %lld ms", (long long)((kt_now() - t0) / KT_MS));
	kwq_done(fd, "now", 3);
	kwq_done(fd, "d400", 4);
	kwq_done(fd, "d800", 4);
	kwq_done(fd, "d1200", 5);

	/* an earlier deadline wins; a ready key is not delayed */
	kwq_add_after(fd, "soon", 4, 3600 * KT_SEC);
	kwq_add_after(fd, "soon", 4, 100 * KT_MS);
	kt_take(fd, 0, 20 * KT_SEC, 1, buf, sizeof(buf));
	ktap_check(strcmp(buf, "soon") == 0, "earlier_deadline_wins", "got '%s'", buf);
	kt_done(fd, "soon");
	kt_add(fd, "ready");
	kwq_add_after(fd, "ready", 5, 3600 * KT_SEC);
	ktap_check(kt_len(fd) == 1, "add_after_keeps_ready_key_ready", "len %ld",
		   kt_len(fd));
	kt_take(fd, 0, 0, 1, buf, sizeof(buf));
	kt_done(fd, "ready");
	/* the deadline asked for while it was ready comes after its run */
	ktap_check(kwq_stats(fd, &st) == 0 && st.waiting == 1 && st.len == 0,
		   "ready_key_deadline_remembered", "waiting %llu len %llu",
		   (unsigned long long)st.waiting, (unsigned long long)st.len);
	kwq_remove(fd, "ready", 5);
	kwq_add_after(fd, "gone", 4, 3600 * KT_SEC);
	KT_OK(kwq_remove(fd, "gone", 4), "remove_waiting_key");
	ktap_check(kwq_stats(fd, &st) == 0 && st.waiting == 0, "removed_waiting_key_gone",
		   "waiting %llu", (unsigned long long)st.waiting);

	/* timeouts and non-blocking */
	t0 = kt_now();
	KT_ERR(kwq_get(fd, buf, sizeof(buf), 0, 100 * KT_MS), ETIMEDOUT, "get_timeout_etimedout");
	ktap_check(kt_now() - t0 >= 100 * KT_MS, "get_timeout_waited", "%lld ms",
		   (long long)((kt_now() - t0) / KT_MS));
	KT_ERR(kwq_get(fd, buf, sizeof(buf), 0, 0), EAGAIN, "get_timeout_zero_eagain");
	fd2 = kt_attach(name);
	fcntl(fd2, F_SETFL, O_NONBLOCK);
	KT_ERR(kwq_get(fd2, buf, sizeof(buf), 0, -1), EAGAIN, "get_o_nonblock_eagain");
	close(fd2);

	/* EINTR: a signal interrupts a blocking get */
	pid = signal_later(200);
	KT_ERR(kwq_get(fd, buf, sizeof(buf), 0, -1), EINTR, "blocking_get_eintr");
	kt_wait(pid);

	/* a blocking get is woken by an add from another process */
	pid = fork();
	if (pid == 0) {
		int cfd = kt_attach(name);

		kt_sleep_ms(200);
		_exit(kt_add(cfd, "wake") ? 1 : 0);
	}
	r = (int)kwq_get(fd, buf, sizeof(buf), 0, 20 * KT_SEC);
	ktap_check(r == 4 && memcmp(buf, "wake", 4) == 0 && kt_wait(pid) == 0,
		   "blocking_get_woken_by_add", "r %d errno %s", r, kt_ename(errno));
	kt_done(fd, "wake");

	/* item cap */
	{
		struct kwq_queue_opts co;
		int cfd;

		memset(&co, 0, sizeof(co));
		co.max_items = 2;
		cfd = kt_queue("cap", &co, NULL);
		kwq_recbuf_reset(&rb);
		kwq_recbuf_push_str(&rb, "c1", 0);
		kwq_recbuf_push_str(&rb, "c2", 0);
		kwq_recbuf_push_str(&rb, "c3", 0);
		errno = 0;
		r = kwq_add_batch(cfd, &rb, NULL, &done);
		ktap_check(r == -1 && errno == ENOSPC && done == 2 && kt_len(cfd) == 2,
			   "item_cap_enospc_partial_batch", "r %d errno %s done %u len %ld",
			   r, kt_ename(errno), done, kt_len(cfd));
		KT_OK(kt_add(cfd, "c1"), "item_cap_readd_existing_ok");
		close(cfd);
	}

	/* shutdown: waiting keys dropped, ready ones still handed out */
	kt_add(fd, "r1");
	kwq_add_after(fd, "w1", 2, 3600 * KT_SEC);
	KT_OK(kwq_shutdown(fd, 0), "shutdown");
	KT_ERR(kt_add(fd, "late"), ESHUTDOWN, "add_after_shutdown_eshutdown");
	ktap_check(kwq_stats(fd, &st) == 0 && st.shutting_down == 1 &&
		   st.dropped_at_shutdown == 1 && st.waiting == 0 && st.len == 1,
		   "shutdown_stats", "shut %u dropped %llu waiting %llu len %llu",
		   st.shutting_down, (unsigned long long)st.dropped_at_shutdown,
		   (unsigned long long)st.waiting, (unsigned long long)st.len);
	kt_take(fd, 0, KT_SEC, 5, buf, sizeof(buf));
	ktap_check(strcmp(buf, "r1,!ESHUTDOWN") == 0, "ready_keys_survive_shutdown",
		   "got '%s'", buf);
	kt_done(fd, "r1");
	close(fd);

	/* drain waits for processing keys; a signal interrupts it */
	fd = kt_queue("drain", NULL, name);
	kt_add(fd, "x");
	kt_take(fd, 0, 0, 1, buf, sizeof(buf));
	pid = fork();
	if (pid == 0) {
		int cfd = kt_attach(name);

		_exit(kwq_shutdown(cfd, KWQ_SHUTDOWN_DRAIN) ? 10 + errno % 100 : 0);
	}
	kt_sleep_ms(300);
	ktap_check(waitpid(pid, &r, WNOHANG) == 0, "drain_waits_for_processing",
		   "drain returned early");
	kt_done(fd, "x");
	r = kt_wait(pid);
	ktap_check(r == 0, "drain_returns_when_done", "child exit %d", r);
	close(fd);

	fd = kt_queue("drain-intr", NULL, name);
	kt_add(fd, "y");
	kt_take(fd, 0, 0, 1, buf, sizeof(buf));
	pid = signal_later(200);
	KT_ERR(kwq_shutdown(fd, KWQ_SHUTDOWN_DRAIN), EINTR, "drain_interrupted_eintr");
	kt_wait(pid);
	KT_OK(kt_done(fd, "y"), "done_after_interrupted_drain");

	/* list and destroy */
	{
		char (*names)[KWQ_NAME_LEN] = calloc(1024, KWQ_NAME_LEN);
		int n = kwq_list(fd, names, 1024), found = list_has(names, n, name);
		char seen[1024] = "";

		/*
		 * Seen three times in make check (n 13, found 0): LIST sized
		 * its buffer by a count taken before queues of other suites
		 * were created, and wrote fewer names than it counted (the
		 * case below reproduces it). Should it recur, the evidence
		 * rides in the failure's own line: what was listed, and
		 * whether a second LIST finds the queue.
		 */
		if (!found) {
			for (i = 0; i < n && i < 1024; i++)
				snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen),
					 "%s'%.*s'", i ? "," : "", KWQ_NAME_LEN, names[i]);
			memset(names, 0, (size_t)1024 * KWQ_NAME_LEN);
			r = kwq_list(fd, names, 1024);
			i = list_has(names, r, name);
		}
		ktap_check(n >= 1 && found, "list_shows_queue",
			   "n %d found %d looking for '%s' in [%s]; LIST again: n %d found %d",
			   n, found, name, seen, r, i);
		list_while_queues_come_and_go(fd, name, names);
		KT_OK(kwq_destroy(fd, name), "destroy");
		n = kwq_list(fd, names, 1024);
		found = list_has(names, n, name);
		ktap_check(n >= 0 && !found, "list_after_destroy", "n %d found %d", n, found);
		free(names);
	}
	KT_ERR(kt_add(fd, "z"), EIDRM, "add_destroyed_eidrm");
	KT_ERR(kt_done(fd, "y"), EIDRM, "done_destroyed_eidrm");
	close(fd);
	(void)o;
	kwq_recbuf_free(&rb);
	return ktap_end();
}
