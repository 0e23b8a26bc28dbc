/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kwq userspace ABI: the ioctls of /dev/kwq.
 *
 * Rules (Documentation/process/botching-up-ioctls.rst):
 *  - fixed-size types only, user pointers as __u64, explicit padding;
 *  - every flags, pad and reserved field must be zero, else EINVAL;
 *  - every argument struct is versioned by its size: the kernel reads the
 *    size from the ioctl number (_IOC_SIZE), accepts a smaller (older)
 *    struct by treating missing fields as zero and a larger (newer) one
 *    if the extra bytes are zero (E2BIG otherwise). Structs only grow at
 *    the end.
 *
 * An fd of /dev/kwq attaches to at most one queue (KWQ_IOC_CREATE or
 * KWQ_IOC_OPEN); queue operations on an unattached fd fail with ENOTCONN,
 * and on a queue destroyed (or unpublished) meanwhile with EIDRM.
 *
 * Queue names are per IPC namespace: KWQ_IOC_CREATE, KWQ_IOC_OPEN,
 * KWQ_IOC_DESTROY and KWQ_IOC_LIST see the queues of the caller's IPC
 * namespace only. Queues of kernel modules are seen only where their
 * module published them; those cannot be destroyed from userspace (EPERM).
 *
 * Keys travel in packed record buffers: each record is a struct kwq_rec
 * header followed by @len key bytes, padded with zeroes to the next
 * multiple of 8 bytes (KWQ_REC_SIZE(len)), and starts 8-byte aligned.
 * A record's size depends on its key only: from KWQ_REC_SIZE(1) (16
 * bytes) to KWQ_REC_SIZE_MAX.
 *
 * Key lengths: version 1 of this ABI took keys of 1..256 bytes
 * (KWQ_KEY_LEN_MAX_VER1), today's 1..KWQ_KEY_LEN_MAX. Buffers sized for
 * version 1 keep working: the kernel accepts an output buffer of
 * KWQ_REC_SIZE_MAX_VER1 (KWQ_IOC_GET) or KWQ_INFO_REC_SIZE_MAX_VER1
 * (KWQ_IOC_INSPECT) bytes, as version 1 required, and fails a call whose
 * first key does not fit in it with EMSGSIZE, the key left where it was.
 * Only a longer key, which an older binary never adds, can do that.
 *
 * Fields marked "out:" are written by the kernel; what they hold on input
 * is ignored, so an argument struct can be reused.
 */
#ifndef _UAPI_LINUX_KWQ_H
#define _UAPI_LINUX_KWQ_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Queue names: 1..KWQ_NAME_LEN-1 bytes of [A-Za-z0-9._-], NUL-terminated. */
#define KWQ_NAME_LEN		64
/* Keys: 1..KWQ_KEY_LEN_MAX bytes, any content. */
#define KWQ_KEY_LEN_MAX		1024
/* Version 1's longest key: what older binaries sized their buffers for. */
#define KWQ_KEY_LEN_MAX_VER1	256
/* Most rate limiters one queue combines (as the max of their delays). */
#define KWQ_LIMITS_MAX		4

/* struct kwq_limit.type */
#define KWQ_LIMIT_EXPONENTIAL	1	/* a = base ns, b = max ns */
#define KWQ_LIMIT_FAST_SLOW	2	/* a = fast ns, b = slow ns, count = max fast */
#define KWQ_LIMIT_BUCKET	3	/* a = qps * 1000, count = burst, b = 0 */

/**
 * struct kwq_limit - one per-key rate limiter, client-go numerics
 * @type: KWQ_LIMIT_*
 * @count: fast-slow: fast attempts; bucket: burst; else 0
 * @a: see KWQ_LIMIT_*
 * @b: see KWQ_LIMIT_*
 */
struct kwq_limit {
	__u32 type;
	__u32 count;
	__u64 a;
	__u64 b;
};

/*
 * Processing timeouts (struct kwq_create_args, struct kwq_get_args,
 * struct kwq_touch_args), in ns: a key processing longer loses its lease
 * and is requeued as a failure. 0 in kwq_get_args and kwq_touch_args
 * means the queue's timeout; KWQ_TIMEOUT_NONE means no deadline.
 */
#define KWQ_PROCESSING_TIMEOUT_MIN	1000000ULL		/* 1 ms */
#define KWQ_PROCESSING_TIMEOUT_MAX	(86400ULL * 365 * 1000000000ULL)
#define KWQ_TIMEOUT_NONE		(~0ULL)

/**
 * struct kwq_create_args - KWQ_IOC_CREATE: create a queue, attach the fd
 * @name: NUL-terminated queue name, unique in the caller's IPC namespace
 * @flags: KWQ_CREATE_*
 * @mode: permission bits (0..0777) checked on KWQ_IOC_OPEN; 0 = 0600
 * @nr_limits: entries of @limits used; 0 = client-go's default
 *	controller rate limiter
 * @max_items: most keys queued at once (ENOSPC beyond), 0 = no cap
 * @max_wait_ns: cap on rate-limited delays, 0 = no cap
 * @limits: the rate limiters
 *
 * Version 1 ends here (KWQ_CREATE_ARGS_SIZE_VER1 bytes).
 *
 * @processing_timeout_ns: processing deadline of every get, 0 = none,
 *	else KWQ_PROCESSING_TIMEOUT_MIN..KWQ_PROCESSING_TIMEOUT_MAX (EINVAL
 *	otherwise)
 * @max_retries: the dead set: a rate-limited add of a key that already
 *	failed this many times moves it to the dead set instead of
 *	requeueing it; 0..KWQ_MAX_RETRIES, 0 = no dead set
 * @max_dead: most keys in the dead set, the oldest dropped first;
 *	0..KWQ_MAX_DEAD, 0 = KWQ_DEFAULT_MAX_DEAD; must be 0 without
 *	@max_retries
 */
struct kwq_create_args {
	char name[KWQ_NAME_LEN];
	__u32 flags;
	__u32 mode;
	__u32 nr_limits;
	__u32 max_items;
	__u64 max_wait_ns;
	struct kwq_limit limits[KWQ_LIMITS_MAX];
	/* version 2 */
	__u64 processing_timeout_ns;
	__u32 max_retries;
	__u32 max_dead;
};

#define KWQ_CREATE_ARGS_SIZE_VER1	184

/*
 * struct kwq_create_args.flags. KWQ_CREATE_EPHEMERAL: the queue is
 * destroyed, as by KWQ_IOC_DESTROY (its keys gone, its name free), when
 * the last file attached to it is closed: client-go's lifetime, where a
 * queue lives as long as the process that made it. Without it a queue
 * outlives its files until KWQ_IOC_DESTROY or its namespace's end.
 */
#define KWQ_CREATE_EPHEMERAL		0x1
#define KWQ_CREATE_FLAGS		KWQ_CREATE_EPHEMERAL
#define KWQ_MAX_RETRIES		1000000
#define KWQ_MAX_DEAD		1048576
#define KWQ_DEFAULT_MAX_DEAD	1024

/**
 * struct kwq_open_args - KWQ_IOC_OPEN, KWQ_IOC_DESTROY: name a queue
 * @name: NUL-terminated queue name
 * @flags: 0
 * @pad: 0
 */
struct kwq_open_args {
	char name[KWQ_NAME_LEN];
	__u32 flags;
	__u32 pad;
};

/**
 * struct kwq_list_args - KWQ_IOC_LIST: names of the queues of the
 *	caller's IPC namespace
 * @names: user pointer to @capacity char[KWQ_NAME_LEN] slots
 * @capacity: slots at @names
 * @count: out: number of queues (may exceed @capacity)
 */
struct kwq_list_args {
	__u64 names;
	__u32 capacity;
	__u32 count;
};

/**
 * struct kwq_rec - header of one key in a record buffer
 * @len: key length, 1..KWQ_KEY_LEN_MAX
 * @priority: add: priority (higher first); get: the key's priority;
 *	done/forget/remove: 0
 */
struct kwq_rec {
	__u32 len;
	__s32 priority;
	/* followed by len key bytes, zero-padded to 8 */
};

#define KWQ_REC_SIZE(len)	((sizeof(struct kwq_rec) + (len) + 7) & ~7UL)
/* Most records in one batch call (EINVAL beyond). */
#define KWQ_BATCH_MAX		4096
#define KWQ_REC_SIZE_MAX	KWQ_REC_SIZE(KWQ_KEY_LEN_MAX)
/* Version 1's largest record: the smallest KWQ_IOC_GET buffer. */
#define KWQ_REC_SIZE_MAX_VER1	KWQ_REC_SIZE(KWQ_KEY_LEN_MAX_VER1)

/* A rate-limited add's delay for a key that moved to the dead set. */
#define KWQ_DELAY_DEAD		(~(__u64)0)

/* struct kwq_keys_args.flags for KWQ_IOC_ADD; at most one of them */
#define KWQ_ADD_AFTER		0x1	/* delay by after_ns */
#define KWQ_ADD_RATE_LIMITED	0x2	/* delay from the queue's limiter */
/*
 * With KWQ_ADD_AFTER and after_ns > 0 only (EINVAL otherwise), at most
 * one: which deadline a key that has one keeps. Without either the
 * earlier wins, as in client-go.
 */
#define KWQ_ADD_REPLACE		0x4	/* the new one, even if later */
#define KWQ_ADD_LATER		0x8	/* the later one */

/**
 * struct kwq_keys_args - a batch of keys: KWQ_IOC_ADD, KWQ_IOC_DONE,
 *	KWQ_IOC_FORGET, KWQ_IOC_REMOVE
 * @recs: user pointer to the record buffer
 * @recs_len: bytes at @recs (exactly the records, no trailing bytes)
 * @nr: number of records, 1..KWQ_BATCH_MAX
 * @flags: KWQ_ADD_* for KWQ_IOC_ADD, else 0
 * @after_ns: KWQ_ADD_AFTER: the delay; else 0
 * @delays: KWQ_ADD_RATE_LIMITED: user pointer to @nr __u64, out: the
 *	delay chosen per key in ns, KWQ_DELAY_DEAD for a key moved to the
 *	dead set; else 0
 * @done: out: records handled. Keys are handled in order and the call
 *	stops at the first failing one: on success @done == @nr; on error
 *	the first @done keys took effect and the rest did not.
 * @pad: 0
 * @pad2: 0
 *
 * Per-key errors: ENOSPC (item cap), EDQUOT (the queue creator's byte
 * budget, module parameter max_bytes_per_user, is spent), ESHUTDOWN (add
 * after shutdown),
 * ENOENT (done of a key not processing, remove of a key not queued),
 * EPERM (done of a key leased to another fd), ESTALE (done of a key
 * whose lease this fd lost to its processing deadline), EBUSY (remove of
 * a key that is processing and not queued again).
 */
struct kwq_keys_args {
	__u64 recs;
	__u32 recs_len;
	__u32 nr;
	__u32 flags;
	__u32 pad;
	__s64 after_ns;
	__u64 delays;
	__u32 done;
	__u32 pad2;
};

/* struct kwq_get_args.flags */
#define KWQ_GET_DETACHED	0x1	/* not leased to this fd */

/**
 * struct kwq_get_args - KWQ_IOC_GET: take up to @max ready keys
 * @recs: user pointer to the record buffer (filled with keys)
 * @recs_len: bytes at @recs; at least KWQ_REC_SIZE_MAX_VER1, and
 *	KWQ_REC_SIZE_MAX to take any key. A key is taken only if its record
 *	fits in the bytes left, so none is lost: the call stops before the
 *	first key that does not fit, or fails with EMSGSIZE if that is the
 *	first key (it stays ready, first of its priority level). A call
 *	waiting for @min_nr keys stops waiting once no record fits.
 * @max: most keys to take, >= 1
 * @flags: KWQ_GET_*
 * @min_nr: wait (within @timeout_ns) until this many keys are taken,
 *	0..@max; 0 or 1 waits for the first key only, then takes what is
 *	ready. Keys taken before the timeout are returned, not lost. The
 *	wait also ends at the processing deadline of the first key taken,
 *	and no key is taken once that key's lease has ended: a call never
 *	returns one key twice.
 * @timeout_ns: wait at most this long: < 0 forever, 0 not at all (as
 *	O_NONBLOCK: EAGAIN); ETIMEDOUT when it passes with no key taken
 * @nr: out: keys taken
 * @used: out: bytes of @recs filled
 *
 * Version 1 ends here (KWQ_GET_ARGS_SIZE_VER1 bytes).
 *
 * @processing_timeout_ns: the processing deadline of the keys taken: 0
 *	the queue's (struct kwq_create_args), KWQ_TIMEOUT_NONE none, else
 *	KWQ_PROCESSING_TIMEOUT_MIN..KWQ_PROCESSING_TIMEOUT_MAX (EINVAL
 *	otherwise)
 *
 * Keys taken are processing until KWQ_IOC_DONE. Unless KWQ_GET_DETACHED,
 * they are leased to this fd: closing it puts them back in the queue.
 * A key still processing at its deadline is taken back (requeued as a
 * failure, as KWQ_ADD_RATE_LIMITED then KWQ_IOC_DONE would); a DONE or
 * TOUCH of it by this fd is then ESTALE. KWQ_IOC_TOUCH moves the deadline.
 * Once the queue is shut down and no key is ready: ESHUTDOWN.
 */
struct kwq_get_args {
	__u64 recs;
	__u32 recs_len;
	__u32 max;
	__u32 flags;
	__u32 min_nr;
	__s64 timeout_ns;
	__u32 nr;
	__u32 used;
	/* version 2 */
	__u64 processing_timeout_ns;
};

#define KWQ_GET_ARGS_SIZE_VER1		40

/**
 * struct kwq_done_get_args - KWQ_IOC_DONE_GET: a worker's cycle in one call
 * @done_recs: user pointer to records of the keys to finish, as for
 *	KWQ_IOC_DONE (priority 0), or 0
 * @done_len: bytes at @done_recs, 0 when @done_nr is 0
 * @done_nr: number of keys to finish, 0..KWQ_BATCH_MAX
 * @done: out: keys finished, in order. If fewer than @done_nr, the call
 *	failed with that key's error (as KWQ_IOC_DONE) and took no keys.
 * @pad: 0
 * @get: then take keys exactly as KWQ_IOC_GET does; its nr and used are
 *	filled. An error of the get part is the call's error with all
 *	@done_nr keys finished.
 */
struct kwq_done_get_args {
	__u64 done_recs;
	__u32 done_len;
	__u32 done_nr;
	__u32 done;
	__u32 pad;
	struct kwq_get_args get;
};

/* Version 1: with version 1 of struct kwq_get_args. */
#define KWQ_DONE_GET_ARGS_SIZE_VER1	64

/**
 * struct kwq_touch_args - KWQ_IOC_TOUCH: move the processing deadline of
 *	a key this fd holds (a heartbeat)
 * @key: user pointer to the key bytes
 * @len: key length
 * @flags: 0
 * @processing_timeout_ns: the new deadline, from now: 0 the queue's
 *	timeout, KWQ_TIMEOUT_NONE none, else KWQ_PROCESSING_TIMEOUT_MIN..
 *	KWQ_PROCESSING_TIMEOUT_MAX
 *
 * Errors: ENOENT (the key is not processing), EPERM (leased to another
 * fd), ESTALE (this fd's lease on it was revoked by its deadline), EINVAL,
 * ENOMEM (a first deadline could not be recorded; nothing changed).
 * A key taken KWQ_GET_DETACHED may be touched by any fd of the queue.
 */
struct kwq_touch_args {
	__u64 key;
	__u32 len;
	__u32 flags;
	__u64 processing_timeout_ns;
};

/**
 * struct kwq_key_args - KWQ_IOC_NUM_REQUEUES: one key
 * @key: user pointer to the key bytes
 * @len: key length
 * @count: out: the key's failure count
 */
struct kwq_key_args {
	__u64 key;
	__u32 len;
	__u32 count;
};

/* struct kwq_shutdown_args.flags */
#define KWQ_SHUTDOWN_DRAIN	0x1	/* wait until nothing is ready or processing */

/**
 * struct kwq_shutdown_args - KWQ_IOC_SHUTDOWN
 * @flags: KWQ_SHUTDOWN_*
 * @pad: 0
 */
struct kwq_shutdown_args {
	__u32 flags;
	__u32 pad;
};

/* Duration histogram buckets: le 1e-08 s, 1e-07 s, ..., 10 s (client-go). */
#define KWQ_STATS_BUCKETS	10
/* Priority levels listed one by one in struct kwq_stats_args. */
#define KWQ_STATS_PRIOS		8

/**
 * struct kwq_prio_len - ready keys of one priority level (its Len)
 * @priority: the level
 * @pad: 0
 * @len: its ready keys
 */
struct kwq_prio_len {
	__s32 priority;
	__u32 pad;
	__u64 len;
};

/**
 * struct kwq_stats_hist - a duration histogram, Prometheus style
 * @le: cumulative: @le[i] counts the durations of at most 10^(i+1) ns
 * @count: all durations (the +Inf bucket)
 * @sum_ns: their sum in ns
 */
struct kwq_stats_hist {
	__u64 le[KWQ_STATS_BUCKETS];
	__u64 count;
	__u64 sum_ns;
};

/**
 * struct kwq_stats_args - KWQ_IOC_STATS: counters of the attached queue
 * @len: keys ready (client-go Len)
 * @waiting: keys waiting for a delay
 * @processing: keys handed out and not done
 * @adds_total: adds that queued a key or moved its deadline
 * @retries_total: rate-limited adds
 * @dropped_at_shutdown: delayed keys dropped by shutdown
 * @lease_returns: leases ended because their fd closed: keys returned
 *	to the queue, or to the dead set if their last retry had failed
 * @failure_records: keys with a failure count
 * @shutting_down: 1 once shut down
 * @pad: 0
 *
 * Version 1 ends here (KWQ_STATS_ARGS_SIZE_VER1 bytes); the kernel fills
 * as much of the struct as the caller's size asks for.
 *
 * @depth: client-go's workqueue_depth: @len plus processing keys added
 *	again (queued at done)
 * @failure_records_evicted: idle failure records dropped to honour the
 *	bound
 * @unfinished_work_ns: processing time of the keys still processing,
 *	summed (client-go's unfinished_work_seconds, in ns)
 * @longest_running_ns: processing time of the oldest processing key
 *	(client-go's longest_running_processor_seconds, in ns)
 * @queue_duration: ready (or dirty) to get (client-go's
 *	queue_duration_seconds)
 * @work_duration: get to done, as @queue_duration (client-go's
 *	work_duration_seconds)
 * @nr_prios: entries of @prios filled
 * @pad2: 0
 * @prios: ready keys of the KWQ_STATS_PRIOS highest priority levels that
 *	have any, highest first
 * @prios_other: ready keys of the levels not in @prios
 *
 * Version 2 ends here (KWQ_STATS_ARGS_SIZE_VER2 bytes).
 *
 * @processing_timeouts_total: leases revoked by their processing deadline
 * @dead: keys in the dead set
 * @dead_total: keys moved to the dead set
 * @dead_dropped_total: dead keys dropped to honour the dead set's bound
 */
struct kwq_stats_args {
	__u64 len;
	__u64 waiting;
	__u64 processing;
	__u64 adds_total;
	__u64 retries_total;
	__u64 dropped_at_shutdown;
	__u64 lease_returns;
	__u64 failure_records;
	__u32 shutting_down;
	__u32 pad;
	/* version 2 */
	__u64 depth;
	__u64 failure_records_evicted;
	__u64 unfinished_work_ns;
	__u64 longest_running_ns;
	struct kwq_stats_hist queue_duration;
	struct kwq_stats_hist work_duration;
	__u32 nr_prios;
	__u32 pad2;
	struct kwq_prio_len prios[KWQ_STATS_PRIOS];
	__u64 prios_other;
	/* version 3 */
	__u64 processing_timeouts_total;
	__u64 dead;
	__u64 dead_total;
	__u64 dead_dropped_total;
};

#define KWQ_STATS_ARGS_SIZE_VER1	72
#define KWQ_STATS_ARGS_SIZE_VER2	440

/* struct kwq_dead_args.flags */
#define KWQ_DEAD_ALL		0x1	/* every dead key; @key and @len 0 */

/**
 * struct kwq_dead_args - KWQ_IOC_REVIVE, KWQ_IOC_PURGE: one dead key or all
 * @key: user pointer to the key bytes; 0 with KWQ_DEAD_ALL
 * @len: key length; 0 with KWQ_DEAD_ALL
 * @flags: KWQ_DEAD_*
 * @count: out: keys revived or purged
 *
 * REVIVE moves dead keys to the ready queue with their failure count
 * reset; PURGE drops them. ENOENT: the key is not dead (nothing
 * changed). REVIVE: ENOSPC at the queue's item cap, ESHUTDOWN after
 * shutdown (with KWQ_DEAD_ALL only if no key could be revived: the keys
 * not revived stay dead, @count says how many were).
 */
struct kwq_dead_args {
	__u64 key;
	__u32 len;
	__u32 flags;
	__u64 count;
};

/* struct kwq_info_rec.state, and bits (1 << state) of kwq_inspect_args.states */
#define KWQ_KEY_READY		1	/* in the ready FIFO of its priority */
#define KWQ_KEY_WAITING		2	/* waiting for its deadline */
#define KWQ_KEY_PROCESSING	3	/* handed out, not yet done */
#define KWQ_KEY_DEAD		4	/* in the dead set */
#define KWQ_KEY_IDLE		5	/* not queued; a failure count kept */
#define KWQ_KEY_STATES_ALL	0x3e

/* struct kwq_info_rec.flags */
#define KWQ_KEY_DIRTY		0x1	/* processing: added again, ready at done */
#define KWQ_KEY_DELAYED		0x2	/* processing: add_after, waits at done */
#define KWQ_KEY_DYING		0x4	/* processing: failed its last retry */
#define KWQ_KEY_DUE		0x8	/* due_ns holds a deadline */

/**
 * struct kwq_info_rec - one key as KWQ_IOC_INSPECT saw it, in a record
 *	buffer: this header, then @len key bytes zero-padded to 8
 *	(KWQ_INFO_REC_SIZE(len))
 * @len: key length
 * @state: KWQ_KEY_READY .. KWQ_KEY_IDLE
 * @flags: KWQ_KEY_DIRTY, KWQ_KEY_DELAYED, KWQ_KEY_DYING (processing, at
 *	most one), KWQ_KEY_DUE; a dirty key that remembers a deadline is
 *	KWQ_KEY_DIRTY | KWQ_KEY_DUE (ready at done, the deadline kept)
 * @priority: its priority (processing: the one it was handed out with;
 *	dead: the one it had when it died, which a revive makes it ready at)
 * @failures: its failure count
 * @holder: processing: the process id, in the caller's pid namespace, of
 *	the process whose fd holds the lease (the one that opened it); 0 for
 *	a detached key, a kernel queue's key (a published queue's too,
 *	whoever holds it), or a pid not visible there
 * @since_ns: ready: time since it became ready; processing: time held;
 *	dead: time since its last failure; else 0
 * @due_ns: with KWQ_KEY_DUE, time left until its next deadline (0 if
 *	passed): waiting, until it is ready; ready or processing, a deadline
 *	an add_after asked for, run after its run
 * @timeout_ns: processing: time left until its processing deadline, 0 for
 *	none
 */
struct kwq_info_rec {
	__u32 len;
	__u32 state;
	__u32 flags;
	__s32 priority;
	__u32 failures;
	__u32 holder;
	__u64 since_ns;
	__u64 due_ns;
	__u64 timeout_ns;
	/* followed by len key bytes, zero-padded to 8 */
};

#define KWQ_INFO_REC_SIZE(len)	((sizeof(struct kwq_info_rec) + (len) + 7) & ~7UL)
#define KWQ_INFO_REC_SIZE_MAX	KWQ_INFO_REC_SIZE(KWQ_KEY_LEN_MAX)
/* Version 1's largest info record: the smallest KWQ_IOC_INSPECT buffer. */
#define KWQ_INFO_REC_SIZE_MAX_VER1	KWQ_INFO_REC_SIZE(KWQ_KEY_LEN_MAX_VER1)
/* Most records one KWQ_IOC_INSPECT returns. */
#define KWQ_INSPECT_MAX		256

/**
 * struct kwq_inspect_args - KWQ_IOC_INSPECT: one key, or a chunk of a walk
 *	over the keys of some states
 * @key: one key: user pointer to its bytes; 0 to list
 * @len: one key: its length; list: 0
 * @states: list: bits (1 << KWQ_KEY_*) of the states listed, a non-empty
 *	subset of KWQ_KEY_STATES_ALL; one key: 0
 * @cursor: list: 0 to start, else the cursor the previous call returned;
 *	out: where the walk goes on, 0 once it is over. One key: 0
 * @recs: user pointer to the record buffer (struct kwq_info_rec each)
 * @recs_len: bytes at @recs, at least KWQ_INFO_REC_SIZE_MAX_VER1; one
 *	key: at least KWQ_INFO_REC_SIZE(@len) too. A list call given less
 *	than KWQ_INFO_REC_SIZE_MAX lists one key a call, and fails with
 *	EMSGSIZE (the cursor unchanged) when its record does not fit.
 * @max: list: most records, 1..KWQ_INSPECT_MAX (and at most
 *	max(1, @recs_len / KWQ_INFO_REC_SIZE_MAX) are returned); one key: 0
 * @nr: out: records written
 * @used: out: bytes of @recs written
 *
 * One key: ENOENT if the queue holds nothing of it. A list call holds the
 * queue lock once, for a bounded part of its table: it may return fewer
 * records than @max, even none, with a non-zero cursor; call again until
 * the cursor is 0. A key present during the whole walk is listed once.
 * A cursor of another queue is ESTALE; EAGAIN while the queue's table is
 * being resized (call again with the same cursor).
 */
struct kwq_inspect_args {
	__u64 key;
	__u32 len;
	__u32 states;
	__u64 cursor;
	__u64 recs;
	__u32 recs_len;
	__u32 max;
	__u32 nr;
	__u32 used;
};

/*
 * Rings (Documentation/rings.rst): an fd attached to a queue may set up
 * one ring, then mmap() its three regions at the offsets below. The
 * process writes submission records into the user region and makes no
 * system call while no getter waits (struct kwq_ring_status.waiters); the
 * kernel writes completions and leased keys into the kernel region, which
 * is read-only to the process. Every fd's published records are applied
 * before any GET, LEN, STATS or INSPECT of the queue answers.
 */
#define KWQ_RING_OFF_USER	0x00000000ULL	/* read-write */
#define KWQ_RING_OFF_KERNEL	0x10000000ULL	/* read-only */
#define KWQ_RING_OFF_STATUS	0x20000000ULL	/* read-only, per queue */

#define KWQ_RING_ENTRIES_MIN	32
#define KWQ_RING_ENTRIES_MAX	4096
#define KWQ_RING_LEASES_MAX	256

/**
 * struct kwq_sqe - the first 64-byte slot of a submission record
 * @op: KWQ_SQE_*
 * @flags: KWQ_SQE_F_*
 * @nslots: slots the record takes: KWQ_SQE_SLOTS(@len), 1 for
 *	KWQ_SQE_DONE_LEASE and KWQ_SQE_NOP
 * @len: key length, 1..KWQ_KEY_LEN_MAX; 0 for DONE_LEASE and NOP
 * @priority: KWQ_SQE_ADD: the key's priority; else 0
 * @lease_slot: KWQ_SQE_DONE_LEASE: the lease slot; else 0
 * @arg: KWQ_SQE_ADD with KWQ_SQE_F_AFTER: the delay in ns (> 0);
 *	KWQ_SQE_DONE_LEASE: the lease's generation; else 0
 * @key: the key's first KWQ_SQE_INLINE bytes; a longer key goes on in
 *	the next slots, 64 bytes each (a record may wrap around the ring's
 *	end). Bytes past the key in its last slot are 0.
 */
struct kwq_sqe {
	__u8 op;
	__u8 flags;
	__u16 nslots;
	__u32 len;
	__s32 priority;
	__u32 lease_slot;
	__u64 arg;
	__u8 key[40];
};

#define KWQ_SQE_SIZE		64
#define KWQ_SQE_INLINE		40
/* Slots a record of a @len-byte key takes (1 for len 0..40). */
#define KWQ_SQE_SLOTS(len)	(1 + ((len) + KWQ_SQE_SIZE - KWQ_SQE_INLINE - 1) / \
				 KWQ_SQE_SIZE)
#define KWQ_SQE_SLOTS_MAX	KWQ_SQE_SLOTS(KWQ_KEY_LEN_MAX)

/* struct kwq_sqe.op */
#define KWQ_SQE_NOP		0	/* nothing (completes if asked) */
#define KWQ_SQE_ADD		1	/* KWQ_IOC_ADD of one key */
#define KWQ_SQE_DONE		2	/* KWQ_IOC_DONE of one key */
#define KWQ_SQE_DONE_LEASE	3	/* finish the key of a lease slot */
#define KWQ_SQE_FORGET		4
#define KWQ_SQE_REMOVE		5

/* struct kwq_sqe.flags: the KWQ_ADD_* flags for ADD, and */
#define KWQ_SQE_F_AFTER		KWQ_ADD_AFTER
#define KWQ_SQE_F_RATE_LIMITED	KWQ_ADD_RATE_LIMITED
#define KWQ_SQE_F_REPLACE	KWQ_ADD_REPLACE
#define KWQ_SQE_F_LATER		KWQ_ADD_LATER
#define KWQ_SQE_F_CQE		0x80	/* complete on success too */

/**
 * struct kwq_cqe - a completion
 * @index: a record's: the ring position (sq_tail's value before it was
 *	written) of its first slot; KWQ_CQE_LEASE's: the lease slot
 * @op: the record's KWQ_SQE_* op (KWQ_SQE_NOP for a record whose op is
 *	none of them: -EINVAL), or KWQ_CQE_LEASE: a key was leased
 *	into slot @index
 * @flags: 0
 * @res: 0 or a negative errno
 * @value: KWQ_SQE_ADD with KWQ_SQE_F_RATE_LIMITED: the delay chosen in
 *	ns (KWQ_DELAY_DEAD: moved to the dead set); KWQ_CQE_LEASE: the
 *	lease's generation; else 0
 */
struct kwq_cqe {
	__u32 index;
	__u8 op;
	__u8 flags;
	__s16 res;
	__u64 value;
};

#define KWQ_CQE_LEASE		0xff

/**
 * struct kwq_lease_slot - a key leased through a ring (kernel region)
 * @gen: the lease's generation, never 0; 0 while the slot is free
 * @len: key length
 * @priority: the priority it was handed out with
 * @pad: 0
 * @key: the key bytes
 *
 * Slots are KWQ_LEASE_SLOT_SIZE bytes apart. A slot is valid from its
 * KWQ_CQE_LEASE completion until the process's KWQ_SQE_DONE_LEASE of it
 * is applied, or the lease ends otherwise (processing deadline, close).
 */
struct kwq_lease_slot {
	__u64 gen;
	__u32 len;
	__s32 priority;
	__u8 pad[48];
	__u8 key[KWQ_KEY_LEN_MAX];
};

#define KWQ_LEASE_SLOT_SIZE	1088

/**
 * struct kwq_ring_status - the queue's status page, shared by its rings
 * @waiters: nonzero while a getter sleeps or may be about to (a
 *	producer that published records then rings KWQ_IOC_RING_ENTER)
 * @pad: 0 (@waiters has its cache line alone)
 * @ready: keys ready now
 * @pad2: 0
 * @flags: KWQ_STATUS_*
 */
struct kwq_ring_status {
	__u32 waiters;
	__u32 pad[15];
	__u64 ready;
	__u64 pad2[7];
	__u32 flags;
};

#define KWQ_STATUS_SHUTDOWN	0x1	/* shut down */
#define KWQ_STATUS_DESTROYED	0x2	/* destroyed: every call EIDRM */

/**
 * struct kwq_ring_setup_args - KWQ_IOC_RING_SETUP: this fd's ring
 * @sq_entries: submission slots, a power of two in
 *	KWQ_RING_ENTRIES_MIN..KWQ_RING_ENTRIES_MAX
 * @cq_entries: completions, a power of two in the same range
 * @lease_slots: 0..KWQ_RING_LEASES_MAX (0: this fd does not get keys)
 * @flags: 0
 * @user_size: out: bytes to mmap() at KWQ_RING_OFF_USER
 * @kernel_size: out: ... at KWQ_RING_OFF_KERNEL
 * @status_size: out: ... at KWQ_RING_OFF_STATUS
 * @sq_tail_off: out: offset of the __u32 sq_tail in the user region
 * @cq_head_off: out: ... of the __u32 cq_head in the user region
 * @sqes_off: out: ... of the first submission slot in the user region
 * @sq_head_off: out: ... of the __u32 sq_head in the kernel region
 * @cq_tail_off: out: ... of the __u32 cq_tail in the kernel region
 * @ring_flags_off: out: ... of the __u32 KWQ_RING_F_* in the kernel region
 * @cqes_off: out: ... of the first completion in the kernel region
 * @leases_off: out: ... of the first lease slot in the kernel region
 *
 * The layout today (read the offsets, do not assume them): the user
 * region is sq_tail at 0, cq_head at 64, the submission slots from 128;
 * the kernel region is sq_head at 0, cq_tail at 64, ring flags at 68,
 * the completions from 128, the lease slots from the next multiple of
 * 64 after them; the status region is one page (struct
 * kwq_ring_status).
 *
 * The process writes records at sqes + (sq_tail & (sq_entries - 1)) * 64
 * and then sq_tail (release); the kernel consumes them up to sq_tail and
 * publishes its own sq_head. The kernel writes completions at
 * cqes + (cq_tail & (cq_entries - 1)) * 16 and then cq_tail (release);
 * the process reads up to cq_tail (acquire), then stores cq_head.
 * A second setup on the fd: EBUSY. Ring memory counts against the
 * caller's byte budget (EDQUOT) and memcg.
 */
struct kwq_ring_setup_args {
	__u32 sq_entries;
	__u32 cq_entries;
	__u32 lease_slots;
	__u32 flags;
	__u64 user_size;
	__u64 kernel_size;
	__u64 status_size;
	__u32 sq_tail_off;
	__u32 cq_head_off;
	__u32 sqes_off;
	__u32 sq_head_off;
	__u32 cq_tail_off;
	__u32 ring_flags_off;
	__u32 cqes_off;
	__u32 leases_off;
};

/* The kernel region's ring flags */
#define KWQ_RING_F_BROKEN	0x1	/* sq_tail ran past the ring: dead */

/* struct kwq_ring_enter_args.flags */
#define KWQ_ENTER_SUBMIT	0x1	/* apply this fd's published records */
#define KWQ_ENTER_GET		0x2	/* lease keys into free slots */

/**
 * struct kwq_ring_enter_args - KWQ_IOC_RING_ENTER: the ring's doorbell
 * @flags: KWQ_ENTER_*
 * @get_max: KWQ_ENTER_GET: most keys to lease, 1..lease_slots
 * @get_min: KWQ_ENTER_GET: wait (within @timeout_ns) until this many are
 *	leased, 0..@get_max, as struct kwq_get_args.min_nr
 * @pad: 0
 * @timeout_ns: as struct kwq_get_args.timeout_ns
 * @processing_timeout_ns: as struct kwq_get_args.processing_timeout_ns
 * @submitted: out: records consumed from this fd's ring
 * @leased: out: keys leased (a KWQ_CQE_LEASE completion each)
 *
 * Records are applied in order; one that fails posts an error completion
 * and changes nothing. While the completion ring is full no record is
 * consumed (any may need a completion): the call fails with EBUSY once
 * nothing more can be (the process reads completions, then enters
 * again). A get takes at most as many keys as there are free lease slots
 * (ENOBUFS if none) and free completions. Without KWQ_ENTER_GET, the get
 * fields (@get_max, @get_min, @timeout_ns, @processing_timeout_ns) must
 * be 0.
 */
struct kwq_ring_enter_args {
	__u32 flags;
	__u32 get_max;
	__u32 get_min;
	__u32 pad;
	__s64 timeout_ns;
	__u64 processing_timeout_ns;
	__u32 submitted;
	__u32 leased;
};

#define KWQ_IOC_MAGIC		0xb7

#define KWQ_IOC_CREATE		_IOW(KWQ_IOC_MAGIC, 0x00, struct kwq_create_args)
#define KWQ_IOC_OPEN		_IOW(KWQ_IOC_MAGIC, 0x01, struct kwq_open_args)
#define KWQ_IOC_DESTROY		_IOW(KWQ_IOC_MAGIC, 0x02, struct kwq_open_args)
#define KWQ_IOC_LIST		_IOWR(KWQ_IOC_MAGIC, 0x03, struct kwq_list_args)
#define KWQ_IOC_ADD		_IOWR(KWQ_IOC_MAGIC, 0x04, struct kwq_keys_args)
#define KWQ_IOC_GET		_IOWR(KWQ_IOC_MAGIC, 0x05, struct kwq_get_args)
#define KWQ_IOC_DONE		_IOWR(KWQ_IOC_MAGIC, 0x06, struct kwq_keys_args)
#define KWQ_IOC_FORGET		_IOWR(KWQ_IOC_MAGIC, 0x07, struct kwq_keys_args)
#define KWQ_IOC_REMOVE		_IOWR(KWQ_IOC_MAGIC, 0x08, struct kwq_keys_args)
#define KWQ_IOC_NUM_REQUEUES	_IOWR(KWQ_IOC_MAGIC, 0x09, struct kwq_key_args)
#define KWQ_IOC_LEN		_IOR(KWQ_IOC_MAGIC, 0x0a, __u64)
#define KWQ_IOC_SHUTDOWN	_IOW(KWQ_IOC_MAGIC, 0x0b, struct kwq_shutdown_args)
#define KWQ_IOC_STATS		_IOR(KWQ_IOC_MAGIC, 0x0c, struct kwq_stats_args)
#define KWQ_IOC_DONE_GET	_IOWR(KWQ_IOC_MAGIC, 0x0d, struct kwq_done_get_args)
#define KWQ_IOC_REVIVE		_IOWR(KWQ_IOC_MAGIC, 0x10, struct kwq_dead_args)
#define KWQ_IOC_PURGE		_IOWR(KWQ_IOC_MAGIC, 0x11, struct kwq_dead_args)
#define KWQ_IOC_INSPECT		_IOWR(KWQ_IOC_MAGIC, 0x12, struct kwq_inspect_args)
#define KWQ_IOC_TOUCH		_IOW(KWQ_IOC_MAGIC, 0x0e, struct kwq_touch_args)
#define KWQ_IOC_RING_SETUP	_IOWR(KWQ_IOC_MAGIC, 0x13, struct kwq_ring_setup_args)
#define KWQ_IOC_RING_ENTER	_IOWR(KWQ_IOC_MAGIC, 0x14, struct kwq_ring_enter_args)
/*
 * KWQ_IOC_INFO: the struct kwq_create_args of the KWQ_IOC_CREATE that made
 * the attached queue, as it was accepted (@mode 0 reads 0600), so that a
 * process opening a queue by name can tell whether it was made with the
 * options it would have used. Output only, versioned by size as
 * KWQ_IOC_STATS: a version-1 struct (KWQ_CREATE_ARGS_SIZE_VER1 bytes)
 * gets its prefix, a larger one zeros past what the kernel knows.
 * EOPNOTSUPP for a queue a kernel module made and published: it had no
 * KWQ_IOC_CREATE.
 */
#define KWQ_IOC_INFO		_IOR(KWQ_IOC_MAGIC, 0x15, struct kwq_create_args)

#endif /* _UAPI_LINUX_KWQ_H */
