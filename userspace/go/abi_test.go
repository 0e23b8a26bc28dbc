// SPDX-License-Identifier: LGPL-2.1-or-later

package kwq

import (
	"testing"
	"unsafe"
)

// The values gcc computes from include/uapi/linux/kwq.h on x86_64.
func TestABI(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"KWQ_IOC_CREATE", iocCreate, 0x40b8b700},
		{"KWQ_IOC_OPEN", iocOpen, 0x4048b701},
		{"KWQ_IOC_DESTROY", iocDestroy, 0x4048b702},
		{"KWQ_IOC_ADD", iocAdd, 0xc030b704},
		{"KWQ_IOC_GET", iocGet, 0xc028b705},
		{"KWQ_IOC_DONE", iocDone, 0xc030b706},
		{"KWQ_IOC_FORGET", iocForget, 0xc030b707},
		{"KWQ_IOC_REMOVE", iocRemove, 0xc030b708},
		{"KWQ_IOC_NUM_REQUEUES", iocNumRequeues, 0xc010b709},
		{"KWQ_IOC_LEN", iocLen, 0x8008b70a},
		{"KWQ_IOC_SHUTDOWN", iocShutdown, 0x4008b70b},
		{"KWQ_IOC_STATS", iocStats, 0x81b8b70c},
		{"KWQ_IOC_DONE_GET", iocDoneGet, 0xc040b70d},
		{"sizeof(struct kwq_limit)", unsafe.Sizeof(kwqLimit{}), 24},
		{"KWQ_REC_SIZE_MAX", recSizeMax, 264},
	} {
		if c.got != c.want {
			t.Errorf("%s: %#x, the C header says %#x", c.name, c.got, c.want)
		}
	}
}
