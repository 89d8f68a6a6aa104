package evidence

import (
	"testing"

	"github.com/invokeconf/invokeconf/reports"
)

// TestSameBuild: a report and a verifier are one build of the harness's
// source when they name the same executable, the same clean commit, the
// same version Go recorded, or a clean commit and its pseudo-version;
// never by a tree with changes or a "dev" version alone.
func TestSameBuild(t *testing.T) {
	const commit = "9b9f711647bd379cf62f19ed345331eff2880aa8"
	git := reports.Identity{HarnessVersion: "dev", HarnessCommit: commit, HarnessSource: reports.SourceGit, HarnessBinary: "sha256:a"}
	pseudo := reports.Identity{HarnessVersion: "v0.0.0-20260101120000-9b9f711647bd", HarnessSource: reports.SourceModule, HarnessBinary: "sha256:b"}
	release := reports.Identity{HarnessVersion: "v0.1.0", HarnessSource: reports.SourceModule, HarnessBinary: "sha256:c"}
	dirty := git
	dirty.HarnessCommit += "+dirty"
	dirty.HarnessBinary = "sha256:d"
	other := reports.Identity{HarnessVersion: "v0.0.0-20260101120000-0123456789ab", HarnessSource: reports.SourceModule, HarnessBinary: "sha256:e"}
	dev := reports.Identity{HarnessVersion: "dev", HarnessSource: reports.SourceBinary, HarnessBinary: "sha256:f"}
	for _, tc := range []struct {
		name      string
		rep, self reports.Identity
		same      bool
	}{
		{"the same executable", dirty, dirty, true},
		{"the same clean commit", git, func() reports.Identity { g := git; g.HarnessBinary = "sha256:z"; return g }(), true},
		{"a commit and its pseudo-version", git, pseudo, true},
		{"a pseudo-version and its commit", pseudo, git, true},
		{"the same release", release, func() reports.Identity { r := release; r.HarnessBinary = "sha256:z"; return r }(), true},
		{"another commit", pseudo, other, false},
		{"a dirty tree and its commit", dirty, git, false},
		{"two dev builds", dev, func() reports.Identity { d := dev; d.HarnessBinary = "sha256:z"; return d }(), false},
		{"a release and a commit", release, git, false},
	} {
		if same, how := sameBuild(tc.rep, tc.self); same != tc.same {
			t.Errorf("%s: same %v (%s), want %v", tc.name, same, how, tc.same)
		}
	}
}
