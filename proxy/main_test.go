package proxy_test

import (
	"os"
	"testing"

	"github.com/invokeconf/invokeconf/internal/sweep"
)

// drivesAtOnce is how many parallel tests run at once here unless
// -parallel says otherwise: a drive of the reference server through the
// proxy waits seconds on its scripts' pauses and uses the CPU for well
// under one, so GOMAXPROCS (go test's default) would leave the machine
// idle for most of the package's run.
const drivesAtOnce = 24

func TestMain(m *testing.M) {
	sweep.DefaultParallel(drivesAtOnce)
	os.Exit(m.Run())
}
