package clientconf

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/invokeconf/invokeconf/profile"
)

// waitDelay is how long a finished or killed command's pipes may stay open
// (held by a process it left behind) before they are closed.
const waitDelay = 2 * time.Second

// runCommand runs argv with env in dir, its stdout and stderr into out, for
// at most timeout. The command runs in a process group of its own, killed
// whole on timeout or when ctx ends, and once more after it exits so that
// nothing it started outlives its run. It returns the exit code (-1 when a
// signal ended it), whether the timeout killed it, and an error when it
// could not be started or waited for.
func runCommand(ctx context.Context, argv []string, dir string, env []string, out *tail, timeout time.Duration) (int, bool, error) {
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = waitDelay
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return -1, false, fmt.Errorf("could not start %s: %w", argv[0], err)
	}
	err := cmd.Wait()
	killGroup(cmd)
	timedOut := errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, false, nil
	case errors.As(err, &exit):
		return exit.ExitCode(), timedOut, nil
	case timedOut:
		return -1, true, nil
	case errors.Is(err, exec.ErrWaitDelay):
		// It exited, but left a process holding its output open.
		return cmd.ProcessState.ExitCode(), false, nil
	}
	return -1, false, fmt.Errorf("waiting for %s: %w", argv[0], err)
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

// text returns the tail: the kept output with keys redacted, then cut to
// its last keep bytes (at a line start where one is near), with a note of
// what was left out before it.
func (t *tail) text(red *profile.Redactor) string {
	t.mu.Lock()
	s, dropped := string(t.buf), t.dropped
	t.mu.Unlock()
	s = red.Redact(s)
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
