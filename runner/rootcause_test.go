package runner_test

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/reports"
	"github.com/invokeconf/invokeconf/runner"
)

// TestRootCauseReport: a service whose agent IDs do not resolve
// (agent-id-unresolved, ROUTE-01) fails one rule, ROUTE-01, in every
// report; every other rule it kept from being checked is untested, blocked
// by ROUTE-01: the console's verdict says so, the HTML's failed-rules table
// lists them under it, summary.json names the cause of each, and JUnit
// fails only ROUTE-01's test cases, skipping the blocked ones.
func TestRootCauseReport(t *testing.T) {
	t.Parallel()
	res := runWith(t, "~@slow", fakeserver.Config{Defects: []string{"agent-id-unresolved"}})
	rep, err := reports.Build(reports.Input{Result: res, Profile: &profile.Profile{}})
	if err != nil {
		t.Fatal(err)
	}
	var failed, blocked []string
	for _, r := range rep.Rules {
		switch {
		case r.Verdict == reports.Fail || r.Verdict == reports.Warning:
			failed = append(failed, r.ID)
		case r.Verdict == reports.Untested && len(r.BlockedBy) > 0:
			blocked = append(blocked, r.ID)
			if len(r.BlockedBy) != 1 || r.BlockedBy[0] != "ROUTE-01" {
				t.Errorf("%s is blocked by %v, want ROUTE-01", r.ID, r.BlockedBy)
			}
		}
	}
	if len(failed) != 1 || failed[0] != "ROUTE-01" {
		t.Fatalf("failed rules %v, want ROUTE-01 alone", failed)
	}
	if len(blocked) < 30 {
		t.Errorf("only %d rules blocked by ROUTE-01: %v", len(blocked), blocked)
	}
	if len(rep.FailedRules) != 1 || len(rep.FailedRules[0].Blocked) != len(blocked) {
		t.Errorf("failed-rules table %+v, want ROUTE-01 with the %d rules it blocked", rep.FailedRules, len(blocked))
	}

	var console bytes.Buffer
	reports.WriteConsole(&console, rep, nil)
	if want := "1 MUST rule failed: ROUTE-01"; !strings.Contains(console.String(), want) || !strings.Contains(console.String(), "blocked by it") {
		t.Errorf("the console's verdict does not lead with the cause:\n%s", lastLines(console.String(), 8))
	}
	var html bytes.Buffer
	if err := reports.WriteHTML(&html, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), `id="blocked-by-ROUTE-01"`) {
		t.Error("report.html has no row of the rules blocked by ROUTE-01")
	}
	var js bytes.Buffer
	if err := reports.WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(js.String(), `"blockedBy": [`); n != len(blocked) {
		t.Errorf("summary.json names a blocking rule for %d rules, want %d", n, len(blocked))
	}

	var junit bytes.Buffer
	if err := reports.WriteJUnit(&junit, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(junit.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	blockedCases := 0
	for _, su := range doc.Suites {
		for _, c := range su.Cases {
			switch {
			case c.Failure != nil && !strings.HasPrefix(c.Name, "[ROUTE-01"):
				t.Errorf("JUnit fails %q: %s", c.Name, c.Failure.Message)
			case c.Skipped != nil && strings.HasPrefix(c.Skipped.Message, "blocked by ROUTE-01"):
				blockedCases++
			}
		}
	}
	if blockedCases < len(blocked) {
		t.Errorf("JUnit skips %d test cases as blocked by ROUTE-01, want at least %d", blockedCases, len(blocked))
	}
	if res.Count(runner.Blocked) == 0 {
		t.Error("no scenario is blocked")
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
