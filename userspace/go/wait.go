// SPDX-License-Identifier: LGPL-2.1-or-later

package kwq

import (
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Waiting for keys through Go's netpoller (go.rst "Waiting"). A Get that
// finds nothing ready parks its goroutine on a channel, not a thread in
// the kernel: one goroutine per Queue, the poller, waits for the fd to be
// readable (the kernel's poll() on /dev/kwq) in the runtime's netpoller
// (the fd is made O_NONBLOCK and handed to os.NewFile at the first wait;
// the kernel's gets then never sleep), takes as many keys as goroutines
// wait, without waiting, and wakes them. 50 idle workers are 50 parked
// goroutines and one registered fd: no OS thread each.
//
// The poller takes keys inside RawConn.Read's callback: the runtime
// arms the fd's readiness before calling it, so a key made ready after
// the callback's get found nothing wakes it (no lost wake-up), and that
// get counts this fd among the ring's waiters (the kernel "arms" it, so
// producers ring their doorbells).

// taken is a key taken for this Queue and not handed to a caller yet: a
// ring lease (slot, generation) or a key taken by ioctl.
type taken struct {
	key  string
	slot uint32
	gen  uint64
	ring bool
}

type waitState struct {
	mu    sync.Mutex
	cond  sync.Cond // the poller waits for a goroutine that waits
	held  []taken   // FIFO from hd: taken, not handed out
	hd    int       // held[:hd] were handed out (the array is kept)
	nwait int       // goroutines waiting for a key
	ch    chan struct{}
	err   error // what ended the waits (the queue shut down, destroyed)
	file  *os.File
	rc    syscall.RawConn
	init  bool
	done  bool          // Close: the poller ends
	gone  chan struct{} // closed when the poller ended
}

// pushKeys queues keys taken by ioctl and wakes the waiting goroutines.
func (w *waitState) pushKeys(keys []string) {
	w.pushKeysOne(keys, nil)
}

// pushKeysOne is pushKeys, then, if one is not nil, the oldest key
// listed (FIFO: one taken earlier goes first) popped into *one under the
// same lock: a single-key get's cycle without a second trip through the
// list. The waiting goroutines are woken only if keys remain.
func (w *waitState) pushKeysOne(keys []string, one *taken) {
	if len(keys) == 0 {
		return
	}
	w.mu.Lock()
	if one != nil && w.nheld() == 0 {
		// Nothing older listed: the first key is the caller's.
		*one = taken{key: keys[0]}
		keys, one = keys[1:], nil
	}
	for _, k := range keys {
		w.pushLocked(taken{key: k})
	}
	if one != nil {
		var buf [1]taken
		if t := w.popLocked(buf[:0], 1); t != nil {
			*one = t[0]
		}
	}
	if w.nheld() > 0 {
		w.wakeLocked()
	}
	w.mu.Unlock()
}

// pushLocked queues one key taken (the waiters are woken by the caller).
func (w *waitState) pushLocked(t taken) {
	if w.hd > 0 && len(w.held) == cap(w.held) {
		n := copy(w.held, w.held[w.hd:])
		clear(w.held[n:])
		w.held, w.hd = w.held[:n], 0
	}
	w.held = append(w.held, t)
}

func (w *waitState) wakeLocked() {
	if w.ch != nil {
		close(w.ch)
		w.ch = nil
	}
}

// nheld: keys taken and not handed out.
func (w *waitState) nheld() int {
	return len(w.held) - w.hd
}

// popLocked hands out up to max keys taken, appended to dst (nil when
// there are none). The array of held is kept for the next keys.
func (w *waitState) popLocked(dst []taken, max int) []taken {
	n := min(max, w.nheld())
	if n == 0 {
		return nil
	}
	dst = append(dst, w.held[w.hd:w.hd+n]...)
	clear(w.held[w.hd : w.hd+n]) // no key kept alive by the array
	w.hd += n
	if w.hd == len(w.held) {
		w.held, w.hd = w.held[:0], 0
	}
	return dst
}

func (w *waitState) pop(dst []taken, max int) []taken {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.popLocked(dst, max)
}

// fetch takes up to max ready keys without waiting into q.w.held: one
// through a ring lease slot (with this Queue's published records applied
// first), or by ioctl: a batch, without a ring or without a free slot.
// EAGAIN when none was ready.
func (q *Queue) fetch(max int) error {
	// A batch is one GET ioctl: cheaper than a get into lease slots of as
	// many keys (go.rst, "Measured"); a single key takes a lease slot.
	if r := q.ring; r != nil && max == 1 && q.leasing {
		n, err := r.submit(enterSubmit|enterGet, 1)
		if r.nerr.Load() != 0 {
			r.report()
		}
		if n > 0 {
			return nil
		}
		if err != unix.ENOBUFS {
			return err
		}
	}
	max = min(max, BatchMax)
	rb := q.getBufQ()
	defer q.putBufQ(rb)
	want := max * recSizeMax
	if cap(rb.b) < want {
		rb.b = make([]byte, want)
	}
	rb.b = rb.b[:want]
	a := &rb.get.Get
	*a = getArgs{Recs: uint64(uintptr(unsafe.Pointer(&rb.b[0]))), RecsLen: uint32(want),
		Max: uint32(max), ProcessingTimeoutNs: q.lease.Load()}
	if err := ioctlNow(q.fd, iocGet, unsafe.Pointer(a)); err != nil {
		return err
	}
	var one [1]string
	keys, err := parseRecs(rb.b[:a.Used], int(a.Nr), one[:0])
	q.w.pushKeys(keys)
	return err
}

// takeKeys takes up to max keys, appended to dst, waiting at most
// timeout (Forever: no limit; 0 none) for the first: EAGAIN, ETIMEDOUT,
// ESHUTDOWN once this Queue is shut down, or the kernel's error.
func (q *Queue) takeKeys(dst []taken, max int, timeout time.Duration) ([]taken, error) {
	w := &q.w
	if t := w.pop(dst, max); t != nil {
		return t, nil
	}
	err := q.fetch(max)
	for try := 0; ; try++ {
		if t := w.pop(dst, max); t != nil {
			return t, nil
		}
		if err != nil && err != unix.EAGAIN && err != unix.EINTR {
			return nil, err
		}
		if timeout == 0 {
			return nil, unix.EAGAIN
		}
		if try >= spinTries {
			break
		}
		runtime.Gosched()
		err = q.fetch(max)
	}
	return q.waitKeys(dst, max, timeout)
}

// waitKeys parks the goroutine until the poller took keys for it.
func (q *Queue) waitKeys(dst []taken, max int, timeout time.Duration) ([]taken, error) {
	w := &q.w
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	w.mu.Lock()
	if err := q.startPoller(); err != nil {
		w.mu.Unlock()
		return nil, err
	}
	w.nwait++
	w.cond.Signal()
	defer func() {
		w.nwait--
		if w.nwait == 0 {
			w.err = nil
		}
		w.mu.Unlock()
	}()
	for {
		if t := w.popLocked(dst, max); t != nil {
			return t, nil
		}
		if w.err != nil {
			return nil, w.err
		}
		if q.shut.Load() != 0 {
			return nil, unix.ESHUTDOWN
		}
		if w.ch == nil {
			w.ch = make(chan struct{})
		}
		ch := w.ch
		w.mu.Unlock()
		select {
		case <-ch:
			w.mu.Lock()
		case <-q.shutCh:
			w.mu.Lock()
			return nil, unix.ESHUTDOWN
		case <-timer:
			w.mu.Lock()
			if t := w.popLocked(dst, max); t != nil {
				return t, nil
			}
			return nil, unix.ETIMEDOUT
		}
	}
}

// startPoller registers the fd with the netpoller and starts the poller,
// once; under w.mu.
func (q *Queue) startPoller() error {
	w := &q.w
	if w.init {
		if w.done {
			return ErrClosed
		}
		return nil
	}
	if err := unix.SetNonblock(q.fd, true); err != nil {
		return err
	}
	f := os.NewFile(uintptr(q.fd), "kwq:"+q.name)
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	w.file, w.rc, w.init = f, rc, true
	w.gone = make(chan struct{})
	go q.poll()
	return nil
}

// poll is the poller: while goroutines wait for more keys than were
// taken, it takes keys, or waits in the netpoller until the fd is
// readable (a key ready, the queue shut down or destroyed).
func (q *Queue) poll() {
	w := &q.w
	defer close(w.gone)
	for {
		w.mu.Lock()
		for !w.done && (w.nwait <= w.nheld() || w.err != nil) {
			w.cond.Wait()
		}
		if w.done {
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		err := w.rc.Read(func(uintptr) bool {
			w.mu.Lock()
			want := w.nwait - w.nheld()
			w.mu.Unlock()
			if want <= 0 {
				return true
			}
			err := q.fetch(want)
			if err == unix.EAGAIN || err == unix.EINTR {
				return false
			}
			if err != nil {
				w.mu.Lock()
				w.err = err
				w.wakeLocked()
				w.mu.Unlock()
			}
			return true
		})
		if err != nil {
			w.mu.Lock()
			w.done = true
			w.err = ErrClosed
			w.wakeLocked()
			w.mu.Unlock()
			return
		}
	}
}

// closeFd closes q's fd: through the os.File once the netpoller has it.
func (q *Queue) closeFd() error {
	w := &q.w
	w.mu.Lock()
	f := w.file
	if w.init {
		w.done = true
		w.cond.Broadcast()
	}
	w.wakeLocked()
	w.mu.Unlock()
	if f == nil {
		return unix.Close(q.fd)
	}
	err := f.Close()
	// The poller may be in a call that reads the ring: it ends first.
	<-w.gone
	return err
}
