package reports

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// browserOut keeps the page and screenshots the browser test looked at (a
// CI artifact; reports/out is ignored by git).
const browserOut = "out/browser-test"

// chromium finds Debian's chromium. Without it the test is skipped, except
// in CI (CI set), where .ci/run installs it and the test must run.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed, and CI must run the browser test: .ci/run installs it with apt-get install -y chromium")
	}
	t.Skip("chromium is not installed (apt-get install chromium); CI runs this test")
	return ""
}

// TestReportInChromium opens the certification report of a run against a
// server with defects in real headless chromium and checks what a person
// sees: the page renders, the summary is on the first screen without
// scrolling, a failure's details open on a click and show the spec sentence
// and a curl command, and nothing is fetched from the network.
func TestReportInChromium(t *testing.T) {
	exe := chromium(t)
	f := defectRun(t)
	if err := os.MkdirAll(browserOut, 0o755); err != nil {
		t.Fatal(err)
	}
	page, err := filepath.Abs(filepath.Join(browserOut, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	var html strings.Builder
	if err := WriteHTML(&html, f.rep); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, []byte(html.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profileDir(t)),
		chromedp.WindowSize(1280, 800),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()

	var mu sync.Mutex
	var requests, logs []string
	listen := chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			requests = append(requests, e.Request.URL)
		case *log.EventEntryAdded:
			logs = append(logs, fmt.Sprintf("%s %s: %s", e.Entry.Level, e.Entry.Source, e.Entry.Text))
		}
	})
	if listen != nil {
		t.Fatalf("start chromium and listen to it: %v", listen)
	}
	if _, err := chromedp.Call(bctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(bctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	url := "file://" + page
	if err := chromedp.Do(bctx,
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.ID("summary")),
	); err != nil {
		t.Fatalf("open the report in chromium: %v", err)
	}

	// The summary: on the first screen, at two common laptop sizes.
	type box struct {
		Top, Bottom, Width, Height, ScrollWidth float64
		Text                                    string
	}
	for _, vp := range [][2]int64{{1280, 800}, {1024, 768}} {
		if err := chromedp.Do(bctx, chromedp.EmulateViewport(vp[0], vp[1])); err != nil {
			t.Fatal(err)
		}
		b, err := chromedp.Run(bctx, chromedp.Evaluate[box](`(() => {
			window.scrollTo(0, 0);
			const s = document.getElementById('summary'), r = s.getBoundingClientRect();
			return {Top: r.top, Bottom: r.bottom, Width: innerWidth, Height: innerHeight,
			        ScrollWidth: document.documentElement.scrollWidth, Text: s.innerText};
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		if b.Top < 0 || b.Bottom > b.Height || b.ScrollWidth > b.Width {
			t.Errorf("%dx%d: the summary spans %.0f..%.0f px of a %.0f px high window (page %.0f px wide): not visible without scrolling",
				vp[0], vp[1], b.Top, b.Bottom, b.Height, b.ScrollWidth)
		}
		want := []string{"FAIL", f.rep.Headline, "Target", f.rep.Target, "Harness", f.rep.Harness, "Date",
			f.rep.Started.Format("2006-01-02"), "Profile", "3 fail", "1 warning"}
		for _, a := range f.rep.Areas {
			want = append(want, a.Area)
		}
		for _, w := range want {
			if !strings.Contains(b.Text, w) {
				t.Errorf("%dx%d: the summary does not show %q; it reads:\n%s", vp[0], vp[1], w, b.Text)
			}
		}
	}
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	writeArtifact(t, "summary.png", shot)

	// A failure: closed at first, open after a click on its summary line,
	// then showing the rule's spec sentence and a curl command.
	type details struct {
		Open, CurlShown, ActualShown bool
		Title, Spec, Curl            string
		CurlHeight                   float64
	}
	read := `(() => {
		const d = document.querySelector('details.failure');
		const c = d.querySelector('pre.curl'), s = d.querySelector('blockquote.spec');
		const shown = e => e.checkVisibility({contentVisibilityAuto: true, visibilityProperty: true, opacityProperty: true});
		return {Open: d.open, Title: d.querySelector('summary').innerText, Spec: s.innerText,
		        Curl: c.innerText, CurlShown: shown(c), CurlHeight: c.getBoundingClientRect().height,
		        ActualShown: shown(d.querySelector('pre.actual'))};
	})()`
	before, err := chromedp.Run(bctx, chromedp.Evaluate[details](read))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS("details.failure > summary"), chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	after, err := chromedp.Run(bctx, chromedp.Evaluate[details](read))
	if err != nil {
		t.Fatal(err)
	}
	first := f.rep.Failures[0]
	if before.Open || before.CurlShown {
		t.Errorf("before the click: open %v, curl shown %v; want it closed", before.Open, before.CurlShown)
	}
	if !after.Open || !after.CurlShown || after.CurlHeight < 20 || !after.ActualShown {
		t.Errorf("after the click: open %v, curl shown %v (%v px high), actual shown %v; want it open and shown",
			after.Open, after.CurlShown, after.CurlHeight, after.ActualShown)
	}
	if !strings.Contains(after.Title, first.Rules[0].ID) || !strings.Contains(after.Spec, first.Rules[0].Spec) {
		t.Errorf("the failure reads %q with spec %q; want rule %s and its spec sentence", after.Title, after.Spec, first.Rules[0].ID)
	}
	if !strings.HasPrefix(after.Curl, "curl ") || !strings.Contains(after.Curl, "$INVOKECONF_KEYS_") {
		t.Errorf("the curl command reads %q", after.Curl)
	}
	if err := chromedp.Do(bctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('details.failure').scrollIntoView()`)); err != nil {
		t.Fatal(err)
	}
	if shot, err = chromedp.Run(bctx, chromedp.CaptureScreenshot()); err != nil {
		t.Fatal(err)
	}
	writeArtifact(t, "failure.png", shot)
	if shot, err = chromedp.Run(bctx, chromedp.FullScreenshot(80)); err != nil {
		t.Fatal(err)
	}
	writeArtifact(t, "report-full.jpg", shot)

	mu.Lock()
	defer mu.Unlock()
	if len(requests) == 0 {
		t.Error("no request seen at all: the network listener is not working")
	}
	for _, u := range requests {
		if u != url && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page fetched %s", u)
		}
	}
	for _, l := range logs {
		t.Errorf("browser log: %s", l)
	}
}

func writeArtifact(t *testing.T, name string, b []byte) {
	t.Helper()
	path := filepath.Join(browserOut, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

// profileDir is a fresh --user-data-dir. Chromium's helper processes can
// still write into it for a moment after the browser stops, so removal is
// retried for a few seconds, and a leftover never fails the test.
func profileDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "invokeconf-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for os.RemoveAll(dir) != nil && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond) // polling a removal the OS finishes, not synchronising with our code
		}
	})
	return dir
}
