// SPDX-License-Identifier: GPL-2.0
/*
 * src/metrics.c is not built: debugfs has no place in the benchmark. Its
 * entry points, with the prototypes src/queue.h gives them, do nothing.
 */
#include "queue.h"

void kwq_debugfs_init(void)
{
}

void kwq_debugfs_exit(void)
{
}

void kwq_debugfs_add(struct kwq *q)
{
}

void kwq_debugfs_remove(struct kwq *q)
{
}
