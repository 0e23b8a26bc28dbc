// SPDX-License-Identifier: LGPL-2.1-or-later

package kwq

import "time"

// Interface is what a controller uses of a queue: client-go's
// TypedRateLimitingInterface[string] (Add ... NumRequeues) and the kwq
// methods that return errors. *Queue implements it over /dev/kwq, and
// package kwqtest's Queue in the process, with a clock a test steps: a
// controller that holds its queue as an Interface is unit-tested without
// the module.
type Interface interface {
	Add(key string)
	Len() int
	Get() (key string, shutdown bool)
	Done(key string)
	ShutDown()
	ShutDownWithDrain()
	ShuttingDown() bool
	AddAfter(key string, d time.Duration)
	AddRateLimited(key string)
	Forget(key string)
	NumRequeues(key string) int

	Name() string
	TryAdd(key string) error
	TryAddPriority(key string, prio int32) error
	AddBatch(keys []string) (int, error)
	TryAddAfter(key string, d time.Duration) error
	TryAddAfterPolicy(key string, d time.Duration, p AfterPolicy) error
	TryAddRateLimited(key string) (time.Duration, error)
	TryGet(timeout time.Duration) (string, error)
	GetBatch(max int, timeout time.Duration) ([]string, error)
	DoneGetOne(done string, timeout time.Duration) (string, error)
	TryDone(key string) error
	TryForget(key string) error
	TryNumRequeues(key string) (int, error)
	TryLen() (int, error)
	Remove(key string) error
	SetProcessingTimeout(d time.Duration) error
	Touch(key string, d time.Duration) error
	Inspect(key string) (KeyInfo, error)
	DeadKeys() ([]KeyInfo, error)
	Revive(key string) error
	ReviveAll() (int, error)
	Purge(key string) error
	PurgeAll() (int, error)
	ShutDownQueue(drain bool) error
	NotHeldDones() uint64
	Err() error
	Flush()
	Close() error
}

var _ Interface = (*Queue)(nil)
