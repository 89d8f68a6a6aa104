package fakeserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/fixtures"
)

// largeDoc is a valid project bundle declaring tasks tasks (each with a
// prompt of filler sentences) and children knowledge sets beside its agent,
// as JSON.
func largeDoc(name string, tasks, children, filler int) string {
	ts := make([]any, tasks)
	for i := range ts {
		ts[i] = map[string]any{"name": fmt.Sprintf("task-%d", i), "prompt": strings.Repeat("Summarise the tickets. ", filler),
			"triggers": []any{map[string]any{"type": "onDemand"}, map[string]any{"type": "webhook", "path": "/h"}}}
	}
	includes := []any{map[string]any{"metadata": map[string]any{"name": "agent", "version": "1"}, "spec": map[string]any{"type": "agent"}}}
	for i := 0; i < children; i++ {
		includes = append(includes, map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("kb-%d", i), "version": "1"},
			"spec": map[string]any{"type": "knowledge", "payload": map[string]any{"documents": []any{"a.md"}}}})
	}
	doc := map[string]any{"kind": "Bundle", "metadata": map[string]any{"name": name, "version": "1"},
		"spec": map[string]any{"type": "project", "payload": map[string]any{
			"thread": map[string]any{"name": name, "project": true}, "tasks": ts}, "includes": includes}}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func bundleKey(t testing.TB) string {
	t.Helper()
	p, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	k, err := p.Key("bundles")
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// bundleRequest sends one request to a bundle route of ts, bounded by ctx.
func bundleRequest(ctx context.Context, ts *httptest.Server, key, method, path, body string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, ts.URL+path, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.Client().Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestLargeInstallBlocksNoOne: an install at the caps builds itself without
// the store lock. While it is prepared, a signed-in request that takes the
// lock must be answered within its deadline; an install that held the lock
// would keep it waiting until the install went on, which the hook does only
// after that request ended, so the request would miss its deadline.
func TestLargeInstallBlocksNoOne(t *testing.T) {
	s := testServer(t, Config{})
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	key := bundleKey(t)

	var concurrent error
	called := false
	s.ctl.installHook = func() {
		called = true
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		status, body, err := bundleRequest(ctx, ts, key, "GET", "/api/bundles/installations", "")
		switch {
		case err != nil:
			concurrent = fmt.Errorf("a request during the install got no answer within 5 s: %w", err)
		case status != http.StatusOK:
			concurrent = fmt.Errorf("a request during the install answered %d: %.300s", status, body)
		}
	}

	// The deadline only keeps a hang from stalling the test; it is no speed
	// goal (BenchmarkInstall measures speed).
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	status, body, err := bundleRequest(ctx, ts, key, "POST", "/api/bundles/installations", largeDoc("large", maxDocTasks, maxDocChildren-1, 30))
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusCreated {
		t.Fatalf("install at the caps: status %d: %.300s", status, body)
	}
	if !called {
		t.Fatal("the install never called its hook: nothing was shown")
	}
	if concurrent != nil {
		t.Fatal(concurrent)
	}
	var rec record
	if err := json.Unmarshal([]byte(body), &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Tasks) != maxDocTasks || len(rec.Children) != maxDocChildren {
		t.Errorf("the record holds %d tasks and %d children, want %d and %d", len(rec.Tasks), len(rec.Children), maxDocTasks, maxDocChildren)
	}
	if len(rec.Warnings) == 0 {
		t.Error("the webhook triggers were stripped without a warning")
	}
}

// TestDocumentCaps: beyond the caps a document is refused, clearly, before
// anything is written.
func TestDocumentCaps(t *testing.T) {
	s := testServer(t, Config{MaxBody: 256 << 10})
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	key := bundleKey(t)
	for _, tc := range []struct {
		name, doc string
		status    int
		says      string
	}{
		{"too many tasks", largeDoc("t", maxDocTasks+1, 0, 1), http.StatusUnprocessableEntity, "at most 1000"},
		{"too many children", largeDoc("c", 1, maxDocChildren, 1), http.StatusUnprocessableEntity, "at most 100"},
		{"a body beyond the limit", largeDoc("b", 600, 0, 30), http.StatusRequestEntityTooLarge, "bundle document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			status, body, err := bundleRequest(ctx, ts, key, "POST", "/api/bundles/installations", tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			if status != tc.status || !strings.Contains(body, tc.says) {
				t.Errorf("status %d, body %.300s; want %d saying %q", status, body, tc.status, tc.says)
			}
		})
	}
	_, body, err := bundleRequest(context.Background(), ts, key, "GET", "/api/bundles/installations", "")
	if err != nil {
		t.Fatal(err)
	}
	if body != "{\"items\":[]}\n" {
		t.Errorf("a refused document left installations: %.300s", body)
	}
}

// BenchmarkInstall installs documents of growing size: the time per task
// stays flat (install is linear in the document).
func BenchmarkInstall(b *testing.B) {
	s := testServer(b, Config{})
	key := bundleKey(b)
	for _, n := range []int{10, 100, 1000} {
		doc := largeDoc("bench", n, 3, 20)
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest("POST", "/api/bundles/installations", strings.NewReader(doc))
				req.Header.Set("Authorization", "Bearer "+key)
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, req)
				if rec.Code != http.StatusCreated {
					b.Fatalf("status %d: %.300s", rec.Code, rec.Body.String())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/task")
		})
	}
}

// TestUpdateWithAChildBundle: a project installation updated with a child's
// bundle is refused as a document, and the record stays.
func TestUpdateWithAChildBundle(t *testing.T) {
	s := testServer(t, Config{})
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	key := bundleKey(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	status, body, err := bundleRequest(ctx, ts, key, "POST", "/api/bundles/installations", largeDoc("p", 1, 0, 1))
	if err != nil || status != http.StatusCreated {
		t.Fatalf("install: %d %v %.300s", status, err, body)
	}
	var rec record
	if err := json.Unmarshal([]byte(body), &rec); err != nil {
		t.Fatal(err)
	}
	child := `{"metadata":{"name":"p","version":"2"},"spec":{"type":"connector","payload":{}}}`
	status, body, err = bundleRequest(ctx, ts, key, "PUT", "/api/bundles/installations/"+string(rec.ID), child)
	if err != nil || status != http.StatusUnprocessableEntity || !strings.Contains(body, "spec.type") {
		t.Errorf("update with a connector bundle: %d %v %.300s; want 422 naming spec.type", status, err, body)
	}
	status, _, err = bundleRequest(ctx, ts, key, "GET", "/api/bundles/installations/"+string(rec.ID), "")
	if err != nil || status != http.StatusOK {
		t.Errorf("the record after the refused update: %d %v", status, err)
	}
}
