// Package evidence makes a run's result checkable by anyone, offline: a run
// keeps its own traffic as evidence beside its reports (a HAR file, keys
// hidden, written as exchanges end), with its plan and profile, and
// summary.json binds their digests and the run's judgement of every
// exchange (Recorder); `invokeconf verify` checks every digest, judges the
// evidence again with the same checks and confirms the report's verdicts
// (Verify); a run may sign what it states, the digests and the verdicts, as
// an in-toto statement in a DSSE envelope with an ed25519 key (Sign,
// CheckSignature).
//
// The run judges the bytes as they passed, keys included (a check must see
// what the target sent); the evidence holds them as every recording of
// this harness does, keys hidden (traffic.Redactor: a whole key becomes
// its <user>-<key> ID, any piece of its secret from profile.FragmentMin
// characters on is hidden). The Authorization header's recorded form is
// read by every check as the header itself (traffic.ClassifyAuth), so
// hiding it changes no verdict. Where hiding changed anything else (a
// target that echoes a key, or an ID that happens to hold a piece of a
// secret), the exchange is named in KeysHidden, and the run judges its own
// evidence once more to record, for each rule whose verdict that changes,
// what the evidence shows: verify recomputes that, and takes the run's own
// verdict of those rules on trust.
package evidence

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/har"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/reports"
	"github.com/invokeconf/invokeconf/testrun"
	"github.com/invokeconf/invokeconf/traffic"
)

// Files of a run's evidence, beside its reports.
const (
	HARFile     = "evidence.har"
	PlanFile    = "plan.json"
	ProfileFile = "profile.yaml"
	// SignatureFile holds the DSSE envelope of a signed run (run --sign).
	SignatureFile = "attestation.intoto.jsonl"
)

// What each file holds, as summary.json says it.
const (
	holdsHAR     = "the run's traffic, every exchange as judged (a body past 1 MiB cut, as judged), keys hidden, in the order judged (HAR 1.2; _stalls, _probed and _precision say how far its times can be trusted)"
	holdsPlan    = "the run's plan: the selection, and every scenario with whether it ran and, if not, why"
	holdsProfile = "the target profile, every key replaced by its environment variable"
)

// Recorder keeps a run's evidence as the run goes: Add is the runner's
// Config.Evidence, Finish writes the rest and binds it in the report.
type Recorder struct {
	dir  string
	f    *os.File
	w    *har.Writer
	rec  *traffic.Recorder
	mu   sync.Mutex
	n    int
	hid  []int
	err  error
	done bool
}

// Create starts the evidence of a run in dir: its traffic file is open
// from now on, and each exchange goes to it as it ends. The profile's keys
// are known to the redaction from the start; version names the harness in
// the file.
func Create(dir string, p *profile.Profile, version string) (*Recorder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	RemoveStale(dir)
	f, err := os.Create(filepath.Join(dir, HARFile))
	if err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	w, err := har.NewWriter(f, version)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("evidence: %w", err)
	}
	red := traffic.NewRedactor(p.Secrets()...)
	return &Recorder{dir: dir, f: f, w: w, rec: &traffic.Recorder{Redactor: red}}, nil
}

// RemoveStale removes the evidence an earlier run left in dir: a run
// without evidence leaves none that its report does not bind.
func RemoveStale(dir string) {
	for _, name := range []string{HARFile, PlanFile, ProfileFile, SignatureFile} {
		_ = os.Remove(filepath.Join(dir, name))
	}
}

// Add keeps one exchange of the run, keys hidden, as made in the scenario
// page (titled title): the runner hands them in the order its judgement
// judges them (runner.Config.Evidence). A write error stops the evidence;
// Finish returns it.
func (r *Recorder) Add(page, title string, v *checks.View) {
	x, hidden := hide(r.rec, v.Exchange)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil || r.done {
		return
	}
	r.n++
	if hidden && v.Response != nil {
		r.hid = append(r.hid, x.ID)
	}
	if err := r.w.Add(x, page, title); err != nil {
		r.err = err
	}
}

// hide returns x as the evidence keeps it, keys hidden as every recording
// of this harness hides them, and whether that changed anything a check
// reads as other than the same thing: anything but the Authorization
// header's form (whose class and key ID stay, see traffic.AuthValue).
func hide(rc *traffic.Recorder, x *traffic.Exchange) (traffic.Exchange, bool) {
	out := *x
	changed := false
	out.Request.URL = rc.URL(x.Request.URL)
	out.Request.Header = rc.Header(x.Request.Header)
	changed = changed || out.Request.URL != x.Request.URL || headersDiffer(x.Request.Header, out.Request.Header)
	var c bool
	out.Request.Body, c = hideBody(rc, x.Request.Body)
	changed = changed || c
	out.Error = rc.Redactor.RedactString(x.Error)
	changed = changed || out.Error != x.Error
	if x.Response != nil {
		resp := *x.Response
		resp.Header = rc.Header(x.Response.Header)
		changed = changed || headersDiffer(x.Response.Header, resp.Header)
		resp.Body, c = hideBody(rc, x.Response.Body)
		changed = changed || c
		out.Response = &resp
	}
	return out, changed
}

// headersDiffer reports whether hiding keys changed a header other than
// Authorization's form: an Authorization of another class or key ID, or
// any other value.
func headersDiffer(was, now http.Header) bool {
	for name, vs := range was {
		switch http.CanonicalHeaderKey(name) {
		case "Authorization", "Proxy-Authorization":
			a, id := traffic.ClassifyAuth(vs)
			b, id2 := traffic.ClassifyAuth(now.Values(name))
			if a != b || id != id2 {
				return true
			}
		default:
			if !slices.Equal(vs, now[name]) {
				return true
			}
		}
	}
	return len(was) != len(now)
}

// hideBody hides keys in each chunk of b (a key split across two chunks
// still loses every piece of its secret, see traffic.BodyRecorder.Finish),
// and reports whether that changed a byte.
func hideBody(rc *traffic.Recorder, b traffic.Body) (traffic.Body, bool) {
	if len(b.Chunks) == 0 {
		return b, false
	}
	out := b
	out.Chunks = make([]traffic.Chunk, len(b.Chunks))
	changed := false
	for i, c := range b.Chunks {
		if c.Data != nil {
			d := rc.Redactor.Redact(c.Data)
			if !bytes.Equal(d, c.Data) {
				changed = true
			}
			c.Data = d
		}
		out.Chunks[i] = c
	}
	return out, changed
}

// Abandon ends the evidence of a run that never ran (its target never
// answered): the traffic file is removed.
func (r *Recorder) Abandon() {
	r.mu.Lock()
	r.done = true
	r.mu.Unlock()
	_ = r.w.Close()
	_ = r.f.Close()
	_ = os.Remove(r.f.Name())
}

// Finish ends the evidence of a run: it closes the traffic file, writes the
// plan and the profile (keys as their variables, as the report shows it),
// and binds them in rep (rep.Evidence): their digests and the run's
// judgement of every exchange. When hiding keys changed an exchange, it
// judges its own evidence once more and records the rules whose verdict
// that changes (RunEvidence.FromEvidence). Call it once the run is over,
// before the reports are written.
func (r *Recorder) Finish(res *testrun.Result, rep *reports.Report) error {
	r.mu.Lock()
	r.done = true
	err := r.err
	r.mu.Unlock()
	if cerr := r.w.Close(); err == nil {
		err = cerr
	}
	if cerr := r.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("evidence: %w", cerr)
	}
	if err != nil {
		return err
	}
	plan, err := planJSON(res.Plan)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		b    []byte
	}{{PlanFile, plan}, {ProfileFile, []byte(rep.ProfileYAML)}} {
		if err := os.WriteFile(filepath.Join(r.dir, f.name), f.b, 0o644); err != nil {
			return fmt.Errorf("evidence: %w", err)
		}
	}
	ev := &reports.RunEvidence{Schema: reports.EvidenceSchema, Exchanges: r.n, KeysHidden: r.hid}
	for _, f := range []struct{ name, holds string }{{HARFile, holdsHAR}, {PlanFile, holdsPlan}, {ProfileFile, holdsProfile}} {
		d, n, err := FileDigest(filepath.Join(r.dir, f.name))
		if err != nil {
			return err
		}
		ev.Files = append(ev.Files, reports.EvidenceFile{Name: f.name, Digest: d, Bytes: n, Holds: f.holds})
	}
	if res.Judgement == nil {
		return errors.New("evidence: the run has no judgement of its exchanges")
	}
	ev.Judgement = judgedRules(*res.Judgement)
	ev.Judged = res.Judgement.Observed
	if len(r.hid) > 0 {
		again, err := Rejudge(filepath.Join(r.dir, HARFile))
		if err != nil {
			return err
		}
		run := map[string]reports.JudgedRule{}
		for _, jr := range ev.Judgement {
			run[jr.Rule] = jr
		}
		for _, jr := range judgedRules(again.Summary) {
			if !sameJudgement(jr, run[jr.Rule]) {
				ev.FromEvidence = append(ev.FromEvidence, jr)
			}
		}
	}
	rep.Evidence = ev
	return nil
}

// planJSON is the plan as plan.json holds it.
func planJSON(p *testrun.Plan) ([]byte, error) {
	type scenario struct {
		ID      string   `json:"id"`
		Name    string   `json:"name"`
		Example string   `json:"example,omitempty"`
		Rules   []string `json:"rules"`
		Tags    []string `json:"tags"`
		Status  string   `json:"status"`
		Reason  string   `json:"reason,omitempty"`
	}
	doc := struct {
		Selection testrun.Selection `json:"selection"`
		Tags      string            `json:"tags"`
		Scenarios []scenario        `json:"scenarios"`
	}{Scenarios: []scenario{}}
	if p != nil {
		doc.Selection, doc.Tags = p.Selection, p.Expr
		for _, s := range p.Scenarios {
			st := string(s.Status)
			if s.Status == testrun.Runs {
				st = "runs"
			}
			doc.Scenarios = append(doc.Scenarios, scenario{ID: s.ID, Name: s.Name, Example: s.Example, Rules: s.Rules,
				Tags: s.Tags, Status: st, Reason: s.Reason})
		}
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("evidence: plan: %w", err)
	}
	return append(b, '\n'), nil
}

// judgedRules is a judgement's summary as the evidence binds it.
func judgedRules(s checks.Summary) []reports.JudgedRule {
	out := []reports.JudgedRule{}
	for _, v := range s.Verdicts {
		jr := reports.JudgedRule{Rule: v.Rule, Verdict: v.Verdict, Decided: v.Decided, Broken: v.Broken}
		for _, f := range v.Failures {
			jr.Exchanges = append(jr.Exchanges, f.Exchange)
		}
		out = append(out, jr)
	}
	return out
}

// sameJudgement reports whether two judgements of a rule agree in every
// field.
func sameJudgement(a, b reports.JudgedRule) bool {
	return a.Rule == b.Rule && a.Verdict == b.Verdict && a.Decided == b.Decided && a.Broken == b.Broken &&
		slices.Equal(a.Exchanges, b.Exchanges)
}

// FileDigest returns "sha256:<hex>" of a file and its size.
func FileDigest(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, fmt.Errorf("evidence: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("evidence: %s: %w", path, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
}

// Judged is a recording judged again.
type Judged struct {
	// Summary is the judgement's: per rule, its verdict and the first
	// failures (those a run attaches to its scenarios).
	Summary checks.Summary
	// Exchanges counts the entries read; Responses those with a response,
	// which were judged.
	Exchanges, Responses int
}

// MaxBody is what Rejudge reads of a body: steps.MaxBody, what the run
// records of one (a response's was cut to 1 MiB where it was judged cut).
const MaxBody = 4 << 20

// Rejudge judges a run's traffic file again, exchange by exchange in the
// file's order, as the run's judgement of every exchange judged them
// (runner's observer: checks.NewJudgement().LeaveUnsettled()); bodies are
// read up to MaxBody bytes, as the run records them.
func Rejudge(path string) (*Judged, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	defer f.Close()
	hr := har.NewReader(f, traffic.NewRecorder(MaxBody, nil))
	j := checks.NewJudgement().LeaveUnsettled()
	out := &Judged{}
	for {
		x, err := hr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("evidence: %s: %w", filepath.Base(path), err)
		}
		out.Exchanges++
		if x.Response == nil {
			continue
		}
		out.Responses++
		j.Add(&x)
	}
	out.Summary = j.Summary()
	return out, nil
}
