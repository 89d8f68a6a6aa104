// Package sweep holds the one switch between the tests a developer runs
// (go test ./..., a few minutes) and the complete sweeps CI runs: every
// defect switch, every variant switch, every blanked profile field, the
// passive judgement of each, and the install recipes. INVOKECONF_FULL=1
// turns the complete sweeps on; without it each sweep runs a sample chosen
// to cover every area and the switches whose faults reach furthest.
package sweep

import (
	"flag"
	"os"
	"slices"
	"strconv"
)

// Env is the variable that turns the complete sweeps on.
const Env = "INVOKECONF_FULL"

// Full reports whether the complete sweeps run.
func Full() bool { return os.Getenv(Env) == "1" }

// Includes reports whether a sweep runs the case name: every case when
// Full, else those of the sample.
func Includes(name string, sample []string) bool {
	return Full() || slices.Contains(sample, name)
}

// DefaultParallel sets go test's -parallel to n unless the command line set
// it; a TestMain calls it before m.Run. go test's default, GOMAXPROCS, suits
// tests that compute; tests that mostly wait (on an agent script's pauses,
// a hanging target, a browser) leave the CPU idle at that.
func DefaultParallel(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
			panic(err) // not a test binary
		}
	}
}
