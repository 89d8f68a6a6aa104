package checks

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// TestViewParsesOnce: however many checks read an exchange (every check of
// the table, twice, and the History), each part of it is parsed once.
func TestViewParsesOnce(t *testing.T) {
	var mu sync.Mutex
	parses := map[*View]map[string]int{}
	parseHook = func(v *View, part string) {
		mu.Lock()
		defer mu.Unlock()
		if parses[v] == nil {
			parses[v] = map[string]int{}
		}
		parses[v][part]++
	}
	t.Cleanup(func() { parseHook = nil })

	script := "@say a\n@pause 600ms\n@say b\n"
	final := "id: r1:after\ndata: " + evt(`"content":"","runComplete":true`) + "\n\n"
	exchanges := map[string]*View{
		"sse": ex{req: hdr("Accept", "text/event-stream"), prompt: script, resp: hdr("Content-Type", "text/event-stream", "X-SVC-Thread-Id", "t1"),
			chunks: []at{{1, "event: start\ndata: {}\n\n"}, {5, "id: r1\ndata: " + evt(`"content":"a"`) + "\n\n"},
				{610, "id: r1\ndata: " + evt(`"content":"b"`) + "\n\n" + final + "event: close\ndata: {}\n\n"}}}.build(),
		"envelope": env(evt(`"content":"a"`), evt(`"content":"","runComplete":true`)).build(),
		"plain":    ex{prompt: script, resp: hdr("Content-Type", "text/plain", "X-SVC-Thread-Id", "t1"), chunks: []at{{1, "a"}, {610, "b"}}}.build(),
		"events": ex{method: "GET", url: "http://svc.test/api/threads/t1/events?runID=r1", req: hdr("Accept", "application/json"),
			resp: hdr("Content-Type", "application/json"), chunks: whole(`{"items":[` + evt(`"content":"","runComplete":true`) + `]}`)}.build(),
		"export": ex{method: "GET", url: "http://svc.test/api/assistants/a/projects/p/bundle", resp: hdr("Content-Type", "application/json"),
			chunks: whole(`{"spec":{"type":"project","payload":{},"includes":[{"type":"agent"}]}}`)}.build(),
	}
	var h History
	for name, v := range exchanges {
		for range 2 {
			for _, c := range All() {
				_ = c.Decide(v, &h)
			}
		}
		h.Add(v)
		if len(parses[v]) < 3 {
			t.Errorf("%s: only %v parsed: the hook does not see the parts", name, parses[v])
		}
		for part, n := range parses[v] {
			if n != 1 {
				t.Errorf("%s: %s parsed %d times", name, part, n)
			}
		}
	}
}

// TestPrimitivesOnlyInTheView: the parsers a view memoizes are called only
// where it calls them, so no check parses an exchange's parts again.
func TestPrimitivesOnlyInTheView(t *testing.T) {
	allowed := map[string][]string{
		`sseframe\.ReadAll\(`:       {"view.go"},
		`url\.Parse\(`:              {"route.go", "judge.go"}, // judge.go: --redact-bodies reads the path whole, per failure
		`agentscript\.Parse\(`:      {"live.go"},              // program, which the view memoizes
		`\.Response\.Body\.Bytes\(`: {"view.go"},
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for expr, where := range allowed {
			if regexp.MustCompile(expr).Match(b) && !contains(where, f) {
				t.Errorf("%s calls %s: read it through the View", f, expr)
			}
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
