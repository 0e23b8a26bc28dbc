// SPDX-License-Identifier: LGPL-2.1-or-later

// Package compat proves at compile time that a *kwq.Queue is a
// client-go workqueue: make check builds it against the real
// k8s.io/client-go/util/workqueue (0.36, from Debian) and runs it.
package compat

import (
	"testing"

	"k8s.io/client-go/util/workqueue"
	"kwq.dev/kwq"
	"kwq.dev/kwq/kwqtest"
)

var (
	_ workqueue.TypedRateLimitingInterface[string] = (*kwq.Queue)(nil)
	_ workqueue.TypedDelayingInterface[string]     = (*kwq.Queue)(nil)
	_ workqueue.TypedInterface[string]             = (*kwq.Queue)(nil)

	// The in-process queue of a controller's unit tests is one too.
	_ workqueue.TypedRateLimitingInterface[string] = (*kwqtest.Queue)(nil)
	_ kwq.Interface                                = (*kwqtest.Queue)(nil)
)

// A controller holds its queue as the interface; kwq.New is the one line
// that changes.
type controller struct {
	queue workqueue.TypedRateLimitingInterface[string]
}

func TestSwitch(t *testing.T) {
	var c controller
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "compat"})
	c.queue.Add("a")
	if k, shut := c.queue.Get(); k != "a" || shut {
		t.Fatalf("client-go Get: %q %v", k, shut)
	}
	c.queue.Done("a")
	c.queue.ShutDown()
	// Without /dev/kwq (the host) New fails with a clear error.
	q, err := kwq.New(kwq.Config{Name: "compat", RateLimiter: kwq.DefaultControllerRateLimiter()})
	if err == nil {
		c.queue = q
		q.ShutDown()
		q.Close()
		kwq.Destroy("compat")
	}
}
