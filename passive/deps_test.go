package passive

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestJudgingLinksNoActiveRun: `invokeconf judge` (this package) and the
// reports it writes read a run's results through package testrun, so they
// link neither the active run (runner, steps) nor its libraries (godog,
// httpexpect): `go list -deps` of each prints none of them.
func TestJudgingLinksNoActiveRun(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	const module = "github.com/invokeconf/invokeconf/"
	forbidden := []string{"github.com/cucumber/godog", "github.com/gavv/httpexpect", module + "runner", module + "steps"}
	for _, pkg := range []string{module + "passive", module + "reports"} {
		cmd := exec.Command(goTool, "list", "-deps", pkg)
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s printed %d packages: %q", pkg, len(deps), out)
		}
		for _, dep := range deps {
			for _, f := range forbidden {
				if dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("%s links %s", pkg, dep)
				}
			}
		}
	}
}
