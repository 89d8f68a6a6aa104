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
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/testrun"
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
	t.Parallel() // a browser mostly waits: its start overlaps the other tests
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
			f.rep.Started.Format("2006-01-02"), "Profile", "3 fail", "1 warning", f.rep.Identity.Spec(), f.rep.Identity.Catalog(),
			f.rep.Spec.Scope()}
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
	first := f.rep.Findings[0]
	if before.Open || before.CurlShown {
		t.Errorf("before the click: open %v, curl shown %v; want it closed", before.Open, before.CurlShown)
	}
	if !after.Open || !after.CurlShown || after.CurlHeight < 20 || !after.ActualShown {
		t.Errorf("after the click: open %v, curl shown %v (%v px high), actual shown %v; want it open and shown",
			after.Open, after.CurlShown, after.CurlHeight, after.ActualShown)
	}
	if !strings.Contains(after.Title, first.RuleID) || !strings.Contains(after.Spec, first.Rule.Spec) {
		t.Errorf("the failure reads %q with spec %q; want rule %s and its spec sentence", after.Title, after.Spec, first.RuleID)
	}
	if !strings.HasPrefix(after.Curl, "curl ") || !strings.Contains(after.Curl, "${INVOKECONF_KEYS_") {
		t.Errorf("the curl command reads %q", after.Curl)
	}
	checkFailedRules(t, bctx, f.rep)
	checkSpecText(t, bctx, f.rep)
	checkPrint(t, bctx)
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

// checkFailedRules: the failed-rules table lists each failed rule with its
// level, source and expected vs actual; its link scrolls to the failure
// and opens it; the fail chip and a failing area's tile lead to the table.
func checkFailedRules(t *testing.T, bctx context.Context, rep *Report) {
	t.Helper()
	type row struct{ ID, Text, Href string }
	rows, err := chromedp.Run(bctx, chromedp.Evaluate[[]row](`[...document.querySelectorAll('#failed-rules tbody tr')].map(r =>
		({ID: r.id, Text: r.innerText, Href: (r.querySelector('a.open') || {}).hash || ''}))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(rep.FailedRules) || len(rows) == 0 {
		t.Fatalf("the failed-rules table has %d rows, want %d", len(rows), len(rep.FailedRules))
	}
	for i, fr := range rep.FailedRules {
		for _, want := range []string{fr.ID, fr.Level, fr.Source, "expected"} {
			if !strings.Contains(rows[i].Text, want) && !(want == "expected" && !strings.Contains(fr.Line, "expected")) {
				t.Errorf("row %s reads %q; want %q in it", fr.ID, rows[i].Text, want)
			}
		}
	}
	type state struct {
		Open    bool
		Top     float64
		Height  float64
		Chip    string
		Tile    string
		Visible bool
	}
	href := rows[0].Href
	if err := chromedp.Do(bctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`),
		chromedp.Click(chromedp.CSS(`#failed-rules a.open[href="`+href+`"]`), chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	st, err := chromedp.Run(bctx, chromedp.Evaluate[state](`(() => {
		const target = document.getElementById(location.hash.slice(1)), d = target.closest('details');
		const r = d.getBoundingClientRect();
		const chip = document.querySelector('#counts a.chip.v-fail'), tile = document.querySelector('#areas a.area.v-fail');
		return {Open: d.open, Top: r.top, Height: innerHeight, Chip: chip ? chip.hash : '', Tile: tile ? tile.hash : '',
		        Visible: d.querySelector('pre.actual').checkVisibility()};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if !st.Open || !st.Visible || st.Top < -5 || st.Top > st.Height/2 {
		t.Errorf("after a click on %s: open %v, actual visible %v, details at %.0f px of %.0f; want it open and scrolled to", href, st.Open, st.Visible, st.Top, st.Height)
	}
	if st.Chip != "#failed-rules" || !strings.HasPrefix(st.Tile, "#failed-") {
		t.Errorf("the fail chip leads to %q and a failing tile to %q; want the failed-rules table", st.Chip, st.Tile)
	}
	shot, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	writeArtifact(t, "failed-rule-opened.png", shot)
}

// checkSpecText: the annotated spec shows every statement of the spec;
// the statement a failed rule quotes is marked failed and links to the
// rule's row, which a click scrolls to, and the row links back to it;
// every normative statement no rule quotes is marked and says why.
func checkSpecText(t *testing.T, bctx context.Context, rep *Report) {
	t.Helper()
	sv := specView(rep)
	if sv == nil {
		t.Fatal("no spec view")
	}
	var failed string
	for _, fr := range rep.FailedRules {
		if _, ok := sv.FirstOf[fr.ID]; ok && fr.Verdict == Fail {
			failed = fr.ID
			break
		}
	}
	if failed == "" {
		t.Fatal("no failed rule quotes the spec")
	}
	st := fmt.Sprintf("st-%d", sv.FirstOf[failed])
	type view struct {
		Statements, Uncovered, UncoveredSaid, Informative int
		Class, Text, Link                                 string
	}
	v, err := chromedp.Run(bctx, chromedp.Evaluate[view](`(() => {
		const sec = document.getElementById('spec-text'), st = document.getElementById('`+st+`');
		const unc = [...sec.querySelectorAll('.spec .st.st-uncovered')];
		const link = st.querySelector('a[href="#rule-`+failed+`"]');
		return {Statements: sec.querySelectorAll('.spec .st').length, Uncovered: unc.length,
		        UncoveredSaid: unc.filter(e => e.innerText.includes('no rule quotes this') && e.checkVisibility()).length,
		        Informative: sec.querySelectorAll('.spec .st.st-informative').length,
		        Class: st.className, Text: st.innerText, Link: link ? link.hash : ''};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if v.Statements != sv.Statements || v.Uncovered != sv.Uncovered || v.UncoveredSaid != sv.Uncovered || v.Informative != sv.Informative {
		t.Errorf("the spec text shows %d statements (%d uncovered, %d of them saying so; %d informative), want %d (%d uncovered; %d informative)",
			v.Statements, v.Uncovered, v.UncoveredSaid, v.Informative, sv.Statements, sv.Uncovered, sv.Informative)
	}
	if !strings.Contains(v.Class, "v-fail") || v.Link != "#rule-"+failed {
		t.Errorf("the statement %s quotes reads %q, class %q, link %q; want it marked failed and linked to its row", failed, v.Text, v.Class, v.Link)
	}
	type jump struct {
		Hash       string
		Top, Limit float64
		Back       string
	}
	if err := chromedp.Do(bctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('`+st+`').scrollIntoView()`),
		chromedp.Click(chromedp.CSS(`#`+st+` a[href="#rule-`+failed+`"]`), chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	j, err := chromedp.Run(bctx, chromedp.Evaluate[jump](`(() => {
		const row = document.getElementById('rule-`+failed+`'), back = row.querySelector('a.to-spec');
		return {Hash: location.hash, Top: row.getBoundingClientRect().top, Limit: innerHeight, Back: back ? back.hash : ''};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if j.Hash != "#rule-"+failed || j.Top < -5 || j.Top > j.Limit || j.Back != "#"+st {
		t.Errorf("after a click on %s in the spec: at %q, its row at %.0f px of %.0f, linking back to %q", failed, j.Hash, j.Top, j.Limit, j.Back)
	}
	if err := chromedp.Do(bctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('spec-text').scrollIntoView()`)); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	writeArtifact(t, "spec-text.png", shot)
}

// checkPrint: printed, every failure is expanded and no transcript or
// command is cut at a height.
func checkPrint(t *testing.T, bctx context.Context) {
	t.Helper()
	if _, err := chromedp.Call(bctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"}); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = chromedp.Call(bctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{}) }()
	type printed struct {
		Failures, Shown, Capped int
		Note                    float64
		Summary                 float64
	}
	p, err := chromedp.Run(bctx, chromedp.Evaluate[printed](`(() => {
		const ds = [...document.querySelectorAll('details.failure')];
		const shown = ds.filter(d => d.querySelector('pre.actual').checkVisibility()).length;
		const capped = [...document.querySelectorAll('details.failure pre')].filter(p =>
			getComputedStyle(p).maxHeight !== 'none' || p.scrollHeight > p.clientHeight + 2).length;
		return {Failures: ds.length, Shown: shown, Capped: capped,
		        Note: document.getElementById('redaction').getBoundingClientRect().top,
		        Summary: document.getElementById('summary').getBoundingClientRect().bottom};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Failures == 0 || p.Shown != p.Failures || p.Capped != 0 {
		t.Errorf("printed: %d of %d failures expanded, %d blocks cut at a height", p.Shown, p.Failures, p.Capped)
	}
	if p.Note < p.Summary {
		t.Errorf("the keys note (at %.0f px) comes before the end of the summary (%.0f px)", p.Note, p.Summary)
	}
	pdf, err := chromedp.Call(bctx, page.PrintToPDF, page.PrintToPDFParams{})
	if err != nil {
		t.Errorf("print to PDF: %v", err)
		return
	}
	writeArtifact(t, "report.pdf", pdf.Data)
}

// TestPartialBannerInChromium: a partial run shows an amber PARTIAL banner
// that says how much it judged, never a certification.
func TestPartialBannerInChromium(t *testing.T) {
	t.Parallel() // a browser mostly waits: its start overlaps the other tests
	exe := chromium(t)
	rep := synthetic(t, testrun.Selection{Areas: []string{"sse"}}, nil, nil)
	if err := os.MkdirAll(browserOut, 0o755); err != nil {
		t.Fatal(err)
	}
	path, err := filepath.Abs(filepath.Join(browserOut, "partial.html"))
	if err != nil {
		t.Fatal(err)
	}
	var html strings.Builder
	if err := WriteHTML(&html, rep); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(html.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(profileDir(t)))...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	type banner struct{ Text, Background, Title string }
	if err := chromedp.Do(bctx, chromedp.Navigate("file://"+path), chromedp.WaitVisible(chromedp.ID("outcome"))); err != nil {
		t.Fatal(err)
	}
	b, err := chromedp.Run(bctx, chromedp.Evaluate[banner](`(() => { const b = document.getElementById('outcome');
			return {Text: b.innerText, Background: getComputedStyle(b).backgroundColor, Title: document.title}; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.Text, "PARTIAL") || !strings.Contains(b.Text, rep.Spec.Scope()) || strings.Contains(b.Text, "certification report") {
		t.Errorf("the banner reads %q", b.Text)
	}
	if b.Background != "rgb(191, 135, 0)" {
		t.Errorf("the banner is %s, want amber rgb(191, 135, 0)", b.Background)
	}
	shot, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	writeArtifact(t, "partial.png", shot)
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

// TestPassiveBannerInChromium: a passive report's banner is red FAIL or
// blue NO FAILURE, never PASS, says "observed N exchanges; judged M of K
// rules" and that it is not a certification, all on the first screen.
func TestPassiveBannerInChromium(t *testing.T) {
	t.Parallel() // a browser mostly waits: its start overlaps the other tests
	exe := chromium(t)
	failed, _ := passiveReport(t)
	j := checks.NewJudgement()
	j.Add(passiveExchanges()[1])
	clean, err := BuildPassive(PassiveInput{Summary: j.Summary(), Source: "proxy", Target: "proxy to http://svc.test", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(browserOut, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(profileDir(t)),
		chromedp.WindowSize(1280, 800))...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	for _, tc := range []struct {
		name       string
		rep        *Report
		big        string
		background string
	}{
		{"passive-fail", failed, "FAIL", "rgb(207, 34, 46)"},
		{"passive-clean", clean, "NO FAILURE", "rgb(9, 105, 218)"},
	} {
		path, err := filepath.Abs(filepath.Join(browserOut, tc.name+".html"))
		if err != nil {
			t.Fatal(err)
		}
		var html strings.Builder
		if err := WriteHTML(&html, tc.rep); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(html.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		type view struct {
			Banner, Background, Title, Note string
			NoteBottom, Height              float64
		}
		if err := chromedp.Do(bctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate("file://"+path), chromedp.WaitVisible(chromedp.ID("outcome"))); err != nil {
			t.Fatal(err)
		}
		v, err := chromedp.Run(bctx, chromedp.Evaluate[view](`(() => { const b = document.getElementById('outcome'), n = document.getElementById('passive-note');
			return {Banner: b.innerText, Background: getComputedStyle(b).backgroundColor, Title: document.title,
			        Note: n.innerText, NoteBottom: n.getBoundingClientRect().bottom, Height: innerHeight}; })()`))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(v.Banner, tc.big) || !strings.Contains(v.Banner, "observed ") || !strings.Contains(v.Banner, "not a certification") ||
			strings.Contains(v.Banner, "PASS") || strings.Contains(v.Banner, "certification report") {
			t.Errorf("%s: the banner reads %q", tc.name, v.Banner)
		}
		if v.Background != tc.background {
			t.Errorf("%s: the banner is %s, want %s", tc.name, v.Background, tc.background)
		}
		if !strings.Contains(v.Note, "not a certification") || v.NoteBottom > v.Height {
			t.Errorf("%s: the note %q ends at %.0f px of %.0f", tc.name, v.Note, v.NoteBottom, v.Height)
		}
		if !strings.Contains(v.Title, "passive judgement") {
			t.Errorf("%s: title %q", tc.name, v.Title)
		}
		shot, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		writeArtifact(t, tc.name+".png", shot)
	}
}
