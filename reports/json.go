package reports

import (
	"encoding/json"
	"io"
)

// SchemaVersion names the JSON summary's schema. Fields are only ever added
// within a version; a rename or removal bumps it.
const SchemaVersion = "invokeconf.summary/v1"

// WriteJSON writes the summary: the whole Report (rules with verdicts, areas,
// counts, scenarios, failures with transcripts and curl commands, profile
// gaps, baseline) as indented JSON.
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}
