package runner_test

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/reports"
	"github.com/invokeconf/invokeconf/testrun"
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
	if res.Count(testrun.Blocked) == 0 {
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

// TestCheckedBeforeTheFailure: a scenario about several rules that fails on
// one of them in its last step had checked the others in full: they pass,
// they are not blocked. One whose failure came before their checks leaves
// them blocked.
func TestCheckedBeforeTheFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		defect, tags string
		want         map[string]reports.Verdict
	}{
		// EVT-01's step passed before EVT-04's, the last, failed.
		{"toolinput-with-toolcall", "@EVT-01", map[string]reports.Verdict{"EVT-01": reports.Pass, "EVT-04": reports.Fail}},
		// One step judges BUNDLE-02/03/05/08 each on its own.
		{"export-nests-project", "@BUNDLE-08", map[string]reports.Verdict{"BUNDLE-08": reports.Pass, "BUNDLE-05": reports.Fail}},
		// Without the agent child, BUNDLE-08 cannot be judged.
		{"agent-inlined", "@BUNDLE-08", map[string]reports.Verdict{"BUNDLE-08": reports.Untested, "BUNDLE-02": reports.Fail}},
		// The envelope came early: its content, FMT-07's, was short, so
		// FMT-07 was not checked.
		{"envelope-early", "@FMT-02 && @FMT-07", map[string]reports.Verdict{"FMT-07": reports.Untested, "FMT-02": reports.Fail}},
	} {
		t.Run(tc.defect, func(t *testing.T) {
			t.Parallel()
			res := runWith(t, sampled(tc.tags), fakeserver.Config{Defects: []string{tc.defect}})
			rep, err := reports.Build(reports.Input{Result: res, Profile: &profile.Profile{}})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Rules {
				if want, ok := tc.want[r.ID]; ok && r.Verdict != want {
					t.Errorf("%s: %s (%s), want %s", r.ID, r.Verdict, r.Reason, want)
				}
			}
			for _, f := range rep.Findings {
				for _, id := range f.Blocked {
					if tc.want[id] == reports.Pass {
						t.Errorf("the finding of %s lists %s as blocked", f.RuleID, id)
					}
				}
			}
		})
	}
}
