// SPDX-License-Identifier: GPL-2.0

// Command kwq-gobench measures the Go package kwq against client-go's
// in-process workqueue (k8s.io/client-go/util/workqueue), the queue it
// replaces, in the same process and the same VM boot; tools/bench/bench.sh
// runs it in the benchmark VM and once on the host (-host: client-go
// only, the native figure beside the one under QEMU's TCG, which slows
// Go code about 15 times and system calls only about 3.5 times).
//
// Shapes, each over ITEMS distinct 16-byte keys:
//
//	pipeline  one producer goroutine adding every key, two consumer
//	          goroutines taking and finishing them
//	            clientgo    Add / Get + Done
//	            kwq         Add / Get + Done, two system calls a key
//	            kwq_worker  Add / DoneGet(held, 1): the worker loop of
//	                        one DONE+GET call a key
//	            kwq_batch   AddBatch(64) / DoneGet(held, 64)
//	p1c1      kwq_worker with one consumer and at most 4096 keys queued
//	          (the producer backs off on ENOSPC): the shape of
//	          kwq_ubench's kwq_single, to set the Go package's cost
//	          against libkwq's
//	idle50    (-idle, a process of its own) 50 worker goroutines in
//	          Get on an empty queue: the OS threads of the process
//	addafter  AFTER AddAfter calls of distinct keys an hour away, then
//	          ShutDown
//	            clientgo    AddAfter (to its waiting goroutine)
//	            kwq         AddAfter: gathered, sent in batches of 64
//	            kwq_try     TryAddAfter: one system call a key
//
// Results are lines "RESULT suite=go impl=... shape=... rep=... items=...
// ns=..." (suite=gohost with -host).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/client-go/util/workqueue"
	"kwq.dev/kwq"
	"kwq.dev/kwq/internal/idlework"
)

const (
	qname   = "kwq-gobench"
	batch   = 64
	bound   = 4096 // kwq_ubench's MQ_DEPTH
	faraway = time.Hour
)

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "kwq-gobench: "+format+"\n", args...)
	os.Exit(1)
}

func keys(n int) []string {
	k := make([]string, n)
	for i := range k {
		k[i] = fmt.Sprintf("k%015d", i)
	}
	return k
}

// newKwq creates the benchmark's queue afresh.
func newKwq(maxItems uint32) *kwq.Queue {
	_ = kwq.Destroy(qname)
	q, err := kwq.New(kwq.Config{Name: qname, MaxItems: maxItems,
		ErrorHandler: func(err error) { die("%v", err) }})
	if err != nil {
		die("%v", err)
	}
	return q
}

func dropKwq(q *kwq.Queue) {
	q.Close()
	if err := kwq.Destroy(qname); err != nil {
		die("%v", err)
	}
}

// basic is what the clientgo and kwq impls of the pipeline share.
type basic interface {
	Add(string)
	Get() (string, bool)
	Done(string)
	ShutDown()
}

// pipelineBasic: one producer, consumers taking with Get and Done; the
// consumer that takes the last key shuts the queue down.
func pipelineBasic(q basic, k []string, consumers int) {
	var taken atomic.Int64
	var wg sync.WaitGroup
	for c := 0; c < consumers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				key, shut := q.Get()
				if shut {
					return
				}
				q.Done(key)
				if taken.Add(1) == int64(len(k)) {
					q.ShutDown()
					return
				}
			}
		}()
	}
	for _, key := range k {
		q.Add(key)
	}
	wg.Wait()
}

// addBounded adds key, backing off while the queue is full, as
// kwq_ubench's producer does: a yield first, then sleeps of 20 us
// doubling up to 1 ms.
func addBounded(q *kwq.Queue, key string) {
	for nap := time.Duration(0); ; {
		err := q.TryAdd(key)
		if err == nil {
			return
		}
		if !errors.Is(err, unix.ENOSPC) {
			die("%v", err)
		}
		if nap == 0 {
			runtime.Gosched()
			nap = 20 * time.Microsecond
			continue
		}
		time.Sleep(nap)
		nap = min(2*nap, time.Millisecond)
	}
}

// workerOne: a single-key worker loop, DoneGetOne finishing the key held
// and taking the next; the one that takes the last of total keys
// finishes it and shuts the queue down.
func workerOne(q *kwq.Queue, taken *atomic.Int64, total int) {
	held := ""
	for {
		key, err := q.DoneGetOne(held, kwq.Forever)
		if errors.Is(err, unix.ESHUTDOWN) {
			return
		}
		if err != nil {
			die("%v", err)
		}
		if taken.Add(1) == int64(total) {
			if err := q.TryDone(key); err != nil {
				die("%v", err)
			}
			q.ShutDown()
			return
		}
		held = key
	}
}

// pipelineKwq: kwq's own calls; per is the keys per add and per DoneGet
// (DoneGetOne when 1).
func pipelineKwq(q *kwq.Queue, k []string, consumers, per int, bounded bool) {
	var taken atomic.Int64
	var wg sync.WaitGroup
	for c := 0; c < consumers; c++ {
		wg.Add(1)
		if per == 1 {
			go func() {
				defer wg.Done()
				workerOne(q, &taken, len(k))
			}()
			continue
		}
		go func() {
			defer wg.Done()
			var held []string
			for {
				got, err := q.DoneGet(held, per, kwq.Forever)
				if errors.Is(err, unix.ESHUTDOWN) {
					return
				}
				if err != nil {
					die("%v", err)
				}
				if taken.Add(int64(len(got))) == int64(len(k)) {
					if _, err := q.DoneBatch(got); err != nil {
						die("%v", err)
					}
					q.ShutDown()
					return
				}
				held = got
			}
		}()
	}
	for i := 0; i < len(k); i += per {
		switch {
		case bounded:
			addBounded(q, k[i])
		case per == 1:
			q.Add(k[i])
		default:
			if _, err := q.AddBatch(k[i:min(i+per, len(k))]); err != nil {
				die("%v", err)
			}
		}
	}
	wg.Wait()
}

func clientgo() workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueue(
		workqueue.DefaultTypedControllerRateLimiter[string]())
}

type run struct {
	impl, shape string
	items       int
	fn          func()
}

func runs(items, after int, host bool) []run {
	k, ka := keys(items), keys(after)
	var r []run
	r = append(r,
		run{"clientgo", "pipeline", items, func() {
			q := clientgo()
			pipelineBasic(q, k, 2)
		}},
		run{"clientgo", "addafter", after, func() {
			q := clientgo()
			for _, key := range ka {
				q.AddAfter(key, faraway)
			}
			q.ShutDown()
		}})
	if host {
		return r
	}
	withKwq := func(maxItems uint32, fn func(q *kwq.Queue)) func() {
		return func() {
			q := newKwq(maxItems)
			fn(q)
			dropKwq(q)
		}
	}
	return append(r,
		run{"kwq", "pipeline", items, withKwq(0, func(q *kwq.Queue) {
			pipelineBasic(q, k, 2)
		})},
		run{"kwq_worker", "pipeline", items, withKwq(0, func(q *kwq.Queue) {
			pipelineKwq(q, k, 2, 1, false)
		})},
		run{"kwq_batch", "pipeline", items, withKwq(0, func(q *kwq.Queue) {
			pipelineKwq(q, k, 2, batch, false)
		})},
		run{"kwq_worker", "p1c1", items, withKwq(bound, func(q *kwq.Queue) {
			pipelineKwq(q, k, 1, 1, true)
		})},
		run{"kwq", "addafter", after, withKwq(0, func(q *kwq.Queue) {
			for _, key := range ka {
				q.AddAfter(key, faraway)
			}
			q.ShutDown()
		})},
		run{"kwq_try", "addafter", after, withKwq(0, func(q *kwq.Queue) {
			for _, key := range ka {
				if err := q.TryAddAfter(key, faraway); err != nil {
					die("%v", err)
				}
			}
			q.ShutDown()
		})})
}

// phases: all adds, then all of a worker loop's DoneGets, in one
// goroutine, as kwq_ubench's phases of kwq_single do: the Go package's
// cost per call without contention or wake-ups.
func phases(items, rep int) {
	k := keys(items)
	q := newKwq(uint32(items))
	t0 := time.Now()
	for _, key := range k {
		q.Add(key)
	}
	t1 := time.Now()
	held := ""
	for got := 0; got < items; got++ {
		next, err := q.DoneGetOne(held, kwq.Forever)
		if err != nil {
			die("%v", err)
		}
		held = next
	}
	t2 := time.Now()
	if err := q.TryDone(held); err != nil {
		die("%v", err)
	}
	dropKwq(q)
	fmt.Printf("RESULT suite=gophases impl=kwq rep=%d items=%d put_ns=%d take_ns=%d\n",
		rep, items, t1.Sub(t0).Nanoseconds(), t2.Sub(t1).Nanoseconds())
}

// idle is -idle: idlework's 50 workers, then the process's OS threads
// against GOMAXPROCS. Its own process (bench.sh runs it alone), so that
// no earlier shape's threads count.
func idle(rep int) {
	q := newKwq(0)
	rings := q.Rings()
	n, processed, err := idlework.Run(q)
	if err != nil || processed != idlework.Keys {
		die("idle: %d of %d keys processed: %v", processed, idlework.Keys, err)
	}
	fmt.Printf("RESULT suite=goidle impl=kwq shape=idle50 rep=%d items=%d threads=%d gomaxprocs=%d rings=%v\n",
		rep, idlework.Workers, n, runtime.GOMAXPROCS(0), rings)
	dropKwq(q)
}

func main() {
	items := flag.Int("items", 200000, "keys per pipeline run")
	after := flag.Int("after", 1000000, "AddAfter calls per addafter run")
	rep := flag.Int("rep", 1, "repetition number (rotates the order)")
	host := flag.Bool("host", false, "client-go only (the host's native figures)")
	phase := flag.Bool("phases", false, "only the single-goroutine phases (-items keys)")
	idleRun := flag.Bool("idle", false, "only the OS threads of 50 idle workers")
	rings := flag.Bool("rings", true, "use the kernel's shared rings (false: ioctls only, KWQ_GO_RINGS=0)")
	only := flag.String("only", "", "only the run IMPL/SHAPE (kwq_worker/pipeline, say); "+
		"\"setup\": make the keys, run nothing (insnprof.sh's baseline)")
	cpuprof := flag.String("cpuprofile", "", "write a CPU profile of the runs to this file (go tool pprof)")
	flag.Parse()
	if *cpuprof != "" {
		f, err := os.Create(*cpuprof)
		if err != nil {
			die("%v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			die("%v", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	if !*rings {
		os.Setenv("KWQ_GO_RINGS", "0")
	}
	if *items < 1 || *after < 1 {
		die("-items and -after must be positive")
	}
	if *phase {
		phases(*items, *rep)
		return
	}
	if *idleRun {
		idle(*rep)
		return
	}
	suite := "go"
	if *host {
		suite = "gohost"
	}
	r := runs(*items, *after, *host)
	if *only == "setup" {
		return
	}
	if *only != "" {
		var picked []run
		for _, x := range r {
			if x.impl+"/"+x.shape == *only {
				picked = append(picked, x)
			}
		}
		if len(picked) == 0 {
			die("-only %s: no such run", *only)
		}
		r = picked
	}
	for i := range r {
		x := r[(i+*rep)%len(r)]
		runtime.GC()
		t0 := time.Now()
		x.fn()
		ns := time.Since(t0).Nanoseconds()
		fmt.Printf("RESULT suite=%s impl=%s shape=%s rep=%d items=%d ns=%d\n",
			suite, x.impl, x.shape, *rep, x.items, ns)
	}
}
