package fakeserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/agentscript"
	"github.com/invokeconf/invokeconf/fixtures"
)

func TestHeaderList(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		trim   bool
		want   []string
		ok     bool
	}{
		{"absent", nil, true, nil, false},
		{"one", []string{"calculator"}, true, []string{"calculator"}, true},
		{"trimmed", []string{"  calculator ,\tnotes  "}, true, []string{"calculator", "notes"}, true},
		{"empty entries dropped", []string{",calculator,, ,notes,"}, true, []string{"calculator", "notes"}, true},
		{"only empty entries", []string{" , ,"}, true, nil, false},
		{"empty value", []string{""}, true, nil, false},
		{"several lines", []string{"a", "b, c"}, true, []string{"a", "b", "c"}, true},
		{"untrimmed (defect)", []string{"a , b"}, false, []string{"a ", " b"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tt.values {
				h.Add(HeaderScopedTools, v)
			}
			got, ok := headerList(h, hdrScopedTools, tt.trim)
			if !reflect.DeepEqual(got, tt.want) || ok != tt.ok {
				t.Fatalf("headerList(%q) = %q %v, want %q %v", tt.values, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// testServer is a reference server seeded with the fixtures.
func testServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	p, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Profile = p
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// call invokes path on s with the key of a role, headers and a prompt, and
// returns the status and the whole body.
func call(t *testing.T, s *Server, role, path string, headers map[string]string, prompt string) (int, string) {
	t.Helper()
	p, _ := fixtures.Reference()
	key, err := p.Key(role)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", path, strings.NewReader(prompt))
	req.Header.Set("Authorization", "Bearer "+key)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

func TestRunTools(t *testing.T) {
	const agentPath, projectPath = "/api/invoke/agt_main01", "/api/projects/prj_main01/invoke"
	plain := []string{"calculator", "clock", "notes"}
	tests := []struct {
		name    string
		role    string
		path    string
		headers map[string]string
		want    []string
	}{
		{"no credential scope: credential tools removed", "agent", agentPath, nil, plain},
		{"credential:use:search", "credentialSearch", agentPath, nil, []string{"calculator", "clock", "notes", "search-web"}},
		{"credential:use:* outside the project: no project credential", "credentialAll", agentPath, nil, []string{"calculator", "clock", "notes", "search-web"}},
		{"inside the project: tasks and project credential", "credentialAll", projectPath, nil,
			[]string{"calculator", "clock", "crm-lookup", "notes", "search-web", "triage-inbox", "weekly-report"}},
		{"inside the project without credential scopes", "project", projectPath, nil,
			[]string{"calculator", "clock", "notes", "triage-inbox", "weekly-report"}},
		{"scoped tools narrow, trimmed, empty entries dropped", "agent", agentPath,
			map[string]string{HeaderScopedTools: " calculator ,, notes ,"}, []string{"calculator", "notes"}},
		{"scoped tools cannot add", "agent", agentPath,
			map[string]string{HeaderScopedTools: "calculator, no-such-tool"}, []string{"calculator"}},
		{"scoped tools cannot pass the credential gate", "agent", agentPath,
			map[string]string{HeaderScopedTools: "search-web"}, nil},
		{"research adds its tool", "credentialSearch", agentPath,
			map[string]string{HeaderRunMode: "research"}, []string{"calculator", "clock", "deep-research", "notes", "search-web"}},
		{"research in a list, trimmed", "credentialAll", agentPath,
			map[string]string{HeaderRunMode: "nonsense ,  research  "}, []string{"calculator", "clock", "deep-research", "notes", "search-web"}},
		{"research without credential scope: removed", "agent", agentPath,
			map[string]string{HeaderRunMode: "research"}, plain},
		{"research without entitlement: ignored", "notEntitled", agentPath,
			map[string]string{HeaderRunMode: "research"}, []string{"calculator", "clock", "notes", "search-web"}},
		{"unknown mode: ignored", "agent", agentPath,
			map[string]string{HeaderRunMode: "turbo"}, plain},
		{"mode tools survive the narrowing", "credentialAll", agentPath,
			map[string]string{HeaderRunMode: "research", HeaderScopedTools: "notes"}, []string{"deep-research", "notes"}},
	}
	s := testServer(t, Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := call(t, s, tt.role, tt.path, tt.headers, "@tools")
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			got, ok := agentscript.ParseTools(body)
			if !ok {
				t.Fatalf("no tool list in %q", body)
			}
			want := tt.want
			if want == nil {
				want = []string{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("tools %q, want %q", got, want)
			}
		})
	}
}

func TestRunModel(t *testing.T) {
	s := testServer(t, Config{})
	for path, want := range map[string]string{
		"/api/invoke/agt_main01":          AgentModel,
		"/api/projects/prj_main01/invoke": "scripted-project-model",
	} {
		status, body := call(t, s, "credentialAll", path, nil, "@model")
		if got, ok := agentscript.ParseModel(body); status != 200 || !ok || got != want {
			t.Errorf("%s: status %d, model %q, want %q", path, status, body, want)
		}
	}
}

// envelope decodes a JSON envelope's items.
func envelope(t *testing.T, body string) []Event {
	t.Helper()
	var env struct{ Items []Event }
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		t.Fatalf("not an envelope: %v: %s", err, body)
	}
	return env.Items
}

// TestResearchReport: the research tool plans sub-questions, searches, reads
// sources and returns a cited report, the same for the same question (MODE-08).
func TestResearchReport(t *testing.T) {
	s := testServer(t, Config{})
	headers := map[string]string{HeaderRunMode: "research", "Accept": "application/json"}
	prompt := `@tool deep-research {"question": "Why is the sky blue?"}`
	var reports []string
	for range 2 {
		status, body := call(t, s, "credentialSearch", "/api/invoke/agt_main01", headers, prompt)
		if status != 200 {
			t.Fatalf("status %d: %s", status, body)
		}
		var steps []string
		var content string
		for _, ev := range envelope(t, body) {
			if ev.Error != "" {
				t.Fatalf("research failed: %s", ev.Error)
			}
			if ev.Step != nil {
				steps = append(steps, ev.Step.Description)
			}
			content += ev.Content
		}
		if len(steps) != 7 || steps[0] != "Research plan: 3 sub-questions" ||
			!strings.HasPrefix(steps[1], "Searching the web: ") || !strings.HasPrefix(steps[2], "Reading https://") {
			t.Fatalf("steps: %q", steps)
		}
		for _, want := range []string{"Research report: Why is the sky blue?", "[1].", "[3].", "Sources:\n[1] ", "https://sources.invokeconf.test/why-is-the-sky-blue/3"} {
			if !strings.Contains(content, want) {
				t.Fatalf("report lacks %q:\n%s", want, content)
			}
		}
		reports = append(reports, content)
	}
	if reports[0] != reports[1] {
		t.Fatalf("the same question gave two reports:\n%s\n---\n%s", reports[0], reports[1])
	}

	status, body := call(t, s, "credentialSearch", "/api/invoke/agt_main01", headers, `@tool deep-research {}`)
	if items := envelope(t, body); status != 200 || !strings.Contains(items[len(items)-2].Error, "question") {
		t.Fatalf("a research call without a question should fail the run: %d %s", status, body)
	}
}

// TestResearchCap: a run with the research tool stops at Config.ResearchLimit
// (MODE-07: 30 minutes in the spec); a run without it is not capped.
func TestResearchCap(t *testing.T) {
	const limit = 200 * time.Millisecond
	s := testServer(t, Config{ResearchLimit: limit})
	prompt := "@say begun\n@pause 1500ms\n@say late"
	tests := []struct {
		name   string
		mode   string
		capped bool
	}{
		{"research run", "research", true},
		{"ordinary run", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			status, body := call(t, s, "credentialAll", "/api/invoke/agt_main01",
				map[string]string{HeaderRunMode: tt.mode, "Accept": "application/json"}, prompt)
			took := time.Since(start)
			if status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			var content, errs string
			for _, ev := range envelope(t, body) {
				content += ev.Content
				errs += ev.Error
			}
			if tt.capped {
				if took >= time.Second || strings.Contains(content, "late") || !strings.Contains(errs, "time limit of 200ms") {
					t.Fatalf("took %s, content %q, error %q: want the run stopped at %s with an error", took, content, errs, limit)
				}
				return
			}
			if content != "begunlate" || errs != "" {
				t.Fatalf("content %q, error %q: an ordinary run is not capped", content, errs)
			}
		})
	}
}

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"Why is the sky blue?": "why-is-the-sky-blue",
		"  ??? ":               "question",
		"Ünïcode & more":       "n-code-more",
	} {
		if got := slugify(in); got != want {
			t.Errorf("slugify(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSeedEntitlements: one workspace cannot both lack and hold the research
// entitlement, so the notEntitled key needs a user of its own.
func TestSeedEntitlements(t *testing.T) {
	tests := []struct {
		name, notEntitled string
		ok                bool
	}{
		{"own user", "sk-svc-dave-kne-0123456789abcdef", true},
		{"user of the agent key", "sk-svc-alice-kne-0123456789abcdef", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := fixtures.Reference()
			if err != nil {
				t.Fatal(err)
			}
			p.Keys.NotEntitled = tt.notEntitled
			s, err := New(Config{Profile: p})
			if err == nil {
				s.Close()
			}
			if (err == nil) != tt.ok {
				t.Fatalf("New: %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// current is the server as a request starting now would see it.
func (s *Server) current() *view {
	v := s.view()
	return &v
}
