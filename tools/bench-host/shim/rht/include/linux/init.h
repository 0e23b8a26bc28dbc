/* SPDX-License-Identifier: GPL-2.0 */
/* Table benchmark shim: __init and friends are in compiler_types.h. */
#include <linux/compiler_types.h>
