// SPDX-License-Identifier: LGPL-2.1-or-later

package kwq

// The ioctl ABI of /dev/kwq, mirrored from include/uapi/linux/kwq.h
// (abi_test.go checks the sizes and numbers against the C header's).

import "unsafe"

const (
	nameLen    = 64   // KWQ_NAME_LEN
	KeyLenMax  = 1024 // KWQ_KEY_LEN_MAX: longest key
	limitsMax  = 4    // KWQ_LIMITS_MAX
	BatchMax   = 4096 // KWQ_BATCH_MAX: most keys in one batch call
	recHdrSize = 8    // sizeof(struct kwq_rec)
	recSizeMax = (recHdrSize + KeyLenMax + 7) &^ 7

	limitExponential = 1
	limitFastSlow    = 2
	limitBucket      = 3

	addAfter       = 0x1
	addRateLimited = 0x2
	addReplace     = 0x4
	addLater       = 0x8
	timeoutNone    = ^uint64(0)
	getDetached    = 0x1
	shutdownDrain  = 0x1
	createEphem    = 0x1
	defaultMaxDead = 1024

	statsBuckets = 10
	statsPrios   = 8
)

func recSize(n int) int { return (recHdrSize + n + 7) &^ 7 }

type kwqLimit struct {
	Type  uint32
	Count uint32
	A     uint64
	B     uint64
}

type createArgs struct {
	Name      [nameLen]byte
	Flags     uint32
	Mode      uint32
	NrLimits  uint32
	MaxItems  uint32
	MaxWaitNs uint64
	Limits    [limitsMax]kwqLimit
	// version 2: processing deadlines and the dead set
	ProcessingTimeoutNs uint64
	MaxRetries          uint32
	MaxDead             uint32
}

type openArgs struct {
	Name  [nameLen]byte
	Flags uint32
	Pad   uint32
}

type keysArgs struct {
	Recs    uint64
	RecsLen uint32
	Nr      uint32
	Flags   uint32
	Pad     uint32
	AfterNs int64
	Delays  uint64
	Done    uint32
	Pad2    uint32
}

type getArgs struct {
	Recs      uint64
	RecsLen   uint32
	Max       uint32
	Flags     uint32
	MinNr     uint32
	TimeoutNs int64
	Nr        uint32
	Used      uint32
	// version 2
	ProcessingTimeoutNs uint64
}

type doneGetArgs struct {
	DoneRecs uint64
	DoneLen  uint32
	DoneNr   uint32
	Done     uint32
	Pad      uint32
	Get      getArgs
}

type keyArgs struct {
	Key   uint64
	Len   uint32
	Count uint32
}

type shutdownArgs struct {
	Flags uint32
	Pad   uint32
}

type prioLen struct {
	Priority int32
	Pad      uint32
	Len      uint64
}

type statsHist struct {
	Le    [statsBuckets]uint64
	Count uint64
	SumNs uint64
}

type statsArgs struct {
	Len                   uint64
	Waiting               uint64
	Processing            uint64
	AddsTotal             uint64
	RetriesTotal          uint64
	DroppedAtShutdown     uint64
	LeaseReturns          uint64
	FailureRecords        uint64
	ShuttingDown          uint32
	Pad                   uint32
	Depth                 uint64
	FailureRecordsEvicted uint64
	UnfinishedWorkNs      uint64
	LongestRunningNs      uint64
	QueueDuration         statsHist
	WorkDuration          statsHist
	NrPrios               uint32
	Pad2                  uint32
	Prios                 [statsPrios]prioLen
	PriosOther            uint64
	// version 3: processing deadlines and the dead set
	ProcessingTimeoutsTotal uint64
	Dead                    uint64
	DeadTotal               uint64
	DeadDroppedTotal        uint64
}

const (
	iocWrite = 1
	iocRead  = 2
	iocMagic = 0xb7
)

func ioc(dir, nr, size uintptr) uintptr {
	return dir<<30 | size<<16 | iocMagic<<8 | nr
}

var (
	iocCreate      = ioc(iocWrite, 0x00, unsafe.Sizeof(createArgs{}))
	iocInfo        = ioc(iocRead, 0x15, unsafe.Sizeof(createArgs{}))
	iocOpen        = ioc(iocWrite, 0x01, unsafe.Sizeof(openArgs{}))
	iocDestroy     = ioc(iocWrite, 0x02, unsafe.Sizeof(openArgs{}))
	iocAdd         = ioc(iocRead|iocWrite, 0x04, unsafe.Sizeof(keysArgs{}))
	iocGet         = ioc(iocRead|iocWrite, 0x05, unsafe.Sizeof(getArgs{}))
	iocDone        = ioc(iocRead|iocWrite, 0x06, unsafe.Sizeof(keysArgs{}))
	iocForget      = ioc(iocRead|iocWrite, 0x07, unsafe.Sizeof(keysArgs{}))
	iocRemove      = ioc(iocRead|iocWrite, 0x08, unsafe.Sizeof(keysArgs{}))
	iocNumRequeues = ioc(iocRead|iocWrite, 0x09, unsafe.Sizeof(keyArgs{}))
	iocLen         = ioc(iocRead, 0x0a, 8)
	iocShutdown    = ioc(iocWrite, 0x0b, unsafe.Sizeof(shutdownArgs{}))
	iocStats       = ioc(iocRead, 0x0c, unsafe.Sizeof(statsArgs{}))
	iocDoneGet     = ioc(iocRead|iocWrite, 0x0d, unsafe.Sizeof(doneGetArgs{}))
	iocRevive      = ioc(iocRead|iocWrite, 0x10, unsafe.Sizeof(deadArgs{}))
	iocPurge       = ioc(iocRead|iocWrite, 0x11, unsafe.Sizeof(deadArgs{}))
	iocInspect     = ioc(iocRead|iocWrite, 0x12, unsafe.Sizeof(inspectArgs{}))
	iocTouch       = ioc(iocWrite, 0x0e, unsafe.Sizeof(touchArgs{}))
)

// KWQ_IOC_TOUCH: move the processing deadline of a key the fd holds.
type touchArgs struct {
	Key                 uint64
	Len                 uint32
	Flags               uint32
	ProcessingTimeoutNs uint64
}

// The dead set and introspection (KWQ_IOC_REVIVE, _PURGE, _INSPECT).
type deadArgs struct {
	Key   uint64
	Len   uint32
	Flags uint32
	Count uint64
}

type inspectArgs struct {
	Key     uint64
	Len     uint32
	States  uint32
	Cursor  uint64
	Recs    uint64
	RecsLen uint32
	Max     uint32
	Nr      uint32
	Used    uint32
}

type infoRec struct {
	Len       uint32
	State     uint32
	Flags     uint32
	Priority  int32
	Failures  uint32
	Holder    uint32
	SinceNs   uint64
	DueNs     uint64
	TimeoutNs uint64
}

const (
	deadAll        = 0x1
	infoRecSize    = unsafe.Sizeof(infoRec{})
	infoRecSizeMax = (infoRecSize + KeyLenMax + 7) &^ 7
	inspectMax     = 256
	keyFlagDue     = 0x8
)

// Rings (include/uapi/linux/kwq.h "Rings", Documentation/rings.rst).
const (
	ringOffUser   = 0x00000000 // KWQ_RING_OFF_USER
	ringOffKernel = 0x10000000 // KWQ_RING_OFF_KERNEL
	ringOffStatus = 0x20000000 // KWQ_RING_OFF_STATUS

	ringLeasesMax  = 256  // KWQ_RING_LEASES_MAX
	sqeSize        = 64   // KWQ_SQE_SIZE
	sqeInline      = 40   // KWQ_SQE_INLINE
	leaseSlotSize  = 1088 // KWQ_LEASE_SLOT_SIZE
	leaseKeyOff    = 64   // offsetof(struct kwq_lease_slot, key)
	statusReadyOff = 64   // offsetof(struct kwq_ring_status, ready)
	statusFlagsOff = 128  // offsetof(struct kwq_ring_status, flags)

	sqeAdd       = 1    // KWQ_SQE_ADD
	sqeDone      = 2    // KWQ_SQE_DONE
	sqeDoneLease = 3    // KWQ_SQE_DONE_LEASE
	cqeLease     = 0xff // KWQ_CQE_LEASE

	ringFBroken = 0x1 // KWQ_RING_F_BROKEN

	statusShutdown  = 0x1 // KWQ_STATUS_SHUTDOWN
	statusDestroyed = 0x2 // KWQ_STATUS_DESTROYED

	enterSubmit = 0x1 // KWQ_ENTER_SUBMIT
	enterGet    = 0x2 // KWQ_ENTER_GET
)

// sqeSlots is KWQ_SQE_SLOTS(n): the slots a record of an n-byte key takes.
func sqeSlots(n int) int { return 1 + (n+sqeSize-sqeInline-1)/sqeSize }

// sqe is struct kwq_sqe's 24-byte header; its 40 inline key bytes follow.
type sqe struct {
	Op        uint8
	Flags     uint8
	Nslots    uint16
	Len       uint32
	Priority  int32
	LeaseSlot uint32
	Arg       uint64
}

type cqe struct { // struct kwq_cqe
	Index uint32
	Op    uint8
	Flags uint8
	Res   int16
	Value uint64
}

type ringSetupArgs struct { // struct kwq_ring_setup_args
	SqEntries, CqEntries, LeaseSlots, Flags  uint32
	UserSize, KernelSize, StatusSize         uint64
	SqTailOff, CqHeadOff, SqesOff, SqHeadOff uint32
	CqTailOff, RingFlagsOff, CqesOff         uint32
	LeasesOff                                uint32
}

type ringEnterArgs struct { // struct kwq_ring_enter_args
	Flags, GetMax, GetMin, Pad uint32
	TimeoutNs                  int64
	ProcessingTimeoutNs        uint64
	Submitted, Leased          uint32
}

var (
	iocRingSetup = ioc(iocRead|iocWrite, 0x13, unsafe.Sizeof(ringSetupArgs{}))
	iocRingEnter = ioc(iocRead|iocWrite, 0x14, unsafe.Sizeof(ringEnterArgs{}))
)
