package reports

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/transcript"
)

// TestShellWordRoundTrips: bash reads every quoted word back as the text it
// came from, with $INVOKECONF_ references filled from the environment.
func TestShellWordRoundTrips(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, s := range []string{
		"plain", "", "it's \"quoted\"", "line one\nline two\n", "tabs\tand $HOME and `date` and \\ backslash",
		"carriage\rreturn and bell \a and \x7f", "unicode: héllo ✓", "Bearer $INVOKECONF_KEYS_AGENT",
		"$INVOKECONF_KEYS_AGENT$INVOKECONF_KEYS_ALIAS'", "@say partial\n@fail it went wrong",
	} {
		cmd := exec.Command(bash, "-c", "printf %s "+shellWord(s))
		cmd.Env = append(os.Environ(), "INVOKECONF_KEYS_AGENT=sk-svc-a-b-c", "INVOKECONF_KEYS_ALIAS=sk-svc-a-d-e")
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("%q: bash: %v", s, err)
			continue
		}
		want := strings.NewReplacer("$INVOKECONF_KEYS_AGENT", "sk-svc-a-b-c", "$INVOKECONF_KEYS_ALIAS", "sk-svc-a-d-e").Replace(s)
		if string(out) != want {
			t.Errorf("shellWord(%q) = %s reads back as %q", s, shellWord(s), out)
		}
		if words, err := shellSplit(shellWord(s), fixtureEnv(map[string]string{"INVOKECONF_KEYS_AGENT": "sk-svc-a-b-c", "INVOKECONF_KEYS_ALIAS": "sk-svc-a-d-e"})); err != nil || len(words) != 1 || words[0] != want {
			t.Errorf("shellSplit(shellWord(%q)) = %q, %v", s, words, err)
		}
	}
}

// guardedRef is how a curl command names a key's variable.
var guardedRef = regexp.MustCompile(`^\$\{(INVOKECONF_[A-Z0-9_]+):\?export it first\}$`)

// TestCurlRefusesAnUnsetKey: a command whose key variable is unset stops
// with a message naming it, instead of sending an empty key.
func TestCurlRefusesAnUnsetKey(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	cmd := exec.Command(bash, "-c", "printf %s "+shellWord("Bearer $INVOKECONF_KEYS_AGENT"))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "INVOKECONF_KEYS_AGENT: export it first") {
		t.Errorf("with the variable unset: %v, %q; want a refusal naming INVOKECONF_KEYS_AGENT", err, out)
	}
}

// TestDefectReportNamesTheRule: against a server with defects, the report's
// failures name the broken rules with their spec sentences, a MUST failure
// fails the run and a SHOULD failure is a warning.
func TestDefectReportNamesTheRule(t *testing.T) {
	f := defectRun(t)
	want := map[string]Verdict{"SSE-05": Fail, "ERR-05": Fail, "ROUTE-03": Fail, "EVT-08": Warning}
	for _, r := range f.rep.Rules {
		if v, ok := want[r.ID]; ok && r.Verdict != v {
			t.Errorf("%s: %s (%s), want %s", r.ID, r.Verdict, r.Reason, v)
		}
		if _, ok := want[r.ID]; !ok && (r.Verdict == Fail || r.Verdict == Warning || r.Verdict == HarnessError) {
			t.Errorf("%s: %s (%s), but no defect breaks it", r.ID, r.Verdict, r.Reason)
		}
	}
	if f.rep.ExitCode != 1 || f.rep.Outcome != "fail" || !strings.Contains(f.rep.Headline, "3 MUST rules failed") {
		t.Errorf("outcome %s, exit %d: %s", f.rep.Outcome, f.rep.ExitCode, f.rep.Headline)
	}
	seen := map[string]bool{}
	for _, fl := range f.rep.Findings {
		if fl.RuleID == "" || len(fl.Curl) == 0 || fl.Actual == "" {
			t.Errorf("%s: rule %q, %d curl commands, actual %q", fl.ID(), fl.RuleID, len(fl.Curl), fl.Actual)
		}
		seen[fl.RuleID] = true
		if fl.Rule.Spec == "" {
			t.Errorf("%s: rule %s without its spec sentence", fl.ID(), fl.RuleID)
		}
	}
	for id := range want {
		if !seen[id] {
			t.Errorf("no failure names %s", id)
		}
	}
}

// TestCurlReproducesTheRequest: the curl command of every failure's last
// exchange, run with the key variables set, sends the server the request
// the harness sent: same method, path, query, headers and body, and gets
// the same status. It is run with curl when curl is installed, and always
// parsed and replayed with net/http.
func TestCurlReproducesTheRequest(t *testing.T) {
	f := defectRun(t)
	env := map[string]string{}
	for _, fd := range f.p.Fields() {
		if fd.Secret && fd.Value() != "" {
			env[fd.Env] = fd.Value()
		}
	}
	curl, _ := exec.LookPath("curl")
	if curl == "" {
		t.Log("curl is not installed: the commands are only parsed and replayed with net/http")
	}
	checked := 0
	replayed := map[string]bool{} // one replay per rule and request shape: each takes the run's time again
	for _, fl := range f.rep.Findings {
		ex := fl.Transcript[len(fl.Transcript)-1]
		cmd := fl.Curl[len(fl.Curl)-1]
		if !strings.Contains(cmd, "${INVOKECONF_KEYS_") && ex.Header.Get("Authorization") != "" {
			t.Errorf("%s: the curl command carries no key variable:\n%s", fl.ID(), cmd)
		}
		for _, key := range f.p.Secrets() {
			if strings.Contains(cmd, key) {
				t.Fatalf("%s: the curl command holds a key", fl.ID())
			}
		}
		shape := fl.RuleID + " " + ex.Method + " " + ex.Header.Get("Accept")
		if replayed[shape] || strings.Contains(ex.Body, "@pause") {
			continue // the same request again, or a run that pauses: replayed for another finding, or too slow
		}
		replayed[shape] = true
		want := expectedRequest(t, ex, env)
		if curl != "" {
			n := f.rec.len()
			status := runCurl(t, curl, cmd, env)
			compareReceived(t, fl.ID()+" (curl)", want, f.rec.since(n))
			if status != ex.Status {
				t.Errorf("%s (curl): status %d, the run saw %d", fl.ID(), status, ex.Status)
			}
		}
		n := f.rec.len()
		status := replay(t, cmd, env)
		compareReceived(t, fl.ID()+" (replay)", want, f.rec.since(n))
		if status != ex.Status {
			t.Errorf("%s (replay): status %d, the run saw %d", fl.ID(), status, ex.Status)
		}
		checked++
	}
	if checked < 4 {
		t.Errorf("only %d failures checked", checked)
	}
}

// expectedRequest is the request of a transcript with its key variables
// filled in.
func expectedRequest(t *testing.T, ex transcript.Exchange, env map[string]string) recorded {
	t.Helper()
	fill := func(s string) string {
		return envRef.ReplaceAllStringFunc(s, func(ref string) string { return env[ref[1:]] })
	}
	u, err := url.Parse(fill(ex.URL))
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	for k, vs := range ex.Header {
		for _, v := range vs {
			h.Add(k, fill(v))
		}
	}
	return recorded{Method: ex.Method, Path: u.Path, Query: u.RawQuery, Header: h, Body: fill(ex.Body)}
}

// compareReceived checks that the server received exactly the expected
// request. Accept and Content-Type must match even when absent; headers a
// client adds by itself (User-Agent, Content-Length) are not compared.
func compareReceived(t *testing.T, what string, want recorded, got []recorded) {
	t.Helper()
	if len(got) != 1 {
		t.Errorf("%s: the server received %d requests, want 1", what, len(got))
		return
	}
	g := got[0]
	if g.Method != want.Method || g.Path != want.Path || g.Query != want.Query || g.Body != want.Body {
		t.Errorf("%s: received %s %s?%s %q, want %s %s?%s %q", what, g.Method, g.Path, g.Query, g.Body, want.Method, want.Path, want.Query, want.Body)
	}
	names := map[string]bool{"Accept": true, "Content-Type": true}
	for k := range want.Header {
		names[k] = true
	}
	for k := range names {
		if strings.Join(g.Header.Values(k), ",") != strings.Join(want.Header.Values(k), ",") {
			t.Errorf("%s: header %s is %q, want %q", what, k, g.Header.Values(k), want.Header.Values(k))
		}
	}
}

func runCurl(t *testing.T, curl, cmd string, env map[string]string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "-c", strings.Replace(cmd, "curl ", curl+" ", 1))
	c.Env = os.Environ()
	for k, v := range env {
		c.Env = append(c.Env, k+"="+v)
	}
	out, err := c.Output()
	if err != nil {
		t.Fatalf("curl: %v\n%s", err, cmd)
	}
	return statusOf(t, out)
}

// statusOf reads the status code from curl -i output.
func statusOf(t *testing.T, out []byte) int {
	t.Helper()
	line, _, _ := strings.Cut(string(out), "\n")
	fields := strings.Fields(line)
	if len(fields) < 2 {
		t.Fatalf("curl printed no status line: %q", out)
	}
	n, err := strconv.Atoi(fields[1])
	if err != nil {
		t.Fatalf("status line %q: %v", line, err)
	}
	return n
}

// replay parses a curl command of ours and sends it with net/http.
func replay(t *testing.T, cmd string, env map[string]string) int {
	t.Helper()
	words, err := shellSplit(cmd, fixtureEnv(env))
	if err != nil {
		t.Fatalf("parse %s: %v", cmd, err)
	}
	method, target := "GET", ""
	var body *string
	h := http.Header{}
	for i := 1; i < len(words); i++ {
		switch w := words[i]; w {
		case "-sS", "-i", "-N":
		case "--max-time":
			i++
		case "-X":
			i++
			method = words[i]
		case "-H":
			i++
			name, value, _ := strings.Cut(words[i], ":")
			if value = strings.TrimPrefix(value, " "); value == "" {
				h[name] = []string{} // curl -H 'Name:' removes the header
			} else {
				h.Add(name, value)
			}
		case "--data-raw":
			i++
			body = &words[i]
		default:
			if strings.HasPrefix(w, "-") {
				t.Fatalf("replay: unknown option %s", w)
			}
			target = w
		}
	}
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(*body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range h {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("replay %s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func fixtureEnv(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// shellSplit splits a command the way bash would for the quoting our curl
// commands use: '...', "..." with $NAME, $'...' with escapes, and
// backslash-newline between words.
func shellSplit(s string, env func(string) string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	r := bufio.NewReader(strings.NewReader(s))
	next := func() (rune, bool) {
		c, _, err := r.ReadRune()
		return c, err == nil
	}
	for {
		c, ok := next()
		if !ok {
			break
		}
		switch {
		case c == '\\':
			if d, ok := next(); ok && d != '\n' {
				cur.WriteRune(d)
				inWord = true
			}
		case c == ' ' || c == '\n' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			inWord = true
			for {
				d, ok := next()
				if !ok {
					return nil, fmt.Errorf("unterminated '")
				}
				if d == '\'' {
					break
				}
				cur.WriteRune(d)
			}
		case c == '"':
			inWord = true
			var name strings.Builder
			for {
				d, ok := next()
				if !ok {
					return nil, fmt.Errorf("unterminated \"")
				}
				if d == '"' {
					break
				}
				name.WriteRune(d)
			}
			m := guardedRef.FindStringSubmatch(name.String())
			if m == nil {
				return nil, fmt.Errorf("double quotes hold %q, want one ${INVOKECONF_...:?export it first}", name.String())
			}
			cur.WriteString(env(m[1]))
		case c == '$':
			inWord = true
			if d, ok := next(); !ok || d != '\'' {
				return nil, fmt.Errorf("bare $ outside quotes")
			}
			for {
				d, ok := next()
				if !ok {
					return nil, fmt.Errorf("unterminated $'")
				}
				if d == '\'' {
					break
				}
				if d != '\\' {
					cur.WriteRune(d)
					continue
				}
				e, _ := next()
				switch e {
				case 'n':
					cur.WriteByte('\n')
				case 'x':
					hex := make([]byte, 2)
					for i := range hex {
						b, _ := r.ReadByte()
						hex[i] = b
					}
					v, err := strconv.ParseUint(string(hex), 16, 8)
					if err != nil {
						return nil, err
					}
					cur.WriteByte(byte(v))
				default:
					cur.WriteRune(e)
				}
			}
		default:
			inWord = true
			cur.WriteRune(c)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
