package fakeserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/fixtures"
)

// fixtureDoc reads a fixture document with its markers filled in.
func fixtureDoc(t *testing.T, name string) (body []byte, contentType string) {
	t.Helper()
	b, err := fixtures.BundleDocument(name)
	if err != nil {
		t.Fatal(err)
	}
	ct := "application/yaml"
	if strings.HasSuffix(name, ".json") {
		ct = "application/json"
	}
	return []byte(strings.ReplaceAll(string(b), "${marker:b}", "m1")), ct
}

// TestValidateFixtures: every fixture document is accepted or refused with
// the status and the words the scenarios rely on.
func TestValidateFixtures(t *testing.T) {
	s := &view{sw: &switchSet{}} // every switch off
	cases := []struct {
		file   string
		status int    // 0: valid
		words  string // in the refusal
	}{
		{"desk-v1.yaml", 0, ""},
		{"desk-v1.json", 0, ""},
		{"desk-v2.yaml", 0, ""},
		{"desk-v2-resume.yaml", 0, ""},
		{"desk-v2-gate.yaml", 0, ""},
		{"desk-v2-orphan-task.yaml", 0, ""},
		{"desk-v2-orphan-child.yaml", 0, ""},
		{"minimal.yaml", 0, ""},
		{"many.yaml", 0, ""},
		{"fails-child.yaml", 0, ""},
		{"dropped.yaml", 0, ""},
		{"malformed.yaml", http.StatusBadRequest, "malformed YAML"},
		{"malformed.json", http.StatusBadRequest, "malformed JSON"},
		{"no-payload.yaml", http.StatusUnprocessableEntity, "spec.payload is missing"},
		{"two-agents.yaml", http.StatusUnprocessableEntity, "2 agents"},
		{"no-agent.yaml", http.StatusUnprocessableEntity, "no agent"},
		{"two-apps.yaml", http.StatusUnprocessableEntity, "2 apps"},
		{"nested-project.yaml", http.StatusUnprocessableEntity, "cannot nest another project"},
		{"unknown-type.yaml", http.StatusUnprocessableEntity, `unknown child type "spreadsheet"`},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			body, ct := fixtureDoc(t, c.file)
			doc, err := parseDocument(body, ct)
			if err == nil {
				_, err = s.validateProject(doc)
			}
			if c.status == 0 {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			be, ok := err.(*bundleError)
			if !ok {
				t.Fatalf("want a refusal with status %d, got %v", c.status, err)
			}
			if be.status != c.status || !strings.Contains(be.msg, c.words) {
				t.Fatalf("got %d %q, want %d containing %q", be.status, be.msg, c.status, c.words)
			}
		})
	}
}

// TestStripDropsEveryRow: strip removes every row of the spec's "Dropped on
// export" table from a hand-written document and warns about each; schedule
// and onDemand triggers and variable names stay.
func TestStripDropsEveryRow(t *testing.T) {
	body, ct := fixtureDoc(t, "dropped.yaml")
	doc, err := parseDocument(body, ct)
	if err != nil {
		t.Fatal(err)
	}
	warnings := strip(doc, func(defectID) bool { return false })
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"boss@example.test", "eu-west-secret", "browse", "shared-m1", "someone@example.test",
		"notes.pdf", "github-token", "ready", `"webhook"`, `"email"`, `"poll"`, "onSlackMessage", "onDiscordMessage", "onTaskComplete"} {
		if strings.Contains(string(out), gone) {
			t.Errorf("%s survived the strip: %s", gone, out)
		}
	}
	for _, kept := range []string{"API_REGION", `"schedule"`, `"onDemand"`, `"approval"`} {
		if !strings.Contains(string(out), kept) {
			t.Errorf("%s should survive the strip: %s", kept, out)
		}
	}
	all := strings.Join(warnings, "\n")
	for _, w := range []string{"approvers", "API_REGION", "capabilities", "sharedTasks", "members", "roleGrants", "files",
		"credentials", "status", "webhook", "email", "poll", "onSlackMessage", "onDiscordMessage", "onTaskComplete"} {
		if !strings.Contains(all, w) {
			t.Errorf("no warning names %s; warnings:\n%s", w, all)
		}
	}
}
