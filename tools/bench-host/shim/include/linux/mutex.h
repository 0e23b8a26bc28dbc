/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: single threaded, so a held mutex is a deadlock. */
#ifndef _HOSTBENCH_MUTEX_H
#define _HOSTBENCH_MUTEX_H
#include <linux/kernel.h>
#include <linux/lockdep.h>

struct mutex {
	int locked;
};

#define __MUTEX_INITIALIZER(name)	{ .locked = 0 }
#define DEFINE_MUTEX(name)		struct mutex name = __MUTEX_INITIALIZER(name)
#define mutex_init(m)			do { (m)->locked = 0; } while (0)
#define mutex_destroy(m)		do { } while (0)

static inline void mutex_lock(struct mutex *m)
{
	if (m->locked)
		hostbench_die(__FILE__, __LINE__, "mutex deadlock");
	m->locked = 1;
}

static inline void mutex_unlock(struct mutex *m)
{
	if (!m->locked)
		hostbench_die(__FILE__, __LINE__, "mutex_unlock of an unlocked mutex");
	m->locked = 0;
}

static inline int mutex_trylock(struct mutex *m)
{
	if (m->locked)
		return 0;
	m->locked = 1;
	return 1;
}

static inline int mutex_lock_interruptible(struct mutex *m)
{
	mutex_lock(m);
	return 0;
}

static inline bool mutex_is_locked(struct mutex *m)
{
	return m->locked;
}
#endif
