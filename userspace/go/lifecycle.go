// SPDX-License-Identifier: LGPL-2.1-or-later

package kwq

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The lifecycle of a controller's queue. A kwq queue lives in the kernel
// and outlives the processes that use it: a controller that restarts
// (cleanly or after a crash) must find its keys again. So:
//
//   - New opens the named queue if it exists, creates it otherwise.
//   - ShutDown and ShutDownWithDrain end this Queue's use of the queue,
//     as client-go's end the use of an in-process one: its Gets return
//     shutdown (at once, also those waiting), its adds are dropped
//     (refused with ESHUTDOWN by the Try methods), its Dones still
//     finish the keys it holds, and ShutDownWithDrain waits until they
//     are finished. The queue, its keys and the other processes' fds
//     are untouched: the next process goes on from there.
//   - ShutDownQueue shuts the queue itself down, for every process;
//     Destroy removes it with its keys.
//
// An ephemeral queue (destroyed with its last fd, client-go's lifetime)
// needs the kernel's help and is not available yet.

// The bits of Queue.shut.
const (
	shutLocal = 1 << iota // ShutDown or ShutDownWithDrain was called
	shutDrain             // a ShutDownWithDrain waits for the keys held
)

// lifecycle is a Queue's shutdown state besides Queue.shut: mu guards
// shut's writes, wake's closing and err; cond is ShutDownWithDrain's.
type lifecycle struct {
	mu   sync.Mutex
	cond sync.Cond
	err  error // the error that ended Get, Err
}

// newQueue is the Queue of the fd attached to queue name.
func newQueue(fd int, name string, errorHandler func(error)) (*Queue, error) {
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(fd)
		return nil, &Error{Op: "open", Queue: name, Err: err}
	}
	q := &Queue{fd: fd, wake: wake, name: name, onError: handler(errorHandler)}
	q.life.cond.L = &q.life.mu
	return q, nil
}

// fits checks the queue New opened against cfg (see New), and closes q
// if it does not fit.
func (q *Queue) fits(cfg Config) (*Queue, error) {
	s, err := q.Stats()
	switch {
	case err != nil:
	case s.ShuttingDown:
		err = q.err("open", "", fmt.Errorf("%w: the queue was shut down (ShutDownQueue); Destroy it to start over",
			unix.ESHUTDOWN))
	case cfg.MaxRetries == 0 && (s.Dead > 0 || s.DeadTotal > 0):
		err = q.err("open", "", fmt.Errorf("%w: it has a dead set, Config.MaxRetries is 0", ErrConflict))
	}
	if err != nil {
		q.Close()
		return nil, err
	}
	return q, nil
}

// closeWake closes wake, for Close.
func (q *Queue) closeWake() {
	q.life.mu.Lock()
	if q.wake >= 0 {
		unix.Close(q.wake)
		q.wake = -1
	}
	q.life.mu.Unlock()
}

// finished accounts for n keys this Queue finished, and one more if err
// says its processing deadline took it back (ESTALE: not held any more).
func (q *Queue) finished(n int, err error) {
	if err != nil && errors.Is(err, unix.ESTALE) {
		n++
	}
	if n == 0 {
		return
	}
	if q.held.Add(-int64(n)) <= 0 && q.shut.Load()&shutDrain != 0 {
		q.life.mu.Lock()
		q.life.cond.Broadcast()
		q.life.mu.Unlock()
	}
}

// failed records err, which ended a Get, for Err and the ErrorHandler.
func (q *Queue) failed(err error) {
	q.life.mu.Lock()
	if q.life.err == nil {
		q.life.err = err
	}
	q.life.mu.Unlock()
	q.onError(err)
}

// Err is the error that made a Get return shutdown when this Queue was
// not shut down (the queue destroyed: EIDRM; the Queue closed:
// ErrClosed...), nil if there was none: a worker that Get stopped tells
// a shutdown from a lost queue.
func (q *Queue) Err() error {
	q.life.mu.Lock()
	defer q.life.mu.Unlock()
	return q.life.err
}

// NotHeldDones counts the Dones of keys this Queue did not hold (not
// processing, or held by another fd): client-go's no-ops, not reported.
func (q *Queue) NotHeldDones() uint64 { return q.notHeld.Load() }

// ShutDown ends this Queue's use of the queue (client-go ShutDown): its
// Gets return shutdown, those waiting too, its adds are dropped; Done
// still finishes the keys it holds. The queue and its keys stay for the
// other processes and the next one (ShutDownQueue shuts the queue down).
// The AddAfter calls gathered before are sent first.
func (q *Queue) ShutDown() { q.shutDown(false) }

// ShutDownWithDrain is ShutDown, then waits until the keys this Queue's
// Gets took are finished (client-go ShutDownWithDrain: it waits for the
// keys processing, not for those queued, which stay in the queue). A
// ShutDown meanwhile ends the wait, as in client-go.
func (q *Queue) ShutDownWithDrain() { q.shutDown(true) }

func (q *Queue) shutDown(drain bool) {
	q.Flush()
	l := &q.life
	l.mu.Lock()
	first := q.shut.Load() == 0
	bits := uint32(shutLocal)
	if drain {
		bits |= shutDrain
	}
	q.shut.Store(bits)
	// After the store: a Get the eventfd wakes finds q.shut set.
	if first && q.wake >= 0 {
		one := [8]byte{1}
		unix.Write(q.wake, one[:])
	}
	l.cond.Broadcast()
	for drain && q.shut.Load()&shutDrain != 0 && q.held.Load() > 0 {
		l.cond.Wait()
	}
	l.mu.Unlock()
}

// ShuttingDown reports whether this Queue or the queue is shut down.
func (q *Queue) ShuttingDown() bool {
	if q.shut.Load() != 0 {
		return true
	}
	s, err := q.Stats()
	q.report(err)
	return s.ShuttingDown
}

// ShutDownQueue shuts the queue itself down, for every fd of every
// process, and for good: adds fail with ESHUTDOWN, Gets return what is
// ready, then ESHUTDOWN; New refuses the queue until it is destroyed.
// With drain, it waits until no key is ready or processing in the whole
// queue (kwq's drain, stronger than ShutDownWithDrain's).
func (q *Queue) ShutDownQueue(drain bool) error {
	if err := q.enter("shutdown", ""); err != nil {
		return err
	}
	a := &shutdownArgs{}
	if drain {
		a.Flags = shutdownDrain
	}
	if err := ioctl(q.fd, iocShutdown, unsafe.Pointer(a)); err != nil {
		return q.err("shutdown", "", err)
	}
	return nil
}
