package main

import (
	"os"
	"testing"

	"github.com/invokeconf/invokeconf/internal/sweep"
)

// testsAtOnce is how many parallel tests run at once here unless -parallel
// says otherwise: most run the suite against a reference server in this
// process and wait on its agent scripts' pauses more than they compute.
const testsAtOnce = 6

func TestMain(m *testing.M) {
	sweep.DefaultParallel(testsAtOnce)
	os.Exit(m.Run())
}
