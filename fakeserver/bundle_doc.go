package fakeserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Spec: Resources / Project bundle; Limits (project bundle children);
// Dropped on export. The spec shows spec.type, spec.payload and
// spec.includes; the rest of the document is this server's choice,
// documented in docs/bundles.md:
//
//	kind: Bundle                     # optional
//	metadata: {name: NAME, version: "1.0.0"}   # version: an opaque string
//	spec:
//	  type: project
//	  payload:
//	    thread:                      # the lead thread, flagged as a project
//	      name: ...
//	      project: true
//	      connectors: [NAME, ...]    # connectors the project references, by child name
//	      env: [{name: REGION}]      # names travel, values do not
//	    tasks:
//	      - name: NAME               # the task's object name
//	        prompt: ...
//	        triggers: [{type: schedule, cron: "0 6 * * *"}, {type: onDemand}]
//	        steps: [{name: review, approval: {}}]
//	  includes:                      # child bundles, each a document of its own
//	    - metadata: {name: NAME, version: "1.0.0"}
//	      spec:
//	        type: connector | knowledge | agent | app
//	        testHook: failInstall | interruptOnce | tripEvalGate   # test hooks, see below
//	        payload: {...}           # agent: {connectors: [NAME]}; app: {publicID: ID}
//
// Test hooks let a harness drive the transitions a healthy server never
// takes on its own: failInstall (installing this child fails),
// interruptOnce (the first composite update that would write this child
// stops right before it, as if the server went down; the same request sent
// again goes on) and tripEvalGate (a composite update that would change this
// child trips its eval gate; updating the child's own installation directly
// passes it).

// Child types (spec: Child types in spec.includes), in install order
// (INSTALL-01: connector, knowledge, agent, app, then project and tasks).
const (
	kindConnector = "connector"
	kindKnowledge = "knowledge"
	kindAgent     = "agent"
	kindApp       = "app"
	kindProject   = "project"
	kindTask      = "task"
)

// installOrder ranks the child types by bundle rule 1.
var installOrder = map[string]int{kindConnector: 0, kindKnowledge: 1, kindAgent: 2, kindApp: 3}

func isChildType(t string) bool { _, ok := installOrder[t]; return ok }

// Test hooks (docs/bundles.md).
const (
	hookFailInstall   = "failInstall"
	hookInterruptOnce = "interruptOnce"
	hookTripEvalGate  = "tripEvalGate"
)

// bundleDoc is a bundle document: the project bundle, or one child bundle.
type bundleDoc struct {
	Kind     string  `json:"kind,omitempty"`
	Metadata docMeta `json:"metadata"`
	Spec     docSpec `json:"spec"`
}

type docMeta struct {
	Name    scalar `json:"name"`
	Version scalar `json:"version"`
}

type docSpec struct {
	Type     string         `json:"type"`
	TestHook string         `json:"testHook,omitempty"`
	Payload  map[string]any `json:"payload,omitempty"`
	Includes []bundleDoc    `json:"includes,omitempty"`
}

func (d *bundleDoc) name() string    { return string(d.Metadata.Name) }
func (d *bundleDoc) version() string { return string(d.Metadata.Version) }

// scalar is a string that a YAML author may also write as a number
// (version: 2).
type scalar string

func (s *scalar) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch x := v.(type) {
	case string:
		*s = scalar(x)
	case float64:
		*s = scalar(strconv.FormatFloat(x, 'f', -1, 64))
	case nil:
		*s = ""
	default:
		return fmt.Errorf("want a string, got %s", b)
	}
	return nil
}

// bundleError is a refusal of a bundle route with its status: a document
// the server refuses (nothing is written when one is returned), or a
// transition the server refuses.
type bundleError struct {
	status int
	msg    string
}

func (e *bundleError) Error() string { return e.msg }

func refuse(status int, format string, args ...any) error {
	return &bundleError{status, fmt.Sprintf(format, args...)}
}

// badDoc refuses a document that parses but is not a valid bundle.
func badDoc(format string, args ...any) error {
	return &bundleError{http.StatusUnprocessableEntity, fmt.Sprintf(format, args...)}
}

// parseDocument reads a bundle document in YAML or JSON. JSON is chosen by
// Content-Type or by a leading '{'.
func parseDocument(body []byte, contentType string) (*bundleDoc, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, &bundleError{http.StatusBadRequest, "empty bundle document"}
	}
	var generic any
	if mt == "application/json" || strings.HasSuffix(mt, "+json") || trimmed[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		if err := dec.Decode(&generic); err != nil {
			return nil, &bundleError{http.StatusBadRequest, fmt.Sprintf("malformed JSON bundle document: %v", err)}
		}
		if dec.More() {
			return nil, &bundleError{http.StatusBadRequest, "malformed JSON bundle document: more than one value"}
		}
	} else if err := yaml.Unmarshal(trimmed, &generic); err != nil {
		return nil, &bundleError{http.StatusBadRequest, fmt.Sprintf("malformed YAML bundle document: %v", err)}
	}
	if _, ok := generic.(map[string]any); !ok {
		return nil, &bundleError{http.StatusBadRequest, "malformed bundle document: the top level is not a mapping"}
	}
	b, err := json.Marshal(generic)
	if err != nil {
		return nil, &bundleError{http.StatusBadRequest, fmt.Sprintf("malformed bundle document: %v", err)}
	}
	var doc bundleDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, badDoc("bundle document does not fit the schema (docs/bundles.md): %v", err)
	}
	return &doc, nil
}

// projectView is the typed view of a project bundle's payload.
type projectView struct {
	thread map[string]any
	tasks  []map[string]any
	// taskJSON holds each task encoded, once stripped (encodeTasks).
	taskJSON []string
}

// encodeTasks encodes every task of the view.
func (v *projectView) encodeTasks() {
	v.taskJSON = make([]string, len(v.tasks))
	for i, t := range v.tasks {
		b, err := json.Marshal(t)
		if err != nil {
			panic(fmt.Sprintf("fakeserver: encode task: %v", err))
		}
		v.taskJSON[i] = string(b)
	}
}

// Caps on what a document may declare (docs/bundles.md): beyond them it is
// refused with 422 before anything else is done, so no install or update
// does work without bound. A body beyond Config.MaxBody is refused with 413.
const (
	maxDocTasks    = 1000
	maxDocChildren = 100
)

// viewProject reads spec.payload of a project bundle (BUNDLE-01): the lead
// thread flagged as a project, and its tasks.
func (s *view) viewProject(doc *bundleDoc) (*projectView, error) {
	p := doc.Spec.Payload
	if p == nil && s.defect(defPayloadlessAccepted) {
		p = map[string]any{"thread": map[string]any{"name": doc.name(), "project": true}}
		doc.Spec.Payload = p
	}
	if p == nil {
		return nil, badDoc("spec.payload is missing: a project bundle's payload holds the project (its lead thread) and its tasks")
	}
	th, ok := p["thread"].(map[string]any)
	if !ok {
		return nil, badDoc("spec.payload.thread is missing: the payload holds the project's lead thread")
	}
	if flag, _ := th["project"].(bool); !flag {
		return nil, badDoc("spec.payload.thread is not flagged as a project (project: true)")
	}
	v := &projectView{thread: th}
	raw, _ := p["tasks"].([]any)
	if p["tasks"] != nil && raw == nil {
		return nil, badDoc("spec.payload.tasks is not a list")
	}
	if len(raw) > maxDocTasks {
		return nil, badDoc("spec.payload.tasks declares %d tasks: this server installs at most %d per document (docs/bundles.md)", len(raw), maxDocTasks)
	}
	seen := map[string]bool{}
	for i, t := range raw {
		m, ok := t.(map[string]any)
		if !ok {
			return nil, badDoc("spec.payload.tasks[%d] is not a mapping", i)
		}
		name, _ := m["name"].(string)
		if name == "" {
			return nil, badDoc("spec.payload.tasks[%d] has no name", i)
		}
		if seen[name] {
			return nil, badDoc("spec.payload.tasks: two tasks named %q", name)
		}
		seen[name] = true
		v.tasks = append(v.tasks, m)
	}
	return v, nil
}

// validateProject checks a project bundle before anything is written:
// BUNDLE-01 (spec.type project, payload), BUNDLE-02 (exactly one agent),
// BUNDLE-03 (at most one app), BUNDLE-04 (any number of knowledge sets and
// connectors), BUNDLE-05 (no nested project), BUNDLE-08 (no other child
// type), and that names and references resolve.
func (s *view) validateProject(doc *bundleDoc) (*projectView, error) {
	if err := checkProjectHeader(doc); err != nil {
		return nil, err
	}
	view, err := s.viewProject(doc)
	if err != nil {
		return nil, err
	}
	count, names, err := s.checkChildren(doc)
	if err != nil {
		return nil, err
	}
	if err := s.checkChildCounts(count); err != nil {
		return nil, err
	}
	if err := checkConnectorRefs(doc, view, names); err != nil {
		return nil, err
	}
	return view, nil
}

// checkProjectHeader checks the project's own type, name and version
// (BUNDLE-01), and this server's limit on children.
func checkProjectHeader(doc *bundleDoc) error {
	switch {
	case doc.Spec.Type != kindProject:
		return badDoc("spec.type is %q: this route installs project bundles (spec.type: project)", doc.Spec.Type)
	case doc.name() == "":
		return badDoc("metadata.name is missing")
	case doc.version() == "":
		return badDoc("metadata.version is missing: bundles carry a version")
	case len(doc.Spec.Includes) > maxDocChildren:
		return badDoc("spec.includes declares %d children: this server installs at most %d per document (docs/bundles.md)", len(doc.Spec.Includes), maxDocChildren)
	}
	return nil
}

// checkChildren checks each child's type (BUNDLE-05, BUNDLE-08), name and
// version, and that no two children of a type share a name. It returns the
// children counted by type, and the set of "type/name".
func (s *view) checkChildren(doc *bundleDoc) (count map[string]int, names map[string]bool, err error) {
	count, names = map[string]int{}, map[string]bool{}
	for i := range doc.Spec.Includes {
		c := &doc.Spec.Includes[i]
		t := c.Spec.Type
		switch {
		case t == kindProject && !s.defect(defNestedProjectAccepted):
			return nil, nil, badDoc("spec.includes[%d] (%q) is a project: a project bundle cannot nest another project", i, c.name())
		case t == kindProject:
			continue // defect: the nested project is skipped
		case t == "":
			return nil, nil, badDoc("spec.includes[%d] has no spec.type", i)
		case !isChildType(t) && s.defect(defUnknownChildIgnored):
			continue
		case !isChildType(t):
			return nil, nil, badDoc("spec.includes[%d] (%q) has unknown child type %q: want agent, app, knowledge or connector", i, c.name(), t)
		case c.name() == "":
			return nil, nil, badDoc("spec.includes[%d] (%s) has no metadata.name", i, t)
		case c.version() == "":
			return nil, nil, badDoc("spec.includes[%d] (%s %q) has no metadata.version: every child carries a version", i, t, c.name())
		case names[t+"/"+c.name()]:
			return nil, nil, badDoc("spec.includes: two %s children named %q", t, c.name())
		}
		names[t+"/"+c.name()] = true
		count[t]++
	}
	return count, names, nil
}

// checkChildCounts checks exactly one agent (BUNDLE-02), at most one app
// (BUNDLE-03) and any number of knowledge sets and connectors (BUNDLE-04).
func (s *view) checkChildCounts(count map[string]int) error {
	switch {
	case count[kindAgent] == 0 && !s.defect(defAgentlessAccepted):
		return badDoc("spec.includes holds no agent: a project bundle needs exactly 1 agent")
	case count[kindAgent] > 1 && !s.defect(defTwoAgentsAccepted) && !s.defect(defInvalidHalfWritten):
		return badDoc("spec.includes holds %d agents: a project bundle needs exactly 1 agent", count[kindAgent])
	case count[kindApp] > 1 && !s.defect(defTwoAppsAccepted):
		return badDoc("spec.includes holds %d apps: a project bundle has at most 1 app", count[kindApp])
	case count[kindApp] == 0 && s.defect(defAppRequired):
		return badDoc("spec.includes holds no app")
	case count[kindKnowledge] > 1 && s.defect(defOneKnowledgeSet):
		return badDoc("spec.includes holds %d knowledge sets: at most 1 is supported", count[kindKnowledge])
	}
	return nil
}

// checkConnectorRefs checks that connectors named by the project and its
// agents are connectors of the bundle.
func checkConnectorRefs(doc *bundleDoc, view *projectView, names map[string]bool) error {
	refs := map[string][]string{"spec.payload.thread.connectors": stringList(view.thread["connectors"])}
	for _, c := range doc.Spec.Includes {
		if c.Spec.Type == kindAgent {
			refs["agent "+strconv.Quote(c.name())+" payload.connectors"] = stringList(c.Spec.Payload["connectors"])
		}
	}
	for where, list := range refs {
		for _, n := range list {
			if !names[kindConnector+"/"+n] {
				return badDoc("%s names connector %q, which spec.includes does not hold", where, n)
			}
		}
	}
	return nil
}

// childrenInOrder returns the children of a project bundle in install order
// (INSTALL-01), stable within a type; the install-document-order defect
// keeps the document's order.
func (s *view) childrenInOrder(doc *bundleDoc) []*bundleDoc {
	var out []*bundleDoc
	for i := range doc.Spec.Includes {
		c := &doc.Spec.Includes[i]
		if isChildType(c.Spec.Type) {
			out = append(out, c)
		}
	}
	if s.defect(defInstallDocumentOrder) {
		return out
	}
	sort.SliceStable(out, func(i, j int) bool { return installOrder[out[i].Spec.Type] < installOrder[out[j].Spec.Type] })
	return out
}

// Trigger kinds (spec: Dropped on export). Only schedule and onDemand
// survive an export (DROP-04).
var survivingTriggers = map[string]bool{"schedule": true, "scheduled": true, "onDemand": true}

// droppedKeys are removed from the project (its payload and its lead
// thread) and, where children marks it, from every child's payload (a
// connector's credentials, an agent's members, anything under Status); a
// knowledge set's own files are its content and stay (DROP-03, DROP-05,
// DROP-06). Each comes with the defect switch that keeps it on export.
var droppedKeys = []struct {
	key      string
	defect   defectID
	children bool
}{
	{"capabilities", defExportKeepsCapabilities, false},
	{"sharedTasks", defExportKeepsSharedTasks, false},
	{"members", defExportKeepsMembers, true},
	{"roleGrants", defExportKeepsMembers, true},
	{"files", defExportKeepsMembers, false},
	{"credentials", defExportKeepsMembers, true},
	{"status", defExportKeepsMembers, true},
}

// strip removes every item of the spec's "Dropped on export" table from a
// project bundle, in place, and returns one warning per item removed. The
// export route calls it on what it builds (DROP-01..06); the install and
// update routes call it on a hand-written document and answer with the
// warnings (DROP-07). defect reports whether a defect switch is on; only the
// export passes the server's switches.
func strip(doc *bundleDoc, defect func(defectID) bool) []string {
	p := doc.Spec.Payload
	if p == nil {
		return nil
	}
	st := &stripper{defect: defect}
	thread, _ := p["thread"].(map[string]any)
	if thread != nil {
		st.env(thread)
	}
	st.keys(doc, thread)
	tasks, _ := p["tasks"].([]any)
	for _, t := range tasks {
		if task, ok := t.(map[string]any); ok {
			st.task(task)
		}
	}
	return st.warnings
}

// stripper is one run of strip: the defect switches it honours and the
// warnings it has made.
type stripper struct {
	defect   func(defectID) bool
	warnings []string
}

func (st *stripper) warn(format string, args ...any) {
	st.warnings = append(st.warnings, fmt.Sprintf(format, args...))
}

// env strips environment variable values from the lead thread: names
// travel, values do not (DROP-02).
func (st *stripper) env(thread map[string]any) {
	if !st.defect(defExportKeepsEnvValues) {
		for _, e := range listOfMaps(thread["env"]) {
			name, _ := e["name"].(string)
			if deleteKey(e, "value") {
				st.warn("removed the value of environment variable %s: names travel, values do not", name)
			}
		}
	}
	if st.defect(defExportDropsEnvNames) {
		delete(thread, "env")
	}
}

// keys removes droppedKeys (DROP-03, DROP-05, DROP-06).
func (st *stripper) keys(doc *bundleDoc, thread map[string]any) {
	p := doc.Spec.Payload
	for _, d := range droppedKeys {
		if st.defect(d.defect) {
			continue
		}
		if thread != nil && deleteKey(thread, d.key) {
			st.warn("removed %s from the project", d.key)
		}
		if deleteKey(p, d.key) {
			st.warn("removed %s from spec.payload", d.key)
		}
		for _, c := range doc.Spec.Includes {
			if d.children && c.Spec.Payload != nil && deleteKey(c.Spec.Payload, d.key) {
				st.warn("removed %s from %s %q", d.key, c.Spec.Type, c.name())
			}
		}
	}
}

// task strips a task's approver addresses (DROP-01) and every trigger but
// schedule and onDemand (DROP-04).
func (st *stripper) task(task map[string]any) {
	name, _ := task["name"].(string)
	if !st.defect(defExportKeepsApprovers) {
		for _, step := range listOfMaps(task["steps"]) {
			if appr, ok := lookupKey(step, "approval").(map[string]any); ok && deleteKey(appr, "approvers") {
				st.warn("task %q: removed step.approval.approvers", name)
			}
		}
	}
	if trig, ok := task["triggers"].([]any); ok {
		task["triggers"] = st.triggers(name, trig)
	}
}

// triggers returns the triggers that survive an export; onTaskComplete is
// removed, not remapped (DROP-04).
func (st *stripper) triggers(task string, trig []any) []any {
	kept := []any{}
	for _, tr := range trig {
		m, _ := tr.(map[string]any)
		kind, _ := m["type"].(string)
		switch {
		case st.defect(defExportDropsSchedule):
			st.warn("task %q: removed trigger %s", task, kind)
		case survivingTriggers[kind] || st.defect(defExportKeepsTriggers) && (kind == "webhook" || kind == "email"):
			kept = append(kept, tr)
		case st.defect(defExportKeepsWebhookCapitalised) && kind == "webhook":
			c := map[string]any{}
			for k, v := range m {
				c[k] = v
			}
			c["type"] = "Webhook"
			kept = append(kept, c)
		default:
			st.warn("task %q: removed trigger %s (instance-local or not portable)", task, kind)
		}
	}
	return kept
}

// deleteKey deletes every key of m equal to key, ignoring case (the spec
// writes SharedTasks and Status), and reports whether one was there.
func deleteKey(m map[string]any, key string) bool {
	found := false
	for k := range m {
		if strings.EqualFold(k, key) {
			delete(m, k)
			found = true
		}
	}
	return found
}

func lookupKey(m map[string]any, key string) any {
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return nil
}

func listOfMaps(v any) []map[string]any {
	raw, _ := v.([]any)
	var out []map[string]any
	for _, x := range raw {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func stringList(v any) []string {
	raw, _ := v.([]any)
	var out []string
	for _, x := range raw {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// deepCopy copies a JSON-like value, so a stored payload never aliases a
// document or an export.
func deepCopy[T any](v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("fakeserver: copy: %v", err))
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		panic(fmt.Sprintf("fakeserver: copy: %v", err))
	}
	return out
}
