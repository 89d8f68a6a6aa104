// Package steps holds the godog step definitions. They drive any target
// described by a profile: every path, key and ID comes from the profile by
// role, never from the reference server.
//
// One World lives per scenario. Steps are grouped by spec area in files named
// like the features they serve (sse.go for sse.feature, ...).
package steps

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/internal/lateness"
	"github.com/invokeconf/invokeconf/internal/safetext"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/transcript"
)

// Deadlines. Every network read is bounded by one of them, so a target that
// hangs fails its scenario, never the run.
const (
	// DefaultDeadline bounds one request and its whole response.
	DefaultDeadline = 15 * time.Second
	// SlowDeadline bounds the requests of @slow scenarios (the 20 s keepalive).
	SlowDeadline = 45 * time.Second
)

// World is the state of one scenario.
type World struct {
	// shared is the run's (Suite.run); scenario names the one running.
	shared   *shared
	scenario Scenario

	P        *profile.Profile
	client   *http.Client
	ctx      context.Context
	deadline time.Duration
	tags     []string
	redact   func() *profile.Redactor

	// Request being prepared.
	keyRole   string            // "" with noKey: no Authorization
	noKey     bool              // send no Authorization header
	rawAuth   *string           // an Authorization value given literally
	headers   map[string]string // extra request headers, sent exactly
	noHeaders map[string]bool   // headers to leave out

	// Results.
	resp *Response // last response

	threads map[string]string // name -> thread ID
	// madeBy is, per thread ID a set-up run opened, the rule of the route
	// that opened it: a run on that thread runs the agent it was opened
	// with, so a wrong agent there may be the opening route's fault.
	madeBy map[string]string
	// chosenBy is, per run ID of an async start, the rules its thread was
	// chosen by (threadRules): what the thread reports of the run rests
	// on them.
	chosenBy map[string][]string
	// asyncStart is, per run ID of an async start, the call that started
	// it: when it was sent and its script.
	asyncStart map[string]*Response
	runs       map[string]string // name -> run ID
	markers    map[string]string // name -> unique text

	// lastPrompt is the last prompt sent, expanded (prompt).
	lastPrompt string
	// abortStatus is the status of the abort sent mid-stream
	// (invokeAndAbort); 0 before it. abortResp is its answer.
	abortStatus int
	abortResp   *Response
	// hist is what the scenario's exchanges showed, for the checks over
	// several exchanges (bridge.go); histMu guards it, since a step may
	// send requests at once (each remembers its exchange).
	hist   checks.History
	histMu sync.Mutex

	// firstErr is the first step error of the scenario; failedLast says
	// the step that made it is the scenario's last one.
	firstErr   error
	failedLast bool
	// stepChecked are the rules the running step's checks passed (decide);
	// checked are those of the steps that passed, with the rule each
	// asserts (Def.Rule): what the scenario checked in full.
	stepChecked, checked []string
	// echoSent: a prompt without directives was sent (capabilities.go).
	echoSent bool

	// answers are the responses the scenario remembered by name (tools.go).
	answers map[string]*Response
	// orphans is true once an update left an orphaned child (bundle.go).
	orphans bool
	// lastSelection are the rules by which the last invoke that named a
	// thread chose it (selectionRules): a follow-up on that thread rests
	// on them.
	lastSelection []string
	// bundleWorld is the state of the bundle steps (bundle.go).
	bundleWorld

	// threadCells is, per thread, the cell of the run the scenario last
	// made on it (cell.go); aborting says the next invoke's run is
	// aborted by the scenario.
	threadCells map[string]checks.Cell
	aborting    bool
	// lastCell is the cell of the last invoke the scenario made: where its
	// own rules were judged when it passes. cellNamedBy is the rule by
	// which the cell's run named its thread (cells.go), cellSelectedBy the
	// rules by which its request chose one (the thread-ID routes, the
	// X-SVC-Thread-Id header).
	lastCell       *checks.Cell
	cellNamedBy    string
	cellSelectedBy []string
	// startedBy is, for an answer of the events route that a cell step
	// read a run's tools from, the invoke that started the run: what the
	// run had rests on that request's route, key and headers.
	startedBy map[*Response]*Response
	cellMu    sync.Mutex

	mu         sync.Mutex
	transcript []Exchange
	// views are the scenario's exchanges as the run judges them, in the
	// order they ended (holdsEveryRule).
	views []*checks.View
}

// Exchange is one request and its response, as a report shows it. It
// lives in the leaf package transcript, so reports need not import steps.
type Exchange = transcript.Exchange

// maxTranscriptBody bounds the bytes of one body kept in a transcript.
const maxTranscriptBody = 16 << 10

// reset prepares the World for a new scenario.
func (w *World) reset(ctx context.Context, p *profile.Profile, client *http.Client, tags []string) {
	lateness.Start() // timing checks read the harness's own stalls (Response.Exchange)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.shared == nil {
		w.shared = newShared(nil) // a World made outside a Suite (tests)
	}
	w.P, w.client, w.ctx, w.tags = p, client, ctx, tags
	w.redact = sync.OnceValue(p.Redactor) // made when a text is first cut: most worlds (planning's) never do
	w.deadline = DefaultDeadline
	for _, t := range tags {
		if t == "@slow" {
			w.deadline = SlowDeadline
		}
	}
	w.keyRole, w.noKey, w.rawAuth = "", false, nil
	w.headers, w.noHeaders = map[string]string{}, map[string]bool{}
	w.resp = nil
	w.threads, w.runs, w.madeBy = map[string]string{}, map[string]string{}, map[string]string{}
	w.chosenBy, w.asyncStart = map[string][]string{}, map[string]*Response{}
	w.markers = map[string]string{}
	w.lastPrompt, w.abortStatus, w.abortResp = "", 0, nil
	w.hist = checks.History{}
	w.transcript, w.views, w.firstErr, w.failedLast = nil, nil, nil, false
	w.stepChecked, w.checked = nil, nil
	w.echoSent = false
	w.answers, w.orphans, w.lastSelection = map[string]*Response{}, false, nil
	w.threadCells, w.aborting, w.lastCell = map[string]checks.Cell{}, false, nil
	w.startedBy = map[*Response]*Response{}
	w.bundleWorld = bundleWorld{w: w}
	w.bundleWorld.reset()
}

// release lets go of what the scenario read (its responses, the answers it
// remembered, its history, transcript and bundle records) once the
// Observer has its transcript: a World stays reachable from its scenario's
// step closures until the run ends, and a hostile target's answers are
// up to MaxBody each.
func (w *World) release() {
	w.mu.Lock()
	w.resp, w.abortResp, w.answers, w.transcript, w.views = nil, nil, nil, nil, nil
	w.startedBy = nil
	w.bundleWorld = bundleWorld{w: w}
	w.mu.Unlock()
	w.histMu.Lock()
	w.hist = checks.History{}
	w.histMu.Unlock()
}

// Transcript returns the scenario's exchanges. Every key in them is
// replaced by a reference to its environment variable
// ($INVOKECONF_KEYS_AGENT), so a report can turn an exchange into a curl
// command that works once the variables are set; every piece of a key's
// secret is hidden, and the target's bytes are made safe to show
// (safetext.Clean).
func (w *World) Transcript() []Exchange {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Exchange(nil), w.transcript...)
}

// record keeps an exchange in the transcript, a redacted view of the
// recorded exchange: keys as their variables, redacted before it is cut (a
// cut inside a key would leave a piece that no whole-key redaction
// recognises), bytes made safe to show.
func (w *World) record(r *Response) {
	rd := w.redact()
	e := transcript.Of(r.Exchange, transcript.Options{Cut: rd.Cut, Printable: safetext.Clean, MaxBody: maxTranscriptBody, KeyLen: rd.MaxLen()})
	w.mu.Lock()
	defer w.mu.Unlock()
	w.transcript = append(w.transcript, e)
	w.views = append(w.views, r.judged())
}

// redirectNote says so when the scenario's last answer was a redirect,
// which the harness does not follow (Client): a failure after it is most
// likely about it.
func (w *World) redirectNote() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.transcript) == 0 {
		return ""
	}
	e := w.transcript[len(w.transcript)-1]
	if e.Status < 300 || e.Status > 399 {
		return ""
	}
	return fmt.Sprintf(" (the last answer, to %s %s, was a redirect: %d, Location: %q; the harness follows no redirect)",
		e.Method, e.URL, e.Status, e.RespHeader.Get("Location"))
}

// cleanText redacts s, cuts it to n bytes and makes it safe to show.
func (w *World) cleanText(s string, n int) string {
	return safetext.Clean(w.redact().Cut(s, n, " [... cut]"))
}

// need turns a profile gap into an untested error and passes others through.
func need(err error) error {
	var m *profile.MissingError
	if errors.As(err, &m) {
		return &untested{reason: m.Error()}
	}
	return err
}

// role is the key role the scenario's next request carries: "" for no
// key or an Authorization value given literally.
func (w *World) role() string {
	if w.rawAuth != nil || w.noKey {
		return ""
	}
	return w.keyRole
}

// authorization returns the Authorization value the next request carries, or
// "" for none.
func (w *World) authorization() (string, error) {
	switch {
	case w.rawAuth != nil:
		return *w.rawAuth, nil
	case w.noKey || w.keyRole == "":
		return "", nil
	}
	k, err := w.P.Key(w.keyRole)
	if err != nil {
		return "", need(err)
	}
	return "Bearer " + k, nil
}

var placeholder = regexp.MustCompile(`\$\{([A-Za-z0-9_.:-]+)\}`)

// expand replaces ${...} placeholders with values from the profile and the
// scenario: ${agents.main.id}, ${agents.main.alias}, ${agents.main.plainTool}
// (a tool of the main agent that needs no credential), ${projects.main.id},
// ${nonAgentID}, ${unknownID} (an ID that exists nowhere), ${thread:NAME},
// ${run:NAME}, ${marker:NAME} (a unique token, the same for one NAME within
// a scenario) and ${escaped:NAME} (that token written as \x escapes);
// toolPlaceholder (tools.go) adds tool lists, the project's tasks,
// credentials and model. A profile gap comes back as an untested
// error (need), so callers return the error as it is.
func (w *World) expand(s string) (string, error) {
	var firstErr error
	out := placeholder.ReplaceAllStringFunc(s, func(m string) string {
		v, err := w.lookup(placeholder.FindStringSubmatch(m)[1])
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return v
	})
	return out, need(firstErr)
}

func (w *World) lookup(name string) (string, error) {
	kind, arg, hasArg := strings.Cut(name, ":")
	if hasArg {
		switch kind {
		case "thread":
			return w.thread(arg)
		case "run":
			return w.run(arg)
		case "marker":
			return w.marker(arg), nil
		case "escaped":
			// The marker as \x escapes, for a quoted @say: the agent's
			// output holds the marker while the prompt (which a service may
			// echo in an input event) does not.
			var b strings.Builder
			for _, c := range []byte(w.marker(arg)) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
			return b.String(), nil
		}
		return "", scenarioErrorf("unknown placeholder ${%s}", name)
	}
	switch name {
	case "nonAgentID":
		if w.P.NonAgentID == "" {
			return "", need(&profile.MissingError{What: "nonAgentID"})
		}
		return w.P.NonAgentID, nil
	case "unknownID":
		return w.marker("unknownID"), nil
	case "projects.main.id":
		if w.P.Projects.Main.ID == "" {
			return "", need(&profile.MissingError{What: "projects.main.id"})
		}
		return w.P.Projects.Main.ID, nil
	}
	parts := strings.Split(name, ".")
	if len(parts) == 3 && parts[0] == "agents" {
		a, err := w.P.Agent(parts[1])
		if err != nil {
			return "", need(err)
		}
		switch parts[2] {
		case "id":
			return a.ID, nil
		case "alias":
			if a.Alias == "" {
				return "", need(&profile.MissingError{What: "agents." + parts[1] + ".alias"})
			}
			return a.Alias, nil
		case "plainTool":
			for _, t := range a.Tools {
				if _, gated := a.CredentialTools[t]; !gated {
					return t, nil
				}
			}
			return "", need(&profile.MissingError{What: "a tool of agents." + parts[1] + " that uses no credential"})
		}
	}
	// The tool area's placeholders (tools.go). A placeholder that lacks a
	// profile field answers need(&profile.MissingError{...}): that is how
	// its needs are found before a run (PlaceholderNeeds).
	if v, ok, err := toolPlaceholder(w, name); ok {
		return v, err
	}
	return "", scenarioErrorf("unknown placeholder ${%s}", name)
}

// marker returns the unique token for a name.
func (w *World) marker(name string) string {
	if v, ok := w.markers[name]; ok {
		return v
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	v := "m" + hex.EncodeToString(b[:])
	if name == "unknownID" {
		v = "zz_unknown_" + hex.EncodeToString(b[:])
	}
	w.markers[name] = v
	return v
}
