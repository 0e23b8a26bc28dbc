// SPDX-License-Identifier: GPL-2.0
/*
 * src/metrics.c is not built: debugfs has no place in the benchmark. Its
 * entry points, with the prototypes src/queue.h and src/kwq_internal.h
 * give them, do nothing.
 */
#include "hostbench.h"
#include "kwq_internal.h"
#include "queue.h"

struct dentry *kwq_debugfs_dir(const char *name)
{
	return NULL;
}

void kwq_debugfs_add(struct kwq *q, struct dentry *parent)
{
}

void kwq_debugfs_remove(struct kwq *q)
{
}

/* For the driver: keys the delay wheel cascaded, all time. */
u64 hostbench_wheel_moves(struct kwq *q)
{
	return q->wheel_moves;
}
