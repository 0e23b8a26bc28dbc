// SPDX-License-Identifier: LGPL-2.1-or-later

package kwq

import (
	"errors"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// KeyState is where a key is (Documentation/semantics.rst, "Introspection").
type KeyState uint32

// The states of a key, and StatesAll, every one as a bit (1 << state).
const (
	Ready      KeyState = 1 // in the ready FIFO of its priority
	Waiting    KeyState = 2 // waiting for its deadline
	Processing KeyState = 3 // handed out, not yet done
	Dead       KeyState = 4 // in the dead set (Config.MaxRetries)
	Idle       KeyState = 5 // not queued; a failure count kept

	StatesAll uint32 = 0x3e
)

func (s KeyState) String() string {
	switch s {
	case Ready:
		return "ready"
	case Waiting:
		return "waiting"
	case Processing:
		return "processing"
	case Dead:
		return "dead"
	case Idle:
		return "idle"
	}
	return "?"
}

// KeyInfo is one key as KWQ_IOC_INSPECT saw it.
type KeyInfo struct {
	Key      string
	State    KeyState
	Flags    uint32 // 1 dirty, 2 delayed, 4 dying (processing keys), 8 Due set
	Priority int32
	Failures uint32
	Holder   uint32        // processing: pid of the fd's opener; 0 detached
	Since    time.Duration // ready: waited; processing: held; dead: since its last failure
	Due      time.Duration // time left to its next deadline, if HasDue
	HasDue   bool
	Timeout  time.Duration // processing: time left to its processing deadline, 0 none
}

// DelayDead is the delay TryAddRateLimited returns for a key that failed
// its last retry and moved to the dead set.
const DelayDead = time.Duration(-1)

func (q *Queue) deadOp(op string, req uintptr, key string, all bool) (int, error) {
	if err := q.enter(op, key); err != nil {
		return 0, err
	}
	a := &deadArgs{}
	var kb []byte
	if all {
		a.Flags = deadAll
	} else {
		if err := validKey(key); err != nil {
			return 0, q.err(op, key, err)
		}
		kb = []byte(key)
		a.Key = uint64(uintptr(unsafe.Pointer(&kb[0])))
		a.Len = uint32(len(kb))
	}
	err := ioctl(q.fd, req, unsafe.Pointer(a))
	runtime.KeepAlive(kb)
	if err != nil {
		return 0, q.err(op, key, err)
	}
	return int(a.Count), nil
}

// Revive moves a dead key back to the ready queue, its failure count
// reset (ENOENT if it is not dead).
func (q *Queue) Revive(key string) error {
	_, err := q.deadOp("revive", iocRevive, key, false)
	return err
}

// ReviveAll revives every dead key; how many.
func (q *Queue) ReviveAll() (int, error) { return q.deadOp("revive", iocRevive, "", true) }

// Purge drops a dead key and its failure count (ENOENT if it is not dead).
func (q *Queue) Purge(key string) error {
	_, err := q.deadOp("purge", iocPurge, key, false)
	return err
}

// PurgeAll drops every dead key; how many.
func (q *Queue) PurgeAll() (int, error) { return q.deadOp("purge", iocPurge, "", true) }

func infoOf(r *infoRec, key []byte) KeyInfo {
	return KeyInfo{Key: string(key), State: KeyState(r.State), Flags: r.Flags,
		Priority: r.Priority, Failures: r.Failures, Holder: r.Holder,
		Since: time.Duration(r.SinceNs), Due: time.Duration(r.DueNs),
		HasDue: r.Flags&keyFlagDue != 0, Timeout: time.Duration(r.TimeoutNs)}
}

// Inspect reports where key is (ENOENT if the queue holds nothing of it).
func (q *Queue) Inspect(key string) (KeyInfo, error) {
	if err := q.enter("inspect", key); err != nil {
		return KeyInfo{}, err
	}
	if err := validKey(key); err != nil {
		return KeyInfo{}, q.err("inspect", key, err)
	}
	kb := []byte(key)
	buf := make([]uint64, infoRecSizeMax/8)
	a := &inspectArgs{Key: uint64(uintptr(unsafe.Pointer(&kb[0]))), Len: uint32(len(kb)),
		Recs: uint64(uintptr(unsafe.Pointer(&buf[0]))), RecsLen: uint32(infoRecSizeMax)}
	err := ioctl(q.fd, iocInspect, unsafe.Pointer(a))
	runtime.KeepAlive(kb)
	if err != nil {
		return KeyInfo{}, q.err("inspect", key, err)
	}
	r := (*infoRec)(unsafe.Pointer(&buf[0]))
	return infoOf(r, kb), nil
}

// Keys lists every key in one of states (bits 1 << KeyState; StatesAll
// for all), walking the queue a chunk at a time with its cursor.
func (q *Queue) Keys(states uint32) ([]KeyInfo, error) {
	if err := q.enter("inspect", ""); err != nil {
		return nil, err
	}
	const chunk = 64
	buf := make([]uint64, chunk*infoRecSizeMax/8)
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*8)
	var out []KeyInfo
	a := &inspectArgs{States: states}
	for {
		a.Recs = uint64(uintptr(unsafe.Pointer(&buf[0])))
		a.RecsLen = uint32(len(b))
		a.Max = chunk
		err := ioctl(q.fd, iocInspect, unsafe.Pointer(a))
		if errors.Is(err, unix.EAGAIN) {
			time.Sleep(time.Millisecond)
			continue
		}
		if err != nil {
			return out, q.err("inspect", "", err)
		}
		for off := uintptr(0); off < uintptr(a.Used); {
			r := (*infoRec)(unsafe.Pointer(&b[off]))
			key := b[off+infoRecSize : off+infoRecSize+uintptr(r.Len)]
			out = append(out, infoOf(r, key))
			off += (infoRecSize + uintptr(r.Len) + 7) &^ 7
		}
		if a.Cursor == 0 {
			return out, nil
		}
	}
}

// DeadKeys lists the dead set.
func (q *Queue) DeadKeys() ([]KeyInfo, error) { return q.Keys(1 << Dead) }
