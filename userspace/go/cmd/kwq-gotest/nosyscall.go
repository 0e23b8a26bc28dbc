// SPDX-License-Identifier: LGPL-2.1-or-later

package main

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
	"kwq.dev/kwq"
)

// denyIoctl makes every ioctl() of the calling OS thread, and of it
// alone, fail with EPERM: a seccomp filter without TSYNC. The thread
// keeps it until it exits, so the caller locks its goroutine to the
// thread and never unlocks it (the runtime ends the thread with it).
func denyIoctl() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	filter := []unix.SockFilter{
		// the system call's number: struct seccomp_data's first word
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: unix.SYS_IOCTL},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0,
		uintptr(unsafe.Pointer(&prog)))
	if e != 0 {
		return e
	}
	return nil
}

// readsWithoutIoctl asks q's Len and ShuttingDown on a thread whose
// ioctls fail, ShutDownQueue called meanwhile from another thread; it
// returns what they answered and what reached the ErrorHandler.
func readsWithoutIoctl(rings bool) (n int, before, after bool, errs []error, err error) {
	var mu sync.Mutex
	cfg := kwq.Config{ErrorHandler: func(e error) {
		mu.Lock()
		errs = append(errs, e)
		mu.Unlock()
	}}
	if !rings {
		os.Setenv("KWQ_GO_RINGS", "0")
		defer os.Unsetenv("KWQ_GO_RINGS")
	}
	q, err := newQueueCfg(cfg)
	if err != nil {
		return
	}
	defer finish(q)
	if q.Rings() != rings {
		err = errorf("rings %v, want %v", q.Rings(), rings)
		return
	}
	q.Add("a")
	q.Add("b")
	q.Add("c")
	// What this process published is in the queue: Len may flush it.
	if l := q.Len(); l != 3 {
		err = errorf("Len %d before the filter, want 3", l)
		return
	}
	asked, shut, done := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		runtime.LockOSThread() // for good: the thread keeps its filter
		if e := denyIoctl(); e != nil {
			close(asked)
			done <- e
			return
		}
		n = q.Len()
		before = q.ShuttingDown()
		close(asked)
		<-shut
		after = q.ShuttingDown()
		done <- nil
	}()
	<-asked
	serr := q.ShutDownQueue(false)
	close(shut)
	if err = <-done; err == nil && serr != nil {
		err = serr
	}
	mu.Lock()
	errs = append([]error(nil), errs...)
	mu.Unlock()
	return
}

// testReadsNoSyscall: with rings, Len and ShuttingDown read the status
// page and make no system call, so they answer on a thread whose
// ioctl()s fail. The same reads of a Queue without rings fail there
// (EPERM to the ErrorHandler): the filter does catch a read that calls
// the kernel.
func testReadsNoSyscall() error {
	n, before, after, errs, err := readsWithoutIoctl(true)
	if err != nil {
		return err
	}
	if n != 3 || before || !after || len(errs) != 0 {
		return errorf("rings, ioctls failing: Len %d, ShuttingDown %v then %v, errors %v; want 3, false then true, none",
			n, before, after, errs)
	}
	n, _, _, errs, err = readsWithoutIoctl(false)
	if err != nil {
		return err
	}
	if n == 3 || len(errs) == 0 || !errors.Is(errs[0], unix.EPERM) {
		return errorf("without rings, ioctls failing: Len %d, errors %v; want Len failing with EPERM (the filter missed the ioctl)",
			n, errs)
	}
	return nil
}
