package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/fixtures"
)

func runCLI(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := run(context.Background(), args, &out, &out)
	return code, out.String()
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no command", nil, 2, "Usage"},
		{"unknown command", []string{"frobnicate"}, 2, "unknown command"},
		{"bad flag", []string{"run", "--nope"}, 2, "unknown flag --nope"},
		{"missing profile", []string{"run", "--profile", filepath.Join(dir, "absent.yaml")}, 2, "read profile"},
		{"unknown defect", []string{"run", "--defect", "nope", "--tags", "@ERR-02"}, 2, "unknown defect"},
		{"zero scenarios", []string{"run", "--tags", "@NO-SUCH-TAG", "--out", dir}, 2, "leaves no scenario to run"},
		{"only slow scenarios, quick", []string{"run", "--rules", "SSE-04", "--quick", "--out", dir}, 2, "drop --quick"},
		{"passing rule", []string{"run", "--tags", "@ERR-02", "--out", dir}, 0, "total"},
		{"broken rule", []string{"run", "--defect", "missing-key-403", "--tags", "@ERR-02", "--out", dir}, 1, "FAIL  ERR-02 MUST"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(out, tt.want) {
				t.Fatalf("exit %d, want %d; output lacks %q?\n%s", code, tt.code, tt.want, out)
			}
		})
	}
	for _, f := range []string{"junit.xml", "cucumber.json"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("report %s not written: %v", f, err)
		}
	}
}

// TestEmbeddedRunSaysHowToReplay: the embedded server is gone after the
// run, so the console names the command that starts the same one, on the
// same port with the same defects, for the reproduce commands; the report
// names the target once, without "at ... at".
func TestEmbeddedRunSaysHowToReplay(t *testing.T) {
	dir := t.TempDir()
	code, out := runCLI(t, "run", "--defect", "missing-key-403", "--tags", "@ERR-02", "--out", dir)
	m := regexp.MustCompile(`invokeconf: testing http://(127\.0\.0\.1:\d+) \(the embedded reference server with defects missing-key-403\)\n`).FindStringSubmatch(out)
	if code != 1 || m == nil {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if want := "start the same one:\n  invokeconf serve --addr " + m[1] + " --defect missing-key-403\n"; !strings.Contains(out, want) {
		t.Errorf("the console lacks %q:\n%s", want, out)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	target := regexp.MustCompile(`<dd id="target">([^<]*)</dd>`).FindSubmatch(html)
	if target == nil || strings.Count(string(target[1]), " at ") > 1 || !strings.Contains(string(target[1]), m[1]) {
		t.Errorf("the report's target line: %q", target)
	}
}

func TestBadProfileFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("baseURL: http://127.0.0.1:1\nkeyz: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, "run", "--profile", bad)
	if code != 2 || !strings.Contains(out, "keyz") {
		t.Fatalf("exit %d, want 2 naming the unknown field:\n%s", code, out)
	}
}

// TestServePrintsAWorkingCurl: `invokeconf serve` prints its URL, keys and a
// curl command that works when pasted, and writes the profile it serves.
func TestServePrintsAWorkingCurl(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "served.yaml")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--quiet", "--write-profile", prof}, pw, io.Discard)
		pw.Close()
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d", code)
		}
	}()
	lines := make(chan string)
	go func() {
		buf := make([]byte, 0, 4096)
		tmp := make([]byte, 1024)
		for {
			n, err := pr.Read(tmp)
			buf = append(buf, tmp[:n]...)
			for {
				i := bytes.IndexByte(buf, '\n')
				if i < 0 {
					break
				}
				lines <- string(buf[:i])
				buf = buf[i+1:]
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	var curl string
	var seen []string
	timeout := time.After(10 * time.Second)
	for curl == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("serve stopped before printing a curl command")
			}
			seen = append(seen, l)
			if strings.HasPrefix(strings.TrimSpace(l), "curl ") {
				curl = strings.TrimSpace(l)
			}
		case <-timeout:
			t.Fatal("serve printed no curl command within 10 s")
		}
	}
	go func() {
		for range lines {
		}
	}()
	// Every ID a scenario reads is printed, threads.main and projects.other
	// among them.
	ref, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	printed := strings.Join(seen, "\n")
	for _, id := range []string{ref.Agents.Main.ID, ref.Agents.Other.ID, ref.Agents.Restricted.ID, ref.Projects.Main.ID,
		ref.Projects.Other.ID, ref.Threads.Main.ID, ref.NonAgentID} {
		if id == "" || !strings.Contains(printed, id) {
			t.Errorf("serve does not print %q:\n%s", id, printed)
		}
	}
	if st, err := os.Stat(prof); err != nil || st.Size() == 0 {
		t.Fatalf("profile not written: %v", err)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Logf("curl is not installed; checked the command's shape only: %s", curl)
		if !regexp.MustCompile(`^curl .*Authorization: Bearer sk-svc-.* http://127\.0\.0\.1:\d+/api/invoke/\S+$`).MatchString(curl) {
			t.Fatalf("unexpected curl command %q", curl)
		}
		return
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	out, err := exec.CommandContext(cctx, "sh", "-c", curl).CombinedOutput()
	if err != nil {
		t.Fatalf("the printed curl command failed: %v\n%s", err, out)
	}
	for _, want := range []string{"event: start", `"content":"Hello, agent"`, "event: close"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("curl output lacks %q:\n%s", want, out)
		}
	}
}
