/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the kwq queue core (trace system "kwq"), each named for
 * what happened to a key or a queue: key_added, key_rate_limited,
 * key_taken, key_finished, key_due, key_died, key_revived, key_purged,
 * queue_shutdown. They fire under the
 * queue lock.
 *
 * Keys are arbitrary bytes: an event keeps the first KWQ_TRACE_KEY_MAX of
 * them, escaped, plus the full length; a longer key is marked with "...".
 * Printable ASCII other than space, '"' and '\' is kept; those three and
 * every other byte are escaped (\n, \", \\, else octal \NNN), so a key
 * is one word without raw bytes. The escaping costs only while the event
 * is enabled.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM kwq

#if !defined(_KWQ_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KWQ_TRACE_H

#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/string_helpers.h>
#include <linux/tracepoint.h>

#include "layout.h"

/* Key bytes an event keeps. */
#define KWQ_TRACE_KEY_MAX	64

#define KWQ_TRACE_KEY_LEN(len)	min_t(size_t, len, KWQ_TRACE_KEY_MAX)
#define KWQ_TRACE_ESC_FLAGS	(ESCAPE_ANY | ESCAPE_NAP | ESCAPE_APPEND)
#define KWQ_TRACE_ESC_ALSO	"\\\" "

/* Escape the kept part of @key into @dst (NULL: just measure). */
#define KWQ_TRACE_ESCAPE(key, len, dst, size)				\
	string_escape_mem(key, KWQ_TRACE_KEY_LEN(len), dst, size,	\
			  KWQ_TRACE_ESC_FLAGS, KWQ_TRACE_ESC_ALSO)

#ifndef _KWQ_TRACE_HELPERS
#define _KWQ_TRACE_HELPERS
/* Fill the event's key string: @size is KWQ_TRACE_ESCAPE(...) + 1. */
static inline void kwq_trace_key(char *dst, size_t size, const void *key,
				 size_t len)
{
	dst[KWQ_TRACE_ESCAPE(key, len, dst, size - 1)] = '\0';
}
#endif

DECLARE_EVENT_CLASS(kwq_key_class,
		    TP_PROTO(const struct kwq *q, const void *key, size_t len,
			     s64 arg, int prio, int ret),
		    TP_ARGS(q, key, len, arg, prio, ret),
		    TP_STRUCT__entry(__array(char, queue, KWQ_NAME_MAX + 1)
				     __field(s64, arg)
				     __field(int, prio)
				     __field(int, ret)
				     __field(u16, key_len)
				     __dynamic_array(char, key,
						     KWQ_TRACE_ESCAPE(key, len,
								      NULL, 0) + 1)),
		    TP_fast_assign(memcpy(__entry->queue, q->name,
					  sizeof(__entry->queue));
				   __entry->arg = arg;
				   __entry->prio = prio;
				   __entry->ret = ret;
				   __entry->key_len = len;
				   kwq_trace_key(__get_dynamic_array(key),
						 __get_dynamic_array_len(key),
						 key, len);),
		    TP_printk("queue=%s key=%s%s len=%u arg=%lld prio=%d ret=%d",
			      __entry->queue, (char *)__get_dynamic_array(key),
			      __entry->key_len > KWQ_TRACE_KEY_MAX ? "..." : "",
			      __entry->key_len, __entry->arg, __entry->prio,
			      __entry->ret)
);

#define KWQ_KEY_EVENT(name)						\
	DEFINE_EVENT(kwq_key_class, name,				\
		     TP_PROTO(const struct kwq *q, const void *key,	\
			      size_t len, s64 arg, int prio, int ret),	\
		     TP_ARGS(q, key, len, arg, prio, ret))

/* An add (kwq_add/_after/_opts): arg = the delay asked for in ns; ret 1 = landed. */
KWQ_KEY_EVENT(key_added);

/* An add_rate_limited: arg = the delay chosen in ns; ret 1 = landed. */
KWQ_KEY_EVENT(key_rate_limited);

/* A get handed the key out: arg = ns it was ready (queue duration). */
KWQ_KEY_EVENT(key_taken);

/*
 * A done finished the key: arg = ns it was processing (work duration);
 * ret = the enum kwq_requeue that applied (0 released, 1 requeued ready,
 * 2 requeued waiting).
 */
KWQ_KEY_EVENT(key_finished);

/* A waiting key's delay passed: arg = ns the expiry came after it. */
KWQ_KEY_EVENT(key_due);

/*
 * A processing key's deadline passed and its lease was revoked (then
 * requeued as a failure: key_rate_limited, key_finished follow): arg = ns
 * it was processing; ret 1 if it was leased to an owner.
 */
KWQ_KEY_EVENT(key_timed_out);

/*
 * A key failed with max_retries used up and moved to the dead set
 * (at its done if it was processing): arg = its failure count.
 */
KWQ_KEY_EVENT(key_died);

/*
 * A dead key left the dead set for the ready queue, its failure count
 * reset: arg 0 = an add, 1 = kwq_revive() or kwq_revive_all().
 */
KWQ_KEY_EVENT(key_revived);

/*
 * A dead key was dropped, with its failure count (arg): ret 0 by
 * kwq_purge() or kwq_purge_all(), 1 by the dead set's bound (max_dead:
 * the oldest death goes).
 */
KWQ_KEY_EVENT(key_purged);

TRACE_EVENT(queue_shutdown,
	    TP_PROTO(const struct kwq *q, bool drain, u64 dropped, u64 ready,
		     u64 processing),
	    TP_ARGS(q, drain, dropped, ready, processing),
	    TP_STRUCT__entry(__array(char, queue, KWQ_NAME_MAX + 1)
			     __field(u64, dropped)
			     __field(u64, ready)
			     __field(u64, processing)
			     __field(bool, drain)),
	    TP_fast_assign(memcpy(__entry->queue, q->name,
				  sizeof(__entry->queue));
			   __entry->dropped = dropped;
			   __entry->ready = ready;
			   __entry->processing = processing;
			   __entry->drain = drain;),
	    TP_printk("queue=%s drain=%d dropped=%llu ready=%llu processing=%llu",
		      __entry->queue, __entry->drain, __entry->dropped,
		      __entry->ready, __entry->processing)
);

#endif /* _KWQ_TRACE_H */

/* Out of tree: define_trace.h finds this file through -I$(src)/src. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE kwq_trace
#include <trace/define_trace.h>
