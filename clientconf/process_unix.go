//go:build unix

package clientconf

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ownGroup starts the command in a process group of its own, and has a
// cancelled context kill that whole group and every process that carries
// the run's mark.
func ownGroup(cmd *exec.Cmd, mark string) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		killDescendants(mark)
		return err
	}
}

// killGroup kills whatever is left of the command's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// maxKillRounds bounds the rounds of killDescendants: a process may fork
// while the one before it is being killed.
const maxKillRounds = 10

// killDescendants kills every process whose environment holds mark (a
// process the command started inherits it, one that left its process
// group or session with setsid too), round after round until none is left.
// It reads /proc (Linux); where there is none, the process group is all it
// can kill.
func killDescendants(mark string) {
	self := os.Getpid()
	for range maxKillRounds {
		pids := marked(mark, self)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// marked returns the processes (but self) whose environment holds mark.
func marked(mark string, self int) []int {
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return nil
	}
	want := []byte(mark)
	var out []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(d + "/environ") // a process of another user cannot be read: not ours
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// signalOf names the signal that ended a process ("SIGSEGV (segmentation
// fault)"), "" when none did.
func signalOf(ps *os.ProcessState) string {
	if ps == nil {
		return ""
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return ""
	}
	sig := ws.Signal()
	name := signalNames[sig]
	if name == "" {
		name = "signal " + strconv.Itoa(int(sig))
	}
	return name + " (" + strings.TrimPrefix(sig.String(), "signal ") + ")"
}

// signalNames are the usual signals' names.
var signalNames = map[syscall.Signal]string{
	syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGHUP: "SIGHUP",
	syscall.SIGILL: "SIGILL", syscall.SIGINT: "SIGINT", syscall.SIGKILL: "SIGKILL", syscall.SIGPIPE: "SIGPIPE",
	syscall.SIGQUIT: "SIGQUIT", syscall.SIGSEGV: "SIGSEGV", syscall.SIGTERM: "SIGTERM", syscall.SIGTRAP: "SIGTRAP",
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2", syscall.SIGALRM: "SIGALRM", syscall.SIGXCPU: "SIGXCPU",
}
