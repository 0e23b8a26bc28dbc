// SPDX-License-Identifier: GPL-2.0
/*
 * Permissions: a queue has an owner uid/gid and a mode (default 0600)
 * checked on open like SysV IPC, read and write both needed; root
 * (CAP_IPC_OWNER) bypasses. Only the owner (or CAP_SYS_ADMIN) destroys.
 * namespace_test.c checks the same across IPC and user namespaces.
 * Non-root users are limited to max_queues_per_user queues (EDQUOT).
 * Each check runs in a forked child that dropped to another uid/gid and
 * reports the errno of the call as its exit status.
 */
#include "kwqtest.h"

#include <grp.h>

enum { OP_OPEN, OP_DESTROY, OP_CREATE_OPEN_OWN, OP_QUOTA };

/*
 * Run @op on @name as @uid/@gid: 0 or the errno (255: setup failed).
 * The device fds are opened before dropping root: what is checked is the
 * queue's mode at KWQ_IOC_OPEN, with the caller's credentials then (the
 * VM's / may not even be searchable by other users).
 */
#define NFDS 260
static int as_user(uid_t uid, gid_t gid, int op, const char *name)
{
	pid_t pid = fork();

	if (pid == 0) {
		static int fds[NFDS];
		int fd, fd2, i, e;
		char n[KWQ_NAME_LEN];

		for (i = 0; i < NFDS; i++) {
			fds[i] = kwq_open_dev(NULL);
			if (fds[i] < 0)
				_exit(254);
		}
		if (setgroups(0, NULL) || setgid(gid) || setuid(uid))
			_exit(255);
		fd = fds[0];
		switch (op) {
		case OP_OPEN:
			_exit(kwq_open(fd, name) ? errno : 0);
		case OP_DESTROY:
			_exit(kwq_destroy(fd, name) ? errno : 0);
		case OP_CREATE_OPEN_OWN:
			/* create (default 0600), reopen as owner, destroy */
			if (kwq_create(fd, name, NULL))
				_exit(100 + errno % 100);
			fd2 = fds[1];
			if (kwq_open(fd2, name))
				_exit(errno);
			_exit(kwq_destroy(fd2, name) ? errno : 0);
		case OP_QUOTA:
			/* create until refused: EDQUOT after exactly @limit */
			for (i = 0; i < NFDS; i++) {
				fd = fds[i];
				snprintf(n, sizeof(n), "%s-%d", name, i);
				if (kwq_create(fd, n, NULL))
					break;
			}
			e = errno;
			printf("    # created %d queues before %s\n", i, kt_ename(e));
			fflush(stdout);
			for (int j = 0; j < i; j++) {
				snprintf(n, sizeof(n), "%s-%d", name, j);
				kwq_destroy(fd, n);
			}
			_exit(e == EDQUOT ? (i > 250 ? 250 : i) : 251);
		}
		_exit(253);
	}
	return kt_wait(pid);
}

static int read_param(const char *p)
{
	FILE *f = fopen(p, "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

int main(void)
{
	struct kwq_queue_opts o;
	char q600[KWQ_NAME_LEN], q606[KWQ_NAME_LEN], q660[KWQ_NAME_LEN],
	     q644[KWQ_NAME_LEN], own[KWQ_NAME_LEN];
	int fd600, fd606, fd660, fd644, r, limit;

	kt_setup("kwq_perm", 15, 120);
	if (getuid() != 0) {
		printf("    # must run as root\n");
		return 1;
	}

	fd600 = kt_queue("perm600", NULL, q600);	/* default mode */
	memset(&o, 0, sizeof(o));
	o.mode = 0606;
	fd606 = kt_queue("perm606", &o, q606);
	o.mode = 0644;
	fd644 = kt_queue("perm644", &o, q644);
	/* a queue owned by group 1000: create with egid 1000 */
	o.mode = 0660;
	if (setegid(1000))
		return 1;
	fd660 = kt_queue("perm660", &o, q660);
	if (setegid(0))
		return 1;

	r = as_user(1000, 1000, OP_OPEN, q600);
	ktap_check(r == EACCES, "default_0600_refuses_other_uid", "got %s", kt_ename(r));
	r = as_user(1000, 1000, OP_OPEN, q606);
	ktap_check(r == 0, "mode_0606_admits_other", "got %s", kt_ename(r));
	r = as_user(1000, 1000, OP_OPEN, q644);
	ktap_check(r == EACCES, "read_only_bits_refuse", "got %s", kt_ename(r));
	r = as_user(2000, 1000, OP_OPEN, q660);
	ktap_check(r == 0, "mode_0660_admits_group", "got %s", kt_ename(r));
	r = as_user(2000, 2000, OP_OPEN, q660);
	ktap_check(r == EACCES, "mode_0660_refuses_other", "got %s", kt_ename(r));
	r = as_user(1000, 1000, OP_DESTROY, q606);
	ktap_check(r == EPERM, "non_owner_destroy_eperm", "got %s", kt_ename(r));
	{
		int fd = kt_attach(q606);

		ktap_check(kt_add(fd, "still-here") == 0, "queue_survives_refused_destroy",
			   "add: %s", kt_ename(errno));
		close(fd);
	}
	r = as_user(1000, 1000, OP_OPEN, "perm-no-such-queue");
	ktap_check(r == ENOENT, "unknown_queue_enoent_for_user", "got %s", kt_ename(r));

	/* a user's own queue: it opens and destroys it; others may not */
	kt_name(own, "own");
	r = as_user(1000, 1000, OP_CREATE_OPEN_OWN, own);
	ktap_check(r == 0, "user_creates_opens_destroys_own", "got %d (%s)", r,
		   kt_ename(r >= 100 && r < 200 ? r - 100 : r));
	{
		int p[2];
		char c = 0;
		pid_t pid;

		if (pipe(p))
			return 1;
		pid = fork();
		if (pid == 0) {
			int fd = kwq_open_dev(NULL);

			close(p[0]);
			if (setgroups(0, NULL) || setgid(1000) || setuid(1000))
				_exit(255);
			c = kwq_create(fd, own, NULL) ? 'E' : 'C';
			if (write(p[1], &c, 1) != 1)
				_exit(1);
			pause();	/* hold it; the parent kills us */
			_exit(0);
		}
		close(p[1]);
		r = (int)read(p[0], &c, 1);
		close(p[0]);
		ktap_check(r == 1 && c == 'C', "user_creates_queue", "child said %c", c);
		r = as_user(1001, 1001, OP_OPEN, own);
		ktap_check(r == EACCES, "other_user_refused_users_queue", "got %s", kt_ename(r));
		{
			int fd = kt_dev();

			r = kwq_open(fd, own);
			ktap_check(r == 0, "root_bypasses_mode", "open: %s", kt_ename(errno));
			close(fd);
		}
		r = as_user(1001, 1001, OP_DESTROY, own);
		ktap_check(r == EPERM, "other_user_destroy_eperm", "got %s", kt_ename(r));
		KT_OK(kwq_destroy(fd600, own), "root_destroys_users_queue");
		kill(pid, SIGKILL);
		kt_wait(pid);
	}

	/* per-user queue limit */
	limit = read_param("/sys/module/kwq/parameters/max_queues_per_user");
	if (limit <= 0 || limit > 250) {
		ktap_skip("per_user_queue_limit_edquot", "max_queues_per_user unreadable or > 250");
	} else {
		char base[KWQ_NAME_LEN];

		kt_name(base, "quota");
		r = as_user(1002, 1002, OP_QUOTA, base);
		ktap_check(r == limit, "per_user_queue_limit_edquot",
			   "created %d before EDQUOT (251: other errno), limit %d", r, limit);
	}

	kwq_destroy(fd600, q600);
	kwq_destroy(fd600, q606);
	kwq_destroy(fd600, q644);
	kwq_destroy(fd600, q660);
	close(fd600);
	close(fd606);
	close(fd644);
	close(fd660);
	return ktap_end();
}
