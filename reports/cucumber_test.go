package reports

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/steps"
	"github.com/invokeconf/invokeconf/testrun"
)

// TestCucumberIsCompleted: the Cucumber JSON godog writes gets what
// report.html shows: outline rows named by their values, profile
// placeholders filled (keys as their variables), and a failed step's
// spec words, expected vs actual, curl command and transcript attached;
// no key survives, and target bytes are made printable.
func TestCucumberIsCompleted(t *testing.T) {
	p := reference(t)
	rep := synthetic(t, testrun.Selection{}, nil, failRule("SSE-05", "no close \x1b[2J frame "+p.Keys.Agent))
	var failed, outline testrun.ScenarioResult
	for _, s := range rep.Scenarios {
		if s.Status == testrun.Failed && failed.ID == "" {
			failed = s
		}
		if s.Example != "" && outline.ID == "" {
			outline = s
		}
	}
	if failed.ID == "" || outline.ID == "" {
		t.Fatal("the synthetic run has no failure or no outline row")
	}
	element := func(s testrun.ScenarioResult, status, msg string) string {
		return fmt.Sprintf(`{"id":"x","keyword":"Scenario","name":%q,"line":%d,"type":"scenario","steps":[
			{"keyword":"When ","name":"I invoke \"/api/invoke/${agents.main.id}\" with the key ${keys.agent} as ${marker:x}","line":3,
			 "match":{"location":"x"},"result":{"status":%q,"error_message":%s}}]}`, s.Name, s.Line, status, jsonString(msg))
	}
	doc := fmt.Sprintf(`[{"uri":%q,"id":"f","keyword":"Feature","name":"F","line":1,"elements":[%s]},{"uri":%q,"id":"g","keyword":"Feature","name":"G","line":1,"elements":[%s]}]`,
		failed.URI, element(failed, "failed", "boom with "+p.Keys.Agent+" \x00"), outline.URI, element(outline, "passed", ""))
	out, err := completeCucumber([]byte(doc), rep, p)
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	if strings.Contains(text, p.Keys.Agent) || !json.Valid(out) || strings.Contains(text, `\u0000`) || strings.Contains(text, `\u001b`) {
		t.Errorf("a key or a raw control byte survived, or the JSON broke:\n%s", text)
	}
	var got []struct {
		Elements []struct {
			Name  string `json:"name"`
			Steps []struct {
				Name       string `json:"name"`
				Embeddings []struct {
					Name, Data string
				} `json:"embeddings"`
			} `json:"steps"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	step := got[0].Elements[0].Steps[0]
	if want := `I invoke "/api/invoke/` + p.Agents.Main.ID + `" with the key $INVOKECONF_KEYS_AGENT as ${marker:x}`; step.Name != want {
		t.Errorf("step text %q, want %q", step.Name, want)
	}
	attached := map[string]string{}
	for _, e := range step.Embeddings {
		b, _ := base64.StdEncoding.DecodeString(e.Data)
		attached[e.Name] = string(b)
	}
	for name, text := range attached {
		if strings.Contains(text, p.Keys.Agent) {
			t.Errorf("attachment %q holds a key", name)
		}
	}
	for name, want := range map[string]string{"spec": "SSE-05", "expected vs actual": "expected: the spec's value", "transcript": "GET http://t/x"} {
		if !strings.Contains(attached[name], want) {
			t.Errorf("attachment %q lacks %q: %q", name, want, attached[name])
		}
	}
	if got[1].Elements[0].Name != outline.Title() || !strings.Contains(outline.Title(), "[") {
		t.Errorf("outline row named %q, want %q", got[1].Elements[0].Name, outline.Title())
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestCucumberLocatesStepDefinitions: in the cucumber.json of a real run,
// each step's match location is the line of package steps that binds its
// expression to a handler (a step(...) call), never the line of the
// registration helper where godog's sc.Step is called.
func TestCucumberLocatesStepDefinitions(t *testing.T) {
	fx := defectRun(t)
	raw, err := os.ReadFile(filepath.Join(fx.out, CucumberFile))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, CucumberFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, fx.rep, fx.p, Options{}); err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(filepath.Join(dir, CucumberFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc []struct {
		Elements []struct {
			Steps []struct {
				Name  string
				Match struct{ Location string }
			}
		}
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	var all []step
	for _, f := range doc {
		for _, e := range f.Elements {
			for _, st := range e.Steps {
				all = append(all, step{st.Name, st.Match.Location})
			}
		}
	}
	if n := checkLocations(t, all); n < 20 {
		t.Errorf("only %d step definitions located", n)
	}
	// Every definition, the run's or not, is located at its line of the step table.
	all = nil
	for _, d := range steps.Definitions() {
		all = append(all, step{d.Expr, d.Location})
	}
	if n := checkLocations(t, all); n < 100 {
		t.Errorf("only %d of %d step definitions located", n, len(all))
	}
}

type step struct{ name, location string }

// tableLine is a line of the step table that defines a step: step0(`...`,
// step2(`...`, ...
var tableLine = regexp.MustCompile("^step[0-5]\\(`")

// checkLocations fails each step whose location is not a line of the step table
// in a file of package steps, and counts the locations.
func checkLocations(t *testing.T, all []step) int {
	t.Helper()
	lines := map[string][]string{}
	located := map[string]bool{}
	for _, st := range all {
		loc := st.location
		if located[loc] {
			continue
		}
		file, n, _ := strings.Cut(loc, ":")
		line, _ := strconv.Atoi(n)
		if !strings.HasPrefix(file, "steps/") || strings.HasSuffix(file, "_test.go") || line < 1 {
			t.Errorf("step %q: location %q is not in package steps", st.name, loc)
			continue
		}
		if lines[file] == nil {
			b, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(file)))
			if err != nil {
				t.Fatal(err)
			}
			lines[file] = strings.Split(string(b), "\n")
		}
		if text := lines[file]; line > len(text) || !tableLine.MatchString(strings.TrimSpace(text[line-1])) {
			t.Errorf("step %q: location %q is no line of the step table", st.name, loc)
			continue
		}
		located[loc] = true
	}
	return len(located)
}
