/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by kwq's userspace test programs (static, run in the
 * QEMU VM as root). Every blocking call is bounded: kt_setup() arms an
 * alarm that ends a hung program with a diagnostic, and gets use
 * timeouts.
 */
#ifndef KWQ_KWQTEST_H
#define KWQ_KWQTEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ktap.h"
#include "libkwq.h"

#define KT_SEC	1000000000LL
#define KT_MS	1000000LL

static void kt_alarm(int sig)
{
	static const char msg[] = "    # TIMEOUT: a call hung; killed by alarm()\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(3);
}

/* Start the suite; the whole program must end within @timeout_s. */
static inline void kt_setup(const char *suite, int planned,
			    unsigned int timeout_s)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	ktap_suite(suite, planned);
	signal(SIGALRM, kt_alarm);
	alarm(timeout_s);
}

static inline const char *kt_ename(int e)
{
	const char *n;

	if (!e)
		return "0";
	n = strerrorname_np(e);
	return n ? n : "E?";
}

static inline int64_t kt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * KT_SEC + ts.tv_nsec;
}

static inline void kt_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* A call expected to fail with errno @E. */
#define KT_ERR(call, E, name) do {					\
	long _r;							\
	int _e;								\
	errno = 0;							\
	_r = (long)(call);						\
	_e = errno;							\
	ktap_check(_r == -1 && _e == (E), name,				\
		   "%s: ret %ld errno %s, want %s", #call, _r,		\
		   kt_ename(_e), #E);					\
} while (0)

/* A call expected to succeed (>= 0). */
#define KT_OK(call, name) do {						\
	long _r;							\
	int _e;								\
	errno = 0;							\
	_r = (long)(call);						\
	_e = errno;							\
	ktap_check(_r >= 0, name, "%s: ret %ld errno %s", #call, _r,	\
		   kt_ename(_e));					\
} while (0)

static inline int kt_dev(void)
{
	int fd = kwq_open_dev(NULL);

	if (fd < 0) {
		printf("    # open /dev/kwq: %s\n", strerror(errno));
		exit(1);
	}
	return fd;
}

/* A unique queue name for this program. */
static inline void kt_name(char *buf, const char *base)
{
	static int seq;

	snprintf(buf, KWQ_NAME_LEN, "%s-%d-%d", base, (int)getpid(), ++seq);
}

/* Create a uniquely named queue; the attached fd (exits on failure). */
static inline int kt_queue(const char *base, const struct kwq_queue_opts *o,
			   char *name)
{
	char tmp[KWQ_NAME_LEN];
	int fd = kt_dev();

	if (!name)
		name = tmp;
	kt_name(name, base);
	if (kwq_create(fd, name, o) < 0) {
		printf("    # create %s: %s\n", name, strerror(errno));
		exit(1);
	}
	return fd;
}

/*
 * A uniquely named queue with a dead set (@max_retries, @max_dead) and
 * a 1 us rate limiter (requeued keys due at once); the attached fd.
 */
static inline int kt_dead_queue(const char *base, unsigned int max_retries,
				unsigned int max_dead)
{
	struct kwq_queue_opts o;

	memset(&o, 0, sizeof(o));
	o.nr_limits = 1;
	o.limits[0].type = KWQ_LIMIT_EXPONENTIAL;
	o.limits[0].a = 1000;
	o.limits[0].b = 1000;
	o.max_retries = max_retries;
	o.max_dead = max_dead;
	return kt_queue(base, &o, NULL);
}

/* A new fd attached to @name (exits on failure). */
static inline int kt_attach(const char *name)
{
	int fd = kt_dev();

	if (kwq_open(fd, name) < 0) {
		printf("    # open %s: %s\n", name, strerror(errno));
		exit(1);
	}
	return fd;
}

static inline int kt_add(int fd, const char *key)
{
	return kwq_add(fd, key, strlen(key));
}

static inline int kt_done(int fd, const char *key)
{
	return kwq_done(fd, key, strlen(key));
}

static inline long kt_len(int fd)
{
	uint64_t len;

	if (kwq_len(fd, &len) < 0)
		return -1;
	return (long)len;
}

/*
 * Take keys one at a time (each waiting up to @timeout_ns) until none is
 * ready or @max were taken, and join them with ',' into @out: "a,b,c".
 * Returns the number taken; on an error other than EAGAIN / ETIMEDOUT
 * appends "!ERRNAME".
 */
static inline int kt_take(int fd, unsigned int flags, int64_t timeout_ns,
			  int max, char *out, size_t size)
{
	char key[KWQ_KEY_LEN_MAX + 1];
	size_t used = 0;
	long n;
	int got = 0;

	out[0] = '\0';
	while (got < max) {
		n = kwq_get(fd, key, sizeof(key), flags, timeout_ns);
		if (n < 0) {
			if (errno != EAGAIN && errno != ETIMEDOUT)
				snprintf(out + used, size - used, "%s!%s",
					 got ? "," : "", kt_ename(errno));
			break;
		}
		if (used + (size_t)n + 2 < size) {
			if (got)
				out[used++] = ',';
			memcpy(out + used, key, (size_t)n);
			used += (size_t)n;
			out[used] = '\0';
		}
		got++;
	}
	return got;
}

/*
 * Rings (Documentation/rings.rst), by hand: what the crash and fail-nth
 * tests need to publish records and map a ring without libkwq's ring API.
 */
struct kt_ring {
	struct kwq_ring_setup_args a;	/* as set up */
	unsigned char *u, *k, *st;	/* the user, kernel, status regions */
	uint32_t tail;			/* what the process wrote */
};

/* Map @fd's ring regions (set up as @r->a): 0, or -1 with errno. */
static inline int kt_ring_map(int fd, struct kt_ring *r)
{
	void *u, *k, *st;

	u = mmap(NULL, r->a.user_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 KWQ_RING_OFF_USER);
	if (u == MAP_FAILED)
		return -1;
	k = mmap(NULL, r->a.kernel_size, PROT_READ, MAP_SHARED, fd,
		 KWQ_RING_OFF_KERNEL);
	if (k == MAP_FAILED)
		goto out_u;
	st = mmap(NULL, r->a.status_size, PROT_READ, MAP_SHARED, fd,
		  KWQ_RING_OFF_STATUS);
	if (st == MAP_FAILED)
		goto out_k;
	r->u = u;
	r->k = k;
	r->st = st;
	return 0;
out_k:
	munmap(k, r->a.kernel_size);
out_u:
	munmap(u, r->a.user_size);
	return -1;
}

static inline void kt_ring_unmap(struct kt_ring *r)
{
	if (r->u)
		munmap(r->u, r->a.user_size);
	if (r->k)
		munmap(r->k, r->a.kernel_size);
	if (r->st)
		munmap(r->st, r->a.status_size);
	r->u = NULL;
	r->k = NULL;
	r->st = NULL;
}

static inline uint32_t kt_ring_ld(const unsigned char *region, uint32_t off)
{
	return __atomic_load_n((const uint32_t *)(region + off),
			       __ATOMIC_ACQUIRE);
}

/*
 * Write a record (@op, @flags, the key @key of @len bytes, else 0) at
 * the tail, slot by slot (it may wrap), unpublished. Returns its ring
 * index, or -1 if the ring has no room for it.
 */
static inline long kt_ring_put(struct kt_ring *r, uint8_t op, uint8_t flags,
			       const void *key, uint32_t len)
{
	unsigned char rec[KWQ_SQE_SLOTS_MAX * KWQ_SQE_SIZE] = { 0 };
	struct kwq_sqe s = { .op = op, .flags = flags, .len = len };
	uint32_t head = kt_ring_ld(r->k, r->a.sq_head_off), j, at = r->tail;

	s.nslots = (uint16_t)KWQ_SQE_SLOTS(len);
	if (r->tail - head + s.nslots > r->a.sq_entries)
		return -1;
	memcpy(rec, &s, sizeof(s));
	memcpy(rec + offsetof(struct kwq_sqe, key), key,
	       len < KWQ_SQE_INLINE ? len : KWQ_SQE_INLINE);
	if (len > KWQ_SQE_INLINE)
		memcpy(rec + KWQ_SQE_SIZE, (const char *)key + KWQ_SQE_INLINE,
		       len - KWQ_SQE_INLINE);
	for (j = 0; j < s.nslots; j++)
		memcpy(r->u + r->a.sqes_off +
		       ((r->tail + j) & (r->a.sq_entries - 1)) * KWQ_SQE_SIZE,
		       rec + j * KWQ_SQE_SIZE, KWQ_SQE_SIZE);
	r->tail += s.nslots;
	return at;
}

/* Publish what was written: sq_tail (release). */
static inline void kt_ring_publish(struct kt_ring *r)
{
	__atomic_store_n((uint32_t *)(r->u + r->a.sq_tail_off), r->tail,
			 __ATOMIC_RELEASE);
}

/* KWQ_IOC_RING_ENTER: @flags; a get of @max keys waiting @timeout_ns. */
static inline int kt_ring_enter(int fd, uint32_t flags, uint32_t max,
				int64_t timeout_ns, uint32_t *leased)
{
	struct kwq_ring_enter_args e = { .flags = flags };
	int ret;

	if (flags & KWQ_ENTER_GET) {
		e.get_max = max;
		e.get_min = max;
		e.timeout_ns = timeout_ns;
	}
	ret = ioctl(fd, KWQ_IOC_RING_ENTER, &e);
	if (leased)
		*leased = e.leased;
	return ret;
}

/* Wait for child @pid: its exit status, or 128 + signal. */
static inline int kt_wait(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

/*
 * Arm fail-nth for the calling thread, through its
 * /proc/thread-self/fail-nth opened as @fd: its @n-th fault-injection
 * point from now on fails (0 disarms). 0, or -1 with errno set.
 */
static inline int kt_fail_nth(int fd, unsigned int n)
{
	char b[16];
	int l = snprintf(b, sizeof(b), "%u", n);

	return pwrite(fd, b, (size_t)l, 0) == l ? 0 : -1;
}

/* Write @s to the file @path: 0, or -1 with errno set. */
static inline int kt_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok, e;

	if (fd < 0)
		return -1;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	e = errno;
	close(fd);
	errno = e;
	return ok ? 0 : -1;
}

/*
 * The inode number of the caller's IPC namespace (its queues' debugfs
 * directory is ipc:<inum>), 0 if unknown.
 */
static inline unsigned long kt_ipc_inum(void)
{
	char link[64];
	ssize_t n = readlink("/proc/self/ns/ipc", link, sizeof(link) - 1);
	unsigned long inum = 0;

	if (n > 0) {
		link[n] = '\0';
		sscanf(link, "ipc:[%lu]", &inum);
	}
	return inum;
}

/*
 * The number in the file @path, or with @field the number after the
 * first "@field " in it (cgroup key-value files); -1 if none.
 */
static inline long kt_read_num(const char *path, const char *field)
{
	char buf[16384], *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (!field)
		return atol(buf);
	p = strstr(buf, field);
	return p ? atol(p + strlen(field) + 1) : -1;
}

#endif /* KWQ_KWQTEST_H */
