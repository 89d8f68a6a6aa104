package runner_test

import (
	"context"
	"errors"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/runner"
)

// TestNeedsPredictUntested: for each profile field the scenarios use, a
// profile without it leaves untested exactly the scenarios that the up-front
// gap report (runner.Gaps) names, no more and no fewer.
//
// It does not run in parallel with the other tests: its many runs would load
// the machine while the mutation tests measure timing rules.
func TestNeedsPredictUntested(t *testing.T) {
	pickles, err := features.Pickles()
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	for _, pk := range pickles {
		for _, n := range runner.Needs(pk) {
			paths[n] = true
		}
	}
	for _, f := range (&profile.Profile{}).Fields() {
		if f.Secret {
			paths[f.Path] = true // every key role, used or not
		}
	}
	if !paths["keys.agent"] || !paths["agents.main.id"] {
		t.Fatalf("needs found: %v", paths)
	}
	seed, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := fakeserver.Listen(fakeserver.Config{Profile: seed}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for path := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p := seed.Clone()
			p.BaseURL = srv.URL
			env := profile.EnvName(path)
			if _, err := p.ApplyEnv(func(k string) (string, bool) { return "", k == env }); err != nil {
				t.Errorf("%s: %v", path, err)
				return
			}
			plan, err := runner.NewPlan(p, runner.Selection{Quick: true})
			if err != nil {
				t.Errorf("%s: %v", path, err)
				return
			}
			var predicted []string
			for _, g := range runner.Gaps(p, plan) {
				if g.Path != path {
					t.Errorf("blanking %s predicts a gap in %s", path, g.Path)
				}
				predicted = append(predicted, g.Scenarios...)
			}
			res, err := runner.Run(context.Background(), runner.Config{Profile: p, Plan: plan})
			if err != nil {
				t.Errorf("%s: %v", path, err)
				return
			}
			var actual []string
			for _, s := range res.Scenarios {
				switch s.Status {
				case runner.Untested:
					actual = append(actual, s.ID)
				case runner.HarnessError:
					t.Errorf("without %s, %s is a harness error: %s", path, s.ID, s.Error)
				}
			}
			sort.Strings(predicted)
			sort.Strings(actual)
			if strings.Join(predicted, " ") != strings.Join(actual, " ") {
				t.Errorf("without %s:\n predicted untested %v\n actually untested %v", path, predicted, actual)
			}
		}()
	}
	wg.Wait()
}

func TestReachable(t *testing.T) {
	seed, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := fakeserver.Listen(fakeserver.Config{Profile: seed}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p := seed.Clone()
	p.BaseURL = srv.URL
	if err := runner.Reachable(context.Background(), p); err != nil {
		t.Errorf("the reference server: %v", err)
	}

	// A port nobody listens on: refused at once, with a message that names
	// the URL and the variable to fix it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.BaseURL = "http://" + ln.Addr().String()
	ln.Close()
	start := time.Now()
	err = runner.Reachable(context.Background(), p)
	var ue *runner.UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), p.BaseURL) || !strings.Contains(err.Error(), "INVOKECONF_BASE_URL") {
		t.Errorf("closed port: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %s", d)
	}
}

// TestCheckKeys: the reference server accepts every key of its profile and
// answers 401 for the expired one; a target that does not know a key, or
// answers an expired key with 403, is reported.
func TestCheckKeys(t *testing.T) {
	seed, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		defects []string
		change  func(*profile.Profile)
		bad     []string
	}{
		{"clean", nil, func(*profile.Profile) {}, nil},
		{"unknown key", nil, func(p *profile.Profile) { p.Keys.Alias = "sk-svc-alice-kalias-wrongsecret" }, []string{"alias"}},
		{"expired accepted", []string{"expired-403"}, func(*profile.Profile) {}, []string{"expired"}},
		{"empty role", nil, func(p *profile.Profile) { p.Keys.APIDisabled = "" }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := fakeserver.Listen(fakeserver.Config{Profile: seed, Defects: tc.defects}, "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			p := seed.Clone()
			p.BaseURL = srv.URL
			tc.change(p)
			var bad []string
			checks := runner.CheckKeys(context.Background(), p)
			for _, kc := range checks {
				if !kc.OK {
					bad = append(bad, kc.Role)
				}
			}
			if strings.Join(bad, ",") != strings.Join(tc.bad, ",") {
				t.Errorf("problems with %v, want %v: %+v", bad, tc.bad, checks)
			}
			if len(checks) != len(p.Keys.Roles()) {
				t.Errorf("%d checks for %d roles", len(checks), len(p.Keys.Roles()))
			}
		})
	}
}
