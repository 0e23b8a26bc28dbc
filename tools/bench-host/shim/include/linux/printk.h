/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HOSTBENCH_PRINTK_H
#define _HOSTBENCH_PRINTK_H
#include <linux/compiler_types.h>

int hostbench_printk(const char *fmt, ...) __printf(1, 2);

#ifndef pr_fmt
#define pr_fmt(fmt) fmt
#endif
#define printk(fmt, ...)	hostbench_printk(fmt, ##__VA_ARGS__)
#define pr_emerg(fmt, ...)	hostbench_printk(pr_fmt(fmt), ##__VA_ARGS__)
#define pr_alert(fmt, ...)	hostbench_printk(pr_fmt(fmt), ##__VA_ARGS__)
#define pr_crit(fmt, ...)	hostbench_printk(pr_fmt(fmt), ##__VA_ARGS__)
#define pr_err(fmt, ...)	hostbench_printk(pr_fmt(fmt), ##__VA_ARGS__)
#define pr_warn(fmt, ...)	hostbench_printk(pr_fmt(fmt), ##__VA_ARGS__)
#define pr_notice(fmt, ...)	hostbench_printk(pr_fmt(fmt), ##__VA_ARGS__)
#define pr_info(fmt, ...)	hostbench_printk(pr_fmt(fmt), ##__VA_ARGS__)
#define pr_debug(fmt, ...)	do { } while (0)
#define pr_err_once		pr_err
#define pr_warn_once		pr_warn
#define pr_info_once		pr_info
#define pr_err_ratelimited	pr_err
#define pr_warn_ratelimited	pr_warn
#define KERN_ERR	""
#define KERN_WARNING	""
#define KERN_INFO	""
#define KERN_DEBUG	""
#endif
