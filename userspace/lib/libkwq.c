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
#include <sys/ioctl.h>
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
	struct kwq_create_args a;

	memset(&a, 0, sizeof(a));
	if (kwq_copy_name(a.name, name))
		return -1;
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
} kwq_units[] = {	/* largest first, for formatting */
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
	for (i = 0; i < sizeof(kwq_units) / sizeof(kwq_units[0]); i++)
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
