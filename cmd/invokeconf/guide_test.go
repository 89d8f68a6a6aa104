package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/agentscript"
	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/invokeconftest"
	"github.com/invokeconf/invokeconf/modelserver"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/profile"
)

// The vendor guide must work word for word. These tests keep what can drift
// in step with the code: the commands, the quoted output, the directive
// table and the example profile, which must produce the report the guide
// describes.

const guidePath = "../../docs/vendor-guide.md"

func readGuide(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(guidePath)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// blocks returns the guide's fenced code blocks of a language ("" for
// blocks without one).
func blocks(guide, lang string) []string {
	var out []string
	var cur []string
	in, keep := false, false
	for _, line := range strings.Split(guide, "\n") {
		fence, isFence := strings.CutPrefix(line, "```")
		switch {
		case isFence && !in:
			in, keep, cur = true, fence == lang, nil
		case isFence && in:
			in = false
			if keep {
				out = append(out, strings.Join(cur, "\n")+"\n")
			}
		case in:
			cur = append(cur, line)
		}
	}
	return out
}

func TestReadmeLinksTheGuide(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "(docs/vendor-guide.md)") {
		t.Fatal("the README does not link docs/vendor-guide.md")
	}
}

// TestGuideCommandsParse: every invokeconf command of the guide has known
// subcommands and flags.
func TestGuideCommandsParse(t *testing.T) {
	n := 0
	for _, b := range blocks(readGuide(t), "sh") {
		for _, line := range strings.Split(b, "\n") {
			args, ok := strings.CutPrefix(line, "go run ./cmd/invokeconf ")
			if !ok {
				continue
			}
			n++
			var stderr bytes.Buffer
			if code := run(context.Background(), append(strings.Fields(args), "-h"), &bytes.Buffer{}, &stderr); code != outcome.ExitPass {
				t.Errorf("%q: exit %d: %s", line, code, stderr.String())
			}
		}
	}
	if n < 3 {
		t.Fatalf("found %d invokeconf commands in the guide, want the model, serve and run steps", n)
	}
}

// TestGuideDirectiveTable: a row per directive, and every capability named.
func TestGuideDirectiveTable(t *testing.T) {
	guide := readGuide(t)
	for _, k := range agentscript.Kinds() {
		if !strings.Contains(guide, "\n| `@"+string(k)) {
			t.Errorf("the directive table has no row for @%s", k)
		}
	}
	for _, c := range profile.ScriptCapabilities() {
		if !strings.Contains(guide, "| `"+c+"` |\n") {
			t.Errorf("the directive table names no capability %q", c)
		}
	}
	for _, name := range []string{modelserver.StepTool, modelserver.AskTool, modelserver.DefaultModel} {
		if !strings.Contains(guide, name) {
			t.Errorf("the guide does not mention %s", name)
		}
	}
}

// TestGuideQuotesTheModelServer: the output the guide shows for step 1 is
// what `invokeconf model` prints (on another port).
func TestGuideQuotesTheModelServer(t *testing.T) {
	var quoted string
	for _, b := range blocks(readGuide(t), "") {
		if strings.HasPrefix(b, "invokeconf model server listening on") {
			quoted = b
		}
	}
	if quoted == "" {
		t.Fatal("the guide quotes no output of invokeconf model")
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out invokeconftest.Buffer
	done := make(chan int)
	go func() { done <- run(ctx, []string{"model", "--addr", "127.0.0.1:0", "--quiet"}, &out, &bytes.Buffer{}) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "Press Ctrl-C") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != outcome.ExitPass {
		t.Fatalf("invokeconf model: exit %d: %s", code, out.String())
	}
	printed := regexp.MustCompile(`127\.0\.0\.1:\d+`).ReplaceAllString(out.String(), "127.0.0.1:8090")
	if !strings.HasPrefix(printed, quoted) {
		t.Fatalf("the guide quotes:\n%s\ninvokeconf model prints:\n%s", quoted, printed)
	}
}

// TestGuideProfileGivesTheDescribedReport follows steps 2 to 4 with the
// reference server standing in: the guide's example profile (on other
// ports) must pass every scenario but those needing @step or @ask, which
// are untested.
func TestGuideProfileGivesTheDescribedReport(t *testing.T) {
	t.Parallel()
	yamls := blocks(readGuide(t), "yaml")
	if len(yamls) != 1 {
		t.Fatalf("want one example profile in the guide, found %d", len(yamls))
	}
	example, err := profile.Parse([]byte(yamls[0]))
	if err != nil {
		t.Fatalf("the guide's example profile: %v", err)
	}
	if err := example.Validate(); err != nil {
		t.Fatalf("the guide's example profile: %v", err)
	}
	ref, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(example.Keys, ref.Keys) || !reflect.DeepEqual(example.Agents, ref.Agents) ||
		!reflect.DeepEqual(example.Projects, ref.Projects) || example.NonAgentID != ref.NonAgentID {
		t.Fatal("the guide's example profile does not hold the reference server's keys, agents and IDs")
	}
	for _, d := range profileDifferences(example, ref) {
		t.Errorf("the guide's example profile and fixtures/reference.yaml differ: %s", d)
	}

	model, err := modelserver.Listen(modelserver.Config{}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	srv := invokeconftest.NewServer(t, invokeconftest.WithSeed(ref), invokeconftest.WithModel(model.BaseURL, ""))
	dir := t.TempDir()
	text := strings.Replace(yamls[0], "baseURL: http://127.0.0.1:8080", "baseURL: "+srv.URL, 1)
	path := filepath.Join(dir, "my-target.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	code := run(context.Background(), []string{"run", "--profile", path, "--quick", "--out", filepath.Join(dir, "out")}, &out, &out)
	if code != outcome.ExitPass || strings.Contains(out.String(), "\nFAILED") {
		t.Fatalf("exit %d, want 0:\n%s", code, out.String())
	}
	untested := 0
	for _, line := range strings.Split(out.String(), "\n") {
		reason, ok := strings.CutPrefix(strings.TrimSpace(line), "untested: ")
		if !ok {
			continue
		}
		if checks.HarnessWasLate(reason) {
			continue // a timing rule the harness's own lateness left untested (a loaded machine)
		}
		untested++
		if !strings.Contains(reason, "cannot be made to show @step") && !strings.Contains(reason, "cannot be made to show @ask") {
			t.Errorf("untested for another reason than the guide gives: %s", line)
		}
	}
	if untested == 0 {
		t.Errorf("no rule was untested; the guide says those needing @step or @ask are:\n%s", out.String())
	}
	for _, f := range []string{"report.html", "summary.json", "junit.xml", "cucumber.json"} {
		if _, err := os.Stat(filepath.Join(dir, "out", f)); err != nil {
			t.Errorf("report %s: %v", f, err)
		}
	}
}

// profileDifferences lists the fields whose values differ between the
// guide's example and the reference profile, but for those the guide
// explains: the base URL and the script capabilities (@step and @ask come
// from the service, not from a model).
func profileDifferences(example, ref *profile.Profile) []string {
	want := map[string]string{}
	for _, f := range ref.Fields() {
		want[f.Path] = f.Value()
	}
	var out []string
	for _, f := range example.Fields() {
		if f.Path == "baseURL" || f.Path == "capabilities.script" || f.Secret {
			continue // keys are compared whole above, and never printed
		}
		if f.Value() != want[f.Path] {
			out = append(out, fmt.Sprintf("%s: %q in the guide, %q in the reference", f.Path, f.Value(), want[f.Path]))
		}
	}
	return out
}
