package runner_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/reports"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/testrun"
)

// hostileAreas are the areas the hostile-target runs cover: every response
// form and the follow-up routes, without the bundle scenarios' set-up.
var hostileAreas = []string{"body", "routes", "threads", "formats", "sse", "events", "async", "auth", "errors"}

// runHostile runs the quick suite of hostileAreas against a target and
// writes every report; it returns the reference profile it used and the
// text of the console and of every report file, by name.
func runHostile(t *testing.T, target http.Handler) (*profile.Profile, *testrun.Result, map[string]string) {
	t.Helper()
	ts := httptest.NewServer(target)
	t.Cleanup(ts.Close)
	p, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	p.BaseURL = ts.URL
	plan, err := runner.NewPlan(p, testrun.Selection{Areas: hostileAreas, Quick: true, Tags: sampled("")})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var console bytes.Buffer
	res, err := runSuite(runner.Config{Profile: p, Plan: plan, OutDir: out, Console: &console, NoColors: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := reports.Build(reports.Input{Result: res, Profile: p, Target: "a hostile target"})
	if err != nil {
		t.Fatal(err)
	}
	paths, err := reports.Write(out, rep, p, reports.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reports.WriteConsole(&console, rep, paths)
	texts := map[string]string{"console": console.String()}
	for _, f := range []string{reports.HTMLFile, reports.JSONFile, reports.JUnitFile, reports.CucumberFile} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		texts[f] = string(b)
	}
	var msgs strings.Builder
	for _, s := range res.Scenarios {
		msgs.WriteString(s.Error + "\n")
	}
	texts["messages"] = msgs.String()
	return p, res, texts
}

// reflecting answers every request with its Authorization header in the
// response headers and the body, the key placed so that it straddles the
// cut of a quoted value (300 bytes) and the cut of a transcript body
// (16 KiB) at an offset that moves by one with each request, and a piece of
// the secret alone.
func reflecting() http.Handler {
	var n atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		auth := r.Header.Get("Authorization")
		key := strings.TrimPrefix(auth, "Bearer ")
		i := int(n.Add(1))
		span := max(len(key)-1, 1)
		pad := func(n int) string { return strings.Repeat("x", max(n, 0)) }
		prefix := ""
		ct := "text/plain"
		switch r.Header.Get("Accept") {
		case "text/event-stream":
			ct, prefix = "text/event-stream", "event: start\ndata: {}\n\ndata: "
		case "application/json":
			ct, prefix = "application/json", `{"items":[{"content":"`
		}
		// The first key has 1 to len-1 bytes before the 300th byte of the
		// payload, the second as many before the 16 KiB-th of the body.
		first := pad(300-(1+i%span)) + key
		second := pad(16<<10-len(prefix)-len(first)-(1+(i*7)%span)) + key
		piece := ""
		if len(key) > 10 {
			piece = " " + key[len(key)-10:] + " " + key[3:len(key)-3]
		}
		payload := first + second + piece + pad(100)
		w.Header().Set("Content-Type", ct)
		w.Header().Set("X-SVC-Thread-Id", auth)
		w.Header().Set("X-Echo", key)
		w.Header().Set("Location", "/"+key)
		status := []int{200, 200, 400, 401, 404}[i%5]
		w.WriteHeader(status)
		switch ct {
		case "text/event-stream":
			fmt.Fprintf(w, "%s%s\n\nid: %s\ndata: {\"content\":\"%s\"}\n\nevent: close\ndata: {}\n\n", prefix, payload, key, payload)
		case "application/json":
			fmt.Fprintf(w, `%s%s"}]}`, prefix, payload)
		default:
			fmt.Fprint(w, payload)
		}
	})
}

// TestReflectingTargetLeaksNoPieceOfAKey: a target that echoes the key
// everywhere, cut at every offset, gets no piece of any key's secret of
// profile.FragmentMin or more characters into any report, the console or
// any message, and no start of a secret, however short, after its key's
// public part (a key cut in two).
func TestReflectingTargetLeaksNoPieceOfAKey(t *testing.T) {
	t.Parallel()
	p, res, texts := runHostile(t, reflecting())
	if res.Count(testrun.Failed) == 0 {
		t.Fatal("no scenario failed against a reflecting target: the test proves nothing")
	}
	for name, text := range texts {
		for _, k := range p.Secrets() {
			sec := k[strings.LastIndex(k, "-")+1:]
			pub := k[:len(k)-len(sec)]
			for rest := text; ; {
				at := strings.Index(rest, pub)
				if at < 0 {
					break
				}
				rest = rest[at+len(pub):]
				if rest != "" && rest[0] == sec[0] {
					t.Errorf("%s holds the start of the secret of %s: %s%s...", name, p.RedactEnv(k), pub, rest[:min(len(rest), 8)])
					break
				}
			}
			for i := 0; i+profile.FragmentMin <= len(sec); i++ {
				if piece := sec[i : i+profile.FragmentMin]; strings.Contains(text, piece) {
					at := strings.Index(text, piece)
					t.Errorf("%s holds %q, a piece of the secret of %s: ...%s...", name, piece, p.RedactEnv(k),
						text[max(at-80, 0):min(at+40, len(text))])
					break
				}
			}
		}
	}
	if !strings.Contains(texts[reports.HTMLFile], profile.Fragment) {
		t.Error("the HTML report shows no redacted piece: did the target's echoes reach it at all?")
	}
}

// escaping answers with NUL, ESC, other control bytes and invalid UTF-8 in
// its bodies, and in its headers what net/http lets through there (bytes
// from 0x80 on: C1 controls, bidi overrides, invalid UTF-8).
func escaping() http.Handler {
	const inHeader = "\xc2\x9b31m\xff\xfe\xe2\x80\xae"
	const bad = "\x00\x1b[2J\x1b]0;pwned\x07\r\x7f" + inHeader
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("X-SVC-Thread-Id", "thr"+inHeader)
		w.Header().Set("X-Bad", inHeader)
		switch r.Header.Get("Accept") {
		case "text/event-stream":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: start\ndata: {}\n\nid: run%s\ndata: {\"content\":\"%s\"}\n\ndata: %s\n\n", bad, bad, bad)
		case "application/json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"items":[{"content":"%s"}], "error": {"message": "%s"}}%s`, bad, bad, bad)
		default:
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "answer"+bad)
		}
	})
}

// TestTargetBytesAreEscapedInEveryReport: control bytes and invalid UTF-8
// from a target reach no report and no console raw, and junit.xml stays
// XML, summary.json and cucumber.json JSON.
func TestTargetBytesAreEscapedInEveryReport(t *testing.T) {
	t.Parallel()
	_, res, texts := runHostile(t, escaping())
	if res.Count(testrun.Failed) == 0 {
		t.Fatal("no scenario failed against an escaping target: the test proves nothing")
	}
	for name, text := range texts {
		if err := rawControl(text); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := validXML(texts[reports.JUnitFile]); err != nil {
		t.Errorf("junit.xml: %v", err)
	}
	for _, f := range []string{reports.JSONFile, reports.CucumberFile} {
		if !json.Valid([]byte(texts[f])) {
			t.Errorf("%s is not valid JSON", f)
		}
	}
	if !strings.Contains(texts[reports.HTMLFile], `\x1b`) {
		t.Error("the HTML report shows no escaped ESC: did the target's bytes reach it at all?")
	}
}

// rawControl reports the first raw control character or invalid UTF-8 in
// s; newline and tab are text.
func rawControl(s string) error {
	if !utf8.ValidString(s) {
		i := 0
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return fmt.Errorf("invalid UTF-8 at byte %d: ...%q...", i, s[max(i-60, 0):min(i+20, len(s))])
	}
	for i, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r < 0xa0 || r == 0x202e {
			return fmt.Errorf("raw %U at byte %d: ...%q...", r, i, s[max(i-60, 0):min(i+20, len(s))])
		}
	}
	return nil
}

// validXML reads every token of an XML document.
func validXML(s string) error {
	dec := xml.NewDecoder(strings.NewReader(s))
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// TestRedirectsAreNotFollowed: a target that answers every request with a
// redirect to another host sends the harness nowhere; the failures name
// the Location.
func TestRedirectsAreNotFollowed(t *testing.T) {
	t.Parallel()
	var reached atomic.Int64
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.WriteHeader(200)
	}))
	defer elsewhere.Close()
	redirecting := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		code := []int{307, 308, 302, 301, 303}[len(r.URL.Path)%5]
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, code)
	})
	_, res, texts := runHostile(t, redirecting)
	if n := reached.Load(); n > 0 {
		t.Fatalf("%d requests reached the host the redirects named", n)
	}
	if res.Count(testrun.Failed) == 0 {
		t.Fatal("no scenario failed against a target that only redirects")
	}
	if !strings.Contains(texts["messages"], "Location: \""+elsewhere.URL) {
		t.Errorf("no failure names the Location of the redirect:\n%s", texts["messages"][:min(2000, len(texts["messages"]))])
	}
}
