package invokeconftest_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/invokeconftest"
	"github.com/invokeconf/invokeconf/profile"
)

const adminKey = "admin-key-for-tests-42"

// targets are the two ways to reach a server: in process, and through the
// admin routes of a server elsewhere (here one with its admin routes open,
// as invokeconf serve --admin-key has them; cmd/invokeconf tests the real
// command).
func targets(t *testing.T, opts ...invokeconftest.Option) map[string]*invokeconftest.Server {
	t.Helper()
	local := invokeconftest.NewServer(t, opts...)
	served := invokeconftest.NewServer(t, append(opts, invokeconftest.WithAdminKey(adminKey))...)
	remote, err := invokeconftest.Connect(served.URL, adminKey)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remote.Close() })
	return map[string]*invokeconftest.Server{"in process": local, "remote": remote}
}

// TestClientFromTheExample: the client test of the Example, written as a
// test, passes against the server in process and against a remote one,
// through switches, a reset and a look at the requests served.
func TestClientFromTheExample(t *testing.T) {
	for name, srv := range targets(t, invokeconftest.WithVariants("sse-crlf", "sse-no-space")) {
		t.Run(name, func(t *testing.T) {
			if srv.URL == "" || srv.Profile.BaseURL != srv.URL || srv.Key("agent") == "" || srv.AgentID() == "" ||
				srv.AgentAlias() == "" || srv.ProjectID() == "" || srv.ThreadID() == "" {
				t.Fatalf("accessors: %q %q %q %q", srv.URL, srv.Key("agent"), srv.AgentID(), srv.ProjectID())
			}
			if srv.Key("no-such-role") != "" {
				t.Error("a key for an unknown role")
			}
			answer, err := ask(srv.URL, srv.Key("agent"), srv.AgentID(), "Hello, agent")
			if err != nil || answer != "Hello, agent" {
				t.Fatalf("ask: %q, %v", answer, err)
			}
			for _, change := range []func() error{
				func() error { return srv.SwitchVariants(true, "sse-comments", "omit-empty-fields") },
				func() error { return srv.SwitchVariants(false, "sse-crlf") },
				func() error { return srv.SwitchVariants(true, "sse-cr") },
				func() error { return srv.ReplaceSwitches(nil, []string{"richer-nulls", "numeric-run-ids"}) },
				srv.RestoreSwitches,
			} {
				if err := change(); err != nil {
					t.Fatal(err)
				}
				if answer, err := ask(srv.URL, srv.Key("agent"), srv.AgentID(), "@say one\n@say two"); err != nil || answer != "onetwo" {
					t.Fatalf("ask: %q, %v", answer, err)
				}
			}
			w, err := srv.Switches()
			if err != nil {
				t.Fatal(err)
			}
			if d, v := w.On(); len(d) != 0 || strings.Join(v, ",") != "sse-crlf,sse-no-space" {
				t.Errorf("after RestoreSwitches: %v %v", d, v)
			}
			reqs, err := srv.Requests(0)
			if err != nil {
				t.Fatal(err)
			}
			if len(reqs) != 6 || reqs[0].Key != "alice-kagent" || reqs[0].Headers["Accept"] != "text/event-stream" ||
				strings.Join(reqs[3].Variants, ",") != "sse-comments,sse-cr,sse-no-space,omit-empty-fields" {
				t.Errorf("requests: %+v", reqs)
			}
			if later, err := srv.Requests(reqs[4].Seq); err != nil || len(later) != 1 {
				t.Errorf("requests since %d: %v %+v", reqs[4].Seq, err, later)
			}
			if err := srv.Reset(); err != nil {
				t.Fatal(err)
			}
			if reqs, err := srv.Requests(0); err != nil || len(reqs) != 0 {
				t.Errorf("requests after reset: %v %+v", err, reqs)
			}
		})
	}
}

// TestBadSwitches: a refused change is a *fakeserver.SwitchError, in
// process and remote alike, and says what was wrong.
func TestBadSwitches(t *testing.T) {
	for name, srv := range targets(t) {
		tests := []struct {
			change   func() error
			conflict bool
			want     string
		}{
			{func() error { return srv.SwitchVariants(true, "sse-crfl") }, false, "did you mean sse-crlf?"},
			{func() error { return srv.SwitchDefects(true, "no-clos") }, false, "did you mean no-close?"},
			{func() error { return srv.SwitchVariants(true, "sse-cr", "sse-crlf") }, true, "exclude each other"},
			{func() error { return srv.ReplaceSwitches(nil, []string{"uuid-seed-ids"}) }, true, "only at start-up"},
		}
		for i, tt := range tests {
			err := tt.change()
			var se *fakeserver.SwitchError
			if !errors.As(err, &se) || se.Conflict != tt.conflict || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s, change %d: %v, want a SwitchError (conflict %v) saying %q", name, i, err, tt.conflict, tt.want)
			}
		}
	}
}

// TestOptions: each option reaches the server.
func TestOptions(t *testing.T) {
	seed, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	seed.Agents.Main.Alias = "my-own-alias"
	srv := invokeconftest.NewServer(t, invokeconftest.WithConfig(fakeserver.Config{MaxThreads: 5, Defects: []string{"no-close"}}),
		invokeconftest.WithSeed(seed), invokeconftest.WithDefects("content-cumulative"), invokeconftest.WithKeepalive(time.Second))
	w, err := srv.Switches()
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := w.On(); strings.Join(d, ",") != "content-cumulative,no-close" {
		t.Errorf("defects on: %v", d)
	}
	if srv.AgentAlias() != "my-own-alias" {
		t.Errorf("alias %q: the seed was not used", srv.AgentAlias())
	}
	if srv.Running == nil {
		t.Error("no Running in process")
	}
}

// TestNewServerFailsTheTest: a server that cannot start fails the test
// with the reason.
func TestNewServerFailsTheTest(t *testing.T) {
	ft := &fakeT{}
	func() {
		defer func() { _ = recover() }()
		invokeconftest.NewServer(ft, invokeconftest.WithVariants("sse-crlf", "sse-cr"))
	}()
	if !strings.Contains(ft.failed, "exclude each other") {
		t.Errorf("failure %q", ft.failed)
	}
}

type fakeT struct{ failed string }

func (f *fakeT) Helper()        {}
func (f *fakeT) Cleanup(func()) {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	panic("fatal")
}

// TestConnectErrors: a wrong URL, a server without admin routes, a wrong
// key: each is one clear error.
func TestConnectErrors(t *testing.T) {
	plain := invokeconftest.NewServer(t)
	open := invokeconftest.NewServer(t, invokeconftest.WithAdminKey(adminKey))
	tests := []struct{ url, key, want string }{
		{"not a url", adminKey, "is not a base URL"},
		{"ftp://127.0.0.1:1", adminKey, "is not a base URL"},
		{plain.URL, adminKey, "has no admin routes"},
		{open.URL, "wrong-key-0123456789", "403"},
		{open.URL, "", "401"},
		{open.URL, open.Key("agent"), "403"},
	}
	for _, tt := range tests {
		if _, err := invokeconftest.Connect(tt.url, tt.key); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Connect(%q, %q): %v, want %q", tt.url, tt.key, err, tt.want)
		}
	}
}

// TestEnv: the variables of Env set every field of the served profile when
// read back as a client's environment.
func TestEnv(t *testing.T) {
	srv := invokeconftest.NewServer(t)
	env := map[string]string{}
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if env["INVOKECONF_BASE_URL"] != srv.URL || env["INVOKECONF_KEYS_AGENT"] != srv.Key("agent") ||
		env["INVOKECONF_AGENTS_MAIN_ID"] != srv.AgentID() {
		t.Fatalf("env: %v", srv.Env())
	}
	back := &profile.Profile{}
	if _, err := back.ApplyEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, f := range srv.Profile.Fields() {
		want[f.Path] = f.Value()
	}
	for _, f := range back.Fields() {
		if f.Value() != want[f.Path] {
			t.Errorf("%s: %q from the environment, %q served", f.Path, f.Value(), want[f.Path])
		}
	}
}
