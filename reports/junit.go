package reports

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/invokeconf/invokeconf/internal/junitxml"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/testrun"
)

// JUnit XML: one testsuite per feature file, one testcase per scenario,
// named "[SSE-01 SSE-02] scenario name [example values]" (no line numbers:
// CI systems keep test history by name). Every format agrees with the exit
// code: a MUST failure is a <failure type="MUST">; a SHOULD failure passes
// with a warning in <system-out> unless JUnitWarnings is "failure";
// untested, not applicable and expected failures are <skipped> with the
// reason, and so is a scenario blocked by another rule's failure in a step
// it rests on ("blocked by ROUTE-01"); a rule that failed only in such
// steps gets a test case of its own in its area's suite, "[ROUTE-01] failed
// in a step other scenarios rest on", so every failed rule is one
// <failure>; a harness error is an <error>; a stale baseline entry is a
// failed test case of the suite "baseline"; a partial run with
// --require-complete is a failed test case of the suite "run"; a run that
// never started or ran no scenario is an <error> of the suite "run". Every
// suite carries the run's
// <properties> (harness, spec and catalog digests, target, selection,
// verdicts) and a timestamp.

// JUnit warning modes (Options.JUnitWarnings).
const (
	JUnitWarningsPass    = "pass"    // a SHOULD failure is a passed test case with a warning
	JUnitWarningsFailure = "failure" // a SHOULD failure is a <failure>
)

// WriteJUnit writes the report as JUnit XML with SHOULD failures passed
// with a warning.
func WriteJUnit(w io.Writer, rep *Report) error {
	return writeJUnit(w, rep, Options{})
}

func writeJUnit(w io.Writer, rep *Report, opts Options) error {
	if rep.Mode == ModePassive {
		return writePassiveJUnit(w, rep, opts)
	}
	findings := map[string]Finding{}
	for _, f := range rep.Findings {
		findings[f.ID()] = f
	}
	stamp := rep.Started.UTC().Format(time.RFC3339)
	props := junitProperties(rep)
	root := junitxml.Suites{Name: "invokeconf", Time: seconds(rep.Duration), Timestamp: stamp}
	var order []string
	suites := map[string]*junitxml.Suite{}
	suite := func(name string) *junitxml.Suite {
		su := suites[name]
		if su == nil {
			su = &junitxml.Suite{Name: name, Timestamp: stamp, Properties: props}
			suites[name] = su
			order = append(order, name)
		}
		return su
	}
	names := map[string]int{}
	durations := map[string]float64{}
	for _, s := range rep.Scenarios {
		su := suite(s.URI)
		durations[s.URI] += s.Duration.Seconds()
		name := fmt.Sprintf("[%s] %s", strings.Join(s.Rules, " "), s.Title())
		if names[name]++; names[name] > 1 {
			name += fmt.Sprintf(" #%d", names[name])
		}
		c := junitxml.Case{Name: printable(name), Classname: "invokeconf." + s.Feature, Time: seconds(s.Duration.Seconds())}
		first, _, _ := strings.Cut(s.Error, "\n")
		switch s.Status {
		case testrun.Blocked:
			f := findings[s.ID]
			c.Skipped = &junitxml.Problem{Message: printable("blocked by " + f.RuleID + " (it failed in a step this scenario rests on): " + f.Line()),
				Text: failureText(f)}
			su.Skipped++
		case testrun.Failed:
			f := findings[s.ID]
			switch {
			case f.Verdict == ExpectedFailure:
				c.Skipped = &junitxml.Problem{Message: "expected failure (baseline: " + f.Baseline + "): " + f.Line(), Text: failureText(f)}
				su.Skipped++
			case f.Verdict == Warning && opts.JUnitWarnings != JUnitWarningsFailure:
				c.SystemOut = "WARNING: a SHOULD rule failed (" + ruleList(f) + "); the run does not fail for it.\n\n" + failureText(f)
			default:
				typ := "MUST"
				if f.Verdict == Warning {
					typ = "SHOULD (warning)"
				}
				c.Failure = &junitxml.Problem{Message: f.Line(), Type: typ, Text: failureText(f)}
				su.Failures++
			}
		case testrun.HarnessError:
			c.Error = &junitxml.Problem{Message: "harness error: " + first, Text: s.Error}
			su.Errors++
		case testrun.Untested, testrun.NotApplicable:
			c.Skipped = &junitxml.Problem{Message: string(s.Status) + ": " + s.Error}
			su.Skipped++
		}
		su.Tests++
		su.Cases = append(su.Cases, c)
	}
	for _, r := range rep.Rules {
		f, only := failedElsewhereOnly(rep, r)
		if !only {
			continue
		}
		su := suite(r.Area + ".feature")
		c := junitxml.Case{Name: printable(fmt.Sprintf("[%s] failed in a step other scenarios rest on", r.ID)),
			Classname: "invokeconf." + r.Area, Time: seconds(0)}
		text := failureText(f) + "\n" + r.Reason + "\n"
		switch {
		case r.Verdict == ExpectedFailure:
			c.Skipped = &junitxml.Problem{Message: "expected failure (baseline: " + f.Baseline + "): " + f.Line(), Text: text}
			su.Skipped++
		case r.Verdict == Warning && opts.JUnitWarnings != JUnitWarningsFailure:
			c.SystemOut = "WARNING: a SHOULD rule failed (" + r.ID + "); the run does not fail for it.\n\n" + text
		default:
			typ := "MUST"
			if r.Verdict == Warning {
				typ = "SHOULD (warning)"
			}
			c.Failure = &junitxml.Problem{Message: f.Line(), Type: typ, Text: text}
			su.Failures++
		}
		su.Tests++
		su.Cases = append(su.Cases, c)
	}
	if bc := rep.Baseline; bc != nil {
		for _, e := range bc.Stale {
			su := suite("baseline")
			su.Cases = append(su.Cases, junitxml.Case{Name: printable("stale baseline entry: " + e.String()), Classname: "invokeconf.baseline", Time: seconds(0),
				Failure: &junitxml.Problem{Message: e.String() + " now passes: remove it from " + bc.File, Type: "stale baseline",
					Text: "The baseline expects " + e.String() + " to fail (reason: " + e.Reason + "), but it passed. A stale entry fails the run, so the file cannot rot."}})
			su.Tests++
			su.Failures++
		}
	}
	if rep.ExitCode == outcome.ExitPartial {
		su := suite("run")
		su.Cases = append(su.Cases, junitxml.Case{Name: "the run is complete", Classname: "invokeconf.run", Time: seconds(rep.Duration),
			Failure: &junitxml.Problem{Message: "partial: " + rep.Headline, Type: "partial", Text: rep.Headline}})
		su.Tests++
		su.Failures++
	}
	if rep.ExitCode == outcome.ExitUsage || rep.ExitCode == outcome.ExitHarness && root.Errors == 0 && !anyHarnessError(rep) {
		su := suite("run")
		su.Cases = append(su.Cases, junitxml.Case{Name: "the run", Classname: "invokeconf.run", Time: seconds(rep.Duration),
			Error: &junitxml.Problem{Message: rep.Outcome + ": " + rep.Headline, Text: rep.Headline}})
		su.Tests++
		su.Errors++
	}
	for _, name := range order {
		su := suites[name]
		su.Time = seconds(durations[name])
		root.Tests += su.Tests
		root.Failures += su.Failures
		root.Errors += su.Errors
		root.Skipped += su.Skipped
		root.Suites = append(root.Suites, *su)
	}
	return junitxml.Write(w, root)
}

func anyHarnessError(rep *Report) bool {
	for _, s := range rep.Scenarios {
		if s.Status == testrun.HarnessError {
			return true
		}
	}
	return false
}

// junitProperties are the run's facts, on every suite.
func junitProperties(rep *Report) []junitxml.Property {
	kv := [][2]string{
		{"invokeconf.outcome", rep.Outcome},
		{"invokeconf.exitCode", fmt.Sprint(rep.ExitCode)},
		{"invokeconf.headline", rep.Headline},
		{"invokeconf.spec.verdict", rep.Spec.Outcome},
		{"invokeconf.spec.scope", rep.Spec.Scope()},
		{"invokeconf.contract.verdict", rep.Contract.Outcome},
		{"invokeconf.contract.scope", rep.Contract.Scope()},
		{"invokeconf.harness.version", rep.HarnessVersion},
		{"invokeconf.harness.commit", rep.HarnessCommit},
		{"invokeconf.harness.source", rep.HarnessSource},
		{"invokeconf.harness.binary", rep.HarnessBinary},
		{"invokeconf.spec.digest", rep.SpecDigest},
		{"invokeconf.catalog.digest", rep.CatalogDigest},
		{"invokeconf.target", rep.Target},
		{"invokeconf.target.product", rep.Product},
		{"invokeconf.target.productVersion", rep.ProductVersion},
		{"invokeconf.selection", rep.Selection.String()},
	}
	out := make([]junitxml.Property, 0, len(kv))
	for _, p := range kv {
		out = append(out, junitxml.Property{Name: p[0], Value: printable(p[1])})
	}
	return out
}

// failedElsewhereOnly returns the first finding of a rule that failed, or
// warned, only in steps that other rules' scenarios rest on: no scenario of
// its own carries its failure.
func failedElsewhereOnly(rep *Report, r RuleResult) (Finding, bool) {
	switch r.Verdict {
	case Fail, Warning, ExpectedFailure:
	default:
		return Finding{}, false
	}
	var first *Finding
	for i, f := range rep.Findings {
		if f.RuleID != r.ID {
			continue
		}
		if !f.Prerequisite {
			return Finding{}, false
		}
		if first == nil {
			first = &rep.Findings[i]
		}
	}
	if first == nil {
		return Finding{}, false
	}
	return *first, true
}

func ruleList(f Finding) string { return f.RuleID + " " + f.Rule.Level }

// failureText is the body of a <failure>: the rules with their spec words,
// expected vs actual, the rules it blocked, and the curl command of the
// last exchange.
func failureText(f Finding) string {
	var b strings.Builder
	if r := f.Rule; r.ID != "" {
		fmt.Fprintf(&b, "%s (%s, %s, %s): %s\n  spec: %s\n", r.ID, r.Level, r.Source, r.Section, r.Rule, r.Spec)
	}
	b.WriteString("\n")
	writeOutcome(&b, f)
	if len(f.Blocked) > 0 {
		fmt.Fprintf(&b, "blocked (untested, %s failed first): %s\n", f.RuleID, strings.Join(f.Blocked, " "))
	}
	if m := f.Message(); m != "" {
		fmt.Fprintf(&b, "\nmessage: %s\n", m)
	}
	if n := len(f.Curl); n > 0 {
		fmt.Fprintf(&b, "\nReproduce (keys are read from the INVOKECONF_KEYS_* environment variables):\n%s\n", f.Curl[n-1])
	}
	return b.String()
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }

// writePassiveJUnit writes a passive report: one testsuite per area, one
// testcase per rule of the catalog, named "[SSE-05] statement". A MUST rule
// that failed is a <failure> listing the exchanges that broke it; a SHOULD
// rule that failed passes with a warning unless JUnitWarnings is "failure";
// untested, not seen and not decidable are <skipped> with the reason; a
// rule that passed says how many exchanges decided it.
func writePassiveJUnit(w io.Writer, rep *Report, opts Options) error {
	stamp := rep.Started.UTC().Format(time.RFC3339)
	props := append([]junitxml.Property{{Name: "invokeconf.mode", Value: ModePassive},
		{Name: "invokeconf.observed", Value: fmt.Sprint(rep.Passive.Observed)},
		{Name: "invokeconf.note", Value: rep.Passive.Note}}, junitProperties(rep)...)
	byRule := map[string][]Finding{}
	for _, f := range rep.Findings {
		byRule[f.RuleID] = append(byRule[f.RuleID], f)
	}
	root := junitxml.Suites{Name: "invokeconf passive", Time: seconds(rep.Duration), Timestamp: stamp}
	suites := map[string]*junitxml.Suite{}
	var order []string
	for _, r := range rep.Rules {
		su := suites[r.Area]
		if su == nil {
			su = &junitxml.Suite{Name: "passive: " + r.Area, Timestamp: stamp, Properties: props, Time: seconds(0)}
			suites[r.Area] = su
			order = append(order, r.Area)
		}
		c := junitxml.Case{Name: printable(fmt.Sprintf("[%s] %s", r.ID, r.Rule.Rule)), Classname: "invokeconf.passive." + r.Area, Time: seconds(0)}
		switch r.Verdict {
		case Pass:
			c.SystemOut = "pass: " + r.Reason
		case Fail, Warning:
			text := passiveFailureText(r, byRule[r.ID])
			msg := r.Reason
			if fs := byRule[r.ID]; len(fs) > 0 {
				msg = fs[0].Title() + ": " + fs[0].Line()
			}
			if r.Verdict == Warning && opts.JUnitWarnings != JUnitWarningsFailure {
				c.SystemOut = "WARNING: a SHOULD rule failed (" + r.ID + "); the judgement does not fail for it.\n\n" + text
				break
			}
			typ := "MUST"
			if r.Verdict == Warning {
				typ = "SHOULD (warning)"
			}
			c.Failure = &junitxml.Problem{Message: printable(msg), Type: typ, Text: text}
			su.Failures++
		case NotDecidable:
			c.Skipped = &junitxml.Problem{Message: printable(r.Reason)}
			su.Skipped++
		default:
			c.Skipped = &junitxml.Problem{Message: printable(string(r.Verdict) + ": " + r.Reason)}
			su.Skipped++
		}
		su.Tests++
		su.Cases = append(su.Cases, c)
	}
	if rep.Outcome == PassiveNothing {
		// Nothing was judged: an error, as the exit code has it, not a
		// suite of skipped rules that CI would show green.
		su := &junitxml.Suite{Name: "passive: recording", Timestamp: stamp, Properties: props, Time: seconds(rep.Duration), Tests: 1, Errors: 1,
			Cases: []junitxml.Case{{Name: "the recording", Classname: "invokeconf.passive", Time: seconds(rep.Duration),
				Error: &junitxml.Problem{Message: printable(rep.Outcome + ": " + rep.Headline), Text: printable(rep.Headline)}}}}
		suites["recording"] = su
		order = append([]string{"recording"}, order...)
	}
	for _, name := range order {
		su := suites[name]
		root.Tests += su.Tests
		root.Failures += su.Failures
		root.Errors += su.Errors
		root.Skipped += su.Skipped
		root.Suites = append(root.Suites, *su)
	}
	return junitxml.Write(w, root)
}

// writeOutcome writes a finding's check, expected, actual and spec words, a
// line each.
func writeOutcome(b *strings.Builder, f Finding) {
	if f.Check != "" {
		fmt.Fprintf(b, "check:    %s\n", f.Check)
	}
	if f.Expected != "" {
		fmt.Fprintf(b, "expected: %s\n", f.Expected)
	}
	fmt.Fprintf(b, "actual:   %s\n", orNothing(f.Actual))
	if f.Spec != "" {
		fmt.Fprintf(b, "spec words: %s\n", f.Spec)
	}
}

// passiveFailureText is the body of a passive <failure>: the rule with its
// spec words, then each exchange that broke it with expected vs actual.
func passiveFailureText(r RuleResult, fs []Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s, %s, %s): %s\n  spec: %s\n%s\n", r.ID, r.Level, r.Source, r.Section, r.Rule.Rule, r.Spec, r.Reason)
	for _, f := range fs {
		fmt.Fprintf(&b, "\n%s\n", f.Title())
		if f.Exchange != nil && f.Exchange.Status != 0 {
			fmt.Fprintf(&b, "status:   %d\n", f.Exchange.Status)
		}
		writeOutcome(&b, f)
	}
	return printable(b.String())
}
