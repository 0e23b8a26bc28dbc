// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Print the ioctl numbers and sizes of include/uapi/linux/kwq.h, one
 * "NAME VALUE" a line, for abi_test.go (KWQ_ABI_FILE): make check builds
 * and runs it, so the Go mirror of the ABI is compared with the header.
 */
#include <stddef.h>
#include <stdio.h>
#include <linux/kwq.h>

#define P(x) printf("%s %lu\n", #x, (unsigned long)(x))

int main(void)
{
	P(KWQ_IOC_CREATE);
	P(KWQ_IOC_INFO);
	P(KWQ_IOC_OPEN);
	P(KWQ_IOC_DESTROY);
	P(KWQ_IOC_ADD);
	P(KWQ_IOC_GET);
	P(KWQ_IOC_DONE);
	P(KWQ_IOC_FORGET);
	P(KWQ_IOC_REMOVE);
	P(KWQ_IOC_NUM_REQUEUES);
	P(KWQ_IOC_LEN);
	P(KWQ_IOC_SHUTDOWN);
	P(KWQ_IOC_STATS);
	P(KWQ_IOC_DONE_GET);
	P(KWQ_IOC_REVIVE);
	P(KWQ_IOC_PURGE);
	P(KWQ_IOC_INSPECT);
	P(KWQ_IOC_TOUCH);
	P(KWQ_IOC_RING_SETUP);
	P(KWQ_IOC_RING_ENTER);
	P(KWQ_RING_OFF_USER);
	P(KWQ_RING_OFF_KERNEL);
	P(KWQ_RING_OFF_STATUS);
	P(KWQ_RING_LEASES_MAX);
	P(KWQ_SQE_SIZE);
	P(KWQ_SQE_INLINE);
	P(KWQ_LEASE_SLOT_SIZE);
	P(sizeof(struct kwq_sqe) - 40);
	P(sizeof(struct kwq_cqe));
	P(offsetof(struct kwq_lease_slot, key));
	P(offsetof(struct kwq_ring_status, ready));
	P(offsetof(struct kwq_ring_status, flags));
	P(KWQ_SQE_ADD);
	P(KWQ_SQE_DONE);
	P(KWQ_SQE_DONE_LEASE);
	P(KWQ_CQE_LEASE);
	P(KWQ_RING_F_BROKEN);
	P(KWQ_STATUS_SHUTDOWN);
	P(KWQ_STATUS_DESTROYED);
	P(KWQ_ENTER_SUBMIT);
	P(KWQ_ENTER_GET);
	P(sizeof(struct kwq_info_rec));
	P(KWQ_INFO_REC_SIZE_MAX);
	P(KWQ_INSPECT_MAX);
	P(KWQ_DEAD_ALL);
	P(KWQ_KEY_STATES_ALL);
	P(sizeof(struct kwq_limit));
	P(sizeof(struct kwq_rec));
	P(KWQ_REC_SIZE_MAX);
	P(KWQ_NAME_LEN);
	P(KWQ_KEY_LEN_MAX);
	P(KWQ_LIMITS_MAX);
	P(KWQ_BATCH_MAX);
	P(KWQ_LIMIT_EXPONENTIAL);
	P(KWQ_LIMIT_FAST_SLOW);
	P(KWQ_LIMIT_BUCKET);
	P(KWQ_ADD_AFTER);
	P(KWQ_ADD_RATE_LIMITED);
	P(KWQ_ADD_REPLACE);
	P(KWQ_ADD_LATER);
	P(KWQ_TIMEOUT_NONE);
	P(KWQ_PROCESSING_TIMEOUT_MIN);
	P(KWQ_PROCESSING_TIMEOUT_MAX);
	P(KWQ_GET_DETACHED);
	P(KWQ_CREATE_EPHEMERAL);
	P(KWQ_DEFAULT_MAX_DEAD);
	P(KWQ_SHUTDOWN_DRAIN);
	P(KWQ_STATS_BUCKETS);
	P(KWQ_STATS_PRIOS);
	return 0;
}
