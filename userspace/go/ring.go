// SPDX-License-Identifier: LGPL-2.1-or-later

package kwq

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The shared rings of /dev/kwq (Documentation/rings.rst, go.rst "Rings").
// A Queue sets one up when it is made; a kernel without rings (ENOTTY),
// a published kernel queue (EOPNOTSUPP) or a byte budget too small for
// one (EDQUOT) leaves ring nil, and every call goes through the ioctls.
//
// Memory ordering. The protocol asks the producer for: the record's
// bytes, then sq_tail stored with release; a full fence; then a load of
// the status page's waiters (the kernel's getter mirrors it: waiters,
// smp_mb(), the tails). Go's sync/atomic operations are sequentially
// consistent (the Go memory model): the plain stores of the record
// happen before atomic.StoreUint32 of sq_tail (release), and no load
// after that store, atomic.LoadUint32 of waiters included, is ordered
// before it (amd64: the store is XCHG, a full barrier; arm64: STLR
// followed by LDAR, which the architecture keeps in order). So the store
// of the tail and the load of waiters cannot both miss the getter's
// store of waiters and load of the tail. The kernel's indices (sq_head,
// cq_tail) are read with atomic loads (acquire) before the bytes they
// publish, cq_head is stored (release) after the completions are read.

// Ring sizes a Queue asks for: adds and dones are one slot each for keys
// of up to 40 bytes; 128 lease slots let many worker goroutines hold a
// key each (a Get that finds none free takes its key by ioctl).
const (
	ringSQEntries  = 256
	ringCQEntries  = 256
	ringLeaseSlots = 128
)

// sqMeta is what a submitted record's completion needs to report: its
// op, its key, and for a record whose caller waits for it, where its
// result goes.
type sqMeta struct {
	op    string
	key   string
	quiet bool          // an ESTALE completion is expected: not reported
	res   *atomic.Int32 // -errno of a failure, for a synchronous caller
}

type ring struct {
	q                   *Queue
	user, kern, stat    []byte
	sqTail, cqHead      *uint32 // the process's indices (user region)
	sqHead, cqTail      *uint32 // the kernel's (kernel region)
	flags               *uint32
	sqes, cqes, leases  unsafe.Pointer
	waiters             *uint32
	ready               *uint64
	status              *uint32
	sqMask, cqMask, nls uint32

	// sq guards the writing side: tail (written and published), head
	// (the kernel's sq_head when the completions before it were last
	// all read: the slots below it may be written again), meta.
	sq   sync.Mutex
	tail uint32
	head uint32
	meta []sqMeta
	// bell coalesces doorbells: 0 nobody rings, 1 one goroutine rings,
	// 2 it rings once more (a record was published while it rang).
	bell atomic.Int32
	// cq guards reading the completion ring (cq_head) and errs, the
	// errors read and not yet reported (reported with no lock held).
	cq   sync.Mutex
	errs []error
	nerr atomic.Int32
}

// setupRing maps a ring on q's fd; nil if the kernel has none for it.
func setupRing(q *Queue) *ring {
	a := &ringSetupArgs{SqEntries: ringSQEntries, CqEntries: ringCQEntries, LeaseSlots: ringLeaseSlots}
	if ioctlNow(q.fd, iocRingSetup, unsafe.Pointer(a)) != nil {
		return nil
	}
	ok := func(off uint32, n, size uint64) bool { return uint64(off) <= size && n <= size-uint64(off) }
	if !ok(a.SqTailOff, 4, a.UserSize) || !ok(a.CqHeadOff, 4, a.UserSize) ||
		!ok(a.SqesOff, ringSQEntries*sqeSize, a.UserSize) ||
		!ok(a.SqHeadOff, 4, a.KernelSize) || !ok(a.CqTailOff, 4, a.KernelSize) ||
		!ok(a.RingFlagsOff, 4, a.KernelSize) ||
		!ok(a.CqesOff, ringCQEntries*uint64(unsafe.Sizeof(cqe{})), a.KernelSize) ||
		!ok(a.LeasesOff, ringLeaseSlots*leaseSlotSize, a.KernelSize) ||
		a.StatusSize < statusFlagsOff+4 ||
		a.SqTailOff%4 != 0 || a.CqHeadOff%4 != 0 || a.SqHeadOff%4 != 0 ||
		a.CqTailOff%4 != 0 || a.RingFlagsOff%4 != 0 || a.CqesOff%8 != 0 || a.SqesOff%8 != 0 {
		return nil
	}
	r := &ring{q: q, sqMask: ringSQEntries - 1, cqMask: ringCQEntries - 1, nls: ringLeaseSlots,
		meta: make([]sqMeta, ringSQEntries)}
	var err error
	if r.user, err = unix.Mmap(q.fd, ringOffUser, int(a.UserSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err != nil {
		return nil
	}
	if r.kern, err = unix.Mmap(q.fd, ringOffKernel, int(a.KernelSize), unix.PROT_READ, unix.MAP_SHARED); err != nil {
		r.unmap()
		return nil
	}
	if r.stat, err = unix.Mmap(q.fd, ringOffStatus, int(a.StatusSize), unix.PROT_READ, unix.MAP_SHARED); err != nil {
		r.unmap()
		return nil
	}
	u, k, s := unsafe.Pointer(&r.user[0]), unsafe.Pointer(&r.kern[0]), unsafe.Pointer(&r.stat[0])
	r.sqTail = (*uint32)(unsafe.Add(u, a.SqTailOff))
	r.cqHead = (*uint32)(unsafe.Add(u, a.CqHeadOff))
	r.sqes = unsafe.Add(u, a.SqesOff)
	r.sqHead = (*uint32)(unsafe.Add(k, a.SqHeadOff))
	r.cqTail = (*uint32)(unsafe.Add(k, a.CqTailOff))
	r.flags = (*uint32)(unsafe.Add(k, a.RingFlagsOff))
	r.cqes = unsafe.Add(k, a.CqesOff)
	r.leases = unsafe.Add(k, a.LeasesOff)
	r.waiters = (*uint32)(s)
	r.ready = (*uint64)(unsafe.Add(s, statusReadyOff))
	r.status = (*uint32)(unsafe.Add(s, statusFlagsOff))
	r.tail = atomic.LoadUint32(r.sqTail)
	r.head = atomic.LoadUint32(r.sqHead)
	return r
}

func (r *ring) unmap() {
	for _, b := range [][]byte{r.user, r.kern, r.stat} {
		if b != nil {
			unix.Munmap(b)
		}
	}
	r.user, r.kern, r.stat = nil, nil, nil
}

// pending: records published that the kernel has not consumed yet.
func (r *ring) pending() bool {
	return atomic.LoadUint32(r.sqTail) != atomic.LoadUint32(r.sqHead)
}

// enter is KWQ_IOC_RING_ENTER with flags, never waiting; a get leases up
// to getMax keys.
func (r *ring) enter(flags, getMax uint32) (uint32, error) {
	a := ringEnterArgs{Flags: flags, GetMax: getMax}
	if flags&enterGet != 0 {
		a.ProcessingTimeoutNs = r.q.lease.Load()
	}
	err := ioctlNow(r.q.fd, iocRingEnter, unsafe.Pointer(&a))
	return a.Leased, err
}

// submit rings the doorbell until the kernel consumed what was published
// or cannot: EBUSY (the completion ring full) reads the completions and
// rings again while that made room.
func (r *ring) submit(flags, getMax uint32) (uint32, error) {
	for {
		n, err := r.enter(flags, getMax)
		if err != unix.EBUSY {
			if flags&enterGet != 0 || atomic.LoadUint32(r.cqTail) != atomic.LoadUint32(r.cqHead) {
				r.reap(true)
			}
			return n, err
		}
		head := atomic.LoadUint32(r.cqHead)
		r.reap(true)
		if atomic.LoadUint32(r.cqHead) == head {
			return n, err
		}
	}
}

// doorbell is the producer's ring after publishing (a getter waits):
// one goroutine rings for all that publish meanwhile, none waits for it.
func (r *ring) doorbell() {
	for {
		switch r.bell.Load() {
		case 0:
			if !r.bell.CompareAndSwap(0, 1) {
				continue
			}
			for {
				if _, err := r.submit(enterSubmit, 0); err != nil && err != unix.EBUSY {
					r.q.ringFailed("submit", err)
				}
				if r.bell.CompareAndSwap(1, 0) {
					return
				}
				r.bell.Store(1)
			}
		case 1:
			if r.bell.CompareAndSwap(1, 2) {
				return
			}
		default:
			return
		}
	}
}

// room makes n slots writable, under r.sq: the slots below the kernel's
// head whose completions were all read. A full ring is backpressure: the
// caller waits here (publishing and ringing) until the kernel consumed
// enough, never drops a record. r.sq is released while it rings, so that
// the goroutines finishing keys are not held up behind a producer's
// system call (the records it wrote and did not publish yet are complete:
// whoever publishes next publishes them too).
func (r *ring) room(n uint32) error {
	for {
		if ringSQEntries-(r.tail-r.head) >= n {
			return nil
		}
		head := atomic.LoadUint32(r.sqHead)
		// A record's completion is posted before sq_head passes it:
		// read them all before its slots (and meta) are written again.
		r.reap(true)
		if head != r.head {
			r.head = head
			continue
		}
		if atomic.LoadUint32(r.flags)&ringFBroken != 0 {
			return unix.EIO
		}
		r.publish()
		r.sq.Unlock()
		_, err := r.submit(enterSubmit, 0)
		if atomic.LoadUint32(r.sqHead) == head {
			runtime.Gosched()
		}
		r.sq.Lock()
		if err != nil && err != unix.EBUSY {
			return err
		}
	}
}

// prep writes one record at the tail, under r.sq, not published.
func (r *ring) prep(op uint8, flags uint8, key string, prio int32, slot uint32, arg uint64, m sqMeta) error {
	n := uint32(sqeSlots(len(key)))
	if err := r.room(n); err != nil {
		return err
	}
	p := unsafe.Add(r.sqes, uintptr(r.tail&r.sqMask)*sqeSize)
	*(*sqe)(p) = sqe{Op: op, Flags: flags, Nslots: uint16(n), Len: uint32(len(key)),
		Priority: prio, LeaseSlot: slot, Arg: arg}
	b := unsafe.Slice((*byte)(unsafe.Add(p, unsafe.Sizeof(sqe{}))), sqeInline)
	c := copy(b, key)
	clear(b[c:])
	for i := uint32(1); i < n; i++ {
		b = unsafe.Slice((*byte)(unsafe.Add(r.sqes, uintptr((r.tail+i)&r.sqMask)*sqeSize)), sqeSize)
		c2 := copy(b, key[c:])
		clear(b[c2:])
		c += c2
	}
	r.meta[r.tail&r.sqMask] = m
	r.tail += n
	return nil
}

// publish stores the tail (under r.sq): see "Memory ordering" above.
func (r *ring) publish() {
	atomic.StoreUint32(r.sqTail, r.tail)
}

// ringIfWaited rings the doorbell if a getter waits (after publish, with
// r.sq released): no system call while nobody waits.
func (r *ring) ringIfWaited() {
	if atomic.LoadUint32(r.waiters) != 0 {
		r.doorbell()
	}
	if r.nerr.Load() != 0 {
		r.report()
	}
}

// record writes and publishes one record, ringing if a getter waits.
func (r *ring) record(op uint8, flags uint8, key string, prio int32, slot uint32, arg uint64, m sqMeta) error {
	r.sq.Lock()
	err := r.prep(op, flags, key, prio, slot, arg, m)
	if err == nil {
		r.publish()
	}
	r.sq.Unlock()
	if err != nil {
		return err
	}
	r.ringIfWaited()
	return nil
}

// reap reads the completion ring: leases go to the Queue's keys taken,
// failures to errs (or a synchronous caller's cell). wait: take r.cq
// even if another goroutine holds it (that goroutine may be reading the
// completions this caller needs).
func (r *ring) reap(wait bool) {
	if wait {
		r.cq.Lock()
	} else if !r.cq.TryLock() {
		return
	}
	head := atomic.LoadUint32(r.cqHead)
	tail := atomic.LoadUint32(r.cqTail)
	w := &r.q.w
	got := false
	for ; head != tail; head++ {
		c := *(*cqe)(unsafe.Add(r.cqes, uintptr(head&r.cqMask)*unsafe.Sizeof(cqe{})))
		if c.Op == cqeLease {
			if t, ok := r.leased(c.Index, c.Value); ok {
				// Lock order: r.cq, then w.mu.
				if !got {
					w.mu.Lock()
					got = true
				}
				w.pushLocked(t)
			}
			continue
		}
		m := r.meta[c.Index&r.sqMask]
		if c.Res >= 0 {
			continue
		}
		err := unix.Errno(-c.Res)
		if m.res != nil {
			m.res.Store(int32(c.Res))
			continue
		}
		if m.op == "add" && err == unix.ESHUTDOWN || m.quiet && err == unix.ESTALE {
			continue
		}
		r.errs = append(r.errs, r.q.err(m.op, m.key, err))
		r.nerr.Add(1)
	}
	if got {
		w.wakeLocked()
		w.mu.Unlock()
	}
	atomic.StoreUint32(r.cqHead, head)
	r.cq.Unlock()
}

// leased is the key of lease slot slot, generation gen.
func (r *ring) leased(slot uint32, gen uint64) (taken, bool) {
	if slot >= r.nls || gen == 0 {
		return taken{}, false
	}
	p := unsafe.Add(r.leases, uintptr(slot)*leaseSlotSize)
	n := *(*uint32)(unsafe.Add(p, 8))
	// The slot is the kernel's: it changes only once its DONE_LEASE is
	// applied, and the generation tells a lease that ended already.
	if atomic.LoadUint64((*uint64)(p)) != gen || n < 1 || n > KeyLenMax {
		return taken{}, false
	}
	key := string(unsafe.Slice((*byte)(unsafe.Add(p, leaseKeyOff)), n))
	return taken{key: key, slot: slot, gen: gen, ring: true}, true
}

// report hands the errors read to the ErrorHandler, no lock held.
func (r *ring) report() {
	r.cq.Lock()
	errs := r.errs
	r.errs = nil
	r.nerr.Store(0)
	r.cq.Unlock()
	for _, err := range errs {
		r.q.onError(err)
	}
}

// ringFailed reports a doorbell's error once per kind.
func (q *Queue) ringFailed(op string, err error) {
	if !errors.Is(err, unix.ESHUTDOWN) {
		q.onError(q.err(op, "", err))
	}
}

// flushRing applies this Queue's published records before an ioctl that
// changes keys, so that calls keep their order: (ioctl ADD, DONE, FORGET
// and REMOVE do not pull the rings, only gets and readers do).
func (q *Queue) flushRing() {
	r := q.ring
	if r == nil {
		return
	}
	if r.pending() {
		if _, err := r.submit(enterSubmit, 0); err != nil && err != unix.EBUSY {
			q.ringFailed("submit", err)
		}
	} else if atomic.LoadUint32(r.cqTail) != atomic.LoadUint32(r.cqHead) {
		r.reap(false)
	}
	if r.nerr.Load() != 0 {
		r.report()
	}
}

// ringAdd is Add through the ring: no system call while nobody waits;
// its failure reaches the ErrorHandler when the completion is read (at
// the next call of this Queue that reads them).
func (q *Queue) ringAdd(key string, prio int32, flags uint8, after uint64, op string) error {
	return q.ring.record(sqeAdd, flags, key, prio, 0, after, sqMeta{op: op, key: key})
}

// leaseOf takes key's ring lease out of q.leases: what a Done finishes.
func (q *Queue) leaseOf(key string) (taken, bool) {
	q.lmu.Lock()
	t, ok := q.leases[key]
	if ok {
		delete(q.leases, key)
	}
	q.lmu.Unlock()
	return t, ok
}

// holdLease records how a key handed out is finished: a ring lease is
// listed for its Done. A key still listed from an older lease (its
// deadline took it back, and the queue gave it to this fd again, by ring
// or by ioctl) gives the old slot back, quietly.
func (q *Queue) holdLease(t taken) {
	q.lmu.Lock()
	old, had := q.leases[t.key]
	if t.ring {
		q.leases[t.key] = t
	} else if had {
		delete(q.leases, t.key)
	}
	q.lmu.Unlock()
	if had {
		q.ring.record(sqeDoneLease, 0, "", 0, old.slot, old.gen, sqMeta{op: "done", key: old.key, quiet: true})
	}
}

// takeLeases takes the ring leases of keys out of q.leases, under one
// lock (a key no longer listed, finished meanwhile by another goroutine,
// gets a zero lease, which its DONE_LEASE reports as stale).
func (q *Queue) takeLeases(keys []string, ts []taken) []taken {
	q.lmu.Lock()
	for _, k := range keys {
		t := q.leases[k]
		delete(q.leases, k)
		ts = append(ts, t)
	}
	q.lmu.Unlock()
	return ts
}

// doneLeases finishes keys through their ring leases, in one system call
// with a get of up to getMax keys if getMax > 0 (else one doorbell, which
// goroutines finishing keys at the same time share unless sync). The
// keys must all be ring leases (countLeased). Returns how many were
// finished before the first failure, and that failure.
func (q *Queue) doneLeases(keys []string, getMax uint32, sync bool) (int, error) {
	var buf [1]taken
	return q.doneTaken(keys, q.takeLeases(keys, buf[:0]), getMax, sync)
}

// doneTaken is doneLeases of keys whose leases ts were taken out of
// q.leases already. A get's own failure is not the dones': once the
// kernel consumed the records, the keys are finished and the get that
// follows (takeKeys) meets the failure again and reports it.
func (q *Queue) doneTaken(keys []string, ts []taken, getMax uint32, sync bool) (int, error) {
	r := q.ring
	cells := make([]atomic.Int32, len(keys))
	r.sq.Lock()
	var err error
	n := 0
	for i, k := range keys {
		m := sqMeta{op: "done", key: k}
		if sync {
			m.res = &cells[i]
		}
		if err = r.prep(sqeDoneLease, 0, "", 0, ts[i].slot, ts[i].gen, m); err != nil {
			break
		}
		n++
	}
	end := r.tail
	r.publish()
	r.sq.Unlock()
	if n < len(keys) {
		// The ring is broken: the keys not written keep their leases.
		q.lmu.Lock()
		for i := n; i < len(keys); i++ {
			q.leases[keys[i]] = ts[i]
		}
		q.lmu.Unlock()
	}
	switch {
	case n == 0:
	case getMax > 0:
		_, err = r.submit(enterSubmit|enterGet, getMax)
	case sync:
		_, err = r.submit(enterSubmit, 0)
	default:
		// Rung even while no getter waits: a key's Done must not wait
		// for the next get to be applied (a drain in ShutDownQueue, a
		// processing deadline and ShutDownWithDrain elsewhere wait for
		// it). Goroutines finishing keys at once share one doorbell.
		r.doorbell()
		if r.nerr.Load() != 0 {
			r.report()
		}
		return n, err
	}
	if r.nerr.Load() != 0 {
		r.report()
	}
	for i := 0; i < n; i++ {
		if res := cells[i].Load(); res != 0 {
			return i, unix.Errno(-res)
		}
	}
	if n < len(keys) {
		return n, err
	}
	if err != nil && int32(atomic.LoadUint32(r.sqHead)-end) < 0 {
		// Not consumed: the enter failed before its drain.
		return 0, err
	}
	return n, nil
}

// countLeased: how many of keys are held through ring leases.
func (q *Queue) countLeased(keys []string) int {
	if !q.leasing {
		return 0
	}
	q.lmu.Lock()
	defer q.lmu.Unlock()
	n := 0
	for _, k := range keys {
		if _, ok := q.leases[k]; ok {
			n++
		}
	}
	return n
}

// allLeased: every key is held through a ring lease.
func (q *Queue) allLeased(keys []string) bool {
	return q.leasing && q.countLeased(keys) == len(keys)
}

// ringLen is Len from the status page: this Queue's own published adds
// applied first (a system call only if some are not), no system call
// otherwise.
func (q *Queue) ringLen() (int, error) {
	r := q.ring
	q.flushRing()
	if atomic.LoadUint32(r.status)&statusDestroyed != 0 {
		return 0, q.err("len", "", unix.EIDRM)
	}
	return int(atomic.LoadUint64(r.ready)), nil
}

// isLeased: key is held through a ring lease.
func (q *Queue) isLeased(key string) bool {
	if !q.leasing {
		return false
	}
	q.lmu.Lock()
	_, ok := q.leases[key]
	q.lmu.Unlock()
	return ok
}
