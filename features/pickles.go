package features

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"

	gherkin "github.com/cucumber/gherkin/go/v26"
	messages "github.com/cucumber/messages/go/v21"
)

// Pickle is one scenario as godog runs it: each example row of an outline
// is a pickle of its own, background steps are folded in and <placeholders>
// are filled. The runner plans a run from pickles and matches godog's
// results back to them by Key.
type Pickle struct {
	// ID is "file:line", the line of the scenario or of its example row.
	ID      string   `json:"id"`
	Feature string   `json:"feature"`
	Name    string   `json:"name"`
	File    string   `json:"file"`
	Line    int      `json:"line"`
	Tags    []string `json:"tags"`
	Rules   []string `json:"rules"`
	// Steps are the step texts, each followed by its doc string or table
	// cells, as godog sees them.
	Steps []string `json:"steps"`
	// Texts are the step texts alone, what godog matches step definitions
	// against (a text may hold line breaks, from an outline's table cell).
	Texts []string `json:"-"`
}

// Arg returns the doc string or table cells of step i, one a line, "" for
// none: what Steps[i] adds to Texts[i].
func (p Pickle) Arg(i int) string {
	return strings.TrimPrefix(strings.TrimPrefix(p.Steps[i], p.Texts[i]), "\n")
}

// Key identifies a pickle by what godog hands a hook: file, name and step
// texts (outline rows of one scenario differ in their step texts).
func (p Pickle) Key() string { return PickleKey(p.File, p.Name, p.Steps) }

// PickleKey builds the Key of a pickle from its parts.
func PickleKey(uri, name string, steps []string) string {
	return path.Base(uri) + "\x00" + strings.TrimSpace(name) + "\x00" + strings.Join(steps, "\x00")
}

// StepText renders a godog step as a Pickle's Steps entry.
func StepText(st *messages.PickleStep) string {
	var b strings.Builder
	b.WriteString(st.Text)
	if st.Argument != nil {
		if ds := st.Argument.DocString; ds != nil {
			b.WriteString("\n" + ds.Content)
		}
		if dt := st.Argument.DataTable; dt != nil {
			for _, row := range dt.Rows {
				for _, c := range row.Cells {
					b.WriteString("\n" + c.Value)
				}
			}
		}
	}
	return b.String()
}

var (
	picklesOnce sync.Once
	pickles     []Pickle
	picklesErr  error
)

// Pickles returns every pickle of the embedded features, sorted by ID.
func Pickles() ([]Pickle, error) {
	picklesOnce.Do(func() { pickles, picklesErr = parsePickles(FS) })
	return pickles, picklesErr
}

func parsePickles(fsys fs.FS) ([]Pickle, error) {
	files, err := fs.Glob(fsys, "*.feature")
	if err != nil {
		return nil, err
	}
	var out []Pickle
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		ids := &messages.Incrementing{}
		doc, err := gherkin.ParseGherkinDocument(bytes.NewReader(b), ids.NewId)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if doc.Feature == nil {
			continue
		}
		lines := nodeLines(doc.Feature)
		for _, pk := range gherkin.Pickles(*doc, f, ids.NewId) {
			tags := make([]string, 0, len(pk.Tags))
			for _, t := range pk.Tags {
				tags = append(tags, t.Name)
			}
			steps := make([]string, 0, len(pk.Steps))
			texts := make([]string, 0, len(pk.Steps))
			for _, st := range pk.Steps {
				steps = append(steps, StepText(st))
				texts = append(texts, st.Text)
			}
			line := 0
			// The last AST node is the example row for an outline row,
			// else the scenario itself.
			if n := len(pk.AstNodeIds); n > 0 {
				line = lines[pk.AstNodeIds[n-1]]
			}
			out = append(out, Pickle{
				ID: fmt.Sprintf("%s:%d", f, line), Feature: doc.Feature.Name, Name: strings.TrimSpace(pk.Name),
				File: f, Line: line, Tags: tags, Rules: RulesOf(tags), Steps: steps, Texts: texts,
			})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out, nil
}

// nodeLines maps the AST node IDs of scenarios and example rows to lines.
func nodeLines(f *messages.Feature) map[string]int {
	lines := map[string]int{}
	add := func(sc *messages.Scenario) {
		if sc == nil {
			return
		}
		lines[sc.Id] = int(sc.Location.Line)
		for _, ex := range sc.Examples {
			for _, row := range ex.TableBody {
				lines[row.Id] = int(row.Location.Line)
			}
		}
	}
	for _, c := range f.Children {
		add(c.Scenario)
		if c.Rule != nil {
			for _, rc := range c.Rule.Children {
				add(rc.Scenario)
			}
		}
	}
	return lines
}
