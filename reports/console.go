package reports

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// consoleColumns are the verdicts the console's area table counts.
var consoleColumns = []struct {
	v     Verdict
	title string
}{
	{Pass, "pass"}, {Fail, "fail"}, {Warning, "warn"}, {ExpectedFailure, "xfail"}, {Untested, "untested"},
	{NotApplicable, "n/a"}, {HarnessError, "error"}, {NotSelected, "unsel"}, {NotObservable, "unobs"},
}

// WriteConsole prints the end of a run for a person at a terminal: rule
// verdicts per area, each failure with its rule, spec sentence, expected vs
// actual and a curl command, the untested rules grouped by reason, the
// baseline, the spec and contract verdicts apart, the verdict line (naming
// the failed rules) and the paths of the reports. Target bytes are made
// printable, so no escape code reaches the terminal.
func WriteConsole(w io.Writer, rep *Report, paths []string) {
	cw := &consoleWriter{w: w}
	writeConsole(cw, rep, paths)
}

// consoleWriter makes every line printable before the terminal sees it.
type consoleWriter struct{ w io.Writer }

func (c *consoleWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(c.w, printable(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}

func writeConsole(w io.Writer, rep *Report, paths []string) {
	if rep.Mode == ModePassive {
		writePassiveConsole(w, rep, paths)
		return
	}
	if rep.Outcome != "not run" {
		// A run that never started has nothing per area or per rule to
		// show: its one reason is the verdict line's.
		writeConsoleAreas(w, rep)
		writeConsoleFindings(w, rep)
		writeNotJudged(w, rep)
	}
	if bc := rep.Baseline; bc != nil {
		fmt.Fprintf(w, "\nBaseline %s: %d used, %d stale, %d idle\n", bc.File, len(bc.Used), len(bc.Stale), len(bc.Idle))
		for _, e := range bc.Stale {
			fmt.Fprintf(w, "  STALE %s now passes (reason was: %s): remove it from the baseline\n", e, e.Reason)
		}
	}
	fmt.Fprintf(w, "\nHarness:  %s; spec %s; catalog %s\n", rep.Harness, rep.Identity.Spec(), rep.Identity.Catalog())
	if name := rep.TargetName(); name != "" {
		fmt.Fprintf(w, "Target:   %s at %s\n", name, rep.BaseURL)
	}
	for _, sv := range []SourceVerdict{rep.Spec, rep.Contract} {
		fmt.Fprintf(w, "%-9s %s (%s)", strings.ToUpper(sv.Source[:1])+sv.Source[1:]+":", strings.ToUpper(sv.Outcome), sv.Scope())
		if len(sv.Failed) > 0 {
			fmt.Fprintf(w, "; failed: %s", strings.Join(sv.Failed, " "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Verdict: %s (exit %d): %s\n", strings.ToUpper(rep.Outcome), rep.ExitCode, rep.Headline)
	if len(paths) > 0 {
		fmt.Fprintln(w, "Reports:")
		for _, p := range paths {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
}

// writeConsoleAreas prints the table of rule verdicts per area.
func writeConsoleAreas(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "\nRule verdicts per area:\n%-12s", "area")
	for _, c := range consoleColumns {
		fmt.Fprintf(w, " %8s", c.title)
	}
	fmt.Fprintf(w, "  %s\n", "verdict")
	for _, a := range rep.Areas {
		fmt.Fprintf(w, "%-12s", a.Area)
		for _, c := range consoleColumns {
			fmt.Fprintf(w, " %8s", dash(a.Counts[c.v]))
		}
		fmt.Fprintf(w, "  %s\n", a.Label)
	}
	fmt.Fprintf(w, "%-12s", "total")
	for _, c := range consoleColumns {
		fmt.Fprintf(w, " %8s", dash(rep.Counts[c.v]))
	}
	fmt.Fprintf(w, "  (%d scenarios in %.1fs)\n", len(rep.Scenarios), rep.Duration)
}

// maxListed is how many rules of one reason the "Not judged" list names
// when they are not selected; past it, it counts them (report.html's rule
// matrix names each). Untested and not applicable rules are always named.
const maxListed = 30

// writeNotJudged lists the observable rules the run did not judge, grouped
// by verdict and reason: untested, not applicable and not selected.
func writeNotJudged(w io.Writer, rep *Report) {
	var rules []RuleResult
	for _, r := range rep.Rules {
		if r.Verdict == Untested || r.Verdict == NotApplicable || r.Verdict == NotSelected && r.Observable {
			rules = append(rules, r)
		}
	}
	if len(rules) == 0 {
		return
	}
	fmt.Fprintln(w, "\nNot judged:")
	groups := map[string][]string{}
	var order []string
	for _, r := range rules {
		key := string(r.Verdict) + ": " + r.Reason
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], r.ID)
	}
	sort.SliceStable(order, func(i, j int) bool { return len(groups[order[i]]) < len(groups[order[j]]) })
	for _, key := range order {
		ids := strings.Join(groups[key], " ")
		if n := len(groups[key]); n > maxListed && strings.HasPrefix(key, string(NotSelected)+": ") {
			ids = fmt.Sprintf("%d rules (report.html's rule matrix names each)", n)
		}
		fmt.Fprintf(w, "  %s\n    %s\n", key, ids)
	}
}

// writeConsoleFindings prints the failed rules, root causes first: each
// rule with its spec words, the rules its failure blocked, its first
// finding in full (check, expected, actual, the curl command that
// reproduces it) and where else the same rule failed; then every scenario
// that broke the harness.
func writeConsoleFindings(w io.Writer, rep *Report) {
	byRule := map[string][]Finding{}
	for _, f := range rep.Findings {
		byRule[f.RuleID] = append(byRule[f.RuleID], f)
	}
	for _, row := range rep.FailedRules {
		fs := byRule[row.ID]
		if len(fs) == 0 {
			continue // a harness error: below
		}
		r := fs[0].Rule
		fmt.Fprintf(w, "\n%s  %s %s %s (%s): %s\n  spec:     %s\n", strings.ToUpper(string(row.Verdict)), r.ID, r.Level, r.Source, r.Section, r.Rule, r.Spec)
		if n := len(row.Blocked); n > 0 {
			fmt.Fprintf(w, "  blocked:  %s by it (untested): %s\n", plural(n, "rule", "rules"), strings.Join(row.Blocked, " "))
		}
		f := fs[0]
		fmt.Fprintf(w, "  seen in:  %s %s", f.ID(), f.Title())
		if f.Prerequisite {
			fmt.Fprintf(w, " (a step it rests on; its own rules %s are blocked)", strings.Join(f.Rules(), " "))
		}
		fmt.Fprintln(w)
		if f.Baseline != "" {
			fmt.Fprintf(w, "  baseline: %s\n", f.Baseline)
		}
		if f.Check != "" {
			fmt.Fprintf(w, "  check:    %s\n", indent(f.Check, "            "))
		}
		if f.Expected != "" {
			fmt.Fprintf(w, "  expected: %s\n", indent(clip(f.Expected, 600), "            "))
		}
		fmt.Fprintf(w, "  actual:   %s\n", indent(clip(orNothing(f.Actual), 600), "            "))
		if n := len(f.Curl); n > 0 {
			fmt.Fprintf(w, "  reproduce (export the INVOKECONF_KEYS_* variables first):\n    %s\n", indent(f.Curl[n-1], "    "))
		}
		if len(fs) > 1 {
			var ids []string
			for _, o := range fs[1:] {
				ids = append(ids, o.ID())
			}
			fmt.Fprintf(w, "  also in:  %s\n", clip(strings.Join(ids, " "), 600))
		}
	}
	for _, f := range rep.Findings {
		if f.Verdict != HarnessError {
			continue
		}
		fmt.Fprintf(w, "\nHARNESS ERROR  %s  %s\n  %s\n", f.ID(), f.Title(), indent(clip(f.Actual, 600), "  "))
	}
}

func dash(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func indent(s, prefix string) string { return strings.ReplaceAll(s, "\n", "\n"+prefix) }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + " [...]"
}

// writePassiveConsole prints a passive report shortly, failures first:
// each failed rule with how many exchanges broke it and its first failure
// (the exchange, the check, expected vs actual, the spec's words); then the
// other verdicts as rule lists (untested grouped by reason); the rules
// traffic cannot decide as one count (report.html says why of each); and
// the verdict line, which is never a certification.
func writePassiveConsole(w io.Writer, rep *Report, paths []string) {
	if rep.Outcome == PassiveNothing {
		// No exchange: every rule is not seen, which says nothing the
		// verdict line does not.
		writePassiveEnd(w, rep, paths)
		return
	}
	byVerdict := map[Verdict][]RuleResult{}
	for _, r := range rep.Rules {
		byVerdict[r.Verdict] = append(byVerdict[r.Verdict], r)
	}
	failed := append(append([]RuleResult(nil), byVerdict[Fail]...), byVerdict[Warning]...)
	if len(failed) > 0 {
		fmt.Fprintf(w, "\n%s:\n", plural(len(failed), "rule failed", "rules failed"))
	}
	for _, r := range failed {
		fmt.Fprintf(w, "  %-7s %s %s: %s\n", strings.ToUpper(string(r.Verdict)), r.ID, r.Level, r.Reason)
		for _, f := range rep.Findings {
			if f.RuleID != r.ID {
				continue
			}
			fmt.Fprintf(w, "    first: %s\n", f.Title())
			if f.Check != "" {
				fmt.Fprintf(w, "    check:    %s\n", indent(clip(f.Check, 300), "              "))
			}
			if f.Expected != "" {
				fmt.Fprintf(w, "    expected: %s\n", indent(clip(f.Expected, 300), "              "))
			}
			fmt.Fprintf(w, "    actual:   %s\n", indent(clip(orNothing(f.Actual), 300), "              "))
			if f.Spec != "" {
				fmt.Fprintf(w, "    spec:     %s\n", indent(clip(f.Spec, 300), "              "))
			}
			break
		}
	}
	if len(rep.Passive.Errors) > 0 {
		fmt.Fprintf(w, "\n%s:\n", plural(len(rep.Passive.Errors), "check broke (a harness error)", "checks broke (harness errors)"))
		for _, e := range rep.Passive.Errors {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	fmt.Fprintln(w)
	ids := func(rs []RuleResult) string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = r.ID
		}
		return strings.Join(out, " ")
	}
	if rs := byVerdict[Pass]; len(rs) > 0 {
		fmt.Fprintf(w, "Passed:   %s: %s\n", plural(len(rs), "rule", "rules"), ids(rs))
	}
	if rs := byVerdict[Untested]; len(rs) > 0 {
		fmt.Fprintf(w, "Untested: %s (the recording lacks what deciding needs):\n", plural(len(rs), "rule", "rules"))
		groups := map[string][]RuleResult{}
		var order []string
		for _, r := range rs {
			if _, ok := groups[r.Reason]; !ok {
				order = append(order, r.Reason)
			}
			groups[r.Reason] = append(groups[r.Reason], r)
		}
		sort.SliceStable(order, func(i, j int) bool { return len(groups[order[i]]) > len(groups[order[j]]) })
		for _, why := range order {
			fmt.Fprintf(w, "  %s\n    %s\n", ids(groups[why]), clip(why, 400))
		}
	}
	if rs := byVerdict[NotSeen]; len(rs) > 0 {
		fmt.Fprintf(w, "Not seen: %s no exchange could decide: %s\n", plural(len(rs), "rule", "rules"), ids(rs))
	}
	if n := len(byVerdict[NotDecidable]); n > 0 {
		fmt.Fprintf(w, "Not decidable from traffic: %s (invokeconf run judges them; report.html says why of each)\n", plural(n, "rule", "rules"))
	}
	writePassiveEnd(w, rep, paths)
}

// writePassiveEnd prints a passive report's last lines: the harness, the
// traffic, the verdict line, that it is no certification, the reports.
func writePassiveEnd(w io.Writer, rep *Report, paths []string) {
	fmt.Fprintf(w, "\nHarness:  %s; spec %s; catalog %s\n", rep.Harness, rep.Identity.Spec(), rep.Identity.Catalog())
	fmt.Fprintf(w, "Traffic:  %s\n", rep.Target)
	fmt.Fprintf(w, "Verdict: %s (exit %d): %s\n", strings.ToUpper(rep.Outcome), rep.ExitCode, rep.Headline)
	fmt.Fprintln(w, "This is a passive judgement of recorded traffic, not a certification.")
	if len(paths) > 0 {
		fmt.Fprintln(w, "Reports:")
		for _, p := range paths {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
}
