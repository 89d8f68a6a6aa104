package runner_test

import (
	"os"
	"testing"

	"github.com/invokeconf/invokeconf/internal/sweep"
)

// testsAtOnce is how many parallel tests run at once here unless -parallel
// says otherwise. suiteRuns bounds the suite runs, which use the CPU; a
// test also waits (a hanging target, the 20 s keepalive), and go test's
// default, GOMAXPROCS, would leave the CPU idle while two such tests wait.
const testsAtOnce = 16

func TestMain(m *testing.M) {
	sweep.DefaultParallel(testsAtOnce)
	os.Exit(m.Run())
}
