// SPDX-License-Identifier: GPL-2.0
/*
 * Exact rate limiter delay sequences through add-rate-limited (the
 * kernel reports the delay it chose per key): exponential, fast-slow,
 * token bucket burst, max-of, the max-wait cap, client-go's default,
 * forget and num_requeues. Per-key limiters do not depend on time, so
 * these sequences are exact even on a slow VM; the bucket uses a rate so
 * low (1 token per 1000 s) that elapsed time barely matters.
 */
#include "kwqtest.h"

#define MS 1000000ULL
#define S 1000000000ULL

/* Rate-limited adds of @key, @n times; compare the delays with @want. */
static void seq(int fd, const char *key, int n, const uint64_t *want,
		const char *name)
{
	char got[256] = "", w[256] = "", d[32];
	uint64_t delay;
	int i, ok = 1;

	for (i = 0; i < n; i++) {
		delay = ~0ULL;
		if (kwq_add_rate_limited(fd, key, strlen(key), &delay) < 0) {
			snprintf(d, sizeof(d), "!%s", kt_ename(errno));
			ok = 0;
		} else {
			kwq_format_duration(d, sizeof(d), delay);
			ok &= delay == want[i];
		}
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s ", d);
		kwq_format_duration(d, sizeof(d), want[i]);
		snprintf(w + strlen(w), sizeof(w) - strlen(w), "%s ", d);
	}
	ktap_check(ok, name, "delays %s want %s", got, w);
}

static int queue(const char *spec1, const char *spec2, uint64_t max_wait)
{
	struct kwq_queue_opts o;

	memset(&o, 0, sizeof(o));
	if (spec1 && kwq_parse_limiter(spec1, &o))
		return -1;
	if (spec2 && kwq_parse_limiter(spec2, &o))
		return -1;
	o.max_wait_ns = max_wait;
	return kt_queue("lim", &o, NULL);
}

int main(void)
{
	static const uint64_t exp[] = { 5 * MS, 10 * MS, 20 * MS, 40 * MS, 80 * MS,
					160 * MS, 320 * MS, 640 * MS, 1 * S, 1 * S };
	static const uint64_t fs[] = { 1 * MS, 1 * MS, 1 * MS, 1 * S, 1 * S };
	static const uint64_t mx[] = { 20 * MS, 30 * MS, 30 * MS, 40 * MS, 80 * MS };
	static const uint64_t cap[] = { 5 * MS, 10 * MS, 15 * MS, 15 * MS };
	static const uint64_t dflt[] = { 5 * MS, 10 * MS, 20 * MS, 40 * MS };
	static const uint64_t zero[] = { 0, 0, 0 };
	struct kwq_recbuf rb = KWQ_RECBUF_INIT;
	struct kwq_batch_opts bo;
	uint64_t delays[8];
	unsigned int done;
	long n;
	int fd, r;

	kt_setup("kwq_limiter", 16, 120);

	fd = queue("exponential:5ms:1s", NULL, 0);
	seq(fd, "k", 10, exp, "exponential_5ms_doubling_capped_at_1s");
	seq(fd, "other", 3, exp, "exponential_is_per_key");
	n = kwq_num_requeues(fd, "k", 1);
	ktap_check(n == 10, "num_requeues_counts_rate_limited_adds", "n %ld", n);
	KT_OK(kwq_forget(fd, "k", 1), "forget");
	n = kwq_num_requeues(fd, "k", 1);
	ktap_check(n == 0, "forget_clears_requeues", "n %ld", n);
	seq(fd, "k", 2, exp, "forget_restarts_backoff");
	/* one batch naming a key three times: 5ms, 10ms, 20ms */
	kwq_recbuf_push_str(&rb, "b", 0);
	kwq_recbuf_push_str(&rb, "b", 0);
	kwq_recbuf_push_str(&rb, "b", 0);
	memset(&bo, 0, sizeof(bo));
	bo.flags = KWQ_ADD_RATE_LIMITED;
	bo.delays = delays;
	r = kwq_add_batch(fd, &rb, &bo, &done);
	ktap_check(r == 0 && done == 3 && delays[0] == 5 * MS &&
		   delays[1] == 10 * MS && delays[2] == 20 * MS,
		   "batch_rate_limited_reports_each_delay",
		   "r %d done %u delays %llu %llu %llu", r, done,
		   (unsigned long long)delays[0], (unsigned long long)delays[1],
		   (unsigned long long)delays[2]);
	close(fd);

	fd = queue("fastslow:1ms:1s:3", NULL, 0);
	seq(fd, "k", 5, fs, "fastslow_3_fast_then_slow");
	close(fd);

	fd = queue("exponential:5ms:1000s", "fastslow:20ms:30ms:1", 0);
	seq(fd, "k", 5, mx, "max_of_two_limiters");
	close(fd);

	fd = queue("exponential:5ms:1000s", NULL, 15 * MS);
	seq(fd, "k", 4, cap, "max_wait_caps_delay");
	close(fd);

	fd = queue(NULL, NULL, 0);	/* nr_limits 0: client-go default */
	seq(fd, "k", 4, dflt, "default_limiter_exponential_5ms");
	close(fd);

	fd = queue("exponential:0:0", NULL, 0);
	seq(fd, "z", 3, zero, "zero_delay");
	ktap_check(kt_len(fd) == 1, "zero_delay_key_ready_now", "len %ld", kt_len(fd));
	close(fd);

	/* token bucket: burst 3 free, then one token per 1000 s */
	fd = queue("bucket:0.001:3", NULL, 0);
	{
		uint64_t d[5];
		const char *keys[5] = { "t1", "t2", "t3", "t4", "t5" };
		int i, ok = 1;

		for (i = 0; i < 5; i++)
			ok &= kwq_add_rate_limited(fd, keys[i], 2, &d[i]) == 0;
		ktap_check(ok && d[0] == 0 && d[1] == 0 && d[2] == 0,
			   "bucket_burst_is_free", "ok %d %llu %llu %llu", ok,
			   (unsigned long long)d[0], (unsigned long long)d[1],
			   (unsigned long long)d[2]);
		ktap_check(ok && d[3] > 990 * S && d[3] <= 1000 * S &&
			   d[4] > 1990 * S && d[4] <= 2000 * S && d[4] > d[3],
			   "bucket_then_one_per_1000s", "%llu %llu",
			   (unsigned long long)d[3], (unsigned long long)d[4]);
		/* the bucket is per queue: a repeated key pays too */
		ok = kwq_add_rate_limited(fd, "t1", 2, &d[0]) == 0;
		ktap_check(ok && d[0] > d[4], "bucket_is_shared_by_keys", "%llu",
			   (unsigned long long)d[0]);
	}
	close(fd);
	kwq_recbuf_free(&rb);
	return ktap_end();
}
