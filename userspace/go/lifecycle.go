// SPDX-License-Identifier: LGPL-2.1-or-later

package kwq

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
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
// shut's writes and err; cond is ShutDownWithDrain's.
type lifecycle struct {
	mu   sync.Mutex
	cond sync.Cond
	err  error // the error that ended Get, Err
}

// newQueue is the Queue of the fd attached to queue name.
func newQueue(fd int, name string, errorHandler func(error)) (*Queue, error) {
	q := &Queue{fd: fd, name: name, onError: handler(errorHandler),
		shutCh: make(chan struct{}), leases: map[string]taken{}}
	q.life.cond.L = &q.life.mu
	q.w.cond.L = &q.w.mu
	// KWQ_GO_RINGS=0: ioctls only, as on a kernel without rings (tests).
	if os.Getenv("KWQ_GO_RINGS") != "0" {
		q.ring = setupRing(q)
	}
	// KWQ_GO_LEASES=1: single-key gets into the ring's lease slots
	// (go.rst, "Measured": slower than the ioctl for Go's worker loop).
	q.leasing = q.ring != nil && os.Getenv("KWQ_GO_LEASES") == "1"
	return q, nil
}

// fits checks the queue New opened against cfg (see New), and closes q
// if it does not fit.
func (q *Queue) fits(cfg Config, want *createArgs) (*Queue, error) {
	s, err := q.Stats()
	var got createArgs
	switch {
	case err != nil:
	case s.ShuttingDown:
		err = q.err("open", "", fmt.Errorf("%w: the queue was shut down (ShutDownQueue); Destroy it to start over",
			unix.ESHUTDOWN))
	default:
		switch e := ioctl(q.fd, iocInfo, unsafe.Pointer(&got)); e {
		case nil:
			if d := optionsDiffer(want, &got); d != "" {
				err = q.err("open", "", fmt.Errorf("%w: it was created with other options: %s", ErrConflict, d))
			}
		case unix.ENOTTY:
			// A kernel without KWQ_IOC_INFO: what STATS tells.
			if cfg.MaxRetries == 0 && (s.Dead > 0 || s.DeadTotal > 0) {
				err = q.err("open", "", fmt.Errorf("%w: it has a dead set, Config.MaxRetries is 0", ErrConflict))
			}
		case unix.EOPNOTSUPP:
			// Published by a kernel module: its options are its own.
		default:
			err = q.err("open", "", e)
		}
	}
	if err != nil {
		q.Close()
		return nil, err
	}
	return q, nil
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
	// After the store: a Get the channel wakes finds q.shut set.
	if first {
		close(q.shutCh)
	}
	l.cond.Broadcast()
	l.mu.Unlock()
	// Keys taken that no Get will hand out now go back to the queue.
	q.giveBack()
	l.mu.Lock()
	for drain && q.shut.Load()&shutDrain != 0 && q.held.Load() > 0 {
		l.cond.Wait()
	}
	l.mu.Unlock()
}

// giveBack returns the keys taken and not handed out (q.w.held) to the
// queue: each is added again and finished, so it is ready as before.
func (q *Queue) giveBack() {
	ts := q.w.pop(nil, BatchMax)
	for len(ts) > 0 {
		for _, t := range ts {
			if t.ring {
				q.ring.record(sqeAdd, 0, t.key, 0, 0, 0, sqMeta{op: "add", key: t.key})
				q.ring.record(sqeDoneLease, 0, "", 0, t.slot, t.gen, sqMeta{op: "done", key: t.key, quiet: true})
				continue
			}
			one := []string{t.key}
			q.sendKeys("add", iocAdd, one, 0, 0, 0, nil)
			q.sendKeys("done", iocDone, one, 0, 0, 0, nil)
		}
		ts = q.w.pop(nil, BatchMax)
	}
	q.flushRing()
}

// ShuttingDown reports whether this Queue or the queue is shut down.
func (q *Queue) ShuttingDown() bool {
	if q.shut.Load() != 0 {
		return true
	}
	if r := q.ring; r != nil && q.state.Load()&stClosed == 0 {
		f := atomic.LoadUint32(r.status)
		if f&statusDestroyed != 0 {
			q.report(q.err("stats", "", unix.EIDRM))
			return false
		}
		return f&statusShutdown != 0
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

// normalized is a's options as the kernel applies them, so that two ways
// of asking for the same queue compare equal: mode 0 is 0600, no rate
// limiter is DefaultControllerRateLimiter, MaxDead 0 is the default bound
// of a dead set (and means nothing without one).
func normalized(a *createArgs) createArgs {
	n := *a
	n.Name = [nameLen]byte{}
	if n.Mode == 0 {
		n.Mode = 0o600
	}
	if n.NrLimits == 0 {
		d := DefaultControllerRateLimiter()
		n.NrLimits = uint32(len(d.limits))
		copy(n.Limits[:], d.limits)
		n.MaxWaitNs = uint64(d.maxWait)
	}
	if n.MaxRetries == 0 {
		n.MaxDead = 0
	} else if n.MaxDead == 0 {
		n.MaxDead = defaultMaxDead
	}
	return n
}

// optionsDiffer names the options in which the queue found (got, from
// KWQ_IOC_INFO) differs from the one New would have made (want); "" if
// none.
func optionsDiffer(want, got *createArgs) string {
	w, g := normalized(want), normalized(got)
	var d []string
	add := func(differ bool, format string, a ...any) {
		if differ {
			d = append(d, fmt.Sprintf(format, a...))
		}
	}
	add(w.Flags != g.Flags, "flags %#x, not %#x (Config.Ephemeral)", g.Flags, w.Flags)
	add(w.Mode != g.Mode, "Mode %#o, not %#o", g.Mode, w.Mode)
	add(w.NrLimits != g.NrLimits || w.Limits != g.Limits || w.MaxWaitNs != g.MaxWaitNs,
		"another rate limiter")
	add(w.MaxItems != g.MaxItems, "MaxItems %d, not %d", g.MaxItems, w.MaxItems)
	add(w.ProcessingTimeoutNs != g.ProcessingTimeoutNs, "ProcessingTimeout %v, not %v",
		time.Duration(g.ProcessingTimeoutNs), time.Duration(w.ProcessingTimeoutNs))
	add(w.MaxRetries != g.MaxRetries, "MaxRetries %d, not %d", g.MaxRetries, w.MaxRetries)
	add(w.MaxDead != g.MaxDead, "MaxDead %d, not %d", g.MaxDead, w.MaxDead)
	return strings.Join(d, ", ")
}
