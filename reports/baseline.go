package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/internal/suggest"
	"github.com/invokeconf/invokeconf/testrun"
)

// Baseline is a file of expected failures. A CI system that gates an
// implementation with known gaps lists them here, each with a reason; those
// failures then do not fail the run. An entry whose rule or scenario now
// passes is stale and fails the run, so the file cannot rot.
//
//	version: 1
//	expected:
//	  - rule: SSE-04
//	    reason: keepalive lands in release 2.3 (TICKET-12)
//	  - scenario: sse.feature:52        # or the scenario's name
//	    reason: our proxy drops event: close after errors
type Baseline struct {
	Version  int             `yaml:"version"`
	Expected []BaselineEntry `yaml:"expected"`
	// File is where it was read from.
	File string `yaml:"-"`
}

// BaselineEntry expects a rule, or a scenario, to fail. Scenario matches a
// scenario's ID (file:line) or its name (every example row of an outline).
type BaselineEntry struct {
	Rule     string `yaml:"rule,omitempty" json:"rule,omitempty"`
	Scenario string `yaml:"scenario,omitempty" json:"scenario,omitempty"`
	Reason   string `yaml:"reason" json:"reason"`
}

func (e BaselineEntry) String() string {
	if e.Rule != "" {
		return "rule " + e.Rule
	}
	return "scenario " + e.Scenario
}

func (e BaselineEntry) matches(ruleID string, s testrun.ScenarioResult) bool {
	if e.Rule != "" {
		return e.Rule == ruleID
	}
	return e.Scenario == s.ID || e.Scenario == s.Name
}

// BaselineError is a baseline file that cannot be used: bad usage.
type BaselineError struct{ msg string }

func (e *BaselineError) Error() string { return e.msg }

// LoadBaseline reads and checks a baseline file: every entry names exactly
// one known rule or existing scenario and gives a reason.
func LoadBaseline(path string) (*Baseline, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &BaselineError{fmt.Sprintf("read baseline: %v", err)}
	}
	bl, err := ParseBaseline(b)
	if err != nil {
		return nil, &BaselineError{fmt.Sprintf("baseline %s: %v", path, err)}
	}
	bl.File = path
	return bl, nil
}

// ParseBaseline decodes and checks a baseline document.
func ParseBaseline(b []byte) (*Baseline, error) {
	var bl Baseline
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&bl); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("decode YAML: %s", baselineYAMLError(err))
	}
	if bl.Version != 1 {
		return nil, fmt.Errorf("version is %d, want 1", bl.Version)
	}
	idx, err := features.RuleIndex()
	if err != nil {
		return nil, err
	}
	pickles, err := features.Pickles()
	if err != nil {
		return nil, err
	}
	var problems []string
	for i, e := range bl.Expected {
		where := fmt.Sprintf("entry %d", i+1)
		switch {
		case (e.Rule == "") == (e.Scenario == ""):
			problems = append(problems, where+": give either rule or scenario")
			continue
		case strings.TrimSpace(e.Reason) == "":
			problems = append(problems, where+" ("+e.String()+"): reason is empty; say why the failure is expected")
		}
		if e.Rule != "" {
			if _, ok := idx[e.Rule]; !ok {
				ids := make([]string, 0, len(idx))
				for id := range idx {
					ids = append(ids, id)
				}
				sort.Strings(ids)
				problems = append(problems, where+": unknown rule "+e.Rule+suggest.DidYouMean(e.Rule, ids))
			}
			continue
		}
		found := false
		var names []string
		for _, pk := range pickles {
			found = found || pk.ID == e.Scenario || pk.Name == e.Scenario
			names = append(names, pk.Name)
		}
		if !found {
			problems = append(problems, where+": no scenario has the ID or name "+fmt.Sprintf("%q", e.Scenario)+didYouMeanQuoted(e.Scenario, names))
		}
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n  "))
	}
	return &bl, nil
}

// baselineFields are the keys a baseline document may use.
var baselineFields = []string{"version", "expected", "rule", "scenario", "reason"}

var unknownField = regexp.MustCompile(`line (\d+): field (\S+) not found in type \S+`)

// baselineYAMLError rewrites the YAML decoder's complaints in the baseline's
// own terms: no Go type names, and a suggestion for a misspelt field.
func baselineYAMLError(err error) string {
	msg := unknownField.ReplaceAllStringFunc(err.Error(), func(m string) string {
		sub := unknownField.FindStringSubmatch(m)
		return fmt.Sprintf("line %s: unknown field %q%s", sub[1], sub[2], suggest.DidYouMean(sub[2], baselineFields))
	})
	msg = strings.ReplaceAll(msg, "yaml: unmarshal errors:\n  ", "")
	msg = regexp.MustCompile(`into (\[\])?\*?reports\.\w+`).ReplaceAllString(msg, "into a baseline entry")
	return msg + " (a baseline holds version: 1 and expected: a list of entries, each with rule or scenario, and reason)"
}

// didYouMeanQuoted is suggest.DidYouMean with the name quoted (a scenario
// name has spaces).
func didYouMeanQuoted(name string, known []string) string {
	if best := suggest.Closest(name, known); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// expects says whether the baseline expects a scenario's failure of a rule,
// and why.
func (bl *Baseline) expects(ruleID string, s testrun.ScenarioResult) (string, bool) {
	for _, e := range bl.Expected {
		if e.matches(ruleID, s) {
			return e.Reason, true
		}
	}
	return "", false
}

// BaselineCheck is what became of a baseline in a run.
type BaselineCheck struct {
	File string `json:"file"`
	// Used are the entries that matched a failure.
	Used []BaselineEntry `json:"used"`
	// Stale are entries whose rule or scenarios now pass: they fail the run.
	Stale []BaselineEntry `json:"stale"`
	// Idle are entries whose rule or scenarios did not run to a verdict
	// (not selected, untested, not applicable): neither used nor stale.
	Idle []BaselineEntry `json:"idle"`
}

// check sorts the entries into used, stale and idle.
func (bl *Baseline) check(rules []RuleResult, scenarios []testrun.ScenarioResult) *BaselineCheck {
	if bl.File == "" && len(bl.Expected) == 0 {
		return nil
	}
	bc := &BaselineCheck{File: bl.File, Used: []BaselineEntry{}, Stale: []BaselineEntry{}, Idle: []BaselineEntry{}}
	verdicts := map[string]Verdict{}
	for _, r := range rules {
		verdicts[r.ID] = r.Verdict
	}
	for _, e := range bl.Expected {
		if e.Rule != "" {
			switch verdicts[e.Rule] {
			case ExpectedFailure, Fail, Warning:
				bc.Used = append(bc.Used, e)
			case Pass:
				bc.Stale = append(bc.Stale, e)
			default:
				bc.Idle = append(bc.Idle, e)
			}
			continue
		}
		passed, failed := 0, 0
		for _, s := range scenarios {
			if !e.matches("", s) {
				continue
			}
			switch s.Status {
			case testrun.Passed:
				passed++
			case testrun.Failed, testrun.Blocked:
				failed++
			}
		}
		switch {
		case failed > 0:
			bc.Used = append(bc.Used, e)
		case passed > 0:
			bc.Stale = append(bc.Stale, e)
		default:
			bc.Idle = append(bc.Idle, e)
		}
	}
	return bc
}

// WriteBaseline writes a baseline that expects every rule the report saw
// fail (MUST and SHOULD), with the first line of its failure as a reason to
// be edited.
func WriteBaseline(w io.Writer, rep *Report) error {
	bl := Baseline{Version: 1, Expected: []BaselineEntry{}}
	for _, r := range rep.Rules {
		if r.Verdict != Fail && r.Verdict != Warning && r.Verdict != ExpectedFailure {
			continue
		}
		reason := "failed on " + rep.Started.Format(time.DateOnly)
		for _, f := range rep.Findings {
			if f.RuleID == r.ID {
				reason += ": " + f.Line()
				break
			}
		}
		if r.Verdict == ExpectedFailure {
			reason = strings.TrimPrefix(r.Reason, "baseline: ")
		}
		bl.Expected = append(bl.Expected, BaselineEntry{Rule: r.ID, Reason: reason})
	}
	fmt.Fprintf(w, "# invokeconf baseline: expected failures, written from a run against %s on %s.\n", rep.Target, rep.Started.Format(time.RFC3339))
	fmt.Fprintln(w, "# Edit each reason to say why the failure is expected. An entry whose rule passes again is stale and fails the run.")
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(bl); err != nil {
		return err
	}
	return enc.Close()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
