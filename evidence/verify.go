package evidence

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/reports"
)

// UsageError is a folder verify cannot start on: no report, or a report
// of a run without evidence. It is not a finding about the run.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// Options tune Verify.
type Options struct {
	// Key, when set, is the public key the run must be signed with.
	Key ed25519.PublicKey
	// Self is the verifier's own identity (reports.Identify(nil) when
	// zero): the build whose checks judge the evidence again.
	Self reports.Identity
}

// How a rule's verdict was confirmed (Verification.Rules).
const (
	// Recomputed: the checks, judging the evidence again, reach the
	// report's verdict.
	Recomputed = "recomputed from the traffic"
	// TrustNotDecidable: no check decides the rule from traffic; its
	// verdict rests on the scenarios' own steps.
	TrustNotDecidable = "taken on trust: not decidable from traffic"
	// TrustScenarios: traffic can decide the rule, but the run's
	// scenarios judged it where the evidence alone does not reach their
	// verdict (a check that needs what a scenario knows: the key's scope,
	// the agent's tools; or a step's own assertion).
	TrustScenarios = "taken on trust: judged by its scenarios where traffic alone does not decide it"
	// TrustHidden: the run judged bytes the evidence holds hidden (a key
	// in an answer).
	TrustHidden = "taken on trust: the run judged bytes the evidence hides (keys)"
	// NotJudged: the report judged no verdict to confirm (untested, not
	// applicable, not selected, not observable, harness error).
	NotJudged = "not judged: nothing to confirm"
)

// Verification is what verify found: what it checked, for people, and
// every difference, each naming what differs.
type Verification struct {
	// Report is the run's summary.json.
	Report *reports.Report
	// Checked says, a line each, what was verified.
	Checked []string
	// Problems name every difference; none means the run is verified.
	Problems []string
	// Rules says, per rule, how its verdict was confirmed (one of the
	// constants above).
	Rules map[string]string
	// Signed is true when a signature was checked with Options.Key;
	// SignedUnchecked when the run is signed and no key was given.
	Signed, SignedUnchecked bool
	// Judged is the evidence judged again.
	Judged *Judged
}

// OK reports whether nothing differs.
func (v *Verification) OK() bool { return len(v.Problems) == 0 }

// Count returns how many rules were confirmed a way.
func (v *Verification) Count(how string) int {
	n := 0
	for _, h := range v.Rules {
		if h == how {
			n++
		}
	}
	return n
}

func (v *Verification) problem(format string, args ...any) {
	v.Problems = append(v.Problems, fmt.Sprintf(format, args...))
}

// Verify checks a run's folder: every digest summary.json binds, the spec,
// catalog and harness build it names against the verifier's own, the
// signature when a key is given, the run's judgement of every exchange
// against the evidence judged again with the same checks, and every
// verdict of the report against that judgement. A folder without a report
// or without evidence is a UsageError.
func Verify(dir string, opts Options) (*Verification, error) {
	rep, err := readReport(dir)
	if err != nil {
		return nil, err
	}
	self := opts.Self
	if self.SpecDigest == "" {
		self = reports.Identify(nil)
	}
	v := &Verification{Report: rep, Rules: map[string]string{}}
	v.identity(rep.Identity, self)
	v.files(dir, rep)
	if opts.Key != nil {
		v.signature(dir, rep, opts.Key)
	} else if _, err := os.Stat(filepath.Join(dir, SignatureFile)); err == nil {
		v.SignedUnchecked = true
	}
	j, err := Rejudge(filepath.Join(dir, HARFile))
	if err != nil {
		v.problem("%s cannot be judged again: %v", HARFile, err)
		return v, nil
	}
	v.Judged = j
	v.judgement(rep.Evidence, j)
	v.verdicts(rep, j)
	v.consistent(rep)
	return v, nil
}

// readReport reads dir's summary.json, which must be an active run's with
// evidence.
func readReport(dir string) (*reports.Report, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, &UsageError{fmt.Sprintf("%s: %v", dir, err)}
	}
	if !st.IsDir() {
		return nil, &UsageError{dir + " is not a folder: give the folder of a run's reports (run --out)"}
	}
	b, err := os.ReadFile(filepath.Join(dir, reports.JSONFile))
	if err != nil {
		return nil, &UsageError{fmt.Sprintf("%s holds no %s: give the folder of a run's reports (run --out)", dir, reports.JSONFile)}
	}
	var rep reports.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, &UsageError{fmt.Sprintf("%s is no report: %v", filepath.Join(dir, reports.JSONFile), err)}
	}
	switch {
	case rep.Schema != reports.SchemaVersion:
		return nil, &UsageError{fmt.Sprintf("%s is of schema %q; this verifier reads %q", reports.JSONFile, rep.Schema, reports.SchemaVersion)}
	case rep.Mode != reports.ModeActive:
		return nil, &UsageError{fmt.Sprintf("%s is a %s report: only a run (invokeconf run) is a certification", reports.JSONFile, rep.Mode)}
	case rep.Evidence == nil:
		return nil, &UsageError{fmt.Sprintf("%s binds no evidence: the run was made with --evidence=false", reports.JSONFile)}
	case rep.Evidence.Schema != reports.EvidenceSchema:
		return nil, &UsageError{fmt.Sprintf("%s's evidence is of schema %q; this verifier reads %q", reports.JSONFile, rep.Evidence.Schema, reports.EvidenceSchema)}
	}
	return &rep, nil
}

// identity checks that the report rests on the spec and catalog this
// verifier embeds and was made by the same harness build: the same checks.
func (v *Verification) identity(rep, self reports.Identity) {
	if rep.SpecDigest != self.SpecDigest {
		v.problem("a report of another spec: it names the spec %s, this verifier's is %s", rep.SpecDigest, self.SpecDigest)
	} else {
		v.Checked = append(v.Checked, "spec: "+rep.SpecDigest+", the spec this verifier embeds")
	}
	if rep.CatalogDigest != self.CatalogDigest {
		v.problem("a report of another rule catalog: it names the catalog %s, this verifier's is %s", rep.CatalogDigest, self.CatalogDigest)
	} else {
		v.Checked = append(v.Checked, "catalog: "+rep.CatalogDigest+", the catalog this verifier embeds")
	}
	if same, how := sameBuild(rep, self); same {
		v.Checked = append(v.Checked, "harness: "+how+", this verifier's own: the same checks judge the evidence again")
	} else {
		v.problem("a report of another harness build: %s; verify with that build (invokeconf version names a build)", how)
	}
}

// sameBuild says whether two identities name one build of the harness's
// source: the same executable, the same clean commit, the same version Go
// recorded or a release set, or a clean commit and the pseudo-version Go
// gives that commit (a run from a clone, verified by `go run
// .../cmd/invokeconf@<commit>`, or the other way round). A tree with
// changes (+dirty) is named by its executable only.
func sameBuild(rep, self reports.Identity) (bool, string) {
	clean := func(c string) bool { return c != "" && !strings.HasSuffix(c, "+dirty") }
	named := func(id reports.Identity) bool {
		return id.HarnessVersion != "" && id.HarnessVersion != "dev" &&
			(id.HarnessSource == reports.SourceLdflags || id.HarnessSource == reports.SourceModule)
	}
	pseudoOf := func(a, b reports.Identity) bool {
		rev := pseudoRevision(b.HarnessVersion)
		return clean(a.HarnessCommit) && named(b) && rev != "" && strings.HasPrefix(a.HarnessCommit, rev)
	}
	switch {
	case rep.HarnessBinary != "" && rep.HarnessBinary == self.HarnessBinary:
		return true, "the executable " + rep.HarnessBinary
	case clean(rep.HarnessCommit) && rep.HarnessCommit == self.HarnessCommit:
		return true, "commit " + rep.HarnessCommit
	case named(rep) && named(self) && rep.HarnessVersion == self.HarnessVersion:
		return true, "version " + rep.HarnessVersion
	case pseudoOf(rep, self):
		return true, "commit " + rep.HarnessCommit + " (" + self.HarnessVersion + ")"
	case pseudoOf(self, rep):
		return true, rep.HarnessVersion + " (commit " + self.HarnessCommit + ")"
	}
	return false, fmt.Sprintf("the report names %s (executable %s), this verifier is %s (executable %s)",
		nameOf(rep), orNone(rep.HarnessBinary), nameOf(self), orNone(self.HarnessBinary))
}

// pseudoRevision returns the commit prefix a Go pseudo-version names
// (v0.0.0-20260101120000-9b9f711647bd: 9b9f711647bd), "" for any other
// version.
func pseudoRevision(v string) string {
	m := pseudoVersion.FindStringSubmatch(v)
	if m == nil {
		return ""
	}
	return m[1]
}

// pseudoVersion matches the tail of a Go pseudo-version: a UTC time stamp
// and 12 hex digits of the commit.
var pseudoVersion = regexp.MustCompile(`[-.]\d{14}-([0-9a-f]{12})(\+incompatible)?$`)

func nameOf(id reports.Identity) string {
	s := "invokeconf " + id.HarnessVersion
	if id.HarnessCommit != "" {
		s += " commit " + id.HarnessCommit
	}
	return s
}

// files checks the digest and size of every evidence file, and that the
// profile file says what the report says.
func (v *Verification) files(dir string, rep *reports.Report) {
	listed := map[string]bool{}
	for _, f := range rep.Evidence.Files {
		listed[f.Name] = true
		if f.Name != filepath.Base(f.Name) || f.Name == "" {
			v.problem("summary.json binds a file outside the folder: %q", f.Name)
			continue
		}
		d, n, err := FileDigest(filepath.Join(dir, f.Name))
		switch {
		case errors.Is(err, os.ErrNotExist):
			v.problem("%s is missing (summary.json binds it: %s)", f.Name, f.Digest)
		case err != nil:
			v.problem("%s cannot be read: %v", f.Name, err)
		case d != f.Digest:
			v.problem("%s changed: its digest is %s, summary.json binds %s (%d bytes now, %d bound)", f.Name, d, f.Digest, n, f.Bytes)
		default:
			v.Checked = append(v.Checked, fmt.Sprintf("%s: %s, %s, as summary.json binds it", f.Name, d, size(n)))
		}
	}
	for _, name := range []string{HARFile, PlanFile, ProfileFile} {
		if !listed[name] {
			v.problem("summary.json binds no %s", name)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, ProfileFile)); err == nil {
		var prof map[string]any
		if err := yaml.Unmarshal(b, &prof); err != nil || !sameJSON(prof, rep.Profile) {
			v.problem("%s is not the profile summary.json shows", ProfileFile)
		}
	}
}

// sameJSON reports whether two values say the same as JSON.
func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var x, y any
	_ = json.Unmarshal(ja, &x)
	_ = json.Unmarshal(jb, &y)
	return reflect.DeepEqual(x, y)
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// signature checks the signature with key, and that the statement names
// the files of the folder as they are and says what the report says.
func (v *Verification) signature(dir string, rep *reports.Report, key ed25519.PublicKey) {
	st, err := CheckSignature(dir, key)
	if err != nil {
		v.problem("signature: %v", err)
		return
	}
	now, err := NewStatement(dir, rep)
	if err != nil {
		v.problem("signature: %v", err)
		return
	}
	have := map[string]string{}
	for _, s := range now.Subject {
		have[s.Name] = s.Digest["sha256"]
	}
	ok := true
	for _, s := range st.Subject {
		switch d, found := have[s.Name]; {
		case !found:
			v.problem("signature: the signed statement names %s, which is missing", s.Name)
			ok = false
		case d != s.Digest["sha256"]:
			v.problem("signature: %s changed since it was signed (sha256 %s, signed %s)", s.Name, d, s.Digest["sha256"])
			ok = false
		}
		delete(have, s.Name)
	}
	if !slices.ContainsFunc(st.Subject, func(s Subject) bool { return s.Name == reports.JSONFile }) {
		v.problem("signature: the signed statement does not name %s", reports.JSONFile)
		ok = false
	}
	if !reflect.DeepEqual(st.Predicate, predicateOf(rep)) {
		v.problem("signature: the signed statement says other than summary.json (outcome, verdicts or identity)")
		ok = false
	}
	if ok {
		v.Signed = true
		v.Checked = append(v.Checked, fmt.Sprintf("signature: valid, by the key %s, over %d files and the report's verdicts", KeyID(key), len(st.Subject)))
	}
}

// judgement compares the run's judgement of every exchange with the
// evidence judged again: rule by rule, the same verdict, the same count of
// exchanges that decided and broke it, the same first failures.
func (v *Verification) judgement(ev *reports.RunEvidence, j *Judged) {
	if j.Exchanges != ev.Exchanges || j.Responses != ev.Judged {
		v.problem("%s holds %d exchanges (%d with a response); summary.json says the run kept %d and judged %d", HARFile, j.Exchanges, j.Responses, ev.Exchanges, ev.Judged)
	}
	run := map[string]reports.JudgedRule{}
	for _, jr := range ev.Judgement {
		run[jr.Rule] = jr
	}
	hidden := map[string]reports.JudgedRule{}
	for _, jr := range ev.FromEvidence {
		hidden[jr.Rule] = jr
	}
	if len(hidden) > 0 && len(ev.KeysHidden) == 0 {
		v.problem("summary.json records judgements of the evidence apart from the run's, but no exchange whose keys were hidden")
	}
	again := judgedRules(j.Summary)
	differ := 0
	for _, jr := range again {
		want, ok := run[jr.Rule]
		if h, isHidden := hidden[jr.Rule]; isHidden {
			want, ok = h, true
		}
		switch {
		case !ok:
			v.problem("the run's judgement has no verdict for %s; judged again from the evidence: %s", jr.Rule, describe(jr))
			differ++
		case !sameJudgement(jr, want):
			v.problem("the judgement of %s differs: summary.json: %s; judged again from the evidence: %s", jr.Rule, describe(want), describe(jr))
			differ++
		}
		delete(run, jr.Rule)
	}
	for rule := range run {
		v.problem("the run's judgement has a verdict for %s, which no check of this build decides", rule)
		differ++
	}
	if differ == 0 {
		line := fmt.Sprintf("judgement: %d exchanges judged again with every check traffic can decide; the run's judgement of all %d rules reproduced exactly",
			j.Responses, len(again))
		if len(hidden) > 0 {
			line += fmt.Sprintf(": %d as the run judged them, %d as the run found its evidence shows them (it judged keys in %d exchanges that the evidence hides)",
				len(again)-len(hidden), len(hidden), len(ev.KeysHidden))
		}
		v.Checked = append(v.Checked, line)
	}
}

// describe says a rule's judgement in a few words.
func describe(jr reports.JudgedRule) string {
	s := fmt.Sprintf("%s (%d exchanges decided it", jr.Verdict, jr.Decided)
	if jr.Broken > 0 {
		var ids []string
		for _, id := range jr.Exchanges {
			ids = append(ids, fmt.Sprintf("#%d", id))
		}
		s += fmt.Sprintf(", %d broke it: %s", jr.Broken, strings.Join(ids, " "))
	}
	return s + ")"
}

// failing reports whether a verdict says the rule was seen broken.
func failing(v reports.Verdict) bool {
	return v == reports.Fail || v == reports.Warning || v == reports.ExpectedFailure
}

// judgedVerdict reports whether a verdict says the rule was checked.
func judgedVerdict(v reports.Verdict) bool { return failing(v) || v == reports.Pass }

// verdicts confirms every verdict of the report against the judgement of
// the evidence: a rule the evidence shows broken fails in the report
// (unless a rule that failed in its own scenarios explains the failure, as
// the run's reports explain it); every failure the report shows from the
// judgement of every exchange is one the evidence shows; and each rule is
// counted by how its verdict was confirmed.
func (v *Verification) verdicts(rep *reports.Report, j *Judged) {
	decidable := map[string]bool{}
	for _, id := range checks.Rules() {
		decidable[id] = true
	}
	hidden := map[string]bool{}
	for _, jr := range rep.Evidence.FromEvidence {
		hidden[jr.Rule] = true
	}
	verdict := map[string]reports.Verdict{}
	observable := map[string]bool{}
	for _, r := range rep.Rules {
		verdict[r.ID] = r.Verdict
		observable[r.ID] = r.Observable
	}
	// The rules that failed in their own scenarios: a failure one of them
	// explains is that rule's (the reports' explainObserved).
	failedOwn := map[string]bool{}
	for _, s := range rep.Scenarios {
		if s.Status == "failed" && s.Failure != nil {
			cause := s.Failure.Rule
			if cause == "" && len(s.Rules) > 0 {
				cause = s.Rules[0]
			}
			failedOwn[cause] = true
		}
	}
	type key struct {
		rule string
		id   int
	}
	found := map[key]bool{}
	byRule := map[string]checks.RuleVerdict{}
	for _, rv := range j.Summary.Verdicts {
		byRule[rv.Rule] = rv
		if hidden[rv.Rule] || !observable[rv.Rule] {
			continue
		}
		for _, f := range rv.Failures {
			found[key{rv.Rule, f.Exchange}] = true
			explained := f.Failure != nil && slices.ContainsFunc(f.Failure.ExplainedBy, func(r string) bool { return failedOwn[r] })
			if !failing(verdict[rv.Rule]) && !explained {
				v.problem("%s: the report says %s, but the evidence shows it broken in exchange #%d (%s): %v",
					rv.Rule, verdict[rv.Rule], f.Exchange, f.Request, f.Failure)
			}
		}
	}
	shown := map[string]bool{} // rules the report shows broken in the judgement of every exchange
	for _, f := range rep.Findings {
		if f.Exchange == nil || hidden[f.RuleID] {
			continue
		}
		shown[f.RuleID] = true
		if !found[key{f.RuleID, f.Exchange.ID}] {
			v.problem("%s: the report shows it broken in exchange #%d (%s), which the evidence does not show", f.RuleID, f.Exchange.ID, f.Exchange.Request)
		}
	}
	for _, r := range rep.Rules {
		switch {
		case !judgedVerdict(r.Verdict):
			v.Rules[r.ID] = NotJudged
		case !decidable[r.ID]:
			v.Rules[r.ID] = TrustNotDecidable
		case hidden[r.ID]:
			v.Rules[r.ID] = TrustHidden
		case r.Verdict == reports.Pass && byRule[r.ID].Verdict == checks.Pass,
			failing(r.Verdict) && (byRule[r.ID].Verdict == checks.Fail || shown[r.ID]):
			v.Rules[r.ID] = Recomputed
		default:
			v.Rules[r.ID] = TrustScenarios
		}
	}
}

// consistent checks that the report agrees with itself: a failing verdict
// has a finding, a finding's rule has a failing verdict, the counts are
// the verdicts'.
func (v *Verification) consistent(rep *reports.Report) {
	verdict := map[string]reports.Verdict{}
	counts := reports.Counts{}
	for _, r := range rep.Rules {
		verdict[r.ID] = r.Verdict
		counts[r.Verdict]++
	}
	withFinding := map[string]bool{}
	for _, f := range rep.Findings {
		if f.RuleID == "" {
			continue
		}
		withFinding[f.RuleID] = true
		if vd, ok := verdict[f.RuleID]; ok && !failing(vd) && vd != reports.HarnessError && vd != reports.NotObservable {
			v.problem("%s: the report says %s, but one of its findings shows it broken (%s)", f.RuleID, vd, f.Title())
		}
	}
	for _, r := range rep.Rules {
		if failing(r.Verdict) && !withFinding[r.ID] {
			v.problem("%s: the report says %s, but no finding shows it broken", r.ID, r.Verdict)
		}
	}
	for _, vd := range reports.Verdicts {
		if counts[vd] != rep.Counts[vd] {
			v.problem("the report counts %d rules %s, its rules hold %d", rep.Counts[vd], vd, counts[vd])
		}
	}
	var failed []string
	for _, fr := range rep.FailedRules {
		failed = append(failed, fr.ID)
	}
	var want []string
	for _, r := range rep.Rules {
		if failing(r.Verdict) || r.Verdict == reports.HarnessError {
			want = append(want, r.ID)
		}
	}
	sort.Strings(failed)
	sort.Strings(want)
	if !slices.Equal(failed, want) {
		v.problem("the report's failed rules (%s) are not the rules whose verdict failed (%s)", strings.Join(failed, " "), strings.Join(want, " "))
	}
}

// Summary says what was verified in a few lines, in the report's words.
func (v *Verification) Summary() []string {
	rep := v.Report
	var out []string
	out = append(out, v.Checked...)
	total := len(v.Rules)
	parts := []string{fmt.Sprintf("%d recomputed from the traffic", v.Count(Recomputed))}
	for _, how := range []string{TrustNotDecidable, TrustScenarios, TrustHidden} {
		if n := v.Count(how); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, how))
		}
	}
	parts = append(parts, fmt.Sprintf("%d not judged (%s)", v.Count(NotJudged), notJudgedCounts(rep)))
	out = append(out, fmt.Sprintf("verdicts: %d rules: %s", total, strings.Join(parts, "; ")))
	return out
}

// notJudgedCounts says the verdicts of the rules not judged, as the report
// counts them.
func notJudgedCounts(rep *reports.Report) string {
	var parts []string
	for _, vd := range reports.Verdicts {
		if judgedVerdict(vd) {
			continue
		}
		if n := rep.Counts[vd]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, vd))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
