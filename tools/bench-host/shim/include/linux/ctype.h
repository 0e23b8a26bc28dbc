/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HOSTBENCH_CTYPE_H
#define _HOSTBENCH_CTYPE_H
#include <ctype.h>
#endif
