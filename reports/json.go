package reports

import (
	"encoding/json"
	"io"
)

// SchemaVersion names the JSON summary's schema. Fields are only ever added
// within a version; a rename, removal or change of type bumps it. v2: the
// profile is an object, not YAML text; identity (harness, spec and catalog
// digests, product), spec and contract verdicts apart, failedRules.
const SchemaVersion = "invokeconf.summary/v2"

// WriteJSON writes the summary: the whole Report (rules with verdicts, areas,
// counts, scenarios, failures with transcripts and curl commands, profile
// gaps, baseline) as indented JSON.
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}
