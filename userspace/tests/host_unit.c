// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side unit tests of libkwq's pure functions: duration parsing and
 * printing, limiter SPEC parsing, record packing, and the uapi struct
 * layout. No kernel or device is needed (make host-test).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ktap.h"
#include "libkwq.h"

static void dur_ok(const char *s, uint64_t want)
{
	uint64_t v = ~0ULL;
	int ret = kwq_parse_duration(s, &v);
	char name[96];

	snprintf(name, sizeof(name), "parse_duration_%s", s);
	ktap_check(ret == 0 && v == want, name, "ret %d errno %d value %llu want %llu",
		   ret, errno, (unsigned long long)v, (unsigned long long)want);
}

static void dur_bad(const char *s, int want_errno)
{
	uint64_t v = 12345;
	int ret;
	char name[96];

	errno = 0;
	ret = kwq_parse_duration(s, &v);
	snprintf(name, sizeof(name), "parse_duration_rejects_'%s'", s);
	ktap_check(ret == -1 && errno == want_errno && v == 12345, name,
		   "ret %d errno %d want %d value %llu", ret, errno, want_errno,
		   (unsigned long long)v);
}

static void fmt(uint64_t ns, const char *want)
{
	char buf[32], name[96];
	int n = kwq_format_duration(buf, sizeof(buf), ns);

	snprintf(name, sizeof(name), "format_duration_%s", want);
	ktap_check(n == (int)strlen(want) && strcmp(buf, want) == 0, name,
		   "%llu ns printed '%s' (%d) want '%s'", (unsigned long long)ns,
		   buf, n, want);
}

static void spec_ok(const char *s, unsigned int type, unsigned int count,
		    uint64_t a, uint64_t b, const char *canon)
{
	struct kwq_queue_opts o;
	char name[96], back[96];
	int ret;

	memset(&o, 0, sizeof(o));
	ret = kwq_parse_limiter(s, &o);
	snprintf(name, sizeof(name), "parse_limiter_%s", s);
	if (ret == 0)
		kwq_format_limiter(back, sizeof(back), &o.limits[0]);
	else
		back[0] = 0;
	ktap_check(ret == 0 && o.nr_limits == 1 && o.limits[0].type == type &&
		   o.limits[0].count == count && o.limits[0].a == a &&
		   o.limits[0].b == b && strcmp(back, canon) == 0, name,
		   "ret %d errno %d nr %u type %u count %u a %llu b %llu back '%s'",
		   ret, errno, o.nr_limits, o.limits[0].type, o.limits[0].count,
		   (unsigned long long)o.limits[0].a,
		   (unsigned long long)o.limits[0].b, back);
}

static void spec_bad(const char *s)
{
	struct kwq_queue_opts o;
	char name[96];
	int ret;

	memset(&o, 0, sizeof(o));
	errno = 0;
	ret = kwq_parse_limiter(s, &o);
	snprintf(name, sizeof(name), "parse_limiter_rejects_'%s'", s);
	ktap_check(ret == -1 && errno == EINVAL && o.nr_limits == 0, name,
		   "ret %d errno %d nr %u", ret, errno, o.nr_limits);
}

int main(void)
{
	ktap_suite("kwq_host_unit", 65);

	/* durations */
	dur_ok("0", 0);
	dur_ok("0ms", 0);
	dur_ok("10ns", 10);
	dur_ok("3us", 3000);
	dur_ok("5ms", 5000000);
	dur_ok("1s", 1000000000ULL);
	dur_ok("2m", 120000000000ULL);
	dur_ok("1h", 3600000000000ULL);
	dur_ok("365d", 365ULL * 86400000000000ULL);
	dur_ok("1d", 86400000000000ULL);
	dur_ok("9223372036854775807ns", INT64_MAX);
	dur_bad("", EINVAL);
	dur_bad("5", EINVAL);
	dur_bad("ms", EINVAL);
	dur_bad("-1ms", EINVAL);
	dur_bad("5 ms", EINVAL);
	dur_bad("1.5s", EINVAL);
	dur_bad("5msx", EINVAL);
	dur_bad("5S", EINVAL);
	dur_bad("9223372036854775808ns", ERANGE);
	dur_bad("2562048h", ERANGE);
	dur_bad("106752d", ERANGE);
	dur_bad("99999999999999999999999s", ERANGE);

	fmt(0, "0");
	fmt(1, "1ns");
	fmt(5000000, "5ms");
	fmt(1000000000ULL, "1s");
	fmt(1500000000ULL, "1500ms");
	fmt(60000000000ULL, "1m");
	fmt(90000000000ULL, "90s");
	fmt(3600000000000ULL, "1h");
	fmt(86400000000000ULL, "24h");
	fmt(1001000, "1001us");
	fmt(1000000000000ULL, "1000s");

	/* limiter specs */
	spec_ok("exponential:5ms:1000s", KWQ_LIMIT_EXPONENTIAL, 0, 5000000,
		1000000000000ULL, "exponential:5ms:1000s");
	spec_ok("fastslow:1ms:1s:3", KWQ_LIMIT_FAST_SLOW, 3, 1000000,
		1000000000ULL, "fastslow:1ms:1s:3");
	spec_ok("bucket:10:100", KWQ_LIMIT_BUCKET, 100, 10000, 0,
		"bucket:10:100");
	spec_ok("bucket:0.5:1", KWQ_LIMIT_BUCKET, 1, 500, 0, "bucket:0.5:1");
	spec_ok("bucket:2.250:7", KWQ_LIMIT_BUCKET, 7, 2250, 0,
		"bucket:2.25:7");
	spec_ok("bucket:0.001:1", KWQ_LIMIT_BUCKET, 1, 1, 0, "bucket:0.001:1");
	spec_ok("exponential:0:0", KWQ_LIMIT_EXPONENTIAL, 0, 0, 0,
		"exponential:0:0");
	spec_bad("");
	spec_bad("nope");
	spec_bad("exponential:5ms");
	spec_bad("exponential:5:1s");
	spec_bad("exponential:5ms:1s:1");
	spec_bad("fastslow:1ms:1s:-1");
	spec_bad("fastslow:1ms:1s:4294967296");
	spec_bad("bucket:0:1");
	spec_bad("bucket:0.0001:1");
	spec_bad("bucket:1:0");
	spec_bad("bucket:.5:1");
	spec_bad("default:1");
	{
		struct kwq_queue_opts o;
		int ret, i;

		memset(&o, 0, sizeof(o));
		ret = kwq_parse_limiter("default", &o);
		ktap_check(ret == 0 && o.nr_limits == 2 &&
			   o.limits[0].type == KWQ_LIMIT_EXPONENTIAL &&
			   o.limits[0].a == 5000000 &&
			   o.limits[0].b == 1000000000000ULL &&
			   o.limits[1].type == KWQ_LIMIT_BUCKET &&
			   o.limits[1].a == 10000 && o.limits[1].count == 100,
			   "parse_limiter_default_expands", "ret %d nr %u", ret,
			   o.nr_limits);
		memset(&o, 0, sizeof(o));
		for (i = 0; i < 4; i++)
			ret = kwq_parse_limiter("fastslow:1ms:1s:3", &o);
		errno = 0;
		ret = kwq_parse_limiter("bucket:1:1", &o);
		ktap_check(ret == -1 && errno == E2BIG && o.nr_limits == 4,
			   "parse_limiter_fifth_is_e2big", "ret %d errno %d nr %u",
			   ret, errno, o.nr_limits);
		memset(&o, 0, sizeof(o));
		for (i = 0; i < 3; i++)
			kwq_parse_limiter("bucket:1:1", &o);
		errno = 0;
		ret = kwq_parse_limiter("default", &o);
		ktap_check(ret == -1 && errno == E2BIG && o.nr_limits == 3,
			   "parse_limiter_default_needs_two_slots",
			   "ret %d errno %d nr %u", ret, errno, o.nr_limits);
	}

	/* record packing */
	ktap_check(KWQ_REC_SIZE(1) == 16 && KWQ_REC_SIZE(8) == 16 &&
		   KWQ_REC_SIZE(9) == 24 && KWQ_REC_SIZE_MAX == 1032 &&
		   KWQ_REC_SIZE_MAX_VER1 == 264,
		   "rec_size", "%lu %lu %lu %lu", KWQ_REC_SIZE(1), KWQ_REC_SIZE(8),
		   KWQ_REC_SIZE(9), KWQ_REC_SIZE_MAX);
	{
		unsigned char buf[64];
		struct kwq_rec hdr;
		long n;
		int i, zero = 1;

		memset(buf, 0xaa, sizeof(buf));
		n = kwq_rec_pack(buf, sizeof(buf), "abc", 3, -7);
		memcpy(&hdr, buf, sizeof(hdr));
		for (i = 8 + 3; i < 16; i++)
			zero &= buf[i] == 0;
		ktap_check(n == 16 && hdr.len == 3 && hdr.priority == -7 &&
			   memcmp(buf + 8, "abc", 3) == 0 && zero && buf[16] == 0xaa,
			   "rec_pack_layout_and_zero_padding", "n %ld len %u prio %d zero %d",
			   n, hdr.len, hdr.priority, zero);
		errno = 0;
		n = kwq_rec_pack(buf, 15, "abc", 3, 0);
		ktap_check(n == -1 && errno == ENOSPC, "rec_pack_no_room_is_enospc",
			   "n %ld errno %d", n, errno);
		errno = 0;
		n = kwq_rec_pack(buf, sizeof(buf), "", 0, 0);
		ktap_check(n == -1 && errno == EINVAL, "rec_pack_empty_key_is_einval",
			   "n %ld errno %d", n, errno);
	}
	{
		struct kwq_recbuf rb = KWQ_RECBUF_INIT;
		char big[KWQ_KEY_LEN_MAX + 1];
		const void *k;
		size_t off = 0, len, total = 0;
		int prio, ret, i, ok = 1, rlong;

		memset(big, 'k', sizeof(big));
		for (i = 0; i < 100; i++) {
			char key[16];

			snprintf(key, sizeof(key), "key-%d", i);
			ok &= kwq_recbuf_push_str(&rb, key, i) == 0;
			total += KWQ_REC_SIZE(strlen(key));
		}
		ok &= kwq_recbuf_push(&rb, big, KWQ_KEY_LEN_MAX, 0) == 0;
		total += KWQ_REC_SIZE_MAX;
		errno = 0;
		rlong = kwq_recbuf_push(&rb, big, KWQ_KEY_LEN_MAX + 1, 0);
		ktap_check(ok && rlong == -1 && errno == EINVAL && rb.nr == 101 &&
			   rb.len == total, "recbuf_push_grows_and_rejects_too_long",
			   "ok %d rlong %d nr %u len %zu want %zu", ok, rlong, rb.nr,
			   rb.len, total);
		for (i = 0; i < 101; i++) {
			char key[16];

			ret = kwq_rec_next(rb.buf, rb.len, &off, &k, &len, &prio);
			if (i == 100) {
				ok &= ret == 1 && len == KWQ_KEY_LEN_MAX;
				continue;
			}
			snprintf(key, sizeof(key), "key-%d", i);
			ok &= ret == 1 && len == strlen(key) &&
			      memcmp(k, key, len) == 0 && prio == i;
		}
		ret = kwq_rec_next(rb.buf, rb.len, &off, &k, &len, &prio);
		ktap_check(ok && ret == 0 && off == rb.len, "rec_next_walks_all",
			   "ok %d ret %d off %zu", ok, ret, off);
		off = 0;
		errno = 0;
		ret = kwq_rec_next(rb.buf, 12, &off, &k, &len, &prio);
		ktap_check(ret == -1 && errno == EINVAL, "rec_next_truncated_is_einval",
			   "ret %d errno %d", ret, errno);
		((struct kwq_rec *)rb.buf)->len = 0;
		off = 0;
		errno = 0;
		ret = kwq_rec_next(rb.buf, rb.len, &off, &k, &len, &prio);
		ktap_check(ret == -1 && errno == EINVAL, "rec_next_zero_len_is_einval",
			   "ret %d errno %d", ret, errno);
		kwq_recbuf_free(&rb);
	}

	/* uapi layout: identical on 32 and 64 bit (no compat translation) */
	ktap_check(sizeof(struct kwq_create_args) == 200 &&
		   offsetof(struct kwq_create_args, processing_timeout_ns) ==
		   KWQ_CREATE_ARGS_SIZE_VER1 &&
		   sizeof(struct kwq_open_args) == 72 &&
		   sizeof(struct kwq_list_args) == 16 &&
		   sizeof(struct kwq_keys_args) == 48 &&
		   sizeof(struct kwq_get_args) == 48 &&
		   offsetof(struct kwq_get_args, processing_timeout_ns) ==
		   KWQ_GET_ARGS_SIZE_VER1 &&
		   sizeof(struct kwq_done_get_args) == 72 &&
		   offsetof(struct kwq_done_get_args, get.processing_timeout_ns) ==
		   KWQ_DONE_GET_ARGS_SIZE_VER1 &&
		   sizeof(struct kwq_touch_args) == 24 &&
		   sizeof(struct kwq_key_args) == 16 &&
		   sizeof(struct kwq_shutdown_args) == 8 &&
		   sizeof(struct kwq_stats_args) == 472 &&
		   offsetof(struct kwq_stats_args, processing_timeouts_total) ==
		   KWQ_STATS_ARGS_SIZE_VER2 &&
		   offsetof(struct kwq_stats_args, dead) ==
		   KWQ_STATS_ARGS_SIZE_VER2 + 8 &&
		   sizeof(struct kwq_dead_args) == 24 &&
		   offsetof(struct kwq_create_args, max_retries) ==
		   KWQ_CREATE_ARGS_SIZE_VER1 + 8 &&
		   offsetof(struct kwq_stats_args, depth) ==
		   KWQ_STATS_ARGS_SIZE_VER1 &&
		   offsetof(struct kwq_stats_args, prios) == 304 &&
		   offsetof(struct kwq_keys_args, after_ns) == 24 &&
		   offsetof(struct kwq_get_args, timeout_ns) == 24 &&
		   offsetof(struct kwq_create_args, max_wait_ns) == 80,
		   "uapi_struct_sizes", "create %zu open %zu keys %zu get %zu stats %zu",
		   sizeof(struct kwq_create_args), sizeof(struct kwq_open_args),
		   sizeof(struct kwq_keys_args), sizeof(struct kwq_get_args),
		   sizeof(struct kwq_stats_args));

	return ktap_end();
}
