// SPDX-License-Identifier: LGPL-2.1-or-later

// example: a controller's worker pool on kwq, in the shape of client-go's
// sample-controller: processNextWorkItem takes a key, reconciles it,
// Forgets it on success and AddRateLimited it on failure (up to
// maxRetries). The queue is held as client-go's interface: only the
// constructor is kwq's.
//
//	example [-queue NAME] [-workers N] [-keys N] [-v] [-destroy] [-metrics ADDR]
//
// With -metrics it serves the queue's workqueue_* metrics on
// http://ADDR/metrics from its own Prometheus registry (package kwqprom),
// as a controller's /metrics does, and after its keys stays up, serving,
// until SIGTERM or SIGINT.
//
// Every third key fails its first two reconciles; -v prints each failure,
// its requeue with backoff and each success (make demo shows them). Exits 0 when every key
// was reconciled exactly once.
//
// The queue outlives the process, as a controller's should: kwq.New
// opens it if a previous run left it (creates it otherwise), and
// ShutDownWithDrain ends this process's use of it, not the queue, so a
// restart goes on with what is left. -destroy removes it at the end.
package main

import (
	"flag"
	"fmt"
	"hash/fnv"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/util/workqueue"
	"kwq.dev/kwq"
	"kwq.dev/kwq/kwqprom"
)

const (
	maxRetries = 5
	baseDelay  = 5 * time.Millisecond
	maxDelay   = time.Second
)

type controller struct {
	queue      workqueue.TypedRateLimitingInterface[string]
	mu         sync.Mutex
	attempts   map[string]int
	reconciled map[string]int
	retries    atomic.Int64
	left       sync.WaitGroup
	verbose    bool
}

// backoff is the exponential limiter's delay before requeue n+1 (the
// bucket adds nothing at this rate): base * 2^n, at most maxDelay.
func (c *controller) backoff(n int) time.Duration {
	d := baseDelay << n
	if d > maxDelay {
		d = maxDelay
	}
	return d
}

// reconcile fails the first two attempts of every third key.
func (c *controller) reconcile(key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attempts[key]++
	h := fnv.New32a()
	h.Write([]byte(key))
	if h.Sum32()%3 == 0 && c.attempts[key] <= 2 {
		return fmt.Errorf("%s: transient failure %d", key, c.attempts[key])
	}
	c.reconciled[key]++
	return nil
}

func (c *controller) processNextWorkItem() bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	if err := c.reconcile(key); err != nil {
		if n := c.queue.NumRequeues(key); n < maxRetries {
			c.retries.Add(1)
			if c.verbose {
				fmt.Printf("  %v; AddRateLimited (requeue %d, backoff %v)\n",
					err, n+1, c.backoff(n))
			}
			c.queue.AddRateLimited(key)
			return true
		}
		fmt.Fprintf(os.Stderr, "example: dropping %s: %v\n", key, err)
	}
	if c.verbose {
		fmt.Printf("  %s: reconciled; Forget\n", key)
	}
	c.queue.Forget(key)
	c.left.Done()
	return true
}

func main() {
	name := flag.String("queue", "example", "queue name")
	workers := flag.Int("workers", 4, "worker goroutines")
	nkeys := flag.Int("keys", 300, "keys to reconcile")
	verbose := flag.Bool("v", false, "print every reconcile's outcome")
	destroy := flag.Bool("destroy", false, "destroy the queue at the end")
	metrics := flag.String("metrics", "", "serve /metrics on this address until SIGTERM")
	flag.Parse()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)

	q, err := kwq.New(kwq.Config{Name: *name, RateLimiter: kwq.NewMaxOfRateLimiter(
		kwq.NewItemExponentialFailureRateLimiter(baseDelay, maxDelay),
		kwq.NewBucketRateLimiter(1000, 100))})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer q.Close()
	if *metrics != "" {
		if err := serveMetrics(q, *metrics); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}

	c := &controller{queue: q, attempts: map[string]int{}, reconciled: map[string]int{},
		verbose: *verbose}
	c.left.Add(*nkeys)
	var wg sync.WaitGroup
	for i := 0; i < *workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c.processNextWorkItem() {
			}
		}()
	}
	start := time.Now()
	for i := 0; i < *nkeys; i++ {
		c.queue.Add(fmt.Sprintf("default/object-%04d", i))
	}
	c.left.Wait()
	c.queue.ShutDownWithDrain()
	wg.Wait()
	if *metrics != "" {
		fmt.Println("example: reconciled; serving metrics until SIGTERM")
		<-sigs
	}
	if *destroy {
		if err := kwq.Destroy(*name); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}

	bad := 0
	for i := 0; i < *nkeys; i++ {
		if n := c.reconciled[fmt.Sprintf("default/object-%04d", i)]; n != 1 {
			bad++
		}
	}
	fmt.Printf("example: %d keys, %d workers, %d retries, %d not reconciled exactly once, %v\n",
		*nkeys, *workers, c.retries.Load(), bad, time.Since(start).Round(time.Millisecond))
	if bad > 0 || c.retries.Load() == 0 {
		os.Exit(1)
	}
}

// serveMetrics serves q's metrics on http://addr/metrics, from a registry
// of the process's own, as a controller's metrics endpoint does.
func serveMetrics(q *kwq.Queue, addr string) error {
	reg := prometheus.NewRegistry()
	reg.MustRegister(kwqprom.NewCollector(q))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	go http.Serve(l, mux)
	fmt.Printf("example: metrics on http://%s/metrics\n", l.Addr())
	return nil
}
