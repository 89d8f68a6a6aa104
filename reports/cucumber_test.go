package reports

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/runner"
)

// TestCucumberIsCompleted: the Cucumber JSON godog writes gets what
// report.html shows: outline rows named by their values, profile
// placeholders filled (keys as their variables), and a failed step's
// spec words, expected vs actual, curl command and transcript attached;
// no key survives, and target bytes are made printable.
func TestCucumberIsCompleted(t *testing.T) {
	p := reference(t)
	rep := synthetic(t, runner.Selection{}, nil, failRule("SSE-05", "no close \x1b[2J frame "+p.Keys.Agent))
	var failed, outline runner.ScenarioResult
	for _, s := range rep.Scenarios {
		if s.Status == runner.Failed && failed.ID == "" {
			failed = s
		}
		if s.Example != "" && outline.ID == "" {
			outline = s
		}
	}
	if failed.ID == "" || outline.ID == "" {
		t.Fatal("the synthetic run has no failure or no outline row")
	}
	element := func(s runner.ScenarioResult, status, msg string) string {
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
