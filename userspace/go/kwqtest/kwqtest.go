// SPDX-License-Identifier: LGPL-2.1-or-later

// Package kwqtest is kwq's queue inside the process, for unit tests: the
// semantics of Documentation/semantics.rst (fair FIFO per priority, dedup,
// processing set, delayed adds, the rate limiters' delays, processing
// deadlines, the dead set, a Queue's own shutdown and the queue-wide one)
// with no /dev/kwq and every time taken from a clock the test may step
// (k8s.io/utils/clock/testing.FakeClock, as client-go's own tests do).
//
// A controller that holds its queue as a kwq.Interface gets a *kwq.Queue
// in production and a *kwqtest.Queue in its tests. A set of behaviour
// cases runs against both (internal/behave: on the host here, in the VM
// against the module) to keep them in step.
//
// What it does not model: the kernel's memory (byte budgets, cgroups),
// permissions and namespaces, statistics, and the bound on idle failure
// records. Every call takes one mutex; the cost of a call does not matter
// here, so walks are plain (a processing deadline is found by a scan).
package kwqtest

import (
	"cmp"
	"container/heap"
	"container/list"
	"errors"
	"fmt"
	"log"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/utils/clock"
	"kwq.dev/kwq"
)

// Config is kwq.Config's part that means something in a process, and the
// clock.
type Config struct {
	Name              string           // "": "kwqtest-" and a number
	RateLimiter       *kwq.RateLimiter // nil: DefaultControllerRateLimiter
	MaxItems          uint32           // 0: no cap
	MaxRetries        uint32           // 0: no dead set
	MaxDead           uint32           // 0: 1024
	ProcessingTimeout time.Duration    // 0: none, else 1 ms..365 days
	// Clock gives every time: delays, deadlines, Get's timeout and
	// token buckets. nil: the real clock.
	Clock        clock.Clock
	ErrorHandler func(error) // nil: the log package
}

const (
	maxDeadDefault = 1024
	timeoutMin     = time.Millisecond
	timeoutMax     = 365 * 24 * time.Hour
	tokenUnit      = 1_000_000_000_000 // bucket tokens are counted in 1e-12
)

var seq atomic.Uint64

// node is one key of the queue; every field is guarded by core.mu.
type node struct {
	key   string
	state kwq.KeyState
	prio  int32
	elem  *list.Element // in its ready FIFO or in the dead list
	hidx  int           // in the waiting heap
	order uint64        // insertion order, for keys due at the same time
	lease uint64        // processing: its run's start order, as the kernel's
	since time.Time     // ready, processing: since when; dead: last failure
	// due is the deadline of a waiting key, or the one a ready or
	// processing key remembers (hasDue).
	due    time.Time
	hasDue bool
	// processing: held by holder under lease; dirty: ready again at done
	// (at reqPrio); dying: dead at done; deadline: its processing one.
	holder      *Queue
	dirty       bool
	dying       bool
	reqPrio     int32
	deadline    time.Time
	hasDeadline bool
	failures    uint32
}

type waitHeap []*node

func (h waitHeap) Len() int { return len(h) }
func (h waitHeap) Less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].order < h[j].order
}
func (h waitHeap) Swap(i, j int)   { h[i], h[j] = h[j], h[i]; h[i].hidx = i; h[j].hidx = j }
func (h *waitHeap) Push(x any)     { n := x.(*node); n.hidx = len(*h); *h = append(*h, n) }
func (h *waitHeap) Pop() any       { old := *h; n := old[len(old)-1]; *h = old[:len(old)-1]; return n }
func (h waitHeap) first() *node    { return h[0] }
func (h waitHeap) empty() bool     { return len(h) == 0 }
func (h *waitHeap) remove(n *node) { heap.Remove(h, n.hidx) }

// core is the queue all Queues of Open share; mu guards everything.
type core struct {
	mu      sync.Mutex
	name    string
	clk     clock.Clock
	cfg     Config
	limits  []kwq.Limit
	maxWait time.Duration
	perKey  bool
	tokens  []int64     // per limiter; buckets only
	last    []time.Time // per limiter; buckets only

	nodes   map[string]*node
	ready   map[int32]*list.List
	prios   []int32 // the levels in ready with keys, highest first
	nready  int
	queued  int // ready + waiting + processing: what MaxItems bounds
	waiting waitHeap
	dead    *list.List // oldest death first
	order   uint64
	leases  uint64 // runs started: the kernel's processing list order

	shut     bool // ShutDownQueue
	draining bool // a ShutDownQueue(true) waits
	// changed is closed (and replaced) at every change a waiting call
	// may be waiting for.
	changed chan struct{}
}

// Queue is one user of a queue, as a *kwq.Queue is one fd: the keys its
// Gets take are held by it until Done, and go back to the queue when it
// is closed. Safe for concurrent use.
type Queue struct {
	c       *core
	onError func(error)
	// Guarded by c.mu.
	shut    uint32 // shutLocal, shutDrain
	held    int
	timeout time.Duration // SetProcessingTimeout: 0 the queue's
	closed  bool
	revoked map[string]bool // keys whose lease a deadline revoked
	err     error           // what ended Get, Err
	notHeld atomic.Uint64
}

const (
	shutLocal = 1 << iota
	shutDrain
)

var _ kwq.Interface = (*Queue)(nil)

// New makes a queue and the first Queue attached to it.
func New(cfg Config) (*Queue, error) {
	if cfg.Name == "" {
		cfg.Name = fmt.Sprintf("kwqtest-%d", seq.Add(1))
	}
	fail := func(err error) (*Queue, error) {
		return nil, &kwq.Error{Op: "create", Queue: cfg.Name, Err: err}
	}
	limits, maxWait, err := cfg.RateLimiter.Limits()
	if err != nil {
		return fail(err)
	}
	if t := cfg.ProcessingTimeout; t != 0 && (t < timeoutMin || t > timeoutMax) {
		return fail(fmt.Errorf("processing timeout %v, not 1ms..8760h or 0", t))
	}
	if cfg.MaxRetries > 1000000 || cfg.MaxDead > 1<<20 {
		return fail(unix.EINVAL)
	}
	if cfg.MaxDead == 0 {
		cfg.MaxDead = maxDeadDefault
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	c := &core{name: cfg.Name, clk: cfg.Clock, cfg: cfg, limits: limits, maxWait: maxWait,
		nodes: map[string]*node{}, ready: map[int32]*list.List{}, dead: list.New(),
		changed: make(chan struct{})}
	now := c.clk.Now()
	c.tokens = make([]int64, len(limits))
	c.last = make([]time.Time, len(limits))
	for i, l := range limits {
		if l.Kind == kwq.BucketLimiter {
			c.tokens[i] = int64(l.Burst) * tokenUnit
			c.last[i] = now
		} else {
			c.perKey = true
		}
	}
	return c.attach(cfg.ErrorHandler), nil
}

func (c *core) attach(h func(error)) *Queue {
	if h == nil {
		h = func(err error) { log.Print(err) }
	}
	return &Queue{c: c, onError: h, revoked: map[string]bool{}}
}

// Open attaches another Queue to q's queue, as another process's
// kwq.Open would: a controller restarted in the same test.
func (q *Queue) Open(errorHandler func(error)) *Queue { return q.c.attach(errorHandler) }

// Name is the queue's name.
func (q *Queue) Name() string { return q.c.name }

func (q *Queue) fail(op, key string, err error) error {
	return &kwq.Error{Op: op, Queue: q.c.name, Key: key, Err: err}
}

func validKey(key string) error {
	if len(key) < 1 || len(key) > kwq.KeyLenMax {
		return fmt.Errorf("invalid key: %d bytes, not 1..%d", len(key), kwq.KeyLenMax)
	}
	return nil
}

// lock takes the queue for op on key and brings it up to the clock: the
// keys due are made ready and the processing deadlines passed revoked.
func (q *Queue) lock(op, key string, withKey bool) (time.Time, error) {
	if withKey {
		if err := validKey(key); err != nil {
			return time.Time{}, q.fail(op, "", err)
		}
	}
	q.c.mu.Lock()
	if q.closed {
		q.c.mu.Unlock()
		return time.Time{}, q.fail(op, key, kwq.ErrClosed)
	}
	now := q.c.clk.Now()
	q.c.expire(now)
	return now, nil
}

func (q *Queue) unlock() { q.c.mu.Unlock() }

// notify wakes every call waiting for a change.
func (c *core) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// --- The states and their moves. ---

func (c *core) level(prio int32) *list.List {
	l := c.ready[prio]
	if l == nil {
		l = list.New()
		c.ready[prio] = l
	}
	if l.Len() == 0 {
		i, _ := slices.BinarySearchFunc(c.prios, prio, func(a, b int32) int {
			return int(int64(b) - int64(a)) // highest first
		})
		c.prios = slices.Insert(c.prios, i, prio)
	}
	return l
}

func (c *core) unlevel(n *node) {
	l := c.ready[n.prio]
	l.Remove(n.elem)
	n.elem = nil
	c.nready--
	if l.Len() == 0 {
		c.prios = slices.DeleteFunc(c.prios, func(p int32) bool { return p == n.prio })
	}
}

// toReady puts n at the tail of its level.
func (c *core) toReady(n *node, now time.Time) {
	n.state = kwq.Ready
	n.since = now
	n.elem = c.level(n.prio).PushBack(n)
	c.nready++
	c.notify()
}

func (c *core) toWaiting(n *node, due time.Time) {
	n.state = kwq.Waiting
	n.due, n.hasDue = due, false
	c.order++
	n.order = c.order
	heap.Push(&c.waiting, n)
	c.notify()
}

// leave takes a ready or waiting n out of its place; it stays queued.
func (c *core) leave(n *node) {
	switch n.state {
	case kwq.Ready:
		c.unlevel(n)
	case kwq.Waiting:
		c.waiting.remove(n)
	}
}

// idle ends n's time in the queue; its failure count stays.
func (c *core) idle(n *node) {
	n.state = kwq.Idle
	n.hasDue, n.dirty, n.dying, n.hasDeadline, n.holder = false, false, false, false, nil
	if n.failures == 0 {
		delete(c.nodes, n.key)
	}
	c.notify()
}

// newNode is the node of a key that is not queued (nil: none yet).
func (c *core) newNode(key string, n *node) (*node, error) {
	if c.cfg.MaxItems != 0 && uint32(c.queued) >= c.cfg.MaxItems {
		return nil, unix.ENOSPC
	}
	if n == nil {
		n = &node{key: key}
		c.nodes[key] = n
	}
	if n.state == kwq.Dead {
		c.dead.Remove(n.elem)
		n.elem = nil
		n.failures = 0
	}
	c.queued++
	return n, nil
}

// die moves n (not processing) to the dead set, dropping the oldest
// death beyond MaxDead.
func (c *core) die(n *node, now time.Time) {
	if n.state == kwq.Ready || n.state == kwq.Waiting || n.state == kwq.Processing {
		c.queued--
	}
	c.leave(n)
	n.state = kwq.Dead
	n.since = now
	n.hasDue, n.dirty, n.dying, n.hasDeadline, n.holder = false, false, false, false, nil
	n.elem = c.dead.PushBack(n)
	for uint32(c.dead.Len()) > c.cfg.MaxDead {
		old := c.dead.Remove(c.dead.Front()).(*node)
		delete(c.nodes, old.key)
	}
	c.notify()
}

// add is kwq's add of key at prio.
func (c *core) add(key string, prio int32, now time.Time) error {
	if c.shut {
		return unix.ESHUTDOWN
	}
	n := c.nodes[key]
	switch {
	case n == nil || n.state == kwq.Idle || n.state == kwq.Dead:
		n, err := c.newNode(key, n)
		if err != nil {
			return err
		}
		n.prio = prio
		n.hasDue = false
		c.toReady(n, now)
	case n.state == kwq.Ready:
		if prio > n.prio {
			c.unlevel(n)
			n.prio = prio
			c.toReady(n, now)
		}
	case n.state == kwq.Waiting:
		c.waiting.remove(n)
		n.prio = max(n.prio, prio)
		c.toReady(n, now)
	case n.state == kwq.Processing:
		if n.dying {
			n.dying = false
			n.failures = 0
		}
		// none: dirty(p'); delayed(r) or dirty(r): dirty(max(r, p')),
		// a remembered deadline kept (semantics.rst, "Every transition").
		if !n.dirty && !n.hasDue {
			n.reqPrio = prio
		} else {
			n.reqPrio = max(n.reqPrio, prio)
		}
		n.dirty = true
	}
	return nil
}

func pick(p kwq.AfterPolicy, old, new time.Time) time.Time {
	switch {
	case p == kwq.Replace:
		return new
	case p == kwq.Latest && new.After(old), p == kwq.Earliest && new.Before(old):
		return new
	}
	return old
}

// addAfter is kwq's add_after at prio; landed: it queued the key, made it
// ready, or moved or remembered an earlier deadline (what charges a token).
func (c *core) addAfter(key string, d time.Duration, p kwq.AfterPolicy, prio int32, now time.Time) (bool, error) {
	if d <= 0 {
		if p != kwq.Earliest {
			return false, unix.EINVAL
		}
		// A new or waiting key is made ready; a ready one is already;
		// a processing one is remembered for after its Done, once.
		landed := true
		if n := c.nodes[key]; n != nil {
			switch n.state {
			case kwq.Ready:
				landed = false
			case kwq.Processing:
				landed = !n.dirty
			}
		}
		return landed, c.add(key, prio, now)
	}
	if c.shut {
		return false, unix.ESHUTDOWN
	}
	due := now.Add(d)
	n := c.nodes[key]
	switch {
	case n == nil || n.state == kwq.Idle || n.state == kwq.Dead:
		n, err := c.newNode(key, n)
		if err != nil {
			return false, err
		}
		n.prio = prio
		c.toWaiting(n, due)
		return true, nil
	case n.state == kwq.Waiting:
		n.prio = max(n.prio, prio)
		nd := pick(p, n.due, due)
		if nd.Equal(n.due) {
			return false, nil
		}
		earlier := nd.Before(n.due)
		c.waiting.remove(n)
		c.toWaiting(n, nd)
		return earlier, nil
	default: // ready or processing: the key remembers the deadline
		if n.state == kwq.Processing && n.dying {
			n.dying = false
			n.failures = 0
		}
		// Processing: none becomes delayed(p'), delayed(r) delayed(max(r,
		// p')); a dirty key's priority is not raised by a delayed add.
		if n.state == kwq.Processing && !n.dirty {
			if !n.hasDue {
				n.reqPrio = prio
			} else {
				n.reqPrio = max(n.reqPrio, prio)
			}
		}
		if !n.hasDue {
			n.due, n.hasDue = due, true
			return true, nil
		}
		nd := pick(p, n.due, due)
		earlier := nd.Before(n.due)
		n.due = nd
		return earlier, nil
	}
}

// when is the delay of one more failure of a key with failures, and the
// token buckets' states to commit if the add lands (semantics.rst, "Rate
// limiters": the kernel's integer arithmetic).
func (c *core) when(failures uint32, now time.Time) (time.Duration, []int64) {
	var delay int64
	plan := make([]int64, len(c.limits))
	for i, l := range c.limits {
		var d int64
		switch l.Kind {
		case kwq.ExponentialLimiter:
			d = expBackoff(int64(l.Base), int64(l.Max), failures)
		case kwq.FastSlowLimiter:
			if uint64(failures)+1 <= uint64(l.MaxFast) {
				d = int64(l.Base)
			} else {
				d = int64(l.Max)
			}
		case kwq.BucketLimiter:
			d, plan[i] = c.reserve(i, now)
		}
		delay = max(delay, d)
	}
	if c.maxWait > 0 && delay > int64(c.maxWait) {
		delay = int64(c.maxWait)
	}
	return time.Duration(delay), plan
}

// expBackoff is client-go's float64(base) * 2^exp, capped at max.
func expBackoff(base, maxd int64, exp uint32) int64 {
	f := float64(base)
	if f == 0 {
		return 0
	}
	if exp >= 63 || f >= float64(uint64(1)<<(63-exp)) {
		return maxd
	}
	return min(int64(f)<<exp, maxd)
}

// reserve takes one token of bucket i at now: its delay and new count.
func (c *core) reserve(i int, now time.Time) (int64, int64) {
	l := c.limits[i]
	burst := int64(l.Burst) * tokenUnit
	t := c.tokens[i]
	elapsed := now.Sub(c.last[i])
	if elapsed < 0 {
		elapsed = 0
	}
	if t < burst {
		room := uint64(burst - t)
		if uint64(elapsed) > room/l.QPSMilli {
			t = burst
		} else {
			t += int64(uint64(elapsed) * l.QPSMilli)
		}
	} else {
		t = burst
	}
	if t < -(1<<63-1)+tokenUnit {
		t = -(1<<63 - 1)
	} else {
		t -= tokenUnit
	}
	if t >= 0 {
		return 0, t
	}
	return int64(uint64(-t) / l.QPSMilli), t
}

func (c *core) commit(plan []int64, now time.Time) {
	for i, l := range c.limits {
		if l.Kind == kwq.BucketLimiter {
			c.tokens[i], c.last[i] = plan[i], now
		}
	}
}

func (c *core) counts() bool { return c.perKey || c.cfg.MaxRetries > 0 }

// rateLimited is kwq's add_rate_limited.
func (c *core) rateLimited(key string, prio int32, now time.Time) (time.Duration, error) {
	if c.shut {
		return 0, unix.ESHUTDOWN
	}
	n := c.nodes[key]
	var failures uint32
	if n != nil {
		failures = n.failures
	}
	if c.cfg.MaxRetries > 0 && failures >= c.cfg.MaxRetries {
		return kwq.DelayDead, c.lastFailure(key, n, now)
	}
	d, plan := c.when(failures, now)
	landed, err := c.addAfter(key, d, kwq.Earliest, prio, now)
	if err != nil {
		return 0, err
	}
	if landed {
		c.commit(plan, now)
	}
	if n = c.nodes[key]; n != nil && c.counts() && n.failures < 1<<32-1 {
		n.failures++
	}
	return d, nil
}

// lastFailure: key failed once more after MaxRetries requeues.
func (c *core) lastFailure(key string, n *node, now time.Time) error {
	if n == nil {
		n = &node{key: key, state: kwq.Idle}
		c.nodes[key] = n
	}
	if n.failures < 1<<32-1 {
		n.failures++
	}
	switch n.state {
	case kwq.Processing:
		n.dying = true
		n.dirty, n.hasDue = false, false
	case kwq.Dead:
		n.since = now
		c.dead.MoveToBack(n.elem)
	default:
		c.die(n, now)
	}
	return nil
}

// finish ends n's processing (done, a revoked lease, a closed holder).
func (c *core) finish(n *node, now time.Time) {
	if h := n.holder; h != nil {
		h.held--
	}
	n.holder, n.hasDeadline = nil, false
	switch {
	case n.dying:
		c.die(n, now)
	case n.dirty:
		n.prio, n.dirty = n.reqPrio, false
		c.toReady(n, now)
	case n.hasDue && c.shut:
		c.queued--
		c.idle(n)
	case n.hasDue && n.due.After(now):
		n.prio = n.reqPrio
		c.toWaiting(n, n.due)
	case n.hasDue:
		n.prio, n.hasDue = n.reqPrio, false
		c.toReady(n, now)
	default:
		c.queued--
		c.idle(n)
	}
}

// expire makes the keys due ready and revokes the processing deadlines
// passed, each at its own time and in time order, as the kernel's timer
// would have: a key a revocation requeues after a short delay is ready
// by now if that delay passed too.
func (c *core) expire(now time.Time) {
	var late []*node
	for _, n := range c.nodes {
		if n.state == kwq.Processing && n.hasDeadline && !n.deadline.After(now) {
			late = append(late, n)
		}
	}
	// by (deadline, lease), the kernel's due tree's order
	slices.SortFunc(late, func(a, b *node) int {
		if d := a.deadline.Compare(b.deadline); d != 0 {
			return d
		}
		return cmp.Compare(a.lease, b.lease)
	})
	for {
		due := !c.waiting.empty() && !c.waiting.first().due.After(now)
		if len(late) > 0 && (!due || late[0].deadline.Before(c.waiting.first().due)) {
			n := late[0]
			late = late[1:]
			t := n.deadline
			n.holder.revoked[n.key] = true
			if !c.shut {
				// as AddRateLimited at the key's priority
				c.rateLimited(n.key, n.prio, t)
			}
			c.finish(n, t) // and its Done
			continue
		}
		if !due {
			return
		}
		n := heap.Pop(&c.waiting).(*node)
		n.hasDue = false
		c.toReady(n, n.due)
	}
}

// next is the time of the next change expire would make (false: none).
func (c *core) next() (time.Time, bool) {
	var t time.Time
	ok := false
	if !c.waiting.empty() {
		t, ok = c.waiting.first().due, true
	}
	for _, n := range c.nodes {
		if n.state == kwq.Processing && n.hasDeadline && (!ok || n.deadline.Before(t)) {
			t, ok = n.deadline, true
		}
	}
	return t, ok
}

// take hands out the first key of the highest level to q.
func (c *core) take(q *Queue, now time.Time) (string, error) {
	if len(c.prios) == 0 {
		return "", unix.EAGAIN
	}
	t := q.timeout
	if t == 0 {
		t = c.cfg.ProcessingTimeout
	}
	n := c.ready[c.prios[0]].Front().Value.(*node)
	c.unlevel(n)
	n.state = kwq.Processing
	n.since = now
	n.holder = q
	c.leases++
	n.lease = c.leases
	n.reqPrio = n.prio
	n.dirty, n.dying = false, false
	if n.hasDue && !n.due.After(now) {
		n.hasDue = false // the run it asked for
	}
	n.hasDeadline = t > 0
	if n.hasDeadline {
		n.deadline = now.Add(t)
	}
	q.held++
	delete(q.revoked, n.key)
	return n.key, nil
}

// wait sleeps until the queue changes, the next expiry or deadline,
// holding nothing; false once deadline passed. Called with c.mu held,
// returns with it held.
func (q *Queue) wait(deadline time.Time, forever bool) bool {
	c := q.c
	now := c.clk.Now()
	if !forever && !now.Before(deadline) {
		return false
	}
	ch := c.changed
	t, ok := c.next()
	if !forever && (!ok || deadline.Before(t)) {
		t, ok = deadline, true
	}
	c.mu.Unlock()
	if ok {
		timer := c.clk.NewTimer(t.Sub(now))
		select {
		case <-ch:
		case <-timer.C():
		}
		timer.Stop()
	} else {
		<-ch
	}
	c.mu.Lock()
	c.expire(c.clk.Now())
	return true
}

// --- What a controller calls. ---

func (q *Queue) report(err error) {
	if err != nil {
		q.onError(err)
	}
}

// TryAdd queues key (client-go Add).
func (q *Queue) TryAdd(key string) error { return q.TryAddPriority(key, 0) }

// TryAddPriority queues key at priority prio.
func (q *Queue) TryAddPriority(key string, prio int32) error {
	now, err := q.lock("add", key, true)
	if err != nil {
		return err
	}
	defer q.unlock()
	if q.shut != 0 {
		return q.fail("add", key, unix.ESHUTDOWN)
	}
	if err := q.c.add(key, prio, now); err != nil {
		return q.fail("add", key, err)
	}
	return nil
}

// AddBatch queues keys in order; n took effect.
func (q *Queue) AddBatch(keys []string) (int, error) {
	if len(keys) == 0 || len(keys) > kwq.BatchMax {
		return 0, q.fail("add", "", fmt.Errorf("%d keys, not 1..%d", len(keys), kwq.BatchMax))
	}
	for i, k := range keys {
		if err := q.TryAdd(k); err != nil {
			return i, err
		}
	}
	return len(keys), nil
}

// TryAddAfter queues key once d has passed; the earlier deadline wins.
func (q *Queue) TryAddAfter(key string, d time.Duration) error {
	return q.TryAddAfterPolicy(key, d, kwq.Earliest)
}

// TryAddAfterPolicy is TryAddAfter with p choosing the deadline.
func (q *Queue) TryAddAfterPolicy(key string, d time.Duration, p kwq.AfterPolicy) error {
	if p != kwq.Earliest && p != kwq.Replace && p != kwq.Latest {
		return q.fail("add-after", key, fmt.Errorf("unknown AfterPolicy %d", p))
	}
	if p != kwq.Earliest && d <= 0 {
		return q.fail("add-after", key, fmt.Errorf("delay %v: a policy needs a positive delay: %w", d, unix.EINVAL))
	}
	now, err := q.lock("add-after", key, true)
	if err != nil {
		return err
	}
	defer q.unlock()
	if q.shut != 0 {
		return q.fail("add-after", key, unix.ESHUTDOWN)
	}
	if _, err := q.c.addAfter(key, d, p, 0, now); err != nil {
		return q.fail("add-after", key, err)
	}
	return nil
}

// TryAddRateLimited queues key after its limiters' delay, returned
// (kwq.DelayDead: it moved to the dead set).
func (q *Queue) TryAddRateLimited(key string) (time.Duration, error) {
	now, err := q.lock("add-rate-limited", key, true)
	if err != nil {
		return 0, err
	}
	defer q.unlock()
	if q.shut != 0 {
		return 0, q.fail("add-rate-limited", key, unix.ESHUTDOWN)
	}
	d, err := q.c.rateLimited(key, 0, now)
	if err != nil {
		return 0, q.fail("add-rate-limited", key, err)
	}
	return d, nil
}

func (q *Queue) silent(err error) {
	if err != nil && !errors.Is(err, unix.ESHUTDOWN) {
		q.onError(err)
	}
}

// Add is TryAdd with the error to the ErrorHandler; dropped after a
// shutdown, as client-go's.
func (q *Queue) Add(key string) { q.silent(q.TryAdd(key)) }

// AddAfter is TryAddAfter with the error to the ErrorHandler.
func (q *Queue) AddAfter(key string, d time.Duration) { q.silent(q.TryAddAfter(key, d)) }

// AddRateLimited is TryAddRateLimited with the error to the ErrorHandler.
func (q *Queue) AddRateLimited(key string) {
	_, err := q.TryAddRateLimited(key)
	q.silent(err)
}

// GetBatch takes up to max ready keys, waiting at most timeout for the
// first (kwq.Forever: no limit; 0: EAGAIN at once; ETIMEDOUT when it
// passes; ESHUTDOWN once shut down with nothing ready).
func (q *Queue) GetBatch(max int, timeout time.Duration) ([]string, error) {
	if max < 1 || max > kwq.BatchMax {
		return nil, q.fail("get", "", fmt.Errorf("max %d keys, not 1..%d", max, kwq.BatchMax))
	}
	now, err := q.lock("get", "", false)
	if err != nil {
		return nil, err
	}
	defer q.unlock()
	deadline := now.Add(timeout)
	for {
		if q.shut != 0 {
			return nil, q.fail("get", "", unix.ESHUTDOWN)
		}
		if q.closed {
			return nil, q.fail("get", "", kwq.ErrClosed)
		}
		var keys []string
		for len(keys) < max {
			k, err := q.c.take(q, q.c.clk.Now())
			if err != nil {
				break
			}
			keys = append(keys, k)
		}
		if len(keys) > 0 {
			return keys, nil
		}
		if q.c.shut {
			return nil, q.fail("get", "", unix.ESHUTDOWN)
		}
		if timeout == 0 {
			return nil, q.fail("get", "", unix.EAGAIN)
		}
		if !q.wait(deadline, timeout < 0) {
			return nil, q.fail("get", "", unix.ETIMEDOUT)
		}
	}
}

// TryGet takes one key, waiting at most timeout.
func (q *Queue) TryGet(timeout time.Duration) (string, error) {
	keys, err := q.GetBatch(1, timeout)
	if err != nil {
		return "", err
	}
	return keys[0], nil
}

// DoneGetOne finishes done ("": none), then takes one key; if done
// cannot be finished no key is taken.
func (q *Queue) DoneGetOne(done string, timeout time.Duration) (string, error) {
	if done != "" {
		if err := q.TryDone(done); err != nil {
			return "", err
		}
	}
	return q.TryGet(timeout)
}

// Get waits for a key; shutdown is true once this Queue or the queue
// is shut down (with nothing ready), or it is closed (Err tells).
func (q *Queue) Get() (string, bool) {
	k, err := q.TryGet(kwq.Forever)
	if err != nil {
		if !errors.Is(err, unix.ESHUTDOWN) {
			q.c.mu.Lock()
			q.err = err
			q.c.mu.Unlock()
			q.onError(err)
		}
		return "", true
	}
	return k, false
}

// Err is the error that ended a Get other than a shutdown, or nil.
func (q *Queue) Err() error {
	q.c.mu.Lock()
	defer q.c.mu.Unlock()
	return q.err
}

// holding finds key processing under q, or the error of a call that
// names it.
func (q *Queue) holding(key string) (*node, error) {
	n := q.c.nodes[key]
	if n != nil && n.state == kwq.Processing && n.holder == q {
		return n, nil
	}
	if q.revoked[key] {
		return nil, unix.ESTALE
	}
	if n != nil && n.state == kwq.Processing {
		return nil, unix.EPERM
	}
	return nil, unix.ENOENT
}

// TryDone finishes key: ENOENT if it is not processing, EPERM if
// another Queue holds it, ESTALE if its deadline took it back.
func (q *Queue) TryDone(key string) error {
	now, err := q.lock("done", key, true)
	if err != nil {
		return err
	}
	defer q.unlock()
	n, err := q.holding(key)
	if err != nil {
		return q.fail("done", key, err)
	}
	q.c.finish(n, now)
	return nil
}

// Done is TryDone; a key not held is a no-op (NotHeldDones counts it).
func (q *Queue) Done(key string) {
	err := q.TryDone(key)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EPERM) {
		q.notHeld.Add(1)
		return
	}
	q.report(err)
}

// NotHeldDones counts the Dones of keys q did not hold.
func (q *Queue) NotHeldDones() uint64 { return q.notHeld.Load() }

// TryForget clears key's failure count (a dead key keeps it).
func (q *Queue) TryForget(key string) error {
	_, err := q.lock("forget", key, true)
	if err != nil {
		return err
	}
	defer q.unlock()
	if n := q.c.nodes[key]; n != nil && n.state != kwq.Dead {
		n.failures = 0
		if n.state == kwq.Idle {
			delete(q.c.nodes, key)
		}
	}
	return nil
}

// Forget is TryForget with the error to the ErrorHandler.
func (q *Queue) Forget(key string) { q.report(q.TryForget(key)) }

// TryNumRequeues is key's failure count.
func (q *Queue) TryNumRequeues(key string) (int, error) {
	_, err := q.lock("num-requeues", key, true)
	if err != nil {
		return 0, err
	}
	defer q.unlock()
	if n := q.c.nodes[key]; n != nil {
		return int(n.failures), nil
	}
	return 0, nil
}

// NumRequeues is TryNumRequeues; 0 on error.
func (q *Queue) NumRequeues(key string) int {
	n, err := q.TryNumRequeues(key)
	q.report(err)
	return n
}

// TryLen is the number of keys ready.
func (q *Queue) TryLen() (int, error) {
	_, err := q.lock("len", "", false)
	if err != nil {
		return 0, err
	}
	defer q.unlock()
	return q.c.nready, nil
}

// Len is TryLen; 0 on error.
func (q *Queue) Len() int {
	n, err := q.TryLen()
	q.report(err)
	return n
}

// Remove takes key out of the queue: ENOENT if it is not queued, EBUSY
// if it is processing and not queued again.
func (q *Queue) Remove(key string) error {
	_, err := q.lock("remove", key, true)
	if err != nil {
		return err
	}
	defer q.unlock()
	c := q.c
	n := c.nodes[key]
	switch {
	case n == nil || n.state == kwq.Idle || n.state == kwq.Dead:
		return q.fail("remove", key, unix.ENOENT)
	case n.state == kwq.Processing:
		if !n.dirty && !n.hasDue {
			return q.fail("remove", key, unix.EBUSY)
		}
		n.dirty, n.hasDue = false, false
	default:
		c.leave(n)
		c.queued--
		c.idle(n)
	}
	return nil
}

// SetProcessingTimeout sets the processing deadline of the keys q takes
// from now on: 0 the queue's, kwq.NoDeadline none, else 1 ms..365 days.
func (q *Queue) SetProcessingTimeout(d time.Duration) error {
	if d != 0 && d != kwq.NoDeadline && (d < timeoutMin || d > timeoutMax) {
		return q.fail("set-processing-timeout", "", unix.EINVAL)
	}
	q.c.mu.Lock()
	defer q.c.mu.Unlock()
	q.timeout = d
	return nil
}

// Touch moves the processing deadline of key, held by q, to d from now
// (0: the queue's timeout; kwq.NoDeadline: none).
func (q *Queue) Touch(key string, d time.Duration) error {
	if d != 0 && d != kwq.NoDeadline && (d < timeoutMin || d > timeoutMax) {
		return q.fail("touch", key, unix.EINVAL)
	}
	now, err := q.lock("touch", key, true)
	if err != nil {
		return err
	}
	defer q.unlock()
	n, err := q.holding(key)
	if err != nil {
		return q.fail("touch", key, err)
	}
	if d == 0 {
		d = q.c.cfg.ProcessingTimeout
	}
	n.hasDeadline = d > 0
	if n.hasDeadline {
		n.deadline = now.Add(d)
	}
	q.c.notify()
	return nil
}

func (q *Queue) info(n *node, now time.Time) kwq.KeyInfo {
	ki := kwq.KeyInfo{Key: n.key, State: n.state, Priority: n.prio, Failures: n.failures}
	switch n.state {
	case kwq.Ready, kwq.Processing, kwq.Dead:
		ki.Since = now.Sub(n.since)
	}
	if n.state == kwq.Processing {
		ki.Holder = uint32(os.Getpid())
		if n.dirty {
			ki.Flags |= 1
		}
		if n.hasDue && !n.dirty {
			ki.Flags |= 2
		}
		if n.dying {
			ki.Flags |= 4
		}
		if n.hasDeadline {
			ki.Timeout = n.deadline.Sub(now)
		}
	}
	if n.state == kwq.Waiting || n.hasDue {
		ki.Due, ki.HasDue = n.due.Sub(now), true
		if n.state != kwq.Waiting {
			ki.Flags |= 8
		}
	}
	return ki
}

// Inspect tells where key is: ENOENT if the queue has no record of it.
func (q *Queue) Inspect(key string) (kwq.KeyInfo, error) {
	now, err := q.lock("inspect", key, true)
	if err != nil {
		return kwq.KeyInfo{}, err
	}
	defer q.unlock()
	n := q.c.nodes[key]
	if n == nil {
		return kwq.KeyInfo{}, q.fail("inspect", key, unix.ENOENT)
	}
	return q.info(n, now), nil
}

// DeadKeys lists the dead set, oldest death first.
func (q *Queue) DeadKeys() ([]kwq.KeyInfo, error) {
	now, err := q.lock("keys", "", false)
	if err != nil {
		return nil, err
	}
	defer q.unlock()
	var out []kwq.KeyInfo
	for e := q.c.dead.Front(); e != nil; e = e.Next() {
		out = append(out, q.info(e.Value.(*node), now))
	}
	return out, nil
}

func (q *Queue) revive(n *node, now time.Time) error {
	c := q.c
	if c.shut {
		return unix.ESHUTDOWN
	}
	if _, err := c.newNode(n.key, n); err != nil {
		return err
	}
	c.toReady(n, now)
	return nil
}

// Revive puts a dead key back at the tail of its priority.
func (q *Queue) Revive(key string) error {
	now, err := q.lock("revive", key, true)
	if err != nil {
		return err
	}
	defer q.unlock()
	n := q.c.nodes[key]
	if n == nil || n.state != kwq.Dead {
		return q.fail("revive", key, unix.ENOENT)
	}
	if err := q.revive(n, now); err != nil {
		return q.fail("revive", key, err)
	}
	return nil
}

// ReviveAll revives the dead keys, oldest death first, up to the first
// error; it returns how many it revived.
func (q *Queue) ReviveAll() (int, error) {
	now, err := q.lock("revive", "", false)
	if err != nil {
		return 0, err
	}
	defer q.unlock()
	i := 0
	for e := q.c.dead.Front(); e != nil; i++ {
		n := e.Value.(*node)
		e = e.Next()
		if err := q.revive(n, now); err != nil {
			return i, q.fail("revive", n.key, err)
		}
	}
	return i, nil
}

func (q *Queue) purge(key string, all bool) (int, error) {
	_, err := q.lock("purge", key, !all)
	if err != nil {
		return 0, err
	}
	defer q.unlock()
	c := q.c
	if all {
		i := c.dead.Len()
		for e := c.dead.Front(); e != nil; e = e.Next() {
			delete(c.nodes, e.Value.(*node).key)
		}
		c.dead.Init()
		return i, nil
	}
	n := c.nodes[key]
	if n == nil || n.state != kwq.Dead {
		return 0, q.fail("purge", key, unix.ENOENT)
	}
	c.dead.Remove(n.elem)
	delete(c.nodes, key)
	return 1, nil
}

// Purge drops a dead key and its count.
func (q *Queue) Purge(key string) error {
	_, err := q.purge(key, false)
	return err
}

// PurgeAll empties the dead set; it returns how many keys it dropped.
func (q *Queue) PurgeAll() (int, error) { return q.purge("", true) }

// ShutDown ends q's use of the queue: its Gets return shutdown, its adds
// are dropped, its Dones still finish what it holds.
func (q *Queue) ShutDown() { q.shutDown(false) }

// ShutDownWithDrain is ShutDown, then waits until the keys q holds are
// finished (a ShutDown meanwhile ends the wait).
func (q *Queue) ShutDownWithDrain() { q.shutDown(true) }

func (q *Queue) shutDown(drain bool) {
	c := q.c
	c.mu.Lock()
	defer c.mu.Unlock()
	q.shut = shutLocal
	if drain {
		q.shut |= shutDrain
	}
	c.notify()
	for drain && q.shut&shutDrain != 0 && q.held > 0 && !q.closed {
		ch := c.changed
		c.mu.Unlock()
		<-ch
		c.mu.Lock()
	}
}

// ShuttingDown reports whether q or the queue is shut down.
func (q *Queue) ShuttingDown() bool {
	q.c.mu.Lock()
	defer q.c.mu.Unlock()
	return q.shut != 0 || q.c.shut
}

// ShutDownQueue shuts the queue down for every Queue: adds fail with
// ESHUTDOWN, the waiting keys are dropped, Gets take what is ready, then
// ESHUTDOWN. With drain it waits until nothing is ready or processing;
// a ShutDownQueue(false) meanwhile ends that wait with ECANCELED.
func (q *Queue) ShutDownQueue(drain bool) error {
	now, err := q.lock("shutdown", "", false)
	if err != nil {
		return err
	}
	defer q.unlock()
	c := q.c
	if !c.shut {
		c.shut = true
		for !c.waiting.empty() {
			n := heap.Pop(&c.waiting).(*node)
			c.queued--
			c.idle(n)
		}
	}
	if !drain {
		c.draining = false
		c.notify()
		return nil
	}
	c.draining = true
	for c.queued > 0 {
		if !c.draining {
			return q.fail("shutdown", "", unix.ECANCELED)
		}
		q.wait(now, true)
	}
	c.draining = false
	return nil
}

// Flush is a no-op: nothing is gathered.
func (q *Queue) Flush() {}

// Close detaches q: the keys it holds go back to the tail of their
// priority (a dying key to the dead set), as when a process dies.
func (q *Queue) Close() error {
	c := q.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if q.closed {
		return q.fail("close", "", kwq.ErrClosed)
	}
	q.closed = true
	now := c.clk.Now()
	// in start order, as the kernel walks its processing list
	var held []*node
	for _, n := range c.nodes {
		if n.state == kwq.Processing && n.holder == q {
			held = append(held, n)
		}
	}
	slices.SortFunc(held, func(a, b *node) int { return cmp.Compare(a.lease, b.lease) })
	for _, n := range held {
		q.held--
		n.holder, n.hasDeadline = nil, false
		if n.dying {
			c.die(n, now)
			continue
		}
		// At max(p, r) if a requeue was pending, D kept.
		if n.dirty || n.hasDue {
			n.prio = max(n.prio, n.reqPrio)
		}
		n.dirty = false
		c.toReady(n, now)
	}
	q.revoked = map[string]bool{}
	c.notify()
	return nil
}
