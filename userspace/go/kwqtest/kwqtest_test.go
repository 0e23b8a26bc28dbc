// SPDX-License-Identifier: LGPL-2.1-or-later

package kwqtest_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	clocktesting "k8s.io/utils/clock/testing"
	"kwq.dev/kwq"
	"kwq.dev/kwq/internal/behave"
	"kwq.dev/kwq/kwqtest"
)

func fakeEnv(fc *clocktesting.FakeClock) *behave.Env {
	return &behave.Env{
		New: func(cfg kwq.Config) (kwq.Interface, error) {
			return kwqtest.New(kwqtest.Config{RateLimiter: cfg.RateLimiter, MaxItems: cfg.MaxItems,
				MaxRetries: cfg.MaxRetries, MaxDead: cfg.MaxDead,
				ProcessingTimeout: cfg.ProcessingTimeout, Clock: fc})
		},
		Finish:  func(q kwq.Interface) { q.Close() },
		Advance: fc.Step,
	}
}

// TestBehave runs the cases the module's queue passes in the VM.
func TestBehave(t *testing.T) {
	for _, c := range behave.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			fc := clocktesting.NewFakeClock(time.Unix(1e9, 0))
			if err := c.Fn(fakeEnv(fc)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func newQ(t *testing.T, cfg kwqtest.Config) (*kwqtest.Queue, *clocktesting.FakeClock) {
	t.Helper()
	fc := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	cfg.Clock = fc
	q, err := kwqtest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q, fc
}

// waitWaiters waits until a goroutine sleeps on the fake clock.
func waitWaiters(t *testing.T, fc *clocktesting.FakeClock) {
	t.Helper()
	for i := 0; !fc.HasWaiters(); i++ {
		if i > 5000 {
			t.Fatal("no goroutine waits on the clock")
		}
		time.Sleep(time.Millisecond)
	}
}

// A Get that waits is woken by a deadline the fake clock reaches, and
// not before.
func TestGetWaitsForTheClock(t *testing.T) {
	q, fc := newQ(t, kwqtest.Config{})
	if err := q.TryAddAfter("a", time.Minute); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		k, _ := q.Get()
		got <- k
	}()
	waitWaiters(t, fc)
	fc.Step(59 * time.Second)
	select {
	case k := <-got:
		t.Fatalf("Get returned %q a second before the deadline", k)
	case <-time.After(20 * time.Millisecond):
	}
	fc.Step(time.Second)
	if k := <-got; k != "a" {
		t.Fatalf("Get: %q", k)
	}
}

// A Get that waits is woken by an Add from another goroutine.
func TestGetWokenByAdd(t *testing.T) {
	q, _ := newQ(t, kwqtest.Config{})
	got := make(chan string, 1)
	go func() {
		k, _ := q.Get()
		got <- k
	}()
	time.Sleep(5 * time.Millisecond)
	q.Add("a")
	if k := <-got; k != "a" {
		t.Fatalf("Get: %q", k)
	}
}

// A timed Get ends with ETIMEDOUT when the clock passes its timeout.
func TestGetTimeout(t *testing.T) {
	q, fc := newQ(t, kwqtest.Config{})
	errc := make(chan error, 1)
	go func() {
		_, err := q.TryGet(time.Second)
		errc <- err
	}()
	waitWaiters(t, fc)
	fc.Step(time.Second)
	if err := <-errc; !errors.Is(err, unix.ETIMEDOUT) {
		t.Fatalf("TryGet: %v", err)
	}
}

// Close gives the keys held back; another user of the queue takes them.
// A key held by one user is EPERM for another.
func TestCloseReturnsLeases(t *testing.T) {
	q, _ := newQ(t, kwqtest.Config{})
	q2 := q.Open(nil)
	defer q2.Close()
	q.Add("a")
	q.Add("b")
	if k, _ := q.Get(); k != "a" {
		t.Fatalf("Get: %q", k)
	}
	if err := q2.TryDone("a"); !errors.Is(err, unix.EPERM) {
		t.Fatalf("Done by another user: %v", err)
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"b", "a"} {
		if k, err := q2.TryGet(0); err != nil || k != want {
			t.Fatalf("after Close: %q %v, want %q", k, err, want)
		}
	}
	if _, err := q.TryGet(0); !errors.Is(err, kwq.ErrClosed) {
		t.Fatalf("Get of a closed Queue: %v", err)
	}
}

// Close returns a key with a pending requeue at the higher of its run's
// priority and the requeue's, as the kernel's release_owner does
// (semantics.rst, "Every transition").
func TestCloseReturnsARequeueAtTheHigherPriority(t *testing.T) {
	q, _ := newQ(t, kwqtest.Config{})
	q2 := q.Open(nil)
	defer q2.Close()
	for _, k := range []string{"a", "b"} {
		if err := q.TryAddPriority(k, 5); err != nil {
			t.Fatal(err)
		}
	}
	if k, _ := q.Get(); k != "a" {
		t.Fatalf("Get: %q", k)
	}
	if k, _ := q.Get(); k != "b" {
		t.Fatalf("Get: %q", k)
	}
	// a: dirty(0); b: delayed(0)
	q.Add("a")
	if err := q.TryAddAfter("b", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := q2.TryAddPriority("c", 1); err != nil {
		t.Fatal(err)
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"a", "b", "c"} {
		if k, err := q2.TryGet(0); err != nil || k != want {
			t.Fatalf("after Close: %q %v, want %q", k, err, want)
		}
	}
}

// ShutDownWithDrain waits for the keys this user holds, not for the
// queued ones; Gets blocked in another goroutine return shutdown.
func TestShutDownWithDrain(t *testing.T) {
	q, _ := newQ(t, kwqtest.Config{})
	q.Add("a")
	q.Add("b")
	if k, _ := q.Get(); k != "a" {
		t.Fatal(k)
	}
	var wg sync.WaitGroup
	drained := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		q.ShutDownWithDrain()
		close(drained)
	}()
	select {
	case <-drained:
		t.Fatal("ShutDownWithDrain returned while a key was held")
	case <-time.After(20 * time.Millisecond):
	}
	q.Done("a")
	wg.Wait()
	if n := q.Open(nil).Len(); n != 1 {
		t.Fatalf("the queued key should stay for the next user: Len %d", n)
	}
}

// The bucket's delays are client-go's: 10 qps, burst 100 by default.
func TestDefaultLimiter(t *testing.T) {
	q, fc := newQ(t, kwqtest.Config{})
	for i := range 100 {
		if d, err := q.TryAddRateLimited(string(rune('A'+i%26)) + string(rune('a'+i/26))); err != nil || d != 5*time.Millisecond {
			t.Fatalf("add %d: %v %v", i, d, err)
		}
	}
	if d, _ := q.TryAddRateLimited("over"); d != 100*time.Millisecond {
		t.Fatalf("101st: %v, want 100ms", d)
	}
	fc.Step(time.Second)
	if d, _ := q.TryAddRateLimited("later"); d != 5*time.Millisecond {
		t.Fatalf("after refill: %v", d)
	}
}

// A processing deadline revokes at its own time: the rate limiter's
// delay counts from the deadline, not from when someone looked.
func TestRevocationTime(t *testing.T) {
	q, fc := newQ(t, kwqtest.Config{ProcessingTimeout: time.Second,
		RateLimiter: kwq.NewItemExponentialFailureRateLimiter(time.Second, time.Second)})
	q.Add("a")
	if k, _ := q.Get(); k != "a" {
		t.Fatal(k)
	}
	fc.Step(2 * time.Second)
	ki, err := q.Inspect("a")
	if err != nil || ki.State != kwq.Ready || ki.Since != 0 {
		t.Fatalf("%+v %v: want ready since the deadline plus its delay", ki, err)
	}
}

// A rate-limited add with no delay charges the bucket only when it
// lands: a processing key is remembered once (charged), then it is
// dirty already (not charged again), as the module's add_rate_limited.
func TestBucketChargesOnlyWhatLands(t *testing.T) {
	q, _ := newQ(t, kwqtest.Config{RateLimiter: kwq.NewBucketRateLimiter(1, 2)})
	q.Add("p")
	if k, _ := q.Get(); k != "p" {
		t.Fatal(k)
	}
	for i, key := range []string{"p", "p", "p", "q"} {
		if d, err := q.TryAddRateLimited(key); err != nil || d != 0 {
			t.Fatalf("add %d of %q: %v %v, want no delay", i, key, d, err)
		}
	}
	if d, err := q.TryAddRateLimited("r"); err != nil || d != time.Second {
		t.Fatalf("third token: %v %v, want 1s", d, err)
	}
}
