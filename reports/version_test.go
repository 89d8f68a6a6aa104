package reports

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestIdentifyNamesTheBuild: a test binary, like a go run build, records
// no commit; the identity then comes from git about this checkout (when
// git is there and the checkout unchanged since the build), and the
// executable's digest is named whatever the way.
func TestIdentifyNamesTheBuild(t *testing.T) {
	id := Identify(nil)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if want := "sha256:" + hex.EncodeToString(sum[:]); id.HarnessBinary != want {
		t.Errorf("HarnessBinary = %q, want %q", id.HarnessBinary, want)
	}
	if !strings.Contains(id.Harness, "binary "+shortDigest(id.HarnessBinary)) || id.HarnessNote == "" {
		t.Errorf("Harness = %q, note %q", id.Harness, id.HarnessNote)
	}
	switch id.HarnessSource {
	case SourceGit:
		head, err := exec.Command("git", "rev-parse", "HEAD").Output()
		if err != nil {
			t.Fatal(err)
		}
		if base, _ := strings.CutSuffix(id.HarnessCommit, "+dirty"); base != strings.TrimSpace(string(head)) {
			t.Errorf("commit %q, git says %s", id.HarnessCommit, head)
		}
		if !strings.Contains(id.Harness, "commit "+shortCommit(id.HarnessCommit)+", from git at run time") {
			t.Errorf("Harness = %q", id.Harness)
		}
	case SourceBinary:
		// No git, no checkout, or a file changed while the test built:
		// the note says which.
		if id.HarnessCommit != "" || !strings.HasPrefix(id.HarnessNote, "no commit: ") {
			t.Errorf("commit %q, note %q", id.HarnessCommit, id.HarnessNote)
		}
		t.Logf("no commit from git: %s", id.HarnessNote)
	default:
		t.Errorf("a test binary's identity came from %q: %+v", id.HarnessSource, id)
	}
}

// TestGitCommit: git names a checkout's commit, "+dirty" with a change or
// a new file, and nothing once a file, or a folder's list of files, changed
// after the build; files git ignores change nothing (the reports a run
// writes into the tree, a profile saved as the vendor guide says), before
// the build or after.
func TestGitCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q")
	write("go.mod", "module example.com/m\n")
	write("sub/a.go", "package sub\n")
	write(".gitignore", "/sub/out/\n/*-target.yaml\n")
	run("add", ".")
	run("commit", "-q", "-m", "one")
	head := run("rev-parse", "HEAD")
	// Every file and folder of the tree as it was an hour before the build.
	old := time.Now().Add(-time.Hour)
	built := old.Add(time.Minute)
	age := func() {
		for _, p := range []string{"go.mod", "sub/a.go", ".gitignore", "sub", "."} {
			if err := os.Chtimes(filepath.Join(root, p), old, old); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		change func()
		commit string
		why    string
	}{
		{"clean", func() {}, head, ""},
		{"changed before the build", func() { write("sub/a.go", "package sub // changed\n"); age() }, head + "+dirty", ""},
		{"a file changed after the build", func() { write("sub/a.go", "package sub // again\n") }, "", "changed after the build (sub/a.go)"},
		{"a file removed after the build", func() { run("checkout", "-q", "--", "sub/a.go"); age(); os.Remove(filepath.Join(root, "sub", "a.go")) }, "", "a file was added or removed in " + filepath.Join(root, "sub")},
		{"ignored files written after the build", func() {
			run("checkout", "-q", "--", "sub/a.go")
			age()
			write("sub/out/report.html", "<html>")
			write("my-target.yaml", "baseURL: http://127.0.0.1:8080\n")
		}, head, ""},
		{"ignored files written again", func() { write("sub/out/report.html", "<html> again") }, head, ""},
		{"an untracked file beside an ignored one", func() {
			write("sub/out/report.html", "<html>")
			write("sub/notes.txt", "mine")
		}, "", "changed after the build (sub/notes.txt)"},
		{"a folder that only lost a file", func() {
			os.Remove(filepath.Join(root, "sub", "notes.txt"))
			os.RemoveAll(filepath.Join(root, "sub", "out"))
		}, "", "a file was added or removed in " + filepath.Join(root, "sub")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			age()
			tc.change()
			commit, why := gitCommit(root, built)
			if commit != tc.commit || !strings.Contains(why, tc.why) || (tc.why == "") != (why == "") {
				t.Errorf("gitCommit = %q, %q; want %q, %q", commit, why, tc.commit, tc.why)
			}
		})
	}
	if commit, why := gitCommit(t.TempDir(), built); commit != "" || !strings.Contains(why, "git cannot tell the commit") {
		t.Errorf("outside a checkout: %q, %q", commit, why)
	}
}
