// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libkwq: thin errno-based wrappers around the /dev/kwq ioctls, record
 * buffer packing, and the duration / limiter SPEC syntax shared with
 * kwqctl. See libkwq.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libkwq.h"
#include "kwq/keys.h"
#include "kwq/metrics.h"

#define KWQ_PUBLIC __attribute__((visibility("default")))

static inline uint64_t kwq_ptr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* Copy a queue name into a fixed slot; EINVAL if empty or too long. */
static int kwq_copy_name(char dst[KWQ_NAME_LEN], const char *name)
{
	size_t len;

	if (!name) {
		errno = EINVAL;
		return -1;
	}
	len = strnlen(name, KWQ_NAME_LEN);
	if (len == 0 || len >= KWQ_NAME_LEN) {
		errno = EINVAL;
		return -1;
	}
	memset(dst, 0, KWQ_NAME_LEN);
	memcpy(dst, name, len);
	return 0;
}

KWQ_PUBLIC int kwq_open_dev(const char *dev)
{
	return open(dev ? dev : KWQ_DEFAULT_DEVICE, O_RDWR | O_CLOEXEC);
}

KWQ_PUBLIC int kwq_create(int fd, const char *name,
			  const struct kwq_queue_opts *opts)
{
	return kwq_create_flags(fd, name, opts, 0);
}

KWQ_PUBLIC int kwq_create_flags(int fd, const char *name,
				const struct kwq_queue_opts *opts,
				unsigned int flags)
{
	struct kwq_create_args a;

	memset(&a, 0, sizeof(a));
	if (kwq_copy_name(a.name, name))
		return -1;
	a.flags = flags;
	if (opts) {
		if (opts->nr_limits > KWQ_LIMITS_MAX) {
			errno = EINVAL;
			return -1;
		}
		a.mode = opts->mode;
		a.max_items = opts->max_items;
		a.max_wait_ns = opts->max_wait_ns;
		a.nr_limits = opts->nr_limits;
		memcpy(a.limits, opts->limits,
		       opts->nr_limits * sizeof(a.limits[0]));
		a.processing_timeout_ns = opts->processing_timeout_ns;
		a.max_retries = opts->max_retries;
		a.max_dead = opts->max_dead;
	}
	return ioctl(fd, KWQ_IOC_CREATE, &a) < 0 ? -1 : 0;
}

/*
 * A create that finds the name taken opens the queue; an open that finds
 * it gone again (destroyed in between) creates it again: a few rounds,
 * then the last error.
 */
#define KWQ_CREATE_OPEN_TRIES	4

KWQ_PUBLIC int kwq_create_or_open(int fd, const char *name,
				  const struct kwq_queue_opts *opts,
				  unsigned int flags)
{
	int i;

	for (i = 0; i < KWQ_CREATE_OPEN_TRIES; i++) {
		if (!kwq_create_flags(fd, name, opts, flags))
			return 1;
		if (errno != EEXIST)
			return -1;
		if (!kwq_open(fd, name))
			return 0;
		if (errno != ENOENT)
			return -1;
	}
	return -1;
}

KWQ_PUBLIC int kwq_queue_info(int fd, struct kwq_queue_opts *opts,
			      unsigned int *flags)
{
	struct kwq_create_args a;

	if (ioctl(fd, KWQ_IOC_INFO, &a) < 0)
		return -1;
	if (flags)
		*flags = a.flags;
	if (opts) {
		memset(opts, 0, sizeof(*opts));
		opts->mode = a.mode;
		opts->max_items = a.max_items;
		opts->max_wait_ns = a.max_wait_ns;
		opts->nr_limits = a.nr_limits;
		memcpy(opts->limits, a.limits, sizeof(opts->limits));
		opts->processing_timeout_ns = a.processing_timeout_ns;
		opts->max_retries = a.max_retries;
		opts->max_dead = a.max_dead;
	}
	return 0;
}

static int kwq_name_ioctl(int fd, unsigned long cmd, const char *name)
{
	struct kwq_open_args a;

	memset(&a, 0, sizeof(a));
	if (kwq_copy_name(a.name, name))
		return -1;
	return ioctl(fd, cmd, &a) < 0 ? -1 : 0;
}

KWQ_PUBLIC int kwq_open(int fd, const char *name)
{
	return kwq_name_ioctl(fd, KWQ_IOC_OPEN, name);
}

KWQ_PUBLIC int kwq_destroy(int fd, const char *name)
{
	return kwq_name_ioctl(fd, KWQ_IOC_DESTROY, name);
}

KWQ_PUBLIC int kwq_list(int fd, char (*names)[KWQ_NAME_LEN],
			unsigned int capacity)
{
	struct kwq_list_args a;

	memset(&a, 0, sizeof(a));
	a.names = kwq_ptr(names);
	a.capacity = capacity;
	if (ioctl(fd, KWQ_IOC_LIST, &a) < 0)
		return -1;
	if (a.count > INT_MAX) {
		errno = EOVERFLOW;
		return -1;
	}
	return (int)a.count;
}

KWQ_PUBLIC int kwq_shutdown(int fd, unsigned int flags)
{
	struct kwq_shutdown_args a;

	memset(&a, 0, sizeof(a));
	a.flags = flags;
	return ioctl(fd, KWQ_IOC_SHUTDOWN, &a) < 0 ? -1 : 0;
}

KWQ_PUBLIC int kwq_len(int fd, uint64_t *len)
{
	__u64 v = 0;

	if (ioctl(fd, KWQ_IOC_LEN, &v) < 0)
		return -1;
	if (len)
		*len = v;
	return 0;
}

KWQ_PUBLIC int kwq_stats(int fd, struct kwq_stats_args *stats)
{
	memset(stats, 0, sizeof(*stats));
	return ioctl(fd, KWQ_IOC_STATS, stats) < 0 ? -1 : 0;
}

KWQ_PUBLIC int kwq_stats_prometheus(FILE *f, const char *queue,
				    const struct kwq_stats_args *stats)
{
	kwq_metrics_render(kwq_metrics_stdio, f, queue, stats);
	return ferror(f) ? -1 : 0;
}

/* --- records ---------------------------------------------------------- */

KWQ_PUBLIC long kwq_rec_pack(void *buf, size_t cap, const void *key,
			     size_t len, int priority)
{
	struct kwq_rec hdr;
	size_t size;

	if (len == 0 || len > KWQ_KEY_LEN_MAX || (!key && len)) {
		errno = EINVAL;
		return -1;
	}
	size = KWQ_REC_SIZE(len);
	if (!buf || cap < size) {
		errno = ENOSPC;
		return -1;
	}
	hdr.len = (__u32)len;
	hdr.priority = priority;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy((char *)buf + sizeof(hdr), key, len);
	memset((char *)buf + sizeof(hdr) + len, 0, size - sizeof(hdr) - len);
	return (long)size;
}

KWQ_PUBLIC int kwq_rec_next(const void *buf, size_t used, size_t *off,
			    const void **key, size_t *len, int *priority)
{
	struct kwq_rec hdr;
	size_t size;

	if (*off == used)
		return 0;
	if (*off > used || used - *off < sizeof(hdr)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&hdr, (const char *)buf + *off, sizeof(hdr));
	if (hdr.len == 0 || hdr.len > KWQ_KEY_LEN_MAX) {
		errno = EINVAL;
		return -1;
	}
	size = KWQ_REC_SIZE(hdr.len);
	if (used - *off < size) {
		errno = EINVAL;
		return -1;
	}
	if (key)
		*key = (const char *)buf + *off + sizeof(hdr);
	if (len)
		*len = hdr.len;
	if (priority)
		*priority = hdr.priority;
	*off += size;
	return 1;
}

KWQ_PUBLIC int kwq_recbuf_push(struct kwq_recbuf *rb, const void *key,
			       size_t len, int priority)
{
	size_t need;
	long n;

	if (len == 0 || len > KWQ_KEY_LEN_MAX || !key) {
		errno = EINVAL;
		return -1;
	}
	need = rb->len + KWQ_REC_SIZE(len);
	if (need > UINT32_MAX || rb->nr == UINT32_MAX) {
		errno = E2BIG;
		return -1;
	}
	if (need > rb->cap) {
		size_t cap = rb->cap ? rb->cap : 512;
		void *p;

		while (cap < need)
			cap *= 2;
		p = realloc(rb->buf, cap);
		if (!p)
			return -1;
		rb->buf = p;
		rb->cap = cap;
	}
	n = kwq_rec_pack((char *)rb->buf + rb->len, rb->cap - rb->len, key,
			 len, priority);
	if (n < 0)
		return -1;
	rb->len += (size_t)n;
	rb->nr++;
	return 0;
}

KWQ_PUBLIC int kwq_recbuf_push_str(struct kwq_recbuf *rb, const char *key,
				   int priority)
{
	return kwq_recbuf_push(rb, key, key ? strlen(key) : 0, priority);
}

KWQ_PUBLIC void kwq_recbuf_reset(struct kwq_recbuf *rb)
{
	rb->len = 0;
	rb->nr = 0;
}

KWQ_PUBLIC void kwq_recbuf_free(struct kwq_recbuf *rb)
{
	free(rb->buf);
	rb->buf = NULL;
	rb->len = rb->cap = 0;
	rb->nr = 0;
}

/* --- batch calls ------------------------------------------------------ */

static int kwq_keys_ioctl(int fd, unsigned long cmd,
			  const struct kwq_recbuf *rb, unsigned int flags,
			  int64_t after_ns, uint64_t *delays,
			  unsigned int *done)
{
	struct kwq_keys_args a;
	int ret;

	if (done)
		*done = 0;
	memset(&a, 0, sizeof(a));
	a.recs = kwq_ptr(rb->buf);
	a.recs_len = (__u32)rb->len;
	a.nr = rb->nr;
	a.flags = flags;
	a.after_ns = after_ns;
	a.delays = kwq_ptr(delays);
	ret = ioctl(fd, cmd, &a);
	if (done)
		*done = a.done;
	return ret < 0 ? -1 : 0;
}

KWQ_PUBLIC int kwq_add_batch(int fd, const struct kwq_recbuf *rb,
			     const struct kwq_batch_opts *opts,
			     unsigned int *done)
{
	if (!opts)
		return kwq_keys_ioctl(fd, KWQ_IOC_ADD, rb, 0, 0, NULL, done);
	return kwq_keys_ioctl(fd, KWQ_IOC_ADD, rb, opts->flags,
			      (opts->flags & KWQ_ADD_AFTER) ? opts->after_ns : 0,
			      (opts->flags & KWQ_ADD_RATE_LIMITED) ?
			      opts->delays : NULL, done);
}

KWQ_PUBLIC int kwq_done_batch(int fd, const struct kwq_recbuf *rb,
			      unsigned int *done)
{
	return kwq_keys_ioctl(fd, KWQ_IOC_DONE, rb, 0, 0, NULL, done);
}

KWQ_PUBLIC int kwq_forget_batch(int fd, const struct kwq_recbuf *rb,
				unsigned int *done)
{
	return kwq_keys_ioctl(fd, KWQ_IOC_FORGET, rb, 0, 0, NULL, done);
}

KWQ_PUBLIC int kwq_remove_batch(int fd, const struct kwq_recbuf *rb,
				unsigned int *done)
{
	return kwq_keys_ioctl(fd, KWQ_IOC_REMOVE, rb, 0, 0, NULL, done);
}

KWQ_PUBLIC int kwq_get_batch(int fd, void *buf, size_t cap, unsigned int max,
			     unsigned int flags, int64_t timeout_ns,
			     size_t *used)
{
	return kwq_get_batch_deadline(fd, buf, cap, max, flags, timeout_ns, 0,
				      used);
}

KWQ_PUBLIC int kwq_get_batch_deadline(int fd, void *buf, size_t cap,
				      unsigned int max, unsigned int flags,
				      int64_t timeout_ns,
				      uint64_t processing_ns, size_t *used)
{
	struct kwq_get_args a;

	if (used)
		*used = 0;
	memset(&a, 0, sizeof(a));
	a.recs = kwq_ptr(buf);
	a.recs_len = cap > UINT32_MAX ? UINT32_MAX : (__u32)cap;
	a.max = max;
	a.flags = flags;
	a.timeout_ns = timeout_ns;
	a.processing_timeout_ns = processing_ns;
	if (ioctl(fd, KWQ_IOC_GET, &a) < 0)
		return -1;
	if (used)
		*used = a.used;
	return (int)a.nr;
}

KWQ_PUBLIC int kwq_done_get(int fd, const struct kwq_recbuf *done_rb,
			    unsigned int *done, void *buf, size_t cap,
			    unsigned int max, unsigned int min_nr,
			    unsigned int flags, int64_t timeout_ns,
			    size_t *used)
{
	struct kwq_done_get_args a;
	int ret;

	if (used)
		*used = 0;
	if (done)
		*done = 0;
	memset(&a, 0, sizeof(a));
	if (done_rb && done_rb->nr) {
		if (done_rb->len > UINT32_MAX) {
			errno = EINVAL;
			return -1;
		}
		a.done_recs = kwq_ptr(done_rb->buf);
		a.done_len = (__u32)done_rb->len;
		a.done_nr = done_rb->nr;
	}
	a.get.recs = kwq_ptr(buf);
	a.get.recs_len = cap > UINT32_MAX ? UINT32_MAX : (__u32)cap;
	a.get.max = max;
	a.get.min_nr = min_nr;
	a.get.flags = flags;
	a.get.timeout_ns = timeout_ns;
	ret = ioctl(fd, KWQ_IOC_DONE_GET, &a);
	if (done)
		*done = a.done;
	if (ret < 0)
		return -1;
	if (used)
		*used = a.get.used;
	return (int)a.get.nr;
}

/* --- one key ---------------------------------------------------------- */

/* A record buffer holding one key, on the stack. */
struct kwq_one {
	union {
		struct kwq_rec hdr;
		unsigned char bytes[KWQ_REC_SIZE_MAX];
	};
};

static int kwq_one_ioctl(int fd, unsigned long cmd, const void *key,
			 size_t len, int priority, unsigned int flags,
			 int64_t after_ns, uint64_t *delay)
{
	struct kwq_one one;
	struct kwq_recbuf rb;
	long n;

	n = kwq_rec_pack(one.bytes, sizeof(one.bytes), key, len, priority);
	if (n < 0)
		return -1;
	rb.buf = one.bytes;
	rb.len = (size_t)n;
	rb.cap = sizeof(one.bytes);
	rb.nr = 1;
	return kwq_keys_ioctl(fd, cmd, &rb, flags, after_ns, delay, NULL);
}

KWQ_PUBLIC int kwq_add(int fd, const void *key, size_t len)
{
	return kwq_one_ioctl(fd, KWQ_IOC_ADD, key, len, 0, 0, 0, NULL);
}

KWQ_PUBLIC int kwq_add_after(int fd, const void *key, size_t len,
			     int64_t after_ns)
{
	return kwq_one_ioctl(fd, KWQ_IOC_ADD, key, len, 0, KWQ_ADD_AFTER,
			     after_ns, NULL);
}

KWQ_PUBLIC int kwq_add_priority(int fd, const void *key, size_t len,
				int priority)
{
	return kwq_one_ioctl(fd, KWQ_IOC_ADD, key, len, priority, 0, 0, NULL);
}

KWQ_PUBLIC int kwq_add_rate_limited(int fd, const void *key, size_t len,
				    uint64_t *delay_ns)
{
	uint64_t d = 0;
	int ret;

	ret = kwq_one_ioctl(fd, KWQ_IOC_ADD, key, len, 0,
			    KWQ_ADD_RATE_LIMITED, 0, &d);
	if (ret == 0 && delay_ns)
		*delay_ns = d;
	return ret;
}

/*
 * Whether @key (@cap bytes) is a buffer kwq_get() takes: room for any
 * key of version 1 (KWQ_KEY_LEN_MAX_VER1 bytes) at least, as callers
 * built before the longer keys pass; EINVAL if not.
 */
static int key_buf_ok(const void *key, size_t cap)
{
	if (!key || cap < KWQ_KEY_LEN_MAX_VER1) {
		errno = EINVAL;
		return 0;
	}
	return 1;
}

/*
 * The record buffer a one-key get of @cap key bytes offers the kernel: a
 * key longer than @cap is not taken (EMSGSIZE, the key stays queued).
 */
static size_t one_recs_len(size_t cap)
{
	return KWQ_REC_SIZE(cap < KWQ_KEY_LEN_MAX ? cap : KWQ_KEY_LEN_MAX);
}

/*
 * The key of a GET or DONE_GET of one key that returned @n with @used
 * bytes in @one: copied to @key, its length; or -1.
 */
static long one_key(long n, const struct kwq_one *one, size_t used, void *key)
{
	size_t off = 0, len;
	const void *k;

	if (n < 0)
		return -1;
	if (n != 1 || kwq_rec_next(one->bytes, used, &off, &k, &len, NULL) != 1) {
		errno = EPROTO;
		return -1;
	}
	memcpy(key, k, len);
	return (long)len;
}

KWQ_PUBLIC long kwq_get(int fd, void *key, size_t cap, unsigned int flags,
			int64_t timeout_ns)
{
	struct kwq_one one;
	size_t used;
	int n;

	if (!key_buf_ok(key, cap))
		return -1;
	n = kwq_get_batch(fd, one.bytes, one_recs_len(cap), 1, flags,
			  timeout_ns, &used);
	return one_key(n, &one, used, key);
}

KWQ_PUBLIC long kwq_done_get_one(int fd, const void *done_key,
				  size_t done_len, int *done, void *key,
				  size_t cap, unsigned int flags,
				  int64_t timeout_ns)
{
	struct kwq_one in, out;
	struct kwq_recbuf rb = { in.bytes, 0, sizeof(in.bytes), 0 };
	unsigned int finished;
	size_t used;
	long n;

	if (done)
		*done = 0;
	if (!key_buf_ok(key, cap))
		return -1;
	if (done_key) {
		n = kwq_rec_pack(in.bytes, sizeof(in.bytes), done_key,
				 done_len, 0);
		if (n < 0)
			return -1;
		rb.len = (size_t)n;
		rb.nr = 1;
	}
	n = kwq_done_get(fd, &rb, &finished, out.bytes, one_recs_len(cap), 1,
			 0, flags, timeout_ns, &used);
	if (done)
		*done = finished == 1;
	return one_key(n, &out, used, key);
}

KWQ_PUBLIC int kwq_done(int fd, const void *key, size_t len)
{
	return kwq_one_ioctl(fd, KWQ_IOC_DONE, key, len, 0, 0, 0, NULL);
}

KWQ_PUBLIC int kwq_forget(int fd, const void *key, size_t len)
{
	return kwq_one_ioctl(fd, KWQ_IOC_FORGET, key, len, 0, 0, 0, NULL);
}

KWQ_PUBLIC int kwq_remove(int fd, const void *key, size_t len)
{
	return kwq_one_ioctl(fd, KWQ_IOC_REMOVE, key, len, 0, 0, 0, NULL);
}

KWQ_PUBLIC int kwq_touch(int fd, const void *key, size_t len,
			 uint64_t processing_ns)
{
	struct kwq_touch_args a;

	memset(&a, 0, sizeof(a));
	a.key = kwq_ptr(key);
	a.len = len > UINT32_MAX ? UINT32_MAX : (__u32)len;
	a.processing_timeout_ns = processing_ns;
	return ioctl(fd, KWQ_IOC_TOUCH, &a) < 0 ? -1 : 0;
}

KWQ_PUBLIC long kwq_num_requeues(int fd, const void *key, size_t len)
{
	struct kwq_key_args a;

	memset(&a, 0, sizeof(a));
	a.key = kwq_ptr(key);
	a.len = len > UINT32_MAX ? UINT32_MAX : (__u32)len;
	if (ioctl(fd, KWQ_IOC_NUM_REQUEUES, &a) < 0)
		return -1;
	return (long)a.count;
}

/* --- the dead set ------------------------------------------------------ */

/* KWQ_IOC_REVIVE or KWQ_IOC_PURGE of @key, or of all if @key is NULL. */
static long kwq_dead_ioctl(int fd, unsigned long cmd, const void *key,
			   size_t len)
{
	struct kwq_dead_args a;

	memset(&a, 0, sizeof(a));
	if (key) {
		a.key = kwq_ptr(key);
		a.len = len > UINT32_MAX ? UINT32_MAX : (__u32)len;
	} else {
		a.flags = KWQ_DEAD_ALL;
	}
	if (ioctl(fd, cmd, &a) < 0)
		return -1;
	return (long)a.count;
}

KWQ_PUBLIC int kwq_revive(int fd, const void *key, size_t len)
{
	return key ? (kwq_dead_ioctl(fd, KWQ_IOC_REVIVE, key, len) < 0 ? -1 : 0)
		   : (errno = EINVAL, -1);
}

KWQ_PUBLIC long kwq_revive_all(int fd)
{
	return kwq_dead_ioctl(fd, KWQ_IOC_REVIVE, NULL, 0);
}

KWQ_PUBLIC int kwq_purge(int fd, const void *key, size_t len)
{
	return key ? (kwq_dead_ioctl(fd, KWQ_IOC_PURGE, key, len) < 0 ? -1 : 0)
		   : (errno = EINVAL, -1);
}

KWQ_PUBLIC long kwq_purge_all(int fd)
{
	return kwq_dead_ioctl(fd, KWQ_IOC_PURGE, NULL, 0);
}

/* --- introspection ------------------------------------------------------ */

KWQ_PUBLIC const char *kwq_state_name(unsigned int state)
{
	return kwq_key_state_name(state);
}

KWQ_PUBLIC unsigned int kwq_state_parse(const char *name)
{
	const char *s;
	unsigned int i;

	for (i = 1; (s = kwq_key_state_name(i)); i++)
		if (strcmp(name, s) == 0)
			return i;
	return 0;
}

KWQ_PUBLIC int kwq_inspect(int fd, const void *key, size_t len,
			   struct kwq_info_rec *info)
{
	uint64_t buf[KWQ_INFO_REC_SIZE_MAX / 8];
	struct kwq_inspect_args a;

	memset(&a, 0, sizeof(a));
	a.key = kwq_ptr(key);
	a.len = len > UINT32_MAX ? UINT32_MAX : (__u32)len;
	a.recs = kwq_ptr(buf);
	a.recs_len = sizeof(buf);
	if (ioctl(fd, KWQ_IOC_INSPECT, &a) < 0)
		return -1;
	if (a.nr != 1 || a.used < sizeof(*info)) {
		errno = EPROTO;
		return -1;
	}
	memcpy(info, buf, sizeof(*info));
	return 0;
}

KWQ_PUBLIC long kwq_inspect_list(int fd, unsigned int states,
				 uint64_t *cursor, void *buf, size_t cap,
				 unsigned int max, size_t *used)
{
	struct kwq_inspect_args a;

	memset(&a, 0, sizeof(a));
	a.states = states;
	a.cursor = *cursor;
	a.recs = kwq_ptr(buf);
	a.recs_len = cap > UINT32_MAX ? UINT32_MAX : (__u32)cap;
	a.max = max;
	if (ioctl(fd, KWQ_IOC_INSPECT, &a) < 0)
		return -1;
	*cursor = a.cursor;
	if (used)
		*used = a.used;
	return (long)a.nr;
}

KWQ_PUBLIC int kwq_info_next(const void *buf, size_t used, size_t *off,
			     const struct kwq_info_rec **rec, const void **key)
{
	const struct kwq_info_rec *r;

	if (*off == used)
		return 0;
	if (*off > used || used - *off < sizeof(*r)) {
		errno = EINVAL;
		return -1;
	}
	r = (const void *)((const char *)buf + *off);
	if (r->len == 0 || r->len > KWQ_KEY_LEN_MAX ||
	    used - *off < KWQ_INFO_REC_SIZE(r->len)) {
		errno = EINVAL;
		return -1;
	}
	*rec = r;
	if (key)
		*key = r + 1;
	*off += KWQ_INFO_REC_SIZE(r->len);
	return 1;
}

/* --- durations and limiter specs ------------------------------------- */

static const struct {
	const char *name;
	uint64_t ns;
} kwq_units[] = {	/* largest first, for formatting (which stops at h) */
	{ "d", 86400000000000ULL },
	{ "h", 3600000000000ULL },
	{ "m", 60000000000ULL },
	{ "s", 1000000000ULL },
	{ "ms", 1000000ULL },
	{ "us", 1000ULL },
	{ "ns", 1ULL },
};

KWQ_PUBLIC int kwq_parse_duration(const char *s, uint64_t *ns)
{
	uint64_t v = 0, mult = 0;
	const char *p = s;
	size_t i;

	if (!s || *s < '0' || *s > '9') {
		errno = EINVAL;
		return -1;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10) {
			errno = ERANGE;
			return -1;
		}
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '\0') {
		if (v != 0) {	/* only a bare 0 needs no unit */
			errno = EINVAL;
			return -1;
		}
		*ns = 0;
		return 0;
	}
	for (i = 0; i < sizeof(kwq_units) / sizeof(kwq_units[0]); i++) {
		if (strcmp(p, kwq_units[i].name) == 0) {
			mult = kwq_units[i].ns;
			break;
		}
	}
	if (!mult) {
		errno = EINVAL;
		return -1;
	}
	if (v > (uint64_t)INT64_MAX / mult) {
		errno = ERANGE;
		return -1;
	}
	*ns = v * mult;
	return 0;
}

KWQ_PUBLIC int kwq_format_duration(char *buf, size_t size, uint64_t ns)
{
	size_t i;

	if (ns == 0)
		return snprintf(buf, size, "0");
	/* From h down: "48h", as durations were always printed, not "2d". */
	for (i = 1; i < sizeof(kwq_units) / sizeof(kwq_units[0]); i++)
		if (ns % kwq_units[i].ns == 0)
			break;
	return snprintf(buf, size, "%" PRIu64 "%s", ns / kwq_units[i].ns,
			kwq_units[i].name);
}

/* Split @s at ':' into at most @max fields (modifies @s). */
static int kwq_split(char *s, char **f, int max)
{
	int n = 0;

	for (;;) {
		char *c = strchr(s, ':');

		if (n == max)
			return -1;
		f[n++] = s;
		if (!c)
			return n;
		*c = '\0';
		s = c + 1;
	}
}

/* Parse an unsigned decimal integer without sign or junk, <= max. */
static int kwq_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (max - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

/* Parse a positive decimal with up to 3 fractional digits, in 1/1000. */
static int kwq_parse_milli(const char *s, uint64_t *out)
{
	uint64_t ip = 0, frac = 0;
	const char *dot = strchr(s, '.');
	char ibuf[24];
	size_t ilen, flen, i;

	ilen = dot ? (size_t)(dot - s) : strlen(s);
	if (ilen >= sizeof(ibuf))
		return -1;
	memcpy(ibuf, s, ilen);
	ibuf[ilen] = '\0';
	if (!ilen || kwq_parse_uint(ibuf, UINT64_MAX / 1000 - 1, &ip))
		return -1;
	if (dot) {
		const char *f = dot + 1;

		flen = strlen(f);
		if (flen == 0)
			return -1;
		for (i = 0; i < flen; i++) {
			if (f[i] < '0' || f[i] > '9')
				return -1;
			if (i < 3)
				frac = frac * 10 + (uint64_t)(f[i] - '0');
			else if (f[i] != '0')
				return -1;	/* finer than 1/1000 */
		}
		for (i = flen; i < 3; i++)
			frac *= 10;
	}
	*out = ip * 1000 + frac;
	return 0;
}

static int kwq_push_limit(struct kwq_queue_opts *opts,
			  const struct kwq_limit *l)
{
	if (opts->nr_limits >= KWQ_LIMITS_MAX) {
		errno = E2BIG;
		return -1;
	}
	opts->limits[opts->nr_limits++] = *l;
	return 0;
}

/* The two durations of "exponential:BASE:MAX" and "fastslow:FAST:SLOW:N". */
static int kwq_parse_durations(char **f, struct kwq_limit *l)
{
	uint64_t v;

	if (kwq_parse_duration(f[1], &v))
		return -1;
	l->a = v;
	if (kwq_parse_duration(f[2], &v))
		return -1;
	l->b = v;
	return 0;
}

KWQ_PUBLIC int kwq_parse_limiter(const char *spec, struct kwq_queue_opts *opts)
{
	struct kwq_limit l;
	char buf[128], *f[5];
	uint64_t v;
	int n;

	if (!spec || strlen(spec) >= sizeof(buf))
		goto bad;
	strcpy(buf, spec);
	n = kwq_split(buf, f, 5);
	if (n < 0)
		goto bad;
	memset(&l, 0, sizeof(l));
	if (strcmp(f[0], "default") == 0 && n == 1) {
		struct kwq_limit e = { KWQ_LIMIT_EXPONENTIAL, 0, 5000000ULL,
				       1000000000000ULL };
		struct kwq_limit b = { KWQ_LIMIT_BUCKET, 100, 10000, 0 };

		if (opts->nr_limits + 2 > KWQ_LIMITS_MAX) {
			errno = E2BIG;
			return -1;
		}
		kwq_push_limit(opts, &e);
		return kwq_push_limit(opts, &b);
	}
	if (strcmp(f[0], "exponential") == 0 && n == 3) {
		l.type = KWQ_LIMIT_EXPONENTIAL;
		if (kwq_parse_durations(f, &l))
			goto bad;
	} else if (strcmp(f[0], "fastslow") == 0 && n == 4) {
		l.type = KWQ_LIMIT_FAST_SLOW;
		if (kwq_parse_durations(f, &l) ||
		    kwq_parse_uint(f[3], UINT32_MAX, &v))
			goto bad;
		l.count = (__u32)v;
	} else if (strcmp(f[0], "bucket") == 0 && n == 3) {
		l.type = KWQ_LIMIT_BUCKET;
		if (kwq_parse_milli(f[1], &v) || v == 0)
			goto bad;
		l.a = v;
		if (kwq_parse_uint(f[2], UINT32_MAX, &v) || v == 0)
			goto bad;
		l.count = (__u32)v;
	} else {
		goto bad;
	}
	return kwq_push_limit(opts, &l);
bad:
	errno = EINVAL;
	return -1;
}

KWQ_PUBLIC int kwq_format_limiter(char *buf, size_t size,
				  const struct kwq_limit *l)
{
	char a[32], b[32];

	switch (l->type) {
	case KWQ_LIMIT_EXPONENTIAL:
		kwq_format_duration(a, sizeof(a), l->a);
		kwq_format_duration(b, sizeof(b), l->b);
		return snprintf(buf, size, "exponential:%s:%s", a, b);
	case KWQ_LIMIT_FAST_SLOW:
		kwq_format_duration(a, sizeof(a), l->a);
		kwq_format_duration(b, sizeof(b), l->b);
		return snprintf(buf, size, "fastslow:%s:%s:%u", a, b,
				(unsigned int)l->count);
	case KWQ_LIMIT_BUCKET:
		if (l->a % 1000 == 0)
			return snprintf(buf, size, "bucket:%" PRIu64 ":%u",
					(uint64_t)l->a / 1000,
					(unsigned int)l->count);
		snprintf(a, sizeof(a), "%03" PRIu64, (uint64_t)l->a % 1000);
		while (a[strlen(a) - 1] == '0')
			a[strlen(a) - 1] = '\0';
		return snprintf(buf, size, "bucket:%" PRIu64 ".%s:%u",
				(uint64_t)l->a / 1000, a,
				(unsigned int)l->count);
	default:
		return snprintf(buf, size, "unknown(%u)", (unsigned int)l->type);
	}
}

/* --- rings -------------------------------------------------------------- */

#define KWQ_RING_DEFAULT_ENTRIES	256

/* A leased key the kernel announced and the caller has not been handed. */
struct kwq_ring_held {
	uint32_t slot;
	uint64_t gen;
};

struct kwq_ring {
	int fd;
	unsigned int sq_entries, cq_entries, lease_slots;
	uint32_t tail;		/* written up to here, published or not */
	uint32_t head;		/* the kernel's sq_head as last read */
	void *user, *kernel, *status_map;
	size_t user_size, kernel_size, status_size;
	uint32_t *sq_tail, *cq_head;
	unsigned char *sqes;
	const uint32_t *sq_head, *cq_tail, *ring_flags;
	const struct kwq_cqe *cqes;
	const unsigned char *leases;
	const struct kwq_ring_status *status;
	uint64_t processing_ns;
	kwq_ring_cqe_fn fn;
	void *fn_arg;
	/* leases announced, FIFO of lease_slots */
	struct kwq_ring_held *held;
	unsigned int held_first, held_nr;
	/* completions kept for kwq_ring_reap(), FIFO of cq_entries */
	struct kwq_cqe *kept;
	unsigned int kept_first, kept_nr;
};

static int ring_size_ok(unsigned int n)
{
	return n >= KWQ_RING_ENTRIES_MIN && n <= KWQ_RING_ENTRIES_MAX &&
	       !(n & (n - 1));
}

static void ring_unmap(struct kwq_ring *r)
{
	if (r->user)
		munmap(r->user, r->user_size);
	if (r->kernel)
		munmap(r->kernel, r->kernel_size);
	if (r->status_map)
		munmap(r->status_map, r->status_size);
	free(r->held);
	free(r->kept);
	free(r);
}

/* mmap() one region; NULL (errno set) on failure. */
static void *ring_map(int fd, size_t size, int prot, off_t off)
{
	void *p = mmap(NULL, size, prot, MAP_SHARED, fd, off);

	return p == MAP_FAILED ? NULL : p;
}

/* Whether @off .. @off + @len lies in a region of @size bytes. */
static int ring_off_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

KWQ_PUBLIC int kwq_ring_setup(int fd, unsigned int sq_entries,
			      unsigned int cq_entries,
			      unsigned int lease_slots, struct kwq_ring **ring)
{
	struct kwq_ring_setup_args a;
	struct kwq_ring *r;
	int err;

	if (!sq_entries)
		sq_entries = KWQ_RING_DEFAULT_ENTRIES;
	if (!cq_entries)
		cq_entries = KWQ_RING_DEFAULT_ENTRIES;
	if (!ring || !ring_size_ok(sq_entries) || !ring_size_ok(cq_entries) ||
	    lease_slots > KWQ_RING_LEASES_MAX) {
		errno = EINVAL;
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.sq_entries = sq_entries;
	a.cq_entries = cq_entries;
	a.lease_slots = lease_slots;
	if (ioctl(fd, KWQ_IOC_RING_SETUP, &a) < 0)
		return -1;
	/* The offsets are the kernel's: check them against the sizes. */
	if (!ring_off_ok(a.sq_tail_off, 4, a.user_size) ||
	    !ring_off_ok(a.cq_head_off, 4, a.user_size) ||
	    !ring_off_ok(a.sqes_off, (uint64_t)sq_entries * KWQ_SQE_SIZE,
			 a.user_size) ||
	    !ring_off_ok(a.sq_head_off, 4, a.kernel_size) ||
	    !ring_off_ok(a.cq_tail_off, 4, a.kernel_size) ||
	    !ring_off_ok(a.ring_flags_off, 4, a.kernel_size) ||
	    !ring_off_ok(a.cqes_off,
			 (uint64_t)cq_entries * sizeof(struct kwq_cqe),
			 a.kernel_size) ||
	    !ring_off_ok(a.leases_off,
			 (uint64_t)lease_slots * KWQ_LEASE_SLOT_SIZE,
			 a.kernel_size) ||
	    a.status_size < sizeof(struct kwq_ring_status)) {
		errno = EPROTO;
		return -1;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -1;
	r->fd = fd;
	r->sq_entries = sq_entries;
	r->cq_entries = cq_entries;
	r->lease_slots = lease_slots;
	r->user_size = a.user_size;
	r->kernel_size = a.kernel_size;
	r->status_size = a.status_size;
	r->held = calloc(lease_slots ? lease_slots : 1, sizeof(*r->held));
	r->kept = calloc(cq_entries, sizeof(*r->kept));
	r->user = ring_map(fd, a.user_size, PROT_READ | PROT_WRITE,
			   KWQ_RING_OFF_USER);
	r->kernel = ring_map(fd, a.kernel_size, PROT_READ, KWQ_RING_OFF_KERNEL);
	r->status_map = ring_map(fd, a.status_size, PROT_READ,
				 KWQ_RING_OFF_STATUS);
	if (!r->held || !r->kept || !r->user || !r->kernel || !r->status_map) {
		err = errno;
		ring_unmap(r);
		errno = err;
		return -1;
	}
	r->sq_tail = (uint32_t *)((char *)r->user + a.sq_tail_off);
	r->cq_head = (uint32_t *)((char *)r->user + a.cq_head_off);
	r->sqes = (unsigned char *)r->user + a.sqes_off;
	r->sq_head = (const uint32_t *)((char *)r->kernel + a.sq_head_off);
	r->cq_tail = (const uint32_t *)((char *)r->kernel + a.cq_tail_off);
	r->ring_flags = (const uint32_t *)((char *)r->kernel +
					   a.ring_flags_off);
	r->cqes = (const struct kwq_cqe *)((char *)r->kernel + a.cqes_off);
	r->leases = (const unsigned char *)r->kernel + a.leases_off;
	r->status = r->status_map;
	r->tail = __atomic_load_n(r->sq_tail, __ATOMIC_RELAXED);
	r->head = __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE);
	*ring = r;
	return 0;
}

KWQ_PUBLIC int kwq_ring_fd(const struct kwq_ring *ring)
{
	return ring->fd;
}

KWQ_PUBLIC void kwq_ring_set_callback(struct kwq_ring *ring,
				      kwq_ring_cqe_fn fn, void *arg)
{
	ring->fn = fn;
	ring->fn_arg = arg;
}

KWQ_PUBLIC void kwq_ring_set_processing_timeout(struct kwq_ring *ring,
						uint64_t processing_ns)
{
	ring->processing_ns = processing_ns;
}

/*
 * Read the completion ring: leases go to the held FIFO, the rest to the
 * callback or the kept FIFO. Stops early (leaving completions for the
 * kernel to count as not free) when the kept FIFO is full. Returns
 * whether it read up to the tail it saw.
 */
static int ring_read_cq(struct kwq_ring *r)
{
	uint32_t head = *r->cq_head;
	uint32_t tail = __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE);
	const struct kwq_cqe *c;
	struct kwq_cqe cqe;
	unsigned int i;

	if (head == tail)
		return 1;
	for (; head != tail; head++) {
		c = &r->cqes[head & (r->cq_entries - 1)];
		memcpy(&cqe, c, sizeof(cqe));
		if (cqe.op == KWQ_CQE_LEASE) {
			/* held never overflows: a lease takes a free slot */
			if (cqe.index >= r->lease_slots ||
			    r->held_nr >= r->lease_slots)
				continue;
			i = (r->held_first + r->held_nr++) % r->lease_slots;
			r->held[i].slot = cqe.index;
			r->held[i].gen = cqe.value;
		} else if (r->fn) {
			r->fn(r->fn_arg, &cqe);
		} else if (r->kept_nr < r->cq_entries) {
			i = (r->kept_first + r->kept_nr++) % r->cq_entries;
			r->kept[i] = cqe;
		} else {
			break;
		}
	}
	__atomic_store_n(r->cq_head, head, __ATOMIC_RELEASE);
	return head == tail;
}

KWQ_PUBLIC unsigned int kwq_ring_reap(struct kwq_ring *ring,
				      struct kwq_cqe *out, unsigned int max)
{
	unsigned int n = 0;

	ring_read_cq(ring);
	while (n < max && ring->kept_nr) {
		out[n++] = ring->kept[ring->kept_first];
		ring->kept_first = (ring->kept_first + 1) % ring->cq_entries;
		ring->kept_nr--;
	}
	/* Room again: the completions that did not fit. */
	if (n)
		ring_read_cq(ring);
	return n;
}

static int ring_enter(struct kwq_ring *r, unsigned int flags,
		      unsigned int get_max, unsigned int get_min,
		      int64_t timeout_ns)
{
	struct kwq_ring_enter_args a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.flags = flags;
	a.get_max = get_max;
	a.get_min = get_min;
	a.timeout_ns = timeout_ns;
	/* A get's only: a submit alone takes none (EINVAL). */
	if (flags & KWQ_ENTER_GET)
		a.processing_timeout_ns = r->processing_ns;
	ret = ioctl(r->fd, KWQ_IOC_RING_ENTER, &a);
	return ret < 0 ? -1 : 0;
}

static void ring_store_tail(struct kwq_ring *r)
{
	__atomic_store_n(r->sq_tail, r->tail, __ATOMIC_RELEASE);
}

/*
 * KWQ_ENTER_SUBMIT. EBUSY (the completion ring full, records left) is
 * not the end: read the completions (to the callback or the kept FIFO)
 * and ring again, as long as that made room.
 */
static int ring_doorbell(struct kwq_ring *r)
{
	uint32_t head;

	for (;;) {
		if (!ring_enter(r, KWQ_ENTER_SUBMIT, 0, 0, 0))
			return 0;
		if (errno != EBUSY)
			return -1;
		head = *r->cq_head;
		ring_read_cq(r);
		if (*r->cq_head == head) {
			errno = EBUSY;
			return -1;
		}
	}
}

KWQ_PUBLIC int kwq_ring_publish(struct kwq_ring *ring)
{
	ring_store_tail(ring);
	/*
	 * Order the tail's store before the load of waiters, as the getter
	 * orders its store of waiters before its load of our tail: one of
	 * the two sees the other (Documentation/rings.rst, "Waking").
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&ring->status->waiters, __ATOMIC_RELAXED))
		return 0;
	return ring_doorbell(ring) ? -1 : 1;
}

KWQ_PUBLIC int kwq_ring_submit(struct kwq_ring *ring)
{
	ring_store_tail(ring);
	return ring_doorbell(ring);
}

KWQ_PUBLIC int kwq_ring_free(struct kwq_ring *ring)
{
	int ret;

	if (!ring)
		return 0;
	ret = ring->tail != __atomic_load_n(ring->sq_head, __ATOMIC_ACQUIRE) ?
	      kwq_ring_submit(ring) : 0;
	ring_unmap(ring);
	return ret;
}

/*
 * Wait until @nslots slots are free: publish what is written and ring the
 * doorbell so the kernel consumes it; completions are read between tries
 * (the kernel leaves records that must complete in place while the
 * completion ring is full: EBUSY).
 */
static int ring_make_room(struct kwq_ring *r, unsigned int nslots)
{
	uint32_t head;
	int all;

	for (;;) {
		head = __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE);
		/*
		 * The kernel posts a record's completion before it moves
		 * sq_head past it. Read the completions now, so that each is
		 * handed over before its ring position (which names the
		 * record) is written again; kept ones not reaped: EBUSY.
		 */
		all = ring_read_cq(r);
		if (r->sq_entries - (r->tail - head) >= nslots) {
			if (!all) {
				errno = EBUSY;
				return -1;
			}
			r->head = head;
			return 0;
		}
		if (__atomic_load_n(r->ring_flags, __ATOMIC_ACQUIRE) &
		    KWQ_RING_F_BROKEN) {
			errno = EIO;
			return -1;
		}
		if (kwq_ring_submit(r))
			return -1;
		if (__atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) == head)
			sched_yield();
	}
}

/*
 * @n key bytes of @src into @dst, then zeros up to @room (a multiple of
 * 8): in words, as a record's 40 or 64 bytes are short runs that the
 * string functions' setup would cost more than.
 */
static void ring_put_key(unsigned char *dst, const unsigned char *src,
			 size_t n, size_t room)
{
	size_t off = 0;
	uint64_t w;

	for (; off + sizeof(w) <= n; off += sizeof(w)) {
		memcpy(&w, src + off, sizeof(w));
		memcpy(dst + off, &w, sizeof(w));
	}
	if (off < n) {
		unsigned char b[sizeof(w)] = { 0 };
		size_t i;

		for (i = 0; off + i < n; i++)
			b[i] = src[off + i];
		memcpy(dst + off, b, sizeof(w));
		off += sizeof(w);
	}
	for (w = 0; off < room; off += sizeof(w))
		memcpy(dst + off, &w, sizeof(w));
}

KWQ_PUBLIC int kwq_ring_prep(struct kwq_ring *ring, unsigned int op,
			     unsigned int flags, const void *key, size_t len,
			     int priority, uint64_t arg, uint32_t *index)
{
	unsigned int nslots, mask = ring->sq_entries - 1, i;
	const unsigned char *k = key;
	struct kwq_sqe *sqe;
	unsigned char *slot;
	size_t n, off;

	switch (op) {
	case KWQ_SQE_ADD:
	case KWQ_SQE_DONE:
	case KWQ_SQE_FORGET:
	case KWQ_SQE_REMOVE:
		if (!key || len < 1 || len > KWQ_KEY_LEN_MAX) {
			errno = EINVAL;
			return -1;
		}
		break;
	case KWQ_SQE_DONE_LEASE:
	case KWQ_SQE_NOP:
		len = 0;
		break;
	default:
		errno = EINVAL;
		return -1;
	}
	if (flags > 0xff) {
		errno = EINVAL;
		return -1;
	}
	nslots = KWQ_SQE_SLOTS(len);
	if (ring->sq_entries - (ring->tail - ring->head) < nslots &&
	    ring_make_room(ring, nslots))
		return -1;
	sqe = (struct kwq_sqe *)(ring->sqes + (ring->tail & mask) * KWQ_SQE_SIZE);
	sqe->op = (__u8)op;
	sqe->flags = (__u8)flags;
	sqe->nslots = (__u16)nslots;
	sqe->len = (__u32)len;
	sqe->priority = op == KWQ_SQE_ADD ? priority : 0;
	sqe->lease_slot = op == KWQ_SQE_DONE_LEASE ? (__u32)priority : 0;
	sqe->arg = arg;
	n = len < KWQ_SQE_INLINE ? len : KWQ_SQE_INLINE;
	ring_put_key(sqe->key, k, n, KWQ_SQE_INLINE);
	for (off = n, i = 1; i < nslots; i++, off += n) {
		slot = ring->sqes + ((ring->tail + i) & mask) * KWQ_SQE_SIZE;
		n = len - off < KWQ_SQE_SIZE ? len - off : KWQ_SQE_SIZE;
		ring_put_key(slot, k + off, n, KWQ_SQE_SIZE);
	}
	if (index)
		*index = ring->tail;
	ring->tail += nslots;
	return 0;
}

/* One record, published. */
static int ring_one(struct kwq_ring *r, unsigned int op, unsigned int flags,
		    const void *key, size_t len, int priority, uint64_t arg)
{
	if (kwq_ring_prep(r, op, flags, key, len, priority, arg, NULL))
		return -1;
	return kwq_ring_publish(r) < 0 ? -1 : 0;
}

KWQ_PUBLIC int kwq_ring_add(struct kwq_ring *ring, const void *key,
			    size_t len, int priority)
{
	return ring_one(ring, KWQ_SQE_ADD, 0, key, len, priority, 0);
}

KWQ_PUBLIC int kwq_ring_add_after(struct kwq_ring *ring, const void *key,
				  size_t len, int64_t after_ns)
{
	if (after_ns <= 0)
		return kwq_ring_add(ring, key, len, 0);
	return ring_one(ring, KWQ_SQE_ADD, KWQ_SQE_F_AFTER, key, len, 0,
			(uint64_t)after_ns);
}

KWQ_PUBLIC int kwq_ring_add_rate_limited(struct kwq_ring *ring,
					 const void *key, size_t len)
{
	return ring_one(ring, KWQ_SQE_ADD, KWQ_SQE_F_RATE_LIMITED, key, len,
			0, 0);
}

KWQ_PUBLIC int kwq_ring_done(struct kwq_ring *ring, const void *key,
			     size_t len)
{
	return ring_one(ring, KWQ_SQE_DONE, 0, key, len, 0, 0);
}

KWQ_PUBLIC int kwq_ring_forget(struct kwq_ring *ring, const void *key,
			       size_t len)
{
	return ring_one(ring, KWQ_SQE_FORGET, 0, key, len, 0, 0);
}

KWQ_PUBLIC int kwq_ring_remove(struct kwq_ring *ring, const void *key,
			       size_t len)
{
	return ring_one(ring, KWQ_SQE_REMOVE, 0, key, len, 0, 0);
}

/* The DONE_LEASE record of @l, not published. */
static int ring_prep_done_lease(struct kwq_ring *r,
				const struct kwq_ring_lease *l)
{
	if (l->slot >= r->lease_slots || !l->gen || l->slot > INT_MAX) {
		errno = EINVAL;
		return -1;
	}
	/* kwq_ring_prep() carries the slot in @priority for this op. */
	return kwq_ring_prep(r, KWQ_SQE_DONE_LEASE, 0, NULL, 0, (int)l->slot,
			     l->gen, NULL);
}

KWQ_PUBLIC int kwq_ring_done_lease(struct kwq_ring *ring,
				   const struct kwq_ring_lease *lease)
{
	if (ring_prep_done_lease(ring, lease))
		return -1;
	return kwq_ring_publish(ring) < 0 ? -1 : 0;
}

/* Hand out up to @max held leases into @out: their number. */
static unsigned int ring_hand_out(struct kwq_ring *r,
				  struct kwq_ring_lease *out, unsigned int max)
{
	const struct kwq_lease_slot *ls;
	struct kwq_ring_held h;
	unsigned int n = 0;
	uint32_t len;

	while (n < max && r->held_nr) {
		h = r->held[r->held_first];
		r->held_first = (r->held_first + 1) % r->lease_slots;
		r->held_nr--;
		ls = (const struct kwq_lease_slot *)(r->leases +
			(size_t)h.slot * KWQ_LEASE_SLOT_SIZE);
		len = ls->len;
		/* The slot is the kernel's: a lease that ended already. */
		if (ls->gen != h.gen || len < 1 || len > KWQ_KEY_LEN_MAX)
			continue;
		out[n].slot = h.slot;
		out[n].gen = h.gen;
		out[n].key = ls->key;
		out[n].len = len;
		out[n].priority = ls->priority;
		n++;
	}
	return n;
}

/*
 * kwq_ring_done_get() and kwq_ring_next(): when it enters, the kernel is
 * asked for up to @take keys less those already held (@take >= @max).
 */
static int ring_done_get(struct kwq_ring *ring,
			 const struct kwq_ring_lease *done, unsigned int ndone,
			 struct kwq_ring_lease *out, unsigned int max,
			 unsigned int min_nr, unsigned int take,
			 int64_t timeout_ns)
{
	unsigned int i, n, want, get_max, get_min;
	int ret, err;

	if (!out || !max || min_nr > max || (ndone && !done) ||
	    !ring->lease_slots) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < ndone; i++)
		if (ring_prep_done_lease(ring, &done[i]))
			return -1;
	ring_read_cq(ring);
	want = min_nr ? min_nr : 1;
	if (ring->held_nr >= want) {
		/* Enough already leased: publish the dones, no doorbell unless
		 * a getter waits (one may, for a key the dones requeued).
		 */
		if (ndone && kwq_ring_publish(ring) < 0)
			return -1;
		return (int)ring_hand_out(ring, out, max);
	}
	get_max = take - ring->held_nr;
	if (get_max > ring->lease_slots)
		get_max = ring->lease_slots;
	get_min = min_nr > ring->held_nr ? min_nr - ring->held_nr : 0;
	if (get_min > get_max)
		get_min = get_max;
	ring_store_tail(ring);
	ret = ring_enter(ring, KWQ_ENTER_SUBMIT | KWQ_ENTER_GET, get_max,
			 get_min, timeout_ns);
	err = errno;
	ring_read_cq(ring);
	n = ring_hand_out(ring, out, max);
	if (ret && !n) {
		errno = err;
		return -1;
	}
	return (int)n;
}

KWQ_PUBLIC int kwq_ring_done_get(struct kwq_ring *ring,
				 const struct kwq_ring_lease *done,
				 unsigned int ndone,
				 struct kwq_ring_lease *out, unsigned int max,
				 unsigned int min_nr, int64_t timeout_ns)
{
	return ring_done_get(ring, done, ndone, out, max, min_nr, max,
			     timeout_ns);
}

KWQ_PUBLIC int kwq_ring_next(struct kwq_ring *ring,
			     const struct kwq_ring_lease *done,
			     struct kwq_ring_lease *out, unsigned int prefetch,
			     int64_t timeout_ns)
{
	int n;

	if (!prefetch || prefetch > ring->lease_slots) {
		errno = EINVAL;
		return -1;
	}
	/* 0: the keys held had all ended (their slots reused): go on. */
	do {
		n = ring_done_get(ring, done, done ? 1 : 0, out, 1, 1,
				  prefetch, timeout_ns);
		done = NULL;
	} while (!n);
	return n;
}

KWQ_PUBLIC int kwq_ring_get(struct kwq_ring *ring, struct kwq_ring_lease *out,
			    unsigned int max, unsigned int min_nr,
			    int64_t timeout_ns)
{
	return kwq_ring_done_get(ring, NULL, 0, out, max, min_nr, timeout_ns);
}

KWQ_PUBLIC uint64_t kwq_ring_ready(const struct kwq_ring *ring)
{
	return __atomic_load_n(&ring->status->ready, __ATOMIC_RELAXED);
}

KWQ_PUBLIC unsigned int kwq_ring_status_flags(const struct kwq_ring *ring)
{
	return __atomic_load_n(&ring->status->flags, __ATOMIC_ACQUIRE);
}
