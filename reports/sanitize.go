package reports

import "github.com/invokeconf/invokeconf/internal/safetext"

// printable makes text safe for every writer (safetext.Clean): no report
// turns into invalid XML or JSON, and no terminal obeys an escape code. A
// run's findings and transcripts were cleaned where they were made (the
// steps, the passive judgement); the writers pass what they add through
// printable once more as they write, a guard that costs nothing on clean
// text.
func printable(s string) string { return safetext.Clean(s) }
