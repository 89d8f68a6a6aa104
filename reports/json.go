package reports

import (
	"encoding/json"
	"io"
)

// SchemaVersion names the JSON summary's schema. Fields are only ever added
// within a version; a rename, removal or change of type bumps it. v2: the
// profile is an object, not YAML text; identity (harness, spec and catalog
// digests, product), spec and contract verdicts apart, failedRules. v3:
// failures became findings, each naming the one rule it breaks (rule), the
// scenario or the recorded exchange it was seen in, whether it broke in a
// step the scenario rests on (prerequisite) and the rules it blocked; rules
// carry blockedBy, failedRules the rules each blocked; scenarios may be
// "blocked".
const SchemaVersion = "invokeconf.summary/v3"

// WriteJSON writes the summary: the whole Report (rules with verdicts and
// what blocked them, areas, counts, scenarios, findings with transcripts and
// curl commands, profile gaps, baseline) as indented JSON.
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}
