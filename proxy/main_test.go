package proxy_test

import (
	"flag"
	"os"
	"strconv"
	"testing"
)

// drivesAtOnce is how many parallel tests run at once here unless
// -parallel says otherwise: a drive of the reference server through the
// proxy waits seconds on its scripts' pauses and uses the CPU for well
// under one, so GOMAXPROCS (go test's default) would leave the machine
// idle for most of the package's run.
const drivesAtOnce = 8

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(drivesAtOnce)); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
