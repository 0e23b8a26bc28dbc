// SPDX-License-Identifier: GPL-2.0
/*
 * Priority levels, as an unprivileged user through /dev/kwq ADD records:
 * one key added with ever new priorities (each moves it to a new level),
 * with lower ones (adds that change nothing), and while it is processing
 * (its pending requeue's priority), takes no more of the user's byte
 * budget than the key itself, and once the key is gone the queue holds as
 * many keys as a new one. Levels used to stay until the queue died: the
 * adds stopped with EDQUOT after some 3000 priorities at this budget (on
 * a queue root made, with no budget, kernel memory grew without bound).
 * Runs as root; the user's part runs in a child.
 */
#include "kwqtest.h"

#define BPARAM		"/sys/module/kwq/parameters/max_bytes_per_user"
#define BUDGET		(256 * 1024)
#define LEVELS_UID	4247
/* 80-byte levels: six times the budget, were they all kept */
#define PRIOS		20000

/* Add distinct 200-byte keys until an add fails: how many, the errno. */
static unsigned int fill(int fd, int *err)
{
	char key[200];
	unsigned int n;
	int l;

	memset(key, 'f', sizeof(key));
	for (n = 0; n < 100000; n++) {
		l = sprintf(key, "f%u", n);
		key[l] = '-';
		if (kwq_add(fd, key, sizeof(key)) < 0) {
			*err = errno;
			return n;
		}
	}
	*err = 0;
	return n;
}

/*
 * Add "k" at priority @from, @from + @step, ... (@n adds): the first
 * that failed (0: none), its errno in *@err.
 */
static int add_prios(int fd, int from, int step, int n, int *err)
{
	int i;

	for (i = 0; i < n; i++)
		if (kwq_add_priority(fd, "k", 1, from + i * step) < 0) {
			*err = errno;
			return from + i * step;
		}
	return 0;
}

/*
 * The user's part: "<failed prio> <errno> <got prio> <keys> <errno>
 * <keys in a new queue> <errno>" on @pipe_w.
 */
static void levels_child(int pipe_w)
{
	char name[KWQ_NAME_LEN], key[KWQ_KEY_LEN_MAX];
	struct kwq_stats_args st;
	int fd, bad = 0, e = 0, e1 = 0, e2 = 0, got = 0;
	unsigned int n1, n2;

	if (setgid(LEVELS_UID) < 0 || setuid(LEVELS_UID) < 0)
		_exit(10);
	fd = kt_dev();
	kt_name(name, "levels");
	if (kwq_create(fd, name, NULL) < 0)
		_exit(11);
	/* Ready: raised PRIOS times, then PRIOS adds that change nothing. */
	bad = add_prios(fd, 1, 1, PRIOS, &e);
	if (!bad)
		bad = add_prios(fd, -1, -1, PRIOS, &e);
	/* Processing: the pending requeue's priority raised PRIOS times. */
	if (!bad && kwq_get(fd, key, sizeof(key), 0, 0) == 1 &&
	    kwq_stats(fd, &st) == 0 && st.processing == 1) {
		bad = add_prios(fd, PRIOS + 1, 1, PRIOS, &e);
		kwq_done(fd, "k", 1);
		/* Requeued at the last: its priority, in the stats. */
		if (kwq_stats(fd, &st) == 0 && st.nr_prios == 1)
			got = st.prios[0].priority;
		if (kwq_get(fd, key, sizeof(key), 0, 0) == 1)
			kwq_done(fd, "k", 1);
	} else if (!bad) {
		bad = -1;
	}
	n1 = fill(fd, &e1);
	kwq_destroy(fd, name);
	close(fd);
	fd = kt_dev();
	kt_name(name, "levels-new");
	if (kwq_create(fd, name, NULL) < 0)
		_exit(12);
	n2 = fill(fd, &e2);
	kwq_destroy(fd, name);
	dprintf(pipe_w, "%d %d %d %u %d %u %d\n", bad, e, got, n1, e1, n2, e2);
	_exit(0);
}

int main(void)
{
	int p[2], bad = -1, e = -1, got = -1, e1 = -1, e2 = -1, fd;
	char old[32] = "", line[128] = "", val[32];
	unsigned int n1 = 0, n2 = 0;
	pid_t pid;
	ssize_t r;

	kt_setup("levels", 3, 600);
	fd = open(BPARAM, O_RDONLY);
	if (fd < 0 || read(fd, old, sizeof(old) - 1) <= 0) {
		printf("    # no " BPARAM "\n");
		return 1;
	}
	close(fd);
	snprintf(val, sizeof(val), "%d", BUDGET);
	if (kt_write_file(BPARAM, val) < 0 || pipe(p) < 0)
		return 1;
	pid = fork();
	if (pid == 0)
		levels_child(p[1]);
	close(p[1]);
	r = read(p[0], line, sizeof(line) - 1);
	kt_wait(pid);
	kt_write_file(BPARAM, old);
	if (r <= 0 || sscanf(line, "%d %d %d %u %d %u %d", &bad, &e, &got,
			     &n1, &e1, &n2, &e2) != 7)
		printf("    # the child said '%s'\n", line);
	printf("    # byte budget %d: %d priorities of one key; then %u keys, a new queue %u\n",
	       BUDGET, 3 * PRIOS, n1, n2);
	ktap_check(!bad, "levels_new_priorities_within_budget",
		   "the add at priority %d failed: %s", bad, kt_ename(e));
	ktap_check(got == 2 * PRIOS, "levels_requeue_at_pending_priority",
		   "requeued at %d, not %d", got, 2 * PRIOS);
	ktap_check(e1 == EDQUOT && e2 == EDQUOT && n1 == n2 && n1 > 0,
		   "levels_leave_no_bytes_behind",
		   "%u keys then %s; a new queue: %u then %s", n1,
		   kt_ename(e1), n2, kt_ename(e2));
	return ktap_end();
}
