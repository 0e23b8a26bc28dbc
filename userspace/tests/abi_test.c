// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/kwq ioctl ABI through raw ioctl(2): every ioctl once, and bad
 * input each with its specific errno and nothing lost: bad user pointers,
 * zero-length and oversized keys, names not NUL-terminated or too long,
 * flags/pad/reserved fields set, struct sizes smaller than the first
 * version (EINVAL) or larger with a non-zero tail (E2BIG), unknown
 * ioctls, unattached fds, destroyed queues, done of a key not processing.
 *
 * Also built with -m32 as abi32_test to exercise compat_ioctl: the same
 * cases must give the same results.
 */
#include "kwqtest.h"

#include <sys/mman.h>

#ifndef KWQ_TEST_SUITE
#define KWQ_TEST_SUITE "kwq_abi"
#endif

#define BADPTR ((void *)1)
#define U64(p) ((__u64)(uintptr_t)(p))

/* The ioctl number of @cmd with another argument size. */
#define RESIZE(cmd, size) \
	_IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd), (size))

static unsigned char recbuf[16 * KWQ_REC_SIZE_MAX];

/* Pack @n keys ("k0".."kN-1" or given) into recbuf; bytes used. */
static __u32 pack(const char *const *keys, int n)
{
	long off = 0, r;
	int i;

	for (i = 0; i < n; i++) {
		r = kwq_rec_pack(recbuf + off, sizeof(recbuf) - off, keys[i],
				 strlen(keys[i]), 0);
		if (r < 0)
			return 0;
		off += r;
	}
	return (__u32)off;
}

static void keys_args(struct kwq_keys_args *a, __u32 len, __u32 nr)
{
	memset(a, 0, sizeof(*a));
	a->recs = U64(recbuf);
	a->recs_len = len;
	a->nr = nr;
}

static void get_args(struct kwq_get_args *g, void *buf, __u32 len, __u32 max)
{
	memset(g, 0, sizeof(*g));
	g->recs = U64(buf);
	g->recs_len = len;
	g->max = max;
	g->timeout_ns = 0;
}

int main(void)
{
	static const char *const k3[] = { "alpha", "beta", "gamma" };
	static unsigned char getbuf[4 * KWQ_REC_SIZE_MAX];
	struct kwq_create_args ca;
	struct kwq_open_args oa;
	struct kwq_list_args la;
	struct kwq_keys_args ka;
	struct kwq_get_args ga, *ro;
	struct kwq_key_args kk;
	struct kwq_shutdown_args sa;
	struct kwq_stats_args st;
	char name[KWQ_NAME_LEN], name2[KWQ_NAME_LEN], names[4][KWQ_NAME_LEN];
	unsigned char big[sizeof(ca) + 16];
	char longkey[KWQ_KEY_LEN_MAX + 1];
	__u64 len;
	__u32 n;
	int fd, fd2, ufd, r;

	kt_setup(KWQ_TEST_SUITE, 112, 120);

	ufd = kt_dev();		/* stays unattached */
	fd = kt_dev();
	kt_name(name, "abi");

	/* --- create ---------------------------------------------------- */
	memset(&ca, 0, sizeof(ca));
	strcpy(ca.name, name);
	KT_OK(ioctl(fd, KWQ_IOC_CREATE, &ca), "create");
	KT_ERR(ioctl(fd, KWQ_IOC_CREATE, &ca), EISCONN, "create_on_attached_fd_eisconn");
	fd2 = kt_dev();
	KT_ERR(ioctl(fd2, KWQ_IOC_CREATE, &ca), EEXIST, "create_existing_eexist");
	KT_ERR(ioctl(fd2, KWQ_IOC_CREATE, BADPTR), EFAULT, "create_bad_pointer_efault");

	kt_name(name2, "abi");
	memset(&ca, 0, sizeof(ca));
	memset(ca.name, 'a', sizeof(ca.name));
	KT_ERR(ioctl(fd2, KWQ_IOC_CREATE, &ca), EINVAL, "create_name_not_nul_terminated_einval");
	memset(&ca, 0, sizeof(ca));
	KT_ERR(ioctl(fd2, KWQ_IOC_CREATE, &ca), EINVAL, "create_empty_name_einval");
	strcpy(ca.name, "bad/name");
	KT_ERR(ioctl(fd2, KWQ_IOC_CREATE, &ca), EINVAL, "create_bad_name_chars_einval");
	memset(&ca, 0, sizeof(ca));
	strcpy(ca.name, name2);
	ca.flags = ~KWQ_CREATE_FLAGS;
	KT_ERR(ioctl(fd2, KWQ_IOC_CREATE, &ca), EINVAL, "create_flags_einval");
	ca.flags = 0;
	ca.mode = 01000;
	KT_ERR(ioctl(fd2, KWQ_IOC_CREATE, &ca), EINVAL, "create_mode_beyond_0777_einval");
	ca.mode = 0;
	ca.nr_limits = KWQ_LIMITS_MAX + 1;
	KT_ERR(ioctl(fd2, KWQ_IOC_CREATE, &ca), EINVAL, "create_too_many_limits_einval");
	ca.nr_limits = 1;
	ca.limits[0].type = 99;
	KT_ERR(ioctl(fd2, KWQ_IOC_CREATE, &ca), EINVAL, "create_unknown_limit_type_einval");
	ca.limits[0].type = KWQ_LIMIT_BUCKET;
	ca.limits[0].a = 0;
	ca.limits[0].count = 1;
	KT_ERR(ioctl(fd2, KWQ_IOC_CREATE, &ca), EINVAL, "create_bucket_zero_qps_einval");
	ca.limits[0].type = KWQ_LIMIT_EXPONENTIAL;
	ca.limits[0].a = 1000;
	ca.limits[0].b = 2000;
	ca.limits[0].count = 1;
	KT_ERR(ioctl(fd2, KWQ_IOC_CREATE, &ca), EINVAL, "create_exponential_count_set_einval");
	/* nothing of the failed creates exists */
	KT_ERR(kwq_open(fd2, name2), ENOENT, "failed_creates_left_nothing");

	/* size versioning on create: smaller / larger with a tail */
	memset(&ca, 0, sizeof(ca));
	strcpy(ca.name, name2);
	KT_ERR(ioctl(fd2, RESIZE(KWQ_IOC_CREATE, 32), &ca), EINVAL,
	       "create_struct_too_small_einval");
	memset(big, 0, sizeof(big));
	memcpy(big, &ca, sizeof(ca));
	big[sizeof(ca) + 3] = 1;
	KT_ERR(ioctl(fd2, RESIZE(KWQ_IOC_CREATE, sizeof(ca) + 8), big), E2BIG,
	       "create_larger_struct_nonzero_tail_e2big");
	big[sizeof(ca) + 3] = 0;
	KT_OK(ioctl(fd2, RESIZE(KWQ_IOC_CREATE, sizeof(ca) + 8), big),
	      "create_larger_struct_zero_tail_ok");
	KT_OK(kwq_destroy(ufd, name2), "destroy_second_queue");
	close(fd2);

	/* --- open ------------------------------------------------------ */
	fd2 = kt_dev();
	memset(&oa, 0, sizeof(oa));
	strcpy(oa.name, "abi-no-such-queue");
	KT_ERR(ioctl(fd2, KWQ_IOC_OPEN, &oa), ENOENT, "open_unknown_enoent");
	memset(oa.name, 'b', sizeof(oa.name));
	KT_ERR(ioctl(fd2, KWQ_IOC_OPEN, &oa), EINVAL, "open_name_not_nul_terminated_einval");
	memset(&oa, 0, sizeof(oa));
	strcpy(oa.name, name);
	oa.flags = 1;
	KT_ERR(ioctl(fd2, KWQ_IOC_OPEN, &oa), EINVAL, "open_flags_einval");
	oa.flags = 0;
	oa.pad = 1;
	KT_ERR(ioctl(fd2, KWQ_IOC_OPEN, &oa), EINVAL, "open_pad_einval");
	oa.pad = 0;
	KT_ERR(ioctl(fd2, KWQ_IOC_OPEN, BADPTR), EFAULT, "open_bad_pointer_efault");
	KT_ERR(ioctl(fd2, RESIZE(KWQ_IOC_OPEN, 8), &oa), EINVAL,
	       "open_struct_too_small_einval");
	memset(big, 0, sizeof(big));
	memcpy(big, &oa, sizeof(oa));
	big[sizeof(oa) + 7] = 0x80;
	KT_ERR(ioctl(fd2, RESIZE(KWQ_IOC_OPEN, sizeof(oa) + 8), big), E2BIG,
	       "open_larger_struct_nonzero_tail_e2big");
	big[sizeof(oa) + 7] = 0;
	KT_OK(ioctl(fd2, RESIZE(KWQ_IOC_OPEN, sizeof(oa) + 8), big),
	      "open_larger_struct_zero_tail_ok");
	KT_ERR(ioctl(fd2, KWQ_IOC_OPEN, &oa), EISCONN, "open_on_attached_fd_eisconn");

	/* --- unattached fd, unknown ioctls ----------------------------- */
	keys_args(&ka, pack(k3, 1), 1);
	KT_ERR(ioctl(ufd, KWQ_IOC_ADD, &ka), ENOTCONN, "add_unattached_enotconn");
	get_args(&ga, getbuf, sizeof(getbuf), 1);
	KT_ERR(ioctl(ufd, KWQ_IOC_GET, &ga), ENOTCONN, "get_unattached_enotconn");
	KT_ERR(ioctl(ufd, KWQ_IOC_LEN, &len), ENOTCONN, "len_unattached_enotconn");
	KT_ERR(ioctl(ufd, KWQ_IOC_STATS, &st), ENOTCONN, "stats_unattached_enotconn");
	memset(&sa, 0, sizeof(sa));
	KT_ERR(ioctl(ufd, KWQ_IOC_SHUTDOWN, &sa), ENOTCONN, "shutdown_unattached_enotconn");
	KT_ERR(ioctl(fd, _IOWR(KWQ_IOC_MAGIC, 0x7f, struct kwq_keys_args), &ka),
	       ENOTTY, "unknown_nr_enotty");
	KT_ERR(ioctl(fd, _IOWR('k', 0x04, struct kwq_keys_args), &ka),
	       ENOTTY, "foreign_magic_enotty");

	/* --- list ------------------------------------------------------ */
	memset(&la, 0, sizeof(la));
	KT_OK(ioctl(ufd, KWQ_IOC_LIST, &la), "list_count_only");
	ktap_check(la.count >= 1, "list_counts_queues", "count %u", la.count);
	memset(names, 0, sizeof(names));
	la.names = U64(names);
	la.capacity = 4;
	r = ioctl(ufd, KWQ_IOC_LIST, &la);
	{
		int found = 0, i;

		for (i = 0; r == 0 && i < (int)la.capacity && i < (int)la.count; i++)
			found |= strcmp(names[i], name) == 0;
		ktap_check(r == 0 && (found || la.count > 4), "list_names_the_queue",
			   "r %d count %u found %d", r, la.count, found);
	}
	la.names = U64(BADPTR);
	KT_ERR(ioctl(ufd, KWQ_IOC_LIST, &la), EFAULT, "list_bad_names_pointer_efault");
	KT_ERR(ioctl(ufd, KWQ_IOC_LIST, BADPTR), EFAULT, "list_bad_pointer_efault");

	/* --- add ------------------------------------------------------- */
	keys_args(&ka, pack(k3, 3), 3);
	KT_OK(ioctl(fd, KWQ_IOC_ADD, &ka), "add_batch_of_3");
	ktap_check(ka.done == 3, "add_batch_reports_done", "done %u", ka.done);
	len = 0;
	KT_OK(ioctl(fd, KWQ_IOC_LEN, &len), "len");
	ktap_check(len == 3, "len_is_3", "len %llu", (unsigned long long)len);
	KT_ERR(ioctl(fd, KWQ_IOC_LEN, BADPTR), EFAULT, "len_bad_pointer_efault");
	KT_ERR(ioctl(fd, KWQ_IOC_ADD, BADPTR), EFAULT, "add_bad_args_pointer_efault");

	keys_args(&ka, pack(k3, 1), 1);
	ka.recs = U64(BADPTR);
	KT_ERR(ioctl(fd, KWQ_IOC_ADD, &ka), EFAULT, "add_bad_recs_pointer_efault");
	keys_args(&ka, pack(k3, 1), 1);
	ka.flags = 0x80;
	KT_ERR(ioctl(fd, KWQ_IOC_ADD, &ka), EINVAL, "add_unknown_flag_einval");
	ka.flags = 0;
	ka.pad = 1;
	KT_ERR(ioctl(fd, KWQ_IOC_ADD, &ka), EINVAL, "add_pad_einval");
	ka.pad = 0;
	ka.pad2 = 1;
	KT_ERR(ioctl(fd, KWQ_IOC_ADD, &ka), EINVAL, "add_pad2_einval");
	ka.pad2 = 0;
	ka.after_ns = 5;
	KT_ERR(ioctl(fd, KWQ_IOC_ADD, &ka), EINVAL, "add_after_ns_without_flag_einval");
	ka.after_ns = 0;
	/* Replaceable deadlines: with KWQ_ADD_AFTER and a delay only. */
	ka.flags = KWQ_ADD_REPLACE;
	KT_ERR(ioctl(fd, KWQ_IOC_ADD, &ka), EINVAL, "add_replace_without_after_einval");
	ka.flags = KWQ_ADD_AFTER | KWQ_ADD_REPLACE;
	KT_ERR(ioctl(fd, KWQ_IOC_ADD, &ka), EINVAL, "add_replace_without_delay_einval");
	ka.after_ns = 5;
	ka.flags = KWQ_ADD_AFTER | KWQ_ADD_REPLACE | KWQ_ADD_LATER;
	KT_ERR(ioctl(fd, KWQ_IOC_ADD, &ka), EINVAL, "add_replace_and_later_einval");
	ka.flags = KWQ_ADD_LATER;
	KT_ERR(ioctl(fd, KWQ_IOC_ADD, &ka), EINVAL, "add_later_without_after_einval");
	ka.after_ns = 0;
	ka.flags = KWQ_ADD_RATE_LIMITED | KWQ_ADD_LATER;
	KT_ERR(ioctl(fd, KWQ_IOC_ADD, &ka), EINVAL, "add_later_rate_limited_einval");
	ka.flags = 0;
	ka.delays = U64(&len);
	KT_ERR(ioctl(fd, KWQ_IOC_ADD, &ka), EINVAL, "add_delays_without_flag_einval");
	keys_args(&ka, pack(k3, 1), 1);
	ka.recs_len += 8;
	KT_ERR(ioctl(fd, KWQ_IOC_ADD, &ka), EINVAL, "add_trailing_bytes_einval");
	keys_args(&ka, pack(k3, 1), 2);
	KT_ERR(ioctl(fd, KWQ_IOC_ADD, &ka), EINVAL, "add_nr_beyond_records_einval");

	/* zero-length key */
	{
		struct kwq_rec *h = (struct kwq_rec *)recbuf;

		memset(recbuf, 0, 16);
		keys_args(&ka, 16, 1);
		h->len = 0;
		KT_ERR(ioctl(fd, KWQ_IOC_ADD, &ka), EINVAL, "add_zero_length_key_einval");
		h->len = KWQ_KEY_LEN_MAX + 1;
		memset(recbuf + 8, 'x', sizeof(recbuf) - 8);
		keys_args(&ka, KWQ_REC_SIZE(KWQ_KEY_LEN_MAX + 1), 1);
		KT_ERR(ioctl(fd, KWQ_IOC_ADD, &ka), EINVAL, "add_oversized_key_einval");
	}
	/* a bad key in the middle: the first ones land, nothing else */
	{
		static const char *const k2[] = { "mid-1", "mid-2" };
		__u32 l2 = pack(k2, 2);
		struct kwq_rec h = { 0, 0 };

		memset(recbuf + l2, 0, 16);
		memcpy(recbuf + l2, &h, sizeof(h));
		keys_args(&ka, l2 + 16, 3);
		errno = 0;
		r = ioctl(fd, KWQ_IOC_ADD, &ka);
		n = ka.done;
		len = 0;
		ioctl(fd, KWQ_IOC_LEN, &len);
		ktap_check(r == -1 && errno == EINVAL && n <= 2 && len == 3 + n,
			   "add_bad_key_mid_batch_partial_done",
			   "r %d errno %s done %u len %llu", r, kt_ename(errno), n,
			   (unsigned long long)len);
		if (n) {
			struct kwq_recbuf rb = { recbuf, n == 2 ? l2 : KWQ_REC_SIZE(5),
						 l2, n };

			kwq_remove_batch(fd, &rb, NULL);
		}
	}
	/* size versioning on a read-write struct */
	keys_args(&ka, pack(k3, 1), 1);
	KT_ERR(ioctl(fd, RESIZE(KWQ_IOC_ADD, 16), &ka), EINVAL,
	       "add_struct_too_small_einval");
	memset(big, 0, sizeof(big));
	memcpy(big, &ka, sizeof(ka));
	big[sizeof(ka)] = 1;
	KT_ERR(ioctl(fd, RESIZE(KWQ_IOC_ADD, sizeof(ka) + 8), big), E2BIG,
	       "add_larger_struct_nonzero_tail_e2big");

	/* --- get ------------------------------------------------------- */
	get_args(&ga, getbuf, KWQ_REC_SIZE_MAX_VER1 - 8, 1);
	KT_ERR(ioctl(fd, KWQ_IOC_GET, &ga), EINVAL, "get_buffer_too_small_einval");
	get_args(&ga, getbuf, sizeof(getbuf), 0);
	KT_ERR(ioctl(fd, KWQ_IOC_GET, &ga), EINVAL, "get_max_zero_einval");
	get_args(&ga, getbuf, sizeof(getbuf), 1);
	ga.flags = 0x40;
	KT_ERR(ioctl(fd, KWQ_IOC_GET, &ga), EINVAL, "get_unknown_flag_einval");
	get_args(&ga, getbuf, sizeof(getbuf), 1);
	ga.min_nr = 2;
	KT_ERR(ioctl(fd, KWQ_IOC_GET, &ga), EINVAL, "get_min_nr_over_max_einval");
	get_args(&ga, BADPTR, sizeof(getbuf), 1);
	KT_ERR(ioctl(fd, KWQ_IOC_GET, &ga), EFAULT, "get_bad_recs_pointer_efault");
	/*
	 * Arguments that can be read but not written back: EFAULT before a
	 * key is taken, or the key would be stranded in processing.
	 */
	ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro != MAP_FAILED) {
		get_args(ro, getbuf, sizeof(getbuf), 1);
		mprotect(ro, 4096, PROT_READ);
	}
	KT_ERR(ro == MAP_FAILED ? (errno = ENOMEM, -1) : ioctl(fd, KWQ_IOC_GET, ro), EFAULT,
	       "get_read_only_args_efault");
	if (ro != MAP_FAILED)
		munmap(ro, 4096);
	/* the failed gets lost nothing */
	len = 0;
	ioctl(fd, KWQ_IOC_LEN, &len);
	ktap_check(len == 3, "failed_gets_lost_nothing", "len %llu",
		   (unsigned long long)len);

	get_args(&ga, getbuf, sizeof(getbuf), 2);
	KT_OK(ioctl(fd, KWQ_IOC_GET, &ga), "get_batch_of_2");
	{
		size_t off = 0, kl;
		const void *k;
		int ok = ga.nr == 2 &&
			 ga.used == KWQ_REC_SIZE(5) + KWQ_REC_SIZE(4);

		ok &= kwq_rec_next(getbuf, ga.used, &off, &k, &kl, NULL) == 1 &&
		      kl == 5 && memcmp(k, "alpha", 5) == 0;
		ok &= kwq_rec_next(getbuf, ga.used, &off, &k, &kl, NULL) == 1 &&
		      kl == 4 && memcmp(k, "beta", 4) == 0;
		ktap_check(ok, "get_fills_nr_used_and_records_fifo",
			   "nr %u used %u", ga.nr, ga.used);
	}
	/* exactly room for one record: only one is taken */
	get_args(&ga, getbuf, KWQ_REC_SIZE_MAX, 4);
	KT_OK(ioctl(fd, KWQ_IOC_GET, &ga), "get_with_room_for_one");
	ktap_check(ga.nr == 1 && ga.used == KWQ_REC_SIZE(5), "get_takes_only_what_fits",
		   "nr %u used %u", ga.nr, ga.used);
	get_args(&ga, getbuf, sizeof(getbuf), 1);
	KT_ERR(ioctl(fd, KWQ_IOC_GET, &ga), EAGAIN, "get_timeout_zero_empty_eagain");

	/* --- done ------------------------------------------------------ */
	{
		static const char *const kx[] = { "alpha", "nope" };

		keys_args(&ka, pack(kx, 2), 2);
		errno = 0;
		r = ioctl(fd, KWQ_IOC_DONE, &ka);
		ktap_check(r == -1 && errno == ENOENT && ka.done == 1,
			   "done_batch_stops_at_key_not_processing_enoent",
			   "r %d errno %s done %u", r, kt_ename(errno), ka.done);
	}
	keys_args(&ka, pack(k3 + 1, 1), 1);
	((struct kwq_rec *)recbuf)->priority = 3;
	KT_ERR(ioctl(fd, KWQ_IOC_DONE, &ka), EINVAL, "done_priority_set_einval");
	keys_args(&ka, pack(k3 + 1, 1), 1);
	ka.flags = 1;
	KT_ERR(ioctl(fd, KWQ_IOC_DONE, &ka), EINVAL, "done_flags_einval");
	keys_args(&ka, pack(k3 + 1, 2), 2);
	KT_OK(ioctl(fd, KWQ_IOC_DONE, &ka), "done_batch");
	ka.done = 0;
	KT_ERR(ioctl(fd, KWQ_IOC_DONE, &ka), ENOENT, "done_twice_enoent");

	/* --- forget, num_requeues, remove ------------------------------ */
	keys_args(&ka, pack(k3, 1), 1);
	ka.flags = KWQ_ADD_RATE_LIMITED;
	ka.delays = U64(&len);
	KT_OK(ioctl(fd, KWQ_IOC_ADD, &ka), "add_rate_limited");
	memset(&kk, 0, sizeof(kk));
	kk.key = U64("alpha");
	kk.len = 5;
	KT_OK(ioctl(fd, KWQ_IOC_NUM_REQUEUES, &kk), "num_requeues");
	ktap_check(kk.count == 1, "num_requeues_is_1", "count %u", kk.count);
	kk.len = 0;
	KT_ERR(ioctl(fd, KWQ_IOC_NUM_REQUEUES, &kk), EINVAL, "num_requeues_zero_len_einval");
	memset(longkey, 'z', sizeof(longkey));
	kk.key = U64(longkey);
	kk.len = KWQ_KEY_LEN_MAX + 1;
	KT_ERR(ioctl(fd, KWQ_IOC_NUM_REQUEUES, &kk), EINVAL, "num_requeues_oversized_einval");
	kk.key = U64(BADPTR);
	kk.len = 5;
	kk.count = 0;
	KT_ERR(ioctl(fd, KWQ_IOC_NUM_REQUEUES, &kk), EFAULT, "num_requeues_bad_key_efault");
	keys_args(&ka, pack(k3, 1), 1);
	KT_OK(ioctl(fd, KWQ_IOC_FORGET, &ka), "forget");
	memset(&kk, 0, sizeof(kk));
	kk.key = U64("alpha");
	kk.len = 5;
	r = ioctl(fd, KWQ_IOC_NUM_REQUEUES, &kk);
	ktap_check(r == 0 && kk.count == 0, "forget_clears_count", "r %d count %u",
		   r, kk.count);
	kk.count = 77;	/* an out field: its input value is ignored */
	r = ioctl(fd, KWQ_IOC_NUM_REQUEUES, &kk);
	ktap_check(r == 0 && kk.count == 0, "num_requeues_ignores_count_going_in",
		   "r %d errno %s count %u", r, kt_ename(errno), kk.count);
	keys_args(&ka, pack(k3, 1), 1);
	ka.pad = 1;
	KT_ERR(ioctl(fd, KWQ_IOC_FORGET, &ka), EINVAL, "forget_pad_einval");
	keys_args(&ka, pack(k3, 1), 1);
	KT_OK(ioctl(fd, KWQ_IOC_REMOVE, &ka), "remove_queued_key");
	/* done still says 1 from the call above: ignored going in. */
	KT_ERR(ioctl(fd, KWQ_IOC_REMOVE, &ka), ENOENT, "remove_unknown_key_enoent");
	ktap_check(ka.done == 0, "keys_done_rewritten_on_error", "done %u", ka.done);
	len = 99;
	ioctl(fd, KWQ_IOC_LEN, &len);
	ktap_check(len == 0, "remove_emptied_queue", "len %llu", (unsigned long long)len);

	/* --- stats ----------------------------------------------------- */
	memset(&st, 0xff, sizeof(st));
	KT_OK(ioctl(fd, KWQ_IOC_STATS, &st), "stats");
	ktap_check(st.len == 0 && st.waiting == 0 && st.processing == 0 &&
		   st.adds_total >= 4 && st.retries_total == 1 &&
		   st.shutting_down == 0 && st.pad == 0, "stats_values",
		   "len %llu wait %llu proc %llu adds %llu retries %llu shut %u pad %u",
		   (unsigned long long)st.len, (unsigned long long)st.waiting,
		   (unsigned long long)st.processing,
		   (unsigned long long)st.adds_total,
		   (unsigned long long)st.retries_total, st.shutting_down, st.pad);
	KT_ERR(ioctl(fd, KWQ_IOC_STATS, BADPTR), EFAULT, "stats_bad_pointer_efault");

	/* --- shutdown -------------------------------------------------- */
	memset(&sa, 0, sizeof(sa));
	sa.flags = 0x10;
	KT_ERR(ioctl(fd, KWQ_IOC_SHUTDOWN, &sa), EINVAL, "shutdown_unknown_flag_einval");
	sa.flags = 0;
	sa.pad = 1;
	KT_ERR(ioctl(fd, KWQ_IOC_SHUTDOWN, &sa), EINVAL, "shutdown_pad_einval");
	ktap_check(kwq_stats(fd, &st) == 0 && st.shutting_down == 0,
		   "rejected_shutdown_did_not_shut_down", "shutting_down %u",
		   st.shutting_down);
	sa.pad = 0;
	KT_OK(ioctl(fd, KWQ_IOC_SHUTDOWN, &sa), "shutdown");
	keys_args(&ka, pack(k3, 1), 1);
	KT_ERR(ioctl(fd, KWQ_IOC_ADD, &ka), ESHUTDOWN, "add_after_shutdown_eshutdown");
	get_args(&ga, getbuf, sizeof(getbuf), 1);
	ga.timeout_ns = -1;
	KT_ERR(ioctl(fd, KWQ_IOC_GET, &ga), ESHUTDOWN, "get_shut_down_and_empty_eshutdown");

	/* --- destroy --------------------------------------------------- */
	memset(&oa, 0, sizeof(oa));
	strcpy(oa.name, name);
	oa.flags = 2;
	KT_ERR(ioctl(ufd, KWQ_IOC_DESTROY, &oa), EINVAL, "destroy_flags_einval");
	oa.flags = 0;
	KT_OK(ioctl(ufd, KWQ_IOC_DESTROY, &oa), "destroy");
	KT_ERR(ioctl(ufd, KWQ_IOC_DESTROY, &oa), ENOENT, "destroy_twice_enoent");
	KT_ERR(ioctl(fd, KWQ_IOC_LEN, &len), EIDRM, "len_on_destroyed_eidrm");
	keys_args(&ka, pack(k3, 1), 1);
	KT_ERR(ioctl(fd2, KWQ_IOC_ADD, &ka), EIDRM, "add_on_destroyed_eidrm");
	get_args(&ga, getbuf, sizeof(getbuf), 1);
	KT_ERR(ioctl(fd2, KWQ_IOC_GET, &ga), EIDRM, "get_on_destroyed_eidrm");
	KT_ERR(ioctl(fd2, KWQ_IOC_STATS, &st), EIDRM, "stats_on_destroyed_eidrm");
	/* the name is free again */
	close(fd2);
	fd2 = kt_dev();
	KT_OK(kwq_create(fd2, name, NULL), "name_reusable_after_destroy");
	KT_OK(kwq_destroy(ufd, name), "destroy_reused");

	close(fd);
	close(fd2);
	close(ufd);
	return ktap_end();
}
