package fakeserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Spec: Bundle routes (export); Dropped on export.

// handleExport serves GET /api/assistants/{assistant_id}/projects/{project_id}/bundle.
// The export holds the project and its tasks in spec.payload (BUNDLE-01),
// the agent (EXPORT-01), every standalone knowledge set attached to it
// (EXPORT-02), every connector the project or the agent references
// (EXPORT-03), and the app only when ?app=<publicID> names one (EXPORT-04);
// then every "Dropped on export" item is stripped (DROP-01..06). It answers
// YAML, or JSON when Accept asks for application/json.
func (s *view) handleExport(w http.ResponseWriter, r *http.Request) {
	if !s.bundleAuth(w, r) {
		return
	}
	doc, ok := s.exportDoc(w, r)
	if !ok {
		return
	}
	strip(doc, s.defect)
	out := toMap(doc)
	spec, _ := out["spec"].(map[string]any)
	e := &exportOut{out: out, spec: spec, status: http.StatusOK}
	rewriteIn(s.sw, exportRewrites, e)
	status := e.status
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		writeJSON(w, status, out)
		return
	}
	y, err := yaml.Marshal(out)
	if err != nil {
		s.problemErr(w, fmt.Errorf("encode export: %w", err))
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	w.WriteHeader(status)
	_, _ = w.Write(y)
}

// exportOut is an export answer on its way out: the document, its spec,
// and the status it goes out with.
type exportOut struct {
	out, spec map[string]any
	status    int
}

// exportRewrites are the output-only deviations of an export document, in
// the order they apply (rewrite.go).
var exportRewrites = []rewrite[*exportOut]{
	{defExportTasksOutsidePayload, exportSpec(tasksOutsidePayload)},
	{defExportPayloadTasksOnly, exportSpec(payloadTasksOnly)},
	{defExportAgentDuplicated, exportSpec(agentDuplicated)},
	{defExportTaskChildren, exportSpec(taskChildren)},
	{defExportNestsProject, func(e *exportOut) { nestsProject(e.out, e.spec) }},
	{defAgentInlined, exportSpec(agentInlined)},
	{defExportTypeMissing, func(e *exportOut) { delete(e.spec, "type") }},
	{defExportIncludesEmpty, func(e *exportOut) { e.spec["includes"] = []any{} }},
	{varChildTypeAssistant, exportSpec(childTypeAssistant)},
	{varExportPayloadList, exportSpec(payloadList)},
	{varExport2xx, func(e *exportOut) { e.status = http.StatusNonAuthoritativeInfo }},
}

// exportSpec is a rewrite of an export document's spec alone.
func exportSpec(f func(spec map[string]any)) func(*exportOut) {
	return func(e *exportOut) { f(e.spec) }
}

// tasksOutsidePayload serves the export-tasks-outside-payload defect.
func tasksOutsidePayload(spec map[string]any) {
	if payload, ok := spec["payload"].(map[string]any); ok {
		spec["tasks"] = payload["tasks"]
		delete(payload, "tasks")
	}
}

// payloadTasksOnly serves the export-payload-tasks-only defect.
func payloadTasksOnly(spec map[string]any) {
	if payload, ok := spec["payload"].(map[string]any); ok {
		if th, ok := payload["thread"].(map[string]any); ok {
			payload["env"] = th["env"] // only the lead thread itself is lost
		}
		delete(payload, "thread")
	}
}

// agentDuplicated serves the export-agent-duplicated defect.
func agentDuplicated(spec map[string]any) {
	includes, _ := spec["includes"].([]any)
	for _, c := range includes {
		if t, _ := c.(map[string]any)["spec"].(map[string]any)["type"].(string); t == kindAgent {
			spec["includes"] = append(includes, c)
		}
	}
}

// taskChildren serves the export-task-children defect.
func taskChildren(spec map[string]any) {
	payload, _ := spec["payload"].(map[string]any)
	tasks, _ := payload["tasks"].([]any)
	for _, t := range tasks {
		name, _ := t.(map[string]any)["name"].(string)
		inc, _ := spec["includes"].([]any)
		spec["includes"] = append(inc, map[string]any{"metadata": map[string]any{"name": name, "version": "1.0.0"},
			"spec": map[string]any{"type": kindTask, "payload": t}})
	}
}

// nestsProject serves the export-nests-project defect.
func nestsProject(out, spec map[string]any) {
	includes, _ := spec["includes"].([]any)
	spec["includes"] = append(includes, map[string]any{"metadata": out["metadata"],
		"spec": map[string]any{"type": kindProject, "payload": map[string]any{}}})
}

// agentInlined serves the agent-inlined defect.
func agentInlined(spec map[string]any) {
	var kept []any
	for _, c := range spec["includes"].([]any) {
		if t, _ := c.(map[string]any)["spec"].(map[string]any)["type"].(string); t == kindAgent {
			spec["payload"].(map[string]any)["agent"] = c
			continue
		}
		kept = append(kept, c)
	}
	spec["includes"] = kept
}

// childTypeAssistant serves the variant child-type-assistant: the agent
// child is typed "assistant".
func childTypeAssistant(spec map[string]any) {
	for _, c := range spec["includes"].([]any) {
		if cs, _ := c.(map[string]any)["spec"].(map[string]any); cs["type"] == kindAgent {
			cs["type"] = "assistant"
		}
	}
}

// payloadList serves the variant export-payload-list: spec.payload becomes
// a list of one-member mappings, in key order.
func payloadList(spec map[string]any) {
	payload, ok := spec["payload"].(map[string]any)
	if !ok {
		return
	}
	keys := make([]string, 0, len(payload))
	for k := range payload {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	list := make([]any, 0, len(keys))
	for _, k := range keys {
		list = append(list, map[string]any{k: payload[k]})
	}
	spec["payload"] = list
}

// exportDoc finds the project and app an export names and copies them into
// a document, with the store locked; stripping and encoding the copy need
// no lock. It answers the request itself when it returns false.
func (s *view) exportDoc(w http.ResponseWriter, r *http.Request) (*bundleDoc, bool) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	b := s.st.bundles
	p := b.projects[r.PathValue("project_id")]
	if p == nil {
		s.problem(w, http.StatusNotFound, "no project %s", r.PathValue("project_id"))
		return nil, false
	}
	if p.agentID != r.PathValue("assistant_id") {
		s.problem(w, http.StatusNotFound, "project %s is not a project of assistant %s", p.id, r.PathValue("assistant_id"))
		return nil, false
	}
	if p.installationID != "" && s.defect(defInstalledProjectNotExportable) {
		s.problem(w, http.StatusConflict, "project %s is managed by installation %s and cannot be exported", p.id, p.installationID)
		return nil, false
	}
	// EXPORT-04: a project has no app association the export could read, so
	// the app comes only from ?app=<publicID>.
	var app *resource
	pub := r.URL.Query().Get("app")
	if pub != "" && !s.defect(defExportAppIgnored) {
		for _, res := range b.resourcesOf(kindApp) {
			if res.publicID == pub {
				app = res
			}
		}
		if app == nil {
			s.problem(w, http.StatusNotFound, "no app with publicID %s", pub)
			return nil, false
		}
	} else if pub == "" && s.defect(defExportAppAlways) {
		if apps := b.resourcesOf(kindApp); len(apps) > 0 {
			app = apps[0]
		}
	}
	doc := s.buildExport(p, app)
	if pub == "" && s.defect(defExportAppRenamed) {
		if apps := b.resourcesOf(kindApp); len(apps) > 0 {
			doc.Spec.Includes = append(doc.Spec.Includes, bundleDoc{Metadata: docMeta{Name: scalar(apps[0].name), Version: scalar(apps[0].version)},
				Spec: docSpec{Type: "application", Payload: map[string]any{"title": apps[0].name}}})
		}
	}
	return doc, true
}

// toMap turns a document into its generic JSON form.
func toMap(doc *bundleDoc) map[string]any {
	b, err := json.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("fakeserver: encode export: %v", err))
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(fmt.Sprintf("fakeserver: encode export: %v", err))
	}
	return out
}

// buildExport assembles a project's bundle before stripping.
func (s *view) buildExport(p *bundleProject, app *resource) *bundleDoc {
	b := s.st.bundles
	tasks := []any{}
	for _, id := range p.taskIDs {
		if t := p.tasks[id]; t != nil {
			m := deepCopy(t.payload)
			m["name"] = t.name
			tasks = append(tasks, m)
		}
	}
	doc := &bundleDoc{Kind: "Bundle", Metadata: docMeta{Name: scalar(p.name), Version: scalar(p.version)},
		Spec: docSpec{Type: kindProject, Payload: map[string]any{"thread": deepCopy(p.thread), "tasks": tasks}}}
	ag := b.resources[p.agentID]

	var connectors []string
	switch {
	case s.defect(defExportAllConnectors):
		for _, r := range b.resourcesOf(kindConnector) {
			connectors = append(connectors, r.id)
		}
	case s.defect(defExportAgentConnectorsOnly):
		if ag != nil {
			connectors = ag.connectors
		}
	default:
		connectors = append(connectors, p.connectors...)
		if ag != nil {
			for _, id := range ag.connectors {
				if !contains(connectors, id) {
					connectors = append(connectors, id)
				}
			}
		}
	}
	var knowledge []string
	if s.defect(defExportAllKnowledge) {
		for _, r := range b.resourcesOf(kindKnowledge) {
			knowledge = append(knowledge, r.id)
		}
	} else if ag != nil {
		knowledge = ag.knowledge
	}
	add := func(id string) {
		if r := b.resources[id]; r != nil {
			doc.Spec.Includes = append(doc.Spec.Includes, bundleDoc{
				Metadata: docMeta{Name: scalar(r.name), Version: scalar(r.version)},
				Spec:     docSpec{Type: r.kind, Payload: deepCopy(r.payload)}})
		}
	}
	for _, id := range connectors {
		add(id)
	}
	for _, id := range knowledge {
		add(id)
	}
	if ag != nil {
		add(ag.id)
	}
	if app != nil {
		add(app.id)
	}
	return doc
}
