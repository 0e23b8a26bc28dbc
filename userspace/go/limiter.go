// SPDX-License-Identifier: LGPL-2.1-or-later

package kwq

import (
	"fmt"
	"time"
)

// RateLimiter names the per-key rate limiters of a queue, built by the
// constructors below, which take the arguments of client-go's
// workqueue constructors of the same names. The kernel computes the
// delays (client-go's numerics); a RateLimiter only describes them.
type RateLimiter struct {
	limits  []kwqLimit
	maxWait time.Duration
	err     error
}

func durNs(what string, d time.Duration) (uint64, error) {
	if d < 0 {
		return 0, fmt.Errorf("kwq: %s %v is negative", what, d)
	}
	return uint64(d), nil
}

// NewItemExponentialFailureRateLimiter: baseDelay*2^failures per key,
// capped at maxDelay (client-go's NewTypedItemExponentialFailureRateLimiter).
func NewItemExponentialFailureRateLimiter(baseDelay, maxDelay time.Duration) *RateLimiter {
	a, err := durNs("exponential base delay", baseDelay)
	if err != nil {
		return &RateLimiter{err: err}
	}
	b, err := durNs("exponential max delay", maxDelay)
	if err != nil {
		return &RateLimiter{err: err}
	}
	return &RateLimiter{limits: []kwqLimit{{Type: limitExponential, A: a, B: b}}}
}

// NewItemFastSlowRateLimiter: fastDelay for the first maxFastAttempts
// failures of a key, slowDelay after (client-go's
// NewTypedItemFastSlowRateLimiter).
func NewItemFastSlowRateLimiter(fastDelay, slowDelay time.Duration, maxFastAttempts int) *RateLimiter {
	a, err := durNs("fast-slow fast delay", fastDelay)
	if err != nil {
		return &RateLimiter{err: err}
	}
	b, err := durNs("fast-slow slow delay", slowDelay)
	if err != nil {
		return &RateLimiter{err: err}
	}
	if maxFastAttempts < 0 || uint64(maxFastAttempts) > 1<<32-1 {
		return &RateLimiter{err: fmt.Errorf("kwq: fast-slow attempts %d out of range", maxFastAttempts)}
	}
	return &RateLimiter{limits: []kwqLimit{{Type: limitFastSlow, Count: uint32(maxFastAttempts), A: a, B: b}}}
}

// NewBucketRateLimiter: an overall token bucket of qps tokens a second
// and burst tokens, shared by all keys (client-go's
// &TypedBucketRateLimiter{Limiter: rate.NewLimiter(rate.Limit(qps), burst)}).
// qps is kept to a thousandth.
func NewBucketRateLimiter(qps float64, burst int) *RateLimiter {
	if !(qps > 0) || qps*1000 > 1<<63 {
		return &RateLimiter{err: fmt.Errorf("kwq: bucket qps %v out of range", qps)}
	}
	if burst < 0 || uint64(burst) > 1<<32-1 {
		return &RateLimiter{err: fmt.Errorf("kwq: bucket burst %d out of range", burst)}
	}
	return &RateLimiter{limits: []kwqLimit{{Type: limitBucket, Count: uint32(burst), A: uint64(qps*1000 + 0.5)}}}
}

// NewMaxOfRateLimiter: the longest delay of its limiters (client-go's
// NewTypedMaxOfRateLimiter); at most 4 limiters in all.
func NewMaxOfRateLimiter(limiters ...*RateLimiter) *RateLimiter {
	r := &RateLimiter{}
	for _, l := range limiters {
		if l == nil {
			return &RateLimiter{err: fmt.Errorf("kwq: nil rate limiter")}
		}
		if l.err != nil {
			return &RateLimiter{err: l.err}
		}
		r.limits = append(r.limits, l.limits...)
		if l.maxWait > 0 && (r.maxWait == 0 || l.maxWait < r.maxWait) {
			r.maxWait = l.maxWait
		}
	}
	if len(r.limits) == 0 {
		r.err = fmt.Errorf("kwq: max-of with no rate limiter")
	}
	return r
}

// NewWithMaxWaitRateLimiter: limiter's delays capped at maxDelay
// (client-go's NewTypedWithMaxWaitRateLimiter).
func NewWithMaxWaitRateLimiter(limiter *RateLimiter, maxDelay time.Duration) *RateLimiter {
	if limiter == nil {
		return &RateLimiter{err: fmt.Errorf("kwq: nil rate limiter")}
	}
	if maxDelay <= 0 {
		return &RateLimiter{err: fmt.Errorf("kwq: max wait %v is not positive", maxDelay)}
	}
	r := *limiter
	r.limits = append([]kwqLimit(nil), limiter.limits...)
	if r.maxWait == 0 || maxDelay < r.maxWait {
		r.maxWait = maxDelay
	}
	return &r
}

// DefaultControllerRateLimiter: client-go's
// DefaultTypedControllerRateLimiter, exponential 5ms..1000s and a bucket
// of 10 qps, burst 100. It is also what a nil Config.RateLimiter means.
func DefaultControllerRateLimiter() *RateLimiter {
	return NewMaxOfRateLimiter(
		NewItemExponentialFailureRateLimiter(5*time.Millisecond, 1000*time.Second),
		NewBucketRateLimiter(10, 100))
}

func (r *RateLimiter) check() error {
	if r.err != nil {
		return r.err
	}
	if len(r.limits) > limitsMax {
		return fmt.Errorf("kwq: %d rate limiters, the kernel combines at most %d", len(r.limits), limitsMax)
	}
	return nil
}
