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
// The writers put one Report in several forms: a self-contained HTML
// certification report (html.go), a versioned JSON summary (json.go), JUnit
// XML whose test names carry rule IDs (junit.go) and the console summary
// (console.go). Keys never appear in any of them: transcripts and messages
// carry references to the environment variables that hold the keys
// ($INVOKECONF_KEYS_AGENT), which also makes the curl commands (curl.go)
// work once those variables are exported.
package reports
