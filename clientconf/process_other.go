//go:build !unix

package clientconf

import "os/exec"

// ownGroup: without process groups, a cancelled context kills the command
// itself (exec's default).
func ownGroup(*exec.Cmd) {}

// killGroup has nothing more to kill without process groups.
func killGroup(*exec.Cmd) {}
