// SPDX-License-Identifier: GPL-2.0
/*
 * Processing deadlines through /dev/kwq: the create and get fields (and
 * their older, smaller structs), KWQ_IOC_TOUCH and its errors, and what
 * the fd whose lease was revoked gets from DONE and TOUCH: ESTALE,
 * whether the key waits, is ready, or another fd took it.
 */
#include "kwqtest.h"

#define BADPTR ((void *)1)
#define U64(p) ((__u64)(uintptr_t)(p))
#define RESIZE(cmd, size) \
	_IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd), (size))

static int touch(int fd, const char *key, __u64 ns, __u32 flags)
{
	struct kwq_touch_args t = {
		.key = U64(key), .len = (__u32)strlen(key), .flags = flags,
		.processing_timeout_ns = ns,
	};

	return ioctl(fd, KWQ_IOC_TOUCH, &t);
}

/* Take one key with the processing deadline @ns (0: the queue's). */
static int take(int fd, char *key, __u64 ns)
{
	unsigned char buf[KWQ_REC_SIZE_MAX];
	const void *k;
	size_t used, off = 0, len;
	int prio;

	if (kwq_get_batch_deadline(fd, buf, sizeof(buf), 1, 0, 5 * KT_SEC, ns,
				   &used) != 1 ||
	    kwq_rec_next(buf, used, &off, &k, &len, &prio) != 1)
		return -1;
	memcpy(key, k, len);
	key[len] = '\0';
	return 0;
}

static struct kwq_stats_args stats(int fd)
{
	struct kwq_stats_args st;

	memset(&st, 0, sizeof(st));
	kwq_stats(fd, &st);
	return st;
}

int main(void)
{
	struct kwq_queue_opts o = {
		.nr_limits = 1,
		.limits[0] = { KWQ_LIMIT_EXPONENTIAL, 0, 50 * KT_MS, KT_SEC },
		.processing_timeout_ns = 200 * KT_MS,
	};
	struct kwq_create_args ca;
	struct kwq_stats_args st;
	char name[KWQ_NAME_LEN], key[KWQ_KEY_LEN_MAX + 1];
	int a, b, c, i;

	kt_setup("kwq_timeout_dev", 29, 120);
	a = kt_queue("timeout", &o, name);
	b = kt_attach(name);

	/* --- create: range, and the version 1 struct --------------------- */
	c = kt_dev();
	memset(&ca, 0, sizeof(ca));
	kt_name(ca.name, "timeout-bad");
	ca.processing_timeout_ns = KWQ_PROCESSING_TIMEOUT_MIN - 1;
	KT_ERR(ioctl(c, KWQ_IOC_CREATE, &ca), EINVAL, "create_timeout_below_min_einval");
	ca.processing_timeout_ns = KWQ_PROCESSING_TIMEOUT_MAX + 1;
	KT_ERR(ioctl(c, KWQ_IOC_CREATE, &ca), EINVAL, "create_timeout_above_max_einval");
	ca.processing_timeout_ns = KT_MS;
	KT_OK(ioctl(c, RESIZE(KWQ_IOC_CREATE, KWQ_CREATE_ARGS_SIZE_VER1), &ca),
	      "create_version_1_struct");
	/* The field was not read: no deadline. */
	kt_add(c, "v1");
	{
		struct kwq_get_args g = { 0 };
		unsigned char buf[KWQ_REC_SIZE_MAX];

		g.recs = U64(buf);
		g.recs_len = sizeof(buf);
		g.max = 1;
		g.processing_timeout_ns = 1;	/* beyond the old size: unread */
		KT_OK(ioctl(c, RESIZE(KWQ_IOC_GET, KWQ_GET_ARGS_SIZE_VER1), &g),
		      "get_version_1_struct");
		KT_ERR(ioctl(c, KWQ_IOC_GET, &g), EINVAL, "get_timeout_out_of_range_einval");
	}
	kt_sleep_ms(20);
	KT_OK(kt_done(c, "v1"), "version_1_queue_has_no_deadline");
	kwq_destroy(c, ca.name);
	close(c);

	/* --- a deadline passes: ESTALE for the old holder --------------- */
	kt_add(a, "k");
	ktap_check(take(a, key, 0) == 0, "take_with_queue_deadline", "%s", strerror(errno));
	kt_sleep_ms(400);
	st = stats(a);
	ktap_check(st.processing == 0 && st.processing_timeouts_total == 1 &&
		   st.retries_total == 1, "deadline_took_the_key_back",
		   "processing %llu timeouts %llu retries %llu",
		   (unsigned long long)st.processing,
		   (unsigned long long)st.processing_timeouts_total,
		   (unsigned long long)st.retries_total);
	KT_ERR(kt_done(a, "k"), ESTALE, "done_after_deadline_estale");
	KT_ERR(touch(a, "k", 0, 0), ESTALE, "touch_after_deadline_estale");
	KT_ERR(kt_done(b, "k"), ENOENT, "done_by_other_fd_enoent");
	ktap_check(kwq_num_requeues(a, "k", 1) == 1, "one_failure_counted", "%ld",
		   kwq_num_requeues(a, "k", 1));
	/* Another fd takes it: still ESTALE (not EPERM), and changes nothing. */
	ktap_check(take(b, key, KWQ_TIMEOUT_NONE) == 0 && !strcmp(key, "k"),
		   "other_fd_takes_it", "%s", strerror(errno));
	KT_ERR(kt_done(a, "k"), ESTALE, "done_of_retaken_key_estale");
	KT_ERR(touch(a, "k", 0, 0), ESTALE, "touch_of_retaken_key_estale");
	ktap_check(stats(a).processing == 1, "retaken_key_still_processing", "");
	/* KWQ_TIMEOUT_NONE: no deadline for b's hold. */
	kt_sleep_ms(400);
	KT_OK(kt_done(b, "k"), "no_deadline_get_kept_its_key");

	/* --- touch: a heartbeat keeps the key --------------------------- */
	kt_add(a, "h");
	ktap_check(take(a, key, 100 * KT_MS) == 0, "take_with_own_deadline", "");
	for (i = 0; i < 10; i++) {
		kt_sleep_ms(40);
		if (touch(a, "h", 100 * KT_MS, 0) < 0)
			break;
	}
	ktap_check(i == 10, "heartbeat_kept_the_key", "touch %d: %s", i, strerror(errno));
	KT_ERR(touch(b, "h", 0, 0), EPERM, "touch_of_other_fds_key_eperm");
	KT_ERR(touch(a, "nokey", 0, 0), ENOENT, "touch_not_processing_enoent");
	KT_ERR(touch(a, "h", 1, 0), EINVAL, "touch_timeout_out_of_range_einval");
	KT_ERR(touch(a, "h", 0, 1), EINVAL, "touch_flags_einval");
	{
		struct kwq_touch_args t = { .key = U64(BADPTR), .len = 1 };

		KT_ERR(ioctl(a, KWQ_IOC_TOUCH, &t), EFAULT, "touch_bad_key_pointer_efault");
		t.len = 0;
		KT_ERR(ioctl(a, KWQ_IOC_TOUCH, &t), EINVAL, "touch_zero_len_einval");
		KT_ERR(ioctl(a, KWQ_IOC_TOUCH, BADPTR), EFAULT, "touch_bad_args_pointer_efault");
	}
	KT_OK(kt_done(a, "h"), "done_after_heartbeats");

	/* --- stats: version 2 callers get their prefix ------------------ */
	memset(&st, 0xff, sizeof(st));
	KT_OK(ioctl(a, RESIZE(KWQ_IOC_STATS, KWQ_STATS_ARGS_SIZE_VER2), &st),
	      "stats_version_2");
	ktap_check(st.processing_timeouts_total == ~0ULL, "stats_version_2_prefix_only",
		   "%llu", (unsigned long long)st.processing_timeouts_total);

	kwq_destroy(a, name);
	close(a);
	close(b);
	return ktap_end();
}
