/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Declarations shared between kwq's own source files; not an API.
 */
#ifndef _KWQ_INTERNAL_H
#define _KWQ_INTERNAL_H

#define KWQ_VERSION "0.1.0"

int kwq_dev_init(void);
void kwq_dev_exit(void);

#endif /* _KWQ_INTERNAL_H */
