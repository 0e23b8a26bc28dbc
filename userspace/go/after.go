// SPDX-License-Identifier: LGPL-2.1-or-later

package kwq

import (
	"errors"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// AddAfter gathering: client-go's AddAfter returns before its key is
// anywhere (it goes down a channel to the goroutine that keeps the
// waiting heap), and a controller calls it for many keys at once (a
// resync, a requeue of everything a failed dependency touched). kwq's
// AddAfter gathers such calls and sends them as one KWQ_IOC_ADD batch:
// one system call per afterGatherMax keys instead of one per key.
//
// What a caller sees:
//   - Only delays of at least afterGatherMin are gathered; shorter ones
//     (and d <= 0) are sent at once, as before.
//   - A gathered key is sent within afterGatherWindow, when
//     afterGatherMax keys are gathered, when a delay different from the
//     gathered one comes, or before any other call through the same
//     Queue (Add, Get, Remove, Stats, ShutDown, Close...): the calls of
//     one Queue reach the kernel in the order they were made. Its delay
//     counts from when it is sent, so it becomes ready at most
//     afterGatherWindow later than asked, never earlier.
//   - Flush sends what is gathered now; Close and ShutDown do too. A
//     process that exits without either loses what it gathered in its
//     last afterGatherWindow, as client-go loses every waiting key.
//   - The errors of a gathered key go to the ErrorHandler when it is
//     sent, naming the key (ESHUTDOWN silently, as AddAfter's always did).
//     TryAddAfter sends at once and returns its error.
const (
	afterGatherMin    = 10 * time.Millisecond
	afterGatherWindow = time.Millisecond
	afterGatherMax    = 64
)

// afterGather holds the keys AddAfter gathered, all with delay d; mu
// guards every field, and taking it also orders a gathered batch against
// Close. Queue.state has stGathered while keys is not empty, so that the
// other calls find it without the lock.
type afterGather struct {
	mu    sync.Mutex
	keys  []string
	d     time.Duration
	timer *time.Timer // sends at most afterGatherWindow after the first key
}

// gather adds key to the AddAfter batch; false if q is closed.
func (q *Queue) gather(key string, d time.Duration) bool {
	g := &q.after
	var errs []error
	g.mu.Lock()
	if q.state.Load()&stClosed != 0 {
		g.mu.Unlock()
		return false
	}
	if len(g.keys) > 0 && (g.d != d || len(g.keys) >= afterGatherMax) {
		errs = q.sendGatheredLocked()
	}
	if len(g.keys) == 0 {
		g.d = d
		if g.timer == nil {
			g.timer = time.AfterFunc(afterGatherWindow, q.Flush)
		} else {
			g.timer.Reset(afterGatherWindow)
		}
		q.state.Store(stGathered)
	}
	g.keys = append(g.keys, key)
	g.mu.Unlock()
	q.reportAll(errs)
	return true
}

// Flush sends the AddAfter calls this Queue has gathered; their errors
// go to the ErrorHandler.
func (q *Queue) Flush() {
	if q.state.Load()&stGathered == 0 {
		return
	}
	q.after.mu.Lock()
	errs := q.sendGatheredLocked()
	q.after.mu.Unlock()
	q.reportAll(errs)
}

// sendGatheredLocked sends the gathered keys, holding after.mu, and
// returns the errors to report once it is dropped: a key the kernel
// refuses is reported and the keys after it are still sent.
func (q *Queue) sendGatheredLocked() []error {
	g := &q.after
	var errs []error
	keys := g.keys
	for len(keys) > 0 {
		n, err := q.sendKeys("add-after", iocAdd, keys, 0, addAfter, g.d, nil)
		if err == nil {
			break
		}
		// A shut-down queue refuses the rest too: dropped silently.
		if errors.Is(err, unix.ESHUTDOWN) {
			break
		}
		errs = append(errs, err)
		// A destroyed queue refuses the rest too; else on after the key.
		if errors.Is(err, unix.EIDRM) || n >= len(keys) {
			break
		}
		keys = keys[n+1:]
	}
	clear(g.keys)
	g.keys = g.keys[:0]
	if g.timer != nil {
		g.timer.Stop()
	}
	q.state.Store(q.state.Load() &^ stGathered)
	return errs
}

func (q *Queue) reportAll(errs []error) {
	for _, err := range errs {
		q.onError(err)
	}
}
