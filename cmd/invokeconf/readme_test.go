package main

import (
	"os"
	"strings"
	"testing"
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
}
