// Package sweep holds the one switch between the tests a developer runs
// (go test ./..., a few minutes) and the complete sweeps CI runs: every
// defect switch, every variant switch, every blanked profile field, the
// passive judgement of each, and the install recipes. INVOKECONF_FULL=1
// turns the complete sweeps on; without it each sweep runs a sample chosen
// to cover every area and the switches whose faults reach furthest.
package sweep

import (
	"os"
	"slices"
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
