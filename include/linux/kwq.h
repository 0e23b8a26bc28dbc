/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kwq: keyed work queue with client-go util/workqueue semantics.
 *
 * This is the in-kernel API exported by kwq.ko to other modules. The
 * userspace ABI lives in a separate uapi header.
 *
 * A queue holds keys (byte strings of 1..KWQ_KEY_MAX bytes). A key is at
 * most once in the queue (stingy dedup), is never handed to two consumers
 * at once (processing set), can be delayed (add_after) and retried with a
 * per-key rate limit (add_rate_limited). See Documentation/semantics.rst
 * for the exact semantics and every difference from client-go.
 */
#ifndef _LINUX_KWQ_H
#define _LINUX_KWQ_H

#include <linux/types.h>
#include <linux/uidgid.h>
#include <uapi/linux/kwq.h>

/*
 * The limits both interfaces share are the uapi header's; these names
 * are the kernel API's spelling of them.
 */
/*
 * Longest key, in bytes (1024: a Kubernetes namespace/name is up to 317).
 * Keys are copied into the queue, each node sized for its key.
 */
#define KWQ_KEY_MAX		KWQ_KEY_LEN_MAX
/* Longest queue name, in bytes, without the terminating NUL. */
#define KWQ_NAME_MAX		(KWQ_NAME_LEN - 1)
/* Most rate limiters one queue combines (as max-of). */
#define KWQ_MAX_LIMITERS	KWQ_LIMITS_MAX
/* Largest token bucket burst. */
#define KWQ_BUCKET_BURST_MAX	1000000
/* Largest token bucket rate, in thousandths of an event per second. */
#define KWQ_BUCKET_QPS_MILLI_MAX	1000000000ULL
/* Failure records kept for idle keys when the config says 0. */
#define KWQ_DEFAULT_FAILURE_RECORDS	65536
/* Processing timeouts (&struct kwq_config, kwq_touch()), in ns. */
#define KWQ_PROCESSING_TIMEOUT_MIN_NS	KWQ_PROCESSING_TIMEOUT_MIN
#define KWQ_PROCESSING_TIMEOUT_MAX_NS	KWQ_PROCESSING_TIMEOUT_MAX
/* kwq_touch(): no processing deadline. */
#define KWQ_NO_TIMEOUT			KWQ_TIMEOUT_NONE
/* Largest &struct kwq_config.max_retries. */
#define KWQ_MAX_RETRIES_MAX	KWQ_MAX_RETRIES
/*
 * Largest &struct kwq_config.max_dead; KWQ_DEFAULT_MAX_DEAD (uapi) when
 * the config says 0.
 */
#define KWQ_MAX_DEAD_MAX	KWQ_MAX_DEAD
/*
 * KWQ_DELAY_DEAD (uapi): kwq_add_rate_limited()'s delay for a key that
 * failed with max_retries used up: it never runs again unless revived.
 */

/*
 * struct kwq_config flag: charge the queue's memory to memory cgroups (the
 * caller's for each key, the creator's for the queue and its hash table)
 * instead of to none. Documentation/semantics.rst, "Contexts and memory".
 */
#define KWQ_CONFIG_CHARGE_CALLER	0x1

/* kwq_get() flag: never sleep, return -EAGAIN when nothing is ready. */
#define KWQ_GET_NONBLOCK	0x1
/* kwq_get() timeout meaning "wait until an item or shutdown". */
#define KWQ_WAIT_FOREVER	(-1LL)

struct ipc_namespace;
struct kwq;
struct kwq_item;

enum kwq_limiter_type {
	/* client-go ItemExponentialFailureRateLimiter */
	KWQ_LIMITER_EXPONENTIAL = KWQ_LIMIT_EXPONENTIAL,
	/* client-go ItemFastSlowRateLimiter */
	KWQ_LIMITER_FAST_SLOW = KWQ_LIMIT_FAST_SLOW,
	/* client-go BucketRateLimiter (golang.org/x/time/rate) */
	KWQ_LIMITER_BUCKET = KWQ_LIMIT_BUCKET,
};

/**
 * struct kwq_limiter_config - one rate limiter of a queue
 * @type: an &enum kwq_limiter_type value
 * @exp: exponential: delay base_ns * 2^failures, capped at max_ns
 * @exp.base_ns: first delay, 0..S64_MAX
 * @exp.max_ns: largest delay, 0..S64_MAX
 * @fast_slow: fast_ns for the first max_fast failures, then slow_ns
 * @fast_slow.fast_ns: delay while failures <= max_fast, 0..S64_MAX
 * @fast_slow.slow_ns: delay afterwards, 0..S64_MAX
 * @fast_slow.max_fast: number of fast attempts
 * @bucket: token bucket shared by all keys of the queue
 * @bucket.qps_milli: refill rate in 1/1000 tokens per second,
 *	1..KWQ_BUCKET_QPS_MILLI_MAX (10000 is client-go's 10 qps)
 * @bucket.burst: bucket size, 1..KWQ_BUCKET_BURST_MAX; the bucket
 *	starts full
 */
struct kwq_limiter_config {
	u32 type;
	union {
		struct {
			u64 base_ns;
			u64 max_ns;
		} exp;
		struct {
			u64 fast_ns;
			u64 slow_ns;
			u32 max_fast;
		} fast_slow;
		struct {
			u64 qps_milli;
			u32 burst;
		} bucket;
	};
};

/**
 * struct kwq_clock - time source and timer of a queue
 * @now: current time in nanoseconds; must never go backwards. Called
 *	with the queue lock held and interrupts off: must not sleep.
 * @arm: make sure kwq_clock_expired(@q) gets called once the time
 *	reaches @deadline_ns (a deadline in the past means "soon"),
 *	replacing any earlier arming for @q. Called with the queue lock
 *	held and interrupts off: must neither sleep nor call back into
 *	the queue.
 * @cancel: forget the arming for @q. Same context as @arm. A call of
 *	kwq_clock_expired() that already started may still run; once
 *	kwq_destroy() has called @cancel the clock must not call
 *	kwq_clock_expired() for @q any more.
 * @priv: the clock's own data, never touched by kwq. The callbacks get
 *	the clock as a const pointer (kwq only reads it); @priv is how they
 *	reach state they change, such as a fake clock's time or the queue
 *	it is armed for, without casting the const away.
 *
 * A queue created with a NULL clock uses CLOCK_MONOTONIC and one hrtimer.
 * Tests pass their own clock to step time deterministically.
 */
struct kwq_clock {
	u64 (*now)(const struct kwq_clock *clock);
	void (*arm)(const struct kwq_clock *clock, struct kwq *q,
		    u64 deadline_ns);
	void (*cancel)(const struct kwq_clock *clock, struct kwq *q);
	void *priv;
};

/**
 * struct kwq_config - creation parameters of a queue
 * @nr_limiters: entries used in @limiters; 0 selects client-go's
 *	DefaultControllerRateLimiter (exponential 5 ms..1000 s, max'd with
 *	a 10 qps / burst 100 token bucket)
 * @limiters: rate limiters, combined as the maximum of their delays
 * @max_wait_ns: cap on the delay add_rate_limited chooses, 0 = no cap
 * @max_items: most keys queued (ready, waiting or processing) at once,
 *	0 = unlimited; an add of a new key beyond it fails with -ENOSPC
 * @max_failure_records: most failure records kept for keys that are not
 *	queued (the oldest is forgotten first), 0 =
 *	KWQ_DEFAULT_FAILURE_RECORDS
 * @clock: time source, NULL = CLOCK_MONOTONIC and an hrtimer
 * @flags: 0 or KWQ_CONFIG_CHARGE_CALLER, which memory cgroup pays for
 *	the queue's memory. 0 (a kernel-owned queue): none; nothing stops
 *	the queue's growth but @max_items and the memory of the system.
 *	KWQ_CONFIG_CHARGE_CALLER (what /dev/kwq queues use): each key is
 *	charged to the memcg of the task that adds it, so an add at that
 *	cgroup's memory.max fails with -ENOMEM; the queue and its hash
 *	table to the creator's memcg, which the queue pins until it is
 *	freed. Any other bit is -EINVAL. Documentation/semantics.rst,
 *	"Contexts and memory", gives the GFP flags of every allocation.
 * @max_retries: the dead set (Documentation/semantics.rst, "Dead keys"):
 *	a kwq_add_rate_limited() of a key that already failed this many
 *	times moves it to the dead set instead of requeueing it.
 *	0..KWQ_MAX_RETRIES_MAX; 0 = no dead set (client-go's behaviour).
 * @max_dead: most keys in the dead set (the oldest death is dropped
 *	first), 1..KWQ_MAX_DEAD_MAX, 0 = KWQ_DEFAULT_MAX_DEAD; must be 0
 *	without @max_retries
 * @processing_timeout_ns: processing deadline of every key handed out,
 *	0 = none, else KWQ_PROCESSING_TIMEOUT_MIN_NS..
 *	KWQ_PROCESSING_TIMEOUT_MAX_NS. A key still processing at its deadline
 *	loses its lease and is requeued as a failure, exactly as
 *	kwq_add_rate_limited() then kwq_done() by its holder would;
 *	kwq_touch() moves the deadline.
 */
struct kwq_config {
	u32 nr_limiters;
	struct kwq_limiter_config limiters[KWQ_MAX_LIMITERS];
	u64 max_wait_ns;
	u32 max_items;
	u32 max_failure_records;
	const struct kwq_clock *clock;
	u32 flags;
	u64 processing_timeout_ns;
	u32 max_retries;
	u32 max_dead;
};

/*
 * Which deadline a delayed add keeps when the key already has one
 * (&struct kwq_add_opts.flags, &struct kwq_batch_opts.flags; at most one,
 * only with a delay > 0 and not rate limited). Without either the earlier
 * one wins, as in client-go.
 */
/* The new deadline replaces the old, even if later (debounce). */
#define KWQ_AFTER_REPLACE	0x2
/* The later of the two wins. */
#define KWQ_AFTER_LATER		0x4

/**
 * struct kwq_add_opts - options of kwq_add_opts() and kwq_add_rate_limited()
 * @after_ns: delay before the key becomes ready; <= 0 means now. Must be 0
 *	for kwq_add_rate_limited(), whose delay comes from the limiter.
 * @priority: higher is handed out first; FIFO within one priority
 * @flags: 0, KWQ_AFTER_REPLACE or KWQ_AFTER_LATER (those two only with
 *	@after_ns > 0); 0 for kwq_add_rate_limited()
 */
struct kwq_add_opts {
	s64 after_ns;
	int priority;
	u32 flags;
};

/*
 * Buckets of the duration histograms, without +Inf: bucket i holds
 * durations of at most 10^(i+1) ns, 1e-08 s to 10 s (client-go's).
 */
#define KWQ_HIST_BUCKETS	KWQ_STATS_BUCKETS
/* Priority levels struct kwq_stats lists one by one. */
#define KWQ_STATS_PRIO_LEVELS	KWQ_STATS_PRIOS

/**
 * struct kwq_histogram - a duration histogram, Prometheus style
 * @le: cumulative bucket counts: @le[i] observations took at most
 *	10^(i+1) ns (le 1e-08 s, 1e-07 s, ..., 10 s: client-go's
 *	prometheus.ExponentialBuckets(10e-9, 10, 10))
 * @count: all observations (the +Inf bucket)
 * @sum_ns: their sum in nanoseconds
 */
struct kwq_histogram {
	u64 le[KWQ_HIST_BUCKETS];
	u64 count;
	u64 sum_ns;
};

/**
 * struct kwq_stats - snapshot of a queue's counters
 * @len: ready keys (what kwq_len() returns, client-go's Len)
 * @waiting: keys waiting for their delay to pass
 * @processing: keys handed out by kwq_get() and not yet done
 * @adds_total: adds that queued a key or changed when it runs (client-go's
 *	adds_total for keys added without delay)
 * @retries_total: accepted kwq_add_rate_limited() calls (client-go's
 *	retries_total, which also counts plain AddAfter calls)
 * @dropped_at_shutdown: delayed keys dropped because of shutdown
 * @lease_returns: leases ended by kwq_release_owner(): keys put back, or
 *	moved to the dead set if their last retry had failed
 * @failure_records: keys with a non-zero failure count
 * @failure_records_evicted: idle failure records forgotten to honour
 *	the bound
 * @shutting_down: 1 once the queue was shut down
 * @depth: client-go's workqueue_depth: @len plus the
 *	processing keys added again, which kwq_done() queues (dirty keys)
 * @unfinished_work_ns: client-go's unfinished_work_seconds, in ns: how
 *	long the processing keys have been processing, summed
 * @processing_timeouts_total: leases revoked by their processing deadline
 * @longest_running_ns: client-go's longest_running_processor_seconds, in
 *	ns: how long the oldest processing key has been processing
 * @queue_duration: time from a key becoming ready (or dirty) to
 *	kwq_get() handing it out (client-go's queue_duration_seconds)
 * @work_duration: time from kwq_get() to kwq_done() (client-go's
 *	work_duration_seconds)
 * @nr_prio_levels: entries of @prio_len filled
 * @prio_len: ready keys of the KWQ_STATS_PRIO_LEVELS highest priority
 *	levels that have any, highest first
 * @prio_len.priority: the level
 * @prio_len.len: its ready keys
 * @prio_len_other: ready keys of the levels not listed in @prio_len
 * @dead: keys in the dead set
 * @dead_total: keys moved to the dead set
 * @dead_dropped_total: dead keys dropped to honour the dead set's bound,
 *	oldest death first, with their failure counts, as kwq_purge() drops
 *	them (traced as kwq:key_purged with ret 1)
 *
 * The clock is the queue's (&struct kwq_config.clock).
 */
struct kwq_stats {
	u64 len;
	u64 waiting;
	u64 processing;
	u64 adds_total;
	u64 retries_total;
	u64 dropped_at_shutdown;
	u64 lease_returns;
	u64 failure_records;
	u64 failure_records_evicted;
	u32 shutting_down;
	u64 depth;
	u64 unfinished_work_ns;
	u64 processing_timeouts_total;
	u64 longest_running_ns;
	struct kwq_histogram queue_duration;
	struct kwq_histogram work_duration;
	u32 nr_prio_levels;
	struct {
		int priority;
		u64 len;
	} prio_len[KWQ_STATS_PRIO_LEVELS];
	u64 prio_len_other;
	u64 dead;
	u64 dead_total;
	u64 dead_dropped_total;
};

/**
 * kwq_create() - create a queue and register its name
 * @name: 1..KWQ_NAME_MAX characters from [A-Za-z0-9._-]
 * @cfg: configuration, NULL for all defaults; copied, need not outlive
 *	the call (the clock it points to must outlive the queue)
 *
 * Names of kernel queues are one namespace shared by the modules that use
 * kwq, and only by them: queues that userspace creates through /dev/kwq
 * have names of their own (per IPC namespace), never take a kernel
 * queue's name and are never found by kwq_find(). Userspace sees a kernel
 * queue only once it is published with kwq_publish().
 *
 * All defaults (a zeroed @cfg) make a kernel-owned queue, charged to no
 * memory cgroup; see &struct kwq_config.flags.
 *
 * Context: process context, may sleep.
 * Return: the queue, holding one reference for the caller that
 * kwq_destroy() drops; ERR_PTR(-EINVAL) for a bad name or configuration
 * (unknown @cfg->flags included), ERR_PTR(-EEXIST) if another kernel queue
 * has the name, ERR_PTR(-ENOMEM).
 */
struct kwq *kwq_create(const char *name, const struct kwq_config *cfg);

/**
 * kwq_destroy() - unregister, shut down and release a queue
 * @q: queue from kwq_create(), or NULL
 *
 * Frees the name, unpublishes the queue (kwq_unpublish()), shuts it down
 * as kwq_shutdown() does (blocked
 * getters wake up with -ESHUTDOWN, delayed keys are dropped, a drain in
 * progress ends with -ECANCELED), stops the timer and drops the creator's
 * reference. The memory goes once the last reference is dropped (here,
 * if it was the last one); keys still queued or processing are freed with
 * it. The caller must not use its pointer afterwards unless it holds
 * another reference.
 *
 * Context: process context, may sleep.
 */
void kwq_destroy(struct kwq *q);

/**
 * kwq_find() - look a queue up by name and take a reference
 * @name: queue name
 *
 * Only queues of kernel callers (kwq_create()) are found, never one that
 * userspace created through /dev/kwq, whatever its name.
 *
 * Context: process context, may sleep.
 * Return: the queue, to be released with kwq_put(); ERR_PTR(-ENOENT) if
 * no kernel queue has that name (destroyed queues are unregistered), or
 * ERR_PTR(-EINVAL) for an invalid name.
 */
struct kwq *kwq_find(const char *name);

/**
 * struct kwq_publish_opts - how a published queue appears in /dev/kwq
 * @uid: owner; may attach as the owner bits of @mode allow
 * @gid: group; its members attach as the group bits allow
 * @mode: permission bits, 0..0777, checked when userspace attaches
 *	(KWQ_IOC_OPEN) like those of a SysV IPC object: owner bits, else
 *	group bits, else other bits; read and write both needed.
 *	CAP_IPC_OWNER in the user namespace that owns @ipc_ns bypasses them.
 * @ipc_ns: the IPC namespace whose processes see the queue; NULL for the
 *	initial one. kwq takes its own reference; the caller must hold one
 *	(or be in the namespace) only during the call. kwq's reference does
 *	not keep the namespace alive: when it is the last one, kwq
 *	unpublishes the queue and drops it.
 */
struct kwq_publish_opts {
	kuid_t uid;
	kgid_t gid;
	umode_t mode;
	struct ipc_namespace *ipc_ns;
};

/**
 * kwq_publish() - make a kernel queue reachable through /dev/kwq
 * @q: queue from kwq_create(), not destroyed, with the default clock
 * @opts: owner, group, mode and IPC namespace
 *
 * Processes of @opts->ipc_ns find the queue under its name: it is listed
 * (KWQ_IOC_LIST) and those the mode admits attach to it (KWQ_IOC_OPEN)
 * and use every queue operation, shutdown included, as on a queue they
 * created. Userspace can never destroy it (KWQ_IOC_DESTROY: EPERM), and
 * its keys and memory are not charged to any user. A queue is published
 * once, in one namespace. Attached files hold a reference to the queue,
 * so it may outlive the module that created it (which is why a queue
 * with a clock of its own, which lives in that module, is refused).
 * Its keys' holder ids (&struct kwq_key_info.holder, KWQ_IOC_INSPECT)
 * are 0, whoever holds them: the owner cookies of its leases are the
 * module's as well as the attached files', which kwq does not tell
 * apart, so it names no process (the cookie, &struct kwq_key_info.owner,
 * is reported as for any queue). When the namespace dies (its last task gone, no nsfs file or mount
 * holding it), kwq unpublishes the queue within seconds, as
 * kwq_unpublish() does; the queue stays the caller's, who may publish it
 * again.
 *
 * Context: process context, may sleep.
 * Return: 0; -EINVAL for a NULL argument, a mode beyond 0777, an invalid
 * uid or gid, a queue not from kwq_create(), destroyed, or with its own
 * clock; -EBUSY if @q is published already; -EEXIST if a queue of that
 * name is in @opts->ipc_ns already (one a user created there, or another
 * published queue); -ENOMEM.
 */
int kwq_publish(struct kwq *q, const struct kwq_publish_opts *opts);

/**
 * kwq_unpublish() - take a queue out of /dev/kwq
 * @q: queue, or NULL
 *
 * Its name is free again in its IPC namespace. Files attached to it are
 * detached: their calls fail with EIDRM from now on, blocked gets end
 * with EIDRM and pollers see EPOLLHUP; the keys they held (leases) stay
 * processing until each file is closed, which returns them to the queue.
 * A drain (KWQ_SHUTDOWN_DRAIN) in progress still waits for the queue to
 * empty. No-op for a queue that is not published. kwq_destroy() calls
 * it. The queue may be published again (kwq_publish(), in the same or
 * another namespace, with new owner and mode); files detached before stay
 * detached: they attach again with KWQ_IOC_OPEN.
 *
 * Context: process context, may sleep.
 */
void kwq_unpublish(struct kwq *q);

/**
 * kwq_get_ref() - take another reference to a queue
 * @q: queue the caller already holds a reference to
 *
 * Context: any context.
 */
void kwq_get_ref(struct kwq *q);

/**
 * kwq_put() - drop a reference; the last one frees the queue
 * @q: queue, or NULL
 *
 * Never sleeps. Freeing waits for the queue's timer and hash resize work,
 * so the last put leaves it to a work item: the memory (and the keys
 * still in the queue) goes shortly after, and before kwq.ko can unload.
 *
 * Context: any context but NMI: hard interrupt handlers, softirqs,
 * with interrupts off or spinlocks held.
 */
void kwq_put(struct kwq *q);

/**
 * kwq_name() - name of a queue
 * @q: queue
 *
 * Context: any context.
 * Return: the name, valid as long as the queue, or NULL for a NULL @q.
 */
const char *kwq_name(const struct kwq *q);

/**
 * kwq_add() - queue a key to be processed (client-go Add)
 * @q: queue
 * @key: key bytes, copied
 * @len: 1..KWQ_KEY_MAX
 *
 * Ready key: no-op. Waiting key: becomes ready now, once. Processing
 * key: marked dirty and queued at the FIFO tail by kwq_done(). Otherwise
 * queued at the tail with priority 0. A new key's node is allocated under
 * the queue lock without sleeping or reclaim (GFP_NOWAIT), charged to the
 * calling task's memory cgroup if the queue was created with
 * KWQ_CONFIG_CHARGE_CALLER (&struct kwq_config.flags): -ENOMEM when
 * memory is short or that cgroup is at its memory.max.
 *
 * A new key also needs room in the queue's hash table, which grows past
 * a key a bucket (in a work item, its bytes charged by the add that makes
 * it due). A table that cannot grow takes at most 8 keys a bucket on
 * average: a new key past that is refused with the errno of what refused
 * the growth, -EDQUOT (byte budget), -ENOMEM (allocation) or -ENOSPC
 * (the table has its largest size, 2^21 buckets), in any context, until a
 * growth completes (each such add retries it). Keys the queue has are
 * never dropped, and adds of them still work.
 *
 * Context: any context that may take a spinlock_t (process, softirq,
 * hard interrupt handlers).
 * Return: 0; -EINVAL for a bad argument, -ESHUTDOWN after shutdown,
 * -ENOSPC if the key is new and max_items are queued (or the hash table
 * is full at its largest size), -ENOMEM (also: the table is full and its
 * growth could not be allocated), -EDQUOT if the key is new and the
 * queue's byte budget is spent or refused the table's growth while it
 * is full (only queues created through /dev/kwq have one: their
 * creator's). On error nothing changed.
 */
int kwq_add(struct kwq *q, const void *key, size_t len);

/**
 * kwq_add_after() - queue a key once a delay has passed (client-go AddAfter)
 * @q: queue
 * @key: key bytes, copied
 * @len: 1..KWQ_KEY_MAX
 * @delay_ns: delay; <= 0 is kwq_add()
 *
 * Waiting key: the earlier deadline wins. Ready or processing key: the
 * key remembers the earliest such deadline and runs again once it has
 * passed: a kwq_get() after the deadline is that run; one before it
 * carries the deadline into processing, and kwq_done() then makes the key
 * wait for what is left of it (or ready at once if it has passed).
 *
 * Context: as kwq_add().
 * Return: as kwq_add().
 */
int kwq_add_after(struct kwq *q, const void *key, size_t len, s64 delay_ns);

/**
 * kwq_add_opts() - kwq_add()/kwq_add_after() with a priority
 * @q: queue
 * @key: key bytes, copied
 * @len: 1..KWQ_KEY_MAX
 * @opts: delay and priority
 *
 * Higher priorities are handed out first, FIFO within one priority.
 * Adding a ready key again with a higher priority moves it to the tail
 * of that priority; a lower one changes nothing.
 *
 * With @opts->flags KWQ_AFTER_REPLACE, the deadline of @opts->after_ns
 * replaces the one the key has (a waiting key's, or the one a ready or
 * processing key remembers) even when it is later: "run this once no
 * add came for so long" (debounce, client-go#131). With KWQ_AFTER_LATER
 * the later of the two wins. A ready key stays ready either way.
 *
 * Context: as kwq_add().
 * Return: as kwq_add(); -EINVAL for a NULL @opts, unknown @opts->flags,
 * both KWQ_AFTER_* flags, or one of them without a delay.
 */
int kwq_add_opts(struct kwq *q, const void *key, size_t len,
		 const struct kwq_add_opts *opts);

/**
 * kwq_add_rate_limited() - requeue a key after its rate-limited delay
 * @q: queue
 * @key: key bytes, copied
 * @len: 1..KWQ_KEY_MAX
 * @opts: priority (after_ns and flags must be 0), or NULL
 * @delay_ns: receives the delay chosen, or NULL
 *
 * client-go AddRateLimited: the delay is the maximum over the queue's
 * limiters (capped at max_wait_ns), then the key is added as by
 * kwq_add_after(). The key's failure count goes up by one on every
 * accepted call; token buckets are only charged when the add landed,
 * that is when it queued the key or moved its deadline or requeue
 * earlier.
 *
 * With &struct kwq_config.max_retries set, the call for a key that had
 * already failed that many times is its last failure: the key is not
 * requeued but moves to the dead set (a queued key now, a processing one
 * at its done), and *@delay_ns is KWQ_DELAY_DEAD. No limiter is charged,
 * and @opts->priority is not applied: the key keeps the priority it had
 * (it is revived at it). The same for a key that is dead already: it
 * stays dead, counted once more and made the newest death (the last one
 * &struct kwq_config.max_dead drops), *@delay_ns is KWQ_DELAY_DEAD.
 *
 * Context: as kwq_add().
 * Return: as kwq_add(); on error nothing changed and @delay_ns is not
 * written.
 */
int kwq_add_rate_limited(struct kwq *q, const void *key, size_t len,
			 const struct kwq_add_opts *opts, u64 *delay_ns);

/*
 * Key handles: for kernel callers whose keys are long-lived objects (as a
 * work_struct lives in its object). A handle pins its key's node in the
 * queue, so kwq_add_ref() needs no hash, and a redundant add (the key is
 * ready, or processing and already due to run again) is one atomic
 * operation, with no lock. Documentation/design.rst, "Key handles".
 */
struct kwq_key_ref;

/**
 * kwq_key_get() - pin a key of a queue and return a handle on it
 * @q: queue
 * @key: key bytes, copied
 * @len: 1..KWQ_KEY_MAX
 * @gfp: allocation flags for the handle and, if the queue does not have
 *	the key yet, its node (GFP_KERNEL where sleeping is allowed)
 *
 * The key need not be queued: its node is made (idle) if the queue does
 * not have it, charged as a new key's node (the hash table's room and
 * growth, the byte budget) but not counted in max_items, and it stays
 * while a handle pins it, whatever happens to the key (done, remove,
 * forget, the dead set's bounds). A key has one handle: a kwq_key_get()
 * of a key that has one returns it again, counted, and each get is put
 * once. Adds by handle and adds by key (kwq_add()) act on the same key.
 * The node pays no byte for this: two bits of its hash word are the
 * handle's flags.
 *
 * The handle holds a reference to the queue: after kwq_destroy() the
 * queue is shut down (kwq_add_ref() returns -ESHUTDOWN) and its memory
 * stays until the last handle is put.
 *
 * Context: as kwq_add() with a @gfp that does not sleep; process context
 * with one that may.
 * Return: the handle, to be released with kwq_key_put();
 * ERR_PTR(-EINVAL) for a bad argument, ERR_PTR(-ESHUTDOWN) after
 * shutdown, ERR_PTR(-ENOMEM), or the refusal of a new key's room as in
 * kwq_add() (-ENOSPC, -EDQUOT, -ENOMEM). On error nothing changed.
 */
struct kwq_key_ref *kwq_key_get(struct kwq *q, const void *key, size_t len,
				gfp_t gfp);

/**
 * kwq_add_ref() - kwq_add() of a key by its handle
 * @ref: handle from kwq_key_get()
 *
 * What kwq_add() does, without the hash or, mostly, the queue lock: a
 * key already ready (at priority >= 0) or processing and dirty costs one
 * atomic operation; otherwise the add is queued on a lockless list of the
 * queue that the next getter (or any call that takes the queue lock)
 * applies before it looks at the keys, and one blocked getter is woken.
 * As with kwq_add(), an add that finds the key ready makes the caller's
 * earlier writes visible to whoever processes the key next. Never
 * refused for room: the key's node is there. An add that races with
 * kwq_shutdown() may return 0 and be dropped by it, as it would have
 * been refused a moment later.
 *
 * Context: any context (no lock is taken but the wait queue's, to wake a
 * getter).
 * Return: 0; -EINVAL for a NULL @ref, -ESHUTDOWN after shutdown.
 */
int kwq_add_ref(struct kwq_key_ref *ref);

/**
 * kwq_add_ref_opts() - kwq_add_opts() of a key by its handle
 * @ref: handle from kwq_key_get()
 * @opts: delay, priority and flags, as for kwq_add_opts()
 *
 * Takes the queue lock as kwq_add_opts() does (only the plain add is the
 * lockless one); the node cannot be missing, so no memory is allocated.
 *
 * Context: as kwq_add().
 * Return: as kwq_add_opts(); -EINVAL for a NULL @ref.
 */
int kwq_add_ref_opts(struct kwq_key_ref *ref, const struct kwq_add_opts *opts);

/**
 * kwq_key_put() - release a key handle
 * @ref: handle from kwq_key_get(), or NULL
 *
 * Drops one kwq_key_get() of the handle. The last one applies the
 * handle's add if it is still on its way, unpins the key (its node goes
 * if it is idle without failure record), frees the handle and drops its
 * queue reference (the last one frees the queue, as kwq_put() does). The
 * count is a refcount_t: a put more than the gets is the kernel's
 * refcount underflow warning, and a put after the last one a use after
 * free, as for kfree().
 *
 * Context: as kwq_add().
 */
void kwq_key_put(struct kwq_key_ref *ref);

/**
 * struct kwq_key - one key of a batch call
 * @key: the key bytes, copied
 * @len: 1..KWQ_KEY_MAX
 * @priority: its priority (kwq_add_batch())
 */
struct kwq_key {
	const void *key;
	u32 len;
	int priority;
};

/* &struct kwq_batch_opts flag: each key is added as kwq_add_rate_limited() */
#define KWQ_BATCH_RATE_LIMITED	0x1

/**
 * struct kwq_batch_opts - options of kwq_add_batch()
 * @after_ns: delay of every key, <= 0 for none; 0 with
 *	KWQ_BATCH_RATE_LIMITED
 * @flags: 0 or KWQ_BATCH_RATE_LIMITED, or with @after_ns > 0 one of
 *	KWQ_AFTER_REPLACE and KWQ_AFTER_LATER (as for kwq_add_opts())
 * @delays: with KWQ_BATCH_RATE_LIMITED, receives the delay chosen for
 *	each key that took effect (@nr entries), or NULL
 * @gfp: allocation flags for the nodes of new keys, which are allocated
 *	before the queue lock is taken (GFP_KERNEL where the caller may
 *	sleep); 0 means GFP_NOWAIT
 */
struct kwq_batch_opts {
	s64 after_ns;
	u32 flags;
	u64 *delays;
	gfp_t gfp;
};

/**
 * kwq_add_batch() - add many keys with one lock round trip per 16
 * @q: queue
 * @keys: the keys, handled in order
 * @nr: number of keys
 * @opts: delay, rate limiting and allocation flags; NULL for plain adds
 *	with nodes allocated GFP_NOWAIT (a zeroed struct)
 * @done: receives the number of keys that took effect, or NULL
 *
 * Each key is added as by kwq_add_opts() (or kwq_add_rate_limited()),
 * but keys are hashed and their nodes allocated before the queue lock
 * is taken, the lock is taken once for up to 16 keys, and getters are
 * woken once per critical section, one per key made ready. Nodes that
 * turn out unneeded (the key was queued already) are freed after the
 * lock is dropped.
 *
 * A key "took effect" when its add was accepted: kwq_add_opts() (or
 * kwq_add_rate_limited()) would have returned 0 for it, whether or not it
 * changed anything. A re-add of a key already ready, or twice in one
 * batch, took effect (and, rate limited, counted a failure and has its
 * delay in @opts->delays).
 *
 * Context: as kwq_add() if @opts->gfp does not allow sleeping, else
 * process context.
 * Return: 0 when all @nr keys took effect. Otherwise the error of the
 * first key that failed, as kwq_add() returns them; the keys before it
 * took effect and the rest did not. -EINVAL for bad arguments (any key
 * with a bad length: then none took effect).
 */
int kwq_add_batch(struct kwq *q, const struct kwq_key *keys, unsigned int nr,
		  const struct kwq_batch_opts *opts, unsigned int *done);

/**
 * kwq_forget() - clear a key's failure count (client-go Forget)
 * @q: queue
 * @key: key bytes
 * @len: 1..KWQ_KEY_MAX
 *
 * Does not dequeue the key.
 *
 * Context: as kwq_add().
 * Return: 0 (also when the key is unknown), -EINVAL for a bad argument.
 */
int kwq_forget(struct kwq *q, const void *key, size_t len);

/**
 * kwq_num_requeues() - a key's failure count (client-go NumRequeues)
 * @q: queue
 * @key: key bytes
 * @len: 1..KWQ_KEY_MAX
 *
 * Context: as kwq_add().
 * Return: the count (0 if unknown, or if the queue only has token
 * buckets), or -EINVAL for a bad argument.
 */
int kwq_num_requeues(struct kwq *q, const void *key, size_t len);

/**
 * kwq_remove() - cancel a key's pending run
 * @q: queue
 * @key: key bytes
 * @len: 1..KWQ_KEY_MAX
 *
 * Removes a ready or waiting key; for a processing key, cancels the
 * requeue a later add asked for. The failure count is kept.
 *
 * Context: as kwq_add().
 * Return: 0 if something was cancelled, -EBUSY if the key is processing
 * with no requeue pending, -ENOENT if it is not queued, -EINVAL for a
 * bad argument.
 */
int kwq_remove(struct kwq *q, const void *key, size_t len);

/**
 * kwq_revive() - give a dead key another chance
 * @q: queue
 * @key: key bytes
 * @len: 1..KWQ_KEY_MAX
 *
 * Moves the key from the dead set to the tail of its priority's ready
 * FIFO with its failure count reset to 0, as if it had never failed. An
 * add of a dead key does the same.
 *
 * Context: as kwq_add().
 * Return: 0, -ENOENT if the key is not dead (nothing changes),
 * -ENOSPC at the queue's max_items, -ESHUTDOWN after shutdown (the key
 * stays dead), -EINVAL for a bad argument.
 */
int kwq_revive(struct kwq *q, const void *key, size_t len);

/**
 * kwq_revive_all() - kwq_revive() every dead key, oldest death first
 * @q: queue
 *
 * Walks the keys dead when the call began, oldest first, 64 per hold of
 * the queue lock (dropped in between, without sleeping). Keys that die
 * meanwhile may or may not be revived; a revive stopped by max_items
 * leaves the rest dead.
 *
 * Context: as kwq_add().
 * Return: the number of keys revived; if none could be, -ENOSPC or
 * -ESHUTDOWN as kwq_revive() (0 for an empty dead set); -EINVAL for a
 * NULL @q.
 */
long kwq_revive_all(struct kwq *q);

/**
 * kwq_purge() - drop a dead key and its failure count
 * @q: queue
 * @key: key bytes
 * @len: 1..KWQ_KEY_MAX
 *
 * Context: as kwq_add().
 * Return: 0, -ENOENT if the key is not dead (nothing changes), -EINVAL
 * for a bad argument.
 */
int kwq_purge(struct kwq *q, const void *key, size_t len);

/**
 * kwq_purge_all() - kwq_purge() every dead key
 * @q: queue
 *
 * Locking as kwq_revive_all().
 *
 * Context: as kwq_add().
 * Return: the number of keys dropped, or -EINVAL for a NULL @q.
 */
long kwq_purge_all(struct kwq *q);

/*
 * &struct kwq_key_info.state is one of the uapi's KWQ_KEY_READY ..
 * KWQ_KEY_IDLE; kwq_inspect_list()'s @states a bit (1 << state) per state
 * listed (KWQ_KEY_STATES_ALL: all); &struct kwq_key_info.flags the uapi's
 * KWQ_KEY_DIRTY, KWQ_KEY_DELAYED, KWQ_KEY_DYING and KWQ_KEY_DUE.
 */

/**
 * struct kwq_key_info - one key as kwq_inspect() saw it
 * @state: KWQ_KEY_READY, KWQ_KEY_WAITING, KWQ_KEY_PROCESSING, KWQ_KEY_DEAD
 *	or KWQ_KEY_IDLE
 * @flags: processing: at most one of KWQ_KEY_DIRTY (ready again at its
 *	done), KWQ_KEY_DELAYED (waits at its done until the deadline of
 *	@due_ns) and KWQ_KEY_DYING (to the dead set at its done); any state
 *	but dead and idle: KWQ_KEY_DUE if it has a deadline (@due_ns). A
 *	dirty key that remembers a deadline (add_after, then add) is
 *	KWQ_KEY_DIRTY | KWQ_KEY_DUE: ready at its done, still remembering
 *	the deadline, as a ready key given add_after does
 * @priority: ready, waiting: its priority; processing: the priority it
 *	was handed out with; dead: the priority it had when it died (for a
 *	key that died processing, the one it was handed out with), which
 *	kwq_revive() makes it ready at; idle: the one it last had
 * @failures: its failure count (kwq_num_requeues())
 * @since_ns: ready: time since it became ready; processing: time since
 *	kwq_get() (time held); dead: time since its last failure; else 0
 * @due_ns: with KWQ_KEY_DUE, time left until its next deadline (0 if it
 *	passed): waiting, until it becomes ready; ready or processing, a
 *	deadline add_after asked for, which runs it again after its run
 * @timeout_ns: processing: time left until its processing deadline, 0 for
 *	none (the queue's processing timeout)
 * @owner: processing: the owner cookie given to kwq_get() (to compare,
 *	not to follow: the holder may be gone once the call returns)
 * @holder: processing: the holder's id as the queue's creator tells it
 *	(a queue created through /dev/kwq: the process id of the getter, in
 *	the reader's pid namespace); 0: detached, or none told (a kernel
 *	queue, published or not: see kwq_publish())
 * @key_len: the key's length
 * @key: the key's bytes
 *
 * Times (@since_ns, @due_ns, @timeout_ns) are read on the queue's clock
 * (&struct kwq_config.clock), as every deadline of the queue is.
 *
 * With room for a key of KWQ_KEY_MAX bytes the struct is about 1.1 KiB:
 * allocate it (or one on a stack frame with nothing else big), and
 * arrays of it always.
 */
struct kwq_key_info {
	u32 state;
	u32 flags;
	int priority;
	u32 failures;
	u64 since_ns;
	u64 due_ns;
	u64 timeout_ns;
	const void *owner;
	u32 holder;
	u16 key_len;
	u8 key[KWQ_KEY_MAX];
};

/* Most buckets kwq_inspect_list() looks at per call. */
#define KWQ_INSPECT_BUCKETS	1024

/**
 * kwq_inspect() - where one key is, and why
 * @q: queue
 * @key: key bytes
 * @len: 1..KWQ_KEY_MAX
 * @info: filled in
 *
 * Context: as kwq_add().
 * Return: 0; -ENOENT if the queue holds nothing of the key (neither
 * queued nor processing nor dead nor a failure count); -EINVAL for a
 * bad argument.
 */
int kwq_inspect(struct kwq *q, const void *key, size_t len,
		struct kwq_key_info *info);

/**
 * kwq_inspect_list() - walk the keys of some states, a chunk per call
 * @q: queue
 * @states: which states: bits (1 << KWQ_KEY_*), a non-empty subset of
 *	KWQ_KEY_STATES_ALL
 * @cursor: in: 0 to start, else what the previous call left; out: where
 *	the next call goes on, 0 once every key was seen
 * @infos: filled with the keys found
 * @max: room at @infos, >= 1
 *
 * Walks the keys in the order of their hashes read bit-reversed, which no
 * table size enters (the dedup table one bucket after another in reverse
 * binary order, as Redis's SCAN, each bucket sorted): a key present
 * during the whole walk is listed once, whether or not the table grows
 * meanwhile; a key added or removed meanwhile may or may not be. The
 * one exception: keys of one hash that are more than @max are split
 * across calls by a count, oldest first, and a key of that hash that
 * leaves or is added (or leaves and comes back) between the calls
 * shifts the count: one of them is then missed or listed twice
 * (Documentation/semantics.rst, "Introspection"). Each
 * call holds the queue lock once, for at most KWQ_INSPECT_BUCKETS
 * buckets and @max keys, so a call may return fewer keys than @max, even
 * none, before the walk ends: go on until *@cursor is 0. The cursor is a
 * place in that order, never a pointer: one from another queue is
 * refused (-ESTALE) and reaches nothing.
 *
 * Context: as kwq_add().
 * Return: the number of keys filled in; -EAGAIN while the table is
 * being resized (try again, the cursor is kept); -ESTALE for a cursor as
 * above; -EINVAL for a bad argument. *@cursor changes only on success.
 */
int kwq_inspect_list(struct kwq *q, u32 states, u64 *cursor,
		     struct kwq_key_info *infos, unsigned int max);

/**
 * kwq_len() - number of ready keys (client-go Len)
 * @q: queue
 *
 * Context: as kwq_add().
 * Return: the number, or -EINVAL for a NULL @q.
 */
long kwq_len(struct kwq *q);

/**
 * struct kwq_item - a key handed out by kwq_get(): the caller's lease on it
 * @key: the key bytes, valid until the lease ends (kwq_done(), or
 *	kwq_release_owner() of its owner)
 * @len: key length
 * @priority: the priority the key was handed out with
 *
 * The caller owns this struct (on its stack or in its own objects); kwq
 * fills it in kwq_get() and only reads it in kwq_done(). A key can be
 * handed out many times over the life of a queue; the private fields name
 * this hand-out (a lease number) and where to look for the key's record,
 * which kwq never follows unless the record is still in the queue. So a
 * stale or repeated kwq_done() is refused with -ESTALE instead of ending
 * somebody else's processing.
 */
struct kwq_item {
	const void *key;
	size_t len;
	int priority;
	/* private: */
	u32 hash;
	const void *node;
	u64 lease;
	u64 queued_ns;
};

/**
 * kwq_get() - take the next ready key for processing (client-go Get)
 * @q: queue
 * @owner: cookie stored with the lease for kwq_release_owner() and
 *	kwq_done_key(), or NULL for none
 * @flags: 0 or KWQ_GET_NONBLOCK
 * @timeout_ns: KWQ_WAIT_FOREVER (any negative value) to wait without
 *	limit, 0 to not wait, else the longest wait in nanoseconds of
 *	CLOCK_MONOTONIC (whatever the queue's clock)
 * @item: filled with the key and the lease on it
 *
 * Hands out the oldest key of the highest priority and moves it to the
 * processing set, where it stays until kwq_done(). After shutdown ready
 * keys are still handed out; once none is left, -ESHUTDOWN.
 *
 * Context: process context, may sleep; with KWQ_GET_NONBLOCK or a zero
 * @timeout_ns, any context that may take a spinlock_t.
 * Return: 0 with @item filled; -EAGAIN when nothing is ready and waiting
 * is not allowed, -ETIMEDOUT after @timeout_ns, -ERESTARTSYS when a
 * signal interrupted the wait, -ESHUTDOWN when the queue is shut down and
 * empty, -ENOMEM when the queue gives keys a processing deadline and
 * there was no memory to record it (the key stays ready), -EINVAL for bad
 * arguments. On error @item is not written.
 */
int kwq_get(struct kwq *q, void *owner, unsigned int flags, s64 timeout_ns,
	    struct kwq_item *item);

/**
 * kwq_item_key() - the key of an item
 * @item: item from kwq_get(), not yet done
 * @len: receives the key length, or NULL
 *
 * Context: any context.
 * Return: the key bytes, valid until kwq_done() (NULL for a NULL @item).
 */
static inline const void *kwq_item_key(const struct kwq_item *item,
				       size_t *len)
{
	if (!item)
		return NULL;
	if (len)
		*len = item->len;
	return item->key;
}

/**
 * kwq_item_priority() - the priority an item was handed out with
 * @item: item from kwq_get()
 *
 * Context: any context.
 * Return: the priority (0 for a NULL @item).
 */
static inline int kwq_item_priority(const struct kwq_item *item)
{
	return item ? item->priority : 0;
}

/**
 * kwq_get_batch() - take up to @max_nr ready keys in one call
 * @q: queue
 * @owner: as for kwq_get()
 * @flags: as for kwq_get()
 * @timeout_ns: as for kwq_get(); bounds the whole call
 * @items: receives the items, @max_nr entries
 * @min_nr: once a first key is taken, keep waiting and taking keys as
 *	they become ready until @min_nr are taken or @timeout_ns passes (a
 *	batching window; 0 or 1: do not wait for more). The window also
 *	ends at the processing deadline of the first key taken (the keys'
 *	leases would be revoked while the call holds them), and no key is
 *	taken after that lease has ended: one call never hands out a key
 *	twice
 * @max_nr: most keys to take, >= 1 and >= @min_nr
 *
 * Keys are handed out as by kwq_get(), each with its own lease. Keys
 * taken before a timeout, signal or shutdown are returned, not lost.
 * They are taken 64 per hold of the queue lock (dropped in between,
 * without sleeping), so other getters may take keys in between.
 *
 * Context: as kwq_get().
 * Return: the number of items filled (1..@max_nr), or an error as
 * kwq_get() returns it when none was taken.
 */
int kwq_get_batch(struct kwq *q, void *owner, unsigned int flags,
		  s64 timeout_ns, struct kwq_item *items, unsigned int min_nr,
		  unsigned int max_nr);

/**
 * kwq_done_batch() - kwq_done() of many items in one critical section
 * @q: queue
 * @items: items from kwq_get() or kwq_get_batch() on @q
 * @nr: number of items
 * @done: receives the number of items finished, or NULL
 *
 * Context: as kwq_add().
 * Return: 0 when all were finished; -ESTALE at the first item whose
 * lease has ended (the items before it were finished, the rest not);
 * -EINVAL for bad arguments.
 */
int kwq_done_batch(struct kwq *q, const struct kwq_item *items,
		   unsigned int nr, unsigned int *done);

/**
 * kwq_done() - finish processing an item (client-go Done)
 * @q: queue
 * @item: item from kwq_get() on @q
 *
 * A key added while processing is queued again (at the FIFO tail, or
 * waiting if it was added with a delay that has not passed); otherwise
 * the key leaves the queue, its failure count kept until kwq_forget().
 * The lease ends: a second kwq_done() of the same @item, or one after
 * kwq_release_owner() returned the key, gets -ESTALE and changes
 * nothing, even if the key was handed out again meanwhile.
 *
 * Context: as kwq_add().
 * Return: 0; -ESTALE if @item's lease on @q has ended (or @item never
 * came from @q), -EINVAL for a NULL argument.
 */
int kwq_done(struct kwq *q, const struct kwq_item *item);

/**
 * kwq_done_get() - a worker's cycle: finish the item held, take the next
 * @q: queue
 * @owner: as for kwq_get()
 * @flags: as for kwq_get()
 * @timeout_ns: as for kwq_get()
 * @item: the item from the last kwq_get() or kwq_done_get() on @q, or a
 *	zeroed one (the first call of a loop): filled with the next key
 *
 * kwq_done() of @item if it holds a lease, then kwq_get() into @item, in
 * one critical section when a key is ready. A worker loop is
 *
 *	struct kwq_item item = {};
 *
 *	while (!kwq_done_get(q, NULL, 0, KWQ_WAIT_FOREVER, &item))
 *		process(&item);
 *
 * Context: as kwq_get().
 * Return: 0 with @item holding the next key. -ESTALE if @item's lease
 * had ended: nothing is done or taken and @item is not written. Any other
 * error is kwq_get()'s, after the done: @item then holds no lease (as a
 * zeroed item) and may be passed again.
 */
int kwq_done_get(struct kwq *q, void *owner, unsigned int flags,
		 s64 timeout_ns, struct kwq_item *item);

/**
 * kwq_done_key() - kwq_done() by key, checking the owner
 * @q: queue
 * @key: key bytes
 * @len: 1..KWQ_KEY_MAX
 * @owner: the cookie given to kwq_get()
 *
 * Context: as kwq_add().
 * Return: 0; -ESTALE if @owner's lease on the key was revoked by its
 * processing deadline (and @owner did not take it again), -ENOENT if the
 * key is not processing, -EPERM if it is processing for another owner,
 * -EINVAL for a bad argument. On error nothing changed.
 */
int kwq_done_key(struct kwq *q, const void *key, size_t len, void *owner);

/**
 * kwq_touch() - move the processing deadline of an item (a heartbeat)
 * @q: queue
 * @item: item from kwq_get() on @q, still held
 * @timeout_ns: the new deadline, from now: 0 for the queue's
 *	&struct kwq_config.processing_timeout_ns (none if it has none),
 *	KWQ_NO_TIMEOUT for none, else KWQ_PROCESSING_TIMEOUT_MIN_NS..
 *	KWQ_PROCESSING_TIMEOUT_MAX_NS
 *
 * A holder that is still working calls it before its deadline passes; it
 * also gives a key a deadline of its own right after kwq_get(), or takes
 * it away. A key processing at its deadline loses its lease: it is
 * requeued as by kwq_add_rate_limited() at its priority then kwq_done(),
 * counted in &struct kwq_stats.processing_timeouts_total and traced
 * (kwq:key_timed_out); kwq_done() and kwq_touch() of the old @item get
 * -ESTALE and change nothing.
 *
 * Context: as kwq_add().
 * Return: 0; -ESTALE if @item's lease has ended (done, returned, or
 * revoked by its deadline), -ENOMEM if a key without a deadline could not
 * be given one, -EINVAL for a bad argument (nothing changed).
 */
int kwq_touch(struct kwq *q, const struct kwq_item *item, u64 timeout_ns);

/**
 * kwq_release_owner() - return an owner's processing keys to the queue
 * @q: queue
 * @owner: non-NULL cookie given to kwq_get()
 *
 * Every key processing under @owner is queued again at the tail of its
 * priority (once, even if it was added meanwhile) and counted as a lease
 * return; a key that failed its last retry (max_retries) goes to the dead
 * set instead, counted all the same. A key with a delayed requeue
 * (kwq_add_after() while processing) is ready at once, for the run that
 * was lost, and remembers the deadline as a ready key given
 * kwq_add_after() does: taken before it, it waits for it at its done.
 * This holds after kwq_shutdown() too. The leases of @owner's items end:
 * kwq_done() of them gets -ESTALE. Used when the
 * holder of a lease goes away (an fd is closed), so nothing is lost.
 * The processing keys are walked 64 per hold of the queue lock (dropped
 * in between, without sleeping): every key @owner held when the call
 * began is returned exactly once; keys @owner gets while it runs may or
 * may not be.
 *
 * Context: as kwq_add().
 * Return: the number of leases ended (what &struct kwq_stats.lease_returns
 * counted: keys queued again and keys that died), or -EINVAL for a bad
 * argument.
 */
int kwq_release_owner(struct kwq *q, void *owner);

/**
 * kwq_shutdown() - stop accepting keys (client-go ShutDown)
 * @q: queue
 *
 * Later adds fail with -ESHUTDOWN, waiting keys are dropped (counted in
 * dropped_at_shutdown), blocked getters wake up, a kwq_shutdown_drain()
 * in progress returns -ECANCELED. Ready and processing keys stay.
 * Waiting keys are dropped 64 per hold of the queue lock (dropped in
 * between, without sleeping); every one is gone when it returns.
 *
 * Context: any context that may take a spinlock_t.
 * Return: 0, or -EINVAL for a NULL @q.
 */
int kwq_shutdown(struct kwq *q);

/**
 * kwq_shutdown_drain() - shut down and wait until the queue is empty
 * @q: queue
 *
 * As kwq_shutdown(), then waits until no key is ready or processing
 * (client-go ShutDownWithDrain waits for processing keys only).
 *
 * Context: process context, sleeps.
 * Return: 0 once drained, -ECANCELED if a kwq_shutdown() ended the wait,
 * -ERESTARTSYS if a signal did, -EINVAL for a NULL @q.
 */
int kwq_shutdown_drain(struct kwq *q);

/**
 * kwq_shutting_down() - whether the queue was shut down
 * @q: queue
 *
 * Context: any context.
 * Return: true after kwq_shutdown() (or for a NULL @q).
 */
bool kwq_shutting_down(struct kwq *q);

/**
 * kwq_get_stats() - snapshot of a queue's counters and metrics
 * @q: queue
 * @stats: filled in
 *
 * Everything is read in one critical section, so the values are
 * consistent with each other. Costs O(KWQ_STATS_PRIO_LEVELS * log levels)
 * under the queue lock; nothing is allocated. Documentation/metrics.rst
 * maps the fields to client-go's workqueue metrics.
 *
 * Context: as kwq_add().
 * Return: 0, or -EINVAL for a bad argument.
 */
int kwq_get_stats(struct kwq *q, struct kwq_stats *stats);

/**
 * kwq_clock_expired() - a queue's clock reached the armed deadline
 * @q: queue
 *
 * Called by a &struct kwq_clock (never under the queue lock): moves the
 * waiting keys whose deadline passed to the ready FIFOs, in deadline
 * order, and re-arms the clock for what comes next. One call does a
 * bounded amount of work (about a thousand keys): with more due, it
 * re-arms the clock at the current time for the rest. Spurious calls are
 * harmless.
 *
 * Context: any context that may take a spinlock_t.
 */
void kwq_clock_expired(struct kwq *q);

#endif /* _LINUX_KWQ_H */
