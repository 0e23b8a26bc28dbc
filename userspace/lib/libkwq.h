/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libkwq: a thin C API over the ioctls of /dev/kwq (see <linux/kwq.h>).
 *
 * Conventions, as libc: a function returns -1 and sets errno on failure,
 * 0 (or a documented non-negative value) on success. errno is exactly the
 * kernel's (see <linux/kwq.h> and kwqctl(1)); the library adds EINVAL for
 * arguments it can tell are wrong before any ioctl, e.g. a record buffer
 * that is too small.
 *
 * An fd from kwq_open_dev() attaches to one queue with kwq_create() or
 * kwq_open(); every queue operation takes that fd. Keys are byte strings
 * of 1..KWQ_KEY_LEN_MAX bytes (not NUL-terminated). Batch calls move many
 * keys in one ioctl through a packed record buffer (struct kwq_recbuf).
 *
 * Functions that only parse or format (kwq_parse_duration(), ...) never
 * touch a device and are safe in any context.
 */
#ifndef LIBKWQ_H
#define LIBKWQ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/kwq.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KWQ_DEFAULT_DEVICE	"/dev/kwq"

/**
 * struct kwq_queue_opts - creation options of kwq_create()
 * @mode: permission bits 0..0777, 0 = 0600
 * @max_items: most keys queued at once (ENOSPC beyond), 0 = no cap
 * @max_wait_ns: cap on rate-limited delays, 0 = none
 * @nr_limits: entries used in @limits, 0 = client-go's default limiter
 * @limits: rate limiters, combined as max-of
 * @processing_timeout_ns: processing deadline of every get, 0 = none, else
 *	KWQ_PROCESSING_TIMEOUT_MIN..KWQ_PROCESSING_TIMEOUT_MAX: a key still
 *	processing at it is taken back and requeued as a failure
 * @max_retries: the dead set: the rate-limited add of a key that already
 *	failed this many times moves it there; 0 = no dead set
 * @max_dead: most dead keys kept (oldest dropped), 0 = KWQ_DEFAULT_MAX_DEAD
 */
struct kwq_queue_opts {
	unsigned int mode;
	unsigned int max_items;
	uint64_t max_wait_ns;
	unsigned int nr_limits;
	struct kwq_limit limits[KWQ_LIMITS_MAX];
	uint64_t processing_timeout_ns;
	unsigned int max_retries;
	unsigned int max_dead;
};

/* --- device and queues ------------------------------------------------ */

/* Open the device (NULL: /dev/kwq) read-write, close-on-exec. The fd. */
int kwq_open_dev(const char *dev);
/* Create queue @name (opts NULL: defaults) and attach @fd to it. */
int kwq_create(int fd, const char *name, const struct kwq_queue_opts *opts);
/*
 * kwq_create() with KWQ_CREATE_* @flags: KWQ_CREATE_EPHEMERAL destroys
 * the queue when the last fd attached to it is closed.
 */
int kwq_create_flags(int fd, const char *name,
		     const struct kwq_queue_opts *opts, unsigned int flags);
/*
 * Attach @fd to queue @name, creating it (as kwq_create_flags()) if it
 * does not exist: a service's start, whether or not an earlier run left
 * its queue. A queue that exists is opened as it is: @opts and @flags
 * apply only to one this call creates. 1 if created, 0 if opened, -1
 * and errno (EACCES: exists, not ours to open).
 */
int kwq_create_or_open(int fd, const char *name,
		       const struct kwq_queue_opts *opts, unsigned int flags);
/*
 * The options and KWQ_CREATE_* flags the attached queue was created with
 * (KWQ_IOC_INFO; mode 0 reads 0600): whether a queue found by name is
 * the one its opener would have made. Either may be NULL. EOPNOTSUPP for
 * a queue a kernel module published.
 */
int kwq_queue_info(int fd, struct kwq_queue_opts *opts, unsigned int *flags);
/* Attach @fd to the existing queue @name. */
int kwq_open(int fd, const char *name);
/* Destroy queue @name; attached fds then get EIDRM. */
int kwq_destroy(int fd, const char *name);
/*
 * Queue names: fills up to @capacity slots of @names (may be NULL when
 * @capacity is 0). Returns the number of queues, which may exceed
 * @capacity.
 */
int kwq_list(int fd, char (*names)[KWQ_NAME_LEN], unsigned int capacity);
/* Shut the attached queue down; flags KWQ_SHUTDOWN_DRAIN waits (EINTR). */
int kwq_shutdown(int fd, unsigned int flags);
/* Ready keys of the attached queue (client-go Len). */
int kwq_len(int fd, uint64_t *len);
int kwq_stats(int fd, struct kwq_stats_args *stats);
/*
 * Write @stats of queue @queue to @f as Prometheus text: the queue's
 * debugfs metrics file, byte for byte (one table of metrics serves both).
 * Returns 0, or -1 with errno if writing to @f failed.
 */
int kwq_stats_prometheus(FILE *f, const char *queue,
			 const struct kwq_stats_args *stats);

/* --- record buffers --------------------------------------------------- */

/**
 * struct kwq_recbuf - a growable packed record buffer for batch calls
 * @buf: the records, KWQ_REC_SIZE(len) bytes each
 * @len: bytes used
 * @cap: bytes allocated
 * @nr: records
 */
struct kwq_recbuf {
	void *buf;
	size_t len;
	size_t cap;
	unsigned int nr;
};

#define KWQ_RECBUF_INIT	{ NULL, 0, 0, 0 }

/* Append one key; -1/EINVAL for a bad length, -1/ENOMEM. */
int kwq_recbuf_push(struct kwq_recbuf *rb, const void *key, size_t len,
		    int priority);
/* Append a NUL-terminated key. */
int kwq_recbuf_push_str(struct kwq_recbuf *rb, const char *key, int priority);
void kwq_recbuf_reset(struct kwq_recbuf *rb);
void kwq_recbuf_free(struct kwq_recbuf *rb);

/*
 * Pack one record at @buf (which has @cap bytes): the bytes written
 * (KWQ_REC_SIZE(len)), or -1/EINVAL (bad length), -1/ENOSPC (no room).
 */
long kwq_rec_pack(void *buf, size_t cap, const void *key, size_t len,
		  int priority);
/*
 * Walk the records of a buffer: returns 1 and sets @key/@len/@priority
 * for the record at *@off, advancing *@off; 0 at the end (*@off ==
 * @used); -1/EINVAL for a malformed record.
 */
int kwq_rec_next(const void *buf, size_t used, size_t *off,
		 const void **key, size_t *len, int *priority);

/* --- batch calls ------------------------------------------------------ */

/**
 * struct kwq_batch_opts - options of kwq_add_batch()
 * @flags: KWQ_ADD_AFTER (with at most one of KWQ_ADD_REPLACE and
 *	KWQ_ADD_LATER, if @after_ns > 0) or KWQ_ADD_RATE_LIMITED (or 0)
 * @after_ns: delay for KWQ_ADD_AFTER
 * @delays: KWQ_ADD_RATE_LIMITED: receives nr delays in ns (may be NULL)
 */
struct kwq_batch_opts {
	unsigned int flags;
	int64_t after_ns;
	uint64_t *delays;
};

/*
 * Batch calls: keys are handled in order and the call stops at the first
 * failing one. *@done (may be NULL) receives the number handled, also on
 * error: the first *@done keys took effect and the rest did not.
 */
int kwq_add_batch(int fd, const struct kwq_recbuf *rb,
		  const struct kwq_batch_opts *opts, unsigned int *done);
int kwq_done_batch(int fd, const struct kwq_recbuf *rb, unsigned int *done);
int kwq_forget_batch(int fd, const struct kwq_recbuf *rb, unsigned int *done);
int kwq_remove_batch(int fd, const struct kwq_recbuf *rb, unsigned int *done);

/*
 * Take up to @max ready keys into @buf (@cap bytes, at least
 * KWQ_REC_SIZE_MAX_VER1, KWQ_REC_SIZE_MAX to take any key: a key whose
 * record does not fit is left queued, EMSGSIZE if it is the first one).
 * @flags: KWQ_GET_*. @timeout_ns: < 0 forever, 0 do
 * not wait (EAGAIN), else ETIMEDOUT when it passes; ESHUTDOWN once shut
 * down and empty. Returns the number of keys; *@used (may be NULL) the
 * bytes filled, to walk with kwq_rec_next().
 */
int kwq_get_batch(int fd, void *buf, size_t cap, unsigned int max,
		  unsigned int flags, int64_t timeout_ns, size_t *used);
/*
 * kwq_get_batch() with the keys' processing deadline: @processing_ns 0
 * the queue's, KWQ_TIMEOUT_NONE none, else KWQ_PROCESSING_TIMEOUT_MIN..
 * KWQ_PROCESSING_TIMEOUT_MAX from the get.
 */
int kwq_get_batch_deadline(int fd, void *buf, size_t cap, unsigned int max,
			   unsigned int flags, int64_t timeout_ns,
			   uint64_t processing_ns, size_t *used);
/*
 * Move the processing deadline of a key this fd holds (or one taken
 * detached) to @processing_ns from now (0: the queue's timeout,
 * KWQ_TIMEOUT_NONE: none): a heartbeat. -1 with errno ESTALE if its
 * deadline passed and the key was taken back, ENOENT if it is not
 * processing, EPERM if another fd holds it.
 */
int kwq_touch(int fd, const void *key, size_t len, uint64_t processing_ns);

/*
 * A worker's cycle in one system call (KWQ_IOC_DONE_GET): finish the keys
 * of @done_rb (NULL or empty: none), then take keys as kwq_get_batch()
 * does, waiting (within @timeout_ns) until @min_nr are taken (0 or 1:
 * the first one). Returns the number of keys taken, or -1; *@done (may be
 * NULL) receives the keys finished, also on error: if it is less than
 * @done_rb->nr the call failed on that key and took none.
 */
int kwq_done_get(int fd, const struct kwq_recbuf *done_rb,
		 unsigned int *done, void *buf, size_t cap, unsigned int max,
		 unsigned int min_nr, unsigned int flags, int64_t timeout_ns,
		 size_t *used);

/* --- rings: no system call per key ------------------------------------- */

/*
 * A ring (KWQ_IOC_RING_SETUP, Documentation/rings.rst) is shared memory
 * between a process and the kernel on one attached fd: a submission ring
 * the process writes records into (adds, done, forget, remove), a
 * completion ring the kernel answers in (errors, and keys leased), lease
 * slots the kernel writes the leased keys into, and the queue's status
 * page. A producer publishes a record with a store and a fence and makes
 * a system call only while a getter of the queue waits; a worker finishes
 * its key and takes the next in one system call (kwq_ring_done_get()),
 * or in one per up to N keys (kwq_ring_next()).
 *
 * Thread safety: a struct kwq_ring is not locked. Use it from one thread
 * at a time (one fd and ring per thread, or the caller's own lock around
 * every kwq_ring_*() call of that ring). Several rings, on one queue or
 * not, are independent. Completion callbacks run in the thread that
 * called the kwq_ring_*() function that read them.
 *
 * Records are written into the ring in order and applied by the kernel in
 * order: a record is applied before any GET, LEN, STATS or INSPECT of
 * the queue that begins after its kwq_ring_*() call returned, and by the
 * kernel's drains in between. Records that succeed complete silently,
 * unless KWQ_SQE_F_CQE was given; a record that fails (ENOSPC at the
 * queue's max_items, ESTALE for a lease that ended, EIDRM...) changes
 * nothing and posts an error completion, which the library hands to the
 * completion callback (kwq_ring_set_callback()) or, without one, keeps
 * for kwq_ring_reap() (then at most cq_entries are kept; past that the
 * library stops reading completions and the kernel answers EBUSY until
 * they are reaped). A completion names its record by the ring index of
 * its first slot (kwq_ring_prep()'s *index); the library hands every
 * completion over before it writes that position again, so the index is
 * unambiguous when the caller sees it. A full submission ring is
 * backpressure: the call rings the doorbell and waits for room; no
 * record is dropped.
 */

struct kwq_ring;

/**
 * struct kwq_ring_lease - a key leased through a ring
 * @slot: the lease slot
 * @gen: the lease's generation
 * @key: the key bytes, in the ring's read-only lease slot: valid until the
 *	lease is finished (kwq_ring_done_lease() or kwq_ring_done_get())
 * @len: the key's length
 * @priority: the priority it was handed out with
 */
struct kwq_ring_lease {
	unsigned int slot;
	uint64_t gen;
	const void *key;
	size_t len;
	int priority;
};

/* A completion other than a lease (see struct kwq_cqe). */
typedef void (*kwq_ring_cqe_fn)(void *arg, const struct kwq_cqe *cqe);

/*
 * Set up @fd's ring and map it: @sq_entries submission slots and
 * @cq_entries completions (powers of two in KWQ_RING_ENTRIES_MIN..
 * KWQ_RING_ENTRIES_MAX; 0: 256 each), @lease_slots (0..
 * KWQ_RING_LEASES_MAX; 0: this ring only submits). An fd has at most one
 * ring (EBUSY). *@ring is set on success; the fd stays the caller's.
 */
int kwq_ring_setup(int fd, unsigned int sq_entries, unsigned int cq_entries,
		   unsigned int lease_slots, struct kwq_ring **ring);
/*
 * Publish what is written, ring the doorbell once, unmap and free. Keys
 * still leased stay leased to the fd until it is closed. NULL is a no-op.
 * Returns 0, or -1 if the last doorbell failed (the ring is freed).
 */
int kwq_ring_free(struct kwq_ring *ring);
int kwq_ring_fd(const struct kwq_ring *ring);
/* Send completions other than leases to @fn (NULL: keep them for reap). */
void kwq_ring_set_callback(struct kwq_ring *ring, kwq_ring_cqe_fn fn,
			   void *arg);
/*
 * The processing deadline of the keys later gets lease: 0 the queue's,
 * KWQ_TIMEOUT_NONE none, else as kwq_get_batch_deadline().
 */
void kwq_ring_set_processing_timeout(struct kwq_ring *ring,
				     uint64_t processing_ns);

/*
 * Write one record without publishing it (kwq_ring_publish() does):
 * @op KWQ_SQE_ADD, _DONE, _DONE_LEASE, _FORGET, _REMOVE or _NOP, @flags
 * KWQ_SQE_F_*, @arg as struct kwq_sqe.arg (KWQ_SQE_DONE_LEASE: @priority
 * is the lease slot, @arg its generation; kwq_ring_done_lease() fills
 * them in). *@index (may be NULL) receives the ring index its completion
 * will name. A full ring publishes and rings the doorbell until there is
 * room (EINTR, EBUSY with completions not reaped, EIO for a ring the
 * kernel marked broken: -1, nothing written). -1/EINVAL for a bad key
 * length or op.
 */
int kwq_ring_prep(struct kwq_ring *ring, unsigned int op, unsigned int flags,
		  const void *key, size_t len, int priority, uint64_t arg,
		  uint32_t *index);
/*
 * Publish the records written (release), then (after a full fence) ring
 * the doorbell only if a getter of the queue waits: no system call while
 * none does. 1 if it rang, 0 if not, -1 if the doorbell failed (the
 * records stay published and are applied by the next drain). A doorbell
 * that finds the completion ring full reads it (callback or kept) and
 * rings again; EBUSY only when the kept completions must be reaped first.
 */
int kwq_ring_publish(struct kwq_ring *ring);
/* Publish and ring the doorbell (KWQ_ENTER_SUBMIT) now: 0 or -1, as above. */
int kwq_ring_submit(struct kwq_ring *ring);

/* kwq_ring_prep() and kwq_ring_publish() of one record: 0 or -1. */
int kwq_ring_add(struct kwq_ring *ring, const void *key, size_t len,
		 int priority);
int kwq_ring_add_after(struct kwq_ring *ring, const void *key, size_t len,
		       int64_t after_ns);
/*
 * The delay chosen is reported only through kwq_ring_prep() with
 * KWQ_SQE_F_CQE (a completion whose value is the delay).
 */
int kwq_ring_add_rate_limited(struct kwq_ring *ring, const void *key,
			      size_t len);
int kwq_ring_done(struct kwq_ring *ring, const void *key, size_t len);
int kwq_ring_forget(struct kwq_ring *ring, const void *key, size_t len);
int kwq_ring_remove(struct kwq_ring *ring, const void *key, size_t len);
/* Finish a leased key (no key hashed): a record, published. */
int kwq_ring_done_lease(struct kwq_ring *ring,
			const struct kwq_ring_lease *lease);

/*
 * A worker's cycle: finish the @ndone leases of @done (a record each,
 * published), then hand out up to @max leased keys into @out, entering
 * the kernel (KWQ_ENTER_SUBMIT | KWQ_ENTER_GET, one system call) unless
 * @min_nr (0 or 1: one) keys were already leased by an earlier call and
 * are waiting in the library. Waits within @timeout_ns as kwq_get_batch()
 * (EAGAIN, ETIMEDOUT, ESHUTDOWN, EINTR). Returns the number of keys in
 * @out (keys leased before a failure are returned, not lost), or -1.
 * @max is at most the ring's lease slots still free. -1/EINVAL for a ring
 * set up without lease slots.
 */
int kwq_ring_done_get(struct kwq_ring *ring, const struct kwq_ring_lease *done,
		      unsigned int ndone, struct kwq_ring_lease *out,
		      unsigned int max, unsigned int min_nr,
		      int64_t timeout_ns);
int kwq_ring_get(struct kwq_ring *ring, struct kwq_ring_lease *out,
		 unsigned int max, unsigned int min_nr, int64_t timeout_ns);
/*
 * A worker's cycle with prefetch, one key at a time: finish @done (NULL:
 * none; a DONE_LEASE record, published: no system call unless a getter
 * of the queue waits), then hand out the next leased key into *@out.
 * Keys this ring already holds are handed out first, with no system
 * call; only when it holds none does it enter the kernel (KWQ_ENTER_SUBMIT
 * | KWQ_ENTER_GET: the records written are applied, every ring of the
 * queue pulled) and lease every ready key up to @prefetch (1..the ring's
 * lease slots; fewer if fewer slots are free), waiting within
 * @timeout_ns for one as kwq_ring_get(). Returns 1 with *@out set, or -1
 * (EINVAL for a @prefetch of 0 or past the lease slots; else as
 * kwq_ring_done_get()).
 *
 * What prefetching means: the keys taken in one enter are leased to this
 * fd at once. Until the worker reaches them they are processing (Len()
 * and the ready count leave them out, an add of one marks it dirty) and
 * no other worker of the queue can take them, so with several workers a
 * key may wait behind its worker's earlier keys while another worker
 * idles: @prefetch bounds that unfairness (1 takes one key per system
 * call, as kwq_ring_done_get() with @max 1). A processing deadline (the
 * queue's, or kwq_ring_set_processing_timeout()) runs from the enter,
 * not from when the key is handed out here: it must cover the
 * processing of up to @prefetch keys, or keys time out before this
 * worker reaches them (they are handed to another worker as well, and
 * this worker's DONE_LEASE of them completes ESTALE). Keys prefetched and not handed out go back
 * to the queue when the fd is closed, as every lease of the fd does.
 */
int kwq_ring_next(struct kwq_ring *ring, const struct kwq_ring_lease *done,
		  struct kwq_ring_lease *out, unsigned int prefetch,
		  int64_t timeout_ns);

/*
 * Read the completion ring now (leases are kept for the next get) and
 * copy up to @max completions kept for reaping into @out: their number.
 * With a callback set, the callback gets them and this returns 0.
 */
unsigned int kwq_ring_reap(struct kwq_ring *ring, struct kwq_cqe *out,
			   unsigned int max);

/*
 * The status page, no system call: keys ready as the kernel last
 * published (records not yet drained are not counted; kwq_len() drains
 * first), and whether the queue is shut down (1) or destroyed (2).
 */
uint64_t kwq_ring_ready(const struct kwq_ring *ring);
unsigned int kwq_ring_status_flags(const struct kwq_ring *ring);

/* --- one key ---------------------------------------------------------- */

int kwq_add(int fd, const void *key, size_t len);
int kwq_add_after(int fd, const void *key, size_t len, int64_t after_ns);
int kwq_add_priority(int fd, const void *key, size_t len, int priority);
/* Rate-limited add; *@delay_ns (may be NULL) receives the delay chosen. */
int kwq_add_rate_limited(int fd, const void *key, size_t len,
			 uint64_t *delay_ns);
/*
 * Take one key into @key, @cap bytes: at least KWQ_KEY_LEN_MAX_VER1
 * (EINVAL, nothing taken), KWQ_KEY_LEN_MAX to take any key. A key longer
 * than @cap is not taken: EMSGSIZE, and it stays first in the queue.
 * @flags and @timeout_ns as kwq_get_batch(). Returns the key's length,
 * or -1.
 */
long kwq_get(int fd, void *key, size_t cap, unsigned int flags,
	     int64_t timeout_ns);
int kwq_done(int fd, const void *key, size_t len);
/*
 * kwq_done() of @done_key (NULL: none) and kwq_get() in one system call.
 * *@done (may be NULL) is set to 1 once @done_key was finished, also
 * when the get part then fails (EINTR, ESHUTDOWN...): do not finish it
 * again. Returns the new key's length, or -1.
 */
long kwq_done_get_one(int fd, const void *done_key, size_t done_len,
		      int *done, void *key, size_t cap, unsigned int flags,
		      int64_t timeout_ns);
int kwq_forget(int fd, const void *key, size_t len);
int kwq_remove(int fd, const void *key, size_t len);
/* The key's failure count (client-go NumRequeues), or -1. */
long kwq_num_requeues(int fd, const void *key, size_t len);

/* --- the dead set ------------------------------------------------------ */

/*
 * A rate-limited add's *delay_ns is KWQ_DELAY_DEAD when the key failed
 * with max_retries used up and moved to the dead set.
 *
 * Back to ready with its failure count reset (revive), or dropped
 * (purge): one dead key (0, or -1 with errno ENOENT if it is not dead),
 * or every dead key (their number, or -1).
 */
int kwq_revive(int fd, const void *key, size_t len);
long kwq_revive_all(int fd);
int kwq_purge(int fd, const void *key, size_t len);
long kwq_purge_all(int fd);

/* --- introspection ------------------------------------------------------ */

/*
 * Where one key is: its record into *@info (the key bytes are not copied
 * back). 0, or -1 with errno ENOENT if the queue holds nothing of it.
 */
int kwq_inspect(int fd, const void *key, size_t len,
		struct kwq_info_rec *info);
/*
 * One chunk of a walk over the keys of @states (bits 1 << KWQ_KEY_*):
 * records (struct kwq_info_rec + key) into @buf (@cap bytes, at least
 * KWQ_INFO_REC_SIZE_MAX_VER1, KWQ_INFO_REC_SIZE_MAX to list any key: see
 * KWQ_IOC_INSPECT), at most @max of them; *@cursor is 0 to start
 * and is advanced, 0 once the walk is over. Returns the number of
 * records (possibly 0 before the end) and sets *@used; -1 on error
 * (EAGAIN: the table is being resized, call again; ESTALE: a cursor of
 * another queue). Read the records with kwq_info_next().
 */
long kwq_inspect_list(int fd, unsigned int states, uint64_t *cursor,
		      void *buf, size_t cap, unsigned int max, size_t *used);
/*
 * The record at *@off of @buf (@used bytes): 1 and *@off advanced, 0 at
 * the end, -1/EINVAL if malformed. *@rec points into @buf (aligned to 8
 * when @buf is), *@key at the key bytes (rec->len of them).
 */
int kwq_info_next(const void *buf, size_t used, size_t *off,
		  const struct kwq_info_rec **rec, const void **key);
/* The name of state KWQ_KEY_* ("ready", ...), or NULL; and back (0: none). */
const char *kwq_state_name(unsigned int state);
unsigned int kwq_state_parse(const char *name);

/* --- parsing and formatting (no device) ------------------------------- */

/*
 * Parse a duration: a non-negative integer followed by ns, us, ms, s, m,
 * h or d (24 h); a bare "0" is allowed. At most INT64_MAX ns. 0 or
 * -1/EINVAL (-1/ERANGE on overflow).
 */
int kwq_parse_duration(const char *s, uint64_t *ns);
/*
 * Format @ns with the largest unit up to h dividing it exactly ("5ms",
 * "1s", "90s" -> "90s", "48h", "0" for zero). Returns the length snprintf() would.
 */
int kwq_format_duration(char *buf, size_t size, uint64_t ns);
/*
 * Parse a limiter SPEC: exponential:BASE:MAX, fastslow:FAST:SLOW:N,
 * bucket:QPS:BURST (QPS a decimal with at most 3 fractional digits,
 * > 0). "default" expands to client-go's DefaultControllerRateLimiter
 * (exponential:5ms:1000s + bucket:10:100). Appends to @opts->limits;
 * -1/EINVAL for a bad spec, -1/E2BIG when more than KWQ_LIMITS_MAX
 * limiters would result.
 */
int kwq_parse_limiter(const char *spec, struct kwq_queue_opts *opts);
/* Format one limiter back as a SPEC. Returns as snprintf(). */
int kwq_format_limiter(char *buf, size_t size, const struct kwq_limit *l);

#ifdef __cplusplus
}
#endif

#endif /* LIBKWQ_H */
