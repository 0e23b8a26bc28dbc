/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HOSTBENCH_POLL_H
#define _HOSTBENCH_POLL_H
#include <linux/kernel.h>
#include <linux/wait.h>
#include <linux/fs.h>

typedef struct poll_table_struct {
	void *qproc;
	__poll_t _key;
} poll_table;

static inline void poll_wait(struct file *filp, wait_queue_head_t *wait_address,
			     poll_table *p)
{
}

#define EPOLLIN		((__force __poll_t)0x00000001)
#define EPOLLPRI	((__force __poll_t)0x00000002)
#define EPOLLOUT	((__force __poll_t)0x00000004)
#define EPOLLERR	((__force __poll_t)0x00000008)
#define EPOLLHUP	((__force __poll_t)0x00000010)
#define EPOLLNVAL	((__force __poll_t)0x00000020)
#define EPOLLRDNORM	((__force __poll_t)0x00000040)
#define EPOLLRDBAND	((__force __poll_t)0x00000080)
#define EPOLLWRNORM	((__force __poll_t)0x00000100)
#define EPOLLWRBAND	((__force __poll_t)0x00000200)
#define EPOLLRDHUP	((__force __poll_t)0x00002000)
#endif
