// SPDX-License-Identifier: GPL-2.0
/*
 * The dead set through /dev/kwq and libkwq: a queue created with
 * max_retries moves a key that fails once more to its dead set (the
 * rate-limited add answers KWQ_DELAY_DEAD), counts it in the stats, and
 * KWQ_IOC_REVIVE / KWQ_IOC_PURGE bring it back or drop it. Bad input
 * gets EINVAL or ENOENT and changes nothing.
 */
#include "kwqtest.h"

static int dead_queue(unsigned int max_retries, unsigned int max_dead)
{
	return kt_dead_queue("dead", max_retries, max_dead);
}

/* One failed run of @key: get it, add it rate-limited, done; the delay. */
static uint64_t fail_once(int fd, const char *key)
{
	char got[KWQ_KEY_LEN_MAX + 1];
	uint64_t delay = 0;
	long n;

	n = kwq_get(fd, got, sizeof(got), 0, 5 * KT_SEC);
	if (n != (long)strlen(key) || memcmp(got, key, (size_t)n)) {
		printf("    # get for %s: %ld %s\n", key, n, strerror(errno));
		return 0;
	}
	if (kwq_add_rate_limited(fd, key, strlen(key), &delay) < 0 ||
	    kt_done(fd, key) < 0) {
		printf("    # fail %s: %s\n", key, strerror(errno));
		return 0;
	}
	return delay;
}

/* Add @key and fail it until dead (max_retries @retries); 1 if it died. */
static int kill_key(int fd, const char *key, unsigned int retries)
{
	unsigned int i;

	kt_add(fd, key);
	for (i = 0; i < retries; i++)
		if (fail_once(fd, key) == KWQ_DELAY_DEAD)
			return 0;
	return fail_once(fd, key) == KWQ_DELAY_DEAD;
}

static struct kwq_stats_args stats(int fd)
{
	struct kwq_stats_args st;

	memset(&st, 0xff, sizeof(st));
	if (kwq_stats(fd, &st) < 0)
		printf("    # stats: %s\n", strerror(errno));
	return st;
}

/* KWQ_IOC_CREATE with struct size @size (an older or a newer version). */
static int create_sized(int fd, const char *name, size_t size,
			unsigned int max_retries)
{
	unsigned char buf[sizeof(struct kwq_create_args) + 8];
	struct kwq_create_args *a = (void *)buf;

	memset(buf, 0, sizeof(buf));
	snprintf(a->name, sizeof(a->name), "%s", name);
	if (size > offsetof(struct kwq_create_args, max_retries))
		a->max_retries = max_retries;
	return ioctl(fd, _IOC(_IOC_WRITE, KWQ_IOC_MAGIC, 0x00, size), buf);
}

static int dead_ioctl(int fd, unsigned long cmd, const void *key,
		      uint32_t len, uint32_t flags)
{
	struct kwq_dead_args a = {
		.key = (uintptr_t)key, .len = len, .flags = flags,
	};

	return ioctl(fd, cmd, &a);
}

int main(void)
{
	struct kwq_queue_opts o;
	struct kwq_stats_args st;
	char name[KWQ_NAME_LEN];
	uint64_t delay = 0;
	int fd, dev, i, ok;
	char buf[256];

	kt_setup("kwq_dead", 35, 120);

	/* create: ranges checked, nothing created on error */
	dev = kt_dev();
	memset(&o, 0, sizeof(o));
	kt_name(name, "dead-bad");
	o.max_retries = KWQ_MAX_RETRIES + 1;
	KT_ERR(kwq_create(dev, name, &o), EINVAL, "create_max_retries_too_big");
	o.max_retries = 1;
	o.max_dead = KWQ_MAX_DEAD + 1;
	KT_ERR(kwq_create(dev, name, &o), EINVAL, "create_max_dead_too_big");
	o.max_retries = 0;
	o.max_dead = 1;
	KT_ERR(kwq_create(dev, name, &o), EINVAL, "create_max_dead_without_max_retries");
	KT_ERR(kwq_open(dev, name), ENOENT, "failed_creates_left_no_queue");
	/* The first version of the struct (no dead-set fields) still works. */
	KT_OK(create_sized(dev, name, KWQ_CREATE_ARGS_SIZE_VER1, 0),
	      "create_with_version1_struct");
	close(dev);
	dev = kt_dev();
	kt_name(name, "dead-v2");
	KT_ERR(create_sized(dev, name, KWQ_CREATE_ARGS_SIZE_VER1 - 8, 0),
	       EINVAL, "create_smaller_than_version1_is_einval");
	KT_OK(create_sized(dev, name, sizeof(struct kwq_create_args) + 8, 2),
	      "create_larger_struct_zero_tail");
	close(dev);

	/* the death */
	fd = dead_queue(2, 0);
	kt_add(fd, "a");
	ok = fail_once(fd, "a") != KWQ_DELAY_DEAD &&
	     fail_once(fd, "a") != KWQ_DELAY_DEAD;
	ktap_check(ok, "retries_below_max_are_requeued", "a key died early");
	ktap_check(fail_once(fd, "a") == KWQ_DELAY_DEAD,
		   "last_failure_answers_delay_dead", "not dead");
	st = stats(fd);
	ktap_check(st.dead == 1 && st.dead_total == 1 && st.waiting == 0 &&
		   st.len == 0, "stats_count_the_dead_key",
		   "dead %llu total %llu waiting %llu len %llu",
		   (unsigned long long)st.dead,
		   (unsigned long long)st.dead_total,
		   (unsigned long long)st.waiting, (unsigned long long)st.len);
	ktap_check(kwq_num_requeues(fd, "a", 1) == 3, "dead_key_keeps_its_count",
		   "%ld", kwq_num_requeues(fd, "a", 1));
	KT_ERR(kwq_get(fd, buf, sizeof(buf), 0, 50 * KT_MS), ETIMEDOUT,
	       "dead_key_is_not_handed_out");
	KT_OK(kwq_add_rate_limited(fd, "a", 1, &delay), "failure_of_dead_key");
	ktap_check(delay == KWQ_DELAY_DEAD && stats(fd).dead == 1,
		   "failure_of_dead_key_keeps_it_dead", "delay %llu",
		   (unsigned long long)delay);

	/* revive: bad input changes nothing */
	kt_add(fd, "ready");
	KT_ERR(kwq_revive(fd, "ready", 5), ENOENT, "revive_of_ready_key_is_enoent");
	KT_ERR(kwq_revive(fd, "zz", 2), ENOENT, "revive_of_unknown_key_is_enoent");
	KT_ERR(dead_ioctl(fd, KWQ_IOC_REVIVE, "a", 1, 0x2), EINVAL,
	       "revive_unknown_flag_is_einval");
	KT_ERR(dead_ioctl(fd, KWQ_IOC_REVIVE, "a", 1, KWQ_DEAD_ALL), EINVAL,
	       "revive_all_with_key_is_einval");
	KT_ERR(dead_ioctl(fd, KWQ_IOC_REVIVE, "a", 0, 0), EINVAL,
	       "revive_empty_key_is_einval");
	KT_ERR(dead_ioctl(fd, KWQ_IOC_REVIVE, NULL, 1, 0), EFAULT,
	       "revive_bad_pointer_is_efault");
	st = stats(fd);
	ktap_check(st.dead == 1 && st.len == 1, "bad_revives_changed_nothing",
		   "dead %llu len %llu", (unsigned long long)st.dead,
		   (unsigned long long)st.len);
	KT_OK(kwq_revive(fd, "a", 1), "revive_dead_key");
	ktap_check(kwq_num_requeues(fd, "a", 1) == 0 && stats(fd).dead == 0,
		   "revive_resets_count", "%ld", kwq_num_requeues(fd, "a", 1));
	kt_take(fd, 0, 0, 10, buf, sizeof(buf));
	ktap_check(strcmp(buf, "ready,a") == 0, "revived_key_is_ready",
		   "got '%s'", buf);
	kt_done(fd, "ready");
	kt_done(fd, "a");

	/* an add revives; revive all; purge */
	ok = kill_key(fd, "b", 2);
	KT_OK(kt_add(fd, "b"), "add_of_dead_key");
	ktap_check(ok && stats(fd).dead == 0 && kt_len(fd) == 1,
		   "add_revives_dead_key", "dead %llu",
		   (unsigned long long)stats(fd).dead);
	kt_take(fd, 0, 0, 10, buf, sizeof(buf));
	kt_done(fd, "b");
	ok = kill_key(fd, "c", 2) && kill_key(fd, "d", 2);
	ktap_check(ok && kwq_revive_all(fd) == 2 && stats(fd).dead == 0,
		   "revive_all", "dead %llu", (unsigned long long)stats(fd).dead);
	kt_take(fd, 0, 0, 10, buf, sizeof(buf));
	kt_done(fd, "c");
	kt_done(fd, "d");
	ok = kill_key(fd, "e", 2) && kill_key(fd, "f", 2);
	KT_ERR(kwq_purge(fd, "ready", 5), ENOENT, "purge_of_key_not_dead_is_enoent");
	KT_OK(kwq_purge(fd, "e", 1), "purge_dead_key");
	ktap_check(ok && kwq_purge_all(fd) == 1 && stats(fd).dead == 0 &&
		   kwq_num_requeues(fd, "f", 1) == 0, "purge_all", "dead %llu",
		   (unsigned long long)stats(fd).dead);
	close(fd);

	/* the bound */
	fd = dead_queue(1, 2);
	ok = 1;
	for (i = 0; i < 3; i++) {
		snprintf(buf, sizeof(buf), "k%d", i);
		ok &= kill_key(fd, buf, 1);
	}
	st = stats(fd);
	ktap_check(ok && st.dead == 2 && st.dead_total == 3 &&
		   st.dead_dropped_total == 1, "bound_drops_oldest",
		   "dead %llu total %llu dropped %llu",
		   (unsigned long long)st.dead,
		   (unsigned long long)st.dead_total,
		   (unsigned long long)st.dead_dropped_total);
	KT_ERR(kwq_revive(fd, "k0", 2), ENOENT, "dropped_key_is_gone");
	KT_OK(kwq_shutdown(fd, 0), "shutdown");
	KT_ERR(kwq_revive(fd, "k1", 2), ESHUTDOWN, "revive_after_shutdown_is_eshutdown");
	ktap_check(stats(fd).dead == 2, "failed_revive_left_key_dead", "dead %llu",
		   (unsigned long long)stats(fd).dead);
	close(fd);
	return ktap_end();
}
