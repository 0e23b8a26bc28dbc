// SPDX-License-Identifier: GPL-2.0
/*
 * kwq_leak: what an unprivileged user hands /dev/kwq in place of a record
 * (nothing, a few bytes, a header without a key, an odd length) is EINVAL
 * on every path that takes records, and never makes the kernel read a key
 * it did not copy in (issue 30, finding 1: a one-record ADD or DONE_GET
 * of an empty buffer queued, or finished, a key made of stale kernel
 * stack).
 *
 * Stale stack is made deterministic: each bad call follows a good call
 * of the same path on another queue, whose record the kernel's buffer
 * then still holds. A kernel that reads a record it did not copy in
 * therefore queues (or finishes) that key where none was named. The whole
 * suite runs as uid/gid 65534 (nobody), as the attacker did.
 */
#include "kwqtest.h"

#include <grp.h>

#define NOBODY		65534
#define ROUNDS		200
static const char secret[] = "primed-stack-record-of-another-queue";

static unsigned char out[4 * KWQ_REC_SIZE_MAX] __attribute__((aligned(8)));

static long processing(int fd)
{
	struct kwq_stats_args st;

	return kwq_stats(fd, &st) ? -1 : (long)st.processing;
}

/* A raw KWQ_IOC_ADD-family call of @nr records at @recs, @len bytes. */
static int keys_raw(int fd, unsigned long cmd, const void *recs,
		    uint32_t len, uint32_t nr)
{
	struct kwq_keys_args a;

	memset(&a, 0, sizeof(a));
	a.recs = (uintptr_t)recs;
	a.recs_len = len;
	a.nr = nr;
	return ioctl(fd, cmd, &a);
}

/* A raw one-key-to-finish KWQ_IOC_DONE_GET, taking at most one key. */
static int done_get_raw(int fd, const void *recs, uint32_t len, uint32_t nr)
{
	struct kwq_done_get_args a;

	memset(&a, 0, sizeof(a));
	a.done_recs = (uintptr_t)recs;
	a.done_len = len;
	a.done_nr = nr;
	a.get.recs = (uintptr_t)out;
	a.get.recs_len = sizeof(out);
	a.get.max = 1;
	a.get.timeout_ns = 0;
	return ioctl(fd, KWQ_IOC_DONE_GET, &a);
}

/* Every key left in @fd's queue is one of @known (comma-separated). */
static int only_known_keys(int fd, const char *known, char *got, size_t size)
{
	char list[64 * 40], *k, *save = NULL;
	int n, bad = 0;

	n = kt_take(fd, 0, 0, 64, list, sizeof(list));
	strncpy(got, list, size - 1);
	got[size - 1] = '\0';
	for (k = strtok_r(list, ",", &save); k; k = strtok_r(NULL, ",", &save))
		bad += !strstr(known, k);
	return n >= 0 && !bad;
}

int main(void)
{
	/* One byte short, one over, odd, a header alone, a key's worth. */
	static const uint32_t sizes[] = { 0, 1, 4, 7, 8, 9, 12, 15, 17, 23 };
	unsigned char junk[64] __attribute__((aligned(8)));
	char name_a[KWQ_NAME_LEN], name_b[KWQ_NAME_LEN], got[256];
	int fa, fb, i, j, ok, bad;
	unsigned long cmd;
	long len;

	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY)) {
		printf("    # cannot become uid %d: %s\n", NOBODY, strerror(errno));
		return 1;
	}
	kt_setup("kwq_leak", 7, 120);
	fa = kt_queue("leak-a", NULL, name_a);
	fb = kt_queue("leak-b", NULL, name_b);
	memset(junk, 0x5a, sizeof(junk));

	/*
	 * The one-key ADD of an empty buffer, right after a one-key ADD of
	 * @secret on queue a: EINVAL, and queue b stays empty.
	 */
	for (i = 0, ok = 0; i < ROUNDS; i++) {
		kwq_add(fa, secret, sizeof(secret) - 1);
		errno = 0;
		ok += keys_raw(fb, KWQ_IOC_ADD, NULL, 0, 1) < 0 &&
		      errno == EINVAL;
	}
	len = kt_len(fb);
	ktap_check(ok == ROUNDS && len == 0, "add_one_empty_buffer_einval",
		   "%d of %d EINVAL, queue b holds %ld keys", ok, ROUNDS, len);

	/* The same after every size that cannot hold a record. */
	for (i = 0, ok = 0, bad = 0; i < (int)(sizeof(sizes) / sizeof(*sizes)); i++) {
		for (j = 0; j < 2; j++) {
			kwq_add(fa, secret, sizeof(secret) - 1);
			errno = 0;
			if (keys_raw(fb, KWQ_IOC_ADD, j ? junk : NULL,
				     sizes[i], 1) < 0 &&
			    errno == (j || !sizes[i] ? EINVAL : EFAULT))
				ok++;
			else
				bad = (int)sizes[i];
		}
	}
	len = kt_len(fb);
	ktap_check(ok == 2 * (int)(sizeof(sizes) / sizeof(*sizes)) && len == 0,
		   "add_one_short_buffers_einval",
		   "%d of %zu refused (last wrong at %d bytes), queue b holds %ld",
		   ok, 2 * sizeof(sizes) / sizeof(*sizes), bad, len);

	/*
	 * The one-key DONE_GET of an empty buffer, right after a one-key
	 * DONE_GET finishing @secret on queue a, while b's fd holds @secret
	 * too: EINVAL, and b's lease is untouched.
	 */
	kwq_add(fb, secret, sizeof(secret) - 1);
	kt_take(fb, 0, 0, 1, got, sizeof(got));
	for (i = 0, ok = 0; i < ROUNDS / 4; i++) {
		struct kwq_recbuf one = KWQ_RECBUF_INIT;

		kwq_add(fa, secret, sizeof(secret) - 1);
		kt_take(fa, 0, 0, 1, got, sizeof(got));
		kwq_recbuf_push_str(&one, secret, 0);
		kwq_done_get(fa, &one, NULL, out, sizeof(out), 1, 0, 0, 0, NULL);
		kwq_recbuf_free(&one);
		errno = 0;
		ok += done_get_raw(fb, NULL, 0, 1) < 0 && errno == EINVAL;
		if (processing(fb) != 1) {
			/* finished: hold it again to count the next rounds */
			kwq_add(fb, secret, sizeof(secret) - 1);
			kt_take(fb, 0, 0, 1, got, sizeof(got));
		}
	}
	ktap_check(ok == ROUNDS / 4 && processing(fb) == 1,
		   "done_get_one_empty_buffer_einval",
		   "%d of %d EINVAL, b processing %ld", ok, ROUNDS / 4,
		   processing(fb));

	/* Every record path, one and two records, every short size. */
	for (i = 0, ok = 0, bad = 0; i < (int)(sizeof(sizes) / sizeof(*sizes)); i++) {
		for (j = 1; j <= 2; j++) {
			for (cmd = 0; cmd < 4; cmd++) {
				static const unsigned long cmds[] = {
					KWQ_IOC_ADD, KWQ_IOC_DONE,
					KWQ_IOC_FORGET, KWQ_IOC_REMOVE,
				};

				errno = 0;
				if (keys_raw(fb, cmds[cmd], junk, sizes[i], j) < 0 &&
				    errno == EINVAL)
					ok++;
				else
					bad = (int)sizes[i];
			}
			errno = 0;
			if (done_get_raw(fb, junk, sizes[i], j) < 0 &&
			    errno == EINVAL)
				ok++;
			else
				bad = (int)sizes[i];
		}
	}
	ktap_check(ok == 10 * (int)(sizeof(sizes) / sizeof(*sizes)) &&
		   kt_len(fb) == 0 && processing(fb) == 1,
		   "every_record_path_short_sizes_einval",
		   "%d of %zu refused (last wrong at %d bytes), len %ld processing %ld",
		   ok, 10 * sizeof(sizes) / sizeof(*sizes), bad, kt_len(fb),
		   processing(fb));

	/* A count of records with no buffer at all, on every path. */
	ok = 0;
	for (cmd = 0; cmd < 4; cmd++) {
		static const unsigned long cmds[] = {
			KWQ_IOC_ADD, KWQ_IOC_DONE, KWQ_IOC_FORGET,
			KWQ_IOC_REMOVE,
		};

		errno = 0;
		ok += keys_raw(fb, cmds[cmd], NULL, 0, KWQ_BATCH_MAX) < 0 &&
		      errno == EINVAL;
	}
	errno = 0;
	ok += done_get_raw(fb, NULL, 0, KWQ_BATCH_MAX) < 0 && errno == EINVAL;
	ktap_check(ok == 5, "many_records_no_buffer_einval", "%d of 5 EINVAL",
		   ok);

	/* What is left to take is only what this suite added. */
	kt_done(fb, secret);
	ktap_check(only_known_keys(fb, secret, got, sizeof(got)) && kt_len(fb) == 0,
		   "queue_b_holds_only_added_keys", "took \"%s\"", got);
	ktap_check(only_known_keys(fa, secret, got, sizeof(got)),
		   "queue_a_holds_only_added_keys", "took \"%s\"", got);
	close(fa);
	close(fb);
	fa = kt_dev();
	kwq_destroy(fa, name_a);
	kwq_destroy(fa, name_b);
	close(fa);
	return ktap_end();
}
