// SPDX-License-Identifier: GPL-2.0
/*
 * Long keys through /dev/kwq and libkwq: a Kubernetes namespace/name key
 * of the longest kind (63 + 1 + 253 = 317 bytes) and a key of
 * KWQ_KEY_LEN_MAX (1024) bytes through every ioctl that takes or returns
 * keys, alone and in batches, on each of the kernel's paths (the one-key
 * fast paths hand a key longer than their stack buffer on); 1025 bytes is
 * EINVAL from the kernel itself. Then buffers sized for version 1 of the
 * ABI (keys of up to 256 bytes), as an older binary passes them: they
 * work for the keys they can hold, and a longer key is EMSGSIZE and stays
 * where it was.
 */
#include "kwqtest.h"

#include <sys/ioctl.h>

#define TOO_LONG	(KWQ_KEY_LEN_MAX + 1)

static unsigned char K[TOO_LONG];		/* key bytes: K, K + 1, ... */
static unsigned char got[KWQ_KEY_LEN_MAX + 1];
static uint64_t recs[64 * KWQ_REC_SIZE_MAX / 8];
static uint64_t infos[16 * KWQ_INFO_REC_SIZE_MAX / 8];


/* Take one key (waiting up to 5 s); 1 if it is @len bytes of @key. */
static int take_is(int fd, const void *key, size_t len)
{
	long n = kwq_get(fd, got, sizeof(got), 0, 5 * KT_SEC);

	if (n != (long)len || memcmp(got, key, len)) {
		printf("    # get: %ld (%s), want %zu bytes\n", n,
		       n < 0 ? kt_ename(errno) : "bytes", len);
		return 0;
	}
	return 1;
}

/* The records of a get: 1 if they are exactly the keys @k/@lens. */
static int recs_are(const void *buf, size_t used, int nr,
		    const unsigned char *const *k, const size_t *lens)
{
	size_t off = 0, len;
	const void *key;
	int i;

	for (i = 0; i < nr; i++) {
		if (kwq_rec_next(buf, used, &off, &key, &len, NULL) != 1 ||
		    len != lens[i] || memcmp(key, k[i], len)) {
			printf("    # record %d: %zu bytes, want %zu\n", i, len,
			       lens[i]);
			return 0;
		}
	}
	return off == used;
}

/*
 * A record of @len bytes of @key, any length (libkwq refuses 1025), in a
 * static buffer; its address.
 */
static uint64_t raw_rec(const void *key, uint32_t len)
{
	static uint64_t rec[KWQ_REC_SIZE(TOO_LONG) / 8];
	struct kwq_rec h = { len, 0 };

	memset(rec, 0, sizeof(rec));
	memcpy(rec, &h, sizeof(h));
	memcpy((char *)rec + sizeof(h), key, len);
	return (uintptr_t)rec;
}

/* One-key ioctl through a raw record. */
static int raw_keys(int fd, unsigned long cmd, const void *key, uint32_t len)
{
	struct kwq_keys_args a;

	memset(&a, 0, sizeof(a));
	a.recs = raw_rec(key, len);
	a.recs_len = KWQ_REC_SIZE(len);
	a.nr = 1;
	return ioctl(fd, cmd, &a);
}

static int raw_done_get(int fd, const void *key, uint32_t len)
{
	struct kwq_done_get_args a;

	memset(&a, 0, sizeof(a));
	a.done_recs = raw_rec(key, len);
	a.done_len = KWQ_REC_SIZE(len);
	a.done_nr = 1;
	a.get.recs = (uintptr_t)recs;
	a.get.recs_len = KWQ_REC_SIZE_MAX;
	a.get.max = 1;
	return ioctl(fd, KWQ_IOC_DONE_GET, &a);
}

/* Fail the key of @len bytes at @key until it is dead; 1 if it died. */
static int kill_key(int fd, const void *key, size_t len)
{
	uint64_t delay = 0;
	int i;

	for (i = 0; i < 3; i++) {
		if (!take_is(fd, key, len) ||
		    kwq_add_rate_limited(fd, key, len, &delay) < 0 ||
		    kwq_done(fd, key, len) < 0)
			return 0;
		if (delay == KWQ_DELAY_DEAD)
			return 1;
	}
	return 0;
}

/* Every one-key call on a key of @len bytes. */
static void one_key_calls(int fd, size_t len)
{
	struct kwq_info_rec info;
	uint64_t delay = 1;
	char name[64];
	int done = 0, ok;

	snprintf(name, sizeof(name), "add_inspect_get_%zu", len);
	ok = kwq_add(fd, K, len) == 0 && kwq_inspect(fd, K, len, &info) == 0 &&
	     info.len == len && info.state == KWQ_KEY_READY && take_is(fd, K, len);
	ktap_check(ok, name, "errno %s", kt_ename(errno));

	snprintf(name, sizeof(name), "touch_rate_limited_num_requeues_done_%zu", len);
	ok = kwq_touch(fd, K, len, 0) == 0 &&
	     kwq_add_rate_limited(fd, K, len, &delay) == 0 && delay == 1000 &&
	     kwq_num_requeues(fd, K, len) == 1 && kwq_done(fd, K, len) == 0;
	ktap_check(ok, name, "delay %llu errno %s", (unsigned long long)delay,
		   kt_ename(errno));

	/* Its second failure moves it to the dead set: revive, purge. */
	snprintf(name, sizeof(name), "dead_revive_purge_%zu", len);
	ok = kill_key(fd, K, len) &&
	     kwq_inspect(fd, K, len, &info) == 0 && info.state == KWQ_KEY_DEAD &&
	     kwq_revive(fd, K, len) == 0 && kill_key(fd, K, len) &&
	     kwq_purge(fd, K, len) == 0 && kwq_inspect(fd, K, len, &info) < 0 &&
	     errno == ENOENT;
	ktap_check(ok, name, "errno %s", kt_ename(errno));

	/*
	 * The worker loop's call: finishing a long key (the general path),
	 * and taking one after finishing a short key (the one-key path,
	 * whose stack buffer is too small for it).
	 */
	snprintf(name, sizeof(name), "done_get_one_%zu", len);
	ok = kwq_add(fd, K, len) == 0 && kwq_add(fd, "s", 1) == 0 &&
	     kwq_done_get_one(fd, NULL, 0, &done, got, sizeof(got), 0, 0) ==
	     (long)len && !memcmp(got, K, len) &&
	     kwq_add(fd, K + 1, len) == 0 &&
	     kwq_done_get_one(fd, K, len, &done, got, sizeof(got), 0, 0) == 1 &&
	     done && got[0] == 's' &&
	     kwq_done_get_one(fd, "s", 1, &done, got, sizeof(got), 0, 0) ==
	     (long)len && done && !memcmp(got, K + 1, len) &&
	     kwq_done(fd, K + 1, len) == 0 && kt_len(fd) == 0;
	ktap_check(ok, name, "errno %s", kt_ename(errno));

	/* Forget and remove of a long key. */
	snprintf(name, sizeof(name), "forget_remove_%zu", len);
	ok = kwq_add(fd, K, len) == 0 && kwq_forget(fd, K, len) == 0 &&
	     kwq_remove(fd, K, len) == 0 && kt_len(fd) == 0;
	ktap_check(ok, name, "errno %s", kt_ename(errno));
}

/* A batch of short and long keys through every batch call. */
static void batch_calls(int fd, size_t len)
{
	const unsigned char *k[4] = { (const unsigned char *)"a", K,
				      (const unsigned char *)"b", K + 1 };
	const size_t lens[4] = { 1, len, 1, len };
	struct kwq_recbuf rb = KWQ_RECBUF_INIT;
	const struct kwq_info_rec *r;
	uint64_t cursor = 0;
	unsigned int done = 0;
	size_t used = 0, off = 0;
	const void *key;
	char name[64];
	int i, n, ok;

	for (i = 0; i < 4; i++)
		kwq_recbuf_push(&rb, k[i], lens[i], 0);
	snprintf(name, sizeof(name), "batch_add_get_%zu", len);
	n = -1;
	ok = kwq_add_batch(fd, &rb, NULL, &done) == 0 && done == 4 &&
	     (n = kwq_get_batch(fd, recs, sizeof(recs), 8, 0, 0, &used)) == 4 &&
	     recs_are(recs, used, 4, k, lens);
	ktap_check(ok, name, "got %d errno %s", n, kt_ename(errno));

	snprintf(name, sizeof(name), "batch_inspect_list_%zu", len);
	n = (int)kwq_inspect_list(fd, KWQ_KEY_STATES_ALL, &cursor, infos,
				  sizeof(infos), 16, &used);
	ok = n == 4 && cursor == 0;
	for (i = 0; ok && i < 4; i++)
		ok = kwq_info_next(infos, used, &off, &r, &key) == 1 &&
		     r->state == KWQ_KEY_PROCESSING &&
		     (r->len == 1 || r->len == len);
	ktap_check(ok, name, "listed %d errno %s", n, kt_ename(errno));

	snprintf(name, sizeof(name), "batch_done_forget_remove_%zu", len);
	ok = kwq_done_batch(fd, &rb, &done) == 0 && done == 4 &&
	     kwq_forget_batch(fd, &rb, &done) == 0 && done == 4 &&
	     kwq_add_batch(fd, &rb, NULL, &done) == 0 && kt_len(fd) == 4 &&
	     kwq_remove_batch(fd, &rb, &done) == 0 && done == 4 &&
	     kt_len(fd) == 0;
	ktap_check(ok, name, "done %u errno %s", done, kt_ename(errno));

	/* DONE_GET of the batch taking it again, in one round. */
	snprintf(name, sizeof(name), "batch_done_get_%zu", len);
	n = -1;
	ok = kwq_add_batch(fd, &rb, NULL, &done) == 0 &&
	     kwq_get_batch(fd, recs, sizeof(recs), 8, 0, 0, &used) == 4 &&
	     kwq_add_batch(fd, &rb, NULL, &done) == 0 &&
	     (n = kwq_done_get(fd, &rb, &done, recs, sizeof(recs), 8, 0, 0, 0,
			       &used)) == 4 && done == 4 &&
	     recs_are(recs, used, 4, k, lens) &&
	     kwq_done_batch(fd, &rb, &done) == 0 && kt_len(fd) == 0;
	ktap_check(ok, name, "got %d errno %s", n, kt_ename(errno));
	kwq_recbuf_free(&rb);
}

/* 1025 bytes: EINVAL from the kernel on every call that takes a key. */
static void too_long(int fd)
{
	struct kwq_info_rec info;
	int ok;

	ok = raw_keys(fd, KWQ_IOC_ADD, K, TOO_LONG) < 0 && errno == EINVAL &&
	     raw_keys(fd, KWQ_IOC_DONE, K, TOO_LONG) < 0 && errno == EINVAL &&
	     raw_keys(fd, KWQ_IOC_FORGET, K, TOO_LONG) < 0 && errno == EINVAL &&
	     raw_keys(fd, KWQ_IOC_REMOVE, K, TOO_LONG) < 0 && errno == EINVAL &&
	     raw_done_get(fd, K, TOO_LONG) < 0 && errno == EINVAL;
	ktap_check(ok, "records_of_1025_bytes_einval", "errno %s",
		   kt_ename(errno));
	ok = kwq_touch(fd, K, TOO_LONG, 0) < 0 && errno == EINVAL &&
	     kwq_num_requeues(fd, K, TOO_LONG) < 0 && errno == EINVAL &&
	     kwq_revive(fd, K, TOO_LONG) < 0 && errno == EINVAL &&
	     kwq_purge(fd, K, TOO_LONG) < 0 && errno == EINVAL &&
	     kwq_inspect(fd, K, TOO_LONG, &info) < 0 && errno == EINVAL;
	ktap_check(ok, "keys_of_1025_bytes_einval", "errno %s",
		   kt_ename(errno));
	ktap_check(kt_len(fd) == 0, "nothing_queued_by_1025", "len %ld",
		   kt_len(fd));
}

/*
 * Walk the queue's keys with a version 1 INSPECT buffer: the records
 * listed (each must be one key's and whole); *@err the errno that ended
 * the walk, 0 if it ended.
 */
static int walk_v1(int fd, int *err)
{
	const struct kwq_info_rec *r;
	int listed = 0, calls = 0;
	uint64_t cursor = 0;
	size_t used, off;
	const void *key;
	long n;

	*err = 0;
	do {
		n = kwq_inspect_list(fd, KWQ_KEY_STATES_ALL, &cursor, infos,
				     KWQ_INFO_REC_SIZE_MAX_VER1, 16, &used);
		if (n < 0) {
			*err = errno;
			break;
		}
		off = 0;
		if (n > 1 || (n == 1 && (kwq_info_next(infos, used, &off, &r,
						       &key) != 1 ||
					 off != used))) {
			*err = EPROTO;
			break;
		}
		listed += n;
	} while (cursor && ++calls < 1000);
	return listed;
}

/* Buffers of version 1's size (keys of up to 256 bytes), as old binaries. */
static void version1_buffers(int fd)
{
	const unsigned char *k[2] = { (const unsigned char *)"s1", K };
	const size_t lens[2] = { 2, 317 };
	struct kwq_inspect_args ia;
	int ok, listed, err;
	pid_t pid;
	size_t used;
	long n;

	/* A get of one version 1 record: short keys as before. */
	ok = kwq_add(fd, "s1", 2) == 0 &&
	     kwq_get_batch(fd, recs, KWQ_REC_SIZE_MAX_VER1, 4, 0, 0, &used) ==
	     1 && recs_are(recs, used, 1, k, lens) && kwq_done(fd, "s1", 2) == 0;
	ktap_check(ok, "v1_get_buffer_takes_short_keys", "errno %s",
		   kt_ename(errno));

	/* A long key first: EMSGSIZE, both keys stay ready in order. */
	ok = kwq_add(fd, K, 317) == 0 && kwq_add(fd, "s1", 2) == 0 &&
	     kwq_get_batch(fd, recs, KWQ_REC_SIZE_MAX_VER1, 4, 0, 0, &used) < 0 &&
	     errno == EMSGSIZE && kt_len(fd) == 2 &&
	     kwq_get(fd, got, KWQ_KEY_LEN_MAX_VER1, 0, 0) < 0 &&
	     errno == EMSGSIZE && kt_len(fd) == 2 &&
	     kwq_done_get_one(fd, NULL, 0, NULL, got, KWQ_KEY_LEN_MAX_VER1, 0,
			      0) < 0 && errno == EMSGSIZE && kt_len(fd) == 2;
	ktap_check(ok, "v1_buffer_long_key_first_emsgsize_kept", "errno %s len %ld",
		   kt_ename(errno), kt_len(fd));
	ok = take_is(fd, K, 317) && take_is(fd, "s1", 2) &&
	     kwq_done(fd, K, 317) == 0 && kwq_done(fd, "s1", 2) == 0;
	ktap_check(ok, "v1_kept_keys_come_in_order", "errno %s",
		   kt_ename(errno));

	/* A short key, then a long one: the get stops between them. */
	ok = kwq_add(fd, "s1", 2) == 0 && kwq_add(fd, K, 317) == 0 &&
	     kwq_get_batch(fd, recs, KWQ_REC_SIZE_MAX_VER1, 4, 0, 0, &used) ==
	     1 && recs_are(recs, used, 1, k, lens) && kt_len(fd) == 1 &&
	     kwq_get_batch(fd, recs, sizeof(recs), 4, 0, 0, &used) == 1 &&
	     recs_are(recs, used, 1, k + 1, lens + 1) &&
	     kwq_done(fd, "s1", 2) == 0 && kwq_done(fd, K, 317) == 0;
	ktap_check(ok, "v1_get_stops_before_a_long_key", "errno %s",
		   kt_ename(errno));

	/* A buffer of exactly two records takes two: the room decides. */
	ok = kwq_add(fd, K, 317) == 0 && kwq_add(fd, K + 1, 317) == 0 &&
	     kwq_add(fd, "s1", 2) == 0 &&
	     (n = kwq_get_batch(fd, recs, 2 * KWQ_REC_SIZE(317) + 8, 4, 0, 0,
				&used)) == 2 && used == 2 * KWQ_REC_SIZE(317) &&
	     kt_len(fd) == 1;
	ktap_check(ok, "get_takes_what_fits", "errno %s", kt_ename(errno));
	kwq_done(fd, K, 317);
	kwq_done(fd, K + 1, 317);
	kwq_remove(fd, "s1", 2);

	/*
	 * A get that waits for more keys (min_nr 3, no timeout) stops once
	 * its buffer is full (two records): it does not wait for a key it
	 * could not take. A child makes the call; 10 s are its limit.
	 */
	kwq_add(fd, K, 317);
	kwq_add(fd, K + 1, 317);
	ok = 0;
	pid = fork();
	if (pid == 0) {
		struct kwq_get_args ga;

		alarm(10);
		memset(&ga, 0, sizeof(ga));
		ga.recs = (uintptr_t)recs;
		ga.recs_len = 2 * KWQ_REC_SIZE(317);
		ga.max = 3;
		ga.min_nr = 3;
		ga.timeout_ns = -1;
		_exit(ioctl(fd, KWQ_IOC_GET, &ga) == 0 && ga.nr == 2 ? 0 : 1);
	}
	if (pid > 0)
		ok = kt_wait(pid) == 0;
	ktap_check(ok, "get_waiting_for_more_stops_when_full",
		   "child exit (128 + SIGALRM: it waited on)");
	kwq_done(fd, K, 317);
	kwq_done(fd, K + 1, 317);

	/* INSPECT: a version 1 buffer lists a key a call... */
	kwq_add(fd, "s1", 2);
	kwq_add(fd, "s2", 2);
	listed = walk_v1(fd, &err);
	ktap_check(listed == 2 && !err, "v1_inspect_buffer_lists_a_key_a_call",
		   "listed %d, %s", listed, kt_ename(err));
	/* ... and stops at a key whose record does not fit: EMSGSIZE. */
	kwq_remove(fd, "s2", 2);
	kwq_add(fd, K, 317);
	listed = walk_v1(fd, &err);
	ktap_check(listed <= 1 && err == EMSGSIZE,
		   "v1_inspect_buffer_long_key_emsgsize", "listed %d, %s",
		   listed, kt_ename(err));
	memset(&ia, 0, sizeof(ia));
	ia.key = (uintptr_t)K;
	ia.len = 317;
	ia.recs = (uintptr_t)infos;
	ia.recs_len = KWQ_INFO_REC_SIZE_MAX_VER1;
	KT_ERR(ioctl(fd, KWQ_IOC_INSPECT, &ia), EINVAL,
	       "inspect_one_buffer_smaller_than_its_record_einval");
	ia.recs_len = KWQ_INFO_REC_SIZE(317);
	KT_OK(ioctl(fd, KWQ_IOC_INSPECT, &ia), "inspect_one_buffer_of_its_record");
	kwq_remove(fd, K, 317);
	kwq_remove(fd, "s1", 2);
}

int main(void)
{
	int fd, i;

	kt_setup("kwq_keys", 32, 120);
	for (i = 0; i < TOO_LONG; i++)
		K[i] = (unsigned char)(i * 13 + 5);
	ktap_check(KWQ_KEY_LEN_MAX == 1024 && KWQ_REC_SIZE_MAX == 1032 &&
		   KWQ_REC_SIZE_MAX_VER1 == 264 &&
		   KWQ_INFO_REC_SIZE_MAX_VER1 == KWQ_INFO_REC_SIZE(256),
		   "limits", "KWQ_KEY_LEN_MAX %d", KWQ_KEY_LEN_MAX);
	/* A dead set after one retry; requeued keys due at once. */
	fd = kt_dead_queue("keys", 1, 0);
	one_key_calls(fd, 317);
	one_key_calls(fd, 1024);
	batch_calls(fd, 317);
	batch_calls(fd, 1024);
	too_long(fd);
	version1_buffers(fd);
	close(fd);
	return ktap_end();
}
