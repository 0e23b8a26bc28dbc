// SPDX-License-Identifier: GPL-2.0
/*
 * Namespaces (issue 13, item 3), as a process sees them through /dev/kwq:
 *  - IPC namespaces: two processes in two new IPC namespaces (and the
 *    initial one) create the same queue name; each lists, opens and
 *    destroys only its own, keys never cross, each queue has its own
 *    metrics file (kwq/ipc:<inum>/<name>).
 *  - kernel names are not user names: a user creates "kwq_example" before
 *    the example module loads; the module still gets its queue (it used
 *    to fail with EEXIST), its keys never land in the user's queue.
 *  - published kernel queues (the example with published=1): refused
 *    over a user's queue of the name (EEXIST), then openable as the mode
 *    says, not by root of a user namespace, listed only in its IPC
 *    namespace, never destroyed from userspace (EPERM), its name taken
 *    (EEXIST); unpublishing wakes a blocked get with EIDRM and frees the
 *    name; unloading the module gives attached fds EIDRM.
 *  - limits per user namespace: a uid at its queue limit on the host
 *    still has its own count and byte budget in a user namespace that
 *    root made for it (root of that namespace is not exempt), and one
 *    that a user made itself counts against that user in the parent.
 *  - a dead namespace is freed (issue 30, finding 3): an unprivileged
 *    user in a new user + IPC namespace (a rootless container) makes a
 *    SysV shm segment and queues up to its limit, one queue's fd is
 *    taken out (pidfd_getfd) and it exits; the namespace is freed within
 *    seconds (the user fits a new one under max_ipc_namespaces=1 again,
 *    its debugfs directory goes), the taken fd keeps working, the other
 *    queues no longer count against the user and the taken one counts
 *    until its fd closes. A kernel queue published in a namespace that
 *    dies is unpublished (an fd taken out gets EIDRM), not destroyed,
 *    and the namespace is freed too.
 * Children report their checks through a pipe; the parent prints them.
 * Runs as root in the VM; needs CONFIG_IPC_NS and CONFIG_USER_NS.
 */
#include "kwqtest.h"

#include <grp.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/klog.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#define QPARAM	"/sys/module/kwq/parameters/max_queues_per_user"
#define BPARAM	"/sys/module/kwq/parameters/max_bytes_per_user"
#define EXAMPLE	"/kwq/kwq_example.ko"
#define EXNAME	"kwq_example"
#define PUBPARAM "/sys/module/kwq_example/parameters/published"
#define DEBUGFS	"/sys/kernel/debug/kwq"
#define BUDGET	(256 * 1024)

/* --- results from children ------------------------------------------ */

static int res_fd = -1;

/* In a child: one check, sent to the parent. */
static int rcheck(int ok, const char *name, const char *fmt, ...)
{
	char detail[200] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	dprintf(res_fd, "%s %d %s\n", name, !!ok, detail);
	return ok;
}

struct child {
	pid_t pid;
	int res;		/* read end of the result pipe */
	int to;			/* parent -> child */
	int from;		/* child -> parent */
};

/* Fork @fn(@arg) with a result pipe and a pipe each way. */
static void spawn(struct child *c, int (*fn)(struct child *, void *),
		  void *arg)
{
	int r[2], t[2], f[2];

	if (pipe(r) || pipe(t) || pipe(f))
		exit(1);
	fflush(stdout);
	c->pid = fork();
	if (c->pid < 0)
		exit(1);
	if (c->pid == 0) {
		close(r[0]);
		close(t[1]);
		close(f[0]);
		res_fd = r[1];
		c->to = t[0];
		c->from = f[1];
		_exit(fn(c, arg));
	}
	close(r[1]);
	close(t[0]);
	close(f[1]);
	c->res = r[0];
	c->to = t[1];
	c->from = f[0];
}

static int sig_send(int fd)
{
	return write(fd, "x", 1) == 1 ? 0 : -1;
}

static int sig_wait(int fd)
{
	char ch;

	return read(fd, &ch, 1) == 1 ? 0 : -1;
}

/*
 * Wait for the child, then print its results for @names (in order); a
 * missing result fails with the child's exit status.
 */
static void collect(struct child *c, const char *const *names)
{
	static char buf[8192];
	size_t used = 0;
	ssize_t n;
	int st;

	close(c->to);
	while ((n = read(c->res, buf + used, sizeof(buf) - 1 - used)) > 0)
		used += (size_t)n;
	buf[used] = '\0';
	close(c->res);
	close(c->from);
	st = kt_wait(c->pid);
	for (; *names; names++) {
		size_t len = strlen(*names);
		char *p = buf, *line = NULL;

		while ((p = strstr(p, *names))) {
			if ((p == buf || p[-1] == '\n') && p[len] == ' ') {
				line = p;
				break;
			}
			p += len;
		}
		if (!line) {
			ktap_check(0, *names, "no result: child exit %d", st);
			continue;
		}
		{
			char *end = strchr(line, '\n');
			char *detail = line + len + 3;

			if (end)
				*end = '\0';
			ktap_check(line[len + 1] == '1', *names, "%s", detail);
			if (end)
				*end = '\n';
		}
	}
}

/* --- helpers ---------------------------------------------------------- */

static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* A new fd attached to @name, or -1 (the checks using it then fail). */
static int attach(const char *name)
{
	int fd = kt_dev();

	if (kwq_open(fd, name)) {
		printf("    # open %s: %s\n", name, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* How many queues the caller's namespace lists; *found: @name among them. */
static int list_has(const char *name, int *found)
{
	static char names[256][KWQ_NAME_LEN];
	int fd = kt_dev(), n, i;

	n = kwq_list(fd, names, 256);
	close(fd);
	*found = 0;
	for (i = 0; i < n && i < 256; i++)
		*found += !strcmp(names[i], name);
	return n;
}

/* 0 or the errno of OPEN of @name on a fresh fd. */
static int try_open(const char *name)
{
	int fd = kt_dev(), e;

	e = kwq_open(fd, name) ? errno : 0;
	close(fd);
	return e;
}

static int try_destroy(const char *name)
{
	int fd = kt_dev(), e;

	e = kwq_destroy(fd, name) ? errno : 0;
	close(fd);
	return e;
}

static int have_debugfs(void)
{
	struct stat sb;

	return stat(DEBUGFS, &sb) == 0;
}

static int metrics_exist(unsigned long inum, const char *name)
{
	char path[160];
	struct stat sb;

	if (inum)
		snprintf(path, sizeof(path), DEBUGFS "/ipc:%lu/%s/metrics",
			 inum, name);
	else
		snprintf(path, sizeof(path), DEBUGFS "/%s/metrics", name);
	return stat(path, &sb) == 0;
}

/* Take every ready key (no waiting) and join them with ','. */
static void take_all(int fd, char *out, size_t size)
{
	kt_take(fd, 0, 0, 16, out, size);
}

/* --- IPC namespaces --------------------------------------------------- */

struct ipc_arg {
	const char *name;
	const char *key;
};

/*
 * In a new IPC namespace: the parent's queue is invisible; the same name
 * is created here, listed alone, holds only this namespace's keys. A
 * waits for the parent's go (meanwhile B does the same in its own
 * namespace), then takes its keys and destroys its queue.
 */
static int ipc_child(struct child *c, void *arg)
{
	const struct ipc_arg *a = arg;
	char got[256];
	int fd, n, found, e;
	unsigned long inum;

	if (unshare(CLONE_NEWIPC) < 0) {
		rcheck(0, "ipcns_unshare", "unshare(CLONE_NEWIPC): %s",
		       strerror(errno));
		return 1;
	}
	inum = kt_ipc_inum();
	n = list_has(a->name, &found);
	rcheck(n == 0 && !found, "ipcns_new_namespace_lists_nothing",
	       "lists %d queues, ours %d times", n, found);
	e = try_open(a->name);
	rcheck(e == ENOENT, "ipcns_other_namespace_queue_not_found",
	       "open: %s", kt_ename(e));
	e = try_destroy(a->name);
	rcheck(e == ENOENT, "ipcns_other_namespace_queue_not_destroyed",
	       "destroy: %s", kt_ename(e));
	fd = kt_dev();
	e = kwq_create(fd, a->name, NULL) ? errno : 0;
	rcheck(!e, "ipcns_same_name_created", "create: %s", kt_ename(e));
	if (e)
		return 1;
	kt_add(fd, a->key);
	n = list_has(a->name, &found);
	rcheck(n == 1 && found == 1, "ipcns_lists_only_own",
	       "lists %d queues, ours %d times", n, found);
	rcheck(!have_debugfs() || (metrics_exist(inum, a->name) &&
				   !metrics_exist(0, a->name)),
	       "ipcns_metrics_in_own_directory", "no %s/ipc:%lu/%s/metrics",
	       DEBUGFS, inum, a->name);
	sig_send(c->from);
	sig_wait(c->to);
	take_all(fd, got, sizeof(got));
	rcheck(!strcmp(got, a->key), "ipcns_keys_do_not_cross",
	       "took \"%s\", want \"%s\"", got, a->key);
	e = kwq_destroy(fd, a->name) ? errno : 0;
	rcheck(!e && try_open(a->name) == ENOENT, "ipcns_destroy_own",
	       "destroy: %s", kt_ename(e));
	close(fd);
	return 0;
}

/* B: the same name in another new namespace; only its own key there. */
static int ipc_child_b(struct child *c, void *arg)
{
	const struct ipc_arg *a = arg;
	char got[256];
	int fd, e;

	(void)c;
	if (unshare(CLONE_NEWIPC) < 0)
		return 1;
	fd = kt_dev();
	e = kwq_create(fd, a->name, NULL) ? errno : 0;
	rcheck(!e, "ipcns_b_same_name_created", "create: %s", kt_ename(e));
	kt_add(fd, a->key);
	take_all(fd, got, sizeof(got));
	rcheck(!strcmp(got, a->key), "ipcns_b_keys_do_not_cross",
	       "took \"%s\", want \"%s\"", got, a->key);
	kwq_destroy(fd, a->name);
	close(fd);
	return 0;
}

static void ipc_namespaces(void)
{
	static const char *const names[] = {
		"ipcns_new_namespace_lists_nothing",
		"ipcns_other_namespace_queue_not_found",
		"ipcns_other_namespace_queue_not_destroyed",
		"ipcns_same_name_created",
		"ipcns_lists_only_own",
		"ipcns_metrics_in_own_directory",
		"ipcns_keys_do_not_cross",
		"ipcns_destroy_own",
		NULL,
	};
	static const char *const names_b[] = {
		"ipcns_b_same_name_created",
		"ipcns_b_keys_do_not_cross",
		NULL,
	};
	struct ipc_arg aa = { .key = "key-of-a" }, ab = { .key = "key-of-b" };
	char name[KWQ_NAME_LEN], got[256];
	struct child a, b;
	int fd, found;

	fd = kt_queue("ipcns", NULL, name);
	kt_add(fd, "key-of-init");
	aa.name = ab.name = name;
	spawn(&a, ipc_child, &aa);
	sig_wait(a.from);
	/* B: a second new namespace while A's queue of the name exists. */
	spawn(&b, ipc_child_b, &ab);
	collect(&b, names_b);
	sig_send(a.to);
	collect(&a, names);

	take_all(fd, got, sizeof(got));
	ktap_check(!strcmp(got, "key-of-init"), "ipcns_init_keys_do_not_cross",
		   "took \"%s\"", got);
	list_has(name, &found);
	ktap_check(found == 1, "ipcns_init_queue_listed_once", "listed %d times",
		   found);
	ktap_check(!have_debugfs() || (metrics_exist(kt_ipc_inum(), name) &&
				       !metrics_exist(0, name)),
		   "ipcns_init_metrics_not_in_kernel_directory",
		   "want %s/ipc:%lu/%s/metrics, none in %s/%s", DEBUGFS,
		   kt_ipc_inum(), name, DEBUGFS, name);
	kwq_destroy(fd, name);
	close(fd);
}

/* --- the example module: squatted and published names ---------------- */

static int example_loaded(void)
{
	char line[256];
	FILE *f = fopen("/proc/modules", "r");
	int found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		found |= !strncmp(line, EXNAME " ", strlen(EXNAME) + 1);
	fclose(f);
	return found;
}

/* 0 or the errno of loading the example with @params. */
static int example_load(const char *params)
{
	int fd = open(EXAMPLE, O_RDONLY | O_CLOEXEC), e;

	if (fd < 0)
		return errno;
	e = syscall(SYS_finit_module, fd, params, 0) ? errno : 0;
	close(fd);
	return e;
}

static int example_unload(void)
{
	return syscall(SYS_delete_module, EXNAME, O_NONBLOCK) ? errno : 0;
}

/* Whether the last "kwq_example: PASS|FAIL" line in the log is PASS. */
static int example_passed(void)
{
	static char log[1 << 20];
	int n = klogctl(3, log, sizeof(log) - 1);
	char *pass, *fail, *p;

	if (n < 0)
		return 0;
	log[n] = '\0';
	pass = fail = NULL;
	for (p = log; (p = strstr(p, "kwq_example: PASS")); p++)
		pass = p;
	for (p = log; (p = strstr(p, "kwq_example: FAIL")); p++)
		fail = p;
	return pass && (!fail || fail < pass);
}

/* How many times @s occurs in the kernel log, -1 if it cannot be read. */
static int klog_count(const char *s)
{
	static char log[1 << 20];
	int n = klogctl(3, log, sizeof(log) - 1), c = 0;
	char *p;

	if (n < 0)
		return -1;
	log[n] = '\0';
	for (p = log; (p = strstr(p, s)); p++)
		c++;
	return c;
}

/*
 * As @uid/@gid (no supplementary groups): @op (kwq_open or kwq_destroy)
 * of the example's queue; its errno, 0 on success.
 */
static int as_user(uid_t uid, gid_t gid, int (*op)(int fd, const char *name))
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int fd = kt_dev();

		if (setgroups(0, NULL) || setgid(gid) || setuid(uid))
			_exit(255);
		_exit(op(fd, EXNAME) ? errno : 0);
	}
	return kt_wait(pid);
}

/*
 * Root of a user namespace that uid @uid made (it maps only itself):
 * OPEN of the example's queue. Its capabilities end at its namespace.
 */
static int open_as_userns_root(uid_t uid)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		char map[32];
		int fd = kt_dev();

		if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
			_exit(255);
		prctl(PR_SET_DUMPABLE, 1);
		if (unshare(CLONE_NEWUSER))
			_exit(254);
		snprintf(map, sizeof(map), "0 %u 1", uid);
		if (kt_write_file("/proc/self/uid_map", map))
			_exit(253);
		_exit(kwq_open(fd, EXNAME) ? errno : 0);
	}
	return kt_wait(pid);
}

/* In a new IPC namespace: the example's queue is not there. */
static int published_other_ipc_ns(struct child *c, void *arg)
{
	int n, found, e, fd;

	(void)c;
	(void)arg;
	if (unshare(CLONE_NEWIPC) < 0)
		return rcheck(0, "published_not_listed_in_other_ipc_ns",
			      "unshare: %s", strerror(errno)), 1;
	n = list_has(EXNAME, &found);
	rcheck(!found, "published_not_listed_in_other_ipc_ns",
	       "lists %d, ours %d times", n, found);
	e = try_open(EXNAME);
	rcheck(e == ENOENT, "published_not_found_in_other_ipc_ns", "open: %s",
	       kt_ename(e));
	fd = kt_dev();
	e = kwq_create(fd, EXNAME, NULL) ? errno : 0;
	rcheck(!e, "published_name_free_in_other_ipc_ns", "create: %s",
	       kt_ename(e));
	kwq_destroy(fd, EXNAME);
	close(fd);
	return 0;
}

/* Wait until the example completed its keys: nothing ready or held. */
static int example_idle(int fd, unsigned int keys)
{
	struct kwq_stats_args st;
	int i;

	for (i = 0; i < 600; i++) {
		if (kwq_stats(fd, &st))
			return 0;
		if (st.adds_total >= keys && !st.len && !st.processing &&
		    !st.waiting)
			return 1;
		kt_sleep_ms(100);
	}
	return 0;
}

/* A child blocked in GET on @fd: its errno and how long it took. */
static void get_blocked(int fd, pid_t *pid, int *p)
{
	if (pipe(p))
		exit(1);
	fflush(stdout);
	*pid = fork();
	if (*pid == 0) {
		char key[KWQ_KEY_LEN_MAX + 1];
		int64_t t0 = kt_now();
		long n = kwq_get(fd, key, sizeof(key), 0, 60 * KT_SEC);
		int e = n < 0 ? errno : 0;

		dprintf(p[1], "%d %lld\n", e,
			(long long)((kt_now() - t0) / KT_MS));
		_exit(0);
	}
	close(p[1]);
}

static void get_result(pid_t pid, int *p, int *e, long long *ms)
{
	char line[64] = "";

	*e = -1;
	*ms = -1;
	if (read(p[0], line, sizeof(line) - 1) > 0)
		sscanf(line, "%d %lld", e, ms);
	close(p[0]);
	kt_wait(pid);
}

#define EXAMPLE_CASES	27

static void example_module(void)
{
	static const char *const other_ns[] = {
		"published_not_listed_in_other_ipc_ns",
		"published_not_found_in_other_ipc_ns",
		"published_name_free_in_other_ipc_ns",
		NULL,
	};
	struct kwq_queue_opts o = { .mode = 0666 };
	struct kwq_stats_args st;
	struct child c;
	int fd, fd2, e, found, p[2], i, n;
	char line[64];
	long long ms;
	pid_t pid;

	if (access(EXAMPLE, R_OK) || example_loaded()) {
		for (i = 0; i < EXAMPLE_CASES; i++)
			ktap_skip("example_module", EXAMPLE " missing or loaded");
		return;
	}

	/* A user takes the module's name first. */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int ufd = kt_dev();

		if (setgroups(0, NULL) || setgid(1000) || setuid(1000))
			_exit(255);
		_exit(kwq_create(ufd, EXNAME, &o) ? errno : 0);
	}
	e = kt_wait(pid);
	ktap_check(!e, "user_creates_kernel_queue_name", "create: %s",
		   kt_ename(e));
	e = example_load("keys=50 fail_every=0");
	ktap_check(!e, "module_creates_name_user_took", "finit_module: %s",
		   kt_ename(e));
	fd = attach(EXNAME);
	kt_sleep_ms(300);
	e = example_loaded() ? example_unload() : ENOENT;
	ktap_check(!e && example_passed(), "module_queue_works_beside_users",
		   "delete_module: %s, log says %s", kt_ename(e),
		   example_passed() ? "PASS" : "no PASS");
	ktap_check(kwq_stats(fd, &st) == 0 && !st.adds_total && !st.len &&
		   !st.shutting_down, "module_keys_not_in_users_queue",
		   "adds %llu len %llu shut %u", (unsigned long long)st.adds_total,
		   (unsigned long long)st.len, st.shutting_down);

	/*
	 * Publishing over the user's name is refused; then it works. The
	 * module's init fails with kwq_publish()'s -EEXIST, which newer
	 * kernels (7.2, not 6.12) report as EBUSY: to finit_module() EEXIST
	 * means "already loaded". The module's log line names the cause.
	 */
	snprintf(line, sizeof(line), "kwq_example: kwq_publish: %d\n", -EEXIST);
	n = klog_count(line);
	e = example_load("keys=50 fail_every=0 published=1");
	ktap_check((e == EEXIST || e == EBUSY) && klog_count(line) == n + 1 &&
		   !example_loaded(), "publish_over_users_name_eexist",
		   "finit_module: %s, \"%.*s\" logged %d times (want 1)",
		   kt_ename(e), (int)strlen(line) - 1, line, klog_count(line) - n);
	if (example_loaded())
		example_unload();
	KT_OK(kwq_destroy(fd, EXNAME), "users_queue_destroyed");
	close(fd);
	e = example_load("keys=50 fail_every=0 published=1 publish_uid=3000 publish_gid=1000 publish_mode=0660");
	if (!ktap_check(!e, "module_publishes_queue", "finit_module: %s",
			kt_ename(e))) {
		for (i = 0; i < EXAMPLE_CASES - 7; i++)
			ktap_skip("example_module", "not loaded");
		return;
	}
	list_has(EXNAME, &found);
	ktap_check(found == 1, "published_queue_listed", "listed %d times",
		   found);
	e = as_user(3000, 3000, kwq_open);
	ktap_check(!e, "published_mode_admits_owner", "open: %s", kt_ename(e));
	e = as_user(2000, 1000, kwq_open);
	ktap_check(!e, "published_mode_admits_group", "open: %s", kt_ename(e));
	e = as_user(2000, 2000, kwq_open);
	ktap_check(e == EACCES, "published_mode_refuses_other", "open: %s",
		   kt_ename(e));
	e = open_as_userns_root(2001);
	ktap_check(e == EACCES, "published_refuses_userns_root", "open: %d (%s)",
		   e, kt_ename(e < 200 ? e : 0));
	e = try_destroy(EXNAME);
	ktap_check(e == EPERM, "published_destroy_by_root_eperm", "destroy: %s",
		   kt_ename(e));
	e = as_user(3000, 1000, kwq_destroy);
	ktap_check(e == EPERM, "published_destroy_by_owner_eperm", "destroy: %s",
		   kt_ename(e));
	fd = kt_dev();
	e = kwq_create(fd, EXNAME, NULL) ? errno : 0;
	ktap_check(e == EEXIST, "published_name_taken", "create: %s",
		   kt_ename(e));
	close(fd);
	spawn(&c, published_other_ipc_ns, NULL);
	collect(&c, other_ns);

	/* Attached files; once the module is idle, a get blocks. */
	fd = attach(EXNAME);
	fd2 = attach(EXNAME);
	ktap_check(example_idle(fd, 50), "published_queue_usable",
		   "stats: %s", kt_ename(errno));
	/* A module's queue has no CREATE arguments to tell. */
	e = kwq_queue_info(fd, NULL, NULL) ? errno : 0;
	ktap_check(e == EOPNOTSUPP, "published_info_eopnotsupp", "info: %s",
		   kt_ename(e));
	get_blocked(fd, &pid, p);
	kt_sleep_ms(300);
	kt_write_file(PUBPARAM, "0");
	get_result(pid, p, &e, &ms);
	ktap_check(e == EIDRM && ms < 10000, "unpublish_ends_blocked_get_eidrm",
		   "get: %s after %lld ms", kt_ename(e), ms);
	KT_ERR(kt_len(fd), EIDRM, "unpublished_fd_eidrm");
	close(fd);
	fd = kt_dev();
	e = kwq_create(fd, EXNAME, NULL) ? errno : 0;
	ktap_check(!e && !kwq_destroy(fd, EXNAME), "unpublished_name_free",
		   "create: %s", kt_ename(e));
	close(fd);

	/* Published again; the module unloads under an attached fd. */
	close(fd2);
	e = kt_write_file(PUBPARAM, "1") ? errno : 0;
	fd2 = e ? -1 : attach(EXNAME);
	ktap_check(!e && fd2 >= 0, "republished", "write " PUBPARAM ": %s",
		   kt_ename(e));
	get_blocked(fd2, &pid, p);
	kt_sleep_ms(300);
	e = example_unload();
	get_result(pid, p, &i, &ms);
	ktap_check(!e && (i == EIDRM || i == ESHUTDOWN) && ms < 30000,
		   "module_unload_ends_blocked_get",
		   "delete_module %s, get %s after %lld ms", kt_ename(e),
		   kt_ename(i), ms);
	KT_ERR(kt_len(fd2), EIDRM, "destroyed_published_fd_eidrm");
	ktap_check(example_passed(), "published_module_passed",
		   "the example reported no PASS last");
	close(fd2);
}

/* --- limits per user namespace --------------------------------------- */

/*
 * A child in a new user namespace: @owner_root (root made it, mapping
 * uid 0 of it to @uid) or made by @uid itself. Then @fn runs in it as
 * its uid 0 (kuid @uid). @pre runs as @uid on the host first.
 */
struct userns_arg {
	uid_t uid;
	int owner_root;
	int (*pre)(const char *base);
	int (*fn)(const char *base);
	const char *base;
};

static int userns_child(struct child *c, void *arg)
{
	const struct userns_arg *a = arg;
	char map[32];

	if (!a->owner_root) {
		if (setgroups(0, NULL) || setgid(a->uid) || setuid(a->uid))
			return 250;
		prctl(PR_SET_DUMPABLE, 1);
		if (a->pre && a->pre(a->base))
			return 249;
	}
	if (unshare(CLONE_NEWUSER))
		return 248;
	if (a->owner_root) {
		/* The parent writes the maps: 0 -> @uid. */
		sig_send(c->from);
		if (sig_wait(c->to))
			return 247;
		if (setresgid(0, 0, 0) || setresuid(0, 0, 0))
			return 246;
	} else {
		snprintf(map, sizeof(map), "0 %u 1", a->uid);
		if (kt_write_file("/proc/self/uid_map", map))
			return 245;
	}
	return a->fn(a->base);
}

/* Run @a: in a user namespace; returns the child's exit status. */
static int userns_run(struct userns_arg *a)
{
	char path[64], map[32];
	struct child c;
	pid_t pid;

	spawn(&c, userns_child, a);
	if (a->owner_root && !sig_wait(c.from)) {
		snprintf(map, sizeof(map), "0 %u 1", a->uid);
		snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)c.pid);
		kt_write_file(path, map);
		snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)c.pid);
		kt_write_file(path, map);
		sig_send(c.to);
	}
	close(c.to);
	close(c.res);
	close(c.from);
	pid = c.pid;
	return kt_wait(pid);
}

/* As the current user: create "<base>-<i>" until refused; the count. */
static int create_until_refused(const char *base, int max, int *err)
{
	char name[96];
	int i, fd;

	for (i = 0; i < max; i++) {
		fd = kt_dev();
		snprintf(name, sizeof(name), "%s-%d", base, i);
		if (kwq_create(fd, name, NULL)) {
			*err = errno;
			close(fd);
			return i;
		}
		close(fd);
	}
	*err = 0;
	return i;
}

/* Exit status: count * 4 + (1 if EDQUOT ended it); counts stay small. */
static int count_status(int n, int e)
{
	return n * 4 + (e == EDQUOT);
}

static int fn_create(const char *base)
{
	int e, n = create_until_refused(base, 20, &e);

	return count_status(n, e);
}

static int pre_create2(const char *base)
{
	char b[96];
	int e;

	snprintf(b, sizeof(b), "%s-host", base);
	return create_until_refused(b, 2, &e) == 2 ? 0 : 1;
}

static void destroy_all(const char *base, int max)
{
	char name[96];
	int fd = kt_dev(), i;

	for (i = 0; i < max; i++) {
		snprintf(name, sizeof(name), "%s-%d", base, i);
		kwq_destroy(fd, name);
		snprintf(name, sizeof(name), "%s-host-%d", base, i);
		kwq_destroy(fd, name);
	}
	close(fd);
}

/* As @uid on the host: create queues until refused; the exit status. */
static int host_create(uid_t uid, const char *base)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
			_exit(255);
		_exit(fn_create(base));
	}
	return kt_wait(pid);
}

/* Add 200-byte keys "<i>..." until refused: how many; *err the errno. */
static unsigned int fill(int fd, int *err)
{
	char key[200];
	unsigned int n;

	memset(key, 'k', sizeof(key));
	for (n = 0; n < 100000; n++) {
		int l = sprintf(key, "%u", n);

		key[l] = '-';
		if (kwq_add(fd, key, sizeof(key))) {
			*err = errno;
			return n;
		}
	}
	*err = 0;
	return n;
}

/* Exit status: keys accepted / 8 (< 250), or 251 if create failed. */
static int fn_fill(const char *base)
{
	unsigned int n;
	int fd = kt_dev(), e;

	if (kwq_create(fd, base, NULL))
		return errno == EDQUOT ? 252 : 251;
	n = fill(fd, &e);
	if (e != EDQUOT)
		return 253;
	return n / 8 < 250 ? (int)(n / 8) : 249;
}

static int host_fill(uid_t uid, const char *base)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
			_exit(255);
		_exit(fn_fill(base));
	}
	return kt_wait(pid);
}

static int pre_fill(const char *base)
{
	char b[96];

	snprintf(b, sizeof(b), "%s-host", base);
	return fn_fill(b) >= 249;
}

static void destroy_name(const char *name)
{
	int fd = kt_dev();

	kwq_destroy(fd, name);
	close(fd);
}

#define USERNS_CASES	8

static void user_namespaces(void)
{
	/* Room for suffixes; the names in use stay far below KWQ_NAME_LEN. */
	char oldq[32], oldb[32], base[112], b2[96];
	struct userns_arg a = { 0 };
	int st, n, host;

	if (read_file(QPARAM, oldq, sizeof(oldq)) ||
	    read_file(BPARAM, oldb, sizeof(oldb)) ||
	    kt_write_file(QPARAM, "3")) {
		for (n = 0; n < USERNS_CASES; n++)
			ktap_skip("user_namespaces", "no kwq parameters");
		return;
	}

	/* uid 3000 at its limit on the host */
	kt_name(base, "uq3000");
	st = host_create(3000, base);
	ktap_check(st == count_status(3, EDQUOT), "host_user_at_queue_limit",
		   "created %d, EDQUOT %d", st / 4, st % 4);
	/* root made a user namespace for uid 3000: its own count there */
	kt_name(b2, "un3000");
	a.uid = 3000;
	a.owner_root = 1;
	a.fn = fn_create;
	a.base = b2;
	st = userns_run(&a);
	ktap_check(st < 200 && st / 4 == 3, "userns_user_has_own_queue_count",
		   "created %d (status %d)", st < 200 ? st / 4 : -1, st);
	ktap_check(st < 200 && st % 4 == 1, "userns_root_not_exempt",
		   "status %d: not stopped by EDQUOT", st);
	destroy_all(base, 4);
	destroy_all(b2, 20);

	/* uid 3001 made one itself: it counts against 3001 on the host */
	kt_name(b2, "un3001");
	a.uid = 3001;
	a.owner_root = 0;
	a.pre = pre_create2;
	st = userns_run(&a);
	ktap_check(st < 200 && st / 4 == 1 && st % 4 == 1,
		   "userns_counts_against_its_owner",
		   "created %d in it after 2 on the host (status %d)",
		   st < 200 ? st / 4 : -1, st);
	destroy_all(b2, 20);
	kt_write_file(QPARAM, oldq);

	/* bytes: the same two ways */
	snprintf(b2, sizeof(b2), "%d", BUDGET);
	if (kt_write_file(BPARAM, b2)) {
		for (n = 0; n < USERNS_CASES - 4; n++)
			ktap_skip("user_namespaces", "cannot write " BPARAM);
		return;
	}
	kt_name(base, "ub3002");
	host = host_fill(3002, base);
	ktap_check(host > 0 && host < 249, "host_user_byte_budget_full",
		   "status %d", host);
	kt_name(b2, "bn3002");
	a.uid = 3002;
	a.owner_root = 1;
	a.pre = NULL;
	a.fn = fn_fill;
	a.base = b2;
	st = userns_run(&a);
	ktap_check(host > 0 && st < 249 && st * 2 > host,
		   "userns_user_has_own_byte_budget",
		   "%d keys in the namespace, %d on the host (x8; status %d)",
		   st < 249 ? st : -1, host, st);
	destroy_name(base);
	destroy_name(b2);

	kt_name(b2, "bn3003");
	a.uid = 3003;
	a.owner_root = 0;
	a.pre = pre_fill;
	st = userns_run(&a);
	ktap_check(st == 252 || st == 0, "userns_bytes_count_against_its_owner",
		   "status %d (252: create EDQUOT; 0: < 8 keys)", st);
	snprintf(base, sizeof(base), "%s-host", b2);
	destroy_name(base);
	destroy_name(b2);
	/* Everything is back: the host user fills as much as before. */
	kt_name(base, "ub3002b");
	n = host_fill(3002, base);
	ktap_check(n == host, "byte_budgets_released", "now %d, before %d", n,
		   host);
	destroy_name(base);
	kt_write_file(BPARAM, oldb);
}

/* --- a dead namespace (issue 30, finding 3) -------------------------- */

#define DEAD_UID	3100
#define DEAD_SHM	(64 << 20)
#define DEAD_WAIT_MS	30000
#define DEAD_CASES	7
#define DEADPUB_CASES	6
#define MAX_IPCNS	"/proc/sys/user/max_ipc_namespaces"

/*
 * Whether a namespace is freed is read from the kernel's own count: with
 * user.max_ipc_namespaces at 1, a user fits a new IPC namespace only once
 * its last one was freed (free_ipc_ns() drops the count after its shm,
 * message queues and semaphores). 0 if @uid (0: root) can make one now,
 * else the errno (ENOSPC at the limit).
 */
static int ipcns_probe(uid_t uid)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
			_exit(254);
		_exit(unshare(uid ? CLONE_NEWUSER | CLONE_NEWIPC : CLONE_NEWIPC) ?
		      errno : 0);
	}
	return kt_wait(pid);
}

/* Probe until @uid has room (0) or DEAD_WAIT_MS passed; *ms: how long. */
static int ipcns_wait_room(uid_t uid, long long *ms)
{
	int64_t t0 = kt_now();
	int e;

	while ((e = ipcns_probe(uid)) == ENOSPC &&
	       kt_now() - t0 < DEAD_WAIT_MS * KT_MS)
		kt_sleep_ms(200);
	*ms = (kt_now() - t0) / KT_MS;
	return e;
}

/* Take fd @fd of @pid (pidfd_getfd: the test kernel has no AF_UNIX). */
static int steal_fd(pid_t pid, int fd)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), nfd;

	if (pfd < 0)
		return -1;
	nfd = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
	close(pfd);
	return nfd;
}

/* A SysV shm segment of DEAD_SHM bytes, touched and left (no IPC_RMID). */
static int dead_shm(void)
{
	int id = shmget(IPC_PRIVATE, DEAD_SHM, IPC_CREAT | 0600);
	void *p = id < 0 ? (void *)-1 : shmat(id, NULL, 0);

	if (p == (void *)-1)
		return -1;
	memset(p, 1, DEAD_SHM);
	return shmdt(p);
}

/*
 * As DEAD_UID in a new user + IPC namespace (a rootless container): a
 * shm segment, three queues (the limit) with a key each, the third's fd
 * kept open for the parent to take. Sends "<ipc inum> <fd>", waits for
 * the parent's go and exits.
 */
static int dead_child(struct child *c, void *arg)
{
	const char *base = arg;
	char map[32], name[96];
	int i, fd = -1;

	if (setgroups(0, NULL) || setgid(DEAD_UID) || setuid(DEAD_UID))
		return rcheck(0, "deadns_setup", "setuid: %s", strerror(errno));
	prctl(PR_SET_DUMPABLE, 1);
	if (unshare(CLONE_NEWUSER | CLONE_NEWIPC))
		return rcheck(0, "deadns_setup", "unshare: %s", strerror(errno));
	snprintf(map, sizeof(map), "0 %u 1", DEAD_UID);
	if (kt_write_file("/proc/self/uid_map", map))
		return rcheck(0, "deadns_setup", "uid_map: %s", strerror(errno));
	if (dead_shm())
		return rcheck(0, "deadns_setup", "shm: %s", strerror(errno));
	for (i = 0; i < 3; i++) {
		if (fd >= 0)
			close(fd);
		fd = kt_dev();
		snprintf(name, sizeof(name), "%s-%d", base, i);
		if (kwq_create(fd, name, NULL))
			return rcheck(0, "deadns_setup", "create %s: %s", name,
				      strerror(errno));
		kt_add(fd, "key-of-the-dead");
	}
	rcheck(1, "deadns_setup", "3 queues, %d MiB of shm in ipc:%lu",
	       DEAD_SHM >> 20, kt_ipc_inum());
	dprintf(c->from, "%lu %d\n", kt_ipc_inum(), fd);
	sig_wait(c->to);
	return 0;
}

/*
 * A rootless container that exits with queues: its namespace is freed
 * (the user fits a new one under max_ipc_namespaces=1 again; kwq's
 * debugfs directory of it goes), the queue whose fd was taken out keeps
 * working, the others no longer count against the user, the taken one
 * until its fd is closed.
 */
static void dead_namespace(void)
{
	static const char *const names[] = { "deadns_setup", NULL };
	char oldq[32], oldns[32], base[96], b2[96], got[256], line[64] = "";
	char dir[96];
	unsigned long inum = 0;
	int fd = -1, cfd = -1, st, n, e1, e;
	struct stat sb;
	struct child c;
	long long ms;

	if (read_file(QPARAM, oldq, sizeof(oldq)) ||
	    read_file(MAX_IPCNS, oldns, sizeof(oldns)) ||
	    kt_write_file(MAX_IPCNS, "1")) {
		for (n = 0; n < DEAD_CASES; n++)
			ktap_skip("dead_namespace", "no " QPARAM " or " MAX_IPCNS);
		return;
	}
	kt_write_file(QPARAM, "3");
	kt_name(base, "deadns");
	spawn(&c, dead_child, base);
	n = (int)read(c.from, line, sizeof(line) - 1);
	if (n > 0) {
		line[n] = '\0';
		if (sscanf(line, "%lu %d", &inum, &cfd) == 2)
			fd = steal_fd(c.pid, cfd);
	}
	/* The limit bites: no second namespace while the first lives. */
	e1 = ipcns_probe(DEAD_UID);
	collect(&c, names);	/* it exits: nothing is in its namespace */
	ktap_check(e1 == ENOSPC && fd >= 0, "deadns_ipcns_limit_bites",
		   "a new IPC namespace beside the container's: %s; fd %s",
		   kt_ename(e1), fd >= 0 ? "taken" : "not taken");

	/* Before, the namespace stayed until rmmod. */
	e = ipcns_wait_room(DEAD_UID, &ms);
	printf("    # dead namespace freed %lld ms after its last process exited\n", ms);
	ktap_check(!e, "deadns_namespace_freed",
		   "a new IPC namespace for uid %d: %s %lld ms after the exit",
		   DEAD_UID, kt_ename(e), ms);
	snprintf(dir, sizeof(dir), DEBUGFS "/ipc:%lu", inum);
	ktap_check(inum && (!have_debugfs() || stat(dir, &sb)),
		   "deadns_debugfs_directory_gone", "%s %s", dir,
		   have_debugfs() && !stat(dir, &sb) ? "still there" : "gone");

	/* The fd taken out still works: its queue was unnamed, not killed. */
	take_all(fd, got, sizeof(got));
	st = kt_add(fd, "after") ? errno : 0;
	ktap_check(fd >= 0 && !strcmp(got, "key-of-the-dead") && !st &&
		   kt_len(fd) == 1, "deadns_taken_fd_keeps_working",
		   "took \"%s\", add: %s", got, kt_ename(st));

	/* Two queues freed; the taken one counts until its fd closes. */
	kt_name(b2, "deadns-host");
	st = host_create(DEAD_UID, b2);
	ktap_check(st == count_status(2, EDQUOT), "deadns_queues_no_longer_count",
		   "created %d of 3, EDQUOT %d", st / 4, st % 4);
	destroy_all(b2, 4);
	if (fd >= 0)
		close(fd);
	st = host_create(DEAD_UID, b2);
	ktap_check(st == count_status(3, EDQUOT), "deadns_taken_queue_freed_on_close",
		   "created %d of 3, EDQUOT %d", st / 4, st % 4);
	destroy_all(b2, 4);
	kt_write_file(QPARAM, oldq);
	kt_write_file(MAX_IPCNS, oldns);
}

/*
 * As root in a new IPC namespace: a shm segment, the example's queue
 * published here (the module publishes in the namespace of whoever
 * writes "published"), an fd attached to it kept for the parent.
 */
static int dead_pub_child(struct child *c, void *arg)
{
	int fd, found;

	(void)arg;
	if (unshare(CLONE_NEWIPC))
		return rcheck(0, "deadns_published_setup", "unshare: %s",
			      strerror(errno));
	if (dead_shm())
		return rcheck(0, "deadns_published_setup", "shm: %s",
			      strerror(errno));
	if (kt_write_file(PUBPARAM, "1"))
		return rcheck(0, "deadns_published_setup", "publish: %s",
			      strerror(errno));
	list_has(EXNAME, &found);
	fd = found == 1 ? attach(EXNAME) : -1;
	if (fd < 0)
		return rcheck(0, "deadns_published_setup",
			      "listed %d times, attach failed", found);
	rcheck(1, "deadns_published_setup", "published in ipc:%lu",
	       kt_ipc_inum());
	dprintf(c->from, "%d\n", fd);
	sig_wait(c->to);
	return 0;
}

/*
 * A kernel queue published in a namespace that dies: unpublished (the
 * fd taken out gets EIDRM), not destroyed (its module publishes it again
 * and unloads cleanly), and the namespace is freed.
 */
static void dead_namespace_published(void)
{
	static const char *const names[] = { "deadns_published_setup", NULL };
	char line[32] = "", oldns[32];
	int fd = -1, cfd = -1, n, e, e1, found, i;
	struct child c;
	long long ms;

	if (access(EXAMPLE, R_OK) || example_loaded() ||
	    read_file(MAX_IPCNS, oldns, sizeof(oldns)) ||
	    example_load("keys=50 fail_every=0 publish_mode=0666")) {
		for (i = 0; i < DEADPUB_CASES; i++)
			ktap_skip("dead_namespace_published",
				  "no " EXAMPLE " or " MAX_IPCNS ", or no load");
		return;
	}
	kt_write_file(MAX_IPCNS, "1");
	spawn(&c, dead_pub_child, NULL);
	n = (int)read(c.from, line, sizeof(line) - 1);
	if (n > 0) {
		line[n] = '\0';
		cfd = atoi(line);
		fd = steal_fd(c.pid, cfd);
	}
	e1 = ipcns_probe(0);
	collect(&c, names);
	ktap_check(e1 == ENOSPC && fd >= 0, "deadns_published_ipcns_limit_bites",
		   "a new IPC namespace for root beside the published one: %s; fd %s",
		   kt_ename(e1), fd >= 0 ? "taken" : "not taken");

	e = ipcns_wait_room(0, &ms);
	printf("    # dead namespace (published queue) freed %lld ms after the exit\n", ms);
	ktap_check(!e, "deadns_published_namespace_freed",
		   "a new IPC namespace for root: %s %lld ms after the exit",
		   kt_ename(e), ms);
	kt_write_file(MAX_IPCNS, oldns);
	e = kt_len(fd) < 0 ? errno : 0;
	ktap_check(fd >= 0 && e == EIDRM, "deadns_published_fd_eidrm",
		   "len on the taken fd: %s", kt_ename(e));
	if (fd >= 0)
		close(fd);

	/* The module's queue lives: published again, here this time. */
	e = kt_write_file(PUBPARAM, "0") || kt_write_file(PUBPARAM, "1") ?
		errno : 0;
	list_has(EXNAME, &found);
	fd = !e && found == 1 ? attach(EXNAME) : -1;
	ktap_check(!e && fd >= 0 && example_idle(fd, 50),
		   "deadns_published_queue_not_destroyed",
		   "republish: %s, listed %d times, attach %s", kt_ename(e),
		   found, fd >= 0 ? "ok" : "failed");
	if (fd >= 0)
		close(fd);
	e = example_unload();
	ktap_check(!e && example_passed(), "deadns_published_module_unloads",
		   "delete_module: %s, log says %s", kt_ename(e),
		   example_passed() ? "PASS" : "no PASS");
}

int main(void)
{
	kt_setup("kwq_namespace", 13 + EXAMPLE_CASES + USERNS_CASES + DEAD_CASES +
		 DEADPUB_CASES,
		 340);
	if (getuid() != 0) {
		printf("    # must run as root\n");
		return 1;
	}
	if (access("/proc/self/ns/ipc", F_OK) || access("/proc/self/ns/user", F_OK)) {
		printf("    # the kernel lacks IPC or user namespaces (CONFIG_IPC_NS, CONFIG_USER_NS)\n");
		return 1;
	}
	ipc_namespaces();
	example_module();
	user_namespaces();
	dead_namespace();
	dead_namespace_published();
	return ktap_end();
}
