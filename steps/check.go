package steps

import (
	"context"
	"time"

	"github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
)

// gomegaFailure is the panic value of a failed gomega assertion inside check.
type gomegaFailure struct{ err error }

// check runs assertions written with gomega and returns the first failure as
// the error fail makes of it. A Gomega per call, failing by panic, is safe
// under concurrent scenarios (the global InterceptGomegaFailure is not).
func check(fn func(g gomega.Gomega), fail func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(gomegaFailure)
			if !ok {
				panic(r)
			}
			err = f.err
		}
	}()
	g := gomega.NewGomega(func(string, ...int) { panic(gomegaFailure{fail()}) })
	fn(g)
	return nil
}

// pollEvery is how often eventually asks again.
const pollEvery = 100 * time.Millisecond

// eventually polls get with gomega's Eventually until its value satisfies m,
// within timeout and while ctx lasts, and returns the last value. An error
// from get ends the polling and is returned as it is; a timeout is the
// failure fail makes of the last value seen.
func eventually[T any](ctx context.Context, timeout time.Duration, get func() (T, error), m types.GomegaMatcher,
	fail func(last T) error) (T, error) {
	var last T
	var stopped error
	err := check(func(g gomega.Gomega) {
		g.Eventually(ctx, func() (T, error) {
			v, err := get()
			if err != nil {
				stopped = err
				return v, gomega.StopTrying("the poll failed").Wrap(err)
			}
			last = v
			return v, nil
		}).WithTimeout(timeout).WithPolling(pollEvery).Should(m)
	}, func() error {
		switch {
		case stopped != nil:
			return stopped
		case ctx.Err() != nil:
			return ctx.Err()
		}
		return fail(last)
	})
	return last, err
}
