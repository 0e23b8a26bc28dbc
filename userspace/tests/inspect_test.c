// SPDX-License-Identifier: GPL-2.0
/*
 * Per-key introspection through /dev/kwq and libkwq: KWQ_IOC_INSPECT of
 * one key in every state (the holder is the opener's pid), a walk over a
 * queue of thousands of keys in chunks that lists each key once, the
 * state filter, the debugfs keys file, and bad input: EINVAL, ESTALE,
 * ENOENT, EFAULT, with the caller's cursor untouched.
 */
#include "kwqtest.h"

#define NKEYS	3000
#define DEBUGFS	"/sys/kernel/debug"

static struct kwq_info_rec info(int fd, const char *key, int *ret)
{
	struct kwq_info_rec r;

	memset(&r, 0xff, sizeof(r));
	*ret = kwq_inspect(fd, key, strlen(key), &r);
	return r;
}

/*
 * Walk the keys of @states, @max per call: how many records; *@twice the
 * keys "k-N" seen twice, *@calls the calls, *@over records past @max.
 */
static long walk(int fd, unsigned int states, unsigned int max,
		 unsigned char *seen, int *twice, int *calls, int *over)
{
	static uint64_t buf[KWQ_INSPECT_MAX * KWQ_INFO_REC_SIZE_MAX / 8];
	const struct kwq_info_rec *r;
	uint64_t cursor = 0;
	const void *key;
	size_t used, off;
	char k[32];
	long n, total = 0;
	unsigned int i;

	*twice = *calls = *over = 0;
	for (;;) {
		n = kwq_inspect_list(fd, states, &cursor, buf, sizeof(buf), max,
				     &used);
		/*
		 * The table grows (its work may still run after the adds,
		 * on a busy machine): the cursor is kept, ask again. Not a
		 * do-while: a continue there tested the first call's cursor
		 * (0) and ended the walk with nothing listed.
		 */
		if (n < 0 && errno == EAGAIN) {
			kt_sleep_ms(1);
			continue;
		}
		if (n < 0) {
			printf("    # inspect list: %s\n", strerror(errno));
			return -1;
		}
		(*calls)++;
		*over += n > (long)max;
		off = 0;
		while (kwq_info_next(buf, used, &off, &r, &key) == 1) {
			snprintf(k, sizeof(k), "%.*s", (int)r->len,
				 (const char *)key);
			if (sscanf(k, "k-%u", &i) == 1 && i < NKEYS && seen[i]++)
				(*twice)++;
			total++;
		}
		if (!cursor)
			break;
	}
	return total;
}

static int inspect_ioctl(int fd, struct kwq_inspect_args *a)
{
	return ioctl(fd, KWQ_IOC_INSPECT, a);
}

/* A list call's arguments: every state, one record at a time into @buf. */
static void list_args(struct kwq_inspect_args *a, void *buf, size_t size)
{
	memset(a, 0, sizeof(*a));
	a->recs = (uintptr_t)buf;
	a->recs_len = (uint32_t)size;
	a->states = KWQ_KEY_STATES_ALL;
	a->max = 1;
}

int main(void)
{
	static unsigned char seen[NKEYS];
	static uint64_t buf[KWQ_INFO_REC_SIZE_MAX];
	struct kwq_info_rec r;
	struct kwq_inspect_args a;
	char name[KWQ_NAME_LEN], path[256], line[512], key[32];
	int fd, fd2, ret, twice, calls, over, i, found;
	long n;
	FILE *f;

	kt_setup("kwq_inspect", 26, 120);
	fd = kt_queue("inspect", NULL, name);

	/* one key, each state */
	r = info(fd, "none", &ret);
	ktap_check(ret < 0 && errno == ENOENT, "unknown_key_is_enoent",
		   "ret %d errno %s", ret, kt_ename(errno));
	kt_add(fd, "r");
	r = info(fd, "r", &ret);
	ktap_check(!ret && r.state == KWQ_KEY_READY && r.len == 1 &&
		   r.holder == 0 && r.flags == 0, "ready_key", "state %u flags %#x",
		   r.state, r.flags);
	KT_OK(kwq_add_after(fd, "w", 1, 60 * KT_SEC), "add_after");
	r = info(fd, "w", &ret);
	ktap_check(!ret && r.state == KWQ_KEY_WAITING && r.flags == KWQ_KEY_DUE &&
		   r.due_ns > 50 * KT_SEC && r.due_ns <= 60 * KT_SEC,
		   "waiting_key_time_left", "state %u due %llu", r.state,
		   (unsigned long long)r.due_ns);
	kt_take(fd, 0, 0, 1, line, sizeof(line));
	r = info(fd, "r", &ret);
	ktap_check(!ret && r.state == KWQ_KEY_PROCESSING &&
		   r.holder == (uint32_t)getpid(), "processing_key_holder_is_opener",
		   "state %u holder %u pid %d", r.state, r.holder, (int)getpid());
	kt_add(fd, "r");
	r = info(fd, "r", &ret);
	ktap_check(!ret && r.flags == KWQ_KEY_DIRTY, "processing_key_added_again_is_dirty",
		   "flags %#x", r.flags);
	kt_done(fd, "r");
	kt_take(fd, KWQ_GET_DETACHED, 0, 1, line, sizeof(line));
	r = info(fd, "r", &ret);
	ktap_check(!ret && r.state == KWQ_KEY_PROCESSING && r.holder == 0,
		   "detached_key_has_no_holder", "state %u holder %u", r.state,
		   r.holder);
	kt_done(fd, "r");

	/* bad input: EINVAL and nothing written */
	list_args(&a, buf, sizeof(buf));
	a.cursor = 12345;
	a.nr = 77;
	KT_ERR(inspect_ioctl(fd, &a), ESTALE, "forged_cursor_is_estale");
	ktap_check(a.cursor == 12345 && a.nr == 77, "failed_call_writes_nothing",
		   "cursor %llu nr %u", (unsigned long long)a.cursor, a.nr);
	a.cursor = 0;
	a.states = 0;
	KT_ERR(inspect_ioctl(fd, &a), EINVAL, "no_states_is_einval");
	a.states = 1;
	KT_ERR(inspect_ioctl(fd, &a), EINVAL, "unknown_state_bit_is_einval");
	a.states = KWQ_KEY_STATES_ALL;
	a.max = 0;
	KT_ERR(inspect_ioctl(fd, &a), EINVAL, "max_0_is_einval");
	a.max = KWQ_INSPECT_MAX + 1;
	KT_ERR(inspect_ioctl(fd, &a), EINVAL, "max_too_big_is_einval");
	a.max = 1;
	a.recs_len = KWQ_INFO_REC_SIZE_MAX_VER1 - 1;
	KT_ERR(inspect_ioctl(fd, &a), EINVAL, "small_buffer_is_einval");
	a.recs_len = sizeof(buf);
	a.key = (uintptr_t)"w";
	a.len = 1;
	KT_ERR(inspect_ioctl(fd, &a), EINVAL, "key_with_states_is_einval");
	a.states = 0;
	a.max = 0;
	a.len = KWQ_KEY_LEN_MAX + 1;
	KT_ERR(inspect_ioctl(fd, &a), EINVAL, "key_too_long_is_einval");
	a.len = 1;
	a.recs = 8;
	KT_ERR(inspect_ioctl(fd, &a), EFAULT, "bad_buffer_is_efault");
	a.recs = (uintptr_t)buf;
	KT_OK(inspect_ioctl(fd, &a), "one_key_by_ioctl");
	ktap_check(a.nr == 1 && a.used == KWQ_INFO_REC_SIZE(1),
		   "one_key_one_record", "nr %u used %u", a.nr, a.used);

	/* a walk over thousands of keys */
	for (i = 0; i < NKEYS; i++) {
		snprintf(key, sizeof(key), "k-%d", i);
		kt_add(fd, key);
	}
	n = walk(fd, KWQ_KEY_STATES_ALL, 10, seen, &twice, &calls, &over);
	found = 0;
	for (i = 0; i < NKEYS; i++)
		found += seen[i] == 1;
	ktap_check(n == NKEYS + 1 && found == NKEYS && !twice,
		   "walk_lists_every_key_once", "listed %ld found %d twice %d",
		   n, found, twice);
	ktap_check(calls >= NKEYS / 10 && !over, "walk_in_bounded_chunks",
		   "%d calls, %d over max", calls, over);
	memset(seen, 0, sizeof(seen));
	n = walk(fd, 1u << KWQ_KEY_WAITING, 64, seen, &twice, &calls, &over);
	ktap_check(n == 1, "walk_keeps_to_the_state", "listed %ld", n);

	/* a cursor of another queue */
	fd2 = kt_queue("inspect2", NULL, NULL);
	kt_add(fd2, "x");
	kt_add(fd2, "y");
	list_args(&a, buf, sizeof(buf));
	KT_OK(inspect_ioctl(fd, &a), "walk_first_chunk");
	KT_ERR(a.cursor ? inspect_ioctl(fd2, &a) : (errno = ESTALE, -1), ESTALE,
	       "cursor_of_other_queue_is_estale");
	close(fd2);

	/* the debugfs keys file */
	snprintf(path, sizeof(path), DEBUGFS "/kwq/ipc:%lu/%s/keys",
		 kt_ipc_inum(), name);
	f = fopen(path, "r");
	if (!f) {
		ktap_skip("debugfs_keys_lists_every_key", "no debugfs");
		ktap_skip("debugfs_keys_line_format", "no debugfs");
	} else {
		found = 0;
		ret = 0;
		while (fgets(line, sizeof(line), f)) {
			found++;
			if (strncmp(line, "w waiting prio=0 failures=0 due=", 32) == 0)
				ret = 1;
		}
		fclose(f);
		ktap_check(found == NKEYS + 1, "debugfs_keys_lists_every_key",
			   "%d lines", found);
		ktap_check(ret, "debugfs_keys_line_format", "no line for w");
	}
	close(fd);
	return ktap_end();
}
