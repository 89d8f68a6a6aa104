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
// one rule, so the harness can show that it catches it.
package fakeserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/invokeconf/invokeconf/internal/httpserve"
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
}

// Spec limits.
const (
	DefaultKeepalive = 20 * time.Second // Limits: keepalive
	DefaultMaxBody   = 1 << 20
)

// Server is the reference implementation. It is an http.Handler.
type Server struct {
	cfg      Config
	defects  defectSet
	variants variantSet
	st       *store
	mux      *http.ServeMux
	log      *slog.Logger
	model    Model // what the agent runs on (model.go)

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
	if variants[varUUIDSeedIDs] {
		cfg.Profile = reseedUUIDs(cfg.Profile)
	}
	if variants[varServiceTool] {
		cfg.Profile = withServiceTool(cfg.Profile)
	}
	st, err := seed(cfg.Profile)
	if err != nil {
		return nil, fmt.Errorf("fakeserver: seed: %w", err)
	}
	st.keep = retention{threads: orDefault(cfg.MaxThreads, DefaultMaxThreads),
		bytes: orDefault(cfg.MaxRetainedBytes, DefaultMaxRetainedBytes), runs: orDefault(cfg.MaxRunsPerThread, DefaultMaxRunsPerThread)}
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
	s := &Server{cfg: cfg, defects: defects, variants: variants, st: st, log: log, model: model, ctx: ctx, cancel: cancel}
	s.routes()
	return s, nil
}

// Close cancels every run still going. It does not close listeners.
func (s *Server) Close() { s.cancel() }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.log.Enabled(r.Context(), slog.LevelInfo) {
		s.mux.ServeHTTP(s.headerVariants(w), r)
		return
	}
	start := time.Now()
	rec := &httpserve.StatusRecorder{ResponseWriter: w}
	s.mux.ServeHTTP(s.headerVariants(rec), r)
	s.log.Info("request", "method", r.Method, "path", r.URL.Path, "status", rec.Status,
		"key", s.keyIDForLog(r.Header.Get("Authorization")), "elapsed", time.Since(start).Round(time.Millisecond))
}

// route is one entry of the route table: a net/http pattern and its handler.
type route struct {
	pattern string
	handle  func(*Server, http.ResponseWriter, *http.Request)
}

// routeTable lists every route the server answers, in the order of the
// spec's Endpoints section, then the bundle extension routes
// (docs/bundles.md). Anything else is 404.
var routeTable = []route{
	// Invoke routes (invoke.go, project.go).
	{"POST /api/invoke/{id}", (*Server).handleInvoke},
	{"POST /api/invoke/{id}/thread/{thread}", (*Server).handleInvoke},
	{"POST /api/invoke/{id}/threads/{thread}", (*Server).handleInvoke},
	{"POST /api/projects/{project_id}/invoke", (*Server).handleProjectInvoke},
	{"POST /api/projects/{project_id}/invoke/thread/{thread_id}", (*Server).handleProjectInvoke},
	// Follow-up routes for async runs (followup.go).
	{"GET /api/threads/{id}/events", (*Server).handleEvents},
	{"POST /api/threads/{id}/abort", (*Server).handleAbort},
	{"GET /api/threads/{id}", (*Server).handleThread},
	// Bundle routes (bundle.go, bundle_export.go).
	{"GET /api/assistants/{assistant_id}/projects/{project_id}/bundle", (*Server).handleExport},
	{"DELETE /api/bundles/installations/{id}", (*Server).handleUninstall},
	{"DELETE /api/tasks/{id}", (*Server).handleDeleteTask},
	// Bundle extension routes (docs/bundles.md).
	{"POST /api/bundles/installations", (*Server).handleInstall},
	{"GET /api/bundles/installations", (*Server).handleInstallations},
	{"GET /api/bundles/installations/{id}", (*Server).handleInstallation},
	{"PUT /api/bundles/installations/{id}", (*Server).handleUpdate},
}

func (s *Server) routes() {
	m := http.NewServeMux()
	for _, rt := range routeTable {
		m.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) { rt.handle(s, w, r) })
	}
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.problem(w, http.StatusNotFound, "no route %s %s", r.Method, r.URL.Path)
	})
	s.mux = m
}

func orDefault[T int | int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// defect reports whether a defect switch is on.
func (s *Server) defect(d defectID) bool { return s.defects[d] }

// variant reports whether a variant switch is on.
func (s *Server) variant(v variantID) bool { return s.variants[v] }

// keyIDForLog names the key of a request for the log: its ID
// ("<user>-<key>") when the token has a key's shape and the ID is known,
// else a word for what was sent. No part of a token is logged unless it is a
// known key ID, so a secret never reaches the log, whatever surrounds it.
func (s *Server) keyIDForLog(auth string) string {
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
