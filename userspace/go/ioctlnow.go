// SPDX-License-Identifier: LGPL-2.1-or-later

//go:build !kwqcount

package kwq

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// ioctlNow runs a call that never waits (ADD, DONE, a GET that may not
// wait...) without the scheduler's system-call bookkeeping, which costs
// more than such a call's own work.
func ioctlNow(fd int, req uintptr, arg unsafe.Pointer) error {
	for {
		_, _, e := unix.RawSyscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}
