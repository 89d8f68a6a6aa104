package runner_test

import (
	"testing"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/invokeconftest"
	"github.com/invokeconf/invokeconf/profile"
)

// startReference starts a reference server seeded with the fixtures (cfg's
// Profile is filled in) and returns the profile of the target it serves. The
// server stops when the test ends.
func startReference(t *testing.T, cfg fakeserver.Config) *profile.Profile {
	t.Helper()
	cfg.Profile = nil // the fixtures, as ever
	return invokeconftest.NewServer(t, invokeconftest.WithConfig(cfg)).Profile
}
