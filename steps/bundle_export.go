package steps

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/profile"
)

// exportDefs: the export route (EXPORT-*), what it drops (DROP-01..06) and
// the shape of a project bundle (BUNDLE-01). The response shape is not shown
// beyond spec.type, spec.payload and spec.includes, so the export is parsed
// (YAML or JSON) and items are looked for as text among its keys and
// values. A child's type is read from its spec.type (or type), but only
// the literal types the spec gives (knowledge, connector, project) are
// looked for by type: the agent and app children are found by the
// profile's names and IDs, since "Agent" and "App" are prose.
func exportDefs() []Def {
	return []Def{
		step0(`^I export the export project$`, func(w *World) error { return w.exportSeeded(false) }).Need(exportNeeds("keys.bundles")...),
		step0(`^I export the export project with its app$`, func(w *World) error { return w.exportSeeded(true) }).Need(exportNeeds("keys.bundles", "bundles.export.appPublicID")...),
		step1(`^I export the project of installation "(\w+)"$`, func(w *World, name string) error { return w.exportInstalled(name, "") }).Need("keys.bundles", "routes"),
		step2(`^I export the project of installation "(\w+)" with the app "([^"]*)"$`, (*World).exportInstalled).Need("keys.bundles", "routes"),

		step0(`^the export is a project bundle$`, (*World).isProjectBundle).AboutRun(),
		step0(`^the payload of the export holds every task of the export project$`, func(w *World) error {
			e, err := w.exportProject()
			if err != nil {
				return err
			}
			return w.payloadHolds(e.Tasks, "bundles.export.tasks")
		}).Need(exportNeeds("bundles.export.tasks")...).AboutRun(),
		step1(`^the payload of the export holds the tasks "([^"]*)"$`, func(w *World, list string) error {
			l, err := w.expand(list)
			if err != nil {
				return err
			}
			return w.payloadHolds(splitList(l), "")
		}).AboutRun(),
		step1(`^the payload of the export does not hold the task "([^"]*)"$`, (*World).payloadLacks).AboutRun(),
		step0(`^the payload of the export holds the export project$`, func(w *World) error {
			e, err := w.exportProject()
			if err != nil {
				return err
			}
			if e.ProjectName == "" {
				return need(&profile.MissingError{What: "bundles.export.projectName"})
			}
			return w.payloadHoldsProject(e.ProjectName)
		}).Need(exportNeeds("bundles.export.projectName")...).AboutRun(),
		step1(`^the payload of the export holds the project "([^"]*)"$`, func(w *World, name string) error {
			n, err := w.expand(name)
			if err != nil {
				return err
			}
			return w.payloadHoldsProject(n)
		}).AboutRun(),
		step0(`^the export includes exactly one agent, at most one app, no project, and no child of another type$`, (*World).cardinality).Need(exportNeeds()...).AboutRun(),
		step1(`^the export mentions none of "([^"]*)"$`, func(w *World, list string) error {
			l, err := w.expand(list)
			if err != nil {
				return err
			}
			return w.mentionsNone(splitList(l), "the scenario's dropped values")
		}).AboutRun(),
		step0(`^the export includes exactly one child that mentions the export agent$`, func(w *World) error { return w.exactlyOneChild("agent") }).Need(exportNeeds()...).AboutRun(),
		step0(`^the export includes exactly one child that mentions the export app$`, func(w *World) error { return w.exactlyOneChild("app") }).Need(exportNeeds("bundles.export.appPublicID")...).AboutRun(),
		step0(`^the export includes no app child and does not mention the export app$`, (*World).noApp).Need(exportNeeds()...).AboutRun(),
		step1(`^the export includes a child that mentions the app "([^"]*)"$`, (*World).appChildFor).AboutRun(),
		step2(`^the export includes a "(knowledge|connector)" child for each of "([^"]*)"$`, func(w *World, kind, list string) error {
			l, err := w.expand(list)
			if err != nil {
				return err
			}
			return w.childForEach(kind, splitList(l), "")
		}).AboutRun(),
		step0(`^the export includes a "knowledge" child for each knowledge set attached to the export agent$`, func(w *World) error {
			e, err := w.exportProject()
			if err != nil {
				return err
			}
			return w.childForEach("knowledge", e.KnowledgeAttached, "bundles.export.knowledgeAttached")
		}).Need(exportNeeds("bundles.export.knowledgeAttached")...).AboutRun(),
		step0(`^the export includes a "connector" child for each connector the export project references$`, func(w *World) error {
			e, err := w.exportProject()
			if err != nil {
				return err
			}
			return w.childForEach("connector", e.ConnectorsReferenced, "bundles.export.connectorsReferenced")
		}).Need(exportNeeds("bundles.export.connectorsReferenced")...).AboutRun(),
		step0(`^the export mentions no knowledge set that is not attached to the export agent$`, func(w *World) error {
			e, err := w.exportProject()
			if err != nil {
				return err
			}
			return w.mentionsNone(e.KnowledgeDetached, "bundles.export.knowledgeDetached")
		}).Need(exportNeeds("bundles.export.knowledgeDetached")...).AboutRun(),
		step0(`^the export mentions no connector that the export project does not reference$`, func(w *World) error {
			e, err := w.exportProject()
			if err != nil {
				return err
			}
			return w.mentionsNone(e.ConnectorsUnreferenced, "bundles.export.connectorsUnreferenced")
		}).Need(exportNeeds("bundles.export.connectorsUnreferenced")...).AboutRun(),
		step1(`^the export mentions none of the export project's dropped "(\w+)"$`, (*World).droppedAbsent).Need(exportNeeds("bundles.export.dropped.$1")...).AboutRun(),
		step0(`^the export names every environment variable of the export project but none of their values$`, (*World).envNamesOnly).Need(exportNeeds("bundles.export.envVars")...).AboutRun(),
		step0(`^the export holds no task trigger but schedule and onDemand, and holds both$`, (*World).triggersKept).Asserts("DROP-04").AboutRun(),
	}
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
// UPDATE-04, UPDATE-05), with ?app= when app is not "".
func (bw *bundleWorld) exportInstalled(name, app string) error {
	rec, err := bw.read(name)
	if err != nil {
		return err
	}
	if rec.Project == nil || rec.Project.ID == "" || rec.Project.AgentID == "" {
		return outcome.Fail("the record of installation "+name, "a project with its id and agentID (docs/bundles.md)", "none")
	}
	p := exportPath(string(rec.Project.AgentID), string(rec.Project.ID))
	if app != "" {
		a, err := bw.w.expand(app)
		if err != nil {
			return err
		}
		p += "?app=" + url.QueryEscape(a)
	}
	_, err = bw.call("GET", p, "", nil, "")
	return err
}

// exported parses the last response as an export.
func (bw *bundleWorld) exported() (map[string]any, error) {
	r, err := bw.w.last()
	if err != nil {
		return nil, err
	}
	if !is2xx(r.Status()) {
		return nil, bw.w.refusal("the export (a 2xx with the project bundle: no status is named)", r)
	}
	tree, err := parseTree(r.Body())
	if err != nil {
		return nil, outcome.Failf("the export", "a YAML or JSON mapping", "%v", err)
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
	m, ok := checks.StringKeys(v).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a mapping: %s", abbreviate(b))
	}
	return m, nil
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
func childType(c map[string]any) string { return checks.ChildType(c) }

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
// spec.includes (child bundles): the passive judge's check
// (checks.ExportIsProjectBundle), once exported has read a 2xx mapping.
func (bw *bundleWorld) isProjectBundle() error {
	if _, err := bw.exported(); err != nil {
		return err
	}
	return bw.w.judge(checks.ExportIsProjectBundle)
}

// payloadHoldsProject: BUNDLE-01, BUNDLE-06. spec.payload holds "the project
// itself (the lead thread, flagged as a project)", not only its tasks: the
// project's name is among its keys and values (the shape is not shown).
func (bw *bundleWorld) payloadHoldsProject(name string) error {
	tree, err := bw.exported()
	if err != nil {
		return err
	}
	payload := specOf(tree)["payload"]
	if !mentions(payload, name) {
		return outcome.Failf("the export's spec.payload", fmt.Sprintf("the project itself (named %q) with its tasks", name), "%s", treeText(payload))
	}
	return nil
}

// payloadLacks: UNINSTALL-03. A deleted task is gone from the project.
func (bw *bundleWorld) payloadLacks(task string) error {
	t, err := bw.w.expand(task)
	if err != nil {
		return err
	}
	tree, err := bw.exported()
	if err != nil {
		return err
	}
	if mentions(specOf(tree)["payload"], t) {
		return outcome.Failf("the export's spec.payload", fmt.Sprintf("no task %q: it was deleted", t), "it still holds %q", t)
	}
	return nil
}

// cardinality: BUNDLE-02, BUNDLE-03, BUNDLE-05, BUNDLE-08. An export is a
// project bundle, so its children obey the spec's table: exactly one agent,
// at most one app, no project, no type outside the table. The spec spells
// only knowledge, connector and project, so the agent child is the one that
// mentions the export agent, the app child the one that mentions the export
// app, and their types are whatever the export gives them. Each rule is
// judged on its own: one that holds is checked in full whichever other
// fails, and the step fails on the first that broke.
func (bw *bundleWorld) cardinality() error {
	e, err := bw.exportProject()
	if err != nil {
		return err
	}
	tree, err := bw.exported()
	if err != nil {
		return err
	}
	// BUNDLE-05 is the passive check's; the rest needs the profile's names.
	first := bw.w.judgeIfDecided(checks.ExportNestsNoProject)
	if first == nil {
		bw.w.checkedInFull()
	}
	for _, v := range judgeChildren(includesOf(tree), e) {
		switch {
		case v.err == nil:
			bw.w.checkedInFull(v.rule)
		case first == nil:
			first = v.err
		}
	}
	return first
}

// ruleVerdict is one rule's verdict: nil when it holds.
type ruleVerdict struct {
	rule string
	err  error
}

// judgeChildren is the cardinality check on an export's children: the
// verdicts of BUNDLE-02, BUNDLE-03 and BUNDLE-08, in that order. Without
// exactly one agent child the others are not judged. A project child is
// BUNDLE-05's (ExportNestsNoProject), not a type outside the table.
func judgeChildren(cs []map[string]any, e profile.ExportProject) []ruleVerdict {
	got := "children: " + childSummary(cs)
	agents := namedChildren(cs, e.AgentName, e.AgentID)
	if len(agents) != 1 {
		return []ruleVerdict{{"BUNDLE-02", outcome.Fail("the export's spec.includes", fmt.Sprintf("exactly 1 agent child (one mentioning %s)", nameList(e.AgentName, e.AgentID)), got).
			Breaks("BUNDLE-02")}}
	}
	out := []ruleVerdict{{rule: "BUNDLE-02"}, {rule: "BUNDLE-03"}, {rule: "BUNDLE-08"}}
	fail := func(i int, expected string) {
		if out[i].err == nil {
			out[i].err = outcome.Fail("the export's spec.includes", expected, got).Breaks(out[i].rule)
		}
	}
	var app map[string]any
	for _, c := range namedChildren(cs, e.AppName, e.AppPublicID) {
		if !sameChild(c, agents[0]) {
			if app != nil {
				fail(1, fmt.Sprintf("at most 1 app child (children mentioning %s)", nameList(e.AppName, e.AppPublicID)))
				continue
			}
			app = c
		}
	}
	agentType, appType := childType(agents[0]), childType(app)
	for _, c := range cs {
		if sameChild(c, agents[0]) || app != nil && sameChild(c, app) {
			continue
		}
		switch t := childType(c); {
		case literalChildTypes[t], t == "project":
		case t != "" && t == agentType:
			fail(0, fmt.Sprintf("exactly 1 agent child: no second child of the agent's type %q", t))
		case t != "" && t == appType:
			fail(1, fmt.Sprintf("at most 1 app child: no second child of the app's type %q", t))
		default:
			fail(2, fmt.Sprintf("children of the spec's types only: the agent (%q), the app, knowledge, connector", agentType))
		}
	}
	return out
}

// literalChildTypes are the child types the spec spells out; project is
// one, though not allowed.
var literalChildTypes = map[string]bool{"knowledge": true, "connector": true}

// namedChildren returns the children that mention any of names and are not
// of a type the spec spells (knowledge, connector, project): the agent or
// app children, whatever their type. When several mention a name (an app
// may name its agent), those whose metadata.name is one of names are
// preferred.
func namedChildren(cs []map[string]any, names ...string) []map[string]any {
	var out, own []map[string]any
	for _, c := range cs {
		if t := childType(c); literalChildTypes[t] || t == "project" {
			continue
		}
		meta, _ := c["metadata"].(map[string]any)
		for _, n := range names {
			if n != "" && mentions(c, n) {
				out = append(out, c)
				if scalarString(meta["name"]) == n {
					own = append(own, c)
				}
				break
			}
		}
	}
	if len(out) > 1 && len(own) > 0 {
		return own
	}
	return out
}

// sameChild reports whether two children are the same mapping.
func sameChild(a, b map[string]any) bool {
	return a != nil && b != nil && fmt.Sprintf("%p", a) == fmt.Sprintf("%p", b)
}

// childSummary shows children by type and name, for messages.
func childSummary(cs []map[string]any) string {
	var parts []string
	for _, c := range cs {
		meta, _ := c["metadata"].(map[string]any)
		parts = append(parts, fmt.Sprintf("%q %v", childType(c), meta["name"]))
	}
	return bounded(strings.Join(parts, ", "))
}

// nameList shows the profile's names of an item, for messages.
func nameList(names ...string) string {
	var q []string
	for _, n := range names {
		if n != "" {
			q = append(q, strconv.Quote(n))
		}
	}
	return strings.Join(q, " or ")
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
			return outcome.Failf("the export's spec.payload", fmt.Sprintf("the task %q", t), "%s", treeText(payload))
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

// exactlyOneChild: EXPORT-01 (the agent), EXPORT-04 (the app given by
// ?app=). The child is found by the profile's name and ID, not by a type
// name the spec does not give.
func (bw *bundleWorld) exactlyOneChild(which string) error {
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
	cs := namedChildren(includesOf(tree), names...)
	if len(cs) != 1 {
		f := outcome.Failf("the export's spec.includes", fmt.Sprintf("exactly 1 child mentioning the export %s (%s)", which, nameList(names...)),
			"%d; children: %s", len(cs), childSummary(includesOf(tree)))
		if len(cs) > 1 {
			// The export holds it: more than one is the cardinality's
			// (exactly 1 agent: BUNDLE-02; at most 1 app: BUNDLE-03).
			f.Breaks(map[string]string{"agent": "BUNDLE-02", "app": "BUNDLE-03"}[which])
		}
		return f
	}
	return nil
}

// noApp: EXPORT-04. Without ?app the export has no app child: a project has
// no app association the export could read. No child but the agent's may
// mention the app's name or public ID, whatever its type, and nothing may
// mention the public ID.
func (bw *bundleWorld) noApp() error {
	e, err := bw.exportProject()
	if err != nil {
		return err
	}
	if e.AppName == "" && e.AppPublicID == "" {
		return need(&profile.MissingError{What: "bundles.export.appName or appPublicID"})
	}
	tree, err := bw.exported()
	if err != nil {
		return err
	}
	agents := namedChildren(includesOf(tree), e.AgentName, e.AgentID)
	for _, c := range includesOf(tree) {
		if len(agents) == 1 && sameChild(c, agents[0]) {
			continue // an agent may name an app it uses; the public ID is judged below
		}
		if (e.AppName != "" && mentions(c, e.AppName)) || (e.AppPublicID != "" && mentions(c, e.AppPublicID)) {
			return outcome.Failf("the export's spec.includes without ?app=", "no app child (none mentioning "+nameList(e.AppName, e.AppPublicID)+")", "%s", treeText(c))
		}
	}
	if e.AppPublicID != "" && mentions(tree, e.AppPublicID) {
		return outcome.Failf("the export without ?app=", "no mention of the app "+e.AppPublicID, "it is mentioned")
	}
	return nil
}

// appChildFor: UPDATE-05. An orphaned app is untouched, so ?app= still
// exports it: some child mentions it.
func (bw *bundleWorld) appChildFor(name string) error {
	n, err := bw.w.expand(name)
	if err != nil {
		return err
	}
	tree, err := bw.exported()
	if err != nil {
		return err
	}
	if len(namedChildren(includesOf(tree), n)) == 0 {
		// "An app child is included only when app is given": one that is
		// not, with ?app=, is EXPORT-04's too.
		return outcome.Failf("the export's spec.includes with ?app=", fmt.Sprintf("a child mentioning the app %q", n), "children: %s", childSummary(includesOf(tree))).
			Explained("EXPORT-04")
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
			return outcome.Failf("the export's spec.includes", fmt.Sprintf("a %s child for %q", kind, n), "%d %s children: %s", len(cs), kind, treeText(cs))
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
			return outcome.Failf("the export", fmt.Sprintf("no mention of %q (%s): it must not travel", v, field), "it is mentioned")
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
		return scenarioErrorf("unknown kind of dropped item %q in the feature", kind)
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
			return outcome.Failf("the export", "the environment variable name "+name+": names travel", "no mention of it")
		}
		if value != "" && mentions(tree, value) {
			return outcome.Failf("the export", "no value of the environment variable "+name+": values are dropped", "its value is there")
		}
	}
	return nil
}

// triggersKept: DROP-04. The spec drops task triggers only, so only the
// triggers of spec.payload are read: none is a dropped kind, and schedule
// (or scheduled) and onDemand survive. A tool or task named email elsewhere
// is no trigger.
func (bw *bundleWorld) triggersKept() error {
	tree, err := bw.exported()
	if err != nil {
		return err
	}
	return judgeTriggers(specOf(tree)["payload"])
}

// judgeTriggers is DROP-04 on an export's spec.payload: the dropped kinds
// are the passive check's (checks.DroppedTriggers); that schedule and
// onDemand survive is the scenario's, which knows the project had them.
func judgeTriggers(payload any) error {
	if err := checks.DroppedTriggers(payload); err != nil {
		return err
	}
	kinds := checks.TriggerKinds(payload)
	has := map[string]bool{}
	for _, k := range kinds {
		has[k] = true
	}
	got := "triggers of the kinds " + abbreviate([]byte(strings.Join(kinds, ", ")))
	if !has["schedule"] && !has["scheduled"] {
		return outcome.Fail("the task triggers of the export", "a schedule trigger: schedule survives", got)
	}
	if !has["onDemand"] {
		return outcome.Fail("the task triggers of the export", "an onDemand trigger: onDemand survives", got)
	}
	return nil
}

// treeText shows part of a parsed document in a message, as JSON.
func treeText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return abbreviate(b)
}
