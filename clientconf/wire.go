package clientconf

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http/httputil"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/internal/safetext"
	"github.com/invokeconf/invokeconf/invokeconftest"
	"github.com/invokeconf/invokeconf/profile"
)

// What a variant changes on the wire: one small exchange (a probe), made
// against a server with the variant on and against the default server,
// read byte for byte over a plain TCP connection (so header case and line
// endings show), with the values that differ on every run (IDs, times)
// masked by their shape, and diffed line by line.

// Wire is the example of a variant: the lines of one exchange that differ
// from the default server's.
type Wire struct {
	// Probe says what was sent.
	Probe string `json:"probe"`
	// Lines are the differing lines: Op "-" the default server's, "+" the
	// variant's; line endings are shown as \r and \n.
	Lines []DiffLine `json:"lines,omitempty"`
	// Note says why there are no lines, or how many were left out.
	Note string `json:"note,omitempty"`
}

// DiffLine is one line of a Wire.
type DiffLine struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// probeKeepalive is the probe servers' keepalive: short, so that the probe
// sse-ping sees one ping in its 300 ms pause.
const probeKeepalive = 200 * time.Millisecond

// maxWireLines bounds the lines a Wire shows.
const maxWireLines = 14

// variantProbes names the probe that shows each variant; a variant not
// listed is shown by "sse". TestEveryVariantShowsOnTheWire fails for a
// variant whose probe shows no difference, unless timingOnly says why.
var variantProbes = map[string]string{
	"async-202":                  "async",
	"async-ack-extra-members":    "async",
	"extra-members":              "json",
	"plain-flush-timer":          "plain",
	"pauses-overrun":             "plain",
	"ping-lone-line":             "sse-ping",
	"signals-when-slow":          "sse-waiting",
	"prompt-waits":               "sse-ask",
	"service-tool":               "sse-tools",
	"hidden-thread-404":          "hidden-thread",
	"problem-extra-members":      "error",
	"problem-error-message":      "error",
	"abort-204":                  "abort",
	"scoped-tools-unknown-400":   "scoped-unknown",
	"events-latest-waits":        "events-latest",
	"bundle-integer-ids":         "install",
	"install-log-thread":         "install",
	"removed-installation-410":   "uninstalled",
	"failed-install-problem":     "install-fails",
	"interrupt-drops-connection": "update-interrupted",
	"update-rewrites-project":    "update-same",
	"export-2xx":                 "export",
	"child-type-assistant":       "export",
	"export-payload-list":        "export",
}

// timingOnly are the variants that change when bytes come, not which.
var timingOnly = map[string]string{
	"plain-flush-timer": "the bytes are the same; the plain text comes in one piece after up to 500 ms instead of as each fragment is made",
	"pauses-overrun":    "the bytes are the same; each pause of the agent's script lasts half as long again",
}

// probe is one small exchange (after any setup requests).
type probe struct {
	what string
	do   func(c *prober) (string, error)
}

var probes = map[string]probe{
	"sse": {"POST /api/invoke/{agents.main.id}, Accept: text/event-stream, prompt \"@say Hello\"",
		func(c *prober) (string, error) { return c.invoke("", sse, "@say Hello", 0) }},
	"sse-ping": {"POST /api/invoke/{agents.main.id}, Accept: text/event-stream, prompt \"@say Hello / @pause 300ms / @say again\" (keepalive 200 ms)",
		func(c *prober) (string, error) { return c.invoke("", sse, "@say Hello\n@pause 300ms\n@say again", 0) }},
	"sse-waiting": {"POST /api/invoke/{agents.main.id}, Accept: text/event-stream, prompt \"@waiting / @say Hello\"",
		func(c *prober) (string, error) { return c.invoke("", sse, "@waiting\n@say Hello", 0) }},
	"sse-ask": {"POST /api/invoke/{agents.main.id}, Accept: text/event-stream, prompt \"@ask fields=code Paste the code / @say thanks\", read for at most 1 s",
		func(c *prober) (string, error) {
			return c.invoke("", sse, "@ask fields=code Paste the code\n@say thanks", time.Second)
		}},
	"sse-tools": {"POST /api/invoke/{agents.main.id}, Accept: text/event-stream, prompt \"@tools\"",
		func(c *prober) (string, error) { return c.invoke("", sse, "@tools", 0) }},
	"json": {"POST /api/invoke/{agents.main.id}, Accept: application/json, prompt \"@say Hello\"",
		func(c *prober) (string, error) { return c.invoke("", jsonAccept, "@say Hello", 0) }},
	"plain": {"POST /api/invoke/{agents.main.id}, no Accept, prompt \"@say Hello / @pause 100ms / @say again\"",
		func(c *prober) (string, error) { return c.invoke("", nil, "@say Hello\n@pause 100ms\n@say again", 0) }},
	"async": {"POST /api/invoke/{agents.main.id}?async=true, prompt \"@say Hello\"",
		func(c *prober) (string, error) { return c.invoke("?async=true", nil, "@say Hello", 0) }},
	"error": {"POST /api/invoke/{agents.main.id} without Authorization",
		func(c *prober) (string, error) {
			return c.exchange("POST", c.agentPath(), "", map[string]string{"Accept": "application/json"}, "Hello", 0)
		}},
	"scoped-unknown": {"POST /api/invoke/{agents.main.id}, Accept: application/json, X-SVC-Scoped-Tools: no-such-tool, prompt \"@tools\"",
		func(c *prober) (string, error) {
			return c.invoke("", map[string]string{"Accept": "application/json", "X-SVC-Scoped-Tools": "no-such-tool"}, "@tools", 0)
		}},
	"abort": {"an async run of \"@pause 2s\", then POST /api/threads/{its thread}/abort",
		func(c *prober) (string, error) {
			thread, err := c.asyncThread("@pause 2s\n@say late")
			if err != nil {
				return "", err
			}
			return c.exchange("POST", "/api/threads/"+url.PathEscape(thread)+"/abort", c.p.Keys.Agent, nil, "", 0)
		}},
	"events-latest": {"an async run of \"@pause 400ms / @say later\", then at once GET /api/threads/{its thread}/events, Accept: application/json, no runID",
		func(c *prober) (string, error) {
			thread, err := c.asyncThread("@pause 400ms\n@say later")
			if err != nil {
				return "", err
			}
			return c.exchange("GET", "/api/threads/"+url.PathEscape(thread)+"/events", c.p.Keys.Agent, jsonAccept, "", 0)
		}},
	"hidden-thread": {"a thread of agents.restricted, then POST /api/invoke/{that thread} with the key wildcardLimited (its owner cannot open the agent)",
		func(c *prober) (string, error) {
			first, err := c.exchange("POST", "/api/invoke/"+url.PathEscape(c.p.Agents.Restricted.ID), c.p.Keys.Wildcard, jsonAccept, "Hello", 0)
			if err != nil {
				return "", err
			}
			thread := headerValue(first, "X-SVC-Thread-Id")
			if thread == "" {
				return "", fmt.Errorf("no thread in the answer:\n%s", first)
			}
			return c.exchange("POST", "/api/invoke/"+url.PathEscape(thread), c.p.Keys.WildcardLimited, jsonAccept, "Hello", 0)
		}},
	"export": {"GET /api/assistants/{bundles.export.agentID}/projects/{bundles.export.projectID}/bundle",
		func(c *prober) (string, error) {
			e := c.p.Bundles.Export
			return c.exchange("GET", "/api/assistants/"+url.PathEscape(e.AgentID)+"/projects/"+url.PathEscape(e.ProjectID)+"/bundle", c.p.Keys.Bundles, nil, "", 0)
		}},
	"install": {"POST /api/bundles/installations with fixtures/bundles/minimal.yaml",
		func(c *prober) (string, error) { return c.install("minimal.yaml") }},
	"install-fails": {"POST /api/bundles/installations with fixtures/bundles/fails-child.yaml (a child fails to install)",
		func(c *prober) (string, error) { return c.install("fails-child.yaml") }},
	"uninstalled": {"install fixtures/bundles/minimal.yaml, uninstall it, then GET its record",
		func(c *prober) (string, error) {
			id, err := c.installed("minimal.yaml")
			if err != nil {
				return "", err
			}
			rec := "/api/bundles/installations/" + url.PathEscape(id)
			if _, err := c.exchange("DELETE", rec, c.p.Keys.Bundles, nil, "", 0); err != nil {
				return "", err
			}
			return c.exchange("GET", rec, c.p.Keys.Bundles, nil, "", 0)
		}},
	"update-same": {"install fixtures/bundles/minimal.yaml, then PUT the same document to its record",
		func(c *prober) (string, error) {
			id, err := c.installed("minimal.yaml")
			if err != nil {
				return "", err
			}
			return c.exchange("PUT", "/api/bundles/installations/"+url.PathEscape(id), c.p.Keys.Bundles, yamlType, c.document("minimal.yaml"), 0)
		}},
	"update-interrupted": {"install fixtures/bundles/desk-v1.yaml, then PUT desk-v2-resume.yaml (its agent stops the first update: interruptOnce)",
		func(c *prober) (string, error) {
			id, err := c.installed("desk-v1.yaml")
			if err != nil {
				return "", err
			}
			return c.exchange("PUT", "/api/bundles/installations/"+url.PathEscape(id), c.p.Keys.Bundles, yamlType, c.document("desk-v2-resume.yaml"), 0)
		}},
}

var (
	sse        = map[string]string{"Accept": "text/event-stream"}
	jsonAccept = map[string]string{"Accept": "application/json"}
	yamlType   = map[string]string{"Content-Type": "application/yaml"}
)

// probeTimeout bounds one exchange of a probe.
const probeTimeout = 10 * time.Second

// maxProbeAnswer bounds what is read of one answer.
const maxProbeAnswer = 64 << 10

// prober makes the exchanges of a probe against one server.
type prober struct {
	base string // host:port
	p    *profile.Profile
}

func (c *prober) agentPath() string { return "/api/invoke/" + url.PathEscape(c.p.Agents.Main.ID) }

// invoke posts a prompt to the main agent with its key.
func (c *prober) invoke(query string, hdr map[string]string, prompt string, readFor time.Duration) (string, error) {
	return c.exchange("POST", c.agentPath()+query, c.p.Keys.Agent, hdr, prompt, readFor)
}

// asyncThread starts an async run and returns its thread.
func (c *prober) asyncThread(prompt string) (string, error) {
	t, err := c.invoke("?async=true", nil, prompt, 0)
	if err != nil {
		return "", err
	}
	var ack struct{ ThreadID string }
	if json.Unmarshal([]byte(bodyOf(t)), &ack); ack.ThreadID == "" {
		return "", fmt.Errorf("no threadID in the async answer:\n%s", t)
	}
	return ack.ThreadID, nil
}

// document returns a bundle fixture with its markers filled.
func (c *prober) document(name string) string {
	b, err := fixtures.BundleDocument(name)
	if err != nil {
		return ""
	}
	return strings.ReplaceAll(string(b), "${marker:b}", "probe")
}

func (c *prober) install(name string) (string, error) {
	return c.exchange("POST", "/api/bundles/installations", c.p.Keys.Bundles, yamlType, c.document(name), 0)
}

// installed installs a fixture and returns the installation's ID.
func (c *prober) installed(name string) (string, error) {
	t, err := c.install(name)
	if err != nil {
		return "", err
	}
	var rec struct{ ID any }
	if json.Unmarshal([]byte(bodyOf(t)), &rec); rec.ID == nil {
		return "", fmt.Errorf("no id in the install answer:\n%s", t)
	}
	return fmt.Sprint(rec.ID), nil
}

// exchange sends one request on a connection of its own and returns the
// exchange as text: the request line, then the answer's head as sent and
// its body (de-chunked). readFor > 0 stops reading after that long (a
// stream that may not end); otherwise the answer is read to its end.
func (c *prober) exchange(method, path, key string, hdr map[string]string, body string, readFor time.Duration) (string, error) {
	conn, err := net.DialTimeout("tcp", c.base, probeTimeout)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	deadline := probeTimeout
	if readFor > 0 {
		deadline = readFor
	}
	_ = conn.SetDeadline(time.Now().Add(deadline))
	var req bytes.Buffer
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", method, path, c.base)
	if key != "" {
		fmt.Fprintf(&req, "Authorization: Bearer %s\r\n", key)
	}
	names := make([]string, 0, len(hdr))
	for k := range hdr {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&req, "%s: %s\r\n", k, hdr[k])
	}
	if body != "" || method == "POST" || method == "PUT" {
		if hdr["Content-Type"] == "" {
			req.WriteString("Content-Type: text/plain\r\n")
		}
		fmt.Fprintf(&req, "Content-Length: %d\r\n", len(body))
	}
	req.WriteString("\r\n")
	req.WriteString(body)
	if _, err := conn.Write(req.Bytes()); err != nil {
		return "", err
	}
	raw, err := io.ReadAll(io.LimitReader(conn, maxProbeAnswer))
	if err != nil && !(readFor > 0 && isTimeout(err)) {
		if len(raw) == 0 {
			return "", fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	line := method + " " + path
	if len(raw) == 0 {
		return line + "\n\n(the connection closed without an answer)", nil
	}
	head, rest, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		return line + "\n\n" + string(raw), nil
	}
	if strings.EqualFold(headerValue(string(head), "Transfer-Encoding"), "chunked") {
		rest, _ = io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(rest)))
	}
	return line + "\n\n" + string(head) + "\r\n\r\n" + string(rest), nil
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// headerValue finds a header in an exchange's text, ignoring case.
func headerValue(text, name string) string {
	for _, line := range strings.Split(text, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// bodyOf is the body of an exchange's text.
func bodyOf(text string) string {
	_, b, _ := strings.Cut(text, "\r\n\r\n")
	return b
}

// wireProbes makes the wire examples of a run: each probe once against a
// fresh default server, and against a fresh server per variant (so that
// what one probe leaves behind, such as installations, never shows in
// another's exchange).
type wireProbes struct {
	seed *profile.Profile

	mu       sync.Mutex
	defaults map[string]*cachedProbe
}

type cachedProbe struct {
	once sync.Once
	text string
	err  error
}

func newWireProbes(seed *profile.Profile) *wireProbes {
	return &wireProbes{seed: seed, defaults: map[string]*cachedProbe{}}
}

// defaultText is a probe's exchange with the default server (made once).
func (w *wireProbes) defaultText(name string) (string, error) {
	w.mu.Lock()
	c := w.defaults[name]
	if c == nil {
		c = &cachedProbe{}
		w.defaults[name] = c
	}
	w.mu.Unlock()
	c.once.Do(func() { c.text, c.err = w.probeWith(name) })
	return c.text, c.err
}

// probeWith makes a probe's exchange with a fresh server with the variants
// on.
func (w *wireProbes) probeWith(name string, variants ...string) (string, error) {
	srv, err := invokeconftest.Start(invokeconftest.WithSeed(w.seed), invokeconftest.WithKeepalive(probeKeepalive),
		invokeconftest.WithVariants(variants...))
	if err != nil {
		return "", err
	}
	defer srv.Close()
	u, err := url.Parse(srv.URL)
	if err != nil {
		return "", err
	}
	return probes[name].do(&prober{base: u.Host, p: srv.Profile})
}

// example shows what a variant changes on its probe's exchange.
func (w *wireProbes) example(_ context.Context, variant string) *Wire {
	name := variantProbes[variant]
	if name == "" {
		name = "sse"
	}
	out := &Wire{Probe: probes[name].what}
	def, err := w.defaultText(name)
	if err != nil {
		out.Note = "no example: the default server's exchange failed: " + safetext.Clean(err.Error())
		return out
	}
	got, err := w.probeWith(name, variant)
	if err != nil {
		out.Note = "no example: the exchange with the variant failed: " + safetext.Clean(err.Error())
		return out
	}
	out.Lines = diffLines(lines(mask(def)), lines(mask(got)))
	if n := len(out.Lines); n > maxWireLines {
		out.Note = fmt.Sprintf("%d more differing lines left out", n-maxWireLines)
		out.Lines = out.Lines[:maxWireLines]
	}
	if len(out.Lines) == 0 {
		out.Note = "no byte of this exchange differs"
		if why := timingOnly[variant]; why != "" {
			out.Note = why
		}
	}
	return out
}

// Values that differ on every run, masked by their shape: what a variant
// changes about them (a UUID for a prefixed ID, a number for a string, epoch
// milliseconds for a timestamp) still shows.
var (
	timePattern    = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?`)
	datePattern    = regexp.MustCompile(`(?im)^(date:)[^\r\n]*`)
	prefixedID     = regexp.MustCompile(`\b([a-z]{2,5}_)([0-9a-f]{8,})\b`)
	uuidPattern    = regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	longNumber     = regexp.MustCompile(`\b\d{10,}\b`)
	contentLength  = regexp.MustCompile(`(?im)^(content-length:)\s*\d+`)
	elapsedPattern = regexp.MustCompile(`"(elapsed\w*|durationMs)":\s*[\d.]+`)
)

func mask(s string) string {
	s = datePattern.ReplaceAllString(s, "$1 <date>")
	s = timePattern.ReplaceAllString(s, "<time>")
	s = uuidPattern.ReplaceAllString(s, "<uuid>")
	s = prefixedID.ReplaceAllStringFunc(s, func(m string) string {
		i := strings.IndexByte(m, '_')
		return m[:i+1] + strings.Repeat("x", len(m)-i-1)
	})
	s = longNumber.ReplaceAllStringFunc(s, func(m string) string { return "<" + fmt.Sprint(len(m)) + " digits>" })
	s = contentLength.ReplaceAllString(s, "$1 <n>")
	return elapsedPattern.ReplaceAllString(s, `"$1":<n>`)
}

// lines splits text into lines that keep their ending, shown escaped, so
// CRLF, LF and CR tell apart.
func lines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			out = append(out, safetext.Clean(s))
			break
		}
		end := i + 1
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			end = i + 2
		}
		text := s[:i] + strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s[i:end])
		out = append(out, safetext.Clean(strings.ReplaceAll(text, "\r", `\r`)))
		s = s[end:]
	}
	return out
}

// diffLines returns the lines only a has ("-") and only b has ("+"), in
// order, by a longest common subsequence.
func diffLines(a, b []string) []DiffLine {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out, minus, plus []DiffLine
	// flush writes a run of changes: line by line, default then variant,
	// where both sides changed as many lines (line endings, a field
	// changed on every line), else all of one side then the other.
	flush := func() {
		if len(minus) == len(plus) {
			for k := range minus {
				out = append(out, minus[k], plus[k])
			}
		} else {
			out = append(append(out, minus...), plus...)
		}
		minus, plus = nil, nil
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			flush()
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			minus = append(minus, DiffLine{"-", a[i]})
			i++
		default:
			plus = append(plus, DiffLine{"+", b[j]})
			j++
		}
	}
	flush()
	return out
}
