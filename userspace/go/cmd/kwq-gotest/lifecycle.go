// SPDX-License-Identifier: LGPL-2.1-or-later

// The lifecycle cases: New opens or creates, ShutDown is one Queue's,
// client-go's error behaviour (Documentation/go.rst, "Lifecycle").
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"kwq.dev/kwq"
)

// handlerLog collects what an ErrorHandler receives.
type handlerLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *handlerLog) handle(err error) {
	l.mu.Lock()
	l.errs = append(l.errs, err)
	l.mu.Unlock()
	fmt.Printf("    # error handler: %v\n", err)
}

func (l *handlerLog) take() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.errs
	l.errs = nil
	return e
}

// freshName is a queue name of this case that no queue has.
func freshName() string {
	seq++
	name := fmt.Sprintf("gotest-%d-%d", os.Getpid(), seq)
	kwq.Destroy(name)
	return name
}

// within runs fn and fails if it has not returned after 10 s.
func within(what string, fn func()) error {
	done := make(chan struct{})
	go func() {
		fn()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
		return errorf("%s still waits 10 s later", what)
	}
}

// testLifecycle: a second New opens the queue (a restart), ShutDown ends
// one Queue's use of it and not the queue, a restart after ShutDown
// finds it running, ShutDownQueue is the queue-wide one.
func testLifecycle() error {
	var hl handlerLog
	cfg := kwq.Config{Name: freshName(), ErrorHandler: hl.handle}
	q1, err := kwq.New(cfg)
	if err != nil {
		return err
	}
	defer finish(q1)
	q2, err := kwq.New(cfg)
	if err != nil {
		return errorf("a second New of %s: %v, want it opened", cfg.Name, err)
	}
	defer q2.Close()
	q1.Add("a")
	if k, err := q2.TryGet(0); k != "a" || err != nil {
		return errorf("the second Queue's Get: %q %v, want the first's a", k, err)
	}
	// A Get waiting in q1 returns shutdown at its ShutDown.
	if err := waitingGetEnds(q1, "ShutDown", func() error { q1.ShutDown(); return nil }); err != nil {
		return err
	}
	if !q1.ShuttingDown() || q1.Err() != nil {
		return errorf("after ShutDown: ShuttingDown %v, Err %v; want true, nil", q1.ShuttingDown(), q1.Err())
	}
	// Its adds are dropped (TryAdd: ESHUTDOWN), its Gets are shutdown at
	// once even with a key ready: the key is for the others.
	q1.Add("b")
	q1.AddAfter("b2", time.Hour)
	q1.AddRateLimited("b3")
	if err := q1.TryAdd("b"); !errors.Is(err, unix.ESHUTDOWN) {
		return errorf("TryAdd after ShutDown: %v, want ESHUTDOWN", err)
	}
	q2.Add("c")
	if k, shut := q1.Get(); !shut {
		return errorf("Get after ShutDown took %q", k)
	}
	// The queue goes on for the other Queue.
	if q2.ShuttingDown() {
		return errorf("the other Queue sees the queue shut down after one Queue's ShutDown")
	}
	q2.Done("a")
	if k, err := q2.TryGet(0); k != "c" || err != nil {
		return errorf("the other Queue's Get: %q %v, want c", k, err)
	}
	q2.Done("c")
	if s, err := q2.Stats(); err != nil || s.Len != 0 || s.Waiting != 0 {
		return errorf("after the adds of a shut-down Queue: %+v %v, want none queued", s, err)
	}
	// A restart: ShutDown, Close, New finds the queue running.
	q1.Close()
	q3, err := kwq.New(cfg)
	if err != nil {
		return errorf("New after a ShutDown and Close: %v", err)
	}
	defer q3.Close()
	if q3.ShuttingDown() {
		return errorf("New after a ShutDown: the queue is shut down")
	}
	q3.Add("d")
	if k, err := q3.TryGet(0); k != "d" || err != nil {
		return errorf("Get after the restart: %q %v, want d", k, err)
	}
	q3.Done("d")
	// The queue-wide shutdown is for good: New refuses it.
	if err := q3.ShutDownQueue(false); err != nil {
		return err
	}
	if !q2.ShuttingDown() {
		return errorf("ShutDownQueue: another Queue does not see it")
	}
	if q, err := kwq.New(cfg); !errors.Is(err, unix.ESHUTDOWN) {
		if q != nil {
			q.Close()
		}
		return errorf("New of a queue ShutDownQueue shut down: %v, want ESHUTDOWN", err)
	}
	if e := hl.take(); len(e) > 0 {
		return errorf("%d errors reported, want none", len(e))
	}
	return nil
}

// testNewFits: New of a queue that exists checks it against its Config,
// option by option (KWQ_IOC_INFO); concurrent News of one name all
// attach to one queue.
func testNewFits() error {
	q, err := newPoisoned(freshName())
	if err != nil {
		return err
	}
	defer finish(q)
	cfg := poisonedConfig(q.Name())
	if o, err := kwq.New(kwq.Config{Name: cfg.Name}); !errors.Is(err, kwq.ErrConflict) {
		if o != nil {
			o.Close()
		}
		return errorf("New with MaxRetries 0 of a queue with a dead set: %v, want ErrConflict", err)
	}
	o, err := kwq.New(cfg)
	if err != nil {
		return errorf("New with the creator's Config: %v", err)
	}
	o.Close()

	// Each option the kernel reports (KWQ_IOC_INFO) is compared.
	for _, c := range []struct {
		what string
		mod  func(*kwq.Config)
	}{
		{"MaxItems", func(c *kwq.Config) { c.MaxItems++ }},
		{"ProcessingTimeout", func(c *kwq.Config) { c.ProcessingTimeout = time.Hour }},
		{"Mode", func(c *kwq.Config) { c.Mode = 0o660 }},
		{"rate limiter", func(c *kwq.Config) { c.RateLimiter = kwq.NewBucketRateLimiter(1, 1) }},
		{"MaxDead", func(c *kwq.Config) { c.MaxDead = 7 }},
		{"flags", func(c *kwq.Config) { c.Ephemeral = true }},
	} {
		other := cfg
		c.mod(&other)
		o, err := kwq.New(other)
		if !errors.Is(err, kwq.ErrConflict) || !strings.Contains(err.Error(), c.what) {
			if o != nil {
				o.Close()
			}
			return errorf("New with another %s: %v, want ErrConflict naming it", c.what, err)
		}
	}
	// Two ways of asking for the same queue are the same queue.
	def := kwq.Config{Name: freshName()}
	d1, err := kwq.New(def)
	if err != nil {
		return err
	}
	defer kwq.Destroy(def.Name)
	defer d1.Close()
	same := def
	same.Mode = 0o600
	same.RateLimiter = kwq.DefaultControllerRateLimiter()
	d2, err := kwq.New(same)
	if err != nil {
		return errorf("New with mode 0600 and DefaultControllerRateLimiter of a queue made with zeros: %v", err)
	}
	d2.Close()

	// The create/open race: every New attaches, to one queue.
	race := kwq.Config{Name: freshName()}
	const n = 8
	qs := make([]*kwq.Queue, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range qs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			qs[i], errs[i] = kwq.New(race)
		}()
	}
	wg.Wait()
	defer kwq.Destroy(race.Name)
	bad := 0
	for i := range qs {
		if errs[i] != nil {
			bad++
			fmt.Printf("    # New %d: %v\n", i, errs[i])
			continue
		}
		defer qs[i].Close()
		if err := qs[i].TryAdd(fmt.Sprintf("k%d", i)); err != nil {
			return err
		}
	}
	if bad > 0 {
		return errorf("%d of %d concurrent News of one name failed", bad, n)
	}
	if n2 := qs[0].Len(); n2 != n {
		return errorf("%d keys after %d News added one each, want them in one queue", n2, n)
	}
	return nil
}

// withPair runs fn on a fresh queue through two Queues, q and o, both
// reporting to hl.
func withPair(fn func(hl *handlerLog, q, o *kwq.Queue) error) error {
	var hl handlerLog
	q, err := kwq.New(kwq.Config{Name: freshName(), ErrorHandler: hl.handle})
	if err != nil {
		return err
	}
	defer finish(q)
	o, err := kwq.Open(q.Name(), hl.handle)
	if err != nil {
		return err
	}
	defer o.Close()
	return fn(&hl, q, o)
}

// waitingGetEnds: a Get of q waiting when act runs returns shutdown.
func waitingGetEnds(q *kwq.Queue, what string, act func() error) error {
	res := make(chan bool, 1)
	go func() { _, shut := q.Get(); res <- shut }()
	time.Sleep(100 * time.Millisecond)
	if err := act(); err != nil {
		return err
	}
	select {
	case shut := <-res:
		if !shut {
			return errorf("a Get waiting at %s returned a key", what)
		}
	case <-time.After(10 * time.Second):
		return errorf("a Get waiting at %s still waits 10 s later", what)
	}
	return nil
}

// testDoneNotHeld: Done of a key not processing, done twice, or held by
// another fd is a no-op, counted and not reported, as client-go's.
func testDoneNotHeld() error {
	return withPair(func(hl *handlerLog, q, o *kwq.Queue) error {
		q.Done("never-added")
		q.Add("x")
		if k, _ := q.Get(); k != "x" {
			return errorf("Get %q", k)
		}
		q.Done("x")
		q.Done("x")
		q.Add("y")
		if k, err := o.TryGet(0); k != "y" || err != nil {
			return errorf("the other fd's Get: %q %v", k, err)
		}
		q.Done("y") // held by the other fd
		o.Done("y")
		if e := hl.take(); len(e) > 0 || q.NotHeldDones() != 3 {
			return errorf("Dones of keys not held: %d reported, %d counted; want 0 and 3", len(e),
				q.NotHeldDones())
		}
		return nil
	})
}

// testShutDownInDrain: ShutDown during ShutDownWithDrain ends the drain,
// nothing reported; Done still finishes the key held.
func testShutDownInDrain() error {
	return withPair(func(hl *handlerLog, q, o *kwq.Queue) error {
		q.Add("z")
		if k, _ := q.Get(); k != "z" {
			return errorf("Get %q, want z", k)
		}
		drained := make(chan struct{})
		go func() {
			q.ShutDownWithDrain()
			close(drained)
		}()
		time.Sleep(200 * time.Millisecond)
		select {
		case <-drained:
			return errorf("ShutDownWithDrain returned while z was processing")
		default:
		}
		if err := within("ShutDownWithDrain after a ShutDown", q.ShutDown); err != nil {
			return err
		}
		select {
		case <-drained:
		case <-time.After(10 * time.Second):
			return errorf("ShutDownWithDrain still waits 10 s after a ShutDown")
		}
		// A worker loop's DoneGetOne finishes z and takes nothing.
		if k, err := q.DoneGetOne("z", kwq.Forever); !errors.Is(err, unix.ESHUTDOWN) {
			return errorf("DoneGetOne(z) after ShutDown: %q %v, want ESHUTDOWN", k, err)
		}
		if s, err := o.Stats(); err != nil || s.Processing != 0 {
			return errorf("DoneGetOne(z) after ShutDown: %+v %v, want z finished", s, err)
		}
		if e := hl.take(); len(e) > 0 {
			return errorf("ShutDown during ShutDownWithDrain: %d errors reported, want none", len(e))
		}
		return nil
	})
}

// testDrainQueued: keys queued, none processing (the workers stopped):
// ShutDownWithDrain returns, as client-go's, and the keys stay.
func testDrainQueued() error {
	return withPair(func(hl *handlerLog, q, o *kwq.Queue) error {
		o.Add("p")
		o.Add("q")
		if err := within("ShutDownWithDrain of a Queue holding no key, 2 keys queued",
			o.ShutDownWithDrain); err != nil {
			return err
		}
		q2, err := kwq.Open(q.Name(), hl.handle)
		if err != nil {
			return err
		}
		defer q2.Close()
		if n := q2.Len(); n != 2 {
			return errorf("%d keys after ShutDownWithDrain, want the 2 queued", n)
		}
		return nil
	})
}

// testGetLostQueue: the queue destroyed under a waiting Get: shutdown,
// and Err says EIDRM (nil after a plain ShutDown).
func testGetLostQueue() error {
	var hl handlerLog
	q3, err := kwq.New(kwq.Config{Name: freshName(), ErrorHandler: hl.handle})
	if err != nil {
		return err
	}
	defer q3.Close()
	if err := waitingGetEnds(q3, "Destroy", func() error { return kwq.Destroy(q3.Name()) }); err != nil {
		return err
	}
	if err := q3.Err(); !errors.Is(err, unix.EIDRM) {
		return errorf("Err after the queue was destroyed: %v, want EIDRM", err)
	}
	q, err := kwq.New(kwq.Config{Name: freshName(), ErrorHandler: hl.handle})
	if err != nil {
		return err
	}
	defer finish(q)
	q.ShutDown()
	if _, shut := q.Get(); !shut || q.Err() != nil {
		return errorf("Get after ShutDown: shutdown %v, Err %v; want true, nil", shut, q.Err())
	}
	return nil
}
