package reports

import (
	"net/url"
	"runtime/debug"
	"strings"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/profile"
)

// Version and Commit name the harness build. `go install
// .../cmd/invokeconf@v1.2.0` needs neither (Go records the module version);
// a build from a checkout records the commit when built with -buildvcs=true
// (the default inside a git work tree); a release build may set both:
//
//	go build -ldflags "-X github.com/invokeconf/invokeconf/reports.Version=v1.2.0 \
//	  -X github.com/invokeconf/invokeconf/reports.Commit=$(git rev-parse HEAD)" ./cmd/invokeconf
var (
	Version = ""
	Commit  = ""
)

// Identity names what a report rests on: the harness build, the spec text
// the rule catalog was written from, the catalog, and the target.
type Identity struct {
	// HarnessVersion is the module version ("v1.2.0") or "dev".
	HarnessVersion string `json:"harnessVersion"`
	// HarnessCommit is the VCS revision, "+dirty" when the tree had
	// changes; "" when the build did not record it.
	HarnessCommit string `json:"harnessCommit"`
	GoVersion     string `json:"goVersion"`
	// SpecDigest and CatalogDigest are "sha256:..." of the spec text and
	// of rules.yaml (the spec carries no version of its own).
	SpecDigest    string `json:"specDigest"`
	CatalogDigest string `json:"catalogDigest"`
	// Product and ProductVersion come from the profile ("" when it does
	// not say).
	Product        string `json:"product"`
	ProductVersion string `json:"productVersion"`
	// Harness is all of the harness in one line, for people.
	Harness string `json:"-"`
}

// Identify returns the identity of this build, the embedded spec and
// catalog, and the target p describes (p may be nil).
func Identify(p *profile.Profile) Identity {
	id := Identity{HarnessVersion: "dev", SpecDigest: features.SpecDigest(), CatalogDigest: features.CatalogDigest()}
	if p != nil {
		id.Product, id.ProductVersion = printable(p.Product), printable(p.ProductVersion)
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		id.GoVersion = bi.GoVersion
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			id.HarnessVersion = v
		}
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				id.HarnessCommit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && id.HarnessCommit != "" {
			id.HarnessCommit += "+dirty"
		}
	}
	if Version != "" {
		id.HarnessVersion = Version
	}
	if Commit != "" {
		id.HarnessCommit = Commit
	}
	id.Harness = "invokeconf " + id.HarnessVersion
	if c := id.HarnessCommit; c != "" {
		id.Harness += " (commit " + shortCommit(c) + ")"
	}
	return id
}

// TargetName is the product and its version, or "" when the profile names
// neither.
func (id Identity) TargetName() string {
	return strings.TrimSpace(id.Product + " " + id.ProductVersion)
}

// Spec abbreviates the spec digest for people: "sha256:1a2b3c4d5e6f".
func (id Identity) Spec() string { return shortDigest(id.SpecDigest) }

// Catalog abbreviates the catalog digest for people.
func (id Identity) Catalog() string { return shortDigest(id.CatalogDigest) }

func shortDigest(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12]
	}
	return d
}

func shortCommit(c string) string {
	base, dirty := strings.CutSuffix(c, "+dirty")
	if len(base) > 12 {
		base = base[:12]
	}
	if dirty {
		base += "+dirty"
	}
	return base
}

// redactURL hides a password in a URL's user information.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	return u.Redacted()
}
