package steps

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/cucumber/godog"
	"gopkg.in/yaml.v3"

	"github.com/invokeconf/invokeconf/profile"
)

// exportSteps: the export route (EXPORT-*), what it drops (DROP-01..06) and
// the shape of a project bundle (BUNDLE-01). The response shape is not shown
// beyond spec.type, spec.payload and spec.includes, so the export is parsed
// (YAML or JSON) and items are looked for as text among its keys and
// values; a child's type is read from its spec.type (or type).
func exportSteps(sc *godog.ScenarioContext, bw *bundleWorld) {
	step(sc, `^I export the export project$`, func() error { return bw.exportSeeded(false) },
		exportNeeds("keys.bundles")...)
	step(sc, `^I export the export project with its app$`, func() error { return bw.exportSeeded(true) },
		exportNeeds("keys.bundles", "bundles.export.appPublicID")...)
	step(sc, `^I export the project of installation "(\w+)"$`, bw.exportInstalled, "keys.bundles", "routes")

	step(sc, `^the export is a project bundle$`, bw.isProjectBundle)
	step(sc, `^the payload of the export holds every task of the export project$`, func() error {
		e, err := bw.exportProject()
		if err != nil {
			return err
		}
		return bw.payloadHolds(e.Tasks, "bundles.export.tasks")
	}, exportNeeds("bundles.export.tasks")...)
	step(sc, `^the payload of the export holds the tasks "([^"]*)"$`, func(list string) error {
		l, err := bw.w.expand(list)
		if err != nil {
			return need(err)
		}
		return bw.payloadHolds(splitList(l), "")
	})
	step(sc, `^the export includes exactly one "(\w+)" child, and it mentions the export (agent|app)$`, bw.exactlyOneChild, exportNeeds()...)
	step(sc, `^the export includes no app child and does not mention the export app$`, bw.noApp, exportNeeds()...)
	step(sc, `^the export includes a "(\w+)" child for each of "([^"]*)"$`, func(kind, list string) error {
		l, err := bw.w.expand(list)
		if err != nil {
			return need(err)
		}
		return bw.childForEach(kind, splitList(l), "")
	})
	step(sc, `^the export includes a "knowledge" child for each knowledge set attached to the export agent$`, func() error {
		e, err := bw.exportProject()
		if err != nil {
			return err
		}
		return bw.childForEach("knowledge", e.KnowledgeAttached, "bundles.export.knowledgeAttached")
	}, exportNeeds("bundles.export.knowledgeAttached")...)
	step(sc, `^the export includes a "connector" child for each connector the export project references$`, func() error {
		e, err := bw.exportProject()
		if err != nil {
			return err
		}
		return bw.childForEach("connector", e.ConnectorsReferenced, "bundles.export.connectorsReferenced")
	}, exportNeeds("bundles.export.connectorsReferenced")...)
	step(sc, `^the export mentions no knowledge set that is not attached to the export agent$`, func() error {
		e, err := bw.exportProject()
		if err != nil {
			return err
		}
		return bw.mentionsNone(e.KnowledgeDetached, "bundles.export.knowledgeDetached")
	}, exportNeeds("bundles.export.knowledgeDetached")...)
	step(sc, `^the export mentions no connector that the export project does not reference$`, func() error {
		e, err := bw.exportProject()
		if err != nil {
			return err
		}
		return bw.mentionsNone(e.ConnectorsUnreferenced, "bundles.export.connectorsUnreferenced")
	}, exportNeeds("bundles.export.connectorsUnreferenced")...)
	step(sc, `^the export mentions none of the export project's dropped "(\w+)"$`, bw.droppedAbsent,
		exportNeeds("bundles.export.dropped.$1")...)
	step(sc, `^the export names every environment variable of the export project but none of their values$`, bw.envNamesOnly,
		exportNeeds("bundles.export.envVars")...)
	step(sc, `^the export holds no task trigger but schedule and onDemand, and holds both$`, bw.triggersKept, exportNeeds()...)
}

// exportNeeds are the needs of a step that reads the export project
// (exportProject): its IDs, and more.
func exportNeeds(more ...string) []string {
	return append([]string{"bundles.export.projectID", "bundles.export.agentID"}, more...)
}

// exportProject returns the profile's export project, or untested.
func (bw *bundleWorld) exportProject() (profile.ExportProject, error) {
	e := bw.w.P.Bundles.Export
	if e.ProjectID == "" || e.AgentID == "" {
		return e, need(&profile.MissingError{What: "bundles.export.projectID and agentID"})
	}
	return e, nil
}

// exportPath is the spec's export route.
func exportPath(agentID, projectID string) string {
	return "/api/assistants/" + url.PathEscape(agentID) + "/projects/" + url.PathEscape(projectID) + "/bundle"
}

func (bw *bundleWorld) exportSeeded(withApp bool) error {
	e, err := bw.exportProject()
	if err != nil {
		return err
	}
	p := exportPath(e.AgentID, e.ProjectID)
	if withApp {
		if e.AppPublicID == "" {
			return need(&profile.MissingError{What: "bundles.export.appPublicID"})
		}
		p += "?app=" + url.QueryEscape(e.AppPublicID)
	}
	_, err = bw.call("GET", p, "", nil, "")
	return err
}

// exportInstalled exports the project an installation created, through its
// agent and project as the record names them (BUNDLE-06, INSTALL-02,
// UPDATE-04).
func (bw *bundleWorld) exportInstalled(name string) error {
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	if rec.Project == nil || rec.Project.ID == "" || rec.Project.AgentID == "" {
		return fmt.Errorf("installation %q names no project with its id and agentID (docs/bundles.md)", name)
	}
	_, err = bw.call("GET", exportPath(rec.Project.AgentID, rec.Project.ID), "", nil, "")
	return err
}

// exported parses the last response as an export.
func (bw *bundleWorld) exported() (map[string]any, error) {
	r := bw.w.resp
	if r == nil {
		return nil, errors.New("no export yet")
	}
	if r.Status != 200 {
		return nil, fmt.Errorf("the export answered %d, want 200: %s", r.Status, abbreviate(r.Body))
	}
	tree, err := parseTree(r.Body)
	if err != nil {
		return nil, fmt.Errorf("the export: %w", err)
	}
	return tree, nil
}

// parseTree reads a document as JSON (when it starts with '{') or YAML.
func parseTree(b []byte) (map[string]any, error) {
	b = bytes.TrimSpace(b)
	var v any
	if bytes.HasPrefix(b, []byte("{")) {
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("not JSON: %v", err)
		}
	} else if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("neither JSON nor YAML: %v", err)
	}
	m, ok := normalize(v).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a mapping: %s", abbreviate(b))
	}
	return m, nil
}

// normalize turns YAML's map[any]any into map[string]any.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalize(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	}
	return v
}

func specOf(tree map[string]any) map[string]any {
	s, _ := tree["spec"].(map[string]any)
	return s
}

// includesOf returns spec.includes as mappings.
func includesOf(tree map[string]any) []map[string]any {
	raw, _ := specOf(tree)["includes"].([]any)
	var out []map[string]any
	for _, c := range raw {
		if m, ok := c.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// childType reads a child's type: spec.type, or type.
func childType(c map[string]any) string {
	if s, ok := c["spec"].(map[string]any); ok {
		if t, ok := s["type"].(string); ok {
			return t
		}
	}
	t, _ := c["type"].(string)
	return t
}

func scalarString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// texts collects every key and scalar value of a tree.
func texts(v any, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			*out = append(*out, k)
			texts(e, out)
		}
	case []any:
		for _, e := range x {
			texts(e, out)
		}
	case nil:
	default:
		*out = append(*out, scalarString(x))
	}
}

// mentions reports whether any key or value of a tree contains s.
func mentions(v any, s string) bool {
	var all []string
	texts(v, &all)
	for _, t := range all {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// isProjectBundle: BUNDLE-01. spec.type project, spec.payload (the project),
// spec.includes (child bundles).
func (bw *bundleWorld) isProjectBundle() error {
	tree, err := bw.exported()
	if err != nil {
		return err
	}
	spec := specOf(tree)
	if spec == nil {
		return fmt.Errorf("the export has no spec: %s", abbreviate(bw.w.resp.Body))
	}
	if t, _ := spec["type"].(string); t != "project" {
		return fmt.Errorf("spec.type is %q, want project", spec["type"])
	}
	if _, ok := spec["payload"].(map[string]any); !ok {
		return errors.New("spec.payload is missing: it should hold the project and its tasks")
	}
	if _, ok := spec["includes"].([]any); !ok {
		return errors.New("spec.includes is missing: it should hold the child bundles")
	}
	return nil
}

// payloadHolds: BUNDLE-01 (the tasks are in spec.payload), BUNDLE-06,
// UPDATE-04 (an orphaned task stays on the project).
func (bw *bundleWorld) payloadHolds(tasks []string, field string) error {
	if len(tasks) == 0 {
		return need(&profile.MissingError{What: field})
	}
	tree, err := bw.exported()
	if err != nil {
		return err
	}
	payload := specOf(tree)["payload"]
	for _, t := range tasks {
		if !mentions(payload, t) {
			return fmt.Errorf("spec.payload of the export does not hold the task %q", t)
		}
	}
	return nil
}

func childrenOf(tree map[string]any, kind string) []map[string]any {
	var out []map[string]any
	for _, c := range includesOf(tree) {
		if childType(c) == kind {
			out = append(out, c)
		}
	}
	return out
}

// exactlyOneChild: EXPORT-01 (the agent), EXPORT-04 (the app given by ?app=).
func (bw *bundleWorld) exactlyOneChild(kind, which string) error {
	e, err := bw.exportProject()
	if err != nil {
		return err
	}
	names := []string{e.AgentName, e.AgentID}
	if which == "app" {
		names = []string{e.AppName, e.AppPublicID}
	}
	tree, err := bw.exported()
	if err != nil {
		return err
	}
	cs := childrenOf(tree, kind)
	if len(cs) != 1 {
		return fmt.Errorf("spec.includes holds %d %q children, want exactly 1", len(cs), kind)
	}
	for _, n := range names {
		if n != "" && mentions(cs[0], n) {
			return nil
		}
	}
	return fmt.Errorf("the %s child does not mention the export %s (%q)", kind, which, strings.Join(names, `" or "`))
}

// noApp: EXPORT-04. Without ?app the export has no app child: a project has
// no app association the export could read.
func (bw *bundleWorld) noApp() error {
	e, err := bw.exportProject()
	if err != nil {
		return err
	}
	tree, err := bw.exported()
	if err != nil {
		return err
	}
	if cs := childrenOf(tree, "app"); len(cs) > 0 {
		return fmt.Errorf("spec.includes holds %d app children without ?app=", len(cs))
	}
	if e.AppPublicID != "" && mentions(tree, e.AppPublicID) {
		return fmt.Errorf("the export mentions the app %q without ?app=", e.AppPublicID)
	}
	return nil
}

// childForEach: EXPORT-02, EXPORT-03, INSTALL-02.
func (bw *bundleWorld) childForEach(kind string, names []string, field string) error {
	if len(names) == 0 {
		return need(&profile.MissingError{What: field})
	}
	tree, err := bw.exported()
	if err != nil {
		return err
	}
	cs := childrenOf(tree, kind)
	for _, n := range names {
		found := false
		for _, c := range cs {
			found = found || mentions(c, n)
		}
		if !found {
			return fmt.Errorf("spec.includes holds no %q child for %q (%d %s children)", kind, n, len(cs), kind)
		}
	}
	return nil
}

// mentionsNone: EXPORT-02, EXPORT-03 (only what is attached or referenced
// travels) and DROP-01..06.
func (bw *bundleWorld) mentionsNone(values []string, field string) error {
	if len(values) == 0 {
		return need(&profile.MissingError{What: field})
	}
	tree, err := bw.exported()
	if err != nil {
		return err
	}
	for _, v := range values {
		if mentions(tree, v) {
			return fmt.Errorf("the export mentions %q (%s), which must not travel", v, field)
		}
	}
	return nil
}

// droppedAbsent: DROP-01, DROP-03, DROP-05, DROP-06.
func (bw *bundleWorld) droppedAbsent(kind string) error {
	e, err := bw.exportProject()
	if err != nil {
		return err
	}
	values, ok := e.Dropped.Kind(kind)
	if !ok {
		return fmt.Errorf("unknown kind of dropped item %q", kind)
	}
	return bw.mentionsNone(values, "bundles.export.dropped."+kind)
}

// envNamesOnly: DROP-02. Names travel, values are dropped.
func (bw *bundleWorld) envNamesOnly() error {
	e, err := bw.exportProject()
	if err != nil {
		return err
	}
	if len(e.EnvVars) == 0 {
		return need(&profile.MissingError{What: "bundles.export.envVars"})
	}
	tree, err := bw.exported()
	if err != nil {
		return err
	}
	for name, value := range e.EnvVars {
		if !mentions(tree, name) {
			return fmt.Errorf("the export does not name the environment variable %s: names travel", name)
		}
		if value != "" && mentions(tree, value) {
			return fmt.Errorf("the export holds the value of the environment variable %s: values are dropped", name)
		}
	}
	return nil
}

// droppedTriggers are the trigger kinds of the spec's "Dropped on export"
// table.
var droppedTriggers = []string{"webhook", "email", "poll", "onSlackMessage", "onDiscordMessage", "onTaskComplete"}

// triggersKept: DROP-04. No key or value of the export is a dropped trigger
// kind; schedule (or scheduled) and onDemand survive. The export project's
// tasks carry every kind (profile: bundles.export.tasks).
func (bw *bundleWorld) triggersKept() error {
	if _, err := bw.exportProject(); err != nil {
		return err
	}
	tree, err := bw.exported()
	if err != nil {
		return err
	}
	var all []string
	texts(tree, &all)
	has := map[string]bool{}
	for _, t := range all {
		has[t] = true
	}
	for _, k := range droppedTriggers {
		if has[k] {
			return fmt.Errorf("the export still holds a %s trigger: only schedule and onDemand survive", k)
		}
	}
	if !has["schedule"] && !has["scheduled"] {
		return errors.New("the export holds no schedule trigger: schedule survives")
	}
	if !has["onDemand"] {
		return errors.New("the export holds no onDemand trigger: onDemand survives")
	}
	return nil
}
