// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side unit tests of libkwq's ring API (kwq_ring_*()) against a
 * model of the kernel's side of the ring ABI in <linux/kwq.h>, no device
 * needed (make host-test). This program defines ioctl(), mmap() and
 * munmap(): libkwq's calls reach the model for the fake fd, the real
 * system calls for every other. The model applies records as the uapi
 * comments say (in order, an error completion for a failing one, leases
 * into free slots with a KWQ_CQE_LEASE completion each, EBUSY when a
 * completion cannot be posted), so what is checked here is the library:
 * record layout and wrap-around, publishing, the need-wakeup check, room
 * in a full ring, completions to the caller, leases handed out.
 * libring_test checks the same calls against the real kernel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ktap.h"
#include "libkwq.h"

#define FAKE_FD		1000
#define MODEL_KEYS	4096

/* The model's state: one ring on FAKE_FD, one queue. */
static struct {
	struct kwq_ring_setup_args a;
	unsigned char *user, *kernel;
	struct kwq_ring_status *status;
	uint32_t head;			/* the kernel's own sq head */
	uint64_t next_gen;
	uint64_t lease_gen[KWQ_RING_LEASES_MAX];	/* 0: free */
	struct { uint32_t len; unsigned char key[KWQ_KEY_LEN_MAX]; } q[MODEL_KEYS];
	unsigned int q_first, q_nr, q_max;
	unsigned int enters, submits, mapped;
} m;

static uint32_t *u32_at(unsigned char *base, uint32_t off)
{
	return (uint32_t *)(base + off);
}

static int model_cqe(uint32_t index, uint8_t op, int res, uint64_t value)
{
	uint32_t tail = *u32_at(m.kernel, m.a.cq_tail_off);
	uint32_t head = __atomic_load_n(u32_at(m.user, m.a.cq_head_off),
					__ATOMIC_ACQUIRE);
	struct kwq_cqe *c;

	if (tail - head >= m.a.cq_entries)
		return -1;
	c = (struct kwq_cqe *)(m.kernel + m.a.cqes_off) +
	    (tail & (m.a.cq_entries - 1));
	c->index = index;
	c->op = op;
	c->flags = 0;
	c->res = (int16_t)res;
	c->value = value;
	__atomic_store_n(u32_at(m.kernel, m.a.cq_tail_off), tail + 1,
			 __ATOMIC_RELEASE);
	return 0;
}

static uint32_t cq_free(void)
{
	return m.a.cq_entries - (*u32_at(m.kernel, m.a.cq_tail_off) -
				 *u32_at(m.user, m.a.cq_head_off));
}

/* Apply the published records; EBUSY if one could not complete. */
static int model_drain(void)
{
	uint32_t tail = __atomic_load_n(u32_at(m.user, m.a.sq_tail_off),
					__ATOMIC_ACQUIRE);
	uint32_t mask = m.a.sq_entries - 1, i, n;
	unsigned char key[KWQ_KEY_LEN_MAX + KWQ_SQE_SIZE];
	struct kwq_sqe sqe;
	int res;

	if (tail - m.head > m.a.sq_entries)
		return EINVAL;
	while (m.head != tail) {
		memcpy(&sqe, m.user + m.a.sqes_off + (m.head & mask) * 64, 64);
		if (sqe.nslots != KWQ_SQE_SLOTS(sqe.len) ||
		    tail - m.head < sqe.nslots)
			return EPROTO;	/* the library writes whole records */
		memcpy(key, sqe.key, KWQ_SQE_INLINE);
		for (i = 1; i < sqe.nslots; i++)
			memcpy(key + KWQ_SQE_INLINE + (i - 1) * 64,
			       m.user + m.a.sqes_off + ((m.head + i) & mask) * 64,
			       64);
		/* bytes past the key are 0 */
		n = KWQ_SQE_INLINE + (sqe.nslots - 1) * 64;
		for (i = sqe.len; i < n; i++)
			if (key[i])
				return EPROTO;
		res = 0;
		switch (sqe.op) {
		case KWQ_SQE_ADD:
			if (m.q_nr >= m.q_max) {
				res = -ENOSPC;
				break;
			}
			i = (m.q_first + m.q_nr++) % MODEL_KEYS;
			m.q[i].len = sqe.len;
			memcpy(m.q[i].key, key, sqe.len);
			break;
		case KWQ_SQE_DONE_LEASE:
			if (sqe.lease_slot >= m.a.lease_slots ||
			    m.lease_gen[sqe.lease_slot] != sqe.arg) {
				res = -ESTALE;
				break;
			}
			m.lease_gen[sqe.lease_slot] = 0;
			break;
		case KWQ_SQE_NOP:
		case KWQ_SQE_REMOVE:
			break;
		default:
			res = -EINVAL;
		}
		if ((res || (sqe.flags & KWQ_SQE_F_CQE)) && !cq_free()) {
			/* left in place (the model applies nothing twice:
			 * only completions-less records changed state) */
			if (sqe.op == KWQ_SQE_ADD && !res)
				m.q_nr--;
			return EBUSY;
		}
		if (res || (sqe.flags & KWQ_SQE_F_CQE))
			model_cqe(m.head, sqe.op, res, 0);
		m.head += sqe.nslots;
		__atomic_store_n(u32_at(m.kernel, m.a.sq_head_off), m.head,
				 __ATOMIC_RELEASE);
	}
	return 0;
}

static int model_get(struct kwq_ring_enter_args *e)
{
	struct kwq_lease_slot *ls;
	unsigned int s, got = 0;

	if (!e->get_max || e->get_max > m.a.lease_slots ||
	    e->get_min > e->get_max)
		return EINVAL;
	for (s = 0; s < m.a.lease_slots && got < e->get_max && m.q_nr; s++) {
		if (m.lease_gen[s] || !cq_free())
			continue;
		ls = (struct kwq_lease_slot *)(m.kernel + m.a.leases_off +
					       s * KWQ_LEASE_SLOT_SIZE);
		m.lease_gen[s] = ++m.next_gen;
		ls->gen = m.lease_gen[s];
		ls->len = m.q[m.q_first].len;
		ls->priority = 0;
		memcpy(ls->key, m.q[m.q_first].key, ls->len);
		m.q_first = (m.q_first + 1) % MODEL_KEYS;
		m.q_nr--;
		model_cqe(s, KWQ_CQE_LEASE, 0, ls->gen);
		got++;
	}
	e->leased = got;
	if (got)
		return 0;
	for (s = 0; s < m.a.lease_slots && m.lease_gen[s]; s++)
		;
	if (s == m.a.lease_slots)
		return ENOBUFS;
	/* The model cannot sleep: a getter that would is "waiting" now. */
	if (e->timeout_ns) {
		m.status->waiters = 1;
		return ETIMEDOUT;
	}
	return EAGAIN;
}

static int model_setup(struct kwq_ring_setup_args *a)
{
	size_t cq_end;

	if (m.user)
		return EBUSY;
	a->sq_tail_off = 0;
	a->cq_head_off = 64;
	a->sqes_off = 128;
	a->user_size = 128 + (size_t)a->sq_entries * 64;
	a->sq_head_off = 0;
	a->cq_tail_off = 64;
	a->ring_flags_off = 68;
	a->cqes_off = 128;
	cq_end = 128 + (size_t)a->cq_entries * sizeof(struct kwq_cqe);
	a->leases_off = (cq_end + 63) & ~63UL;
	a->kernel_size = a->leases_off +
			 (size_t)a->lease_slots * KWQ_LEASE_SLOT_SIZE;
	a->status_size = 4096;
	m.a = *a;
	m.user = calloc(1, a->user_size);
	m.kernel = calloc(1, a->kernel_size);
	m.status = calloc(1, a->status_size);
	return m.user && m.kernel && m.status ? 0 : ENOMEM;
}

int ioctl(int fd, unsigned long cmd, ...)
{
	struct kwq_ring_enter_args *e;
	va_list ap;
	void *arg;
	int err = 0;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd != FAKE_FD)
		return (int)syscall(SYS_ioctl, fd, cmd, arg);
	switch (cmd) {
	case KWQ_IOC_RING_SETUP:
		err = model_setup(arg);
		break;
	case KWQ_IOC_RING_ENTER:
		e = arg;
		m.enters++;
		m.status->waiters = 0;
		if (e->flags & KWQ_ENTER_SUBMIT) {
			m.submits++;
			err = model_drain();
		}
		if (!err && (e->flags & KWQ_ENTER_GET))
			err = model_get(e);
		break;
	default:
		err = ENOTTY;
	}
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (fd != FAKE_FD)
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	m.mapped++;
	if (off == (off_t)KWQ_RING_OFF_USER && len == m.a.user_size &&
	    (prot & PROT_WRITE))
		return m.user;
	if (off == (off_t)KWQ_RING_OFF_KERNEL && len == m.a.kernel_size &&
	    !(prot & PROT_WRITE))
		return m.kernel;
	if (off == (off_t)KWQ_RING_OFF_STATUS && len == m.a.status_size &&
	    !(prot & PROT_WRITE))
		return m.status;
	m.mapped--;
	errno = EINVAL;
	return MAP_FAILED;
}

int munmap(void *addr, size_t len)
{
	if (addr == m.user || addr == m.kernel || addr == m.status) {
		m.mapped--;
		return 0;
	}
	return (int)syscall(SYS_munmap, addr, len);
}

static void model_reset(unsigned int q_max)
{
	free(m.user);
	free(m.kernel);
	free(m.status);
	memset(&m, 0, sizeof(m));
	m.q_max = q_max;
}

static struct kwq_cqe seen[8];
static unsigned int nseen;

static void cb(void *arg, const struct kwq_cqe *cqe)
{
	(void)arg;
	if (nseen < 8)
		seen[nseen] = *cqe;
	nseen++;
}

/* The key written at each ring index (mod 1024), for cb_slot(). */
static char want[1024][8];
static unsigned int slot_seen, slot_bad;

/* A completion's record must still be in the ring when it is handed over. */
static void cb_slot(void *arg, const struct kwq_cqe *cqe)
{
	const struct kwq_sqe *sqe = (const struct kwq_sqe *)
		(m.user + m.a.sqes_off + (cqe->index & (m.a.sq_entries - 1)) * 64);

	(void)arg;
	slot_seen++;
	if (cqe->res != -ENOSPC || sqe->len != strlen(want[cqe->index % 1024]) ||
	    memcmp(sqe->key, want[cqe->index % 1024], sqe->len))
		slot_bad++;
}

int main(void)
{
	static unsigned char big[3][KWQ_KEY_LEN_MAX];
	struct kwq_ring_lease l[4];
	struct kwq_cqe cqe[4];
	struct kwq_ring *r;
	char buf[8];
	unsigned int i, ok;
	uint32_t idx;
	int ret, n;

	ktap_suite("host_ring", 18);

	model_reset(MODEL_KEYS);
	ret = kwq_ring_setup(FAKE_FD, 32, 32, 4, &r);
	ktap_check(ret == 0 && m.mapped == 3, "setup_maps_three_regions",
		   "ret %d errno %d mapped %u", ret, errno, m.mapped);

	/* nobody waits: the add is published with no system call */
	ret = kwq_ring_add(r, "a", 1, 0);
	ktap_check(ret == 0 && m.enters == 0 &&
		   *u32_at(m.user, m.a.sq_tail_off) == 1,
		   "add_publishes_without_enter", "ret %d enters %u tail %u",
		   ret, m.enters, *u32_at(m.user, m.a.sq_tail_off));
	n = kwq_ring_get(r, l, 4, 1, 0);
	ktap_check(n == 1 && l[0].len == 1 && !memcmp(l[0].key, "a", 1) &&
		   l[0].gen == 1 && m.enters == 1, "get_one_enter_one_lease",
		   "n %d enters %u", n, m.enters);

	/* a getter waits: the next add rings the doorbell */
	n = kwq_ring_done_get(r, l, 1, l, 1, 1, 1000);
	ktap_check(n == -1 && errno == ETIMEDOUT && m.lease_gen[0] == 0,
		   "done_get_finishes_then_waits", "n %d errno %d gen %llu", n,
		   errno, (unsigned long long)m.lease_gen[0]);
	ret = kwq_ring_prep(r, KWQ_SQE_ADD, 0, "b", 1, 0, 0, NULL);
	ret = ret ? ret : kwq_ring_publish(r);
	ktap_check(ret == 1 && m.submits == 3 && m.q_nr == 1,
		   "publish_rings_when_waiters", "ret %d submits %u queued %u",
		   ret, m.submits, m.q_nr);

	/* 1024-byte keys: 17 slots each, wrapping around 32 */
	n = kwq_ring_get(r, l, 1, 1, 0);
	ret = n == 1 ? kwq_ring_done_lease(r, &l[0]) : -1;
	for (i = 0; i < 3; i++) {
		memset(big[i], 'A' + i, sizeof(big[i]));
		big[i][sizeof(big[i]) - 1] = (unsigned char)i;
		ret |= kwq_ring_add(r, big[i], sizeof(big[i]), 0);
	}
	for (i = 0, ok = 0; i < 3; i++) {
		if (kwq_ring_get(r, l, 1, 1, 0) != 1)
			break;
		ok += l[0].len == sizeof(big[i]) &&
		      !memcmp(l[0].key, big[i], sizeof(big[i]));
		kwq_ring_done_lease(r, &l[0]);
	}
	ktap_check(!ret && ok == 3, "long_keys_wrap_intact",
		   "ret %d, %u of 3 intact", ret, ok);

	/* a full ring makes room through the doorbell, drops nothing */
	i = m.submits;
	for (n = 0, ret = 0; n < 100 && !ret; n++)
		ret = kwq_ring_add(r, "k", 1, 0);
	ktap_check(!ret && m.submits > i &&
		   m.q_nr + (*u32_at(m.user, 0) - m.head) == 100,
		   "full_ring_submits", "ret %d queued %u unread %u submits %u",
		   ret, m.q_nr, *u32_at(m.user, 0) - m.head, m.submits - i);
	kwq_ring_submit(r);
	ktap_check(m.q_nr == 100, "full_ring_drops_nothing", "queued %u",
		   m.q_nr);

	/* a worker's cycle: one enter, dones and the get together */
	n = kwq_ring_get(r, l, 4, 4, 0);
	ret = kwq_ring_done_get(r, l, 4, l, 2, 1, 0);
	i = m.enters;
	ret = ret == 2 ? kwq_ring_done_get(r, l, 2, l, 2, 2, 0) : -1;
	ktap_check(n == 4 && ret == 2 && m.enters == i + 1,
		   "done_get_one_enter_per_cycle", "n %d ret %d enters %u",
		   n, ret, m.enters - i);
	kwq_ring_done_lease(r, &l[0]);
	kwq_ring_done_lease(r, &l[1]);

	/* kwq_ring_next(): one enter per prefetch of keys, not per key */
	i = m.enters;
	for (n = 0, ret = 1; n < 8 && ret == 1; n++)
		ret = kwq_ring_next(r, n ? &l[0] : NULL, &l[0], 4, 0);
	ktap_check(ret == 1 && n == 8 && m.enters == i + 2,
		   "next_one_enter_per_prefetch", "ret %d keys %d enters %u",
		   ret, n, m.enters - i);
	kwq_ring_done_lease(r, &l[0]);

	/* an error completion: kept for reap, then to the callback */
	kwq_ring_free(r);
	model_reset(1);
	ret = kwq_ring_setup(FAKE_FD, 32, 32, 1, &r);
	kwq_ring_add(r, "x", 1, 0);
	kwq_ring_prep(r, KWQ_SQE_ADD, 0, "y", 1, 0, 0, &idx);
	kwq_ring_submit(r);
	n = (int)kwq_ring_reap(r, cqe, 4);
	ktap_check(!ret && n == 1 && cqe[0].op == KWQ_SQE_ADD &&
		   cqe[0].res == -ENOSPC && cqe[0].index == idx && idx == 1,
		   "enospc_completion_reaped", "n %d res %d index %u", n,
		   n ? cqe[0].res : 0, n ? cqe[0].index : 0);
	kwq_ring_set_callback(r, cb, NULL);
	n = kwq_ring_get(r, l, 1, 1, 0);
	l[1] = l[0];
	l[1].gen++;
	kwq_ring_done_lease(r, &l[1]);
	kwq_ring_submit(r);
	kwq_ring_reap(r, cqe, 4);
	ktap_check(n == 1 && nseen == 1 && seen[0].op == KWQ_SQE_DONE_LEASE &&
		   seen[0].res == -ESTALE, "stale_lease_to_callback",
		   "n %d seen %u res %d", n, nseen, nseen ? seen[0].res : 0);

	/*
	 * A full completion ring: the doorbell reads it (into the kept
	 * completions) and rings again; once those are full too, EBUSY
	 * until they are reaped, and no record is lost.
	 */
	kwq_ring_set_callback(r, NULL, NULL);
	for (i = 0, ret = 0; i < 40 && !ret; i++)
		ret = kwq_ring_prep(r, KWQ_SQE_NOP, KWQ_SQE_F_CQE, NULL, 0, 0,
				    0, NULL);
	ret = ret ? ret : kwq_ring_submit(r);
	ktap_check(ret == 0 && m.head == *u32_at(m.user, 0),
		   "full_cq_read_and_rung_again", "ret %d errno %d", ret, errno);
	for (i = 0, ret = 0; i < 40 && !ret; i++)
		ret = kwq_ring_prep(r, KWQ_SQE_NOP, KWQ_SQE_F_CQE, NULL, 0, 0,
				    0, NULL);
	n = errno;
	ok = i - 1;	/* records written */
	ktap_check(ret == -1 && n == EBUSY, "kept_full_is_ebusy",
		   "ret %d errno %d after %u records", ret, n, ok);
	for (n = 0; (ret = (int)kwq_ring_reap(r, cqe, 4)); n += ret)
		;
	ret = kwq_ring_submit(r);
	for (; (i = kwq_ring_reap(r, cqe, 4)); n += (int)i)
		;
	ktap_check(ret == 0 && m.head == *u32_at(m.user, 0) &&
		   n == (int)(40 + ok), "every_nop_completes_once",
		   "ret %d head %u tail %u completions %d of %u", ret, m.head,
		   *u32_at(m.user, 0), n, 40 + ok);

	/*
	 * A full ring with every add refused (the model's queue holds one
	 * key, and holds it): each completion is handed over before its
	 * ring position is written again.
	 */
	kwq_ring_set_callback(r, cb_slot, NULL);
	m.q_nr = m.q_max;
	for (i = 0, ret = 0; i < 100 && !ret; i++) {
		snprintf(buf, sizeof(buf), "r%u", i);
		ret = kwq_ring_prep(r, KWQ_SQE_ADD, 0, buf, strlen(buf), 0, 0,
				    &idx);
		if (!ret)
			memcpy(want[idx % 1024], buf, sizeof(buf));
		ret = ret ? ret : kwq_ring_publish(r);
	}
	ret = ret ? ret : kwq_ring_submit(r);
	kwq_ring_reap(r, cqe, 4);
	ktap_check(ret == 0 && slot_seen == 100 && slot_bad == 0,
		   "completion_before_position_reused",
		   "ret %d, %u completions, %u of them for a reused position",
		   ret, slot_seen, slot_bad);
	kwq_ring_set_callback(r, NULL, NULL);

	/* argument checks before any system call */
	i = m.enters;
	errno = 0;
	ret = kwq_ring_add(r, big[0], KWQ_KEY_LEN_MAX + 1, 0);
	ktap_check(ret == -1 && errno == EINVAL && m.enters == i,
		   "key_too_long_einval", "ret %d errno %d", ret, errno);
	kwq_ring_done_lease(r, &l[0]);
	ret = kwq_ring_free(r);
	ktap_check(ret == 0 && m.mapped == 0, "free_unmaps", "ret %d mapped %u",
		   ret, m.mapped);
	return ktap_end();
}
