/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The history records of kwq_torture.ko's kernel threads, as
 * userspace/tests/torture_test.c reads them from
 * /sys/kernel/debug/kwq_torture/history and merges them into its own.
 * Shared by the module and the test; the op and kind numbers are the
 * test's (it checks them at compile time).
 */
#ifndef _KWQ_TORTURE_H
#define _KWQ_TORTURE_H

#include <linux/types.h>

#define KWQ_TORTURE_KMAX	16	/* keys in one record */
/*
 * Key numbers (the key "k%u"): the queue's index << 28, then one of
 * KWQ_TORTURE_POOL shared keys, or a unique one above them; the kernel
 * threads' unique keys start at KWQ_TORTURE_UNIQUE, far above the
 * processes'.
 */
#define KWQ_TORTURE_POOL	48
#define KWQ_TORTURE_UNIQUE	0x08000000

enum {
	KWQ_TORTURE_OP_ADD = 1,
	KWQ_TORTURE_OP_ADDB = 2,
	KWQ_TORTURE_OP_GET = 3,
	KWQ_TORTURE_OP_DONEGET = 4,
	KWQ_TORTURE_OP_DONE = 5,
	KWQ_TORTURE_OP_DONEB = 6,
	KWQ_TORTURE_OP_REMOVE = 7,
	KWQ_TORTURE_OP_FORGET = 8,
	KWQ_TORTURE_OP_PURGE = 9,
};

/* Kinds of add (.kind). */
enum {
	KWQ_TORTURE_K_PLAIN,
	KWQ_TORTURE_K_PRIO,
	KWQ_TORTURE_K_AFTER,
	KWQ_TORTURE_K_RL,
};

/*
 * One completed call of a kernel thread (a thread stops only between
 * calls: every record is complete). Times are ktime_get_ns(), which is
 * userspace's CLOCK_MONOTONIC. @slot: the test's slot of the thread.
 * @keys, @ret, @aux, @arg: as the test's own records (struct trec):
 * add: the key, @ret 0 or -1 (rate limited: the delay); batches: @ret
 * the number handled; gets: @ret the keys taken, @aux the most asked
 * for; done_get: @ndone keys finished first (@aux of them finished),
 * then those handed out. @err: a positive errno or 0. @fnth: the
 * call ran with fail-nth armed at this N, 0: not armed; with
 * KWQ_TORTURE_FNTH_FAILED if it reached its Nth fault-injection point,
 * which failed (what kwq then did is @err: a refusal, or a way around).
 */
#define KWQ_TORTURE_FNTH_FAILED	0x8000

struct kwq_torture_rec {
	__u8 op, nk, ndone, kind;
	__u16 slot, fnth;
	__s32 err, aux;
	__s64 ret, inv, cmp, arg;
	__u32 key[KWQ_TORTURE_KMAX];
};

#endif /* _KWQ_TORTURE_H */
