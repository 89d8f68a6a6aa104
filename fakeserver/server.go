// Package fakeserver is the reference implementation of the Agent Invoke
// Service: every rule of the spec, in memory, on any listener. It is the
// embedded default target of the harness and a local stand-in for developers.
//
// Each file holds one area of the spec (auth.go: Authentication, invoke.go:
// Invoke routes, deliver.go: response forms and SSE framing, followup.go:
// follow-up routes, project.go: the project variant, tools.go: a run's tools
// from scoped tools, run modes and credential scopes, research.go: the
// research tool and its run-time cap). A rule's code can be found by searching
// its ID. The agent runs on a Model (model.go): the prompt interpreted in
// process (run.go), or a remote OpenAI-compatible model (remote.go,
// Config.ModelURL).
//
// Defect switches (Config.Defects) each turn on one realistic deviation from
// one rule, so the harness can show that it catches it. Both they and the
// variant switches can be changed at run time (admin.go: SetSwitches, Reset,
// Requests, and the admin routes behind Config.AdminKey), each request
// keeping the set it started with (its view). A switch acts as a row of a
// rewrite table, when it only changes a value the server reads or writes
// (rewrite.go), or as a case in the policy function that makes the decision
// it bends (threadFor, responseForm, ...); route handlers consult none.
package fakeserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/invokeconf/invokeconf/profile"
)

// Config configures a Server.
type Config struct {
	// Profile seeds the server: its keys, agents and projects (see seed.go for
	// what each role stands for). Its BaseURL is ignored.
	Profile *profile.Profile
	// Defects names the defect switches to turn on (see Defects).
	Defects []string
	// Variants names the variant switches to turn on (see Variants): legal
	// behaviours the reference does not use by default.
	Variants []string
	// Keepalive is the quiet time after which an SSE stream gets a ": ping"
	// comment. Zero means the spec's 20 seconds.
	Keepalive time.Duration
	// MaxBody bounds a request body. Zero means 1 MiB.
	MaxBody int64
	// ResearchLimit caps the run time of a run with the research tool
	// (X-SVC-Run-Mode: research). Zero means the spec's 30 minutes.
	ResearchLimit time.Duration
	// ReadTimeout bounds reading a request, body included, when the server
	// runs on its own listener (Listen); an answer that takes long (an SSE
	// stream) is not cut by it. Zero means httpserve.DefaultReadTimeout.
	ReadTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that has had no request
	// for this long (Listen). Zero means httpserve.DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxThreads bounds the threads kept for invokes (default
	// DefaultMaxThreads). Beyond it the least recently used thread with no
	// run in progress is forgotten, with its runs and events; a forgotten
	// thread answers 404 like an unknown one. Threads of installed bundles
	// are not counted.
	MaxThreads int
	// MaxRetainedBytes bounds the prompts those threads' runs keep, summed
	// (default DefaultMaxRetainedBytes); beyond it threads are forgotten in
	// the same order. A run's events are in proportion to its prompt.
	MaxRetainedBytes int64
	// MaxRunsPerThread bounds the runs a thread keeps (default
	// DefaultMaxRunsPerThread); its oldest finished runs beyond it are
	// forgotten (their events are 404, and a remote model no longer sees
	// them as history), except its last completed run.
	MaxRunsPerThread int
	// Logger receives one line per request; a key appears in it only as its
	// ID (<user>-<key>), never any part of its secret. Nil discards.
	Logger *slog.Logger
	// ModelURL, when set, is the base URL of an OpenAI-compatible
	// chat-completions API (such as `invokeconf model`, .../v1) that the
	// agent runs on. Empty: the prompt is interpreted in process.
	ModelURL string
	// ModelName is the model asked for at ModelURL; "" means
	// modelserver.DefaultModel.
	ModelName string
	// AdminKey, when set, opens the admin routes under AdminPrefix
	// (admin.go) to requests with Authorization: Bearer AdminKey. It can
	// never be a service key: New refuses one of the profile's keys or any
	// token of the sk-svc- shape. Empty: the admin routes do not exist.
	AdminKey string
	// RecentRequests bounds the requests the server remembers for the
	// admin route .../requests and Server.Requests (default
	// DefaultRecentRequests).
	RecentRequests int
}

// Spec limits.
const (
	DefaultKeepalive = 20 * time.Second // Limits: keepalive
	DefaultMaxBody   = 1 << 20
)

// Server is the reference implementation. It is an http.Handler.
//
// Each request is served by a view of the server (view), which fixes the
// switch set and the store in force when the request started.
type Server struct {
	cfg   Config
	mux   *http.ServeMux
	log   *slog.Logger
	model Model // what the agent runs on (model.go)
	ctl   *control

	// ctx bounds every run; Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc
}

// New builds a server seeded from cfg.Profile.
func New(cfg Config) (*Server, error) {
	if cfg.Profile == nil {
		return nil, fmt.Errorf("fakeserver: no profile to seed from")
	}
	if cfg.Keepalive == 0 {
		cfg.Keepalive = DefaultKeepalive
	}
	if cfg.MaxBody == 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.ResearchLimit == 0 {
		cfg.ResearchLimit = DefaultResearchLimit
	}
	defects, err := resolveDefects(cfg.Defects)
	if err != nil {
		return nil, err
	}
	variants, err := resolveVariants(cfg.Variants)
	if err != nil {
		return nil, err
	}
	if err := checkAdminKey(cfg.AdminKey, cfg.Profile); err != nil {
		return nil, err
	}
	if variants[varUUIDSeedIDs] {
		cfg.Profile = reseedUUIDs(cfg.Profile)
	}
	if variants[varServiceTool] {
		cfg.Profile = withServiceTool(cfg.Profile)
	}
	st, err := seedStore(cfg)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var model Model = scriptModel{}
	if cfg.ModelURL != "" {
		if model, err = newRemoteModel(cfg.ModelURL, cfg.ModelName); err != nil {
			return nil, fmt.Errorf("fakeserver: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	start := switchSet{defects: defects, variants: variants}.sealed()
	ctl := &control{startUp: start, recent: newRequestRing(orDefault(cfg.RecentRequests, DefaultRecentRequests))}
	ctl.switches.Store(start)
	ctl.store.Store(st)
	s := &Server{cfg: cfg, log: log, model: model, ctl: ctl, ctx: ctx, cancel: cancel}
	s.routes()
	return s, nil
}

// seedStore builds a store from cfg's profile, with cfg's retention bounds.
func seedStore(cfg Config) (*store, error) {
	st, err := seed(cfg.Profile)
	if err != nil {
		return nil, fmt.Errorf("fakeserver: seed: %w", err)
	}
	st.keep = retention{threads: orDefault(cfg.MaxThreads, DefaultMaxThreads),
		bytes: orDefault(cfg.MaxRetainedBytes, DefaultMaxRetainedBytes), runs: orDefault(cfg.MaxRunsPerThread, DefaultMaxRunsPerThread)}
	return st, nil
}

// view is the server as one request sees it: the switch set and the store
// in force when the request started, fixed for the request and whatever it
// starts, so that a switch turned (SetSwitches) or a reset (Reset) while it
// runs changes nothing of it, or of the run it starts, down to the last
// frame of a hijacked SSE stream. Everything else is the server's, shared.
// The methods that serve a request are the view's; their receiver is named
// s, the server as that request sees it.
type view struct {
	*Server
	sw *switchSet
	st *store
}

// view returns the server as a request starting now sees it.
func (s *Server) view() view {
	return view{Server: s, sw: s.ctl.switches.Load(), st: s.ctl.store.Load()}
}

// defect reports whether a defect switch is on.
func (s *view) defect(d defectID) bool { return s.sw.defects[d] }

// variant reports whether a variant switch is on.
func (s *view) variant(v variantID) bool { return s.sw.variants[v] }

// exchange is one request being served: its view of the server, the status
// its answer went out with, and the one record the request log gets of it.
// It is the ResponseWriter the routes get (under the header variants'
// writer), so a handler finds its view through the writer it writes to
// (exchangeIn), as net/http's own wrappers are found, and a request costs
// no context of its own. The view is a value of its own, not part of the
// exchange: a run or a stream the request starts keeps the view, and must
// not keep the exchange's writer (net/http's response, and the buffers of
// its connection) for as long as it lasts.
type exchange struct {
	v      *view
	w      http.ResponseWriter // the connection's
	status int
	start  time.Time
	once   sync.Once
}

// Header implements http.ResponseWriter.
func (x *exchange) Header() http.Header { return x.w.Header() }

// WriteHeader implements http.ResponseWriter, and records the status.
func (x *exchange) WriteHeader(code int) {
	if x.status == 0 {
		x.status = code
	}
	x.w.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (x *exchange) Write(b []byte) (int, error) {
	if x.status == 0 {
		x.status = http.StatusOK
	}
	return x.w.Write(b)
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (x *exchange) Unwrap() http.ResponseWriter { return x.w }

// exchangeIn returns the exchange w writes to, nil for a writer ServeHTTP
// did not make.
func exchangeIn(w http.ResponseWriter) *exchange {
	for w != nil {
		if x, ok := w.(*exchange); ok {
			return x
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
	return nil
}

// Close cancels every run still going. It does not close listeners.
func (s *Server) Close() { s.cancel() }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isAdminPath(r.URL.Path) && s.cfg.AdminKey != "" {
		s.serveAdmin(w, r)
		return
	}
	v := s.view()
	x := &exchange{v: &v, w: w, start: time.Now()}
	s.mux.ServeHTTP(x.v.headerVariants(x), r)
	x.logged(r, x.status)
}

// logged logs the request once, with its status.
func (x *exchange) logged(r *http.Request, status int) {
	x.once.Do(func() {
		v, s, start := x.v, x.v.Server, x.start
		elapsed := time.Since(start)
		key := v.keyIDForLog(r.Header.Get("Authorization"))
		s.ctl.recent.add(v, r, status, key, start, elapsed)
		if s.log.Enabled(r.Context(), slog.LevelInfo) {
			s.log.Info("request", "method", v.hideKeys(r.Method), "path", v.hideKeys(r.URL.Path), "status", status,
				"key", key, "elapsed", elapsed.Round(time.Millisecond))
		}
	})
}

// logNow logs r, answered through w, with its status at once, before its
// answer ends: a stream written on a connection taken over may reach its
// end at the client before its handler returns, and a client that then
// reads the recent requests must find it there.
func logNow(w http.ResponseWriter, r *http.Request, status int) {
	if x := exchangeIn(w); x != nil {
		x.logged(r, status)
	}
}

// route is one entry of the route table: a net/http pattern and its handler.
type route struct {
	pattern string
	handle  func(*view, http.ResponseWriter, *http.Request)
}

// routeTable lists every route the server answers, in the order of the
// spec's Endpoints section, then the bundle extension routes
// (docs/bundles.md). Anything else is 404.
var routeTable = []route{
	// Invoke routes (invoke.go, project.go).
	{"POST /api/invoke/{id}", (*view).handleInvoke},
	{"POST /api/invoke/{id}/thread/{thread}", (*view).handleInvoke},
	{"POST /api/invoke/{id}/threads/{thread}", (*view).handleInvoke},
	{"POST /api/projects/{project_id}/invoke", (*view).handleProjectInvoke},
	{"POST /api/projects/{project_id}/invoke/thread/{thread_id}", (*view).handleProjectInvoke},
	// Follow-up routes for async runs (followup.go).
	{"GET /api/threads/{id}/events", (*view).handleEvents},
	{"POST /api/threads/{id}/abort", (*view).handleAbort},
	{"GET /api/threads/{id}", (*view).handleThread},
	// Bundle routes (bundle.go, bundle_export.go).
	{"GET /api/assistants/{assistant_id}/projects/{project_id}/bundle", (*view).handleExport},
	{"DELETE /api/bundles/installations/{id}", (*view).handleUninstall},
	{"DELETE /api/tasks/{id}", (*view).handleDeleteTask},
	// Bundle extension routes (docs/bundles.md).
	{"POST /api/bundles/installations", (*view).handleInstall},
	{"GET /api/bundles/installations", (*view).handleInstallations},
	{"GET /api/bundles/installations/{id}", (*view).handleInstallation},
	{"PUT /api/bundles/installations/{id}", (*view).handleUpdate},
}

func (s *Server) routes() {
	m := http.NewServeMux()
	for _, rt := range routeTable {
		m.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) { rt.handle(s.viewOf(w), w, r) })
	}
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { s.viewOf(w).noRoute(w, r) })
	s.mux = m
}

// viewOf returns the view the request answered through w is served with:
// its exchange's, or, for one that did not come through ServeHTTP, the
// server as it is now.
func (s *Server) viewOf(w http.ResponseWriter) *view {
	if x := exchangeIn(w); x != nil {
		return x.v
	}
	v := s.view()
	return &v
}

func orDefault[T int | int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// keyIDForLog names the key of a request for the log: its ID
// ("<user>-<key>") when the token has a key's shape and the ID is known,
// else a word for what was sent. No part of a token is logged unless it is a
// known key ID, so a secret never reaches the log, whatever surrounds it.
func (s *view) keyIDForLog(auth string) string {
	if auth == "" {
		return "none"
	}
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		return "not-bearer"
	}
	parts, err := parseKey(tok)
	if err != nil {
		return "malformed"
	}
	id := parts.user + "-" + parts.key
	k := s.st.keys[id] // fixed since seeding: no lock
	if k == nil {
		return "unknown"
	}
	return k.id
}
