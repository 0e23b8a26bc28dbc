// SPDX-License-Identifier: LGPL-2.1-or-later

package kwq

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// goABI is the Go mirror of what testdata/abi.c prints from the header.
var goABI = map[string]uintptr{
	"KWQ_IOC_CREATE":                          iocCreate,
	"KWQ_IOC_INFO":                            iocInfo,
	"KWQ_IOC_OPEN":                            iocOpen,
	"KWQ_IOC_DESTROY":                         iocDestroy,
	"KWQ_IOC_ADD":                             iocAdd,
	"KWQ_IOC_GET":                             iocGet,
	"KWQ_IOC_DONE":                            iocDone,
	"KWQ_IOC_FORGET":                          iocForget,
	"KWQ_IOC_REMOVE":                          iocRemove,
	"KWQ_IOC_NUM_REQUEUES":                    iocNumRequeues,
	"KWQ_IOC_LEN":                             iocLen,
	"KWQ_IOC_SHUTDOWN":                        iocShutdown,
	"KWQ_IOC_STATS":                           iocStats,
	"KWQ_IOC_DONE_GET":                        iocDoneGet,
	"KWQ_IOC_REVIVE":                          iocRevive,
	"KWQ_IOC_PURGE":                           iocPurge,
	"KWQ_IOC_INSPECT":                         iocInspect,
	"KWQ_IOC_TOUCH":                           iocTouch,
	"KWQ_IOC_RING_SETUP":                      iocRingSetup,
	"KWQ_IOC_RING_ENTER":                      iocRingEnter,
	"KWQ_RING_OFF_USER":                       ringOffUser,
	"KWQ_RING_OFF_KERNEL":                     ringOffKernel,
	"KWQ_RING_OFF_STATUS":                     ringOffStatus,
	"KWQ_RING_LEASES_MAX":                     ringLeasesMax,
	"KWQ_SQE_SIZE":                            sqeSize,
	"KWQ_SQE_INLINE":                          sqeInline,
	"KWQ_LEASE_SLOT_SIZE":                     leaseSlotSize,
	"sizeof(struct kwq_sqe) - 40":             unsafe.Sizeof(sqe{}),
	"sizeof(struct kwq_cqe)":                  unsafe.Sizeof(cqe{}),
	"offsetof(struct kwq_lease_slot, key)":    leaseKeyOff,
	"offsetof(struct kwq_ring_status, ready)": statusReadyOff,
	"offsetof(struct kwq_ring_status, flags)": statusFlagsOff,
	"KWQ_SQE_ADD":                             sqeAdd,
	"KWQ_SQE_DONE":                            sqeDone,
	"KWQ_SQE_DONE_LEASE":                      sqeDoneLease,
	"KWQ_CQE_LEASE":                           cqeLease,
	"KWQ_RING_F_BROKEN":                       ringFBroken,
	"KWQ_STATUS_SHUTDOWN":                     statusShutdown,
	"KWQ_STATUS_DESTROYED":                    statusDestroyed,
	"KWQ_ENTER_SUBMIT":                        enterSubmit,
	"KWQ_ENTER_GET":                           enterGet,
	"sizeof(struct kwq_info_rec)":             infoRecSize,
	"KWQ_INFO_REC_SIZE_MAX":                   infoRecSizeMax,
	"KWQ_INSPECT_MAX":                         inspectMax,
	"KWQ_DEAD_ALL":                            deadAll,
	"KWQ_KEY_STATES_ALL":                      uintptr(StatesAll),
	"sizeof(struct kwq_limit)":                unsafe.Sizeof(kwqLimit{}),
	"sizeof(struct kwq_rec)":                  recHdrSize,
	"KWQ_REC_SIZE_MAX":                        recSizeMax,
	"KWQ_NAME_LEN":                            nameLen,
	"KWQ_KEY_LEN_MAX":                         KeyLenMax,
	"KWQ_LIMITS_MAX":                          limitsMax,
	"KWQ_BATCH_MAX":                           BatchMax,
	"KWQ_LIMIT_EXPONENTIAL":                   limitExponential,
	"KWQ_LIMIT_FAST_SLOW":                     limitFastSlow,
	"KWQ_LIMIT_BUCKET":                        limitBucket,
	"KWQ_ADD_AFTER":                           addAfter,
	"KWQ_ADD_RATE_LIMITED":                    addRateLimited,
	"KWQ_ADD_REPLACE":                         addReplace,
	"KWQ_ADD_LATER":                           addLater,
	"KWQ_TIMEOUT_NONE":                        uintptr(timeoutNone),
	"KWQ_PROCESSING_TIMEOUT_MIN":              uintptr(processingTimeoutMin),
	"KWQ_PROCESSING_TIMEOUT_MAX":              uintptr(processingTimeoutMax),
	"KWQ_GET_DETACHED":                        getDetached,
	"KWQ_CREATE_EPHEMERAL":                    createEphem,
	"KWQ_DEFAULT_MAX_DEAD":                    defaultMaxDead,
	"KWQ_SHUTDOWN_DRAIN":                      shutdownDrain,
	"KWQ_STATS_BUCKETS":                       statsBuckets,
	"KWQ_STATS_PRIOS":                         statsPrios,
}

// TestABI compares the Go mirror with the C header: KWQ_ABI_FILE is the
// output of testdata/abi.c (make check sets it). Without it, the values
// gcc printed for x86_64 when the mirror was written.
func TestABI(t *testing.T) {
	want := map[string]uint64{
		"KWQ_IOC_CREATE": 0x40c8b700, "KWQ_IOC_OPEN": 0x4048b701, "KWQ_IOC_DESTROY": 0x4048b702,
		"KWQ_IOC_ADD": 0xc030b704, "KWQ_IOC_GET": 0xc030b705, "KWQ_IOC_DONE": 0xc030b706,
		"KWQ_IOC_FORGET": 0xc030b707, "KWQ_IOC_REMOVE": 0xc030b708,
		"KWQ_IOC_NUM_REQUEUES": 0xc010b709, "KWQ_IOC_LEN": 0x8008b70a,
		"KWQ_IOC_SHUTDOWN": 0x4008b70b, "KWQ_IOC_STATS": 0x81d8b70c, "KWQ_IOC_DONE_GET": 0xc048b70d,
		"KWQ_IOC_TOUCH": 0x4018b70e, "KWQ_IOC_REVIVE": 0xc018b710, "KWQ_IOC_PURGE": 0xc018b711,
		"KWQ_IOC_INSPECT": 0xc030b712, "KWQ_IOC_RING_SETUP": 0xc048b713, "KWQ_IOC_RING_ENTER": 0xc028b714,
	}
	if path := os.Getenv("KWQ_ABI_FILE"); path != "" {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		want = map[string]uint64{}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			i := strings.LastIndexByte(sc.Text(), ' ')
			v, err := strconv.ParseUint(sc.Text()[i+1:], 10, 64)
			if i < 0 || err != nil {
				t.Fatalf("%s: bad line %q", path, sc.Text())
			}
			want[sc.Text()[:i]] = v
		}
		for name := range goABI {
			if _, ok := want[name]; !ok {
				t.Errorf("%s: %s missing", path, name)
			}
		}
	}
	for name, w := range want {
		got, ok := goABI[name]
		if !ok {
			t.Errorf("%s: no Go mirror", name)
		} else if uint64(got) != w {
			t.Errorf("%s: %#x in Go, %#x in the C header", name, got, w)
		}
	}
}
