// SPDX-License-Identifier: LGPL-2.1-or-later

// Package idlework measures what 50 idle Go workers cost a process in OS
// threads: go_test's case and kwq-gobench -idle (go.rst "Rings and
// waiting").
package idlework

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"kwq.dev/kwq"
)

// Workers and Keys: the worker goroutines, and the keys they process
// before they wait.
const (
	Workers = 50
	Keys    = 200
)

// Run starts Workers goroutines (Get, Done) on q, adds Keys keys, waits
// until they are processed (at most 60 s), lets the workers wait on the
// empty queue for a second and counts the process's OS threads
// (/proc/self/task); then shuts q down and waits for the workers. It
// returns the threads and how many keys were processed.
func Run(q *kwq.Queue) (threads int, processed int64, err error) {
	var wg sync.WaitGroup
	var n atomic.Int64
	for i := 0; i < Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k, shut := q.Get()
				if shut {
					return
				}
				n.Add(1)
				q.Done(k)
			}
		}()
	}
	for i := 0; i < Keys; i++ {
		q.Add(fmt.Sprintf("idle%03d", i))
	}
	for end := time.Now().Add(60 * time.Second); n.Load() < Keys && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	// Idle now: every worker waits in Get (with a thread blocked in the
	// kernel for each before the netpoller, which took this long to show).
	time.Sleep(time.Second)
	ents, err := os.ReadDir("/proc/self/task")
	q.ShutDown()
	wg.Wait()
	return len(ents), n.Load(), err
}
