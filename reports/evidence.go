package reports

// EvidenceSchema names the format of a report's evidence section.
const EvidenceSchema = "invokeconf.evidence/v1"

// RunEvidence is what a run made with evidence (run --evidence, package
// evidence) binds in summary.json: the files beside the reports that hold
// its traffic, plan and profile, each with its digest, and the run's
// judgement of every exchange rule by rule, which `invokeconf verify`
// recomputes from those files. The spec, catalog and harness digests are
// the report's Identity.
type RunEvidence struct {
	Schema string         `json:"schema"`
	Files  []EvidenceFile `json:"files"`
	// Exchanges counts the entries of the traffic file; Judged those with
	// a response, which the run's judgement judged.
	Exchanges int `json:"exchanges"`
	Judged    int `json:"judged"`
	// Judgement is the run's judgement of every exchange: one entry per
	// rule that traffic can decide (checks.Rules), in that order.
	Judgement []JudgedRule `json:"judgement"`
	// KeysHidden numbers the exchanges whose recorded bytes the redaction
	// of keys changed beyond the Authorization header (a key, or a piece
	// of a key's secret, in a body, a URL or another header): the run
	// judged them as they passed, the evidence holds them hidden.
	KeysHidden []int `json:"keysHidden,omitempty"`
	// FromEvidence holds, for each rule whose judgement from the evidence
	// differs from the run's because of those hidden keys, the judgement
	// the evidence gives (the run judged its own evidence to find them):
	// verify recomputes these, and takes the run's on trust.
	FromEvidence []JudgedRule `json:"fromEvidence,omitempty"`
}

// EvidenceFile is one file of a run's evidence.
type EvidenceFile struct {
	// Name is the file's name in the report's folder.
	Name string `json:"name"`
	// Digest is "sha256:<hex>" of its bytes; Bytes its size.
	Digest string `json:"digest"`
	Bytes  int64  `json:"bytes"`
	// Holds says what it holds, for people.
	Holds string `json:"holds"`
}

// JudgedRule is one rule's verdict in the judgement of every exchange.
type JudgedRule struct {
	Rule string `json:"rule"`
	// Verdict is the judgement's: pass, fail, untested or not seen.
	Verdict string `json:"verdict"`
	// Decided counts the exchanges that decided the rule, Broken those
	// that broke it; Exchanges numbers the first of those (the judgement
	// keeps 20 per rule).
	Decided   int   `json:"decided"`
	Broken    int   `json:"broken,omitempty"`
	Exchanges []int `json:"exchanges,omitempty"`
}
