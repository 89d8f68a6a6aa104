// Package reports turns a run into verdicts and writes them down.
//
// Build judges every rule of the catalog (features.Rules) from the scenarios
// of a run: pass, fail (a MUST rule failed), warning (a SHOULD or MAY rule
// failed), expected failure (the baseline expects it), not applicable (the
// profile declares an optional capability absent), untested (a prerequisite
// is missing, and the reason names it), harness error, not observable (the
// catalog says a client cannot see it) and not selected. It knows no rule
// or scenario by name: everything comes from the catalog, the tags and the
// scenario statuses, so new features are judged without changes here.
//
// A rule is judged when it was checked (pass, fail, warning, expected
// failure); not applicable is counted apart. A run that did not judge every
// observable spec rule that applies is partial, never a certification, and
// names the rules it left out; spec rules and contract rules
// (features.Rule.Source) get verdicts apart, and a contract failure never
// turns the spec verdict red. A section or a run in which no rule was judged
// never reads pass: it is not applicable, not tested or not run.
// decide is the one exit-code policy, which the CLI and the runner's tests
// share. Every report names the harness build, the digests of the spec text
// and the catalog, and the target's product (version.go).
//
// The writers put one Report in several forms: a self-contained HTML
// certification report (html.go), a versioned JSON summary (json.go), JUnit
// XML whose test names carry rule IDs (junit.go), the completed Cucumber
// JSON (cucumber.go) and the console summary (console.go); each agrees with
// the exit code. Failures come from the steps' outcome.Failure values, never
// from parsing messages; target bytes are made printable (sanitize.go)
// before any writer sees them. Keys never appear in any of them: transcripts and messages
// carry references to the environment variables that hold the keys
// ($INVOKECONF_KEYS_AGENT), which also makes the curl commands (curl.go)
// work once those variables are exported.
//
// BuildPassive (passive.go) makes a Report of a passive judgement
// (checks.Summary: invokeconf proxy and judge) for the same writers, in
// Mode "passive": every rule of the catalog gets pass (with the exchanges
// that decided it), fail (with each exchange that broke it), untested, not
// seen, or not decidable (the catalog's passive_why); its outcome is fail
// or "no failure", never pass, and each writer says it is not a
// certification. JUnit has one test case per rule instead of per scenario.
package reports
