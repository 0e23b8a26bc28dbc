// SPDX-License-Identifier: LGPL-2.1-or-later

// kwq-gotest: the behaviour tests of the Go package kwq, run in the test
// VM by make check on every kernel of the matrix as /kwq/tests/go_test.
// It prints KTAP like the C tests (userspace/tests/ktap.h): client-go's
// documented behaviours driven through kwq, the rate limiters' delays
// compared with client-go's own limiters, two processes on one queue, a
// SIGKILLed worker whose keys come back, and bad input. Helper processes
// are this program again, run as "kwq-gotest child MODE QUEUE".
package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/client-go/util/workqueue"
	"kwq.dev/kwq"
	"kwq.dev/kwq/internal/idlework"
)

var (
	count, failed int
	cases         []tcase
)

type tcase struct {
	name string
	fn   func() error
}

func add(name string, fn func() error) { cases = append(cases, tcase{name, fn}) }

func check(name string, err error) {
	count++
	if err != nil {
		failed++
		fmt.Printf("    # %s: %s\n", name, strings.ReplaceAll(err.Error(), "\n", " "))
		fmt.Printf("    not ok %d %s\n", count, name)
	} else {
		fmt.Printf("    ok %d %s\n", count, name)
	}
}

var seq int

// newQueue creates a fresh queue named after the case.
func newQueue(rl *kwq.RateLimiter) (*kwq.Queue, error) {
	seq++
	name := fmt.Sprintf("gotest-%d-%d", os.Getpid(), seq)
	kwq.Destroy(name)
	return kwq.New(kwq.Config{Name: name, RateLimiter: rl, Mode: 0o600,
		ErrorHandler: func(err error) { fmt.Printf("    # error handler: %v\n", err) }})
}

func finish(q *kwq.Queue) {
	q.Close()
	kwq.Destroy(q.Name())
}

func errorf(format string, a ...any) error { return fmt.Errorf(format, a...) }

// getNow takes one key that must be ready.
func getNow(q *kwq.Queue) (string, error) {
	return q.TryGet(0)
}

func testDedup() error {
	q, err := newQueue(nil)
	if err != nil {
		return err
	}
	defer finish(q)
	for _, k := range []string{"a", "b", "a", "a", "b"} {
		q.Add(k)
	}
	if n := q.Len(); n != 2 {
		return errorf("Len %d after adding a, b, a, a, b; want 2", n)
	}
	for _, want := range []string{"a", "b"} {
		if k, shut := q.Get(); k != want || shut {
			return errorf("Get %q %v, want %q", k, shut, want)
		}
		q.Done(want)
	}
	if n := q.Len(); n != 0 {
		return errorf("Len %d at the end, want 0", n)
	}
	return nil
}

func testDirty() error {
	q, err := newQueue(nil)
	if err != nil {
		return err
	}
	defer finish(q)
	q.Add("a")
	k, _ := q.Get()
	if k != "a" {
		return errorf("Get %q", k)
	}
	q.Add("a") // processing: marked dirty, not ready
	if n := q.Len(); n != 0 {
		return errorf("Len %d while a is processing and added again, want 0", n)
	}
	if _, err := getNow(q); !errors.Is(err, unix.EAGAIN) {
		return errorf("a second Get of a processing key: %v, want EAGAIN", err)
	}
	q.Done("a")
	if n := q.Len(); n != 1 {
		return errorf("Len %d after Done of a dirty key, want 1", n)
	}
	if k, err := getNow(q); k != "a" || err != nil {
		return errorf("Get after Done: %q %v", k, err)
	}
	q.Done("a")
	if n := q.Len(); n != 0 {
		return errorf("Len %d at the end, want 0", n)
	}
	return nil
}

func testFIFO() error {
	q, err := newQueue(nil)
	if err != nil {
		return err
	}
	defer finish(q)
	var want []string
	for i := 0; i < 50; i++ {
		k := fmt.Sprintf("key-%02d", (i*37)%50)
		want = append(want, k)
		q.Add(k)
	}
	for i, w := range want {
		k, err := getNow(q)
		if err != nil || k != w {
			return errorf("Get %d: %q %v, want %q", i, k, err, w)
		}
		q.Done(k)
	}
	return nil
}

func testAddAfter() error {
	q, err := newQueue(nil)
	if err != nil {
		return err
	}
	defer finish(q)
	q.AddAfter("x", time.Hour)
	q.AddAfter("x", 200*time.Millisecond)
	q.AddAfter("x", time.Hour) // a later deadline does not move it back
	if n := q.Len(); n != 0 {
		return errorf("Len %d right after AddAfter, want 0", n)
	}
	start := time.Now()
	k, err := q.TryGet(10 * time.Second)
	if err != nil || k != "x" {
		return errorf("Get: %q %v", k, err)
	}
	if el := time.Since(start); el < 150*time.Millisecond || el > 5*time.Second {
		return errorf("x came after %v, want about 200ms (the earliest deadline)", el)
	}
	q.Done("x")
	s, err := q.Stats()
	if err != nil {
		return err
	}
	if s.Waiting != 0 {
		return errorf("%d keys still waiting, want 0", s.Waiting)
	}
	return nil
}

// limiterSeq compares the delays of n AddRateLimited of one key with
// client-go's limiter, then Forget.
func limiterSeq(rl *kwq.RateLimiter, cg workqueue.TypedRateLimiter[string], n int) error {
	q, err := newQueue(rl)
	if err != nil {
		return err
	}
	defer finish(q)
	var got, want []time.Duration
	for i := 0; i < n; i++ {
		d, err := q.TryAddRateLimited("k")
		if err != nil {
			return err
		}
		got = append(got, d)
		want = append(want, cg.When("k"))
	}
	if !slices.Equal(got, want) {
		return errorf("delays %v, client-go %v", got, want)
	}
	if r := q.NumRequeues("k"); r != n {
		return errorf("NumRequeues %d, want %d", r, n)
	}
	q.Forget("k")
	if r := q.NumRequeues("k"); r != 0 {
		return errorf("NumRequeues %d after Forget, want 0", r)
	}
	cg.Forget("k")
	d, err := q.TryAddRateLimited("k")
	if w := cg.When("k"); err != nil || d != w {
		return errorf("after Forget: %v %v, client-go %v", d, err, w)
	}
	return nil
}

func testExponential() error {
	return limiterSeq(kwq.NewItemExponentialFailureRateLimiter(time.Millisecond, 100*time.Millisecond),
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, 100*time.Millisecond), 10)
}

func testFastSlow() error {
	return limiterSeq(kwq.NewItemFastSlowRateLimiter(2*time.Millisecond, 30*time.Millisecond, 3),
		workqueue.NewTypedItemFastSlowRateLimiter[string](2*time.Millisecond, 30*time.Millisecond, 3), 6)
}

func testMaxOf() error {
	return limiterSeq(kwq.NewMaxOfRateLimiter(
		kwq.NewItemFastSlowRateLimiter(5*time.Millisecond, 40*time.Millisecond, 2),
		kwq.NewItemExponentialFailureRateLimiter(time.Millisecond, time.Second)),
		workqueue.NewTypedMaxOfRateLimiter(
			workqueue.NewTypedItemFastSlowRateLimiter[string](5*time.Millisecond, 40*time.Millisecond, 2),
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second)), 8)
}

// The bucket is shared by all keys and runs on the clock: burst 3 at
// 2 qps gives 0, 0, 0, then about 0.5 s, 1 s, 1.5 s.
func testBucket() error {
	q, err := newQueue(kwq.NewBucketRateLimiter(2, 3))
	if err != nil {
		return err
	}
	defer finish(q)
	// Key i >= 3 waits for token i-2, which accrues (i-2) * 500ms after
	// the first take, less the time gone since: allow for that time as
	// measured around the calls (a loaded VM can be slow).
	var first, firstDone time.Time
	for i := 0; i < 6; i++ {
		before := time.Now()
		d, err := q.TryAddRateLimited(fmt.Sprintf("b%d", i))
		after := time.Now()
		if err != nil {
			return err
		}
		if i == 0 {
			first, firstDone = before, after
		}
		if i < 3 {
			if d != 0 {
				return errorf("key %d: delay %v within the burst, want 0", i, d)
			}
			continue
		}
		w := time.Duration(i-2) * 500 * time.Millisecond
		lo, hi := w-after.Sub(first)-5*time.Millisecond, w-before.Sub(firstDone)+5*time.Millisecond
		if d < lo || d > hi {
			return errorf("key %d: delay %v, want %v..%v", i, d, lo, hi)
		}
	}
	return nil
}

func testMaxWait() error {
	q, err := newQueue(kwq.NewWithMaxWaitRateLimiter(
		kwq.NewItemExponentialFailureRateLimiter(10*time.Millisecond, time.Hour), 35*time.Millisecond))
	if err != nil {
		return err
	}
	defer finish(q)
	var got []time.Duration
	for i := 0; i < 4; i++ {
		d, err := q.TryAddRateLimited("k")
		if err != nil {
			return err
		}
		got = append(got, d)
	}
	want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 35 * time.Millisecond, 35 * time.Millisecond}
	if !slices.Equal(got, want) {
		return errorf("delays %v, want %v", got, want)
	}
	return nil
}

// testDrainQueue: kwq's own drain, ShutDownQueue(true), waits for the
// keys queued too.
func testDrainQueue() error {
	q, err := newQueue(nil)
	if err != nil {
		return err
	}
	defer finish(q)
	q.Add("a")
	q.Add("b")
	k, _ := q.Get()
	returned := make(chan struct{})
	go func() {
		if err := q.ShutDownQueue(true); err != nil {
			fmt.Printf("    # ShutDownQueue(true): %v\n", err)
		}
		close(returned)
	}()
	// b is still ready: the drain waits for it to be taken and done too.
	time.Sleep(300 * time.Millisecond)
	select {
	case <-returned:
		return errorf("ShutDownQueue(true) returned while %q was processing", k)
	default:
	}
	if !q.ShuttingDown() {
		return errorf("ShuttingDown false during the drain")
	}
	q.Done(k)
	k2, shut := q.Get()
	if shut || k2 != "b" {
		return errorf("Get during the drain: %q %v, want b", k2, shut)
	}
	time.Sleep(200 * time.Millisecond)
	select {
	case <-returned:
		return errorf("ShutDownQueue(true) returned while b was processing")
	default:
	}
	q.Done(k2)
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		return errorf("ShutDownQueue(true) still waiting 10 s after the last Done")
	}
	return nil
}

// testGetAfterShutdownQueue: after the queue-wide ShutDownQueue, Get
// returns the keys ready, then shutdown; a blocked Get returns.
func testGetAfterShutdownQueue() error {
	q, err := newQueue(nil)
	if err != nil {
		return err
	}
	defer finish(q)
	q.Add("a")
	if err := q.ShutDownQueue(false); err != nil {
		return err
	}
	if !q.ShuttingDown() {
		return errorf("ShuttingDown false after ShutDownQueue")
	}
	if err := q.TryAdd("b"); !errors.Is(err, unix.ESHUTDOWN) ||
		!strings.Contains(err.Error(), `"b"`) || !strings.Contains(err.Error(), q.Name()) {
		return errorf("add after shutdown: %v, want ESHUTDOWN naming key and queue", err)
	}
	q.Add("b") // dropped silently, as client-go does
	if k, shut := q.Get(); k != "a" || shut {
		return errorf("Get after ShutDown with a ready: %q %v", k, shut)
	}
	q.Done("a")
	if k, shut := q.Get(); !shut || k != "" {
		return errorf("Get after ShutDown, nothing ready: %q %v, want shutdown", k, shut)
	}
	// A Get blocked before ShutDown returns too.
	q2, err := newQueue(nil)
	if err != nil {
		return err
	}
	defer finish(q2)
	if err := waitingGetEnds(q2, "ShutDownQueue", func() error { return q2.ShutDownQueue(false) }); err != nil {
		return err
	}
	if err := q2.Err(); err != nil {
		return errorf("Err after a shutdown: %v, want nil", err)
	}
	return nil
}

func testBatchPriority() error {
	q, err := newQueue(nil)
	if err != nil {
		return err
	}
	defer finish(q)
	var keys []string
	for i := 0; i < 200; i++ {
		keys = append(keys, fmt.Sprintf("k%03d", i))
	}
	if n, err := q.AddBatch(keys); n != 200 || err != nil {
		return errorf("AddBatch: %d %v", n, err)
	}
	if err := q.TryAddPriority("urgent", 5); err != nil {
		return err
	}
	s, err := q.Stats()
	if err != nil {
		return err
	}
	if s.Len != 201 || len(s.Priorities) != 2 || s.Priorities[0] != (kwq.PriorityLen{Priority: 5, Len: 1}) {
		return errorf("Stats: len %d, priorities %v", s.Len, s.Priorities)
	}
	got, err := q.GetBatch(64, 0)
	if err != nil || len(got) != 64 || got[0] != "urgent" || got[1] != "k000" {
		return errorf("GetBatch(64): %d keys, first %v, %v", len(got), got[:min(len(got), 2)], err)
	}
	var all []string
	all = append(all, got...)
	for len(all) < 201 {
		got, err = q.DoneGet(got, 64, 0)
		if err != nil {
			return errorf("DoneGet after %d keys: %v", len(all), err)
		}
		all = append(all, got...)
	}
	if n, err := q.DoneBatch(got); err != nil || n != len(got) {
		return errorf("DoneBatch: %d %v", n, err)
	}
	if !slices.Equal(all[1:], keys) {
		return errorf("keys out of order or lost")
	}
	if s, _ := q.Stats(); s.Processing != 0 || s.Len != 0 {
		return errorf("at the end: %d processing, %d ready", s.Processing, s.Len)
	}
	return nil
}

func testBadInput() error {
	q, err := newQueue(nil)
	if err != nil {
		return err
	}
	defer finish(q)
	q.Add("held")
	long := strings.Repeat("x", kwq.KeyLenMax+1)
	if err := q.TryAdd(long); err == nil || !strings.Contains(err.Error(), "invalid key") {
		return errorf("key of %d bytes: %v", len(long), err)
	}
	if _, err := q.AddBatch([]string{"ok1", "", "ok2"}); err == nil {
		return errorf("a batch with an empty key succeeded")
	}
	if n := q.Len(); n != 1 {
		return errorf("Len %d after rejected adds, want 1 (nothing changed)", n)
	}
	// A taken name is opened (testLifecycle), but bad options are refused first.
	if o, err := kwq.New(kwq.Config{Name: q.Name(), ProcessingTimeout: time.Nanosecond}); err == nil ||
		!strings.Contains(err.Error(), "processing timeout") {
		if o != nil {
			o.Close()
		}
		return errorf("New of a taken name with a 1 ns processing timeout: %v, want refused", err)
	}
	if _, err := kwq.New(kwq.Config{Name: "bad/name"}); err == nil {
		return errorf("create of bad/name succeeded")
	}
	if _, err := kwq.New(kwq.Config{Name: "x", RateLimiter: kwq.NewItemExponentialFailureRateLimiter(-1, 0)}); err == nil {
		return errorf("a negative delay was accepted")
	}
	err = q.TryDone("nothere")
	var ke *kwq.Error
	if !errors.Is(err, unix.ENOENT) || !errors.As(err, &ke) || ke.Key != "nothere" || ke.Queue != q.Name() {
		return errorf("Done of a key not processing: %v, want ENOENT naming it", err)
	}
	// A key leased to another fd of the same queue.
	k, _ := q.Get()
	other, err := kwq.Open(q.Name(), nil)
	if err != nil {
		return err
	}
	if err := other.TryDone(k); !errors.Is(err, unix.EPERM) {
		other.Close()
		return errorf("Done through another fd: %v, want EPERM", err)
	}
	other.Close()
	q.Done(k)
	if _, err := kwq.Open("gotest-none", nil); !errors.Is(err, unix.ENOENT) {
		return errorf("Open of a missing queue: %v, want ENOENT", err)
	}
	// A queue destroyed by another: its fds fail with EIDRM.
	q2, err := newQueue(nil)
	if err != nil {
		return err
	}
	if err := kwq.Destroy(q2.Name()); err != nil {
		return err
	}
	if err := q2.TryAdd("a"); !errors.Is(err, unix.EIDRM) {
		return errorf("add to a destroyed queue: %v, want EIDRM", err)
	}
	q2.Close()
	if err := q2.TryAdd("a"); !errors.Is(err, kwq.ErrClosed) {
		return errorf("add after Close: %v, want ErrClosed", err)
	}
	return nil
}

// testDoneGetOne: the single-key worker loop's call finishes the key
// held and takes the next in order; a key it cannot finish is named in
// the error and nothing is taken; empty, it waits within its timeout.
func testDoneGetOne() error {
	q, err := newQueue(nil)
	if err != nil {
		return err
	}
	defer finish(q)
	for _, k := range []string{"a", "b", "c"} {
		q.Add(k)
	}
	held := ""
	for _, want := range []string{"a", "b", "c"} {
		k, err := q.DoneGetOne(held, 0)
		if err != nil || k != want {
			return errorf("DoneGetOne(%q) = %q, %v; want %q", held, k, err, want)
		}
		held = k
	}
	q.Add("d")
	_, err = q.DoneGetOne("nothere", 0)
	var ke *kwq.Error
	if !errors.Is(err, unix.ENOENT) || !errors.As(err, &ke) || ke.Key != "nothere" {
		return errorf("DoneGetOne of a key not processing: %v, want ENOENT naming it", err)
	}
	if n := q.Len(); n != 1 {
		return errorf("Len %d after a failed DoneGetOne, want 1 (nothing taken)", n)
	}
	if _, err := q.DoneGetOne(strings.Repeat("x", kwq.KeyLenMax+1), 0); err == nil {
		return errorf("DoneGetOne of a %d-byte key succeeded", kwq.KeyLenMax+1)
	}
	if k, err := q.DoneGetOne(held, 0); err != nil || k != "d" {
		return errorf("DoneGetOne(%q) = %q, %v; want \"d\"", held, k, err)
	}
	t0 := time.Now()
	if _, err := q.DoneGetOne("d", 100*time.Millisecond); !errors.Is(err, unix.ETIMEDOUT) {
		return errorf("DoneGetOne on an empty queue: %v, want ETIMEDOUT", err)
	}
	if el := time.Since(t0); el < 90*time.Millisecond {
		return errorf("DoneGetOne gave up after %v, want its 100ms", el)
	}
	if s, err := q.Stats(); err != nil || s.Processing != 0 || s.Len != 0 {
		return errorf("Stats after the loop: %+v %v, want nothing left", s, err)
	}
	return nil
}

// testDoneGetOneAfterOtherShutdown: the queue shut down through another
// fd while a worker holds a key (its own Queue not shut down): the
// worker's DoneGetOne finishes the key it holds, then reports the get's
// ESHUTDOWN as the get's, not as the held key's failure (it once indexed
// past its one key and panicked).
func testDoneGetOneAfterOtherShutdown() error {
	q, err := newQueue(nil)
	if err != nil {
		return err
	}
	defer finish(q)
	q.Add("a")
	k, err := q.DoneGetOne("", 0)
	if err != nil || k != "a" {
		return errorf("DoneGetOne = %q, %v; want \"a\"", k, err)
	}
	other, err := kwq.Open(q.Name(), nil)
	if err != nil {
		return err
	}
	defer other.Close()
	if err := other.ShutDownQueue(false); err != nil {
		return err
	}
	_, err = q.DoneGetOne("a", 0)
	var ke *kwq.Error
	if !errors.Is(err, unix.ESHUTDOWN) || !errors.As(err, &ke) || ke.Op != "get" || ke.Key != "" {
		return errorf("DoneGetOne of the key held after another's ShutDownQueue: %v, want the get's ESHUTDOWN", err)
	}
	if s, err := other.Stats(); err != nil || s.Processing != 0 {
		return errorf("Stats after it: %+v %v, want the key finished", s, err)
	}
	return nil
}

// testLongKeys: a Kubernetes namespace/name key of the longest kind (a
// 63-byte namespace, a 253-byte name: 317 bytes) and a key of
// kwq.KeyLenMax (1024) bytes go through every call a controller makes,
// one key and batched; KeyLenMax+1 is refused and changes nothing.
func testLongKeys() error {
	q, err := newQueue(nil)
	if err != nil {
		return err
	}
	defer finish(q)
	k8s := strings.Repeat("n", 63) + "/" + strings.Repeat("o", 253)
	max := strings.Repeat("m", 1023) + "!"
	if len(k8s) != 317 || len(max) != 1024 {
		return errorf("key lengths %d, %d", len(k8s), len(max))
	}
	for _, k := range []string{k8s, max} {
		if err := q.TryAdd(k); err != nil {
			return errorf("add of a %d-byte key: %v", len(k), err)
		}
		got, err := q.TryGet(0)
		if err != nil || got != k {
			return errorf("get of a %d-byte key: %d bytes, %v", len(k), len(got), err)
		}
		if info, err := q.Inspect(k); err != nil || info.Key != k || info.State != kwq.Processing {
			return errorf("inspect of a %d-byte key: %+v, %v", len(k), info.State, err)
		}
		if _, err := q.TryAddRateLimited(k); err != nil {
			return errorf("rate-limited add of a %d-byte key: %v", len(k), err)
		}
		if n, err := q.TryNumRequeues(k); err != nil || n != 1 {
			return errorf("NumRequeues of a %d-byte key: %d, %v", len(k), n, err)
		}
		if err := q.TryForget(k); err != nil {
			return errorf("forget of a %d-byte key: %v", len(k), err)
		}
		if err := q.TryDone(k); err != nil {
			return errorf("done of a %d-byte key: %v", len(k), err)
		}
		if err := q.Remove(k); err != nil && !errors.Is(err, unix.ENOENT) {
			return errorf("remove of a %d-byte key: %v", len(k), err)
		}
	}
	// The worker loop's single-key call, holding and taking long keys.
	q.Add(k8s)
	q.Add(max)
	q.Add("short")
	held := ""
	for _, want := range []string{k8s, max, "short"} {
		k, err := q.DoneGetOne(held, 0)
		if err != nil || k != want {
			return errorf("DoneGetOne(%d bytes) = %d bytes, %v; want %d", len(held), len(k), err, len(want))
		}
		held = k
	}
	q.Done(held)
	// Batches: the keys in order, all of them, with their priorities.
	batch := []string{"a", k8s, max, "b"}
	if n, err := q.AddBatch(batch); err != nil || n != len(batch) {
		return errorf("AddBatch: %d, %v", n, err)
	}
	keys, err := q.GetBatch(len(batch), 0)
	if err != nil || !slices.Equal(keys, batch) {
		return errorf("GetBatch: %d keys, %v", len(keys), err)
	}
	if all, err := q.Keys(kwq.StatesAll); err != nil || len(all) != len(batch) {
		return errorf("Keys: %d, %v; want %d", len(all), err, len(batch))
	}
	if keys, err := q.DoneGet(keys, 1, 0); !errors.Is(err, unix.EAGAIN) || len(keys) != 0 {
		return errorf("DoneGet of the batch: %d keys, %v; want EAGAIN, all done", len(keys), err)
	}
	long := max + "x"
	if err := q.TryAdd(long); err == nil || !strings.Contains(err.Error(), "not 1..1024") {
		return errorf("add of a 1025-byte key: %v", err)
	}
	if _, err := q.AddBatch([]string{"c", long}); err == nil {
		return errorf("a batch with a 1025-byte key succeeded")
	}
	if s, err := q.Stats(); err != nil || s.Len != 0 || s.Processing != 0 {
		return errorf("Stats at the end: %+v, %v; want nothing left", s, err)
	}
	return nil
}

// testUnnamed: Config{Name: ""}, client-go's unnamed queue, creates a
// queue of a generated name, another one each time.
func testUnnamed() error {
	var names []string
	for i := 0; i < 2; i++ {
		q, err := kwq.New(kwq.Config{})
		if err != nil {
			return errorf("New with Name \"\": %v", err)
		}
		defer finish(q)
		if !strings.HasPrefix(q.Name(), "unnamed-") || len(q.Name()) != 32 {
			return errorf("generated name %q, want unnamed- and 24 hex digits", q.Name())
		}
		names = append(names, q.Name())
		q.Add("k")
		if k, err := q.TryGet(0); err != nil || k != "k" {
			return errorf("get from %s: %q, %v", q.Name(), k, err)
		}
		q.Done("k")
	}
	if names[0] == names[1] {
		return errorf("two unnamed queues share the name %s", names[0])
	}
	// The generated name is a real queue's: another process opens it.
	o, err := kwq.Open(names[0], nil)
	if err != nil {
		return errorf("Open(%s): %v", names[0], err)
	}
	o.Close()
	return testEphemeral()
}

// gone: no queue of that name (Open: ENOENT).
func gone(name string) error {
	o, err := kwq.Open(name, nil)
	if err == nil {
		o.Close()
		return errorf("queue %s is still there", name)
	}
	if !errors.Is(err, unix.ENOENT) {
		return errorf("Open(%s): %v, want ENOENT", name, err)
	}
	return nil
}

// testEphemeral: an unnamed queue, and one made with Ephemeral, go with
// the last fd attached to them; until then, their keys stay.
func testEphemeral() error {
	q, err := kwq.New(kwq.Config{})
	if err != nil {
		return err
	}
	name := q.Name()
	q.Close()
	if err := gone(name); err != nil {
		return errorf("unnamed queue after its Close: %v", err)
	}
	q, err = newQueueCfg(kwq.Config{Ephemeral: true})
	if err != nil {
		return err
	}
	name = q.Name()
	q.Add("k")
	o, err := kwq.Open(name, nil)
	if err != nil {
		q.Close()
		return err
	}
	q.Close()
	n := o.Len()
	o.Close()
	if n != 1 {
		return errorf("Ephemeral queue with a second fd: Len %d after the first Close, want 1", n)
	}
	if err := gone(name); err != nil {
		return errorf("Ephemeral queue after its last Close: %v", err)
	}
	return nil
}

// child runs a helper process: "child MODE QUEUE".
func child(mode, name string) {
	q, err := kwq.Open(name, nil)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	switch mode {
	case "consume": // take and finish keys until shutdown, print them
		fmt.Println("ready")
		for {
			k, shut := q.Get()
			if shut {
				break
			}
			fmt.Println("key", k)
			time.Sleep(time.Millisecond)
			q.Done(k)
		}
	case "idle": // 50 workers, then idle: print the process's OS threads
		idleThreads(q)
	case "hold": // take 3 keys, say so, then wait to be killed
		keys, err := q.GetBatch(3, 10*time.Second)
		if err != nil || len(keys) != 3 {
			fmt.Println("error", len(keys), err)
			os.Exit(1)
		}
		fmt.Println("held", strings.Join(keys, " "))
		time.Sleep(time.Hour)
	}
	os.Exit(0)
}

// idleThreads runs idlework on q and prints "threads N limit L
// processed P rings R".
func idleThreads(q *kwq.Queue) {
	n, processed, err := idlework.Run(q)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Printf("threads %d limit %d processed %d rings %v\n", n, runtime.GOMAXPROCS(0)+5,
		processed, q.Rings())
}

// testIdleThreads: 50 idle workers park goroutines in Go's netpoller,
// not an OS thread each: the helper process has at most GOMAXPROCS + 5
// threads while they wait (with rings, and with ioctls only).
func testIdleThreads() error {
	for _, rings := range []string{"1", "0"} {
		q, err := newQueue(nil)
		if err != nil {
			return err
		}
		os.Setenv("KWQ_GO_RINGS", rings)
		cmd, out, err := spawn("idle", q.Name())
		os.Unsetenv("KWQ_GO_RINGS")
		if err != nil {
			finish(q)
			return err
		}
		var line string
		if out.Scan() {
			line = out.Text()
		}
		cmd.Wait()
		finish(q)
		var n, limit, processed int
		var r bool
		if _, err := fmt.Sscanf(line, "threads %d limit %d processed %d rings %t", &n, &limit, &processed, &r); err != nil {
			return errorf("helper said %q", line)
		}
		fmt.Printf("    # KWQ_GO_RINGS=%s: %d threads with 50 idle workers (rings %v), at most %d\n", rings, n, r, limit)
		if processed != idlework.Keys {
			return errorf("the workers processed %d of %d keys", processed, idlework.Keys)
		}
		if n > limit {
			return errorf("%d OS threads with 50 idle workers (rings %v), want <= GOMAXPROCS + 5 = %d", n, r, limit)
		}
		if r != (rings == "1") {
			return errorf("KWQ_GO_RINGS=%s: rings %v", rings, r)
		}
	}
	return nil
}

// testAddMany: Adds from many goroutines, many times the ring's size,
// with nobody waiting: a full ring holds them back, none is lost; the
// adds a MaxItems cap refuses reach the ErrorHandler (ENOSPC, naming the
// key), each once, by the time Len answers.
func testAddMany() error {
	const goroutines, per, max = 8, 250, 1500
	var mu sync.Mutex
	refused := map[string]int{}
	var other []error
	q, err := newQueueCfg(kwq.Config{MaxItems: max, ErrorHandler: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		var ke *kwq.Error
		if errors.As(err, &ke) && errors.Is(err, unix.ENOSPC) && ke.Op == "add" {
			refused[ke.Key]++
		} else {
			other = append(other, err)
		}
	}})
	if err != nil {
		return err
	}
	defer finish(q)
	var wg sync.WaitGroup
	t0 := time.Now()
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				q.Add(fmt.Sprintf("m%d-%04d", g, i))
			}
		}()
	}
	wg.Wait()
	t1 := time.Now()
	n := q.Len()
	t2 := time.Now()
	s, err := q.Stats()
	if err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if len(other) > 0 {
		return errorf("unexpected errors: %v", other)
	}
	for k, c := range refused {
		if c != 1 {
			return errorf("%q refused %d times", k, c)
		}
	}
	if n != max || s.Len != max || len(refused) != goroutines*per-max {
		return errorf("Len %d, Stats.Len %d, %d refused (ENOSPC); want %d, %d, %d",
			n, s.Len, len(refused), max, max, goroutines*per-max)
	}
	fmt.Printf("    # rings %v: %d adds from %d goroutines, %d queued, %d refused; adds %v, Len %v\n",
		q.Rings(), goroutines*per, goroutines, n, len(refused), t1.Sub(t0), t2.Sub(t1))
	return nil
}

// noRings runs fn with queues made without rings (the ioctl fallback).
func noRings(fn func() error) func() error {
	return func() error {
		os.Setenv("KWQ_GO_RINGS", "0")
		defer os.Unsetenv("KWQ_GO_RINGS")
		return fn()
	}
}

// withLeases runs fn with single-key gets into ring lease slots
// (KWQ_GO_LEASES=1), which the package leaves off by default.
func withLeases(fn func() error) func() error {
	return func() error {
		os.Setenv("KWQ_GO_LEASES", "1")
		defer os.Unsetenv("KWQ_GO_LEASES")
		return fn()
	}
}

func spawn(mode, name string) (*exec.Cmd, *bufio.Scanner, error) {
	cmd := exec.Command("/proc/self/exe", "child", mode, name)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return cmd, bufio.NewScanner(out), nil
}

func testTwoProcesses() error {
	q, err := newQueue(nil)
	if err != nil {
		return err
	}
	defer finish(q)
	cmd, out, err := spawn("consume", q.Name())
	if err != nil {
		return err
	}
	// The keys come once the child has the queue open (its start can
	// take longer than this process needs for all of them).
	if !out.Scan() || out.Text() != "ready" {
		cmd.Process.Kill()
		cmd.Wait()
		return errorf("the child did not start: %q", out.Text())
	}
	var keys []string
	for i := 0; i < 200; i++ {
		keys = append(keys, fmt.Sprintf("p%03d", i))
	}
	q.AddBatch(keys)
	var mine []string
	for {
		k, err := q.TryGet(200 * time.Millisecond)
		if err != nil {
			break
		}
		mine = append(mine, k)
		time.Sleep(time.Millisecond)
		q.Done(k)
	}
	if err := q.ShutDownQueue(true); err != nil { // ends the child's Gets
		return err
	}
	var theirs []string
	for out.Scan() {
		if f := strings.Fields(out.Text()); len(f) == 2 && f[0] == "key" {
			theirs = append(theirs, f[1])
		} else {
			return errorf("child: %s", out.Text())
		}
	}
	if err := cmd.Wait(); err != nil {
		return errorf("child: %v", err)
	}
	all := append(append([]string{}, mine...), theirs...)
	sort.Strings(all)
	if !slices.Equal(all, keys) {
		return errorf("%d keys here, %d in the child: not each key once", len(mine), len(theirs))
	}
	if len(theirs) == 0 {
		return errorf("the child got no key (%d here)", len(mine))
	}
	fmt.Printf("    # %d keys here, %d in the other process\n", len(mine), len(theirs))
	return nil
}

func testKilledWorker() error {
	q, err := newQueue(nil)
	if err != nil {
		return err
	}
	defer finish(q)
	q.AddBatch([]string{"w1", "w2", "w3", "w4"})
	cmd, out, err := spawn("hold", q.Name())
	if err != nil {
		return err
	}
	if !out.Scan() {
		cmd.Process.Kill()
		cmd.Wait()
		return errorf("the worker said nothing")
	}
	f := strings.Fields(out.Text())
	if len(f) != 4 || f[0] != "held" {
		cmd.Process.Kill()
		cmd.Wait()
		return errorf("worker: %s", out.Text())
	}
	held := f[1:]
	if s, _ := q.Stats(); s.Processing != 3 || s.Len != 1 {
		return errorf("while held: %d processing, %d ready", s.Processing, s.Len)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	var back []string
	for len(back) < 4 {
		k, err := q.TryGet(5 * time.Second)
		if err != nil {
			return errorf("after the kill, got %v then %v", back, err)
		}
		back = append(back, k)
		q.Done(k)
	}
	sort.Strings(back)
	if !slices.Equal(back, []string{"w1", "w2", "w3", "w4"}) {
		return errorf("keys after the kill: %v (held %v)", back, held)
	}
	if s, _ := q.Stats(); s.LeaseReturns != 3 {
		return errorf("lease returns %d, want 3", s.LeaseReturns)
	}
	return nil
}

// run runs one case; a case that hangs fails after a minute, and the
// next ones still run.
func run(fn func() error) error {
	res := make(chan error, 1)
	go func() { res <- fn() }()
	select {
	case err := <-res:
		return err
	case <-time.After(time.Minute):
		return errorf("still running after a minute")
	}
}

// poisonedConfig is the Config of newPoisoned's queue.
func poisonedConfig(name string) kwq.Config {
	return kwq.Config{Name: name, MaxRetries: 1,
		RateLimiter: kwq.NewItemExponentialFailureRateLimiter(time.Microsecond, time.Microsecond)}
}

// newPoisoned is a new queue of MaxRetries 1 whose key "poison" failed
// twice: dead after its second failure.
func newPoisoned(name string) (*kwq.Queue, error) {
	q, err := kwq.New(poisonedConfig(name))
	if err != nil {
		return nil, err
	}
	q.Add("poison")
	for i := 0; i < 2; i++ {
		k, err := q.TryGet(5 * time.Second)
		if err != nil || k != "poison" {
			finish(q)
			return nil, errorf("get %d: %q %v", i, k, err)
		}
		d, err := q.TryAddRateLimited(k)
		if err != nil || (i == 1) != (d == kwq.DelayDead) {
			finish(q)
			return nil, errorf("failure %d: delay %v, %v", i, d, err)
		}
		q.Done(k)
	}
	return q, nil
}

// testDeadSet: a poison key dies after MaxRetries, is listed, inspected,
// revived with its count reset; an unknown key is ENOENT.
func testDeadSet() error {
	q, err := newPoisoned(freshName())
	if err != nil {
		return err
	}
	defer finish(q)
	dead, err := q.DeadKeys()
	if err != nil || len(dead) != 1 || dead[0].Key != "poison" || dead[0].Failures != 2 ||
		dead[0].State != kwq.Dead {
		return errorf("dead keys %+v, %v", dead, err)
	}
	if st, err := q.Stats(); err != nil || st.Dead != 1 || st.DeadTotal != 1 {
		return errorf("stats %+v, %v", st, err)
	}
	if err := q.Revive("nope"); !errors.Is(err, unix.ENOENT) {
		return errorf("revive of a key not dead: %v", err)
	}
	if err := q.Revive("poison"); err != nil {
		return err
	}
	info, err := q.Inspect("poison")
	if err != nil || info.State != kwq.Ready || info.Failures != 0 {
		return errorf("after revive: %+v, %v", info, err)
	}
	if _, err := q.Inspect("nope"); !errors.Is(err, unix.ENOENT) {
		return errorf("inspect of an unknown key: %v", err)
	}
	keys, err := q.Keys(kwq.StatesAll)
	if err != nil || len(keys) != 1 {
		return errorf("keys %+v, %v", keys, err)
	}
	return nil
}

// newQueueCfg creates a fresh queue named after the case from cfg.
func newQueueCfg(cfg kwq.Config) (*kwq.Queue, error) {
	seq++
	cfg.Name = fmt.Sprintf("gotest-%d-%d", os.Getpid(), seq)
	kwq.Destroy(cfg.Name)
	return kwq.New(cfg)
}

// testDeadline: a key held past the queue's ProcessingTimeout comes back
// as a failure and its holder's Done is ESTALE; Touch keeps a key held;
// SetProcessingTimeout(NoDeadline) takes keys without a deadline.
func testDeadline() error {
	const lease = time.Second
	q, err := newQueueCfg(kwq.Config{ProcessingTimeout: lease,
		RateLimiter: kwq.NewItemExponentialFailureRateLimiter(time.Microsecond, time.Microsecond)})
	if err != nil {
		return err
	}
	defer finish(q)
	q.Add("hung")
	if k, err := getNow(q); err != nil || k != "hung" {
		return errorf("get: %q %v", k, err)
	}
	// Taken back at the deadline: ready again, with one failure.
	if k, err := q.TryGet(10 * time.Second); err != nil || k != "hung" {
		return errorf("get after the deadline: %q %v", k, err)
	}
	if n := q.NumRequeues("hung"); n != 1 {
		return errorf("failures after a timeout: %d, want 1", n)
	}
	st, err := q.Stats()
	if err != nil || st.ProcessingTimeouts != 1 {
		return errorf("stats %+v, %v", st, err)
	}
	// Heartbeats: held for 2 leases, then finished.
	t0 := time.Now()
	for time.Since(t0) < 2*lease {
		time.Sleep(lease / 4)
		if err := q.Touch("hung", 0); err != nil {
			return errorf("touch after %v: %v", time.Since(t0), err)
		}
	}
	if err := q.TryDone("hung"); err != nil {
		return errorf("done after heartbeats: %v", err)
	}
	// Without a deadline for this handle's gets.
	if err := q.SetProcessingTimeout(kwq.NoDeadline); err != nil {
		return err
	}
	q.Add("slow")
	if k, err := getNow(q); err != nil || k != "slow" {
		return errorf("get: %q %v", k, err)
	}
	time.Sleep(lease + lease/2)
	if info, err := q.Inspect("slow"); err != nil || info.State != kwq.Processing || info.Timeout != 0 {
		return errorf("held without a deadline: %+v, %v", info, err)
	}
	if err := q.TryDone("slow"); err != nil {
		return errorf("done: %v", err)
	}
	// A lost lease: the queue takes the key back, the old Done is ESTALE.
	if err := q.SetProcessingTimeout(lease); err != nil {
		return err
	}
	q.Add("lost")
	if k, err := getNow(q); err != nil || k != "lost" {
		return errorf("get: %q %v", k, err)
	}
	for i := 0; ; i++ {
		info, err := q.Inspect("lost")
		if err != nil {
			return errorf("inspect: %v", err)
		}
		if info.State == kwq.Ready {
			break
		}
		if i == 200 {
			return errorf("still %+v after 10 s", info)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := q.TryDone("lost"); !errors.Is(err, unix.ESTALE) {
		return errorf("done of a lost lease: %v, want ESTALE", err)
	}
	for _, d := range []time.Duration{time.Microsecond, 366 * 24 * time.Hour, -2} {
		if err := q.SetProcessingTimeout(d); err == nil {
			return errorf("SetProcessingTimeout(%v) accepted", d)
		}
	}
	return nil
}

// testAfterPolicy: Replace moves a pending deadline later or earlier,
// Latest keeps the later one; client-go's earliest-wins stays the default.
func testAfterPolicy() error {
	q, err := newQueue(nil)
	if err != nil {
		return err
	}
	defer finish(q)
	due := func(key string) (time.Duration, error) {
		info, err := q.Inspect(key)
		if err != nil || info.State != kwq.Waiting || !info.HasDue {
			return 0, errorf("%s: %+v, %v", key, info, err)
		}
		return info.Due, nil
	}
	q.AddAfter("r", time.Hour)
	q.AddAfter("r", 2*time.Hour) // earliest wins: still an hour
	if d, err := due("r"); err != nil || d > time.Hour {
		return errorf("earliest: %v %v", d, err)
	}
	if err := q.TryAddAfterPolicy("r", 2*time.Hour, kwq.Replace); err != nil {
		return err
	}
	if d, err := due("r"); err != nil || d <= time.Hour {
		return errorf("replace, later: %v %v", d, err)
	}
	if err := q.TryAddAfterPolicy("l", time.Hour, kwq.Latest); err != nil {
		return err
	}
	if err := q.TryAddAfterPolicy("l", time.Minute, kwq.Latest); err != nil {
		return err
	}
	if d, err := due("l"); err != nil || d <= time.Minute {
		return errorf("latest: %v %v", d, err)
	}
	if err := q.TryAddAfterPolicy("r", time.Millisecond, kwq.Replace); err != nil {
		return err
	}
	if k, err := q.TryGet(10 * time.Second); err != nil || k != "r" {
		return errorf("replaced deadline, earlier: %q %v", k, err)
	}
	if err := q.TryAddAfterPolicy("x", 0, kwq.Replace); err == nil {
		return errorf("a policy with no delay accepted")
	}
	if err := q.TryAddAfterPolicy("x", time.Second, kwq.AfterPolicy(99)); err == nil {
		return errorf("unknown policy accepted")
	}
	return nil
}

// testSignalInDoneGet: a signal (Go's handlers ask for restarts, as for
// its preemption signal SIGURG) ending a DoneGet's wait after the done
// part: the key stays finished once, and the get goes on waiting.
func testSignalInDoneGet() error {
	q, err := newQueue(nil)
	if err != nil {
		return err
	}
	defer finish(q)
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, unix.SIGUSR1)
	defer signal.Stop(sig)
	q.Add("held")
	if k, err := getNow(q); err != nil || k != "held" {
		return errorf("get: %q %v", k, err)
	}
	type result struct {
		keys []string
		err  error
	}
	tid := make(chan int, 1)
	res := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		keys, err := q.DoneGet([]string{"held"}, 1, 10*time.Second)
		res <- result{keys, err}
	}()
	t := <-tid
	time.Sleep(300 * time.Millisecond)
	if err := unix.Tgkill(os.Getpid(), t, unix.SIGUSR1); err != nil {
		return err
	}
	time.Sleep(300 * time.Millisecond)
	q.Add("next")
	r := <-res
	if r.err != nil || len(r.keys) != 1 || r.keys[0] != "next" {
		return errorf("DoneGet across a signal: %q %v", r.keys, r.err)
	}
	if len(sig) == 0 {
		return errorf("the signal did not arrive")
	}
	if _, err := q.Inspect("held"); !errors.Is(err, unix.ENOENT) {
		return errorf("held after its done: %v", err)
	}
	return q.TryDone("next")
}

// testAddAfterGather: AddAfter gathers its calls (after.go). A gathered
// key reaches the kernel before the next call through the same Queue,
// within the gathering window for another fd, and at Close; a key the
// kernel refuses reaches the ErrorHandler named, and the keys gathered
// after it are still sent.
func testAddAfterGather() error {
	seq++
	name := fmt.Sprintf("gotest-%d-%d", os.Getpid(), seq)
	kwq.Destroy(name)
	var mu sync.Mutex
	var errs []error
	q, err := kwq.New(kwq.Config{Name: name, Mode: 0o600, MaxItems: 3,
		ErrorHandler: func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }})
	if err != nil {
		return err
	}
	defer finish(q)
	other, err := kwq.Open(name, nil)
	if err != nil {
		return err
	}
	defer other.Close()
	waiting := func(want uint64, what string) error {
		for end := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			s, err := other.Stats()
			if err != nil || s.Waiting == want {
				return err
			}
			if time.Now().After(end) {
				return errorf("%s: another fd sees %d waiting after 5 s, want %d", what, s.Waiting, want)
			}
		}
	}
	q.AddAfter("a", time.Hour)
	if err := q.Remove("a"); err != nil {
		return errorf("Remove right after AddAfter, same Queue: %v", err)
	}
	q.AddAfter("b", time.Hour)
	q.AddAfter("c", time.Hour)
	if err := waiting(2, "no call after two AddAfter"); err != nil {
		return err
	}
	// MaxItems 3 with b and c waiting: d fits, e and f are refused.
	for _, k := range []string{"d", "e", "f"} {
		q.AddAfter(k, time.Hour)
	}
	q.Flush()
	var got []string
	for end := time.Now().Add(5 * time.Second); len(got) < 2 && time.Now().Before(end); time.Sleep(time.Millisecond) {
		mu.Lock()
		got = got[:0]
		for _, e := range errs {
			var ke *kwq.Error
			if !errors.As(e, &ke) || !errors.Is(e, unix.ENOSPC) || ke.Op != "add-after" {
				mu.Unlock()
				return errorf("error handler got %v, want an add-after ENOSPC", e)
			}
			got = append(got, ke.Key)
		}
		mu.Unlock()
	}
	if !slices.Equal(got, []string{"e", "f"}) {
		return errorf("refused keys %q, want [e f]", got)
	}
	if err := waiting(3, "after Flush"); err != nil {
		return err
	}
	if err := q.Remove("b"); err != nil {
		return err
	}
	q2, err := kwq.Open(name, nil)
	if err != nil {
		return err
	}
	q2.AddAfter("g", time.Hour)
	if err := q2.Close(); err != nil {
		return err
	}
	if info, err := other.Inspect("g"); err != nil || info.State != kwq.Waiting {
		return errorf("g after its Queue's Close: %+v %v, want waiting", info, err)
	}
	return nil
}

func main() {
	if len(os.Args) == 4 && os.Args[1] == "child" {
		child(os.Args[2], os.Args[3])
	}
	if len(os.Args) == 4 && os.Args[1] == "controller" {
		controllerMain(os.Args[2], os.Args[3])
	}
	add("dedup: a key queued twice is taken once", testDedup)
	add("processing/dirty: an add while processing queues at Done", testDirty)
	add("FIFO: keys come out in add order", testFIFO)
	add("AddAfter: the earliest deadline wins", testAddAfter)
	add("rate limiter: exponential delays as client-go's", testExponential)
	add("rate limiter: fast-slow delays as client-go's", testFastSlow)
	add("rate limiter: max-of delays as client-go's", testMaxOf)
	add("rate limiter: bucket burst, then 1/qps apart", testBucket)
	add("rate limiter: max wait caps the delay", testMaxWait)
	add("ShutDownQueue(true) waits for processing and queued keys", testDrainQueue)
	add("Get after ShutDownQueue: ready keys, then shutdown", testGetAfterShutdownQueue)
	add("batches and priorities: AddBatch, GetBatch, DoneGet, Stats", testBatchPriority)
	add("bad input: clear errors, nothing changed", testBadInput)
	add("two processes share one queue", testTwoProcesses)
	add("a SIGKILLed worker's keys come back", testKilledWorker)
	add("dead set and introspection: MaxRetries, DeadKeys, Revive, Inspect, Keys", testDeadSet)
	add("processing deadlines: ProcessingTimeout, Touch, ESTALE, NoDeadline", testDeadline)
	add("AddAfter policies: Replace and Latest beside earliest-wins", testAfterPolicy)
	add("a signal in DoneGet's wait: the done holds once, the get goes on", testSignalInDoneGet)
	add("DoneGetOne: a single-key worker loop, errors naming the key", testDoneGetOne)
	add("DoneGetOne after another fd's ShutDownQueue: held key finished, the get's ESHUTDOWN", testDoneGetOneAfterOtherShutdown)
	add("AddAfter gathers: ordered before later calls, sent at Close, refusals named", testAddAfterGather)
	add("long keys: a 317-byte namespace/name and a 1024-byte key everywhere, 1025 refused", testLongKeys)
	add("Name \"\": a generated unique name, as client-go's unnamed queue; it and Ephemeral go with their last fd", testUnnamed)
	add("lifecycle: New opens the queue it finds, ShutDown is this Queue's, ShutDownQueue the queue's", testLifecycle)
	add("New checks what the kernel tells of the queue it finds; concurrent News attach to one queue", testNewFits)
	add("a controller SIGKILLed in its reconciles and its drain, and stopped cleanly, restarts: every key once at a time, none lost", testControllerRestart)
	add("Done of a key not held: a no-op, counted, not reported (client-go)", testDoneNotHeld)
	add("ShutDown during ShutDownWithDrain ends it, nothing reported (client-go)", testShutDownInDrain)
	add("ShutDownWithDrain waits for the keys processing, not those queued (client-go)", testDrainQueued)
	add("a Get ended by a destroyed queue: shutdown, and Err tells EIDRM", testGetLostQueue)
	add("Adds from 8 goroutines, 8 times a ring: none lost, refusals reported once", testAddMany)
	add("without rings (ioctls only): Adds from 8 goroutines", noRings(testAddMany))
	add("50 idle workers wait in the netpoller: OS threads <= GOMAXPROCS + 5", testIdleThreads)
	add("Len and ShuttingDown make no system call with rings (their fd swapped for /dev/null)", testReadsNoSyscall)
	add("without rings (ioctls only): dedup", noRings(testDedup))
	add("without rings (ioctls only): processing/dirty", noRings(testDirty))
	add("without rings (ioctls only): batches and priorities", noRings(testBatchPriority))
	add("without rings (ioctls only): processing deadlines", noRings(testDeadline))
	add("without rings (ioctls only): DoneGetOne", noRings(testDoneGetOne))
	add("without rings (ioctls only): DoneGetOne after another fd's ShutDownQueue", noRings(testDoneGetOneAfterOtherShutdown))
	add("without rings (ioctls only): two processes", noRings(testTwoProcesses))
	add("ring lease slots (KWQ_GO_LEASES=1): processing/dirty", withLeases(testDirty))
	add("ring lease slots (KWQ_GO_LEASES=1): a SIGKILLed worker's keys come back", withLeases(testKilledWorker))
	add("ring lease slots (KWQ_GO_LEASES=1): processing deadlines", withLeases(testDeadline))
	add("ring lease slots (KWQ_GO_LEASES=1): DoneGetOne", withLeases(testDoneGetOne))
	add("ring lease slots (KWQ_GO_LEASES=1): DoneGetOne after another fd's ShutDownQueue", withLeases(testDoneGetOneAfterOtherShutdown))
	add("ring lease slots (KWQ_GO_LEASES=1): a signal in DoneGet's wait", withLeases(testSignalInDoneGet))
	add("ring lease slots (KWQ_GO_LEASES=1): ShutDownQueue(true) drains", withLeases(testDrainQueue))
	add("ring lease slots (KWQ_GO_LEASES=1): long keys", withLeases(testLongKeys))
	add("ring lease slots (KWQ_GO_LEASES=1): 50 idle workers in the netpoller", withLeases(testIdleThreads))
	add("Prometheus: the example controller's own /metrics has the queue's workqueue_* series (kwqprom)", testPrometheus)
	addBehave()

	fmt.Printf("KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: kwq_go\n    1..%d\n", len(cases))
	for _, c := range cases {
		check(c.name, run(c.fn))
	}
	if failed > 0 {
		fmt.Println("not ok 1 kwq_go")
		os.Exit(1)
	}
	fmt.Println("ok 1 kwq_go")
}
