// SPDX-License-Identifier: LGPL-2.1-or-later

// Package behave is the set of behaviour cases run against both
// implementations of kwq.Interface: the module's (*kwq.Queue, by
// cmd/kwq-gotest in the VM, in real time) and the process's
// (*kwqtest.Queue, by kwqtest's host tests, on a fake clock). A case
// that passes on one and fails on the other is a difference between
// them: fix the one that is wrong, never the case.
package behave

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"kwq.dev/kwq"
)

// Env is what a case needs of an implementation.
type Env struct {
	// New makes a fresh queue with cfg's options (Name is set by New).
	New func(cfg kwq.Config) (kwq.Interface, error)
	// Finish closes and, if it can, destroys a queue New made.
	Finish func(q kwq.Interface)
	// Advance lets d pass: real time sleeps, a fake clock steps. The
	// cases give real time a margin (Slack) past each deadline.
	Advance func(d time.Duration)
	Slack   time.Duration
}

// Case is one behaviour.
type Case struct {
	Name string
	Fn   func(e *Env) error
}

func errorf(format string, a ...any) error { return fmt.Errorf(format, a...) }

// with runs fn on a fresh queue.
func with(e *Env, cfg kwq.Config, fn func(q kwq.Interface) error) error {
	q, err := e.New(cfg)
	if err != nil {
		return err
	}
	defer e.Finish(q)
	return fn(q)
}

// take takes one key that must be ready now.
func take(q kwq.Interface, want string) error {
	k, err := q.TryGet(0)
	if err != nil {
		return errorf("get: want %q, got %v", want, err)
	}
	if k != want {
		return errorf("get: want %q, got %q", want, k)
	}
	return nil
}

func wantLen(q kwq.Interface, n int) error {
	if l := q.Len(); l != n {
		return errorf("Len %d, want %d", l, n)
	}
	return nil
}

func wantErr(what string, err, want error) error {
	if !errors.Is(err, want) {
		return errorf("%s: %v, want %v", what, err, want)
	}
	return nil
}

func first(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// exp is a per-key exponential limiter with no token bucket.
func exp(base, max time.Duration) *kwq.RateLimiter {
	return kwq.NewItemExponentialFailureRateLimiter(base, max)
}

// Cases is the shared set.
func Cases() []Case {
	return []Case{
		{"dedup: a key queued twice is handed out once", func(e *Env) error {
			return with(e, kwq.Config{}, func(q kwq.Interface) error {
				q.Add("a")
				q.Add("b")
				q.Add("a")
				return first(wantLen(q, 2), take(q, "a"), take(q, "b"),
					wantErr("get of an empty queue", func() error { _, err := q.TryGet(0); return err }(), unix.EAGAIN))
			})
		}},
		{"dirty: an add while processing requeues at Done, once", func(e *Env) error {
			return with(e, kwq.Config{}, func(q kwq.Interface) error {
				q.Add("a")
				if err := take(q, "a"); err != nil {
					return err
				}
				q.Add("a")
				q.Add("a")
				if err := wantLen(q, 0); err != nil {
					return errorf("processing key added again: %v", err)
				}
				q.Done("a")
				return first(wantLen(q, 1), take(q, "a"))
			})
		}},
		{"priorities: higher first, FIFO within one, a raise moves to the tail", func(e *Env) error {
			return with(e, kwq.Config{}, func(q kwq.Interface) error {
				q.Add("x")
				q.Add("y")
				if err := first(q.TryAddPriority("p1", 5), q.TryAddPriority("p2", 5),
					q.TryAddPriority("x", 5), q.TryAddPriority("y", -3)); err != nil {
					return err
				}
				return first(take(q, "p1"), take(q, "p2"), take(q, "x"), take(q, "y"))
			})
		}},
		{"add-after: not before its deadline, then ready", func(e *Env) error {
			return with(e, kwq.Config{}, func(q kwq.Interface) error {
				if err := q.TryAddAfter("a", 400*time.Millisecond); err != nil {
					return err
				}
				if err := wantLen(q, 0); err != nil {
					return err
				}
				e.Advance(400*time.Millisecond + e.Slack)
				return first(wantLen(q, 1), take(q, "a"))
			})
		}},
		{"add of a waiting key: queued now, and once", func(e *Env) error {
			return with(e, kwq.Config{}, func(q kwq.Interface) error {
				if err := q.TryAddAfter("a", 300*time.Millisecond); err != nil {
					return err
				}
				q.Add("a")
				if err := first(wantLen(q, 1), take(q, "a")); err != nil {
					return err
				}
				q.Done("a")
				e.Advance(300*time.Millisecond + e.Slack)
				return wantLen(q, 0)
			})
		}},
		{"add-after of a processing key: waits after Done for what is left", func(e *Env) error {
			return with(e, kwq.Config{}, func(q kwq.Interface) error {
				q.Add("a")
				if err := take(q, "a"); err != nil {
					return err
				}
				if err := q.TryAddAfter("a", 400*time.Millisecond); err != nil {
					return err
				}
				q.Done("a")
				if ki, err := q.Inspect("a"); err != nil || ki.State != kwq.Waiting {
					return errorf("after Done: %+v %v, want waiting", ki, err)
				}
				e.Advance(400*time.Millisecond + e.Slack)
				return take(q, "a")
			})
		}},
		{"add-after of a processing key: it waits at the add's priority, not its run's", func(e *Env) error {
			return with(e, kwq.Config{}, func(q kwq.Interface) error {
				if err := q.TryAddPriority("a", 5); err != nil {
					return err
				}
				if err := take(q, "a"); err != nil {
					return err
				}
				if err := q.TryAddAfter("a", 400*time.Millisecond); err != nil {
					return err
				}
				q.Done("a")
				if ki, err := q.Inspect("a"); err != nil || ki.State != kwq.Waiting || ki.Priority != 0 {
					return errorf("after Done: %+v %v, want waiting at priority 0", ki, err)
				}
				if err := q.TryAddPriority("c", 1); err != nil {
					return err
				}
				e.Advance(400*time.Millisecond + e.Slack)
				return first(take(q, "c"), take(q, "a"))
			})
		}},
		{"add of a processing key that remembers a deadline: dirty at the higher priority", func(e *Env) error {
			return with(e, kwq.Config{}, func(q kwq.Interface) error {
				// READY(5, D), taken: delayed(5); an add at 0: dirty(5)
				if err := first(q.TryAddPriority("a", 5), q.TryAddAfter("a", time.Hour)); err != nil {
					return err
				}
				if err := take(q, "a"); err != nil {
					return err
				}
				q.Add("a")
				q.Done("a")
				if ki, err := q.Inspect("a"); err != nil || ki.State != kwq.Ready || ki.Priority != 5 || !ki.HasDue {
					return errorf("after Done: %+v %v, want ready at priority 5, the deadline kept", ki, err)
				}
				if err := q.TryAddPriority("c", 1); err != nil {
					return err
				}
				return first(take(q, "a"), take(q, "c"))
			})
		}},
		{"add-after policies: earliest by default, replace, latest", func(e *Env) error {
			return with(e, kwq.Config{}, func(q kwq.Interface) error {
				due := func(k string) (time.Duration, error) {
					ki, err := q.Inspect(k)
					if err != nil || !ki.HasDue {
						return 0, errorf("inspect %s: %+v %v", k, ki, err)
					}
					return ki.Due, nil
				}
				if err := first(q.TryAddAfter("a", 20*time.Second), q.TryAddAfter("a", 40*time.Second)); err != nil {
					return err
				}
				if d, err := due("a"); err != nil || d > 20*time.Second || d < 19*time.Second {
					return errorf("earliest: due in %v %v, want ~20s", d, err)
				}
				if err := q.TryAddAfterPolicy("a", 60*time.Second, kwq.Replace); err != nil {
					return err
				}
				if d, err := due("a"); err != nil || d < 59*time.Second {
					return errorf("replace: due in %v %v, want ~60s", d, err)
				}
				if err := q.TryAddAfterPolicy("a", 30*time.Second, kwq.Latest); err != nil {
					return err
				}
				if d, err := due("a"); err != nil || d < 59*time.Second {
					return errorf("latest: due in %v %v, want ~60s still", d, err)
				}
				return wantErr("replace with no delay", q.TryAddAfterPolicy("a", 0, kwq.Replace), unix.EINVAL)
			})
		}},
		{"rate limits: exponential delays, NumRequeues, Forget", func(e *Env) error {
			return with(e, kwq.Config{RateLimiter: exp(time.Second, 3*time.Second)}, func(q kwq.Interface) error {
				for i, want := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
					d, err := q.TryAddRateLimited("a")
					if err != nil || d != want {
						return errorf("failure %d: delay %v %v, want %v", i+1, d, err, want)
					}
				}
				if n := q.NumRequeues("a"); n != 3 {
					return errorf("NumRequeues %d, want 3", n)
				}
				q.Forget("a")
				if n := q.NumRequeues("a"); n != 0 {
					return errorf("NumRequeues after Forget %d, want 0", n)
				}
				d, err := q.TryAddRateLimited("a")
				if err != nil || d != time.Second {
					return errorf("after Forget: delay %v %v, want 1s", d, err)
				}
				return nil
			})
		}},
		{"token bucket: burst then qps", func(e *Env) error {
			rl := kwq.NewBucketRateLimiter(2, 3)
			return with(e, kwq.Config{RateLimiter: rl}, func(q kwq.Interface) error {
				var got []time.Duration
				for i := range 5 {
					d, err := q.TryAddRateLimited(fmt.Sprintf("k%d", i))
					if err != nil {
						return err
					}
					got = append(got, d)
				}
				// 3 free, then 0.5 s and 1 s (less the time the calls took).
				if got[0] != 0 || got[2] != 0 || got[3] <= 400*time.Millisecond ||
					got[3] > 500*time.Millisecond || got[4] <= 900*time.Millisecond || got[4] > time.Second {
					return errorf("delays %v, want [0 0 0 ~0.5s ~1s]", got)
				}
				if n := q.NumRequeues("k0"); n != 0 {
					return errorf("a bucket alone counts no failures (client-go): %d", n)
				}
				return nil
			})
		}},
		{"dead set: the last failure dies, revive brings it back", func(e *Env) error {
			cfg := kwq.Config{RateLimiter: exp(time.Millisecond, time.Millisecond), MaxRetries: 2}
			return with(e, cfg, func(q kwq.Interface) error {
				for i := range 2 {
					if d, err := q.TryAddRateLimited("a"); err != nil || d != time.Millisecond {
						return errorf("failure %d: %v %v", i+1, d, err)
					}
				}
				if d, err := q.TryAddRateLimited("a"); err != nil || d != kwq.DelayDead {
					return errorf("last failure: %v %v, want DelayDead", d, err)
				}
				dead, err := q.DeadKeys()
				if err != nil || len(dead) != 1 || dead[0].Key != "a" || dead[0].Failures != 3 {
					return errorf("dead keys %+v %v", dead, err)
				}
				if err := first(wantLen(q, 0), wantErr("remove of a dead key", q.Remove("a"), unix.ENOENT)); err != nil {
					return err
				}
				if err := q.Revive("a"); err != nil {
					return err
				}
				return first(wantLen(q, 1), take(q, "a"),
					func() error {
						if n := q.NumRequeues("a"); n != 0 {
							return errorf("revived count %d", n)
						}
						return nil
					}())
			})
		}},
		{"a dying key dies at Done; an add before Done saves it", func(e *Env) error {
			cfg := kwq.Config{RateLimiter: exp(time.Millisecond, time.Millisecond), MaxRetries: 1}
			return with(e, cfg, func(q kwq.Interface) error {
				q.Add("a")
				q.Add("b")
				if err := first(take(q, "a"), take(q, "b")); err != nil {
					return err
				}
				for _, k := range []string{"a", "b"} {
					q.AddRateLimited(k)
					e.Advance(time.Millisecond + e.Slack)
					q.Done(k)
					if err := take(q, k); err != nil {
						return err
					}
					if d, err := q.TryAddRateLimited(k); err != nil || d != kwq.DelayDead {
						return errorf("%s last failure: %v %v", k, d, err)
					}
				}
				q.Add("b")
				q.Done("a")
				q.Done("b")
				ki, err := q.Inspect("a")
				if err != nil || ki.State != kwq.Dead {
					return errorf("a: %+v %v, want dead", ki, err)
				}
				return first(wantLen(q, 1), take(q, "b"))
			})
		}},
		{"Done of a key not held: a no-op for Done, ENOENT/EPERM for TryDone", func(e *Env) error {
			return with(e, kwq.Config{}, func(q kwq.Interface) error {
				q.Done("nobody")
				if n := q.NotHeldDones(); n != 1 {
					return errorf("NotHeldDones %d, want 1", n)
				}
				q.Add("a")
				return first(wantErr("TryDone of a ready key", q.TryDone("a"), unix.ENOENT),
					wantErr("TryDone of an unknown key", q.TryDone("x"), unix.ENOENT))
			})
		}},
		{"remove: ready and waiting keys go, a processing key is EBUSY", func(e *Env) error {
			return with(e, kwq.Config{}, func(q kwq.Interface) error {
				q.Add("a")
				q.Add("b")
				if err := first(q.TryAddAfter("w", time.Hour), q.Remove("a"), q.Remove("w")); err != nil {
					return err
				}
				if err := first(wantErr("remove again", q.Remove("a"), unix.ENOENT), take(q, "b")); err != nil {
					return err
				}
				if err := wantErr("remove of a processing key", q.Remove("b"), unix.EBUSY); err != nil {
					return err
				}
				q.Add("b")
				if err := q.Remove("b"); err != nil {
					return errorf("remove of the pending requeue: %v", err)
				}
				q.Done("b")
				return wantLen(q, 0)
			})
		}},
		{"processing deadline: the lease is revoked, the key comes back, Done is ESTALE", func(e *Env) error {
			cfg := kwq.Config{RateLimiter: exp(time.Millisecond, time.Millisecond), ProcessingTimeout: 200 * time.Millisecond}
			return with(e, cfg, func(q kwq.Interface) error {
				q.Add("a")
				if err := take(q, "a"); err != nil {
					return err
				}
				e.Advance(200*time.Millisecond + time.Millisecond + e.Slack)
				if err := wantErr("Done after the deadline", q.TryDone("a"), unix.ESTALE); err != nil {
					return err
				}
				if err := take(q, "a"); err != nil {
					return errorf("revoked key: %v", err)
				}
				if n := q.NumRequeues("a"); n != 1 {
					return errorf("NumRequeues %d, want 1 (a revocation is a failure)", n)
				}
				return q.TryDone("a")
			})
		}},
		{"touch moves the processing deadline", func(e *Env) error {
			cfg := kwq.Config{ProcessingTimeout: 300 * time.Millisecond}
			return with(e, cfg, func(q kwq.Interface) error {
				q.Add("a")
				if err := take(q, "a"); err != nil {
					return err
				}
				if err := q.Touch("a", time.Hour); err != nil {
					return err
				}
				e.Advance(300*time.Millisecond + e.Slack)
				return first(wantErr("touch of an unknown key", q.Touch("x", 0), unix.ENOENT), q.TryDone("a"))
			})
		}},
		{"ShutDown: this user's Gets end, its adds are dropped", func(e *Env) error {
			return with(e, kwq.Config{}, func(q kwq.Interface) error {
				q.Add("a")
				q.ShutDown()
				if !q.ShuttingDown() {
					return errorf("ShuttingDown false")
				}
				if k, shut := q.Get(); !shut {
					return errorf("Get after ShutDown: %q", k)
				}
				return first(wantErr("TryAdd after ShutDown", q.TryAdd("b"), unix.ESHUTDOWN), q.Err())
			})
		}},
		{"ShutDownQueue: ready keys are still handed out, then ESHUTDOWN", func(e *Env) error {
			return with(e, kwq.Config{}, func(q kwq.Interface) error {
				q.Add("a")
				if err := first(q.TryAddAfter("w", time.Hour), q.ShutDownQueue(false)); err != nil {
					return err
				}
				if err := first(take(q, "a"), wantErr("add", q.TryAdd("b"), unix.ESHUTDOWN)); err != nil {
					return err
				}
				_, err := q.TryGet(0)
				return wantErr("get when drained", err, unix.ESHUTDOWN)
			})
		}},
		{"keys: 1024 bytes fit, 1025 and empty ones are refused", func(e *Env) error {
			return with(e, kwq.Config{}, func(q kwq.Interface) error {
				long := strings.Repeat("k", kwq.KeyLenMax)
				if err := q.TryAdd(long); err != nil {
					return err
				}
				if err := take(q, long); err != nil {
					return err
				}
				if q.TryAdd(long+"x") == nil || q.TryAdd("") == nil {
					return errorf("bad key lengths accepted")
				}
				return q.TryDone(long)
			})
		}},
		{"max items: a new key beyond it is ENOSPC, changing nothing", func(e *Env) error {
			return with(e, kwq.Config{MaxItems: 2}, func(q kwq.Interface) error {
				q.Add("a")
				if err := q.TryAddAfter("b", time.Hour); err != nil {
					return err
				}
				if err := wantErr("third key", q.TryAdd("c"), unix.ENOSPC); err != nil {
					return err
				}
				return first(q.TryAdd("a"), wantLen(q, 1))
			})
		}},
	}
}
