/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host benchmark shim: the benchmark never blocks (gets are non-blocking),
 * so anything that would schedule stops it loudly.
 */
#ifndef _HOSTBENCH_SCHED_H
#define _HOSTBENCH_SCHED_H
#include <linux/kernel.h>

struct mm_struct;
struct task_struct {
	struct mm_struct *mm;
	int pid;
	char comm[16];
};
extern struct task_struct *hostbench_current;
#define current			hostbench_current

#define TASK_RUNNING		0x00000000
#define TASK_INTERRUPTIBLE	0x00000001
#define TASK_UNINTERRUPTIBLE	0x00000002
#define TASK_WAKEKILL		0x00000100
#define TASK_KILLABLE		(TASK_WAKEKILL | TASK_UNINTERRUPTIBLE)
#define TASK_NORMAL		(TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE)
#define MAX_SCHEDULE_TIMEOUT	LONG_MAX

#define set_current_state(s)	do { } while (0)
#define __set_current_state(s)	do { } while (0)
#define signal_pending(p)	((void)(p), 0)
#define fatal_signal_pending(p)	((void)(p), 0)
#define schedule()		hostbench_die(__FILE__, __LINE__, "schedule(): would sleep")
#define schedule_timeout(t)	({ hostbench_die(__FILE__, __LINE__, "schedule_timeout(): would sleep"); 0L; })
#define io_schedule()		schedule()
#endif
