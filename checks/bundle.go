package checks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/invokeconf/invokeconf/outcome"
)

// The export checks judge what an exported document shows by itself,
// never what the project held (its agent, knowledge sets, connectors, app
// and triggers are known only to the service).
var bundleChecks = []Check{
	ExportIsProjectBundle,
	ExportNestsNoProject,
	ExportDropsTriggers,
}

// exportDocument returns the document of a bundle export: GET
// /api/assistants/{assistant_id}/projects/{project_id}/bundle answered 2xx
// (no status is named) with a JSON or YAML mapping; otherwise a Skip (a
// body of another kind is left undecided: its encoding is not shown).
func exportDocument(x *View) (map[string]any, error) {
	p := x.document.get(x, "document", func() documentParse {
		tree, err := parseExport(x)
		return documentParse{tree, err}
	})
	return p.tree, p.err
}

func parseExport(x *View) (map[string]any, error) {
	if x.Route().Kind != RouteExport {
		return nil, skip("not the export route")
	}
	if x.Response == nil || x.Response.Status/100 != 2 {
		return nil, skip("not answered 2xx")
	}
	b, err := body(x, true)
	if err != nil {
		return nil, err
	}
	tree, ok := parseDocument(b)
	if !ok {
		return nil, skip("the answer is no JSON or YAML mapping (the export's shape is not shown)")
	}
	return tree, nil
}

// exportSpec returns the spec mapping of a bundle export (the body's shape
// is not shown beyond spec.type, spec.payload and spec.includes), or a
// Skip.
func exportSpec(x *View) (map[string]any, error) {
	tree, err := exportDocument(x)
	if err != nil {
		return nil, err
	}
	spec, ok := tree["spec"].(map[string]any)
	if !ok {
		return nil, skip("the answer has no spec mapping")
	}
	return spec, nil
}

// parseDocument reads a document as JSON (when it starts with '{') or
// YAML, as the active steps do.
func parseDocument(b []byte) (map[string]any, bool) {
	b = bytes.TrimSpace(b)
	var v any
	if bytes.HasPrefix(b, []byte("{")) {
		if json.Unmarshal(b, &v) != nil {
			return nil, false
		}
	} else if yaml.Unmarshal(b, &v) != nil {
		return nil, false
	}
	m, ok := StringKeys(v).(map[string]any)
	return m, ok
}

// StringKeys turns YAML's map[any]any into map[string]any, in place.
func StringKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = StringKeys(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = StringKeys(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = StringKeys(e)
		}
		return x
	}
	return v
}

// ChildType is the type of an export's child bundle: its spec.type, or a
// type member beside spec.
func ChildType(c map[string]any) string {
	if s, ok := c["spec"].(map[string]any); ok {
		if t, ok := s["type"].(string); ok {
			return t
		}
	}
	t, _ := c["type"].(string)
	return t
}

// ExportNestsNoProject: BUNDLE-05. An export is a project bundle (the
// route exports a project), so no child of its spec.includes is of type
// project: "project" is the one child type the spec spells that the
// document alone can show. A child of type project fails it; otherwise it
// passes only when every child's type was read (a child whose type cannot
// be read may be a project).
var ExportNestsNoProject = Check{Rule: "BUNDLE-05", Spec: "Project (project): not allowed: a project bundle cannot nest another project", Judge: exportNestsNoProject}

func exportNestsNoProject(x *View, _ *History) error {
	spec, err := exportSpec(x)
	if err != nil {
		return err
	}
	raw, _ := spec["includes"].([]any)
	if len(raw) == 0 {
		return skip("spec.includes holds no child")
	}
	var types []string
	unread := 0
	for _, c := range raw {
		m, _ := c.(map[string]any)
		t := ChildType(m)
		if t == "" {
			unread++
		}
		types = append(types, fmt.Sprintf("%q", t))
	}
	for _, t := range types {
		if t == `"project"` {
			return outcome.Failf("the export's spec.includes", "no child of type project: a project bundle cannot nest another project",
				"children of the types %s", strings.Join(types, ", "))
		}
	}
	if unread > 0 {
		return skip("%d of the %d children of spec.includes show no type", unread, len(raw))
	}
	return nil
}

// droppedTriggerKinds are the trigger kinds of the spec's "Dropped on
// export" table.
var droppedTriggerKinds = map[string]bool{"webhook": true, "email": true, "poll": true, "onSlackMessage": true, "onDiscordMessage": true, "onTaskComplete": true}

// spelledTriggerKinds are the trigger kinds the spec spells, by their
// lower-case form (kinds compare case-insensitively: Webhook is webhook).
var spelledTriggerKinds = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"schedule", "scheduled", "onDemand", "webhook", "email", "poll", "onSlackMessage", "onDiscordMessage", "onTaskComplete"} {
		m[strings.ToLower(k)] = k
	}
	return m
}()

// spelledKind returns k in the spec's spelling when the spec spells it
// (any case).
func spelledKind(k string) (string, bool) {
	s, ok := spelledTriggerKinds[strings.ToLower(k)]
	return s, ok
}

// keyedTriggerSet reports whether the value of a kind's key in a triggers
// mapping says the trigger is there: set as IsSet reads an event member
// (null, false, 0, "" and [] say it is not), or an empty mapping, a
// trigger with no settings ("onDemand": {}).
func keyedTriggerSet(v any) bool {
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return true
	}
	return treeSet(v)
}

// treeSet reports whether a value of a parsed document is set, as IsSet
// reads an event member: not null, false, 0, "", {} or [].
func treeSet(v any) bool {
	b, err := json.Marshal(v)
	return err == nil && IsSet(b)
}

// TriggerKinds returns the kinds of the task triggers under every key named
// trigger or triggers (any case) of a tree, a kind the spec spells in the
// spec's spelling. The triggers' shape is not shown, so a kind is read only
// where it surely is one: a trigger written as a string, the type or kind
// member of a trigger mapping, or the keys of a triggers mapping that has
// neither (triggers keyed by kind) that the spec spells and whose value is
// set (keyedTriggerSet: "webhook": null is no webhook, "count": 1 no kind). A value
// elsewhere in a trigger, such as a notification address kind "email", is
// no kind.
func TriggerKinds(v any) []string {
	var out []string
	triggerKinds(v, &out)
	return out
}

func triggerKinds(v any, out *[]string) {
	add := func(k string) {
		if s, ok := spelledKind(k); ok {
			k = s
		}
		*out = append(*out, k)
	}
	kindOf := func(t any, keyed bool) {
		switch x := t.(type) {
		case string:
			add(x)
		case map[string]any:
			for _, k := range []string{"type", "kind"} {
				if s, ok := x[k].(string); ok {
					add(s)
					return
				}
			}
			if keyed {
				for k, e := range x {
					if s, ok := spelledKind(k); ok && keyedTriggerSet(e) {
						*out = append(*out, s)
					}
				}
			}
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if l := strings.ToLower(k); l != "trigger" && l != "triggers" {
				triggerKinds(e, out)
				continue
			}
			if list, ok := e.([]any); ok {
				for _, t := range list {
					kindOf(t, false)
				}
			} else {
				kindOf(e, true)
			}
		}
	case []any:
		for _, e := range x {
			triggerKinds(e, out)
		}
	}
}

// DroppedTriggers fails when a task trigger of payload (TriggerKinds) is of
// a kind the spec drops.
func DroppedTriggers(payload any) error {
	kinds := TriggerKinds(payload)
	sort.Strings(kinds)
	for _, k := range kinds {
		if droppedTriggerKinds[k] {
			return outcome.Failf("the task triggers of the export", "no "+k+" trigger: only schedule and onDemand survive",
				"triggers of the kinds %s", quote([]byte(strings.Join(kinds, ", "))))
		}
	}
	return nil
}

// ExportDropsTriggers: DROP-04, the dropped kinds: no task trigger of
// spec.payload is of a kind the spec drops. That schedule and onDemand
// survive needs to know the project had them, which the export alone does
// not show. An export whose payload shows no trigger of a kind the spec
// spells decides nothing (an unspelled kind may be anything).
var ExportDropsTriggers = Check{Rule: "DROP-04", Spec: "Only the task triggers schedule (scheduled) and onDemand survive.", Judge: exportDropsTriggers}

func exportDropsTriggers(x *View, _ *History) error {
	spec, err := exportSpec(x)
	if err != nil {
		return err
	}
	for _, k := range TriggerKinds(spec["payload"]) {
		if _, ok := spelledKind(k); ok {
			return DroppedTriggers(spec["payload"])
		}
	}
	return skip("spec.payload shows no task trigger of a kind the spec spells")
}

// ExportIsProjectBundle: BUNDLE-01, the form: an export is a project bundle
// ("Project bundle (spec.type: project)"): spec.type project, spec.payload
// (the project with its tasks) and spec.includes (the child bundles, an
// agent among them) present and set (treeSet). Their shapes are not shown
// ("Full schema of the bundle document beyond the elements above: not
// shown"), so neither must be a mapping or a list. An answer without a spec
// mapping is left undecided, as exportSpec leaves it (the active step fails
// it). That spec.payload holds the project itself and its tasks needs their
// names, which the export alone does not give.
var ExportIsProjectBundle = Check{Rule: "BUNDLE-01", Spec: "spec.payload: The project itself (the lead thread, flagged as a project) together with its tasks; spec.includes: Nested child bundles needed to run the project", Judge: exportIsProjectBundle}

func exportIsProjectBundle(x *View, _ *History) error {
	spec, err := exportSpec(x)
	if err != nil {
		return err
	}
	if t, _ := spec["type"].(string); t != "project" {
		return outcome.Failf("the export's spec.type", "project", "%s", showTree(spec["type"]))
	}
	if !treeSet(spec["payload"]) {
		return outcome.Failf("the export's spec.payload", "the project and its tasks (present and set)", "%s", showTree(spec["payload"]))
	}
	if !treeSet(spec["includes"]) {
		return outcome.Failf("the export's spec.includes", "the child bundles needed to run the project, an agent among them (present and set)", "%s", showTree(spec["includes"]))
	}
	return nil
}

// showTree shows part of a parsed document, as JSON; "missing" for none.
func showTree(v any) string {
	if v == nil {
		return "missing"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return quote(b)
}
