/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device side's own header: the objects /dev/kwq keeps (struct
 * kwq_ns, kwq_uq, kwq_user, kwq_file; dev.c's first comment says what
 * each is), what an ioctl handler is handed (struct kwq_ioc), the sizes
 * of record buffers, and the calls between its files: dev.c (file
 * operations, the ioctl table), namespace.c (names per IPC namespace,
 * ownership, publishing), user.c (per-user limits), record.c (the
 * record codec) and keys.c (the ioctls that move keys by records). Not
 * for the core below it, which knows none of this.
 */
#ifndef _KWQ_DEV_H
#define _KWQ_DEV_H

#include <linux/kwq.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/workqueue.h>
#include <uapi/linux/kwq.h>

#include "kwq_internal.h"
#include "ring.h"

struct dentry;
struct file;
struct ipc_namespace;
struct pid;
struct user_namespace;

/* The largest record buffer a batch call reads. */
#define KWQ_RECS_LEN_MAX	(KWQ_BATCH_MAX * KWQ_REC_SIZE_MAX)

struct kwq_ns {
	struct list_head node;		/* kwq_ns_list */
	struct list_head queues;	/* its listed kwq_uq; never empty */
	struct ipc_namespace *ipc;	/* constant, a reference */
	struct dentry *debugfs;		/* kwq/ipc:<inum>, once a queue needs it */
};

/*
 * struct kwq_user - the limits of one user in one user namespace. Listed
 * in kwq_user_list while referenced: by the queues that charge its budget
 * (q->budget), by its children, and briefly by a creator.
 */
struct kwq_user {
	struct list_head node;		/* kwq_user_list */
	struct user_namespace *user_ns;	/* constant, a reference */
	kuid_t uid;			/* constant */
	struct kwq_user *parent;	/* constant, a reference; NULL: none */
	unsigned int nr_queues;		/* unfreed queues here or below */
	struct kwq_budget budget;
};

struct kwq_uq {
	struct list_head node;		/* ns->queues, while listed */
	struct list_head pub_node;	/* kwq_pub_list, while listed */
	refcount_t ref;
	struct kwq *q;			/* constant */
	struct kwq_ns *ns;		/* while listed, then NULL */
	struct kwq_user *user;		/* constant: counts it; NULL: none */
	kuid_t uid;			/* constant: creator's euid */
	kgid_t gid;			/* constant: creator's egid */
	umode_t mode;			/* constant */
	bool published;			/* constant: a kernel queue */
	bool ephemeral;			/* constant: KWQ_CREATE_EPHEMERAL */
	bool dead;			/* set once, when unlisted */
	unsigned int nr_files;		/* attached files; kwq_uq_lock */
	/* constant: its CREATE's arguments as accepted (KWQ_IOC_INFO) */
	struct kwq_create_args args;
	struct kwq_rings rings;		/* the rings of its files */
};

/*
 * The record of a key of up to KWQ_KEY_LEN_MAX_VER1 bytes, most keys:
 * the one-key paths keep it (or the key) in a buffer of this size on
 * their stack, a longer one in the file's scratch buffer or the heap
 * (kwq_buf_get()). A KWQ_REC_SIZE_MAX one would not leave room on the
 * stack for the rest of the call.
 */
#define KWQ_REC_SMALL		KWQ_REC_SIZE_MAX_VER1

/*
 * A file's scratch buffer, one allocation of KWQ_SCRATCH_SIZE bytes (the
 * slab object the largest GET round's records need anyway) in two parts
 * with a lock each: the records a GET round copies out (the first
 * KWQ_SCRATCH_OUT_LEN bytes) and the records a call copies in (the
 * rest), so that DONE_GET holds both at once.
 */
#define KWQ_SCRATCH_SIZE	8192
#define KWQ_SCRATCH_OUT_LEN	(16 * KWQ_REC_SMALL)
#define KWQ_SCRATCH_IN_LEN	(KWQ_SCRATCH_SIZE - KWQ_SCRATCH_OUT_LEN)
/* A round of 64 16-byte keys' records (1536 bytes) copies in here. */
static_assert(KWQ_SCRATCH_IN_LEN >= 64 * KWQ_REC_SIZE(16));
/* Any one key's record fits either part. */
static_assert(KWQ_SCRATCH_OUT_LEN >= KWQ_REC_SIZE_MAX);
static_assert(KWQ_SCRATCH_IN_LEN >= KWQ_REC_SIZE_MAX);

struct kwq_file {
	struct mutex attach_lock;	/* serialises CREATE/OPEN */
	struct kwq_uq *uq;		/* NULL until CREATE/OPEN */
	struct mutex out_lock;		/* held by the call using ->scratch */
	struct mutex in_lock;		/* ... using ->scratch + OUT_LEN */
	u8 *scratch;			/* KWQ_SCRATCH_SIZE bytes */
	struct pid *pid;		/* the opener: holder of its leases */
	/* set once under attach_lock (smp_store_release); NULL: none */
	struct kwq_ring *ring;
	unsigned long armed;		/* counted in the rings' waiters */
};

/*
 * What kwq_dev_ioctl() hands every handler: the file, its queue if the
 * ioctl needs one (KWQ_IOCF_QUEUE, the file attached), and the argument
 * struct copied in (KWQ_IOCF_IN; its version checked). A handler holds
 * only its own operation and writes back what it answers.
 */
struct kwq_ioc {
	struct file *file;
	struct kwq_file *kf;
	struct kwq_uq *uq;
	unsigned int cmd;
	unsigned long arg;
	union {
		struct kwq_create_args create;
		struct kwq_open_args open;
		struct kwq_list_args list;
		struct kwq_keys_args keys;
		struct kwq_get_args get;
		struct kwq_done_get_args done_get;
		struct kwq_key_args key;
		struct kwq_shutdown_args shutdown;
		struct kwq_dead_args dead;
		struct kwq_inspect_args inspect;
		struct kwq_touch_args touch;
		struct kwq_ring_setup_args ring_setup;
		struct kwq_ring_enter_args ring_enter;
	} a;
};

/* user.c: guards the lists of namespaces, queues and users */
extern struct mutex kwq_uq_lock;
/* namespace.c */
extern struct list_head kwq_ns_list;
extern struct delayed_work kwq_ns_reap_work;

/* namespace.c: queues' references and death; the name ioctls */
int kwq_uq_err(struct kwq_uq *uq, int err);
void kwq_uq_put(struct kwq_uq *uq);
void kwq_uq_kill(struct kwq_uq *uq);
void kwq_ns_reap_kick(void);
void kwq_uq_detach(struct kwq_uq *uq);
int kwq_ioc_create(struct kwq_ioc *c);
int kwq_ioc_open(struct kwq_ioc *c);
int kwq_ioc_destroy(struct kwq_ioc *c);
int kwq_ioc_list(struct kwq_ioc *c);
/* user.c, under kwq_uq_lock */
struct kwq_user *kwq_user_get(struct user_namespace *user_ns, kuid_t uid);
void kwq_user_put_locked(struct kwq_user *u);
/* record.c: the record codec */
bool kwq_words_ok(const void __user *u, size_t len);
int kwq_copy_in(void *k, const void __user *u, size_t len);
int kwq_copy_out(void __user *u, const void *k, size_t len);
int kwq_copy_args_out(unsigned long arg, const void *src, size_t ksize);
void *kwq_buf_get(struct kwq_file *kf, size_t len, u8 *small, bool out);
void kwq_buf_put(struct kwq_file *kf, void *buf, u8 *small);
u8 *kwq_recs_in(struct kwq_file *kf, u64 uptr, u32 len, u32 nr,
		bool prio_ok, u8 *small);
void kwq_recs_keys(const u8 *buf, u32 *off, struct kwq_key *keys, u32 n);
void *kwq_key_in(struct kwq_file *kf, u64 uptr, u32 len, u8 *small);
/* keys.c: the ioctls that move keys by records */
int kwq_ioc_add(struct kwq_ioc *c);
int kwq_ioc_done(struct kwq_ioc *c);
int kwq_ioc_forget(struct kwq_ioc *c);
int kwq_ioc_remove(struct kwq_ioc *c);
int kwq_ioc_get(struct kwq_ioc *c);
int kwq_ioc_done_get(struct kwq_ioc *c);
bool kwq_processing_timeout_ok(u64 ns);

/*
 * The size of the record at @rec if it is whole and sound within @room
 * bytes: a header, a length in range, no priority unless @prio_ok, its
 * padding zero (tested in the record's last word, read little-endian:
 * records start 8-byte aligned in every record buffer); else -EINVAL.
 * A sound record is never smaller than a header, so no size can read as
 * "nothing" (an empty buffer once passed for one record: issue 30).
 * Reads only the first @room bytes: what the caller copied in.
 */
static __always_inline int kwq_rec_size(const u64 *rec, u32 room,
					bool prio_ok)
{
	const struct kwq_rec *r = (const void *)rec;
	u32 end;

	if (room < sizeof(*r) || !r->len || r->len > KWQ_KEY_LEN_MAX ||
	    (!prio_ok && r->priority) || KWQ_REC_SIZE(r->len) > room)
		return -EINVAL;
	end = sizeof(*r) + r->len;
	if (end % 8 &&
	    le64_to_cpu((__force __le64)rec[end / 8]) >>
	    (end % 8 * BITS_PER_BYTE))
		return -EINVAL;
	return KWQ_REC_SIZE(r->len);
}

/*
 * kwq_recs_check() of one record, inline: the one-key paths' check. An
 * empty or short @len is -EINVAL: no sound record is that small.
 */
static __always_inline int kwq_rec_check_one(const u64 *rec, u32 len,
					     bool prio_ok)
{
	int size = kwq_rec_size(rec, len, prio_ok);

	return size > 0 && (u32)size == len ? 0 : -EINVAL;
}

#endif /* _KWQ_DEV_H */
