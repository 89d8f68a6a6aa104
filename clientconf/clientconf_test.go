package clientconf

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/internal/junitxml"
)

// The test binary doubles as small clients (helperClient): run with
// CLIENTCONF_TEST_CLIENT set, it is that client instead of the tests.
func TestMain(m *testing.M) {
	if name := os.Getenv("CLIENTCONF_TEST_CLIENT"); name != "" {
		os.Exit(helperClient(name))
	}
	os.Exit(m.Run())
}

func helperClient(name string) int {
	switch name {
	case "hang": // leaves a child behind, then never ends
		child := exec.Command("sleep", "300")
		if err := child.Start(); err != nil {
			fmt.Println(err)
			return 3
		}
		_ = os.WriteFile(os.Getenv("CLIENTCONF_PID_FILE"), []byte(strconv.Itoa(child.Process.Pid)), 0o600)
		fmt.Println("started", child.Process.Pid)
		select {}
	case "leaky": // writes its key, a piece of its secret and escape codes
		k := os.Getenv("INVOKECONF_KEYS_AGENT")
		fmt.Printf("%s\nusing key %s\nsecret piece %s\n\x1b[31mred\x1b[0m\n", strings.Repeat("noise\n", 2000), k, k[len(k)-10:])
		return 0
	case "setsid": // leaves a child in a session of its own, then passes
		child := exec.Command("setsid", "sleep", "300")
		if err := child.Start(); err != nil {
			fmt.Println(err)
			return 3
		}
		_ = os.WriteFile(os.Getenv("CLIENTCONF_PID_FILE"), []byte(strconv.Itoa(child.Process.Pid)), 0o600)
		return 0
	case "killed": // dies of a signal
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	case "secrets": // prints its environment's secrets
		for _, name := range []string{"MY_CI_TOKEN", "AWS_SECRET_ACCESS_KEY", "INNOCENT_NAME", "NAMED_BY_USER", "PLAIN_SETTING"} {
			v := os.Getenv(name)
			fmt.Printf("%s=%s, its end %s\n", name, v, v[max(len(v)-7, 0):])
		}
		return 0
	case "wait": // says it started (a FIFO the test reads), then never ends
		f, err := os.OpenFile(os.Getenv("CLIENTCONF_FIFO"), os.O_WRONLY, 0)
		if err != nil {
			fmt.Println(err)
			return 3
		}
		fmt.Fprintln(f, "started")
		f.Close()
		select {}
	case "env": // shows what it was given
		for _, kv := range os.Environ() {
			if strings.HasPrefix(kv, "INVOKECONF_") && !strings.HasPrefix(kv, "INVOKECONF_KEYS_") {
				fmt.Println(kv)
			}
		}
		return 0
	}
	return 3
}

// helper is a Config running the test binary as the named client.
func helper(name string) Config {
	return Config{Command: []string{os.Args[0], "-test.run=^$"}, Env: append(os.Environ(), "CLIENTCONF_TEST_CLIENT="+name)}
}

var (
	buildOnce sync.Once
	built     map[string]string
	buildErr  error
)

// buildClients builds the naive clients of testdata and the example client.
func buildClients(t *testing.T) map[string]string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "clientconf-clients-")
		if err != nil {
			buildErr = err
			return
		}
		built = map[string]string{}
		for name, pkg := range map[string]string{"naive-split": "./testdata/naive-split", "naive-space": "./testdata/naive-space",
			"goclient": "../examples/goclient"} {
			bin := filepath.Join(dir, name)
			out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
			if err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
				return
			}
			built[name] = bin
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

// clientsAtOnce is how many runs of a client go at once in these tests:
// the clients wait on their scripts' pauses far more than they compute.
const clientsAtOnce = 8

// failedNames are the names of the legal runs a result failed, sorted.
func failedNames(res *Result) []string {
	var out []string
	for _, r := range res.Failed() {
		out = append(out, r.Name)
	}
	sort.Strings(out)
	return out
}

// combinedRuns are the names of the combined runs.
func combinedRuns(t *testing.T) []string {
	t.Helper()
	runs, err := Plan(Config{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range runs {
		if r.Kind == KindCombined {
			out = append(out, r.Name)
		}
	}
	if len(out) < 2 {
		t.Fatalf("want a combined run per member of the widest group, got %v", out)
	}
	return out
}

// TestNaiveClientsFailExactlyTheirVariants: each naive client fails exactly
// the variants it mishandles (and the combined runs, which hold one of
// them each), with the spec's words and the wire example of each; the
// defect runs never fail the run.
func TestNaiveClientsFailExactlyTheirVariants(t *testing.T) {
	t.Parallel()
	bins := buildClients(t)
	combined := combinedRuns(t)
	tests := []struct {
		client string
		want   []string
	}{
		// Splits frames on "\n\n" only: every other line ending breaks it.
		{"naive-split", append([]string{"sse-cr", "sse-crlf", "sse-mixed-endings"}, combined...)},
		// Reads lines that start with "data: " one by one: a data line
		// without the space, and a frame's data over several lines, break it.
		{"naive-space", append([]string{"sse-data-lines", "sse-no-space"}, combined...)},
	}
	for _, tt := range tests {
		t.Run(tt.client, func(t *testing.T) {
			var progress bytes.Buffer
			res, err := Execute(context.Background(), Config{Command: []string{bins[tt.client]}, Defects: []string{"no-close"},
				Parallel: clientsAtOnce, Timeout: time.Minute, Progress: &progress})
			if err != nil {
				t.Fatal(err)
			}
			want := append([]string(nil), tt.want...)
			sort.Strings(want)
			if got := failedNames(res); !slices.Equal(got, want) {
				t.Errorf("failed %v, want exactly %v\n%s", got, want, progress.String())
			}
			if res.ExitCode() != ExitFail {
				t.Errorf("exit code %d", res.ExitCode())
			}
			for _, r := range res.Failed() {
				if r.Spec == "" || !strings.Contains(r.Output, "FAIL: answer") || r.ExitCode != 1 {
					t.Errorf("%s: spec %q, exit %d, output %q", r.Name, r.Spec, r.ExitCode, r.Output)
				}
				if r.Kind == KindVariant && (r.Wire == nil || len(r.Wire.Lines) == 0) {
					t.Errorf("%s: no wire example: %+v", r.Name, r.Wire)
				}
			}
			last := res.Runs[len(res.Runs)-1]
			if last.Kind != KindDefect || last.Name != "no-close" || len(last.Rules) == 0 {
				t.Errorf("the defect run: %+v", last)
			}
			if strings.Count(progress.String(), "\n") != len(res.Runs) || !strings.Contains(progress.String(), "FAIL (exit 1)") {
				t.Errorf("progress:\n%s", progress.String())
			}
		})
	}
}

// TestExampleClientPassesEveryVariant: examples/goclient, written to the
// spec, passes the default server, every variant and every combined group.
func TestExampleClientPassesEveryVariant(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the example client about 45 times")
	}
	bins := buildClients(t)
	var progress bytes.Buffer
	res, err := Execute(context.Background(), Config{Command: []string{bins["goclient"]}, Parallel: clientsAtOnce, NoWire: true,
		Timeout: time.Minute, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if failed := res.Failed(); len(failed) > 0 || res.ExitCode() != ExitPass {
		for _, f := range failed {
			t.Errorf("%s: %s\n%s", f.Name, outcome(f), f.Output)
		}
	}
	if n := len(res.Runs); n != len(combinedRuns(t))+1+len(mustPlanVariants(t)) {
		t.Errorf("%d runs", n)
	}
}

func mustPlanVariants(t *testing.T) []string {
	runs, err := Plan(Config{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range runs {
		if r.Kind == KindVariant {
			out = append(out, r.Name)
		}
	}
	return out
}

// TestTimeoutKillsTheProcessGroup: a command that outlasts its timeout is
// killed with everything it started, and the run says so.
func TestTimeoutKillsTheProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cfg := helper("hang")
	cfg.Env = append(cfg.Env, "CLIENTCONF_PID_FILE="+pidFile)
	// Long enough for the test binary, run as the client, to start its
	// child on a loaded machine (race-built, it took over 500 ms there).
	cfg.Variants, cfg.Timeout, cfg.NoWire = []string{}, 3*time.Second, true
	res, err := Execute(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	run := res.Runs[0]
	if run.Verdict != Timeout || !strings.Contains(run.Problem, "everything it started were killed") || res.ExitCode() != ExitFail {
		t.Fatalf("run: %+v", run)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	// The child was killed with the group; it is gone once reaped.
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the command's child %d outlived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether a process runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// TestOutputIsRedactedCutAndEscaped: the tail of the output hides the key
// and every piece of its secret, keeps the end, and escapes control bytes.
func TestOutputIsRedactedCutAndEscaped(t *testing.T) {
	cfg := helper("leaky")
	cfg.Variants, cfg.NoWire, cfg.TailBytes = []string{}, true, 300
	res, err := Execute(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := fixtures.Reference()
	out := res.Runs[0].Output
	secret := ref.Keys.Agent[strings.LastIndex(ref.Keys.Agent, "-")+1:]
	if strings.Contains(out, secret[:8]) || strings.Contains(out, secret[len(secret)-8:]) || strings.Contains(out, "\x1b") {
		t.Errorf("output holds a secret or an escape code:\n%q", out)
	}
	if !strings.Contains(out, "$INVOKECONF_KEYS_AGENT") || !strings.Contains(out, `\x1b[31mred`) ||
		!strings.HasPrefix(out, "[... ") || len(out) > 400 {
		t.Errorf("output tail:\n%q", out)
	}
}

// TestCommandGetsTheServedProfile: the command sees the served profile's
// INVOKECONF_* variables, and none of the caller's.
func TestCommandGetsTheServedProfile(t *testing.T) {
	cfg := helper("env")
	cfg.Env = append(cfg.Env, "INVOKECONF_BASE_URL=http://stale.example", "INVOKECONF_NOT_A_FIELD=x")
	cfg.Variants, cfg.NoWire = []string{"uuid-seed-ids"}, true
	res, err := Execute(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	def, uuid := res.Runs[0].Output, res.Runs[1].Output
	for _, out := range []string{def, uuid} {
		if !strings.Contains(out, "INVOKECONF_BASE_URL=http://127.0.0.1:") || strings.Contains(out, "stale") ||
			strings.Contains(out, "NOT_A_FIELD") || !strings.Contains(out, "INVOKECONF_AGENTS_MAIN_ID=") {
			t.Errorf("environment:\n%s", out)
		}
	}
	if !strings.Contains(def, "INVOKECONF_AGENTS_MAIN_ID=agt_main01") || strings.Contains(uuid, "agt_main01") {
		t.Errorf("the uuid-seed-ids run does not get its own IDs:\n%s", uuid)
	}
}

// TestBadUsage: what cannot run is a UsageError that says why, before any
// run: a bare name not in PATH, a path that is missing, not executable or a
// folder (relative to Dir).
func TestBadUsage(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plain.sh"), []byte("exit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{}, "no command"},
		{Config{Command: []string{"no-such-command-anywhere"}}, "no-such-command-anywhere"},
		{Config{Command: []string{"./missing.sh"}, Dir: dir}, `"./missing.sh": no such file`},
		{Config{Command: []string{"./plain.sh"}, Dir: dir}, `"./plain.sh" is not executable`},
		{Config{Command: []string{filepath.Join(dir, "plain.sh")}}, "is not executable"},
		{Config{Command: []string{dir}}, "is a directory"},
		{Config{Command: []string{"true"}, Variants: []string{"sse-crfl"}}, "did you mean sse-crlf?"},
		{Config{Command: []string{"true"}, Defects: []string{"no-clos"}}, "did you mean no-close?"},
	}
	for _, tt := range tests {
		_, err := Execute(context.Background(), tt.cfg)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want a usage error saying %q", tt.cfg, err, tt.want)
		}
	}
}

// TestCompatibleGroups: every variant is in some combined run, and no run
// holds two variants of a group.
func TestCompatibleGroups(t *testing.T) {
	seen := map[string]bool{}
	for _, set := range CompatibleGroups() {
		groups := map[string]string{}
		for _, n := range set {
			seen[n] = true
			for _, v := range fakeserverVariants() {
				if v.Name == n && v.Group != "" {
					if other, dup := groups[v.Group]; dup {
						t.Errorf("%s and %s of group %s in one run", other, n, v.Group)
					}
					groups[v.Group] = n
				}
			}
		}
	}
	for _, v := range fakeserverVariants() {
		if !seen[v.Name] {
			t.Errorf("variant %s is in no combined run", v.Name)
		}
	}
}

// TestReports: the three reports of a failed run agree with the verdict
// and show the failure with its spec words and the output, escaped.
func TestReports(t *testing.T) {
	res := &Result{Command: "./naive <client>", Started: time.Now(), Runs: []Run{
		{Name: "default", Kind: KindDefault, Verdict: Pass},
		{Name: "sse-crlf", Kind: KindVariant, Variants: []string{"sse-crlf"}, Spec: `"an id: line" <grammar>`, Verdict: Fail, ExitCode: 1,
			Output: "FAIL: answer \"\" </pre><script>", Wire: &Wire{Probe: "POST", Lines: []DiffLine{{"-", `data: {}\n`}, {"+", `data: {}\r\n`}}}},
		{Name: "no-close", Kind: KindDefect, Defects: []string{"no-close"}, Rules: []string{"SSE-05"}, Verdict: Fail, ExitCode: 2},
	}}
	dir := t.TempDir()
	paths, err := WriteReports(dir, res)
	if err != nil || len(paths) != 3 {
		t.Fatal(paths, err)
	}
	var s summary
	b, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.ExitCode != 1 || !slices.Equal(s.Failed, []string{"sse-crlf"}) || s.Mode != "clients" || len(s.Runs) != 3 {
		t.Errorf("summary: %s", b)
	}
	var j junitxml.Suites
	b, _ = os.ReadFile(filepath.Join(dir, JUnitFile))
	if err := xml.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if j.Failures != 1 || j.Tests != 3 || len(j.Suites) != 2 || j.Suites[1].Failures != 0 ||
		!strings.Contains(j.Suites[0].Cases[1].Failure.Text, "<grammar>") {
		t.Errorf("junit: %s", b)
	}
	b, _ = os.ReadFile(filepath.Join(dir, HTMLFile))
	if strings.Contains(string(b), "<script>") || !strings.Contains(string(b), "&lt;/pre&gt;&lt;script&gt;") ||
		!strings.Contains(string(b), `data: {}\r\n`) {
		t.Errorf("html does not escape or lacks the wire example")
	}
	// Failures first, as run's report has them: the failed variant comes
	// before the default run that passed, then the defect run.
	failed, passed, defect := strings.Index(string(b), "<b>sse-crlf</b>"), strings.Index(string(b), "<b>default</b>"), strings.Index(string(b), "<b>no-close</b>")
	if failed < 0 || !(failed < passed && passed < defect) {
		t.Errorf("report.html does not list the failed run first: sse-crlf at %d, default at %d, no-close at %d", failed, passed, defect)
	}
	var con bytes.Buffer
	WriteConsole(&con, res, paths)
	for _, w := range []string{"FAILED variant sse-crlf: exit 1", "the spec allows it:", "+ data: {}\\r\\n", "no-close", "exit 2 (breaks SSE-05)",
		"FAILED: the client passed 1 of 2 legal runs; failed: sse-crlf"} {
		if !strings.Contains(con.String(), w) {
			t.Errorf("console lacks %q:\n%s", w, con.String())
		}
	}
}

func fakeserverVariants() []fakeserver.Variant { return fakeserver.Variants() }

// TestNothingOutlivesItsRun: a child the command left in a session (and
// process group) of its own, with setsid, is killed when the run ends.
func TestNothingOutlivesItsRun(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc: only the process group is killed here")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	cfg := helper("setsid")
	cfg.Env = append(cfg.Env, "CLIENTCONF_PID_FILE="+pidFile)
	cfg.Variants, cfg.NoWire = []string{}, true
	res, err := Execute(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if run := res.Runs[0]; run.Verdict != Pass {
		t.Fatalf("run: %+v", run)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	defer syscall.Kill(pid, syscall.SIGKILL) // should it have survived
	// Killed when the run ended; gone once its new parent reaps it.
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the child %d, in a session of its own, outlived its run", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDeathBySignalIsNamed: a command a signal ended fails, and its
// verdict names the signal.
func TestDeathBySignalIsNamed(t *testing.T) {
	cfg := helper("killed")
	cfg.Variants, cfg.NoWire = []string{}, true
	res, err := Execute(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	run := res.Runs[0]
	if run.Verdict != Fail || run.Signal != "SIGKILL (killed)" || outcome(run) != "killed by SIGKILL (killed)" || res.ExitCode() != ExitFail {
		t.Fatalf("run: verdict %s, signal %q, outcome %q", run.Verdict, run.Signal, outcome(run))
	}
	var console bytes.Buffer
	WriteConsole(&console, res, nil)
	if !strings.Contains(console.String(), "killed by SIGKILL") {
		t.Errorf("the console does not name the signal:\n%s", console.String())
	}
}

// TestEnvironmentSecretsStayOutOfTheReports: values of the environment
// that look like secrets, by name or by shape, and those of the variables
// the user names, are hidden in the output every report shows (and the
// command line), as $NAME; other values stay.
func TestEnvironmentSecretsStayOutOfTheReports(t *testing.T) {
	secrets := map[string]string{"MY_CI_TOKEN": "ci-tok3n-4711-qwerty", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEX",
		"INNOCENT_NAME": "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "NAMED_BY_USER": "short1"}
	cfg := helper("secrets")
	for k, v := range secrets {
		cfg.Env = append(cfg.Env, k+"="+v)
	}
	cfg.Env = append(cfg.Env, "PLAIN_SETTING=visible-value-42")
	cfg.Command = append(cfg.Command, "--flag="+secrets["MY_CI_TOKEN"])
	cfg.Variants, cfg.NoWire, cfg.SecretEnv = []string{}, true, []string{"NAMED_BY_USER"}
	res, err := Execute(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths, err := WriteReports(dir, res)
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	all.WriteString(res.Command)
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		all.Write(b)
	}
	var console bytes.Buffer
	WriteConsole(&console, res, paths)
	all.WriteString(console.String())
	text := all.String()
	for name, v := range secrets {
		if strings.Contains(text, v) || len(v) >= 12 && strings.Contains(text, v[len(v)-7:]) {
			t.Errorf("a report holds %s's value or its end", name)
		}
	}
	out := res.Runs[0].Output
	for _, want := range []string{"MY_CI_TOKEN=$MY_CI_TOKEN", "INNOCENT_NAME=$INNOCENT_NAME", "NAMED_BY_USER=$NAMED_BY_USER", "PLAIN_SETTING=visible-value-42"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}

// TestInterruptIsNoVerdict: a run the harness is stopped in (Ctrl-C,
// SIGTERM: its context ends) is interrupted, not the client's failure; the
// runs after it are not run; the exit code is 3, and the console says so.
func TestInterruptIsNoVerdict(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO:", err)
	}
	cfg := helper("wait")
	cfg.Env = append(cfg.Env, "CLIENTCONF_FIFO="+fifo)
	cfg.Variants, cfg.NoWire = []string{"sse-crlf"}, true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		res *Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := Execute(ctx, cfg)
		done <- result{res, err}
	}()
	f, err := os.Open(fifo) // until the client opens it: it runs
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(f)
	f.Close()
	cancel()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	res := r.res
	if !res.Interrupted || res.ExitCode() != ExitHarness || len(res.Failed()) != 0 {
		t.Fatalf("interrupted %v, exit %d, failed %v", res.Interrupted, res.ExitCode(), failedNames(res))
	}
	for _, run := range res.Runs {
		if run.Verdict != Interrupted {
			t.Errorf("%s: %s (%s), want interrupted", run.Name, run.Verdict, run.Problem)
		}
	}
	var console bytes.Buffer
	WriteConsole(&console, res, nil)
	if c := console.String(); !strings.Contains(c, "INTERRUPTED: interrupted: the client passed 0 of 2 legal runs; 2 not judged") || strings.Contains(c, "FAIL") {
		t.Errorf("console:\n%s", c)
	}
}
