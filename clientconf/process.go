package clientconf

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// waitDelay is how long a finished or killed command's pipes may stay open
// (held by a process it left behind) before they are closed.
const waitDelay = 2 * time.Second

// runCommand runs argv with env in dir, its stdout and stderr into out, for
// at most timeout. The command runs in a process group of its own, killed
// whole on timeout or when ctx ends; once it has exited, every process it
// started is killed, those that left its group (setsid) included
// (killDescendants), so that nothing it started outlives its run. It
// returns the exit code (-1 when a signal ended it) and the signal's name,
// whether the timeout killed it, and an error when it could not be
// started or waited for.
func runCommand(ctx context.Context, argv []string, dir string, env []string, out *tail, timeout time.Duration) (int, string, bool, error) {
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	mark := newRunMark()
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, append(env, mark)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = waitDelay
	ownGroup(cmd, mark)
	if err := cmd.Start(); err != nil {
		return -1, "", false, fmt.Errorf("could not start %s: %w", argv[0], err)
	}
	err := cmd.Wait()
	killGroup(cmd)
	killDescendants(mark)
	timedOut := errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, "", false, nil
	case errors.As(err, &exit):
		return exit.ExitCode(), signalOf(exit.ProcessState), timedOut, nil
	case timedOut:
		return -1, "", true, nil
	case errors.Is(err, exec.ErrWaitDelay):
		// It exited, but left a process holding its output open.
		return cmd.ProcessState.ExitCode(), signalOf(cmd.ProcessState), false, nil
	}
	return -1, "", false, fmt.Errorf("waiting for %s: %w", argv[0], err)
}

// runMarkVar is the variable every run's command gets with a value of its
// own: every process it starts inherits it, so the harness finds them all
// at the end, those that left its process group too.
const runMarkVar = "_INVOKECONF_CLIENTS_RUN"

// newRunMark returns a runMarkVar=value no other run has.
func newRunMark() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return runMarkVar + "=" + hex.EncodeToString(b[:])
}

// maxKept bounds the raw output a tail keeps before it is redacted and cut.
const maxKept = 64 << 10

// tail keeps the last bytes a command writes, for its verdict.
type tail struct {
	mu      sync.Mutex
	keep    int
	buf     []byte
	dropped int64
}

func newTail(keep int) *tail { return &tail{keep: keep} }

// Write implements io.Writer.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - maxKept; over > 0 {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// text returns the tail: the kept output with keys and secrets redacted
// (redact), then cut to its last keep bytes (at a line start where one is
// near), with a note of what was left out before it.
func (t *tail) text(redact func(string) string) string {
	t.mu.Lock()
	s, dropped := string(t.buf), t.dropped
	t.mu.Unlock()
	s = redact(s)
	if over := len(s) - t.keep; over > 0 {
		cut := over
		if i := strings.IndexByte(s[cut:], '\n'); i >= 0 && i < 200 {
			cut += i + 1
		}
		dropped += int64(cut)
		s = s[cut:]
	}
	if dropped > 0 {
		return fmt.Sprintf("[... %d bytes before]\n%s", dropped, s)
	}
	return s
}
