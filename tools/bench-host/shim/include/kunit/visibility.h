/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: built as without CONFIG_KUNIT. */
#ifndef _HOSTBENCH_KUNIT_VISIBILITY_H
#define _HOSTBENCH_KUNIT_VISIBILITY_H
#define VISIBLE_IF_KUNIT static
#define EXPORT_SYMBOL_IF_KUNIT(symbol)
#endif
