// SPDX-License-Identifier: GPL-2.0
/*
 * The record codec of /dev/kwq's ioctls: argument structs and words
 * copied in and out of userspace, the buffers a call's records go
 * through (on the stack, in the file's scratch buffer under its
 * out_lock or in_lock, or on the heap), and the key records of the
 * batch calls read in, checked whole and sound before any is applied,
 * and read back as struct kwq_key (the format: include/uapi/linux/kwq.h).
 * It takes no lock but the scratch buffer's.
 */

#include <linux/kwq.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <uapi/linux/kwq.h>

#include "dev.h"

/*
 * Small copies in whole 8-byte words: the argument structs and one key's
 * record, the copies every call makes. One user access window of plain
 * loads or stores, where copy_{from,to}_user() adds a run-time object
 * size check (the sizes are not constants) and a string copy: 30-80
 * guest instructions of a one-key ADD and 130-170 of a DONE_GET under
 * QEMU (Documentation/benchmarks.rst). Anything else goes through
 * copy_{from,to}_user(). @k is the caller's own buffer of @len bytes,
 * 8-byte aligned.
 */
#define KWQ_WORDS_MAX		KWQ_REC_SMALL

bool kwq_words_ok(const void __user *u, size_t len)
{
	return len <= KWQ_WORDS_MAX && IS_ALIGNED(len, sizeof(u64)) &&
	       (IS_ENABLED(CONFIG_HAVE_EFFICIENT_UNALIGNED_ACCESS) ||
		IS_ALIGNED((unsigned long)u, sizeof(u64)));
}

int kwq_copy_in(void *k, const void __user *u, size_t len)
{
	const u64 __user *src = u;
	u64 *dst = k;
	size_t i;

	if (!kwq_words_ok(u, len))
		return copy_from_user(k, u, len) ? -EFAULT : 0;
	if (!user_read_access_begin(u, len))
		return -EFAULT;
	for (i = 0; i < len / sizeof(u64); i++)
		unsafe_get_user(dst[i], &src[i], efault);
	user_read_access_end();
	return 0;
efault:
	user_read_access_end();
	return -EFAULT;
}

int kwq_copy_out(void __user *u, const void *k, size_t len)
{
	u64 __user *dst = u;
	const u64 *src = k;
	size_t i;

	if (!kwq_words_ok(u, len))
		return copy_to_user(u, k, len) ? -EFAULT : 0;
	if (!user_write_access_begin(u, len))
		return -EFAULT;
	for (i = 0; i < len / sizeof(u64); i++)
		unsafe_put_user(src[i], &dst[i], efault);
	user_write_access_end();
	return 0;
efault:
	user_write_access_end();
	return -EFAULT;
}

int kwq_copy_args_out(unsigned long arg, const void *src, size_t ksize)
{
	return kwq_copy_out((void __user *)arg, src, ksize);
}

/*
 * A buffer of @len bytes for one call: @small (KWQ_REC_SMALL bytes on
 * the caller's stack) when that is enough, else the file's scratch part
 * for records copied @out (else in) when it is big enough and no other
 * call on the file uses it, else a new one. kwq_buf_put() with the same
 * @small gives it back.
 */
void *kwq_buf_get(struct kwq_file *kf, size_t len, u8 *small,
		  bool out)
{
	if (len <= KWQ_REC_SMALL)
		return small;
	if (out) {
		if (len <= KWQ_SCRATCH_OUT_LEN && mutex_trylock(&kf->out_lock))
			return kf->scratch;
	} else if (len <= KWQ_SCRATCH_IN_LEN && mutex_trylock(&kf->in_lock)) {
		return kf->scratch + KWQ_SCRATCH_OUT_LEN;
	}
	return kvmalloc(len, GFP_KERNEL_ACCOUNT);
}

void kwq_buf_put(struct kwq_file *kf, void *buf, u8 *small)
{
	if (buf == small)
		return;
	if (buf == kf->scratch)
		mutex_unlock(&kf->out_lock);
	else if (buf == kf->scratch + KWQ_SCRATCH_OUT_LEN)
		mutex_unlock(&kf->in_lock);
	else
		kvfree(buf);
}

/*
 * Check a whole record buffer (8-byte aligned) before any key takes
 * effect: each record sound (kwq_rec_size()), exactly @nr (at least one)
 * records filling exactly @len bytes.
 */
static int kwq_recs_check(const u8 *buf, u32 len, u32 nr, bool prio_ok)
{
	u32 off = 0, i;
	int size;

	if (!nr)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		size = kwq_rec_size((const u64 *)(buf + off), len - off,
				    prio_ok);
		if (size < 0)
			return size;
		off += size;
	}
	return off == len ? 0 : -EINVAL;
}

/*
 * Bytes of a record buffer copied in between two scheduling points: a
 * whole buffer (up to KWQ_RECS_LEN_MAX, 4 MiB of the longest keys) is
 * not one stretch without one (issue 30, finding 5). A task being
 * killed stops between pieces: nothing has taken effect yet.
 */
#define KWQ_COPY_PIECE		SZ_64K

static int kwq_recs_copy_in(u8 *buf, const u8 __user *u, u32 len)
{
	u32 off, n;
	int ret;

	for (off = 0; off < len; off += n) {
		if (off) {
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
		}
		n = min_t(u32, len - off, KWQ_COPY_PIECE);
		ret = kwq_copy_in(buf + off, u + off, n);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Copy @nr records of @len bytes in and check them; kwq_buf_put() after
 * (@small: see kwq_buf_get()). The check reads a record's header and
 * last word, not its key: a fraction of a millisecond for a whole batch.
 */
u8 *kwq_recs_in(struct kwq_file *kf, u64 uptr, u32 len, u32 nr,
		bool prio_ok, u8 *small)
{
	u8 *buf;
	int ret;

	if (!nr || nr > KWQ_BATCH_MAX || !len || len > KWQ_RECS_LEN_MAX)
		return ERR_PTR(-EINVAL);
	buf = kwq_buf_get(kf, len, small, false);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	ret = kwq_recs_copy_in(buf, u64_to_user_ptr(uptr), len);
	if (!ret)
		ret = kwq_recs_check(buf, len, nr, prio_ok);
	if (ret) {
		kwq_buf_put(kf, buf, small);
		return ERR_PTR(ret);
	}
	return buf;
}

/* The @n checked records at @buf + *@off as keys; *@off moves past them. */
void kwq_recs_keys(const u8 *buf, u32 *off, struct kwq_key *keys,
		   u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		const struct kwq_rec *r = (const void *)(buf + *off);

		keys[i].key = r + 1;
		keys[i].len = r->len;
		keys[i].priority = r->priority;
		*off += KWQ_REC_SIZE(r->len);
	}
}

/*
 * The key of a one-key call, @len bytes at @uptr, copied in: into @small
 * (KWQ_REC_SMALL bytes on the caller's stack) or a larger buffer, as
 * kwq_buf_get() chooses; kwq_buf_put() after.
 */
void *kwq_key_in(struct kwq_file *kf, u64 uptr, u32 len, u8 *small)
{
	void *key;

	if (!len || len > KWQ_KEY_LEN_MAX)
		return ERR_PTR(-EINVAL);
	key = kwq_buf_get(kf, len, small, false);
	if (!key)
		return ERR_PTR(-ENOMEM);
	if (copy_from_user(key, u64_to_user_ptr(uptr), len)) {
		kwq_buf_put(kf, key, small);
		return ERR_PTR(-EFAULT);
	}
	return key;
}
