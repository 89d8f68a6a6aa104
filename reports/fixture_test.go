package reports

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/testrun"
)

// The tests of this package judge one real run: the quick scenarios of most
// areas against the reference server with defects that break MUST rules (SSE-05, ERR-05,
// ROUTE-03, the last over several exchanges) and a SHOULD rule (EVT-08).
var (
	fixtureDefects = []string{"no-close", "expired-403", "thread-id-new-thread", "waiting-dropped"}
	fixtureAreas   = []string{"body", "routes", "threads", "sse", "events", "auth", "errors"}
)

type fixture struct {
	p   *profile.Profile
	srv *httptest.Server
	rec *recorder
	res *testrun.Result
	rep *Report
	out string // holds godog's cucumber.json of the run
}

var (
	fixOnce sync.Once
	fix     *fixture
	fixErr  error
)

// defectRun returns the shared run; its server keeps listening until the
// test binary exits, so curl commands can be replayed against it.
func defectRun(t *testing.T) *fixture {
	t.Helper()
	fixOnce.Do(func() {
		seed, err := fixtures.Reference()
		if err != nil {
			fixErr = err
			return
		}
		s, err := fakeserver.New(fakeserver.Config{Profile: seed, Defects: fixtureDefects})
		if err != nil {
			fixErr = err
			return
		}
		rec := &recorder{next: s}
		srv := httptest.NewServer(rec)
		p := seed.Clone()
		p.BaseURL = srv.URL
		// The areas without absolute timing bounds: this run overlaps the
		// mutation tests of package runner under -race.
		plan, err := runner.NewPlan(p, testrun.Selection{Quick: true, Areas: fixtureAreas})
		if err != nil {
			fixErr = err
			return
		}
		// godog's cucumber.json of the run stays in out for the tests
		// that complete it; the system's temp folder is cleared by others.
		out, err := os.MkdirTemp("", "invokeconf-reports-fixture-")
		if err != nil {
			fixErr = err
			return
		}
		res, err := runner.Run(context.Background(), runner.Config{Profile: p, Plan: plan, OutDir: out})
		if err != nil {
			fixErr = err
			return
		}
		rep, err := Build(Input{Result: res, Profile: p, Target: "reference server with defects", Baseline: nil})
		if err != nil {
			fixErr = err
			return
		}
		fix = &fixture{p: p, srv: srv, rec: rec, res: res, rep: rep, out: out}
	})
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fix
}

func reference(t *testing.T) *profile.Profile {
	t.Helper()
	p, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	p.BaseURL = "http://127.0.0.1:1"
	return p
}

// recorded is a request as the server received it.
type recorded struct {
	Method, Path, Query string
	Header              http.Header
	Body                string
}

// recorder keeps every request a handler serves.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	reqs []recorded
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	r.mu.Lock()
	r.reqs = append(r.reqs, recorded{req.Method, req.URL.Path, req.URL.RawQuery, req.Header.Clone(), string(body)})
	r.mu.Unlock()
	r.next.ServeHTTP(w, req)
}

func (r *recorder) since(n int) []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs[n:]...)
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}
