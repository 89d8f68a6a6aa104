package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// TestCIRecipes runs the shell steps of docs/ci.md's GitHub Actions and
// GitLab CI jobs, verbatim, in a fresh folder, with one substitution: the
// harness is built from this checkout instead of installed from the module
// proxy. Each job must start its service, check the profile, run the suite
// with exit 0 and leave the reports where its upload step looks.
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
	install := regexp.MustCompile(`go install github\.com/invokeconf/invokeconf/cmd/invokeconf@\S+`)
	for _, b := range blocks {
		system, text := string(b[1]), b[2]
		t.Run(system, func(t *testing.T) {
			steps, env := recipeSteps(t, system, text)
			work := t.TempDir()
			gopath := filepath.Join(work, ".gopath")
			ghPath := filepath.Join(work, ".github_path")
			mod := strings.TrimSpace(goEnv(t, "GOMODCACHE"))
			base := append(os.Environ(), "GOPATH="+gopath, "GOMODCACHE="+mod, "GITHUB_PATH="+ghPath)
			for k, v := range env {
				base = append(base, k+"="+v)
			}
			base = append(base, "SERVICE_ADDR=127.0.0.1:0", "INVOKECONF_RUN_FLAGS=--areas errors --quick")
			var groups []int
			defer func() {
				for _, g := range groups {
					_ = syscall.Kill(-g, syscall.SIGTERM)
				}
			}()
			path := os.Getenv("PATH")
			for i, step := range steps {
				script := install.ReplaceAllString(step, `mkdir -p "$(go env GOPATH)/bin" && (cd `+repo+` && go build -o "$(go env GOPATH)/bin/invokeconf" ./cmd/invokeconf)`)
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
				case <-time.After(4 * time.Minute):
					t.Fatalf("step %d did not finish:\n%s\n%s", i+1, script, out.String())
				}
				if err != nil {
					t.Fatalf("step %d failed (%v):\n%s\n%s", i+1, err, script, out.String())
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
		})
	}
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
