package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/runner"
)

// JUnit XML: one testsuite per feature file, one testcase per scenario,
// named "[SSE-01 SSE-02] scenario name (sse.feature:10)" so CI systems show
// the rule IDs. A failed scenario is a <failure> whose type is MUST, or
// SHOULD for a warning; untested, not applicable and expected failures are
// <skipped> with the reason; a harness error is an <error>.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",cdata"`
}

// WriteJUnit writes the scenarios of a report, with their transcripts for
// failures, as JUnit XML.
func WriteJUnit(w io.Writer, rep *Report) error {
	failures := map[string]Failure{}
	for _, f := range rep.Failures {
		failures[f.Scenario.ID] = f
	}
	root := junitSuites{Name: "invokeconf", Time: seconds(rep.Duration)}
	var order []string
	suites := map[string]*junitSuite{}
	for _, s := range rep.Scenarios {
		su := suites[s.URI]
		if su == nil {
			su = &junitSuite{Name: s.URI}
			suites[s.URI] = su
			order = append(order, s.URI)
		}
		c := junitCase{
			Name:      fmt.Sprintf("[%s] %s (%s)", strings.Join(s.Rules, " "), s.Name, s.ID),
			Classname: "invokeconf." + s.Feature,
			Time:      seconds(s.Duration.Seconds()),
		}
		first, _, _ := strings.Cut(s.Error, "\n")
		switch s.Status {
		case runner.Failed:
			f := failures[s.ID]
			switch f.Verdict {
			case ExpectedFailure:
				c.Skipped = &junitProblem{Message: "expected failure (baseline: " + f.Baseline + "): " + first, Text: s.Error}
				su.Skipped++
			default:
				typ := features.MUST
				if f.Verdict == Warning {
					typ = "SHOULD (warning)"
				}
				c.Failure = &junitProblem{Message: first, Type: typ, Text: failureText(f)}
				su.Failures++
			}
		case runner.HarnessError:
			c.Error = &junitProblem{Message: "harness error: " + first, Text: s.Error}
			su.Errors++
		case runner.Untested, runner.NotApplicable:
			c.Skipped = &junitProblem{Message: s.Status + ": " + s.Error}
			su.Skipped++
		}
		su.Tests++
		su.Cases = append(su.Cases, c)
	}
	for _, name := range order {
		su := suites[name]
		var t float64
		for _, s := range rep.Scenarios {
			if s.URI == name {
				t += s.Duration.Seconds()
			}
		}
		su.Time = seconds(t)
		root.Tests += su.Tests
		root.Failures += su.Failures
		root.Errors += su.Errors
		root.Skipped += su.Skipped
		root.Suites = append(root.Suites, *su)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// failureText is the body of a <failure>: the rules with their spec words,
// the message, and the curl command of the last exchange.
func failureText(f Failure) string {
	var b strings.Builder
	for _, r := range f.Rules {
		fmt.Fprintf(&b, "%s (%s, %s): %s\n  spec: %s\n", r.ID, r.Level, r.Section, r.Rule, r.Spec)
	}
	fmt.Fprintf(&b, "\n%s\n", f.Scenario.Error)
	if n := len(f.Curl); n > 0 {
		fmt.Fprintf(&b, "\nReproduce (keys are read from the INVOKECONF_KEYS_* environment variables):\n%s\n", f.Curl[n-1])
	}
	return b.String()
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }
