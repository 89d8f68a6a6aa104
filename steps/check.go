package steps

import (
	"context"
	"time"

	"github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
)

// pollEvery is how often eventually asks again.
const pollEvery = 100 * time.Millisecond

// eventually polls get with gomega's Eventually until its value satisfies m,
// within timeout and while ctx lasts, and returns the last value. An error
// from get ends the polling and is returned as it is; a timeout is the
// failure fail makes of the last value seen. A Gomega per call whose fail
// handler only lets Should return false: no panic, and safe under
// concurrent scenarios (the global InterceptGomegaFailure is not).
func eventually[T any](ctx context.Context, timeout time.Duration, get func() (T, error), m types.GomegaMatcher,
	fail func(last T) error) (T, error) {
	var last T
	var stopped error
	g := gomega.NewGomega(func(string, ...int) {})
	held := g.Eventually(ctx, func() (T, error) {
		v, err := get()
		if err != nil {
			stopped = err
			return v, gomega.StopTrying("the poll failed").Wrap(err)
		}
		last = v
		return v, nil
	}).WithTimeout(timeout).WithPolling(pollEvery).Should(m)
	switch {
	case held:
		return last, nil
	case stopped != nil:
		return last, stopped
	case ctx.Err() != nil:
		return last, ctx.Err()
	}
	return last, fail(last)
}
