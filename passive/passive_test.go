package passive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/reports"
	"github.com/invokeconf/invokeconf/traffic"
)

var t0 = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// sseExchange is an SSE invoke answered with body, id n, started at +ms.
func sseExchange(n, ms int, body string) *traffic.Exchange {
	thread := fmt.Sprintf("t%d", n) // a new thread each: THREAD-03 holds
	body = strings.ReplaceAll(body, `"t1"`, `"`+thread+`"`)
	return &traffic.Exchange{ID: n, Start: t0.Add(time.Duration(ms) * time.Millisecond),
		Request: traffic.Request{Method: "POST", URL: "http://svc.test/api/invoke/agt?x=1",
			Header: http.Header{"Accept": {"text/event-stream"}, "Authorization": {"[key u-k]"}},
			Body:   traffic.Body{Size: 2, Chunks: []traffic.Chunk{{Size: 2, Data: []byte("hi")}}}},
		Response: &traffic.Response{Status: 200, HeaderAt: 2 * time.Millisecond, End: traffic.EndComplete,
			Header: http.Header{"Content-Type": {"text/event-stream"}, "X-Svc-Thread-Id": {thread}},
			Body: traffic.Body{Size: int64(len(body)), Timed: true,
				Chunks: []traffic.Chunk{{At: 1200 * time.Millisecond, Size: len(body), Data: []byte(body)}}}}}
}

const (
	clean = "event: start\ndata: {}\n\nid: r1\ndata: {\"content\":\"hi\",\"runID\":\"r1\",\"threadID\":\"t1\"}\n\n" +
		"id: r1:after\ndata: {\"runComplete\":true,\"runID\":\"r1\",\"threadID\":\"t1\"}\n\nevent: close\ndata: {}\n\n"
	noClose = "event: start\ndata: {}\n\nid: r1\ndata: {\"content\":\"hi\",\"runID\":\"r1\",\"threadID\":\"t1\"}\n\n" +
		"id: r1:after\ndata: {\"runComplete\":true,\"runID\":\"r1\",\"threadID\":\"t1\"}\n\n"
)

// TestSessionProgress: a line per exchange (what it was, how it ended,
// ok or the rules it broke), each finding under its exchange, an exchange
// without an answer said as such; nothing per exchange with Progress nil.
func TestSessionProgress(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		var console, progress bytes.Buffer
		cfg := Config{Source: "har", Target: "test", Console: &console}
		if !quiet {
			cfg.Progress = &progress
		}
		s := New(cfg)
		s.Add(sseExchange(1, 0, clean))
		s.Add(sseExchange(2, 10, noClose))
		s.Add(&traffic.Exchange{ID: 3, Start: t0, Request: traffic.Request{Method: "GET", URL: "http://svc.test/api/threads/t1"},
			Error: "the proxy answered 502 Bad Gateway: no answer from the service (dial tcp: refused)"})
		lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
		switch {
		case quiet && progress.Len() > 0:
			t.Errorf("quiet, yet progress: %q", progress.String())
		case !quiet && (len(lines) != 3 ||
			lines[0] != "#1 POST /api/invoke/agt?x=1 -> 200 text/event-stream, 1.2s: ok" ||
			lines[1] != "#2 POST /api/invoke/agt?x=1 -> 200 text/event-stream, 1.2s: broke SSE-05" ||
			!strings.HasPrefix(lines[2], "#3 GET /api/threads/t1 -> no answer: the proxy answered 502")):
			t.Errorf("progress:\n%s", progress.String())
		}
		want := "SSE-05 MUST: "
		if !quiet {
			want = "    " + want
		}
		if !strings.HasPrefix(console.String(), want) {
			t.Errorf("quiet %v: console:\n%s", quiet, console.String())
		}
		if added, judged := s.Exchanges(); added != 3 || judged != 2 {
			t.Errorf("added %d, judged %d", added, judged)
		}
	}
}

// TestSessionFinish: the reports and passive-summary.json are written,
// the console ends with a short summary that leads with the failures, and
// every count is said with its plural right.
func TestSessionFinish(t *testing.T) {
	for _, tc := range []struct {
		name     string
		xs       []*traffic.Exchange
		exit     int
		headline string
	}{
		{"one exchange", []*traffic.Exchange{sseExchange(1, 0, noClose)}, 1, "observed 1 exchange; judged "},
		{"two exchanges", []*traffic.Exchange{sseExchange(1, 0, noClose), sseExchange(2, 10, noClose)}, 1, "observed 2 exchanges; judged "},
		{"no failure", []*traffic.Exchange{sseExchange(1, 0, clean)}, 0, "observed 1 exchange; judged "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var console bytes.Buffer
			s := New(Config{Source: "har", Target: "HAR file x.har", Out: dir, Console: &console})
			for _, x := range tc.xs {
				s.Add(x)
			}
			code, err := s.Finish()
			if err != nil || code != tc.exit {
				t.Fatalf("exit %d, %v", code, err)
			}
			out := console.String()
			if !strings.Contains(out, tc.headline) || strings.Contains(out, " 1 exchanges") || strings.Contains(out, " 1 rules") {
				t.Errorf("console:\n%s", out)
			}
			if n := strings.Count(out, "\n"); n > 40 {
				t.Errorf("the summary takes %d lines:\n%s", n, out)
			}
			if tc.exit == 1 {
				failed := strings.Index(out, "rule failed:")
				passed := strings.Index(out, "Passed:")
				if failed < 0 || passed < failed || !strings.Contains(out, fmt.Sprintf("FAIL    SSE-05 MUST: %s of %d broke it", plural(len(tc.xs), "exchange", "exchanges"), len(tc.xs))) ||
					!strings.Contains(out, "first: exchange #1: POST") {
					t.Errorf("the failures do not come first:\n%s", out)
				}
			}
			var sum checks.Summary
			b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
			if err != nil || json.Unmarshal(b, &sum) != nil || !strings.HasPrefix(sum.Headline, tc.headline) {
				t.Errorf("%s: %s (%v)", SummaryFile, b, err)
			}
			for _, f := range []string{reports.HTMLFile, reports.JSONFile, reports.JUnitFile} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Error(err)
				}
			}
			in := s.Input()
			if !in.Started.Equal(t0) || in.Duration < 1200*time.Millisecond {
				t.Errorf("span %v + %v, want the recording's own", in.Started, in.Duration)
			}
			if _, ok := in.Exchange(1); ok != (tc.exit == 1) {
				t.Errorf("evidence of exchange 1 kept: %v", ok)
			}
		})
	}
}

// TestSessionConcurrent: a proxy ends exchanges on many goroutines at once
// (go test -race).
func TestSessionConcurrent(t *testing.T) {
	var console, progress bytes.Buffer
	s := New(Config{Source: "proxy", Started: time.Now(), Console: &lockedWriter{w: &console}, Progress: &lockedWriter{w: &progress}})
	var wg sync.WaitGroup
	for i := 1; i <= 40; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			body := clean
			if i%2 == 0 {
				body = noClose
			}
			s.Add(sseExchange(i, i, body))
		}(i)
	}
	wg.Wait()
	if added, _ := s.Exchanges(); added != 40 || strings.Count(progress.String(), "\n") != 40 {
		t.Errorf("%d exchanges, progress:\n%s", added, progress.String())
	}
	if sum := s.Input().Summary; sum.Observed != 40 {
		t.Errorf("observed %d", sum.Observed)
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
