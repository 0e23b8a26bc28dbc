/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal KTAP v1 producer for kwq's userspace test programs, so the VM
 * harness parses them exactly like KUnit suites.
 *
 *	ktap_suite("kwq_dev", 2);
 *	ktap_check(cond, "name", "diagnostic %d", x);	(one case)
 *	return ktap_end();				(exit status)
 */
#ifndef KWQ_KTAP_H
#define KWQ_KTAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *ktap_name;
static int ktap_planned, ktap_count, ktap_failed;

static inline void ktap_suite(const char *name, int planned)
{
	ktap_name = name;
	ktap_planned = planned;
	printf("KTAP version 1\n1..1\n    KTAP version 1\n");
	printf("    # Subtest: %s\n    1..%d\n", name, planned);
	fflush(stdout);
}

/* Record one case; on failure print the formatted diagnostic first. */
static inline int ktap_check(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	ktap_count++;
	if (!ok) {
		ktap_failed++;
		printf("    # %s: ", name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
	printf("    %s %d %s\n", ok ? "ok" : "not ok", ktap_count, name);
	fflush(stdout);
	return ok;
}

static inline void ktap_skip(const char *name, const char *why)
{
	ktap_count++;
	printf("    ok %d %s # SKIP %s\n", ktap_count, name, why);
	fflush(stdout);
}

static inline int ktap_end(void)
{
	if (ktap_count != ktap_planned) {
		printf("    # planned %d cases, ran %d\n", ktap_planned, ktap_count);
		ktap_failed++;
	}
	printf("%s 1 %s\n", ktap_failed ? "not ok" : "ok", ktap_name);
	fflush(stdout);
	return ktap_failed ? 1 : 0;
}

#endif /* KWQ_KTAP_H */
