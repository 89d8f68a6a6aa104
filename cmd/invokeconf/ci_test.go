package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/invokeconf/invokeconf/internal/sweep"
	"github.com/invokeconf/invokeconf/profile"
)

// TestCIRecipes runs the shell steps of docs/ci.md's GitHub Actions and
// GitLab CI jobs, verbatim, in a fresh folder: the install line too, with
// the module served from this checkout, as the release the jobs pin, by a
// local module proxy (the dependencies come from the module cache, so
// nothing is fetched). Each job must install the harness, start its
// service, check the profile, run the suite with exit 0 and leave the
// reports where its upload step looks, naming the pinned release. The jobs
// are read and their pins checked always; they run (a build of the whole
// module into a fresh module cache) with INVOKECONF_FULL=1.
func TestCIRecipes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the harness")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	doc, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)## (GitHub Actions|GitLab CI)\n.*?```yaml\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) != 2 {
		t.Fatalf("docs/ci.md holds %d CI jobs, want the GitHub Actions and GitLab CI ones", len(blocks))
	}
	// One module cache and proxy for both jobs: the second install finds the
	// first's build in the build cache (-trimpath keeps it independent of the
	// cache's folder).
	shared := t.TempDir()
	modCache := filepath.Join(shared, "modcache")
	realCache := strings.TrimSpace(goEnv(t, "GOMODCACHE"))
	var proxy, version string
	for _, b := range blocks {
		system, text := string(b[1]), b[2]
		t.Run(system, func(t *testing.T) {
			steps, env := recipeSteps(t, system, text)
			v := env["HARNESS_VERSION"]
			if !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(v) {
				t.Fatalf("HARNESS_VERSION is %q, not a pinned release vX.Y.Z", v)
			}
			if version == "" {
				version = v
			} else if v != version {
				t.Fatalf("the jobs pin %s and %s", version, v)
			}
			if !strings.Contains(env["HARNESS_RUN_FLAGS"], "--require-complete") {
				t.Errorf("the job's run does not gate on completeness: HARNESS_RUN_FLAGS=%q", env["HARNESS_RUN_FLAGS"])
			}
			if n := strings.Count(strings.Join(steps, "\n"), "go install github.com/invokeconf/invokeconf/cmd/invokeconf@\"$HARNESS_VERSION\""); n != 1 {
				t.Fatalf("the job installs the harness %d times, want once from the pinned version", n)
			}
			if !sweep.Full() {
				t.Skipf("the job's %d steps run with %s=1 (they build the whole module)", len(steps), sweep.Env)
			}
			if proxy == "" {
				proxy = moduleProxy(t, repo, shared, version)
			}
			work := t.TempDir()
			gopath := filepath.Join(work, ".gopath")
			ghPath := filepath.Join(work, ".github_path")
			// The job's environment, not the tester's: an INVOKECONF_*
			// variable of this test run (INVOKECONF_FULL) is none of the
			// job's, and would be warned about as one that sets no field.
			var inherited []string
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "INVOKECONF_") {
					inherited = append(inherited, kv)
				}
			}
			base := append(inherited, "GOPATH="+gopath, "GOMODCACHE="+modCache, "GITHUB_PATH="+ghPath,
				"GOPROXY=file://"+proxy+",file://"+filepath.Join(realCache, "cache", "download"),
				// Offline: the dependencies were checked against the checksum
				// database when they entered the module cache; this checkout
				// is in none.
				"GOSUMDB=off", "GOFLAGS=-modcacherw -trimpath", "GOTOOLCHAIN=local")
			for k, v := range env {
				base = append(base, k+"="+v)
			}
			// A partial selection, to be quick: completeness is not gated.
			base = append(base, "SERVICE_ADDR=127.0.0.1:0", "HARNESS_RUN_FLAGS=--areas errors --quick")
			var groups []int
			defer func() {
				for _, g := range groups {
					_ = syscall.Kill(-g, syscall.SIGTERM)
				}
			}()
			path := os.Getenv("PATH")
			for i, script := range steps {
				cmd := exec.Command(bash, "-eo", "pipefail", "-c", script)
				cmd.Dir = work
				cmd.Env = append(append([]string(nil), base...), "PATH="+path)
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				groups = append(groups, cmd.Process.Pid)
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				select {
				case err = <-done:
				case <-time.After(10 * time.Minute):
					t.Fatalf("step %d did not finish:\n%s\n%s", i+1, script, out.String())
				}
				if err != nil {
					t.Fatalf("step %d failed (%v):\n%s\n%s", i+1, err, script, out.String())
				}
				if strings.Contains(out.String(), "invokeconf: warning:") {
					t.Errorf("step %d warns:\n%s\n%s", i+1, script, out.String())
				}
				if b, err := os.ReadFile(ghPath); err == nil {
					for _, dir := range strings.Fields(string(b)) {
						path = dir + string(os.PathListSeparator) + path
					}
				}
			}
			for _, f := range []string{"report.html", "summary.json", "junit.xml", "cucumber.json"} {
				if _, err := os.Stat(filepath.Join(work, "invokeconf-reports", f)); err != nil {
					t.Errorf("the upload step would miss %s: %v", f, err)
				}
			}
			var sum struct {
				Identity struct {
					HarnessVersion, HarnessSource, HarnessBinary string
				} `json:"identity"`
			}
			b, err := os.ReadFile(filepath.Join(work, "invokeconf-reports", "summary.json"))
			if err == nil {
				err = json.Unmarshal(b, &sum)
			}
			if id := sum.Identity; err != nil || id.HarnessVersion != version || id.HarnessSource != "module" || !strings.HasPrefix(id.HarnessBinary, "sha256:") {
				t.Errorf("the report does not name the installed release %s: %+v (%v)", version, id, err)
			}
		})
	}
}

// TestDocJobsPinTheHarness: every CI job of the docs that installs the
// harness pins the same release in HARNESS_VERSION (never latest), and sets
// no INVOKECONF_* variable that overrides no profile field, which every
// invokeconf command would warn about.
func TestDocJobsPinTheHarness(t *testing.T) {
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	const install = `go install github.com/invokeconf/invokeconf/cmd/invokeconf@"$HARNESS_VERSION"`
	jobs, pins := 0, map[string]bool{}
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(b, -1) {
			if !bytes.Contains(m[1], []byte("go install github.com/invokeconf/invokeconf/cmd/invokeconf@")) {
				continue
			}
			jobs++
			if !bytes.Contains(m[1], []byte(install)) {
				t.Errorf("%s: a job installs the harness otherwise than %s", doc, install)
			}
			env := jobEnv(t, m[1])
			v := env["HARNESS_VERSION"]
			if !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(v) {
				t.Errorf("%s: HARNESS_VERSION is %q, not a pinned release vX.Y.Z", doc, v)
			}
			pins[v] = true
			var environ []string
			for k, v := range env {
				environ = append(environ, k+"="+v)
			}
			var warnings bytes.Buffer
			warnUnknownVars(&warnings, &profile.Profile{}, environ)
			if warnings.Len() > 0 {
				t.Errorf("%s: the job's environment makes every invokeconf command warn:\n%s", doc, warnings.String())
			}
		}
	}
	if jobs < 3 || len(pins) != 1 {
		t.Errorf("%d jobs install the harness, pinning %v: want the CI recipes and the clients job, one release", jobs, pins)
	}
}

// jobEnv is a CI job's environment: a GitHub Actions job's env, or a
// GitLab CI job's variables.
func jobEnv(t *testing.T, text []byte) map[string]string {
	t.Helper()
	var doc struct {
		Jobs map[string]struct {
			Env map[string]string `yaml:"env"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(text, &doc); err == nil && len(doc.Jobs) > 0 {
		env := map[string]string{}
		for _, job := range doc.Jobs {
			for k, v := range job.Env {
				env[k] = v
			}
		}
		return env
	}
	var gitlab map[string]struct {
		Variables map[string]string `yaml:"variables"`
	}
	if err := yaml.Unmarshal(text, &gitlab); err != nil {
		t.Fatalf("a CI job does not parse: %v", err)
	}
	env := map[string]string{}
	for _, job := range gitlab {
		for k, v := range job.Variables {
			env[k] = v
		}
	}
	return env
}

// TestGitHubRecipePinsAndPermissions: the GitHub job pins every action by
// a commit, with its tag in a comment, and asks for the permissions its
// steps need (checkout reads, the JUnit action writes a check run), with
// the JUnit action only annotating where the token is read-only (a fork's
// pull request).
func TestGitHubRecipePinsAndPermissions(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## GitHub Actions\n.*?```yaml\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("no GitHub Actions job")
	}
	var wf struct {
		Permissions map[string]string `yaml:"permissions"`
		Jobs        map[string]struct {
			Steps []struct {
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(m[1], &wf); err != nil {
		t.Fatal(err)
	}
	if wf.Permissions["contents"] != "read" || wf.Permissions["checks"] != "write" || len(wf.Permissions) != 2 {
		t.Errorf("permissions %v, want contents: read and checks: write", wf.Permissions)
	}
	pinned := regexp.MustCompile(`(?m)^\s+(?:- )?uses: ([\w.-]+/[\w.-]+)@([0-9a-f]{40}) # (v\d+\.\d+\.\d+)$`)
	uses := regexp.MustCompile(`(?m)^\s+(?:- )?uses: `)
	if n, p := len(uses.FindAll(m[1], -1)), len(pinned.FindAll(m[1], -1)); n == 0 || n != p {
		t.Errorf("%d actions, %d pinned by commit with the tag in a comment", n, p)
	}
	junit := false
	for _, job := range wf.Jobs {
		for _, st := range job.Steps {
			if strings.HasPrefix(st.Uses, "mikepenz/action-junit-report@") {
				junit = true
				if a := st.With["annotate_only"]; !strings.Contains(a, "github.event.pull_request.head.repo.full_name != github.repository") {
					t.Errorf("the JUnit action does not annotate only on a fork's pull request: %q", a)
				}
			}
		}
	}
	if !junit {
		t.Error("no JUnit action")
	}
}

// moduleProxy lays out a GOPROXY folder (file://) that serves this
// checkout as github.com/invokeconf/invokeconf at version: the files git
// tracks or would track, as a module zip. It returns the folder.
func moduleProxy(t *testing.T, repo, dir, version string) string {
	t.Helper()
	const module = "github.com/invokeconf/invokeconf"
	root := filepath.Join(dir, "proxy")
	at := filepath.Join(root, filepath.FromSlash(module), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("git cannot list the checkout's files: %v", err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	seen := map[string]bool{}
	for _, name := range strings.Split(string(out), "\x00") {
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		b, err := os.ReadFile(filepath.Join(repo, filepath.FromSlash(name)))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree, not yet in git
		}
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(module + "@" + version + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info := fmt.Sprintf(`{"Version":%q,"Time":%q}`, version, time.Now().UTC().Format(time.RFC3339))
	for name, data := range map[string][]byte{"list": []byte(version + "\n"), version + ".info": []byte(info),
		version + ".mod": mod, version + ".zip": buf.Bytes()} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// recipeSteps returns a job's shell steps in order (GitHub: every run; GitLab:
// the script, one shell session) and its environment.
func recipeSteps(t *testing.T, system string, text []byte) ([]string, map[string]string) {
	t.Helper()
	if system == "GitHub Actions" {
		var wf struct {
			Jobs map[string]struct {
				Env   map[string]string `yaml:"env"`
				Steps []struct {
					Run string `yaml:"run"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(text, &wf); err != nil || len(wf.Jobs) != 1 {
			t.Fatalf("the GitHub Actions job does not parse: %v", err)
		}
		for _, job := range wf.Jobs {
			var steps []string
			for _, s := range job.Steps {
				if s.Run != "" {
					steps = append(steps, s.Run)
				}
			}
			return steps, job.Env
		}
	}
	var jobs map[string]struct {
		Variables map[string]string `yaml:"variables"`
		Script    []string          `yaml:"script"`
	}
	if err := yaml.Unmarshal(text, &jobs); err != nil || len(jobs) != 1 {
		t.Fatalf("the GitLab CI job does not parse: %v", err)
	}
	for _, job := range jobs {
		return []string{strings.Join(job.Script, "\n")}, job.Variables
	}
	return nil, nil
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
