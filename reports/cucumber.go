package reports

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/invokeconf/invokeconf/profile"
)

// completeCucumber rewrites godog's Cucumber JSON so that Cucumber viewers
// show what report.html shows: keys replaced by their variables, outline
// rows named by their example values, placeholders that stand for profile
// fields filled in (keys as their variables), every text made printable,
// each step's match located at its step definition's function, and a
// failed step given the transcript, the curl command and the spec
// words as embeddings.
func completeCucumber(raw []byte, rep *Report, p *profile.Profile) ([]byte, error) {
	var doc []map[string]any
	if err := json.Unmarshal([]byte(p.RedactEnv(string(raw))), &doc); err != nil {
		return nil, err
	}
	byKey := map[string]int{} // "file:line" of a scenario -> index in rep.Scenarios
	for i, s := range rep.Scenarios {
		byKey[fmt.Sprintf("%s:%d", path.Base(s.URI), s.Line)] = i
	}
	findings := map[string]Finding{}
	for _, f := range rep.Findings {
		findings[f.ID()] = f
	}
	fill := placeholderFiller(p)
	for _, feat := range doc {
		uri, _ := feat["uri"].(string)
		elems, _ := feat["elements"].([]any)
		for _, e := range elems {
			el, ok := e.(map[string]any)
			if !ok {
				continue
			}
			line, _ := el["line"].(float64)
			i, found := byKey[fmt.Sprintf("%s:%d", path.Base(uri), int(line))]
			if found {
				el["name"] = rep.Scenarios[i].Title()
			}
			stepList, _ := el["steps"].([]any)
			for _, st := range stepList {
				step, ok := st.(map[string]any)
				if !ok {
					continue
				}
				if name, ok := step["name"].(string); ok {
					if match, ok := step["match"].(map[string]any); ok {
						// godog names the line where every step is bound to
						// its scenario, which tells a reader nothing.
						if loc := rep.stepLocations[name]; loc != "" {
							match["location"] = loc
						}
					}
					step["name"] = printable(fill(name))
				}
				result, _ := step["result"].(map[string]any)
				if result == nil {
					continue
				}
				if msg, ok := result["error_message"].(string); ok {
					result["error_message"] = printable(msg)
				}
				if result["status"] == "failed" && found {
					if f, ok := findings[rep.Scenarios[i].ID]; ok {
						if f.Prerequisite {
							// The scenario's own rules were not checked:
							// skipped, blocked by the rule that failed.
							result["status"] = "skipped"
							result["error_message"] = printable(fmt.Sprintf("blocked by %s (failed in this step): %s", f.RuleID, f.Line()))
						}
						step["embeddings"] = append(asList(step["embeddings"]), embeddings(f, p.EnvRedactor())...)
					}
				}
			}
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "    ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// embeddings are a failure's spec words, expected vs actual, curl command
// and transcript, as Cucumber JSON attachments. They are base64, where no
// grep for a key would find one, so they are redacted once more here.
func embeddings(f Finding, redact func(string) string) []any {
	var spec strings.Builder
	if r := f.Rule; r.ID != "" {
		fmt.Fprintf(&spec, "%s %s (%s, %s): %s\nspec: %s\n\n", r.ID, r.Level, r.Source, r.Section, r.Rule, r.Spec)
	}
	if len(f.Blocked) > 0 {
		fmt.Fprintf(&spec, "blocked (untested): %s\n\n", strings.Join(f.Blocked, " "))
	}
	if f.Spec != "" {
		fmt.Fprintf(&spec, "the check rests on: %s\n", f.Spec)
	}
	var tr strings.Builder
	for i, ex := range f.Transcript {
		fmt.Fprintf(&tr, "--- exchange %d\n%s\n\n%s\n\n", i+1, printable(requestText(ex)), responseText(ex))
	}
	embedding := func(name, text string) map[string]any {
		return map[string]any{"name": name, "mime_type": "text/plain", "data": base64.StdEncoding.EncodeToString([]byte(redact(text)))}
	}
	out := []any{
		embedding("spec", spec.String()),
		embedding("expected vs actual", failureText(f)),
	}
	if n := len(f.Curl); n > 0 {
		out = append(out, embedding("curl (export the INVOKECONF_KEYS_* variables first)", f.Curl[n-1]))
	}
	if tr.Len() > 0 {
		out = append(out, embedding("transcript", tr.String()))
	}
	return out
}

var profilePlaceholder = regexp.MustCompile(`\$\{([A-Za-z0-9_.]+)\}`)

// placeholderFiller fills ${path} placeholders that name a field of the
// profile; keys become references to their variables; others stay.
func placeholderFiller(p *profile.Profile) func(string) string {
	values := map[string]string{}
	for _, f := range p.Fields() {
		if f.Kind != "string" {
			continue
		}
		if f.Secret {
			values[f.Path] = "$" + f.Env
		} else if v := f.Value(); v != "" {
			values[f.Path] = v
		}
	}
	return func(s string) string {
		return profilePlaceholder.ReplaceAllStringFunc(s, func(m string) string {
			if v, ok := values[m[2:len(m)-1]]; ok {
				return v
			}
			return m
		})
	}
}
