package reports

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/invokeconf/invokeconf/features"
	"github.com/invokeconf/invokeconf/profile"
)

// Version and Commit name the harness build. `go install
// .../cmd/invokeconf@v1.2.0` needs neither (Go records the module version);
// a build from a checkout records the commit when built with -buildvcs=true
// (the default of go build inside a git work tree); a release build may set
// both:
//
//	go build -ldflags "-X github.com/invokeconf/invokeconf/reports.Version=v1.2.0 \
//	  -X github.com/invokeconf/invokeconf/reports.Commit=$(git rev-parse HEAD)" ./cmd/invokeconf
//
// A build that records no commit (go run, -buildvcs=false) asks git about
// the source tree it was compiled from, when that tree is still there and
// unchanged since the build (harnessBuild).
var (
	Version = ""
	Commit  = ""
)

// How the harness build was named (Identity.HarnessSource).
const (
	SourceLdflags = "ldflags"   // Version and Commit set at link time (a release build)
	SourceVCS     = "vcs stamp" // Go recorded the VCS revision (go build in a work tree)
	SourceModule  = "module"    // Go recorded the module version (go install ...@version)
	SourceGit     = "git"       // git asked at run time about the source tree the binary was compiled from
	SourceBinary  = "binary"    // nothing names the source: the executable's digest names the build
)

// Identity names what a report rests on: the harness build, the spec text
// the rule catalog was written from, the catalog, and the target.
type Identity struct {
	// HarnessVersion is the module version ("v1.2.0") or "dev".
	HarnessVersion string `json:"harnessVersion"`
	// HarnessCommit is the VCS revision, "+dirty" when the tree had
	// changes; "" when nothing names it.
	HarnessCommit string `json:"harnessCommit"`
	// HarnessSource says how the version and commit were found: one of
	// SourceLdflags, SourceVCS, SourceModule, SourceGit, SourceBinary.
	HarnessSource string `json:"harnessSource"`
	// HarnessBinary is "sha256:..." of the running executable: it names the
	// build exactly, whatever built it; "" when it cannot be read.
	HarnessBinary string `json:"harnessBinary"`
	// HarnessNote says, for people, how the identity was found and, when no
	// commit was, why not.
	HarnessNote string `json:"harnessNote"`
	GoVersion   string `json:"goVersion"`
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
	b := harnessBuild()
	id := Identity{HarnessVersion: b.version, HarnessCommit: b.commit, HarnessSource: b.source, HarnessBinary: b.binary,
		HarnessNote: b.note, GoVersion: b.goVersion, SpecDigest: features.SpecDigest(), CatalogDigest: features.CatalogDigest()}
	if p != nil {
		id.Product, id.ProductVersion = printable(p.Product), printable(p.ProductVersion)
	}
	id.Harness = "invokeconf " + id.HarnessVersion
	var parts []string
	if c := id.HarnessCommit; c != "" {
		parts = append(parts, "commit "+shortCommit(c))
	}
	switch id.HarnessSource {
	case SourceGit:
		parts = append(parts, "from git at run time")
	case SourceVCS:
		parts = append(parts, "stamped by go build")
	}
	if d := id.HarnessBinary; d != "" {
		parts = append(parts, "binary "+shortDigest(d))
	}
	if len(parts) > 0 {
		id.Harness += " (" + strings.Join(parts, ", ") + ")"
	}
	return id
}

// build is what names the running harness; harnessBuild finds it once.
type build struct {
	version, commit, source, binary, note, goVersion string
}

var (
	buildOnce sync.Once
	thisBuild build
)

// harnessBuild names the running build, in order of trust: what the
// release build set at link time, what Go stamped into the binary (VCS
// revision, module version), else what git says of the source tree the
// binary was compiled from, as long as nothing in that tree changed after
// the build. The executable's digest is recorded in every case.
func harnessBuild() build {
	buildOnce.Do(func() {
		b := build{version: "dev"}
		exe, exeErr := os.Executable()
		var built time.Time
		if exeErr == nil {
			b.binary, built, exeErr = fileDigest(exe)
		}
		stamped, dirty := false, false
		if bi, ok := debug.ReadBuildInfo(); ok {
			b.goVersion = bi.GoVersion
			if v := bi.Main.Version; v != "" && v != "(devel)" {
				b.version, b.source = v, SourceModule
				b.note = "the module version Go recorded (go install of a version)"
			}
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					b.commit, stamped = s.Value, true
				case "vcs.modified":
					dirty = s.Value == "true"
				}
			}
		}
		switch {
		case Version != "" || Commit != "":
			if Version != "" {
				b.version = Version
			}
			b.commit, b.source, b.note = Commit, SourceLdflags, "set at link time (-ldflags -X, a release build)"
		case stamped:
			if dirty {
				b.commit += "+dirty"
			}
			b.source, b.note = SourceVCS, "the VCS revision go build recorded"
		case b.source == SourceModule:
		default:
			tree := sourceTree()
			commit, why := "", "the build records no commit (go run, or -buildvcs=false) and "
			switch {
			case tree == "":
				why += "its source tree is not known (a -trimpath build)"
			case exeErr != nil:
				why += "the running executable cannot be read: " + exeErr.Error()
			default:
				commit, why = gitCommit(tree, built)
			}
			if commit != "" {
				b.commit, b.source = commit, SourceGit
				b.note = "read at run time from the source tree the binary was compiled from, " + tree + ", which has not changed since the build"
			} else {
				b.source, b.note = SourceBinary, "no commit: "+why+"; the binary's digest names the build"
			}
		}
		thisBuild = b
	})
	return thisBuild
}

// fileDigest returns "sha256:..." of a file and its modification time.
func fileDigest(path string) (string, time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", time.Time{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", time.Time{}, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", time.Time{}, err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), st.ModTime(), nil
}

// sourceTree returns the root of the module this package was compiled
// from, read from the path the compiler recorded for this file; "" when the
// build trimmed paths or the tree is gone.
func sourceTree() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	pkg := reflect.TypeOf(build{}).PkgPath() // github.com/invokeconf/invokeconf/reports
	module := path.Dir(pkg)
	root := filepath.Dir(filepath.Dir(file))
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || modfileModule(mod) != module {
		return ""
	}
	return root
}

// modfileModule returns the module path a go.mod declares.
func modfileModule(mod []byte) string {
	for _, line := range strings.Split(string(mod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// gitTimeout bounds each git command: the identity must never hold up a
// run.
const gitTimeout = 3 * time.Second

// gitCommit asks git for the commit of the tree at root, "+dirty" when it
// has changes, as long as no file of the tree (tracked, or untracked and
// not ignored) nor a folder holding one changed after built, the time the
// binary was written (a folder that changed only by files git ignores, such
// as the reports a run writes, is no change: ignoredChangesOnly); else it
// says why not.
func gitCommit(root string, built time.Time) (commit, why string) {
	head, err := git(root, "rev-parse", "HEAD")
	if err != nil {
		return "", "git cannot tell the commit of " + root + ": " + err.Error()
	}
	files, err := git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".")
	if err != nil {
		return "", "git cannot list the files of " + root + ": " + err.Error()
	}
	dirs := map[string]bool{root: true}
	for _, f := range strings.Split(files, "\x00") {
		if f == "" {
			continue
		}
		full := filepath.Join(root, filepath.FromSlash(f))
		for d := filepath.Dir(full); len(d) > len(root) && !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
		if st, err := os.Lstat(full); err == nil && st.ModTime().After(built) {
			return "", "the source tree " + root + " changed after the build (" + f + ")"
		}
	}
	for d := range dirs {
		if st, err := os.Lstat(d); err == nil && st.ModTime().After(built) && !ignoredChangesOnly(root, d, dirs, built) {
			return "", "the source tree " + root + " changed after the build (a file was added or removed in " + d + ")"
		}
	}
	status, err := git(root, "status", "--porcelain", "--", ".")
	if err != nil {
		return "", "git cannot tell whether " + root + " has changes: " + err.Error()
	}
	commit = strings.TrimSpace(head)
	if strings.TrimSpace(status) != "" {
		commit += "+dirty"
	}
	return commit, ""
}

// ignoredChangesOnly reports whether a folder of the tree that changed
// after the build did so only by what git ignores: some of its entries
// changed after the build, and every one of them is ignored (the harness's
// own output, reports/out, or a profile the .gitignore names) or is a
// folder of the tree, judged on its own (tree). Ignored files are no part
// of the tree, so the build is still the tree's. A folder none of whose
// entries changed lost one: that is a change. The price: a file
// removed from a folder in which an ignored one also changed goes unseen
// (go run rebuilds when a compiled file goes, so only a binary built
// without a VCS stamp and kept meets it).
func ignoredChangesOnly(root, dir string, tree map[string]bool, built time.Time) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	var changed []string
	for _, e := range entries {
		if e.Name() == ".git" {
			continue // git's own state, which git commands change
		}
		full := filepath.Join(dir, e.Name())
		if tree[full] {
			continue
		}
		if st, err := os.Lstat(full); err == nil && st.ModTime().After(built) {
			rel, err := filepath.Rel(root, full)
			if err != nil {
				return false
			}
			changed = append(changed, filepath.ToSlash(rel))
		}
	}
	if len(changed) == 0 {
		return false
	}
	out, err := gitInput(root, strings.Join(changed, "\x00")+"\x00", "check-ignore", "-z", "--stdin")
	if err != nil {
		return false // exit 1: none is ignored
	}
	ignored := map[string]bool{}
	for _, f := range strings.Split(out, "\x00") {
		ignored[strings.TrimSuffix(f, "/")] = true
	}
	for _, f := range changed {
		if !ignored[f] {
			return false
		}
	}
	return true
}

// git runs one git command in dir, bounded by gitTimeout.
func git(dir string, args ...string) (string, error) { return gitInput(dir, "", args...) }

// gitInput is git with input on its standard input.
func gitInput(dir, input string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			first, _, _ := strings.Cut(strings.TrimSpace(string(ee.Stderr)), "\n")
			return "", fmt.Errorf("%w: %s", err, first)
		}
		return "", err
	}
	return string(out), nil
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
