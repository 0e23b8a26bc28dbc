// SPDX-License-Identifier: GPL-2.0
/*
 * libkwq's ring API (kwq_ring_*(), Documentation/libkwq.rst): adds
 * published with no system call while nobody waits and seen by the next
 * reader, a sleeping getter woken by the producer's doorbell, keys that
 * span slots and wrap around the ring's end, a full submission ring that
 * drops nothing, error completions handed to the caller (reap and
 * callback), stale leases, the worker loop, the status page.
 */
#include "kwqtest.h"

#define NKEYS	500

/* Completions seen by cb(). */
static struct kwq_cqe cb_seen[8];
static unsigned int cb_nr;

static void cb(void *arg, const struct kwq_cqe *cqe)
{
	(void)arg;
	if (cb_nr < 8)
		cb_seen[cb_nr] = *cqe;
	cb_nr++;
}

/* A fd attached to @name with a ring (exits on failure). */
static struct kwq_ring *kt_ring(const char *name, unsigned int sq,
				unsigned int leases)
{
	struct kwq_ring *r;
	int fd = kt_attach(name);

	if (kwq_ring_setup(fd, sq, 0, leases, &r) < 0) {
		printf("    # kwq_ring_setup: %s\n", strerror(errno));
		exit(1);
	}
	return r;
}

static void ring_close(struct kwq_ring *r)
{
	int fd = kwq_ring_fd(r);

	kwq_ring_free(r);
	close(fd);
}

int main(void)
{
	struct kwq_queue_opts o = { .max_items = 1 };
	static unsigned char big[3][KWQ_KEY_LEN_MAX];
	struct kwq_ring_lease l[4], stale;
	char name[KWQ_NAME_LEN], buf[64];
	struct kwq_ring *p, *w, *r2;
	struct kwq_stats_args st_args;
	struct kwq_cqe cqe[4];
	unsigned int i, got;
	uint32_t idx;
	long n;
	int fd, ret, st, pfd[2];
	pid_t pid;

	kt_setup("kwq_libring", 25, 300);
	fd = kt_queue("libring", NULL, name);

	/* setup: argument checks, one ring per fd */
	KT_ERR(kwq_ring_setup(fd, 48, 0, 0, &p), EINVAL,
	       "setup_size_not_power_of_two");
	KT_ERR(kwq_ring_setup(fd, 0, 0, KWQ_RING_LEASES_MAX + 1, &p), EINVAL,
	       "setup_too_many_leases");
	KT_OK(kwq_ring_setup(fd, 32, 32, 0, &p), "setup");
	KT_ERR(kwq_ring_setup(fd, 32, 32, 0, &w), EBUSY, "setup_twice_ebusy");
	w = kt_ring(name, 0, 4);

	/* an add with nobody waiting: no doorbell, seen by the next reader */
	ret = kwq_ring_prep(p, KWQ_SQE_ADD, 0, "a", 1, 0, 0, NULL);
	ret = ret ? ret : kwq_ring_publish(p);
	n = kt_len(fd);
	ktap_check(ret == 0 && n == 1, "add_published_no_doorbell_then_seen",
		   "publish %d (1: rang), len %ld", ret, n);
	ktap_check(kwq_ring_ready(p) == 1, "status_page_ready",
		   "ready %llu", (unsigned long long)kwq_ring_ready(p));
	got = kwq_ring_get(w, l, 4, 1, 0);
	ktap_check(got == 1 && l[0].len == 1 && !memcmp(l[0].key, "a", 1) &&
		   l[0].gen, "get_leases_the_key", "got %u len %zu gen %llu",
		   got, got == 1 ? l[0].len : 0,
		   got == 1 ? (unsigned long long)l[0].gen : 0ULL);
	stale = l[0];
	KT_OK(kwq_ring_done_lease(w, &l[0]), "done_lease");
	n = kt_len(fd);
	ret = kwq_inspect(fd, "a", 1, &(struct kwq_info_rec){ 0 });
	ktap_check(n == 0 && ret == -1 && errno == ENOENT,
		   "done_lease_finishes_the_key", "len %ld inspect %d %s", n,
		   ret, kt_ename(errno));

	/* a lease finished twice: ESTALE, to the callback, nothing changed */
	kwq_ring_set_callback(w, cb, NULL);
	kt_add(fd, "a");
	kwq_ring_done_lease(w, &stale);
	n = kt_len(fd);
	kwq_ring_reap(w, cqe, 4);
	ktap_check(cb_nr == 1 && cb_seen[0].op == KWQ_SQE_DONE_LEASE &&
		   cb_seen[0].res == -ESTALE && n == 1,
		   "stale_lease_completes_estale_to_callback",
		   "completions %u op %u res %d, len %ld", cb_nr,
		   cb_nr ? cb_seen[0].op : 0, cb_nr ? cb_seen[0].res : 0, n);
	kwq_ring_set_callback(w, NULL, NULL);
	got = kwq_ring_get(w, l, 4, 1, 0);
	KT_OK(got == 1 ? kwq_ring_done_lease(w, &l[0]) : -1, "done_again");

	/* keys of 1024 bytes: 17 slots each, wrapping around 32 slots */
	for (i = 0; i < 3; i++) {
		memset(big[i], 'A' + i, sizeof(big[i]));
		big[i][0] = (unsigned char)i;
		kwq_ring_add(p, big[i], sizeof(big[i]), (int)i);
	}
	got = 0;
	for (i = 0; i < 3; i++) {
		if (kwq_ring_get(w, l, 1, 1, 0) != 1)
			break;
		/* highest priority first: big[2], big[1], big[0] */
		if (l[0].len == sizeof(big[0]) && l[0].priority == 2 - (int)i &&
		    !memcmp(l[0].key, big[2 - i], sizeof(big[0])))
			got++;
		kwq_ring_done_lease(w, &l[0]);
	}
	ktap_check(got == 3, "long_keys_span_and_wrap", "%u of 3 intact", got);

	/* a full submission ring (32 slots) rings the doorbell, drops nothing */
	for (i = 0, ret = 0; i < NKEYS && !ret; i++) {
		snprintf(buf, sizeof(buf), "k%u", i);
		ret = kwq_ring_add(p, buf, strlen(buf), 0);
	}
	n = kt_len(fd);
	ktap_check(!ret && n == NKEYS, "full_ring_drops_nothing",
		   "ret %d %s, len %ld of %d", ret, kt_ename(ret ? errno : 0),
		   n, NKEYS);

	/* the worker loop: finish the lease held and take the next, one call */
	for (got = 0, ret = 0; got < NKEYS; got++) {
		ret = kwq_ring_done_get(w, l, got ? 1 : 0, l, 1, 1, 0);
		if (ret != 1)
			break;
	}
	if (ret == 1)
		kwq_ring_done_lease(w, &l[0]);
	n = kt_len(fd);
	ktap_check(got == NKEYS && n == 0 && kwq_ring_reap(w, cqe, 4) == 0,
		   "worker_loop_takes_every_key", "took %u, len %ld", got, n);

	/*
	 * kwq_ring_next(): one enter leases every ready key up to the
	 * prefetch bound; the keys held are handed out in order, each
	 * DONE_LEASE applied by the next enter (or any reader).
	 */
	r2 = kt_ring(name, 0, 8);
	for (i = 0; i < 6; i++) {
		snprintf(buf, sizeof(buf), "n%u", i);
		kwq_ring_add(p, buf, strlen(buf), 0);
	}
	KT_ERR(kwq_ring_next(r2, NULL, l, 0, 0), EINVAL, "next_prefetch_0");
	KT_ERR(kwq_ring_next(r2, NULL, l, 9, 0), EINVAL,
	       "next_prefetch_past_slots");
	ret = kwq_ring_next(r2, NULL, &l[0], 4, 0);
	n = kt_len(fd);
	memset(&st_args, 0, sizeof(st_args));
	kwq_stats(kwq_ring_fd(r2), &st_args);
	ktap_check(ret == 1 && l[0].len == 2 && !memcmp(l[0].key, "n0", 2) &&
		   n == 2 && st_args.processing == 4,
		   "next_prefetches_up_to_bound_in_one_enter",
		   "ret %d, len %ld (2 ready), processing %llu (4)", ret, n,
		   (unsigned long long)st_args.processing);
	for (got = 1; got < 6; got++) {
		snprintf(buf, sizeof(buf), "n%u", got);
		ret = kwq_ring_next(r2, &l[0], &l[0], 4, 0);
		if (ret != 1 || l[0].len != strlen(buf) ||
		    memcmp(l[0].key, buf, l[0].len))
			break;
	}
	if (got == 6)
		kwq_ring_done_lease(r2, &l[0]);
	n = kt_len(fd);
	memset(&st_args, 0, sizeof(st_args));
	kwq_stats(kwq_ring_fd(r2), &st_args);
	ktap_check(got == 6 && n == 0 && st_args.processing == 0 &&
		   kwq_ring_reap(r2, cqe, 4) == 0,
		   "next_hands_out_in_order_and_finishes_each",
		   "%u of 6 in order, len %ld, processing %llu", got, n,
		   (unsigned long long)st_args.processing);

	/*
	 * DONE_LEASE records applied together: a repeated one in the
	 * middle completes ESTALE, the ones after it still finish.
	 */
	kwq_ring_add(p, "d1", 2, 0);
	kwq_ring_add(p, "d2", 2, 0);
	got = kwq_ring_get(r2, l, 2, 2, 0);
	ret = got == 2 ? kwq_ring_prep(r2, KWQ_SQE_DONE_LEASE, 0, NULL, 0,
				      (int)l[0].slot, l[0].gen, NULL) : -1;
	if (!ret)
		ret = kwq_ring_prep(r2, KWQ_SQE_DONE_LEASE, 0, NULL, 0,
				    (int)l[0].slot, l[0].gen, &idx);
	if (!ret)
		ret = kwq_ring_prep(r2, KWQ_SQE_DONE_LEASE, 0, NULL, 0,
				    (int)l[1].slot, l[1].gen, NULL);
	if (!ret)
		ret = kwq_ring_submit(r2);
	memset(&st_args, 0, sizeof(st_args));
	kwq_stats(kwq_ring_fd(r2), &st_args);
	i = kwq_ring_reap(r2, cqe, 4);
	ktap_check(!ret && st_args.processing == 0 && i == 1 &&
		   cqe[0].op == KWQ_SQE_DONE_LEASE && cqe[0].res == -ESTALE &&
		   cqe[0].index == idx, "done_leases_go_on_after_a_stale_one",
		   "ret %d, processing %llu, %u completions res %d index %u (%u)",
		   ret, (unsigned long long)st_args.processing, i,
		   i ? cqe[0].res : 0, i ? cqe[0].index : 0, idx);
	ring_close(r2);

	/* a getter asleep is woken by a ring add: the producer rings */
	if (pipe(pfd) < 0)
		return 1;
	pid = fork();
	if (pid == 0) {
		struct kwq_ring *cw = kt_ring(name, 0, 1);
		struct kwq_ring_lease cl;

		/* No key can come but through the doorbell. */
		if (write(pfd[1], "g", 1) != 1)
			_exit(2);
		_exit(kwq_ring_get(cw, &cl, 1, 1, 30 * KT_SEC) == 1 &&
		      cl.len == 4 && !memcmp(cl.key, "wake", 4) ? 0 : 1);
	}
	if (read(pfd[0], buf, 1) != 1)
		return 1;
	kt_sleep_ms(1000);	/* the child asleep (or about to be) */
	ret = kwq_ring_prep(p, KWQ_SQE_ADD, 0, "wake", 4, 0, 0, NULL);
	for (i = 0; !ret && i < 100; i++) {
		ret = kwq_ring_publish(p);
		/* Not asleep yet under a slow VM: an idle publish, again. */
		if (ret || waitpid(pid, &st, WNOHANG) == pid)
			break;
		kt_sleep_ms(100);
	}
	if (i == 100 || ret)
		st = kt_wait(pid);
	else
		st = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	ktap_check(ret == 1 && st == 0, "sleeping_getter_woken_by_ring_add",
		   "publish %d (1: rang), child %d", ret, st);

	/* an error completion is kept for reaping without a callback */
	r2 = NULL;
	close(fd);
	fd = kt_queue("libring-cap", &o, name);
	if (kwq_ring_setup(fd, 32, 32, 0, &r2) < 0) {
		printf("    # kwq_ring_setup: %s\n", strerror(errno));
		return 1;
	}
	kwq_ring_add(r2, "x", 1, 0);
	kwq_ring_prep(r2, KWQ_SQE_ADD, 0, "y", 1, 0, 0, &idx);
	kwq_ring_publish(r2);
	n = kt_len(fd);
	got = kwq_ring_reap(r2, cqe, 4);
	ktap_check(n == 1 && got == 1 && cqe[0].op == KWQ_SQE_ADD &&
		   cqe[0].res == -ENOSPC && cqe[0].index == idx,
		   "enospc_completion_reaped",
		   "len %ld, %u completions, op %u res %d index %u (want %u)",
		   n, got, got ? cqe[0].op : 0,
		   got ? cqe[0].res : 0, got ? cqe[0].index : 0, idx);
	ktap_check(kwq_ring_reap(r2, cqe, 4) == 0, "reaped_once", "again");

	/* a completion asked for on success (KWQ_SQE_F_CQE) */
	kwq_ring_prep(r2, KWQ_SQE_REMOVE, KWQ_SQE_F_CQE, "x", 1, 0, 0, &idx);
	kwq_ring_publish(r2);
	n = kt_len(fd);
	got = kwq_ring_reap(r2, cqe, 4);
	ktap_check(n == 0 && got == 1 && cqe[0].op == KWQ_SQE_REMOVE &&
		   cqe[0].res == 0 && cqe[0].index == idx,
		   "success_completion_on_request",
		   "len %ld, %u completions res %d", n, got,
		   got ? cqe[0].res : 0);

	/* the status page: shut down, seen with no system call */
	kwq_shutdown(fd, 0);
	ktap_check(kwq_ring_status_flags(r2) & KWQ_STATUS_SHUTDOWN,
		   "status_page_shutdown", "flags %#x",
		   kwq_ring_status_flags(r2));
	KT_ERR(kwq_ring_get(r2, l, 1, 1, 0), EINVAL, "get_without_lease_slots");

	ring_close(r2);
	ring_close(w);
	kwq_ring_free(p);
	close(fd);
	return ktap_end();
}
