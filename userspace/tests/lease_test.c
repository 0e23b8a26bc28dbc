// SPDX-License-Identifier: GPL-2.0
/*
 * Leases: keys a process gets are held by its fd. A child that gets keys
 * and is SIGKILLed gives them back; detached keys (KWQ_GET_DETACHED)
 * outlive their getter and can be done from another process; a leased key
 * cannot be done through another fd (EPERM).
 */
#include "kwqtest.h"

/* Child: attach, get @n keys (leased unless @flags), report, wait. */
static pid_t getter(const char *name, int n, unsigned int flags, int *rfd)
{
	int p[2];
	pid_t pid;

	if (pipe(p) < 0)
		exit(1);
	pid = fork();
	if (pid == 0) {
		char buf[256];
		int fd = kt_attach(name), got;

		close(p[0]);
		got = kt_take(fd, flags, 5 * KT_SEC, n, buf, sizeof(buf));
		dprintf(p[1], "%d %s\n", got, buf);
		if (flags & KWQ_GET_DETACHED)
			_exit(0);
		for (;;)
			pause();
	}
	close(p[1]);
	*rfd = p[0];
	return pid;
}

static int read_line(int fd, char *buf, size_t size)
{
	ssize_t n = read(fd, buf, size - 1);

	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return (int)n;
}

int main(void)
{
	struct kwq_stats_args st;
	char name[KWQ_NAME_LEN], buf[256], line[256];
	int fd, fd2, rfd, r;
	pid_t pid;

	kt_setup("kwq_lease", 17, 120);
	fd = kt_queue("lease", NULL, name);

	/* a SIGKILLed getter gives its keys back */
	kt_add(fd, "a");
	kt_add(fd, "b");
	kt_add(fd, "c");
	pid = getter(name, 2, 0, &rfd);
	read_line(rfd, line, sizeof(line));
	ktap_check(strcmp(line, "2 a,b\n") == 0, "child_gets_two_leased", "child: '%s'", line);
	ktap_check(kwq_stats(fd, &st) == 0 && st.processing == 2 && st.len == 1,
		   "leased_keys_processing", "processing %llu len %llu",
		   (unsigned long long)st.processing, (unsigned long long)st.len);
	kill(pid, SIGKILL);
	r = kt_wait(pid);
	ktap_check(r == 128 + SIGKILL, "child_killed", "status %d", r);
	ktap_check(kwq_stats(fd, &st) == 0 && st.processing == 0 && st.len == 3 &&
		   st.lease_returns == 2, "killed_child_keys_come_back",
		   "processing %llu len %llu lease_returns %llu",
		   (unsigned long long)st.processing, (unsigned long long)st.len,
		   (unsigned long long)st.lease_returns);
	kt_take(fd, 0, 0, 10, buf, sizeof(buf));
	ktap_check(strcmp(buf, "a,b,c") == 0 || strcmp(buf, "c,a,b") == 0,
		   "returned_keys_gettable_once", "got '%s'", buf);
	kt_done(fd, "a");
	kt_done(fd, "b");
	kt_done(fd, "c");

	/* a key re-added while leased comes back once, not twice */
	kt_add(fd, "d");
	pid = getter(name, 1, 0, &rfd);
	read_line(rfd, line, sizeof(line));
	kt_add(fd, "d");
	ktap_check(kt_len(fd) == 0, "readd_of_leased_key_waits", "len %ld", kt_len(fd));
	kill(pid, SIGKILL);
	kt_wait(pid);
	ktap_check(kt_len(fd) == 1, "dirty_leased_key_back_once", "len %ld", kt_len(fd));
	kt_take(fd, 0, 0, 1, buf, sizeof(buf));
	kt_done(fd, "d");

	/* detached keys outlive their getter; any fd may done them */
	kt_add(fd, "e");
	kt_add(fd, "f");
	pid = getter(name, 2, KWQ_GET_DETACHED, &rfd);
	read_line(rfd, line, sizeof(line));
	r = kt_wait(pid);
	ktap_check(r == 0 && strcmp(line, "2 e,f\n") == 0, "detached_get_in_child",
		   "status %d child '%s'", r, line);
	ktap_check(kwq_stats(fd, &st) == 0 && st.processing == 2 && st.len == 0,
		   "detached_keys_stay_processing", "processing %llu len %llu",
		   (unsigned long long)st.processing, (unsigned long long)st.len);
	KT_OK(kt_done(fd, "e"), "done_detached_from_other_process");
	fd2 = kt_attach(name);
	KT_OK(kt_done(fd2, "f"), "done_detached_from_other_fd");
	KT_ERR(kt_done(fd2, "f"), ENOENT, "done_detached_twice_enoent");

	/* a leased key belongs to its fd */
	kt_add(fd, "g");
	kt_take(fd2, 0, 0, 1, buf, sizeof(buf));
	KT_ERR(kt_done(fd, "g"), EPERM, "done_of_key_leased_to_other_fd_eperm");
	ktap_check(kwq_stats(fd, &st) == 0 && st.processing == 1,
		   "eperm_done_changed_nothing", "processing %llu",
		   (unsigned long long)st.processing);
	KT_OK(kt_done(fd2, "g"), "done_by_lease_holder");

	/* closing an fd returns its leases, in this process too */
	kt_add(fd, "h");
	kt_take(fd2, 0, 0, 1, buf, sizeof(buf));
	close(fd2);
	ktap_check(kt_len(fd) == 1, "close_returns_leases", "len %ld", kt_len(fd));
	kt_take(fd, KWQ_GET_DETACHED, 0, 1, buf, sizeof(buf));
	close(fd);
	fd = kt_attach(name);
	ktap_check(kwq_stats(fd, &st) == 0 && st.processing == 1 && st.len == 0,
		   "close_keeps_detached_processing", "processing %llu len %llu",
		   (unsigned long long)st.processing, (unsigned long long)st.len);
	kt_done(fd, "h");
	kwq_destroy(fd, name);
	close(fd);
	return ktap_end();
}
