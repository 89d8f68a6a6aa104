//go:build !unix

package clientconf

import (
	"os"
	"os/exec"
)

// ownGroup: without process groups, a cancelled context kills the command
// itself (exec's default).
func ownGroup(*exec.Cmd, string) {}

// killGroup has nothing more to kill without process groups.
func killGroup(*exec.Cmd) {}

// killDescendants cannot find the command's descendants here.
func killDescendants(string) {}

// signalOf: no signals here.
func signalOf(*os.ProcessState) string { return "" }
