// SPDX-License-Identifier: LGPL-2.1-or-later

//go:build kwqcount

package kwq

import (
	"encoding/binary"
	"unsafe"
)

// Built with -tags kwqcount (tools/bench-host/gocount.sh only): calls
// that never wait reach a stand-in for the kernel instead, so that
// callgrind counts the package's own instructions per call on the host.
// ADD and DONE accept every key; GET and DONE_GET hand out one 16-byte
// key. The stand-in's own share is a few tens of instructions a call.

var countRec = func() []byte {
	key := "k000000000000001"
	b := make([]byte, recSize(len(key)))
	binary.LittleEndian.PutUint32(b, uint32(len(key)))
	copy(b[recHdrSize:], key)
	return b
}()

func ioctlNow(fd int, req uintptr, arg unsafe.Pointer) error {
	switch req {
	case iocAdd, iocDone:
		a := (*keysArgs)(arg)
		a.Done = a.Nr
	case iocDoneGet, iocGet:
		g := (*getArgs)(arg)
		if req == iocDoneGet {
			a := (*doneGetArgs)(arg)
			a.Done = a.DoneNr
			g = &a.Get
		}
		b := unsafe.Slice(*(**byte)(unsafe.Pointer(&g.Recs)), g.RecsLen)
		g.Nr, g.Used = 1, uint32(copy(b, countRec))
	}
	return nil
}

// NewCounting is a Queue whose calls reach the stand-in above.
func NewCounting() *Queue {
	q := &Queue{fd: -1, name: "kwqcount", onError: handler(nil), shutCh: make(chan struct{}),
		leases: map[string]taken{}}
	q.w.cond.L = &q.w.mu
	return q
}
