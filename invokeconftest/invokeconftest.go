// Package invokeconftest runs the invokeconf reference server of the Agent
// Invoke Service as a test double for the tests of a client, in the style of
// net/http/httptest:
//
//	srv := invokeconftest.NewServer(t, invokeconftest.WithVariants("sse-crlf"))
//	answer, err := myclient.Ask(srv.URL, srv.Key("agent"), srv.AgentID(), "Hello")
//
// The server listens on a loopback port and stops when the test ends. It
// gives its base URL, the key of each role and the seeded IDs (Profile, and
// accessors for the usual ones), and the same values as the INVOKECONF_*
// environment variables a client's own test command can read (Env).
//
// Between two tests, a test switches the server's defects (deviations from
// the spec) and variants (legal behaviours the reference does not use by
// default), resets its state to the seed, and reads the requests it served:
// methods of Server, which work alike on a server in process and on a remote
// `invokeconf serve --admin-key KEY` (Connect). docs/clients.md shows the
// three ways to use the reference server in a client's tests.
package invokeconftest

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/profile"
)

// TB is the part of testing.TB that NewServer uses; *testing.T and
// *testing.B are TBs.
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
}

// Option chooses how the server starts.
type Option func(*fakeserver.Config)

// WithVariants switches variants on (see `invokeconf variants`): legal
// behaviours the reference server does not use by default, such as CRLF
// line endings (sse-crlf) or numeric run IDs (numeric-run-ids).
func WithVariants(names ...string) Option {
	return func(c *fakeserver.Config) { c.Variants = append(c.Variants, names...) }
}

// WithDefects switches defects on (see `invokeconf defects`): deviations
// from the spec, to see how a client copes with a broken service.
func WithDefects(names ...string) Option {
	return func(c *fakeserver.Config) { c.Defects = append(c.Defects, names...) }
}

// WithModel runs the server's agent on an OpenAI-compatible
// chat-completions API at baseURL (such as `invokeconf model`, .../v1)
// instead of in process; model "" asks for the default model.
func WithModel(baseURL, model string) Option {
	return func(c *fakeserver.Config) { c.ModelURL, c.ModelName = baseURL, model }
}

// WithKeepalive sets how long an SSE stream stays quiet before it gets a
// ": ping" comment (the spec's 20 seconds by default), so that a test sees
// keepalives without waiting for them.
func WithKeepalive(d time.Duration) Option {
	return func(c *fakeserver.Config) { c.Keepalive = d }
}

// WithSeed seeds the server from a profile of your own instead of the
// embedded fixtures/reference.yaml.
func WithSeed(p *profile.Profile) Option {
	return func(c *fakeserver.Config) { c.Profile = p.Clone() }
}

// WithAdminKey also opens the server's admin routes over HTTP (as `serve
// --admin-key` does), for a test that hands the server to a program of
// another language. The methods of Server need no admin key in process.
func WithAdminKey(key string) Option {
	return func(c *fakeserver.Config) { c.AdminKey = key }
}

// WithConfig starts from a whole fakeserver.Config (its Profile nil means
// the fixtures); the options after it change it further.
func WithConfig(cfg fakeserver.Config) Option {
	return func(c *fakeserver.Config) {
		seed := c.Profile
		*c = cfg
		if c.Profile == nil {
			c.Profile = seed
		}
	}
}

// Server is a reference server for a client's tests: in process (NewServer,
// Start) or remote (Connect).
type Server struct {
	// URL is the base URL, http://127.0.0.1:<port>.
	URL string
	// Profile is the served target: keys by role, agents, projects,
	// threads and every other ID, its BaseURL the server's. It is this
	// Server's own copy.
	Profile *profile.Profile
	// Running is the server in process; nil for a remote one (Connect).
	Running *fakeserver.Running

	ctl controller
}

// controller is what Server does at run time: in process (the fakeserver
// methods) or over the admin routes (remote.go).
type controller interface {
	switches() (fakeserver.Switches, error)
	setSwitches(fakeserver.SwitchChange) (fakeserver.Switches, error)
	replaceSwitches(defects, variants []string) (fakeserver.Switches, error)
	restoreSwitches() (fakeserver.Switches, error)
	reset() error
	requests(since int64) ([]fakeserver.Request, error)
	close() error
}

// NewServer starts a reference server on a loopback port, seeded with the
// reference fixtures, and stops it when the test ends. A server that cannot
// start fails the test.
func NewServer(t TB, opts ...Option) *Server {
	t.Helper()
	s, err := Start(opts...)
	if err != nil {
		t.Fatalf("invokeconftest: %v", err)
		return nil
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Start starts a reference server on a loopback port, for use outside a
// test (a TestMain, an example, a tool); Close stops it.
func Start(opts ...Option) (*Server, error) {
	var cfg fakeserver.Config
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.Profile == nil {
		seed, err := fixtures.Reference()
		if err != nil {
			return nil, err
		}
		cfg.Profile = seed
	}
	run, err := fakeserver.Listen(cfg, "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := run.Profile()
	p.BaseURL = run.URL
	return &Server{URL: run.URL, Profile: p, Running: run, ctl: &inProcess{r: run}}, nil
}

// Close stops a server in process (its runs are cancelled, its connections
// closed); on a remote server it only lets go of its connections.
func (s *Server) Close() error { return s.ctl.close() }

// Key returns the key of a role ("agent", "wildcard", "project", ...;
// profile.Keys lists them), "" when the profile has none.
func (s *Server) Key(role string) string {
	k, err := s.Profile.Key(role)
	if err != nil {
		return ""
	}
	return k
}

// AgentID is the ID of the main agent (agents.main.id).
func (s *Server) AgentID() string { return s.Profile.Agents.Main.ID }

// AgentAlias is the alias of the main agent (agents.main.alias).
func (s *Server) AgentAlias() string { return s.Profile.Agents.Main.Alias }

// ProjectID is the ID of the main project (projects.main.id).
func (s *Server) ProjectID() string { return s.Profile.Projects.Main.ID }

// ThreadID is the ID of the provisioned thread of the main agent
// (threads.main.id).
func (s *Server) ThreadID() string { return s.Profile.Threads.Main.ID }

// Env returns the served profile as INVOKECONF_* environment variables
// (NAME=value, sorted; `invokeconf profile vars` lists them all), for a
// client's test command of any language. Fields the profile leaves empty are
// left out.
func (s *Server) Env() []string { return Env(s.Profile) }

// Env returns a profile's non-empty fields as INVOKECONF_* environment
// variables, NAME=value, sorted by name.
func Env(p *profile.Profile) []string {
	var env []string
	for _, f := range p.Fields() {
		if !f.IsZero() {
			env = append(env, f.Env+"="+f.Value())
		}
	}
	sort.Strings(env)
	return env
}

// Switches lists every defect and variant with its state.
func (s *Server) Switches() (fakeserver.Switches, error) { return s.ctl.switches() }

// SetSwitches switches defects and variants on (true) or off (false) by
// name; the others keep their state. It applies to requests that start
// after it returns; runs in flight finish as they began. A bad change (an
// unknown name, two variants of one group, a start-up-only variant) is
// refused whole with a *fakeserver.SwitchError.
func (s *Server) SetSwitches(c fakeserver.SwitchChange) (fakeserver.Switches, error) {
	return s.ctl.setSwitches(c)
}

// SwitchVariants switches the named variants on or off.
func (s *Server) SwitchVariants(on bool, names ...string) error {
	c := fakeserver.SwitchChange{Variants: map[string]bool{}}
	for _, n := range names {
		c.Variants[n] = on
	}
	_, err := s.ctl.setSwitches(c)
	return err
}

// SwitchDefects switches the named defects on or off.
func (s *Server) SwitchDefects(on bool, names ...string) error {
	c := fakeserver.SwitchChange{Defects: map[string]bool{}}
	for _, n := range names {
		c.Defects[n] = on
	}
	_, err := s.ctl.setSwitches(c)
	return err
}

// ReplaceSwitches switches on exactly the named defects and variants and
// every other one off.
func (s *Server) ReplaceSwitches(defects, variants []string) error {
	_, err := s.ctl.replaceSwitches(defects, variants)
	return err
}

// RestoreSwitches brings back the switches the server started with.
func (s *Server) RestoreSwitches() error {
	_, err := s.ctl.restoreSwitches()
	return err
}

// Reset returns the server's state to its seed: threads and runs made since
// are forgotten, bundle installations are as seeded, the recent requests
// are cleared. The switches stay as they are.
func (s *Server) Reset() error { return s.ctl.reset() }

// Requests returns the requests the server answered after the one numbered
// since (0: all it remembers, the last 500 by default), oldest first; keys
// appear by their ID only.
func (s *Server) Requests(since int64) ([]fakeserver.Request, error) { return s.ctl.requests(since) }

// inProcess controls a server running in this process.
type inProcess struct {
	r      *fakeserver.Running
	once   sync.Once
	closed error
}

func (c *inProcess) switches() (fakeserver.Switches, error) { return c.r.Switches(), nil }
func (c *inProcess) setSwitches(ch fakeserver.SwitchChange) (fakeserver.Switches, error) {
	return c.r.SetSwitches(ch)
}
func (c *inProcess) replaceSwitches(d, v []string) (fakeserver.Switches, error) {
	return c.r.ReplaceSwitches(d, v)
}
func (c *inProcess) restoreSwitches() (fakeserver.Switches, error) { return c.r.RestoreSwitches(), nil }
func (c *inProcess) reset() error                                  { return c.r.Reset() }
func (c *inProcess) requests(since int64) ([]fakeserver.Request, error) {
	return c.r.Requests(since), nil
}
func (c *inProcess) close() error {
	c.once.Do(func() {
		if err := c.r.Close(); err != nil {
			c.closed = fmt.Errorf("invokeconftest: close: %w", err)
		}
	})
	return c.closed
}
