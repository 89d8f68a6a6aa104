package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/profile"
)

// TestReadmeCommands: the two commands on the README's first screen are the
// ones CI runs, so the README never lies.
func TestReadmeCommands(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(readme), "\n")
	if len(lines) > 30 {
		lines = lines[:30] // the first screen
	}
	first := strings.Join(lines, "\n")
	for _, cmd := range []string{"go run ./cmd/invokeconf run", "go test -race ./..."} {
		if !strings.Contains(first, "\n"+cmd+"\n") {
			t.Errorf("the README's first screen lacks the command %q", cmd)
		}
		if !strings.Contains(string(ci), "\n"+cmd+"\n") {
			t.Errorf(".ci/run does not run the README's command %q", cmd)
		}
	}
	// The README's Tests section says CI runs the complete sweeps unless
	// the switch is 0.
	if !strings.Contains(string(readme), "\n## Tests\n") || !strings.Contains(string(readme), "`INVOKECONF_FULL=0 bash .ci/run`") {
		t.Error("the README has no Tests section saying how .ci/run's complete sweeps are switched off")
	}
	if !strings.Contains(string(ci), `full="${INVOKECONF_FULL:-1}"`) || !strings.Contains(string(ci), "INVOKECONF_FULL=1 go test ") {
		t.Error(".ci/run does not run the complete sweeps by default, as the README's Tests section says")
	}
}

// TestReadmeListsEveryVariable: the README's table of profile variables
// names every variable a profile field has (`*` standing for an agent
// role), and no variable that none has.
func TestReadmeListsEveryVariable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n## Profile fields from the environment\n")
	section, _, _ = strings.Cut(section, "\n## ")
	names := regexp.MustCompile("`(INVOKECONF_[A-Z_*]+)`").FindAllStringSubmatch(section, -1)
	if len(names) == 0 {
		t.Fatal("the README has no section \"Profile fields from the environment\" naming variables")
	}
	used := map[string]bool{}
	for _, f := range (&profile.Profile{}).Fields() {
		listed := false
		for _, n := range names {
			if roleGlob(n[1]).MatchString(f.Env) {
				listed, used[n[1]] = true, true
			}
		}
		if !listed {
			t.Errorf("the README's table of profile variables lacks %s (%s)", f.Env, f.Path)
		}
	}
	for _, n := range names {
		if !used[n[1]] {
			t.Errorf("the README names %s, which sets no profile field", n[1])
		}
	}
}

// roleGlob matches a variable name in which * stands for one word (an agent
// role: MAIN, OTHER, RESTRICTED).
func roleGlob(name string) *regexp.Regexp {
	return regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(name), `\*`, "[A-Z]+") + "$")
}
