/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HOSTBENCH_GFP_H
#define _HOSTBENCH_GFP_H
#include <linux/kernel.h>
#define __GFP_DMA		0x01u
#define __GFP_HIGHMEM		0x02u
#define __GFP_RECLAIMABLE	0x10u
#define __GFP_HIGH		0x20u
#define __GFP_IO		0x40u
#define __GFP_FS		0x80u
#define __GFP_ZERO		0x100u
#define __GFP_DIRECT_RECLAIM	0x400u
#define __GFP_KSWAPD_RECLAIM	0x800u
#define __GFP_NOWARN		0x2000u
#define __GFP_RETRY_MAYFAIL	0x4000u
#define __GFP_NOFAIL		0x8000u
#define __GFP_NORETRY		0x10000u
#define __GFP_ACCOUNT		0x400000u
#define __GFP_RECLAIM		(__GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM)
#define GFP_ATOMIC		(__GFP_HIGH | __GFP_KSWAPD_RECLAIM)
#define GFP_KERNEL		(__GFP_RECLAIM | __GFP_IO | __GFP_FS)
#define GFP_KERNEL_ACCOUNT	(GFP_KERNEL | __GFP_ACCOUNT)
#define GFP_NOWAIT		(__GFP_KSWAPD_RECLAIM | __GFP_NOWARN)
#define GFP_NOIO		(__GFP_RECLAIM)
#define GFP_NOFS		(__GFP_RECLAIM | __GFP_IO)
#define GFP_USER		(__GFP_RECLAIM | __GFP_IO | __GFP_FS)

static inline bool gfpflags_allow_blocking(const gfp_t gfp_flags)
{
	return !!(gfp_flags & __GFP_DIRECT_RECLAIM);
}
#endif
