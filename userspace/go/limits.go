// SPDX-License-Identifier: LGPL-2.1-or-later

package kwq

import "time"

// LimiterKind names the kind of one limiter of a RateLimiter.
type LimiterKind int

// The kinds of limiter, as the constructors of the same names make them.
const (
	ExponentialLimiter LimiterKind = iota + 1 // NewItemExponentialFailureRateLimiter
	FastSlowLimiter                           // NewItemFastSlowRateLimiter
	BucketLimiter                             // NewBucketRateLimiter
)

// Limit describes one limiter of a RateLimiter, with the values the
// kernel is given: what an implementation outside the kernel (package
// kwqtest) needs to compute the same delays.
type Limit struct {
	Kind LimiterKind
	// ExponentialLimiter: Base * 2^failures, at most Max.
	// FastSlowLimiter: Base for the first MaxFast failures, Max after.
	Base, Max time.Duration
	MaxFast   uint32
	// BucketLimiter: QPSMilli thousandths of a token a second, Burst
	// tokens, starting full.
	QPSMilli uint64
	Burst    uint32
}

// Limits describes r: its limiters in order, and the cap on their delay
// (0: none). A nil r is DefaultControllerRateLimiter, as in Config. The
// error is the one New would return for r.
func (r *RateLimiter) Limits() ([]Limit, time.Duration, error) {
	if r == nil {
		r = DefaultControllerRateLimiter()
	}
	if err := r.check(); err != nil {
		return nil, 0, err
	}
	out := make([]Limit, 0, len(r.limits))
	for _, l := range r.limits {
		switch l.Type {
		case limitExponential:
			out = append(out, Limit{Kind: ExponentialLimiter,
				Base: time.Duration(l.A), Max: time.Duration(l.B)})
		case limitFastSlow:
			out = append(out, Limit{Kind: FastSlowLimiter, MaxFast: l.Count,
				Base: time.Duration(l.A), Max: time.Duration(l.B)})
		case limitBucket:
			out = append(out, Limit{Kind: BucketLimiter, QPSMilli: l.A, Burst: l.Count})
		}
	}
	return out, r.maxWait, nil
}
