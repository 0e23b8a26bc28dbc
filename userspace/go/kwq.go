// SPDX-License-Identifier: LGPL-2.1-or-later

// Package kwq is a keyed work queue in the Linux kernel (/dev/kwq) with
// the API of client-go's util/workqueue: a *Queue is a
// workqueue.TypedRateLimitingInterface[string], so a controller switches
// by changing its constructor:
//
//	q := workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[string]{Name: "foo"})
//	q, err := kwq.New(kwq.Config{Name: "foo", RateLimiter: kwq.DefaultControllerRateLimiter()})
//
// The queue lives in the kernel and outlives the processes that use it:
// New opens the named queue if it exists (creates it otherwise), a
// process that dies hands the keys it was processing back to the queue,
// and ShutDown ends this Queue's use of it, not the queue: the next
// process (a restarted controller) goes on with the keys left. Pure Go
// over the ioctls (golang.org/x/sys/unix), no cgo.
//
// The methods of the client-go interface cannot return errors; they pass
// them to Config.ErrorHandler. Each has a Try variant that returns them.
// Errors are *Error, which names the queue and the key and wraps the
// errno: errors.Is(err, unix.ESHUTDOWN).
package kwq

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DefaultDevice is the device a Config with no Device uses.
const DefaultDevice = "/dev/kwq"

// ErrClosed: the Queue was closed by Close.
var ErrClosed = errors.New("queue closed")

// ErrConflict: New found the queue of its name with options that
// conflict with its Config (see New for what it can compare).
var ErrConflict = errors.New("queue exists with other options")

// Error is the error of an operation on a queue.
type Error struct {
	Op    string // "add", "get", ...
	Queue string // the queue's name
	Key   string // the key, if the operation had one
	Err   error  // a unix.Errno, ErrClosed or a validation error
}

func (e *Error) Error() string {
	if e.Key != "" {
		return fmt.Sprintf("kwq: %s of key %q on queue %q: %v", e.Op, e.Key, e.Queue, e.Err)
	}
	return fmt.Sprintf("kwq: %s on queue %q: %v", e.Op, e.Queue, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Config names a queue to create, the way client-go's
// TypedRateLimitingQueueConfig and rate limiter constructors do.
type Config struct {
	Name        string       // 1..63 bytes of [A-Za-z0-9._-]; "": a generated unique name
	RateLimiter *RateLimiter // nil: DefaultControllerRateLimiter
	Mode        uint32       // permission bits for Open by others; 0 = 0600
	MaxItems    uint32       // most keys queued at once (ENOSPC beyond), 0 = no cap
	// MaxRetries gives the queue a dead set: the rate-limited add of a key
	// that already failed this many times moves it there instead of
	// requeueing it; 0 = none. MaxDead bounds the set (0 = 1024).
	MaxRetries, MaxDead uint32
	// ProcessingTimeout is the processing deadline of every Get: a key
	// processing longer goes back to the queue as a failure (as
	// AddRateLimited + Done) and its holder's Done gets ESTALE; 0 = none,
	// else 1 ms..365 days. Touch is the heartbeat that moves it.
	ProcessingTimeout time.Duration
	// Ephemeral: the queue is destroyed, keys and all, when the last fd
	// attached to it (of any process) is closed: client-go's lifetime.
	// Without it a queue outlives its processes until Destroy, so that a
	// restarted controller finds its keys. New of a queue that exists
	// takes it as it is. An unnamed queue (Name "") is always ephemeral:
	// nobody could find it again.
	Ephemeral bool
	Device    string // "" = DefaultDevice
	// ErrorHandler receives the errors of the methods that cannot return
	// one (Add, Done, ...); nil logs them with the log package.
	ErrorHandler func(error)
}

// Queue is one fd of /dev/kwq attached to a queue. Safe for concurrent
// use by many goroutines; keys it takes with Get are leased to it until
// Done, and go back to the queue if it is closed (or its process dies).
type Queue struct {
	fd   int
	name string
	// ring is the fd's shared ring, nil without one (ring.go).
	ring *ring
	// spare is a record buffer kept for the worker loop's next call.
	spare atomic.Pointer[recBuf]
	// leasing: single-key gets take lease slots (KWQ_GO_LEASES=1).
	leasing bool
	// w is the keys taken and the goroutines waiting for keys (wait.go).
	w waitState
	// leases are the keys handed out from ring lease slots: what their
	// Done finishes (KWQ_SQE_DONE_LEASE, no key lookup in the kernel).
	lmu    sync.Mutex
	leases map[string]taken
	// shutCh is closed by ShutDown: the Gets waiting wake up for it.
	shutCh chan struct{}
	// shut is this Queue's own shutdown: shutLocal, and shutDrain while
	// a ShutDownWithDrain waits. Written under life.mu.
	shut atomic.Uint32
	// held counts the keys this Queue's Gets took and its Dones have not
	// finished yet: what ShutDownWithDrain waits for.
	held atomic.Int64
	// notHeld counts the Dones of keys this Queue did not hold (client-go:
	// a no-op), NotHeldDones.
	notHeld atomic.Uint64
	life    lifecycle
	// state is stClosed and stGathered, written under after.mu: one
	// load tells every call whether it has more to do than its own.
	state   atomic.Uint32
	lease   atomic.Uint64 // KWQ_IOC_GET's processing_timeout_ns
	onError func(error)
	// after holds the AddAfter calls gathered for one batch (after.go).
	after afterGather
	// The buffer of the single-key calls that send a key (Add, Done...).
	send oneSlot
}

const (
	stClosed   = 1 << iota // Close was called
	stGathered             // after holds keys
)

// NoDeadline as a processing timeout: the keys taken have none, whatever
// the queue's ProcessingTimeout.
const NoDeadline time.Duration = -1

const (
	processingTimeoutMin = uint64(time.Millisecond)
	processingTimeoutMax = uint64(365 * 24 * time.Hour)
)

// processingNs is the ABI's form of a processing timeout d: 0 the
// queue's, NoDeadline none, else 1 ms..365 days.
func processingNs(d time.Duration) (uint64, error) {
	switch {
	case d == 0:
		return 0, nil
	case d == NoDeadline:
		return timeoutNone, nil
	case d > 0 && uint64(d) >= processingTimeoutMin && uint64(d) <= processingTimeoutMax:
		return uint64(d), nil
	}
	return 0, fmt.Errorf("processing timeout %v, not 1ms..8760h, 0 or NoDeadline", d)
}

var _ interface {
	Add(string)
	Len() int
	Get() (string, bool)
	Done(string)
	ShutDown()
	ShutDownWithDrain()
	ShuttingDown() bool
	AddAfter(string, time.Duration)
	AddRateLimited(string)
	Forget(string)
	NumRequeues(string) int
} = (*Queue)(nil)

func validName(name string) error {
	if len(name) == 0 || len(name) >= nameLen {
		return fmt.Errorf("invalid queue name: %d bytes, not 1..%d", len(name), nameLen-1)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("invalid queue name: byte %q not in [A-Za-z0-9._-]", c)
		}
	}
	return nil
}

// validKey is small enough to be inlined in the hot paths.
func validKey(key string) error {
	if uint(len(key))-1 < KeyLenMax {
		return nil
	}
	return badKey(len(key))
}

func badKey(n int) error {
	return fmt.Errorf("invalid key: %d bytes, not 1..%d", n, KeyLenMax)
}

// ioctl runs a call that may wait in the kernel: unix.Syscall tells the
// scheduler, which runs other goroutines on the thread's P meanwhile.
func ioctl(fd int, req uintptr, arg unsafe.Pointer) error {
	for {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}

func openDev(dev string) (int, error) {
	if dev == "" {
		dev = DefaultDevice
	}
	return unix.Open(dev, unix.O_RDWR|unix.O_CLOEXEC, 0)
}

func handler(h func(error)) func(error) {
	if h != nil {
		return h
	}
	return func(err error) { log.Print(err) }
}

// unnamedPrefix starts the names New generates for Config.Name "".
const unnamedPrefix = "unnamed-"

// unnamedTries is how often New draws a new name when the generated one
// is taken (EEXIST); 96 random bits make that as good as never.
const unnamedTries = 4

// unnamedName is a new queue name: unnamedPrefix and 96 random bits in
// hex, 32 bytes in all.
func unnamedName() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return unnamedPrefix + hex.EncodeToString(b[:]), nil
}

// New attaches a new fd to the queue cfg.Name: it opens the queue if it
// exists, else creates it with cfg's options (a create that finds the
// name taken by a process that created it at the same time opens it). A
// queue that exists is checked against cfg as far as the kernel tells
// (KWQ_IOC_STATS; it does not report a queue's options): ErrConflict if
// it has a dead set and cfg.MaxRetries is 0, ESHUTDOWN if it was shut
// down queue-wide (ShutDownQueue). Its other options (rate limiters,
// Mode, MaxItems, ProcessingTimeout, MaxDead) are those of its creator,
// whatever cfg says. With cfg.Name "" (client-go's unnamed queue) it
// creates a queue of a generated unique name, "unnamed-" and 24 hex
// digits, which Queue.Name tells; it is ephemeral (Config.Ephemeral):
// destroyed with the last fd attached to it.
func New(cfg Config) (*Queue, error) {
	if cfg.Name != "" {
		return create(cfg, false)
	}
	for i := 0; ; i++ {
		name, err := unnamedName()
		if err != nil {
			return nil, &Error{Op: "create", Err: err}
		}
		cfg.Name = name
		cfg.Ephemeral = true
		q, err := create(cfg, true)
		if i+1 == unnamedTries || !errors.Is(err, unix.EEXIST) {
			return q, err
		}
	}
}

// openRaceTries is how often New creates again when the queue it found
// (EEXIST) is gone by the time it opens it (ENOENT): destroyed between.
const openRaceTries = 4

// create is New of a named queue; exclusive: EEXIST if it exists.
func create(cfg Config, exclusive bool) (*Queue, error) {
	fail := func(err error) (*Queue, error) {
		return nil, &Error{Op: "create", Queue: cfg.Name, Err: err}
	}
	if err := validName(cfg.Name); err != nil {
		return fail(err)
	}
	rl := cfg.RateLimiter
	var a createArgs
	if rl != nil {
		if err := rl.check(); err != nil {
			return fail(err)
		}
		a.NrLimits = uint32(len(rl.limits))
		copy(a.Limits[:], rl.limits)
		a.MaxWaitNs = uint64(rl.maxWait)
	}
	if cfg.Mode > 0o777 {
		return fail(fmt.Errorf("mode %#o is not a permission mode", cfg.Mode))
	}
	copy(a.Name[:], cfg.Name)
	if cfg.Ephemeral {
		a.Flags = createEphem
	}
	a.Mode = cfg.Mode
	a.MaxItems = cfg.MaxItems
	a.MaxRetries = cfg.MaxRetries
	a.MaxDead = cfg.MaxDead
	if cfg.ProcessingTimeout != 0 {
		ns, err := processingNs(cfg.ProcessingTimeout)
		if err != nil || ns == timeoutNone {
			return fail(fmt.Errorf("processing timeout %v, not 1ms..8760h or 0", cfg.ProcessingTimeout))
		}
		a.ProcessingTimeoutNs = ns
	}
	for i := 1; ; i++ {
		fd, err := openDev(cfg.Device)
		if err != nil {
			return fail(err)
		}
		pa := &a
		err = ioctl(fd, iocCreate, unsafe.Pointer(pa))
		if err == nil {
			return newQueue(fd, cfg.Name, cfg.ErrorHandler)
		}
		unix.Close(fd)
		if err != unix.EEXIST || exclusive {
			return fail(err)
		}
		q, err := OpenDevice(cfg.Device, cfg.Name, cfg.ErrorHandler)
		if err == nil {
			return q.fits(cfg, &a)
		}
		if !errors.Is(err, unix.ENOENT) || i == openRaceTries {
			return nil, err
		}
	}
}

// Open attaches a new fd to the existing queue name, shared with the
// processes that use it (ENOENT if there is none), whatever its options
// and state. errorHandler is as Config.ErrorHandler.
func Open(name string, errorHandler func(error)) (*Queue, error) {
	return OpenDevice(DefaultDevice, name, errorHandler)
}

// OpenDevice is Open through the device dev.
func OpenDevice(dev, name string, errorHandler func(error)) (*Queue, error) {
	fd, err := nameIoctl(dev, "open", iocOpen, name)
	if err != nil {
		return nil, err
	}
	return newQueue(fd, name, errorHandler)
}

// Destroy destroys the queue name, with the keys in it: fds attached to
// it fail with EIDRM (their Gets return shutdown, Err tells EIDRM).
func Destroy(name string) error {
	fd, err := nameIoctl(DefaultDevice, "destroy", iocDestroy, name)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

func nameIoctl(dev, op string, req uintptr, name string) (int, error) {
	if err := validName(name); err != nil {
		return -1, &Error{Op: op, Queue: name, Err: err}
	}
	a := &openArgs{}
	copy(a.Name[:], name)
	fd, err := openDev(dev)
	if err != nil {
		return -1, &Error{Op: op, Queue: name, Err: err}
	}
	if err := ioctl(fd, req, unsafe.Pointer(a)); err != nil {
		unix.Close(fd)
		return -1, &Error{Op: op, Queue: name, Err: err}
	}
	return fd, nil
}

// Rings tells whether q uses the kernel's shared rings (ring.go); false
// on a kernel without them, where every call is an ioctl.
func (q *Queue) Rings() bool { return q.ring != nil }

// Name is the queue's name.
func (q *Queue) Name() string { return q.name }

// Close detaches from the queue: keys this Queue is processing go back
// to it. The queue itself stays (Destroy removes it). Call it once no
// goroutine uses q any more.
func (q *Queue) Close() error {
	q.after.mu.Lock()
	if q.state.Load()&stClosed != 0 {
		q.after.mu.Unlock()
		return &Error{Op: "close", Queue: q.name, Err: ErrClosed}
	}
	errs := q.sendGatheredLocked()
	q.state.Store(stClosed)
	q.after.mu.Unlock()
	q.reportAll(errs)
	q.giveBack()
	if r := q.ring; r != nil && r.nerr.Load() != 0 {
		r.report()
	}
	err := q.closeFd()
	if q.ring != nil {
		q.ring.unmap()
	}
	return err
}

func (q *Queue) err(op, key string, err error) error {
	return &Error{Op: op, Queue: q.name, Key: key, Err: err}
}

// enter starts every call but AddAfter's gathering: ErrClosed once q is
// closed; else it sends the AddAfter calls gathered before this one.
// Inlined: the slow part is enterSlow.
func (q *Queue) enter(op, key string) error {
	if q.state.Load() == 0 {
		return nil
	}
	return q.enterSlow(op, key)
}

func (q *Queue) enterSlow(op, key string) error {
	if q.state.Load()&stClosed != 0 {
		return q.err(op, key, ErrClosed)
	}
	q.Flush()
	return nil
}

// recBuf is a heap buffer of records and the argument structs, pooled:
// the kernel reads them through pointers the garbage collector cannot see.
type recBuf struct {
	b      []byte
	keys   keysArgs
	get    doneGetArgs
	delays []uint64
}

var bufPool = sync.Pool{New: func() any { return &recBuf{b: make([]byte, 0, 4096)} }}

func getBuf() *recBuf {
	rb := bufPool.Get().(*recBuf)
	rb.b = rb.b[:0]
	return rb
}

func putBuf(rb *recBuf) {
	if cap(rb.b) <= 1<<20 {
		bufPool.Put(rb)
	}
}

// getBufQ is getBuf from q's own spare first: the worker loop's calls
// (doneGetIoctl, fetch) then skip the pool's per-P bookkeeping.
func (q *Queue) getBufQ() *recBuf {
	if rb := q.spare.Swap(nil); rb != nil {
		rb.b = rb.b[:0]
		return rb
	}
	return getBuf()
}

func (q *Queue) putBufQ(rb *recBuf) {
	if cap(rb.b) > 1<<20 || !q.spare.CompareAndSwap(nil, rb) {
		putBuf(rb)
	}
}

func appendRec(b []byte, key string, prio int32) []byte {
	n := len(b)
	size := recSize(len(key))
	for cap(b) < n+size {
		b = append(b[:cap(b)], 0)
	}
	b = b[:n+size]
	putRec(b[n:], key, prio)
	return b
}

// putRec writes key's record (priority prio) at the start of b, which
// has room for it, and returns its size.
func putRec(b []byte, key string, prio int32) int {
	size := recSize(len(key))
	*(*uint32)(unsafe.Pointer(&b[0])) = uint32(len(key))
	*(*int32)(unsafe.Pointer(&b[4])) = prio
	// The padding: the record's last 8 bytes zeroed before the key
	// covers their start (a key is at least 1 byte: size >= 16).
	*(*uint64)(unsafe.Pointer(&b[size-8])) = 0
	copy(b[recHdrSize:], key)
	return size
}

// parseRec reads the record at the start of b: its key and its size.
func parseRec(b []byte) (string, int, error) {
	if len(b) < recHdrSize {
		return "", 0, unix.EPROTO
	}
	n := int(*(*uint32)(unsafe.Pointer(&b[0])))
	if n == 0 || n > KeyLenMax || len(b) < recSize(n) {
		return "", 0, unix.EPROTO
	}
	return string(b[recHdrSize : recHdrSize+n]), recSize(n), nil
}

// parseRecs appends the keys of the records in b to keys.
func parseRecs(b []byte, nr int, keys []string) ([]string, error) {
	off := 0
	for i := 0; i < nr; i++ {
		key, size, err := parseRec(b[off:])
		if err != nil {
			return keys, err
		}
		keys = append(keys, key)
		off += size
	}
	return keys, nil
}

// keysIoctl runs one KWQ_IOC_ADD/DONE/FORGET/REMOVE over keys, all
// checked first: bad input changes nothing. Returns how many took effect.
func (q *Queue) keysIoctl(op string, req uintptr, keys []string, prio int32, flags uint32,
	after time.Duration, delays []uint64) (int, error) {
	if err := q.enter(op, firstKey(keys)); err != nil {
		return 0, err
	}
	if req == iocAdd && q.shut.Load() != 0 {
		return 0, q.err(op, firstKey(keys), unix.ESHUTDOWN)
	}
	if len(keys) == 0 || len(keys) > BatchMax {
		return 0, q.err(op, "", fmt.Errorf("%d keys, not 1..%d", len(keys), BatchMax))
	}
	for _, k := range keys {
		if err := validKey(k); err != nil {
			return 0, q.err(op, k, err)
		}
	}
	q.flushRing()
	return q.sendKeys(op, req, keys, prio, flags, after, delays)
}

// sendKeys is keysIoctl's call, of keys it checked.
func (q *Queue) sendKeys(op string, req uintptr, keys []string, prio int32, flags uint32,
	after time.Duration, delays []uint64) (int, error) {
	rb := getBuf()
	defer putBuf(rb)
	for _, k := range keys {
		rb.b = appendRec(rb.b, k, prio)
	}
	if len(rb.b) > 1<<32-1 {
		return 0, q.err(op, "", unix.E2BIG)
	}
	a := &rb.keys
	*a = keysArgs{Recs: uint64(uintptr(unsafe.Pointer(&rb.b[0]))), RecsLen: uint32(len(rb.b)),
		Nr: uint32(len(keys)), Flags: flags, AfterNs: int64(after)}
	if delays != nil {
		rb.delays = append(rb.delays[:0], make([]uint64, len(keys))...)
		a.Delays = uint64(uintptr(unsafe.Pointer(&rb.delays[0])))
	}
	err := ioctlNow(q.fd, req, unsafe.Pointer(a))
	done := int(a.Done)
	if delays != nil {
		copy(delays, rb.delays)
	}
	if err != nil {
		k := ""
		if done < len(keys) {
			k = keys[done]
		}
		return done, q.err(op, k, err)
	}
	return done, nil
}

// oneBuf holds a single-key call's memory, pooled: the record it sends
// (a key to add or finish), the one it takes, and the argument structs.
// The kernel copies records in 8-byte words: the arrays start aligned.
type oneBuf struct {
	keys  keysArgs
	get   doneGetArgs
	delay uint64
	rec   [recSizeMax]byte
	out   [recSizeMax]byte
}

var onePool = sync.Pool{New: func() any { return new(oneBuf) }}

// oneSlot is a Queue's own oneBuf for one kind of call, taken with a
// flag (no pointer swap, no write barrier, none of the pool's per-P
// bookkeeping); a goroutine that finds it taken uses the pool. The
// padding keeps the two slots' flags and buffers on cache lines of
// their own: a producer's Add and a consumer's DoneGetOne do not move
// each other's lines between CPUs.
type oneSlot struct {
	busy atomic.Bool
	_    [63]byte
	buf  oneBuf
	_    [64]byte
}

func (s *oneSlot) get() *oneBuf {
	if s.busy.CompareAndSwap(false, true) {
		return &s.buf
	}
	return onePool.Get().(*oneBuf)
}

func (s *oneSlot) put(ob *oneBuf) {
	if ob == &s.buf {
		s.busy.Store(false)
		return
	}
	onePool.Put(ob)
}

// keyIoctl is keysIoctl of the one key, without slices: what Add, Done
// and the other single-key calls run. With delay, the delay its rate
// limiters chose is stored there.
func (q *Queue) keyIoctl(op string, req uintptr, key string, prio int32, flags uint32,
	after time.Duration, delay *uint64) error {
	if err := q.enter(op, key); err != nil {
		return err
	}
	if err := validKey(key); err != nil {
		return q.err(op, key, err)
	}
	if req == iocAdd && q.shut.Load() != 0 {
		return q.err(op, key, unix.ESHUTDOWN)
	}
	q.flushRing()
	ob := q.send.get()
	n := putRec(ob.rec[:], key, prio)
	a := &ob.keys
	*a = keysArgs{Recs: uint64(uintptr(unsafe.Pointer(&ob.rec[0]))), RecsLen: uint32(n),
		Nr: 1, Flags: flags, AfterNs: int64(after)}
	if delay != nil {
		ob.delay = 0
		a.Delays = uint64(uintptr(unsafe.Pointer(&ob.delay)))
	}
	err := ioctlNow(q.fd, req, unsafe.Pointer(a))
	if delay != nil {
		*delay = ob.delay
	}
	q.send.put(ob)
	if err != nil {
		return q.err(op, key, err)
	}
	return nil
}

func firstKey(keys []string) string {
	if len(keys) > 0 {
		return keys[0]
	}
	return ""
}

// TryAdd queues key (client-go Add): a key already queued stays once; a
// key processing is queued again at its Done.
func (q *Queue) TryAdd(key string) error {
	return q.keyIoctl("add", iocAdd, key, 0, 0, 0, nil)
}

// TryAddPriority queues key at priority prio: higher priorities are
// taken first, FIFO within one.
func (q *Queue) TryAddPriority(key string, prio int32) error {
	return q.keyIoctl("add", iocAdd, key, prio, 0, 0, nil)
}

// AddBatch queues keys (at most BatchMax) in one call, in order; it
// returns how many were queued: on error the first n took effect.
func (q *Queue) AddBatch(keys []string) (int, error) {
	return q.keysIoctl("add", iocAdd, keys, 0, 0, 0, nil)
}

// AddBatchPriority is AddBatch at priority prio.
func (q *Queue) AddBatchPriority(keys []string, prio int32) (int, error) {
	return q.keysIoctl("add", iocAdd, keys, prio, 0, 0, nil)
}

// TryAddAfter queues key once d has passed (client-go AddAfter); a
// pending earlier deadline wins; d <= 0 adds now.
func (q *Queue) TryAddAfter(key string, d time.Duration) error {
	if d <= 0 {
		return q.TryAdd(key)
	}
	return q.keyIoctl("add-after", iocAdd, key, 0, addAfter, d, nil)
}

// AfterPolicy says which deadline wins when a key with a pending
// AddAfter deadline is added after another delay.
type AfterPolicy uint32

const (
	Earliest AfterPolicy = 0          // client-go's: the earlier deadline
	Replace  AfterPolicy = addReplace // the new deadline, even if later
	Latest   AfterPolicy = addLater   // the later deadline (a debounce)
)

// TryAddAfterPolicy is TryAddAfter with policy p choosing between a
// pending deadline and this one (d > 0; EINVAL otherwise unless p is
// Earliest).
func (q *Queue) TryAddAfterPolicy(key string, d time.Duration, p AfterPolicy) error {
	if p != Earliest && p != Replace && p != Latest {
		return q.err("add-after", key, fmt.Errorf("unknown AfterPolicy %d", p))
	}
	if p == Earliest {
		return q.TryAddAfter(key, d)
	}
	if d <= 0 {
		return q.err("add-after", key, fmt.Errorf("delay %v: a policy needs a positive delay: %w", d, unix.EINVAL))
	}
	return q.keyIoctl("add-after", iocAdd, key, 0, addAfter|uint32(p), d, nil)
}

// SetProcessingTimeout sets the processing deadline of the keys this
// Queue takes from now on: 0 the queue's ProcessingTimeout, NoDeadline
// none, else 1 ms..365 days.
func (q *Queue) SetProcessingTimeout(d time.Duration) error {
	ns, err := processingNs(d)
	if err != nil {
		return q.err("set-processing-timeout", "", err)
	}
	q.lease.Store(ns)
	return nil
}

// Touch moves the processing deadline of key, held by this Queue, to d
// from now (0: the queue's ProcessingTimeout from now; NoDeadline: none):
// a worker's heartbeat. ENOENT if key is not processing, EPERM if another
// fd holds it, ESTALE if its deadline already took it back.
func (q *Queue) Touch(key string, d time.Duration) error {
	if err := q.enter("touch", key); err != nil {
		return err
	}
	if err := validKey(key); err != nil {
		return q.err("touch", key, err)
	}
	ns, err := processingNs(d)
	if err != nil {
		return q.err("touch", key, err)
	}
	rb := getBuf()
	defer putBuf(rb)
	rb.b = append(rb.b, key...)
	ta := (*touchArgs)(unsafe.Pointer(&rb.keys)) // storage that outlives the call
	*ta = touchArgs{Key: uint64(uintptr(unsafe.Pointer(&rb.b[0]))), Len: uint32(len(key)),
		ProcessingTimeoutNs: ns}
	if err := ioctlNow(q.fd, iocTouch, unsafe.Pointer(ta)); err != nil {
		return q.err("touch", key, err)
	}
	return nil
}

// TryAddRateLimited queues key after the delay its rate limiters choose
// (client-go AddRateLimited) and returns that delay.
func (q *Queue) TryAddRateLimited(key string) (time.Duration, error) {
	var d uint64
	err := q.keyIoctl("add-rate-limited", iocAdd, key, 0, addRateLimited, 0, &d)
	return time.Duration(d), err
}

// TryDone finishes key, taken by this Queue's Get (client-go Done):
// ENOENT if it is not processing, EPERM if another fd holds it, ESTALE if
// its processing deadline passed and the queue took it back.
func (q *Queue) TryDone(key string) error {
	if q.leasing && q.state.Load() == 0 {
		if q.isLeased(key) {
			_, err := q.doneLeases([]string{key}, 0, true)
			if err != nil {
				err = q.err("done", key, err)
			}
			q.finished(1, nil)
			return err
		}
	}
	err := q.keyIoctl("done", iocDone, key, 0, 0, 0, nil)
	if err != nil {
		q.finished(0, err)
	} else {
		q.finished(1, nil)
	}
	return err
}

// DoneBatch finishes keys in one call, in order; see AddBatch.
func (q *Queue) DoneBatch(keys []string) (int, error) {
	if len(keys) > 0 && len(keys) <= BatchMax && q.state.Load() == 0 && q.allLeased(keys) {
		n, err := q.doneLeases(keys, 0, true)
		if err != nil {
			err = q.err("done", keys[n], err)
		}
		q.finished(n, err)
		return n, err
	}
	if len(keys) > 0 && len(keys) <= BatchMax && q.state.Load() == 0 && q.countLeased(keys) > 0 {
		for _, k := range keys {
			if err := validKey(k); err != nil {
				return 0, q.err("done", k, err)
			}
		}
		n, k, err := q.finishKeys(keys)
		if err != nil {
			err = q.err("done", k, err)
		}
		q.finished(n, err)
		return n, err
	}
	n, err := q.keysIoctl("done", iocDone, keys, 0, 0, 0, nil)
	q.finished(n, err)
	return n, err
}

// TryForget clears key's failure count (client-go Forget).
func (q *Queue) TryForget(key string) error {
	return q.keyIoctl("forget", iocForget, key, 0, 0, 0, nil)
}

// Remove takes key out of the queue: ENOENT if it is not queued, EBUSY
// if it is processing and not queued again.
func (q *Queue) Remove(key string) error {
	return q.keyIoctl("remove", iocRemove, key, 0, 0, 0, nil)
}

// TryNumRequeues is key's failure count (client-go NumRequeues).
func (q *Queue) TryNumRequeues(key string) (int, error) {
	if err := q.enter("num-requeues", key); err != nil {
		return 0, err
	}
	if err := validKey(key); err != nil {
		return 0, q.err("num-requeues", key, err)
	}
	rb := getBuf()
	defer putBuf(rb)
	rb.b = append(rb.b, key...)
	a := &rb.keys // reused as storage for a keyArgs
	ka := (*keyArgs)(unsafe.Pointer(a))
	*ka = keyArgs{Key: uint64(uintptr(unsafe.Pointer(&rb.b[0]))), Len: uint32(len(key))}
	if err := ioctlNow(q.fd, iocNumRequeues, unsafe.Pointer(ka)); err != nil {
		return 0, q.err("num-requeues", key, err)
	}
	return int(ka.Count), nil
}

// TryLen is the number of keys ready (client-go Len).
func (q *Queue) TryLen() (int, error) {
	if err := q.enter("len", ""); err != nil {
		return 0, err
	}
	if q.ring != nil {
		return q.ringLen()
	}
	rb := getBuf()
	defer putBuf(rb)
	v := &rb.keys.Recs // 8 bytes of heap
	if err := ioctlNow(q.fd, iocLen, unsafe.Pointer(v)); err != nil {
		return 0, q.err("len", "", err)
	}
	return int(*v), nil
}

// Forever as a timeout waits without limit.
const Forever time.Duration = -1

// DoneGet finishes done (may be empty), then takes up to max keys as
// GetBatch does, in one system call: a worker's cycle. If finishing a key
// fails, no key is handed out and the error names it (keys the same call
// took stay with this Queue for its next get).
func (q *Queue) DoneGet(done []string, max int, timeout time.Duration) ([]string, error) {
	if err := q.enter("done-get", firstKey(done)); err != nil {
		return nil, err
	}
	if max < 1 || max > BatchMax {
		return nil, q.err("get", "", fmt.Errorf("max %d keys, not 1..%d", max, BatchMax))
	}
	if len(done) > BatchMax {
		return nil, q.err("done", "", fmt.Errorf("%d keys, not 0..%d", len(done), BatchMax))
	}
	for _, k := range done {
		if err := validKey(k); err != nil {
			return nil, q.err("done", k, err)
		}
	}
	if err := q.finishFirst(done, max, nil); err != nil {
		return nil, err
	}
	if q.shut.Load() != 0 {
		return nil, q.err("get", "", unix.ESHUTDOWN)
	}
	ts, err := q.takeKeys(nil, max, timeout)
	if err != nil {
		return nil, q.err("get", "", err)
	}
	return q.handOut(ts), nil
}

// finishFirst finishes a worker cycle's done keys (DoneGet, DoneGetOne):
// through their ring leases in the same system call as a get of up to max
// keys when all are ring leases, else by ioctl (got: as doneGetIoctl's
// one). The error names the key that failed, with op "done-get".
func (q *Queue) finishFirst(done []string, max int, got *taken) error {
	if len(done) == 0 {
		return nil
	}
	var n int
	var err error
	var leased int
	var one [1]taken
	if len(done) == 1 && q.leasing {
		// A worker loop's cycle: one lock to take the lease out.
		if t, ok := q.leaseOf(done[0]); ok {
			one[0], leased = t, 1
		}
	} else {
		leased = q.countLeased(done)
	}
	getMax := uint32(0)
	if q.ring != nil && q.shut.Load() == 0 {
		getMax = uint32(min(max, int(q.ring.nls)))
	}
	switch {
	case leased == 1 && len(done) == 1:
		n, err = q.doneTaken(done, one[:], getMax, true)
	case leased == len(done):
		n, err = q.doneLeases(done, getMax, true)
	case leased == 0 && (!q.leasing || max > 1) && q.shut.Load() == 0:
		// A batch's cycle is one DONE_GET ioctl: cheaper than 64
		// DONE_LEASE records and 64 lease slots (go.rst, "Measured").
		n, err = q.doneGetIoctl(done, max, got)
	default:
		var k string
		if n, k, err = q.finishKeys(done); err != nil {
			q.finished(n, err)
			return q.err("done-get", k, err)
		}
	}
	if err != nil {
		err = q.err("done-get", done[min(n, len(done)-1)], err)
	}
	q.finished(n, err)
	return err
}

// finishKeys finishes keys, some held through ring leases (DONE_LEASE),
// the others by ioctl (DONE): how many were finished, and the key that
// failed with its error. A ring lease's slot is freed only by its
// DONE_LEASE, so no leased key goes to the ioctl.
func (q *Queue) finishKeys(keys []string) (int, string, error) {
	var leased, plain []string
	for _, k := range keys {
		if q.isLeased(k) {
			leased = append(leased, k)
		} else {
			plain = append(plain, k)
		}
	}
	n := 0
	if len(leased) > 0 {
		m, err := q.doneLeases(leased, 0, true)
		n += m
		if err != nil {
			return n, leased[m], err
		}
	}
	if len(plain) > 0 {
		q.flushRing()
		m, err := q.sendKeys("done", iocDone, plain, 0, 0, 0, nil)
		n += m
		if e, ok := err.(*Error); ok {
			err = e.Err
		}
		if err != nil {
			return n, plain[m], err
		}
	}
	return n, "", nil
}

// doneGetIoctl finishes done and takes up to max ready keys (into
// q.w.held; with one not nil, the oldest key listed into *one instead:
// pushKeysOne) in one KWQ_IOC_DONE_GET that does not wait: the worker
// cycle without a ring. Returns how many keys were finished and the
// error of the done part (the get's EAGAIN is none).
func (q *Queue) doneGetIoctl(done []string, max int, one *taken) (int, error) {
	rb := q.getBufQ()
	defer q.putBufQ(rb)
	for _, k := range done {
		rb.b = appendRec(rb.b, k, 0)
	}
	dl := len(rb.b)
	want := dl + max*recSizeMax
	if cap(rb.b) < want {
		nb := make([]byte, dl, want)
		copy(nb, rb.b)
		rb.b = nb
	}
	rb.b = rb.b[:want]
	a := &rb.get
	*a = doneGetArgs{DoneNr: uint32(len(done)), DoneLen: uint32(dl),
		DoneRecs: uint64(uintptr(unsafe.Pointer(&rb.b[0])))}
	a.Get = getArgs{Recs: uint64(uintptr(unsafe.Pointer(&rb.b[dl]))), RecsLen: uint32(want - dl),
		Max: uint32(max), ProcessingTimeoutNs: q.lease.Load()}
	err := ioctlNow(q.fd, iocDoneGet, unsafe.Pointer(a))
	n := int(a.Done)
	if n < len(done) {
		return n, err
	}
	var buf [1]string
	keys, perr := parseRecs(rb.b[dl:dl+int(a.Get.Used)], int(a.Get.Nr), buf[:0])
	q.w.pushKeysOne(keys, one)
	if perr != nil {
		q.onError(q.err("get", "", perr))
	}
	return n, nil
}

// handOut gives keys taken to the caller: each ring lease is listed for
// its Done, and each key counts as held by this Queue.
func (q *Queue) handOut(ts []taken) []string {
	keys := make([]string, len(ts))
	for i, t := range ts {
		if q.leasing {
			q.holdLease(t)
		}
		keys[i] = t.key
	}
	q.held.Add(int64(len(ts)))
	return keys
}

// handOutOne is handOut of one key, without its slice.
func (q *Queue) handOutOne(t taken) string {
	if q.leasing {
		q.holdLease(t)
	}
	q.held.Add(1)
	return t.key
}

// spinTries: how many more times a call that found no key ready tries
// again without waiting, yielding the processor (runtime.Gosched) before
// each, until it waits (wait.go). A producer (a goroutine of this
// process, or another process on another CPU) usually adds a key within
// that time, and the sleep and wake-up that this saves cost more than
// the tries: Go's scheduler spins before it parks a thread for the same
// reason. kwq-gobench's 1-producer, 2-consumer worker loop went from
// 106-152k to 211-232k keys/s in one VM boot (Documentation/go.rst).
const spinTries = 3

// GetBatch takes up to max ready keys, waiting at most timeout for the
// first (Forever: no limit; 0: EAGAIN at once; ETIMEDOUT when it
// passes; ESHUTDOWN once shut down with nothing ready).
func (q *Queue) GetBatch(max int, timeout time.Duration) ([]string, error) {
	return q.DoneGet(nil, max, timeout)
}

// TryGet takes one key, waiting at most timeout.
func (q *Queue) TryGet(timeout time.Duration) (string, error) {
	return q.DoneGetOne("", timeout)
}

// DoneGetOne finishes done ("": none) and takes one key, waiting at most
// timeout as GetBatch does, in one system call: a single-key worker
// loop's cycle (DoneGet without its slices). If done cannot be finished,
// no key is handed out and the error names it.
func (q *Queue) DoneGetOne(done string, timeout time.Duration) (string, error) {
	op := "get"
	if done != "" {
		op = "done-get"
	}
	if err := q.enter(op, done); err != nil {
		return "", err
	}
	var got taken // the key the done's get took, handed straight on
	if done != "" {
		if err := validKey(done); err != nil {
			return "", q.err("done", done, err)
		}
		one := [1]string{done}
		if err := q.finishFirst(one[:], 1, &got); err != nil {
			return "", err
		}
	}
	if q.shut.Load() != 0 {
		if got.key != "" {
			// As if taken for the list: ShutDown gives it back.
			q.w.pushKeys([]string{got.key})
		}
		return "", q.err("get", "", unix.ESHUTDOWN)
	}
	if got.key != "" {
		return q.handOutOne(got), nil
	}
	var buf [1]taken
	ts, err := q.takeKeys(buf[:0], 1, timeout)
	if err != nil {
		return "", q.err("get", "", err)
	}
	return q.handOutOne(ts[0]), nil
}

// Stats are the counters of the queue (KWQ_IOC_STATS).
type Stats struct {
	Len, Waiting, Processing, Depth       uint64
	AddsTotal, RetriesTotal               uint64
	DroppedAtShutdown, LeaseReturns       uint64
	FailureRecords, FailureRecordsEvicted uint64
	Dead, DeadTotal, DeadDroppedTotal     uint64 // the dead set
	ProcessingTimeouts                    uint64 // leases revoked by their deadline
	UnfinishedWork, LongestRunning        time.Duration
	ShuttingDown                          bool
	Priorities                            []PriorityLen // highest first, at most 8
	OtherPriorities                       uint64        // ready keys of the levels not listed
	// QueueDuration: how long keys waited ready before a Get took them;
	// WorkDuration: how long from Get to Done (client-go's histograms).
	QueueDuration, WorkDuration Histogram
}

// HistogramBounds are the upper bounds of a Histogram's buckets, in
// seconds: 10^(i+1) ns, client-go's workqueue buckets.
var HistogramBounds = [statsBuckets]float64{1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10}

// Histogram is a duration histogram as Prometheus keeps one: Le[i]
// counts the durations of at most HistogramBounds[i] (cumulative), Count
// all of them, Sum their total.
type Histogram struct {
	Le    [statsBuckets]uint64
	Count uint64
	Sum   time.Duration
}

func histOf(h *statsHist) Histogram {
	return Histogram{Le: h.Le, Count: h.Count, Sum: time.Duration(h.SumNs)}
}

// PriorityLen is the number of ready keys of one priority level (its Len).
type PriorityLen struct {
	Priority int32
	Len      uint64
}

var statsPool = sync.Pool{New: func() any { return new(statsArgs) }}

// Stats reads the queue's counters.
func (q *Queue) Stats() (Stats, error) {
	if err := q.enter("stats", ""); err != nil {
		return Stats{}, err
	}
	a := statsPool.Get().(*statsArgs)
	defer statsPool.Put(a)
	*a = statsArgs{}
	if err := ioctlNow(q.fd, iocStats, unsafe.Pointer(a)); err != nil {
		return Stats{}, q.err("stats", "", err)
	}
	s := Stats{Len: a.Len, Waiting: a.Waiting, Processing: a.Processing, Depth: a.Depth,
		AddsTotal: a.AddsTotal, RetriesTotal: a.RetriesTotal,
		DroppedAtShutdown: a.DroppedAtShutdown, LeaseReturns: a.LeaseReturns,
		FailureRecords: a.FailureRecords, FailureRecordsEvicted: a.FailureRecordsEvicted,
		UnfinishedWork: time.Duration(a.UnfinishedWorkNs), LongestRunning: time.Duration(a.LongestRunningNs),
		ShuttingDown: a.ShuttingDown != 0, OtherPriorities: a.PriosOther,
		Dead: a.Dead, DeadTotal: a.DeadTotal, DeadDroppedTotal: a.DeadDroppedTotal,
		ProcessingTimeouts: a.ProcessingTimeoutsTotal,
		QueueDuration:      histOf(&a.QueueDuration), WorkDuration: histOf(&a.WorkDuration)}
	for i := 0; i < int(a.NrPrios) && i < statsPrios; i++ {
		s.Priorities = append(s.Priorities, PriorityLen{a.Prios[i].Priority, a.Prios[i].Len})
	}
	return s, nil
}

// --- client-go's TypedRateLimitingInterface[string] ---------------------

func (q *Queue) report(err error) {
	if err != nil {
		q.onError(err)
	}
}

// Add is TryAdd with the error to the ErrorHandler. An add after
// ShutDown is dropped silently, as client-go does.
func (q *Queue) Add(key string) {
	if q.ring != nil && q.state.Load() == 0 && q.shut.Load() == 0 && validKey(key) == nil {
		if err := q.ringAdd(key, 0, 0, 0, "add"); err != nil {
			q.onError(q.err("add", key, err))
		}
		return
	}
	if err := q.TryAdd(key); err != nil && !errors.Is(err, unix.ESHUTDOWN) {
		q.onError(err)
	}
}

// Len is TryLen; 0 on error.
func (q *Queue) Len() int {
	n, err := q.TryLen()
	q.report(err)
	return n
}

// Get waits for a key; shutdown is true once this Queue is shut down
// (ShutDown), or the queue is (ShutDownQueue) and nothing is ready, as
// client-go's Get. Any other error ends the Gets too (the queue
// destroyed, the Queue closed): shutdown is true, and Err tells the
// error, which also goes to the ErrorHandler.
func (q *Queue) Get() (key string, shutdown bool) {
	k, err := q.TryGet(Forever)
	if err != nil {
		if !errors.Is(err, unix.ESHUTDOWN) {
			q.failed(err)
		}
		return "", true
	}
	return k, false
}

// Done is TryDone with the error to the ErrorHandler; the Done of a key
// this Queue does not hold (ENOENT, EPERM) is a no-op, as in client-go,
// counted by NotHeldDones.
func (q *Queue) Done(key string) {
	if q.leasing && q.state.Load() == 0 {
		if q.isLeased(key) {
			// Its failure (ESTALE) reaches the ErrorHandler.
			q.doneLeases([]string{key}, 0, false)
			q.finished(1, nil)
			return
		}
	}
	err := q.TryDone(key)
	if err != nil && (errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EPERM)) {
		q.notHeld.Add(1)
		return
	}
	q.report(err)
}

// AddAfter is TryAddAfter with the error to the ErrorHandler; dropped
// silently after ShutDown. Calls with a delay of 10 ms or more are
// gathered and sent in batches (after.go, Flush), as client-go's AddAfter
// also returns before its key is queued.
func (q *Queue) AddAfter(key string, d time.Duration) {
	if d >= afterGatherMin && validKey(key) == nil && q.shut.Load() == 0 && q.gather(key, d) {
		return
	}
	if err := q.TryAddAfter(key, d); err != nil && !errors.Is(err, unix.ESHUTDOWN) {
		q.onError(err)
	}
}

// AddRateLimited is TryAddRateLimited with the error to the ErrorHandler.
func (q *Queue) AddRateLimited(key string) {
	if _, err := q.TryAddRateLimited(key); err != nil && !errors.Is(err, unix.ESHUTDOWN) {
		q.onError(err)
	}
}

// Forget is TryForget with the error to the ErrorHandler.
func (q *Queue) Forget(key string) { q.report(q.TryForget(key)) }

// NumRequeues is TryNumRequeues; 0 on error.
func (q *Queue) NumRequeues(key string) int {
	n, err := q.TryNumRequeues(key)
	q.report(err)
	return n
}
