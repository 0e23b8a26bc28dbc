/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: tracepoints are compiled out, nothing to create. */
