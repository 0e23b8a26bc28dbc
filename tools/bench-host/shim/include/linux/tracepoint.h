/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host benchmark shim: tracepoints compiled out. Every event becomes an
 * empty static inline trace_<event>() (and trace_<event>_enabled() that
 * says no), which is what a disabled tracepoint costs: a static branch
 * that is not taken, with its arguments not evaluated.
 */
#ifndef _HOSTBENCH_TRACEPOINT_H
#define _HOSTBENCH_TRACEPOINT_H
#include <linux/kernel.h>

#define PARAMS(args...)			args
#define TP_PROTO(args...)		args
#define TP_ARGS(args...)		args
#define TP_CONDITION(args...)		args
#define TP_STRUCT__entry(args...)	args
#define TP_fast_assign(args...)		args
#define TP_printk(fmt, args...)		fmt, args

#define DECLARE_EVENT_CLASS(name, proto, args, tstruct, assign, print)
#define DEFINE_EVENT(template, name, proto, args)			\
	static inline void trace_##name(proto) { }			\
	static inline bool trace_##name##_enabled(void) { return false; }
#define DEFINE_EVENT_PRINT(template, name, proto, args, print)		\
	DEFINE_EVENT(template, name, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT_CONDITION(template, name, proto, args, cond)	\
	DEFINE_EVENT(template, name, PARAMS(proto), PARAMS(args))
#define TRACE_EVENT(name, proto, args, tstruct, assign, print)		\
	DEFINE_EVENT(name, name, PARAMS(proto), PARAMS(args))
#define TRACE_EVENT_CONDITION(name, proto, args, cond, tstruct, assign, print) \
	DEFINE_EVENT(name, name, PARAMS(proto), PARAMS(args))
#define DECLARE_TRACE(name, proto, args)				\
	DEFINE_EVENT(name, name, PARAMS(proto), PARAMS(args))
#endif
