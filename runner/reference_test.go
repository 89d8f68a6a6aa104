package runner_test

import (
	"testing"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/profile"
)

// startReference starts a reference server seeded with the fixtures (cfg's
// Profile is filled in) and returns the profile of the target it serves. The
// server stops when the test ends.
func startReference(t *testing.T, cfg fakeserver.Config) *profile.Profile {
	t.Helper()
	seed, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Profile = seed
	srv, err := fakeserver.Listen(cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	p := srv.Profile()
	p.BaseURL = srv.URL
	return p
}
