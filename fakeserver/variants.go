package fakeserver

import (
	"fmt"
	"strings"
)

// Variant is one variant switch: a behaviour the spec allows that the
// reference server does not use by default. Defects prove that a check can
// fail; variants prove that it fails only when the spec is broken: the
// variant test (runner/variant_test.go) runs the whole suite against each and
// expects every scenario to pass.
type Variant struct {
	Name string
	// Spec holds the spec's words that allow the behaviour.
	Spec        string
	Description string
	// Group names variants that exclude each other (two line endings, say);
	// "" excludes nothing. "All compatible variants at once" takes the first
	// of each group.
	Group string
}

// variantID names a variant switch in code; like defectID it is not a
// string, so the compiler checks every use.
type variantID int

// The variant switches, grouped by spec area.
const (
	// Async.
	varAsync202 variantID = iota
	// Bundles (docs/bundles.md, the contract).
	varBundleIntegerIDs
	varRemovedInstallation410
	varFailedInstallProblem
	varInterruptDropsConnection
	varInstallLogThread

	numVariants
)

// variantTable is every variant switch, by ID.
var variantTable = [numVariants]Variant{
	// Async.
	varAsync202: {"async-202", `"When true, the call returns at once with threadID and runID (JSON)": no status is named`,
		"?async=true is answered 202 Accepted", ""},
	// Bundles.
	varBundleIntegerIDs: {"bundle-integer-ids", `"Fields of the thread, agent, task and project resources: not shown"; docs/bundles.md: "IDs ... MAY be any JSON scalar: a string, or a number for a database-backed service"`,
		"installation records carry their IDs (installations, resources, projects, tasks) as JSON integers", ""},
	varRemovedInstallation410: {"removed-installation-410", `"Request and response payload: not shown"; docs/bundles.md: bundleInstallation "once removed, 404 or 410"`,
		"the record of a removed installation answers 410 Gone", ""},
	varFailedInstallProblem: {"failed-install-problem", `"Status codes for the bundle errors: not shown"; docs/bundles.md: "or any other status with a Location header giving the path of the record"`,
		"an install whose child failed answers 422 with a problem naming the installation and a Location header to its record", ""},
	varInterruptDropsConnection: {"interrupt-drops-connection", `docs/bundles.md: "The contract names no answer for the stopped update: any status, or a dropped connection as a crashed server's, will do"`,
		"the update stopped by interruptOnce drops the connection without an answer", ""},
	varInstallLogThread: {"install-log-thread", `"the project itself (the lead thread, flagged as a project)"; docs/bundles.md: log entries' type "for the project project or thread (its lead thread); both are accepted"`,
		"the installation log calls the project by its lead thread: entries of type thread", ""},
}

// Variants lists every variant switch, in the table's order.
func Variants() []Variant { return append([]Variant(nil), variantTable[:]...) }

// CompatibleVariants lists the names of the largest set of variants that may
// be switched on together: the first variant of each group and every
// ungrouped one.
func CompatibleVariants() []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range variantTable {
		if v.Group != "" {
			if seen[v.Group] {
				continue
			}
			seen[v.Group] = true
		}
		out = append(out, v.Name)
	}
	return out
}

// variantSet says which variant switches are on.
type variantSet [numVariants]bool

func resolveVariants(names []string) (variantSet, error) {
	var on variantSet
	group := map[string]string{}
	for _, n := range names {
		id := variantID(-1)
		for i, v := range variantTable {
			if v.Name == n {
				id = variantID(i)
			}
		}
		if id < 0 {
			var known []string
			for _, v := range variantTable {
				known = append(known, v.Name)
			}
			return on, fmt.Errorf("fakeserver: unknown variant %q (known: %s)", n, strings.Join(known, ", "))
		}
		if g := variantTable[id].Group; g != "" {
			if other, dup := group[g]; dup && other != n {
				return on, fmt.Errorf("fakeserver: variants %q and %q exclude each other", other, n)
			}
			group[g] = n
		}
		on[id] = true
	}
	return on, nil
}
