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
	// Invoke routes, thread selection, follow-up routes, authentication and
	// errors.
	varUUIDIDs
	varUUIDSeedIDs
	varHiddenThread404
	varProblemExtraMembers
	varAsyncAckExtraMembers
	varAbort204

	numVariants
)

// variantTable is every variant switch, by ID.
var variantTable = [numVariants]Variant{
	// Async.
	varAsync202: {"async-202", `"When true, the call returns at once with threadID and runID (JSON)": no status is named`,
		"?async=true is answered 202 Accepted", ""},
	// Invoke routes, thread selection, follow-up routes, authentication and
	// errors.
	varUUIDIDs: {"uuid-ids", `"threadID | string", "runID | string": no shape is shown`,
		"threads and runs get UUIDs instead of prefixed hex IDs", ""},
	varUUIDSeedIDs: {"uuid-seed-ids", `"Fields of the thread, agent, task and project resources: not shown"`,
		"agents, projects and the provisioned thread are re-seeded with UUIDs (the served profile carries them)", ""},
	varHiddenThread404: {"hidden-thread-404", `403 "the key's owner has no access to the agent"; 404 "The agent, alias or thread does not exist": no precedence is given`,
		"a thread whose agent the key's owner cannot open does not exist for that owner: 404 instead of 403", ""},
	varProblemExtraMembers: {"problem-extra-members", `"Body shape of the problem format ... not shown"`,
		"error bodies carry extra members (instance, traceId, errors)", ""},
	varAsyncAckExtraMembers: {"async-ack-extra-members", `"the call returns at once with threadID and runID (JSON)": nothing excludes other members`,
		"the async acknowledgement carries extra members (status, links)", ""},
	varAbort204: {"abort-204", `abort: "Request and response payload: not shown"; no status is named`,
		"abort answers 204 No Content with no body", ""},
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
