package fakeserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/profile"
)

const testAdminKey = "admin-test-key-0123"

// adminServer is a reference server with its admin routes open.
func adminServer(t *testing.T, cfg Config) (*Server, *httptest.Server, *profile.Profile) {
	t.Helper()
	cfg.AdminKey = testAdminKey
	s := testServer(t, cfg)
	ts := httptest.NewServer(s)
	t.Cleanup(func() {
		s.Close()
		ts.Close()
	})
	return s, ts, s.Profile()
}

// testClient bounds every request of these tests.
var testClient = &http.Client{Timeout: 20 * time.Second}

// adminCall sends an admin request with the given token ("" for none) and
// returns the status, Content-Type and body.
func adminCall(t *testing.T, ts *httptest.Server, token, method, route, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+AdminPrefix+route, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// sseBody invokes the main agent for an SSE stream and reads it whole.
func sseBody(t *testing.T, ts *httptest.Server, p *profile.Profile, prompt string) string {
	t.Helper()
	req, err := http.NewRequest("POST", ts.URL+"/api/invoke/"+p.Agents.Main.ID, strings.NewReader(prompt))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+p.Keys.Agent)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lineEnding names the line ending of an SSE stream: "crlf", "cr", "lf",
// or "mixed" when its lines end in more than one way.
func lineEnding(body string) string {
	crlf := strings.Count(body, "\r\n")
	cr := strings.Count(body, "\r") - crlf
	lf := strings.Count(body, "\n") - crlf
	switch {
	case crlf > 0 && cr == 0 && lf == 0:
		return "crlf"
	case cr > 0 && crlf == 0 && lf == 0:
		return "cr"
	case lf > 0 && crlf == 0 && cr == 0:
		return "lf"
	}
	return "mixed"
}

// TestAdminRoutesClosedByDefault: without an admin key the prefix is an
// unknown route like any other.
func TestAdminRoutesClosedByDefault(t *testing.T) {
	ts, _ := newTestServer(t, Config{})
	for _, token := range []string{"", testAdminKey} {
		status, ctype, body := adminCall(t, ts, token, "GET", "switches", "")
		if status != http.StatusNotFound || ctype != "application/problem+json" || !strings.Contains(body, "no route") {
			t.Errorf("token %q: %d %s %s", token, status, ctype, body)
		}
	}
}

// TestAdminKeyRefused: an admin key is never a service key.
func TestAdminKeyRefused(t *testing.T) {
	ref, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ key, want string }{
		{ref.Keys.Agent, "shape of a service key"},
		{"sk-svc-admin-k1-0123456789abcdef", "shape of a service key"},
		{"SK-SVC-admin-k1-0123456789abcdef", "shape of a service key"},
		{"short", "at least"},
		{"has a space in it", "printable ASCII"},
		{"tab\tinside-the-key", "printable ASCII"},
	}
	for _, tt := range tests {
		_, err := New(Config{Profile: ref, AdminKey: tt.key})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("admin key %q: %v, want an error saying %q", tt.key, err, tt.want)
		}
	}
	// A profile whose key is not of the sk-svc- shape: still refused.
	odd := ref.Clone()
	odd.Keys.Alias = "plain-token-of-a-vendor"
	if _, err := New(Config{Profile: odd, AdminKey: odd.Keys.Alias}); err == nil {
		// The seed refuses the odd key first, which is as good.
		t.Log("the seed accepted a key of another shape")
	}
	if err := checkAdminKey(odd.Keys.Alias, odd); err == nil || !strings.Contains(err.Error(), "one of the profile's keys") {
		t.Errorf("an admin key equal to a profile key: %v", err)
	}
}

// TestAdminAuth: without the admin key the routes answer 401, with another
// token (a service key too) 403, each with a problem body.
func TestAdminAuth(t *testing.T) {
	_, ts, p := adminServer(t, Config{})
	tests := []struct {
		token  string
		status int
	}{
		{"", http.StatusUnauthorized},
		{p.Keys.Agent, http.StatusForbidden},
		{p.Keys.Wildcard, http.StatusForbidden},
		{testAdminKey + "x", http.StatusForbidden},
		{testAdminKey, http.StatusOK},
	}
	for _, tt := range tests {
		for _, route := range []string{"switches", "requests", "profile", ""} {
			status, ctype, body := adminCall(t, ts, tt.token, "GET", route, "")
			if status != tt.status {
				t.Errorf("GET %s with %q: %d, want %d: %s", route, tt.token, status, tt.status, body)
			}
			if status >= 400 && (ctype != "application/problem+json" || !strings.Contains(body, `"detail"`)) {
				t.Errorf("GET %s with %q: %s %s, want a problem", route, tt.token, ctype, body)
			}
		}
	}
	req, _ := http.NewRequest("GET", ts.URL+AdminPrefix+"switches", nil)
	req.Header.Set("Authorization", "Basic "+testAdminKey)
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("a Basic token: %d, WWW-Authenticate %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

// TestAdminBadInput: every mistake gets a 4xx that says what is wrong.
func TestAdminBadInput(t *testing.T) {
	_, ts, _ := adminServer(t, Config{Variants: []string{"sse-crlf"}})
	tests := []struct {
		method, route, body string
		status              int
		want                string
	}{
		{"PATCH", "switches", `{"variants":{"sse-crfl":true}}`, 400, `unknown variant \"sse-crfl\" (did you mean sse-crlf?)`},
		{"PATCH", "switches", `{"defects":{"no-closse":true}}`, 400, `unknown defect \"no-closse\" (did you mean no-close?)`},
		{"PATCH", "switches", `{"variant":{"sse-cr":true}}`, 400, `unknown field \"variant\" (did you mean variants?)`},
		{"PATCH", "switches", `{"variants":{"sse-cr":true}}`, 409, "variants sse-crlf and sse-cr exclude each other (group line-endings)"},
		{"PATCH", "switches", `{"variants":{"uuid-seed-ids":true}}`, 409, "variant uuid-seed-ids can be chosen only at start-up"},
		{"PATCH", "switches", `{"variants":{"service-tool":true}}`, 409, "variant service-tool can be chosen only at start-up"},
		{"PATCH", "switches", `{"variants":["sse-cr"]}`, 400, "not the JSON wanted"},
		{"PATCH", "switches", `{"variants":`, 400, "not the JSON wanted"},
		{"PATCH", "switches", `{} {}`, 400, "more than one JSON value"},
		{"PATCH", "switches", strings.Repeat(" ", maxAdminBody+1), 413, "over"},
		{"PUT", "switches", `{"variants":["sse-cr","sse-crlf"]}`, 409, "exclude each other"},
		{"PUT", "switches", `{"variants":{"sse-cr":true}}`, 400, "not the JSON wanted"},
		{"GET", "requests?since=-1", "", 400, "since="},
		{"GET", "requests?since=x", "", 400, "since="},
		{"POST", "switches", "", 405, "takes GET, PATCH, PUT, DELETE"},
		{"GET", "nothing-here", "", 404, "no admin route"},
	}
	for _, tt := range tests {
		status, ctype, body := adminCall(t, ts, testAdminKey, tt.method, tt.route, tt.body)
		if status != tt.status || !strings.Contains(body, tt.want) {
			t.Errorf("%s %s %.40q: %d %s, want %d with %q", tt.method, tt.route, tt.body, status, body, tt.status, tt.want)
		}
		if ctype != "application/problem+json" {
			t.Errorf("%s %s: Content-Type %q", tt.method, tt.route, ctype)
		}
	}
	// Nothing was changed by the refused requests.
	_, _, body := adminCall(t, ts, testAdminKey, "GET", "switches", "")
	var w Switches
	if err := json.Unmarshal([]byte(body), &w); err != nil {
		t.Fatal(err)
	}
	if d, v := w.On(); len(d) != 0 || strings.Join(v, ",") != "sse-crlf" {
		t.Errorf("after refused changes: defects %v, variants %v", d, v)
	}
}

// TestAdminSwitchesTakeEffect: a switch turned over HTTP changes the next
// request; PUT sets exactly a list; DELETE brings back the start-up set.
func TestAdminSwitchesTakeEffect(t *testing.T) {
	_, ts, p := adminServer(t, Config{Variants: []string{"sse-cr"}})
	steps := []struct {
		method, body string
		want         string // the line ending of the next stream
	}{
		{"", "", "cr"},
		{"PATCH", `{"variants":{"sse-cr":false}}`, "lf"},
		{"PATCH", `{"variants":{"sse-crlf":true}}`, "crlf"},
		{"PUT", `{"variants":["sse-cr"],"defects":[]}`, "cr"},
		{"PUT", `{}`, "lf"},
		{"DELETE", "", "cr"},
		{"PATCH", `{"variants":{"sse-cr":false,"sse-crlf":true}}`, "crlf"},
	}
	for i, st := range steps {
		if st.method != "" {
			status, _, body := adminCall(t, ts, testAdminKey, st.method, "switches", st.body)
			if status != http.StatusOK {
				t.Fatalf("step %d: %s %s: %d %s", i, st.method, st.body, status, body)
			}
		}
		if got := lineEnding(sseBody(t, ts, p, "@say hi")); got != st.want {
			t.Errorf("step %d (%s %s): the stream's lines end in %s, want %s", i, st.method, st.body, got, st.want)
		}
	}
	// A defect over HTTP: no-close drops the close frame.
	if status, _, body := adminCall(t, ts, testAdminKey, "PATCH", "switches", `{"defects":{"no-close":true}}`); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	if b := sseBody(t, ts, p, "@say hi"); strings.Contains(b, "event: close") {
		t.Errorf("no-close is on, the stream still closes:\n%q", b)
	}
	_, _, body := adminCall(t, ts, testAdminKey, "GET", "switches", "")
	var w Switches
	if err := json.Unmarshal([]byte(body), &w); err != nil {
		t.Fatal(err)
	}
	for _, v := range w.Variants {
		if v.Spec == "" || v.Description == "" {
			t.Errorf("variant %s is listed without its spec words or description", v.Name)
		}
		if _, fixed := startUpOnly[mustVariant(t, v.Name)]; fixed != v.StartUpOnly {
			t.Errorf("variant %s: startUpOnly %v", v.Name, v.StartUpOnly)
		}
	}
	if d, v := w.On(); strings.Join(d, ",") != "no-close" || strings.Join(v, ",") != "sse-crlf" {
		t.Errorf("listed on: defects %v, variants %v", d, v)
	}
}

func mustVariant(t *testing.T, name string) variantID {
	t.Helper()
	id, ok := variantByName(name)
	if !ok {
		t.Fatalf("no variant %s", name)
	}
	return id
}

// TestSwitchSparesRunsInFlight: a stream that started before a switch ends
// as it began, byte for byte in its old framing, while a stream started
// after it has the new one; so does a plain-text answer.
func TestSwitchSparesRunsInFlight(t *testing.T) {
	s, ts, p := adminServer(t, Config{})
	req, err := http.NewRequest("POST", ts.URL+"/api/invoke/"+p.Agents.Main.ID, strings.NewReader("@say before\n@pause 300ms\n@say after"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+p.Keys.Agent)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	var got bytes.Buffer
	for !strings.Contains(got.String(), `"before"`) {
		line, err := r.ReadString('\n')
		got.WriteString(line)
		if err != nil {
			t.Fatalf("the stream ended before its first content: %v\n%q", err, got.String())
		}
	}
	if _, err := s.SetSwitches(SwitchChange{Variants: map[string]bool{"sse-crlf": true, "sse-no-space": true}}); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	got.Write(rest)
	old := got.String()
	if lineEnding(old) != "lf" || !strings.Contains(old, `"after"`) || !strings.Contains(old, "data: {") || !strings.Contains(old, "event: close") {
		t.Errorf("the stream in flight changed with the switch:\n%q", old)
	}
	if b := sseBody(t, ts, p, "@say next"); lineEnding(b) != "crlf" || !strings.Contains(b, "data:{") {
		t.Errorf("a stream started after the switch:\n%q", b)
	}
}

// TestSwitchSparesAsyncRuns: an async run started before a switch makes
// its events with the switches it started with, to its end: with
// content-cumulative switched on while it runs, its second fragment is
// still only itself. (The events request that reads them starts after the
// switch and renders them with the new set.)
func TestSwitchSparesAsyncRuns(t *testing.T) {
	for _, switchOn := range []bool{false, true} {
		s, ts, p := adminServer(t, Config{})
		if !switchOn {
			// Control: on before the run, the defect shows.
			if _, err := s.SetSwitches(SwitchChange{Defects: map[string]bool{"content-cumulative": true}}); err != nil {
				t.Fatal(err)
			}
		}
		req, _ := http.NewRequest("POST", ts.URL+"/api/invoke/"+p.Agents.Main.ID+"?async=true", strings.NewReader("@say one\n@pause 200ms\n@say two"))
		req.Header.Set("Authorization", "Bearer "+p.Keys.Agent)
		resp, err := testClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var ack struct{ ThreadID, RunID string }
		err = json.NewDecoder(resp.Body).Decode(&ack)
		resp.Body.Close()
		if err != nil || ack.RunID == "" {
			t.Fatalf("async answer: %v %+v", err, ack)
		}
		if switchOn {
			if _, err := s.SetSwitches(SwitchChange{Defects: map[string]bool{"content-cumulative": true}}); err != nil {
				t.Fatal(err)
			}
		}
		req, _ = http.NewRequest("GET", ts.URL+"/api/threads/"+ack.ThreadID+"/events?runID="+ack.RunID, nil)
		req.Header.Set("Authorization", "Bearer "+p.Keys.Agent)
		req.Header.Set("Accept", "application/json")
		resp, err = testClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var contents []string
		var env struct{ Items []struct{ Content string } }
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatalf("events: %v %s", err, b)
		}
		for _, it := range env.Items {
			if it.Content != "" {
				contents = append(contents, it.Content)
			}
		}
		want := "one|two"
		if !switchOn {
			want = "one|onetwo"
		}
		if got := strings.Join(contents, "|"); got != want {
			t.Errorf("defect switched on %s the run: contents %q, want %q", map[bool]string{true: "during", false: "before"}[switchOn], got, want)
		}
	}
}

// TestReset: reset forgets the threads, runs and installations made since
// the seed, and the recent requests, and keeps the switches.
func TestReset(t *testing.T) {
	s, ts, p := adminServer(t, Config{})
	s.SetSwitches(SwitchChange{Variants: map[string]bool{"sse-crlf": true}})
	resp := post(t, ts.URL+"/api/invoke/"+p.Agents.Main.ID, p.Keys.Agent, "application/json", "hello")
	resp.Body.Close()
	thread := resp.Header.Get(hdrThreadID)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	before := installations(t, ctx, ts, p)
	status, body, err := bundleRequest(ctx, ts, p.Keys.Bundles, "POST", "/api/bundles/installations", largeDoc("reset-me", 1, 0, 1))
	if err != nil || status >= 300 {
		t.Fatalf("install: %d %v %s", status, err, body)
	}
	if n := installations(t, ctx, ts, p); n <= before {
		t.Fatalf("%d installations after one install, %d before", n, before)
	}
	if code := threadStatus(t, ts, p, thread); code != http.StatusOK {
		t.Fatalf("the thread before reset: %d", code)
	}
	if status, _, body := adminCall(t, ts, testAdminKey, "POST", "reset", ""); status != http.StatusNoContent {
		t.Fatalf("reset: %d %s", status, body)
	}
	if code := threadStatus(t, ts, p, thread); code != http.StatusNotFound {
		t.Errorf("the thread after reset: %d, want 404", code)
	}
	if code := threadStatus(t, ts, p, p.Threads.Main.ID); code != http.StatusOK {
		t.Errorf("the seeded thread after reset: %d, want 200", code)
	}
	if n := installations(t, ctx, ts, p); n != before {
		t.Errorf("%d installations after reset, %d seeded", n, before)
	}
	if _, v := s.Switches().On(); strings.Join(v, ",") != "sse-crlf" {
		t.Errorf("reset changed the switches: %v", v)
	}
	// Only the requests after the reset are remembered.
	for _, rq := range s.Requests(0) {
		if rq.Method == "POST" {
			t.Errorf("a request before the reset is still listed: %+v", rq)
		}
	}
}

func installations(t *testing.T, ctx context.Context, ts *httptest.Server, p *profile.Profile) int {
	t.Helper()
	status, body, err := bundleRequest(ctx, ts, p.Keys.Bundles, "GET", "/api/bundles/installations", "")
	if err != nil || status != 200 {
		t.Fatalf("installations: %d %v %s", status, err, body)
	}
	var list struct{ Items []any }
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

func threadStatus(t *testing.T, ts *httptest.Server, p *profile.Profile, id string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.URL+"/api/threads/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+p.Keys.Agent)
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestRecentRequests: the requests served, in order, with the key by its
// ID and no piece of any secret; since pages; the ring keeps the last N.
func TestRecentRequests(t *testing.T) {
	s, ts, p := adminServer(t, Config{RecentRequests: 4, Variants: []string{"sse-crlf"}})
	agent := ts.URL + "/api/invoke/" + p.Agents.Main.ID
	// A key in a query string, as a clumsy client might send it, and the
	// admin key on a service route.
	for i, u := range []string{agent, agent + "?key=" + p.Keys.Agent, agent + "?admin=" + testAdminKey} {
		resp := post(t, u, p.Keys.Agent, "text/event-stream", "hello")
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		// A request is listed before its answer ends at the client, an
		// SSE stream written on its own goroutine included.
		if n := len(s.Requests(0)); n != i+1 {
			t.Fatalf("after request %d read to its end: %d listed", i+1, n)
		}
	}
	resp := post(t, agent, "", "application/json", "no key")
	resp.Body.Close()
	status, _, body := adminCall(t, ts, testAdminKey, "GET", "requests", "")
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	for _, k := range append(p.Secrets(), testAdminKey) {
		sec := k[strings.LastIndex(k, "-")+1:]
		for i := 0; i+profile.FragmentMin <= len(sec); i++ {
			if strings.Contains(body, sec[i:i+profile.FragmentMin]) {
				t.Fatalf("the recent requests hold a piece of a secret:\n%s", body)
			}
		}
	}
	var page requestsPage
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Requests) != 4 || page.Last != 4 {
		t.Fatalf("want 4 requests, the last numbered 4: %s", body)
	}
	first := page.Requests[0]
	if first.Seq != 1 || first.Method != "POST" || first.Status != 200 || first.Key != "alice-kagent" ||
		first.Headers["Accept"] != "text/event-stream" || strings.Join(first.Variants, ",") != "sse-crlf" {
		t.Errorf("first request: %+v", first)
	}
	if !strings.Contains(page.Requests[1].Path, "?key=[key alice-kagent]") || !strings.Contains(page.Requests[2].Path, "?admin=[admin key]") {
		t.Errorf("keys in paths: %q, %q", page.Requests[1].Path, page.Requests[2].Path)
	}
	if last := page.Requests[3]; last.Key != "none" || last.Status != 401 {
		t.Errorf("last request: %+v", last)
	}
	// Two more: the ring keeps the last 4, since pages.
	for range 2 {
		resp := post(t, agent, p.Keys.Agent, "application/json", "again")
		resp.Body.Close()
	}
	all := s.Requests(0)
	if len(all) != 4 || all[0].Seq != 3 || all[3].Seq != 6 {
		t.Errorf("the ring after 6 requests: %+v", all)
	}
	if later := s.Requests(5); len(later) != 1 || later[0].Seq != 6 {
		t.Errorf("since 5: %+v", later)
	}
	_, _, body = adminCall(t, ts, testAdminKey, "GET", "requests?since=6", "")
	if !strings.Contains(body, `"requests":[]`) || !strings.Contains(body, `"last":6`) {
		t.Errorf("since 6: %s", body)
	}
}

// TestAdminProfile: the served profile, keys included, with the base URL
// the request came to.
func TestAdminProfile(t *testing.T) {
	_, ts, p := adminServer(t, Config{Variants: []string{"uuid-seed-ids"}})
	status, ctype, body := adminCall(t, ts, testAdminKey, "GET", "profile", "")
	if status != 200 || ctype != "application/yaml" {
		t.Fatalf("%d %s %s", status, ctype, body)
	}
	got, err := profile.Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if got.BaseURL != ts.URL || got.Agents.Main.ID != p.Agents.Main.ID || got.Keys.Agent != p.Keys.Agent {
		t.Errorf("served profile: base %s agent %s", got.BaseURL, got.Agents.Main.ID)
	}
}

// TestSwitchingWhileInvoking switches the line endings over and over while
// streams run: every stream has one line ending from its first byte to its
// last (the set a request started with), and the race detector finds no
// race between the switching and the serving.
func TestSwitchingWhileInvoking(t *testing.T) {
	s, ts, p := adminServer(t, Config{})
	sets := []map[string]bool{
		{"sse-crlf": true, "sse-cr": false, "sse-no-space": true},
		{"sse-crlf": false, "sse-cr": true, "sse-comments": true},
		{"sse-crlf": false, "sse-cr": false, "sse-no-space": false, "sse-comments": false},
	}
	stop := make(chan struct{})
	var switcher sync.WaitGroup
	switcher.Add(2)
	go func() { // in process
		defer switcher.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.SetSwitches(SwitchChange{Variants: sets[i%len(sets)]}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() { // over HTTP
		defer switcher.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			b, _ := json.Marshal(SwitchChange{Variants: sets[(i+1)%len(sets)]})
			req, _ := http.NewRequest("PATCH", ts.URL+AdminPrefix+"switches", bytes.NewReader(b))
			req.Header.Set("Authorization", "Bearer "+testAdminKey)
			resp, err := testClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("PATCH: %d", resp.StatusCode)
				return
			}
		}
	}()
	var clients sync.WaitGroup
	seen := make(chan string, 64)
	for c := range 4 {
		clients.Add(1)
		go func() {
			defer clients.Done()
			for i := range 8 {
				b := sseBody(t, ts, p, fmt.Sprintf("@say c%d-%d\n@pause 5ms\n@say more", c, i))
				le := lineEnding(b)
				if le == "mixed" || !strings.Contains(b, "start") || !strings.Contains(b, "close") {
					t.Errorf("a stream served while switching is not of one piece:\n%q", b)
				}
				seen <- le
			}
		}()
	}
	clients.Wait()
	close(stop)
	switcher.Wait()
	close(seen)
	kinds := map[string]int{}
	for le := range seen {
		kinds[le]++
	}
	t.Logf("line endings seen: %v", kinds)
}
