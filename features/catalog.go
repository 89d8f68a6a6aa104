// Package features holds the Gherkin features, one file per spec area, and
// the rule catalog (rules.yaml) that their scenarios are tagged with.
package features

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"sync"

	gherkin "github.com/cucumber/gherkin/go/v26"
	messages "github.com/cucumber/messages/go/v21"
	"go.yaml.in/yaml/v3"
)

// FS holds every .feature file and rules.yaml.
//
//go:embed *.feature rules.yaml
var FS embed.FS

// Levels of a rule.
const (
	MUST   = "MUST"
	SHOULD = "SHOULD"
	MAY    = "MAY"
)

// Sources of a rule.
const (
	SourceSpec     = "spec"
	SourceContract = "contract"
)

// Rule is one entry of the catalog.
type Rule struct {
	ID      string `yaml:"id" json:"id"`
	Area    string `yaml:"area" json:"area"`
	Section string `yaml:"section" json:"section"`
	Level   string `yaml:"level" json:"level"`
	Rule    string `yaml:"rule" json:"rule"`
	Spec    string `yaml:"spec" json:"spec"`
	// Source is SourceSpec (the spec's words) or SourceContract (this
	// project's own extension contract, docs/bundles.md).
	Source string `yaml:"source" json:"source"`
	// Strictness records the spec's words that fix how strict the check
	// is: what it accepts where the spec leaves a choice.
	Strictness string `yaml:"strictness,omitempty" json:"strictness,omitempty"`
	Observable bool   `yaml:"observable" json:"observable"`
	Why        string `yaml:"why,omitempty" json:"why,omitempty"`
	Pending    string `yaml:"pending,omitempty" json:"pending,omitempty"`
	// Passive says whether recorded traffic alone can decide the rule
	// (invokeconf proxy and judge): PassiveYes, PassivePartly or PassiveNo.
	Passive string `yaml:"passive" json:"passive"`
	// PassiveWhy says, for partly and no, what traffic alone cannot show.
	PassiveWhy string `yaml:"passive_why,omitempty" json:"passiveWhy,omitempty"`
	// Cells says where the spec states the rule: each entry a product of
	// the dimensions it is quantified over (route, form, outcome, headers;
	// checks.Cell), a dimension alone standing for all its values and
	// dim=a,b for those values ("route form=sse outcome"). Every
	// combination must be judged in a complete run against the reference
	// server; none for a rule the spec states once.
	Cells []string `yaml:"cells,omitempty" json:"cells,omitempty"`
	// RestsOn names the rules a scenario of this rule observes it through:
	// a failure of its scenarios is explained by theirs too, so where one
	// of them fails in its own scenarios the report blames that one
	// (reports' reconcile). MODE-01's list is seen only through a mode
	// adding its tools (MODE-02).
	RestsOn []string `yaml:"rests_on,omitempty" json:"restsOn,omitempty"`
}

// Whether recorded traffic can decide a rule (Rule.Passive).
const (
	PassiveYes    = "yes"    // every exchange that exercises the rule decides all of it
	PassivePartly = "partly" // only some traffic, or only some of its parts, decide it
	PassiveNo     = "no"     // traffic alone never decides it
)

// Scenario is one scenario of a feature file (one per example row of an
// outline), with the rule IDs its tags name.
type Scenario struct {
	Feature string   `json:"feature"`
	Name    string   `json:"name"`
	File    string   `json:"file"`
	Line    int      `json:"line"`
	Tags    []string `json:"tags"`
	Rules   []string `json:"rules"`
}

// RuleTag matches a tag that names a rule, such as @SSE-03.
var RuleTag = regexp.MustCompile(`^@([A-Z]+-[0-9]{2})$`)

var (
	loadOnce  sync.Once
	rules     []Rule
	scenarios []Scenario
	loadErr   error
)

func load() {
	b, err := FS.ReadFile("rules.yaml")
	if err != nil {
		loadErr = err
		return
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&rules); err != nil {
		loadErr = fmt.Errorf("rules.yaml: %w", err)
		return
	}
	scenarios, loadErr = parseScenarios(FS)
}

// Rules returns the catalog in file order.
func Rules() ([]Rule, error) {
	loadOnce.Do(load)
	return rules, loadErr
}

// Scenarios returns every scenario of the embedded features.
func Scenarios() ([]Scenario, error) {
	loadOnce.Do(load)
	return scenarios, loadErr
}

// RuleIndex maps rule IDs to rules.
func RuleIndex() (map[string]Rule, error) {
	rs, err := Rules()
	if err != nil {
		return nil, err
	}
	idx := make(map[string]Rule, len(rs))
	for _, r := range rs {
		idx[r.ID] = r
	}
	return idx, nil
}

// RulesOf returns the rule IDs named by a list of tags.
func RulesOf(tags []string) []string {
	var ids []string
	for _, t := range tags {
		if m := RuleTag.FindStringSubmatch(t); m != nil {
			ids = append(ids, m[1])
		}
	}
	return ids
}

func parseScenarios(fsys fs.FS) ([]Scenario, error) {
	files, err := fs.Glob(fsys, "*.feature")
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Scenario
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		doc, err := gherkin.ParseGherkinDocument(bytes.NewReader(b), (&messages.Incrementing{}).NewId)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if doc.Feature == nil {
			continue
		}
		featTags := tagNames(doc.Feature.Tags)
		for _, child := range doc.Feature.Children {
			var scs []*messages.Scenario
			var ruleTags []string
			switch {
			case child.Scenario != nil:
				scs = append(scs, child.Scenario)
			case child.Rule != nil:
				ruleTags = tagNames(child.Rule.Tags)
				for _, rc := range child.Rule.Children {
					if rc.Scenario != nil {
						scs = append(scs, rc.Scenario)
					}
				}
			}
			for _, sc := range scs {
				tags := append(append(append([]string(nil), featTags...), ruleTags...), tagNames(sc.Tags)...)
				if len(sc.Examples) == 0 {
					out = append(out, newScenario(doc.Feature.Name, sc.Name, f, int(sc.Location.Line), tags))
					continue
				}
				for _, ex := range sc.Examples {
					exTags := append(append([]string(nil), tags...), tagNames(ex.Tags)...)
					for _, row := range ex.TableBody {
						out = append(out, newScenario(doc.Feature.Name, sc.Name, f, int(row.Location.Line), exTags))
					}
				}
			}
		}
	}
	return out, nil
}

func newScenario(feature, name, file string, line int, tags []string) Scenario {
	return Scenario{Feature: feature, Name: strings.TrimSpace(name), File: file, Line: line, Tags: tags, Rules: RulesOf(tags)}
}

func tagNames(tags []*messages.Tag) []string {
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		out = append(out, t.Name)
	}
	return out
}
