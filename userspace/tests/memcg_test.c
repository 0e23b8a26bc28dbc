// SPDX-License-Identifier: GPL-2.0
/*
 * A module adding keys under memory cgroup pressure. The test module
 * kwq_memcg_test.ko (tools/testing/memcg; loaded here, unloaded at the
 * end) creates two queues with kwq's kernel API: "caller", created with
 * KWQ_CONFIG_CHARGE_CALLER, and "kernel", with the defaults (charged to
 * no cgroup). A write() to /sys/kernel/debug/kwq_memcg_test/<queue> makes
 * the module kwq_add() the written bytes as one key, in the writer's
 * context; a read() takes and finishes the next key.
 *
 * A child in a cgroup2 child with a small memory.max:
 *  - adds distinct 200-byte keys to "kernel", twice memory.max in key
 *    bytes alone: every add succeeds and the cgroup's usage hardly moves;
 *  - adds keys to "caller" until an add fails: ENOMEM, the usage never
 *    above memory.max.
 * Back outside the cgroup, each queue hands out every accepted key
 * exactly once and nothing else, and "caller" takes keys again.
 * Runs as root; skips without the module file or a memory controller.
 */
#include "kwqtest.h"

#include <sys/mount.h>
#include <sys/stat.h>

#define MOD_DEFAULT	"/kwq/kwq_memcg_test.ko"
#define DBG		"/sys/kernel/debug/kwq_memcg_test"
#define CG		"/sys/fs/cgroup"
#define CGM		CG "/kwq-memcg-module"
#define MAX_BYTES	(4L << 20)
#define KEY_LEN		200
/* Keys for the kernel-owned queue: twice memory.max in key bytes. */
#define KERNEL_KEYS	((unsigned int)(2 * MAX_BYTES / KEY_LEN + 1))
#define CALLER_KEYS_MAX	1000000U

static const char *const names[] = {
	"memcg_module_loads",
	"kernel_queue_adds_past_memory_max",
	"kernel_queue_charges_no_cgroup",
	"caller_queue_enomem_at_memory_max",
	"caller_queue_usage_within_max",
	"kernel_queue_every_key_once",
	"caller_queue_every_key_once",
	"caller_queue_usable_after",
	"memcg_module_unloads",
};

#define NR_CASES	((int)(sizeof(names) / sizeof(names[0])))

/* Read a number through an fd opened earlier (no allocation at the limit). */
static long pread_num(int fd)
{
	char buf[64];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return atol(buf);
}

static void skip_from(int first, const char *why)
{
	for (int i = first; i < NR_CASES; i++)
		ktap_skip(names[i], why);
}

/* The 200-byte key "<prefix><i>-xxx...". */
static void make_key(char *key, char prefix, unsigned int i)
{
	int l = sprintf(key, "%c%u-", prefix, i);

	memset(key + l, 'x', KEY_LEN - l);
}

/* Add keys "<prefix><i>" through @fd until @max or a failure (*err). */
static unsigned int fill(int fd, char prefix, unsigned int max, int *err)
{
	static char key[KEY_LEN + 1];
	unsigned int n;

	*err = 0;
	for (n = 0; n < max; n++) {
		make_key(key, prefix, n);
		if (write(fd, key, KEY_LEN) != KEY_LEN) {
			*err = errno;
			break;
		}
	}
	return n;
}

/*
 * The child: joins the cgroup, fills both queues, leaves it again and
 * reports "kernel-accepted errno usage-before usage-after caller-accepted
 * errno".
 */
static void child(int kfd, int cfd, int pipe_w)
{
	unsigned int nk, nc;
	long before, after;
	int root, cur, ek, ec;
	char pid[32];

	/*
	 * Everything it needs is opened and touched before it moves: at
	 * the limit a page fault or an open() would call the OOM killer.
	 */
	root = open(CG "/cgroup.procs", O_WRONLY);
	cur = open(CGM "/memory.current", O_RDONLY);
	if (root < 0 || cur < 0)
		_exit(10);
	fill(-1, 'w', 1, &ek);
	pread_num(cur);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (kt_write_file(CGM "/cgroup.procs", pid) < 0)
		_exit(11);

	before = pread_num(cur);
	nk = fill(kfd, 'k', KERNEL_KEYS, &ek);
	after = pread_num(cur);
	nc = fill(cfd, 'c', CALLER_KEYS_MAX, &ec);

	/* Back to the root cgroup before anything else allocates. */
	if (write(root, pid, strlen(pid)) < 0)
		_exit(12);
	dprintf(pipe_w, "%u %d %ld %ld %u %d\n", nk, ek, before, after, nc, ec);
	_exit(0);
}

/*
 * Take every key of the queue behind @fd: each must be one of
 * "<prefix><i>", i < n, exactly once. Returns how many keys were wrong
 * (unknown, repeated or missing); *got counts the keys taken.
 */
static unsigned int drain(int fd, char prefix, unsigned int n, unsigned int *got)
{
	unsigned char *seen = calloc(n ? n : 1, 1);
	char key[KWQ_KEY_LEN_MAX + 1], want[KEY_LEN + 1];
	unsigned int bad = 0, i;
	ssize_t len;

	*got = 0;
	while ((len = read(fd, key, KWQ_KEY_LEN_MAX)) > 0) {
		key[len] = '\0';
		(*got)++;
		if (len != KEY_LEN || key[0] != prefix) {
			bad++;
			continue;
		}
		i = (unsigned int)strtoul(key + 1, NULL, 10);
		make_key(want, prefix, i);
		if (i >= n || memcmp(key, want, KEY_LEN) || seen[i]++)
			bad++;
	}
	if (len < 0)
		bad++;
	for (i = 0; i < n; i++)
		bad += !seen[i];
	free(seen);
	return bad;
}

static int run(const char *cmd)
{
	int st = system(cmd);

	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void)
{
	const char *mod = getenv("KWQ_MEMCG_MOD");
	char cmd[256], line[128] = "", max[32], key[KWQ_KEY_LEN_MAX];
	unsigned int nk = 0, nc = 0, gotk = 0, gotc = 0, badk, badc;
	long before = -1, after = -1, peak, events;
	int p[2], ek = -1, ec = -1, kfd, cfd, r;
	pid_t pid;
	ssize_t n;

	kt_setup("kwq_memcg_module", NR_CASES, 300);
	if (!mod)
		mod = MOD_DEFAULT;
	if (access(mod, R_OK)) {
		skip_from(0, "no test module");
		return ktap_end();
	}
	mkdir(CG, 0755);
	if (access(CG "/cgroup.controllers", F_OK) &&
	    mount("cgroup2", CG, "cgroup2", 0, NULL) < 0) {
		skip_from(0, "no cgroup2");
		return ktap_end();
	}
	kt_write_file(CG "/cgroup.subtree_control", "+memory");
	rmdir(CGM);
	snprintf(max, sizeof(max), "%ld", MAX_BYTES);
	if (mkdir(CGM, 0755) < 0 || kt_write_file(CGM "/memory.max", max) < 0) {
		rmdir(CGM);
		skip_from(0, "no memory controller");
		return ktap_end();
	}

	snprintf(cmd, sizeof(cmd), "insmod %s", mod);
	r = run(cmd);
	kfd = open(DBG "/kernel", O_RDWR);
	cfd = open(DBG "/caller", O_RDWR);
	if (!ktap_check(!r && kfd >= 0 && cfd >= 0, names[0],
			"insmod %s: exit %d; debugfs files %s", mod, r,
			kfd >= 0 && cfd >= 0 ? "there" : "missing")) {
		skip_from(1, "no test module");
		rmdir(CGM);
		return ktap_end();
	}

	if (pipe(p) < 0)
		exit(1);
	pid = fork();
	if (pid == 0)
		child(kfd, cfd, p[1]);
	close(p[1]);
	n = read(p[0], line, sizeof(line) - 1);
	close(p[0]);
	r = kt_wait(pid);
	if (n <= 0 || sscanf(line, "%u %d %ld %ld %u %d", &nk, &ek, &before,
			     &after, &nc, &ec) != 6)
		printf("    # child exited %d without a report\n", r);
	peak = kt_read_num(CGM "/memory.peak", NULL);
	if (peak < 0)
		peak = kt_read_num(CGM "/memory.current", NULL);
	events = kt_read_num(CGM "/memory.events", "max");
	printf("    # memory.max %ld: kernel queue took %u keys (%s), usage %ld -> %ld; caller queue took %u keys, then %s; peak %ld, max events %ld\n",
	       MAX_BYTES, nk, kt_ename(ek), before, after, nc, kt_ename(ec),
	       peak, events);

	ktap_check(nk == KERNEL_KEYS && !ek, names[1],
		   "accepted %u of %u, then %s", nk, KERNEL_KEYS, kt_ename(ek));
	ktap_check(before >= 0 && after >= 0 && after - before < MAX_BYTES / 2,
		   names[2], "usage %ld -> %ld for %u keys", before, after, nk);
	ktap_check(nc > 0 && ec == ENOMEM, names[3], "accepted %u, then %s",
		   nc, kt_ename(ec));
	ktap_check(peak >= 0 && peak <= MAX_BYTES, names[4],
		   "peak %ld > memory.max %ld", peak, MAX_BYTES);

	badk = drain(kfd, 'k', nk, &gotk);
	ktap_check(!badk && gotk == nk, names[5], "%u wrong, %u taken of %u",
		   badk, gotk, nk);
	badc = drain(cfd, 'c', nc, &gotc);
	ktap_check(!badc && gotc == nc, names[6], "%u wrong, %u taken of %u",
		   badc, gotc, nc);
	ktap_check(write(cfd, "again", 5) == 5 &&
		   read(cfd, key, sizeof(key)) == 5 && !memcmp(key, "again", 5),
		   names[7], "%s", strerror(errno));

	close(kfd);
	close(cfd);
	r = run("rmmod kwq_memcg_test");
	ktap_check(!r && access(DBG, F_OK), names[8], "rmmod exit %d", r);
	rmdir(CGM);
	return ktap_end();
}
