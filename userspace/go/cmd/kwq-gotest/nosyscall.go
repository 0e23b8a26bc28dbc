// SPDX-License-Identifier: LGPL-2.1-or-later

package main

import (
	"errors"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
	"kwq.dev/kwq"
)

// kwqFds: this process's fds open on /dev/kwq.
func kwqFds() map[int]bool {
	fds := map[int]bool{}
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if t, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && t == kwq.DefaultDevice {
			fds[fd] = true
		}
	}
	return fds
}

// readsWithoutIoctl asks q's Len and ShuttingDown while q's fd number
// names /dev/null (so that an ioctl on it fails with ENOTTY), the queue
// shut down meanwhile through another Queue; it returns what they
// answered and what reached q's ErrorHandler.
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
	had := kwqFds()
	q, err := newQueueCfg(cfg)
	if err != nil {
		return
	}
	defer finish(q)
	fd := -1
	for f := range kwqFds() {
		if !had[f] {
			if fd >= 0 {
				err = errorf("New left two new fds on %s", kwq.DefaultDevice)
				return
			}
			fd = f
		}
	}
	if fd < 0 || q.Rings() != rings {
		err = errorf("the Queue's fd %d, rings %v, want one fd and rings %v", fd, q.Rings(), rings)
		return
	}
	other, err := kwq.Open(q.Name(), nil)
	if err != nil {
		return
	}
	defer other.Close()
	q.Add("a")
	q.Add("b")
	q.Add("c")
	// What this process published is in the queue: Len may flush it.
	if l := q.Len(); l != 3 {
		err = errorf("Len %d before the swap, want 3", l)
		return
	}
	saved, err := unix.Dup(fd)
	if err != nil {
		return
	}
	null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err == nil {
		err = unix.Dup2(null, fd)
		unix.Close(null)
	}
	if err != nil {
		unix.Close(saved)
		return
	}
	n = q.Len()
	before = q.ShuttingDown()
	err = other.ShutDownQueue(false)
	after = q.ShuttingDown()
	if e := unix.Dup2(saved, fd); e != nil && err == nil {
		err = e
	}
	unix.Close(saved)
	mu.Lock()
	errs = append([]error(nil), errs...)
	mu.Unlock()
	return
}

// testReadsNoSyscall: with rings, Len and ShuttingDown read the status
// page and make no system call on the Queue's fd, so they answer while
// that fd is /dev/null. The same reads of a Queue without rings fail
// then (ENOTTY to the ErrorHandler): the swap does catch a read that
// calls the kernel.
func testReadsNoSyscall() error {
	n, before, after, errs, err := readsWithoutIoctl(true)
	if err != nil {
		return err
	}
	if n != 3 || before || !after || len(errs) != 0 {
		return errorf("rings, the fd swapped for /dev/null: Len %d, ShuttingDown %v then %v, errors %v; want 3, false then true, none",
			n, before, after, errs)
	}
	n, _, _, errs, err = readsWithoutIoctl(false)
	if err != nil {
		return err
	}
	if n == 3 || len(errs) == 0 || !errors.Is(errs[0], unix.ENOTTY) {
		return errorf("without rings, the fd swapped for /dev/null: Len %d, errors %v; want Len failing with ENOTTY (the swap missed the ioctl)",
			n, errs)
	}
	return nil
}
