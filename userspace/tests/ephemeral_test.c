// SPDX-License-Identifier: GPL-2.0
/*
 * KWQ_CREATE_EPHEMERAL: a queue destroyed when the last file attached to
 * it closes (client-go's lifetime), and only then; a plain queue outlives
 * its files. And libkwq's kwq_create_or_open(), a service's start.
 */
#include "kwqtest.h"

#include <sys/wait.h>

#define NCASES 13

/* Whether a queue of that name exists: an OPEN of a fresh fd. */
static int exists(const char *name)
{
	int fd = kt_dev(), ok;

	ok = kwq_open(fd, name) == 0;
	close(fd);
	return ok;
}

static int eph_queue(const char *base, char *name)
{
	int fd = kt_dev();

	kt_name(name, base);
	if (kwq_create_flags(fd, name, NULL, KWQ_CREATE_EPHEMERAL) < 0) {
		printf("    # create %s ephemeral: %s\n", name, strerror(errno));
		exit(1);
	}
	return fd;
}

int main(void)
{
	char name[KWQ_NAME_LEN];
	int fd, fd2, fd3, st;
	long len;
	pid_t pid;

	kt_setup("kwq_ephemeral", NCASES, 60);

	/* Its keys stay while any file is attached. */
	fd = eph_queue("eph", name);
	fd2 = kt_attach(name);
	kt_add(fd, "k1");
	close(fd);
	len = kt_len(fd2);
	ktap_check(exists(name) && len == 1, "other_file_keeps_queue_and_keys",
		   "exists %d len %ld", exists(name), len);

	/* The last close destroys it: no queue of that name, name free. */
	close(fd2);
	ktap_check(!exists(name), "last_close_destroys", "the queue is still there");
	fd = kt_dev();
	ktap_check(kwq_create(fd, name, NULL) == 0, "name_free_after_last_close",
		   "create: %s", kt_ename(errno));
	kwq_destroy(fd, name);
	close(fd);

	/* A plain queue outlives its last file, keys and all. */
	fd = kt_queue("plain", NULL, name);
	kt_add(fd, "k1");
	close(fd);
	fd = kt_dev();
	len = kwq_open(fd, name) == 0 ? kt_len(fd) : -1;
	ktap_check(len == 1, "plain_queue_outlives_its_files", "len %ld", len);
	kwq_destroy(fd, name);
	close(fd);

	/*
	 * A forked child shares the file: its exit closes only its copy of
	 * the fd, and the queue stays until the parent's goes.
	 */
	fd = eph_queue("ephfork", name);
	pid = fork();
	if (pid == 0)
		_exit(kt_add(fd, "child") ? 1 : 0);
	st = kt_wait(pid);
	len = kt_len(fd);
	ktap_check(st == 0 && exists(name) && len == 1,
		   "forked_child_exit_keeps_shared_file", "child %d exists %d len %ld",
		   st, exists(name), len);
	close(fd);
	ktap_check(!exists(name), "parent_close_destroys_after_fork",
		   "the queue is still there");

	/*
	 * Destroyed by hand and its name taken again: its last close must
	 * not touch the new queue of that name.
	 */
	fd = eph_queue("ephdestroy", name);
	fd2 = kt_dev();
	ktap_check(kwq_destroy(fd2, name) == 0 && kwq_create(fd2, name, NULL) == 0,
		   "destroy_then_recreate", "%s", kt_ename(errno));
	close(fd);
	ktap_check(exists(name) && kt_len(fd2) == 0,
		   "last_close_of_destroyed_queue_leaves_new_one", "exists %d",
		   exists(name));
	kwq_destroy(fd2, name);
	close(fd2);

	/*
	 * A getter of another file that waits while the creator closes
	 * keeps the queue: it is still attached, and gets the key added
	 * after the creator went.
	 */
	fd = eph_queue("ephwait", name);
	fd2 = kt_attach(name);
	pid = fork();
	if (pid == 0) {
		char key[KWQ_KEY_LEN_MAX];

		close(fd);
		len = kwq_get(fd2, key, sizeof(key), 0, 10 * KT_SEC);
		_exit(len == 1 && key[0] == 'w' ? 0 : 1);
	}
	close(fd);
	kt_sleep_ms(200);
	fd3 = kt_attach(name);
	kt_add(fd3, "w");
	st = kt_wait(pid);
	ktap_check(st == 0, "waiting_getter_keeps_queue", "child %d", st);
	close(fd2);
	close(fd3);
	ktap_check(!exists(name), "last_of_three_files_destroys",
		   "the queue is still there");

	/* kwq_create_or_open(): created, then opened as it is. */
	kt_name(name, "ephcoo");
	fd = kt_dev();
	fd2 = kt_dev();
	st = kwq_create_or_open(fd, name, NULL, KWQ_CREATE_EPHEMERAL);
	ktap_check(st == 1, "create_or_open_creates", "ret %d %s", st,
		   kt_ename(errno));
	kt_add(fd, "k1");
	st = kwq_create_or_open(fd2, name, NULL, 0);
	len = kt_len(fd2);
	ktap_check(st == 0 && len == 1, "create_or_open_opens_existing",
		   "ret %d %s len %ld", st, kt_ename(errno), len);
	close(fd);
	close(fd2);
	fd = kt_dev();
	st = kwq_create_or_open(fd, name, NULL, 0);
	len = kt_len(fd);
	ktap_check(st == 1 && len == 0, "create_or_open_after_ephemeral_went",
		   "ret %d %s len %ld", st, kt_ename(errno), len);
	kwq_destroy(fd, name);
	close(fd);

	return ktap_end();
}
