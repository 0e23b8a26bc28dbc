// SPDX-License-Identifier: LGPL-2.1-or-later

package main

import (
	"fmt"
	"os"
	"time"

	"kwq.dev/kwq"
	"kwq.dev/kwq/internal/behave"
)

// addBehave adds the cases package kwqtest passes on the host
// (internal/behave), here against the module in real time: the two
// implementations of kwq.Interface kept in step.
func addBehave() {
	env := &behave.Env{
		New: func(cfg kwq.Config) (kwq.Interface, error) {
			seq++
			cfg.Name = fmt.Sprintf("behave-%d-%d", os.Getpid(), seq)
			cfg.Mode = 0o600
			cfg.ErrorHandler = func(err error) { fmt.Printf("    # error handler: %v\n", err) }
			kwq.Destroy(cfg.Name)
			return kwq.New(cfg)
		},
		Finish: func(q kwq.Interface) {
			q.Close()
			kwq.Destroy(q.Name())
		},
		Advance: time.Sleep,
		// The VM's timers under TCG on a loaded host.
		Slack: 100 * time.Millisecond,
	}
	for _, c := range behave.Cases() {
		add("behave: "+c.Name, func() error { return c.Fn(env) })
	}
}
