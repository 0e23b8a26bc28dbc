/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HOSTBENCH_CONST_H
#define _HOSTBENCH_CONST_H
#define _AC(X, Y)	(X##Y)
#define UL(x)		(_AC(x, UL))
#define ULL(x)		(_AC(x, ULL))
#endif
