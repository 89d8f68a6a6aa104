package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/clientconf"
	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/invokeconftest"
)

const testAdminKey = "admin-key-of-the-cli-test"

// startServe runs `invokeconf serve` with args in the background and
// returns the base URL it prints; it stops when the test ends.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--quiet"}, args...), pw, io.Discard)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d", code)
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		url := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
		for sc.Scan() {
			if m := url.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	select {
	case u, ok := <-found:
		if !ok {
			t.Fatal("serve stopped before printing its URL")
		}
		return u
	case <-time.After(10 * time.Second):
		t.Fatal("serve printed no URL within 10 s")
	}
	return ""
}

// TestServeAdminKeyWithTheExampleClient: examples/goclient, a client
// written to the spec, passes its own tests against a remote `invokeconf
// serve --admin-key` as it starts, and again after variants were switched
// and the seed reset at run time.
func TestServeAdminKeyWithTheExampleClient(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "goclient")
	if out, err := exec.Command("go", "build", "-o", bin, "../../examples/goclient").CombinedOutput(); err != nil {
		t.Fatalf("go build examples/goclient: %v\n%s", err, out)
	}
	base := startServe(t, "--admin-key", testAdminKey, "--variant", "sse-crlf", "--variant", "sse-no-space")
	srv, err := invokeconftest.Connect(base, testAdminKey)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	client := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin)
		cmd.Env = append(os.Environ(), srv.Env()...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("examples/goclient: %v\n%s", err, out)
		}
	}
	client()
	if err := srv.SwitchVariants(true, "sse-comments"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Reset(); err != nil {
		t.Fatal(err)
	}
	client()
	reqs, err := srv.Requests(0)
	if err != nil || len(reqs) == 0 || strings.Join(reqs[0].Variants, ",") != "sse-comments,sse-crlf,sse-no-space" {
		t.Errorf("requests after the reset: %v %+v", err, reqs)
	}
	// The admin routes refuse a service key.
	req, _ := http.NewRequest("GET", base+fakeserver.AdminPrefix+"switches", nil)
	req.Header.Set("Authorization", "Bearer "+srv.Key("wildcard"))
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a service key on the admin routes: %d", resp.StatusCode)
	}
}

// TestServeAdminKeyRefused: an admin key that is, or looks like, a service
// key stops serve at start-up with exit 2; without --admin-key there are no
// admin routes.
func TestServeAdminKeyRefused(t *testing.T) {
	for _, key := range []string{"sk-svc-alice-kagent-3f9a1c7e5b2d4860", "sk-svc-admin-x-0123456789", "short"} {
		code, _, stderr := invoke(t, "serve", "--addr", "127.0.0.1:0", "--quiet", "--admin-key", key)
		if code != 2 || !strings.Contains(stderr, "admin key") || strings.Contains(stderr, "3f9a1c7e5b2d4860") {
			t.Errorf("--admin-key %q: exit %d: %s", key, code, stderr)
		}
	}
	base := startServe(t)
	if _, err := invokeconftest.Connect(base, testAdminKey); err == nil || !strings.Contains(err.Error(), "has no admin routes") {
		t.Errorf("Connect to a serve without --admin-key: %v", err)
	}
}

// TestServeAdminKeyOutOfSight: the admin key can come from a file (its
// first line) or from INVOKECONF_ADMIN_KEY instead of the command line,
// which other users see (ps); a file that cannot be read, one without a
// key, and both flags at once are bad usage.
func TestServeAdminKeyOutOfSight(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "admin.key")
	if err := os.WriteFile(file, []byte(testAdminKey+"\n# a comment\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if srv, err := invokeconftest.Connect(startServe(t, "--admin-key-file", file), testAdminKey); err != nil {
		t.Errorf("--admin-key-file: %v", err)
	} else {
		srv.Close()
	}
	var key string
	lookup := func(name string) (string, bool) {
		return map[string]string{adminKeyEnv: " from-the-env-123 "}[name], name == adminKeyEnv
	}
	if err := readAdminKey(&key, "", lookup); err != nil || key != "from-the-env-123" {
		t.Errorf("%s: %q %v", adminKeyEnv, key, err)
	}
	key = "given"
	if err := readAdminKey(&key, "", lookup); err != nil || key != "given" {
		t.Errorf("--admin-key beside %s: %q %v", adminKeyEnv, key, err)
	}
	empty := filepath.Join(dir, "empty.key")
	_ = os.WriteFile(empty, []byte("\n"), 0o600)
	for _, args := range [][]string{{"--admin-key-file", filepath.Join(dir, "absent")}, {"--admin-key-file", empty},
		{"--admin-key-file", file, "--admin-key", testAdminKey}} {
		code, _, stderr := invoke(t, append([]string{"serve", "--addr", "127.0.0.1:0", "--quiet"}, args...)...)
		if code != 2 || !strings.Contains(stderr, "admin-key") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}

// TestClientsCommand: `invokeconf clients -- ./naive-client` fails exactly
// the variants that client mishandles (sse-no-space, sse-data-lines, and
// the compatible groups, each of which holds one), quoting the spec's words and what each changes on the
// wire, writes the three reports, and exits 1.
func TestClientsCommand(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "naive-space")
	if out, err := exec.Command("go", "build", "-o", bin, "../../clientconf/testdata/naive-space").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := t.TempDir()
	code, stdout, stderr := invoke(t, "clients", "--out", out, "--parallel", "2", "--defects", "no-close", "--", bin)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s\n%s", code, stdout, stderr)
	}
	var spec string
	for _, v := range fakeserver.Variants() {
		if v.Name == "sse-no-space" {
			spec = v.Spec
		}
	}
	// The client reads lines starting "data: " one by one: it fails a data
	// line without the space (sse-no-space) and data over several lines
	// (sse-data-lines).
	groups := clientconf.CompatibleGroups()
	for _, want := range []string{"FAILED variant sse-no-space: exit 1", "FAILED variant sse-data-lines: exit 1", "the spec allows it: " + spec, "+ data:{",
		fmt.Sprintf("the client passed %d of %d legal runs", len(fakeserver.Variants())-1, len(fakeserver.Variants())+1+len(groups)),
		"holds sse-no-space, sse-data-lines, which fail alone too",
		"defect    no-close", "(breaks SSE-05)", "reports: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the output lacks %q:\n%s", want, stdout)
		}
	}
	if n := strings.Count(stdout, "\nFAILED "); n != 2+len(groups) {
		t.Errorf("%d failed runs shown, want sse-no-space, sse-data-lines and the %d groups:\n%s", n, len(groups), stdout)
	}
	for _, f := range []string{"report.html", "junit.xml", "summary.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

// TestClientsUsage: bad usage is exit 2 with a message that helps.
func TestClientsUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"clients"}, "no command"},
		{[]string{"clients", "--"}, "no command"},
		{[]string{"clients", "--variants", "sse-crfl", "--", "true"}, "did you mean sse-crlf?"},
		{[]string{"clients", "--defects", "no-clos", "--", "true"}, "did you mean no-close?"},
		{[]string{"clients", "--", "no-such-command-anywhere"}, "no-such-command-anywhere"},
		{[]string{"clients", "--", "./no-such-script.sh"}, `command "./no-such-script.sh": no such file`},
		{[]string{"clients", "--timeout", "soon", "--", "true"}, "invalid value"},
	}
	for _, tt := range tests {
		// One line on stderr, nothing run: the command is checked first.
		code, stdout, stderr := invoke(t, tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%v: exit %d:\n%s\n%s", tt.args, code, stdout, stderr)
		}
	}
	code, stdout, _ := invoke(t, "help", "clients")
	for _, want := range []string{"Usage: invokeconf clients [flags] -- COMMAND", "--defects", "--timeout", "INVOKECONF_", "Exit codes: 0"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("help clients lacks %q:\n%s", want, stdout)
		}
	}
}

// TestClientsDoc: docs/clients.md names every admin route and every flag of
// clients, and its CI job reads only, with every action pinned by commit.
func TestClientsDoc(t *testing.T) {
	b, err := os.ReadFile("../../docs/clients.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, route := range []string{"GET /_invokeconf/admin/switches", "PATCH /_invokeconf/admin/switches", "PUT /_invokeconf/admin/switches",
		"DELETE /_invokeconf/admin/switches", "POST /_invokeconf/admin/reset", "GET /_invokeconf/admin/requests", "GET /_invokeconf/admin/profile"} {
		if !strings.Contains(doc, "`"+route) {
			t.Errorf("docs/clients.md does not name %s", route)
		}
	}
	// And every route the server has: its index lists them.
	srv := invokeconftest.NewServer(t, invokeconftest.WithAdminKey(testAdminKey))
	req, _ := http.NewRequest("GET", srv.URL+fakeserver.AdminPrefix, nil)
	req.Header.Set("Authorization", "Bearer "+testAdminKey)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var index struct{ Routes []string }
	err = json.NewDecoder(resp.Body).Decode(&index)
	resp.Body.Close()
	if err != nil || len(index.Routes) == 0 {
		t.Fatalf("admin index: %v %+v", err, index)
	}
	for _, route := range index.Routes {
		if !strings.Contains(doc, "`"+route) {
			t.Errorf("docs/clients.md does not name the route %s", route)
		}
	}
	_, stdout, _ := invoke(t, "clients", "-h")
	for _, m := range regexp.MustCompile(`(?m)^  (--[a-z-]+)`).FindAllStringSubmatch(stdout, -1) {
		if !strings.Contains(doc, "`"+m[1]) {
			t.Errorf("docs/clients.md does not document %s", m[1])
		}
	}
	uses := regexp.MustCompile(`uses: (\S+)`).FindAllStringSubmatch(doc, -1)
	if len(uses) == 0 || !strings.Contains(doc, "permissions:\n  contents: read") {
		t.Errorf("the CI job sets no read-only permissions or uses no action")
	}
	for _, u := range uses {
		if !regexp.MustCompile(`@[0-9a-f]{40}$`).MatchString(u[1]) {
			t.Errorf("action %s is not pinned by commit", u[1])
		}
	}
}
