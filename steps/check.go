package steps

import (
	"errors"
	"fmt"

	"github.com/onsi/gomega"
)

// gomegaFailure is the panic value of a failed gomega assertion inside check.
type gomegaFailure struct{ msg string }

// check runs assertions written with gomega and returns the first failure as
// an error. A Gomega per call, failing by panic, is safe under concurrent
// scenarios (the global InterceptGomegaFailure is not).
func check(fn func(g gomega.Gomega)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(gomegaFailure)
			if !ok {
				panic(r)
			}
			err = errors.New(f.msg)
		}
	}()
	g := gomega.NewGomega(func(message string, _ ...int) { panic(gomegaFailure{message}) })
	fn(g)
	return nil
}

// checkf is check with a context line put before a failure.
func checkf(format string, args ...any) func(fn func(g gomega.Gomega)) error {
	return func(fn func(g gomega.Gomega)) error {
		if err := check(fn); err != nil {
			return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), err)
		}
		return nil
	}
}
