package fakeserver

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"

	"github.com/invokeconf/invokeconf/profile"
)

// exportSeedJSON holds the content of the project the export scenarios
// export: every payload, with {placeholders} for what the profile names.
//
//go:embed seed_bundles.json
var exportSeedJSON []byte

// exportSeed is exportSeedJSON decoded.
type exportSeed struct {
	DefaultProjectName string         `json:"defaultProjectName"`
	DefaultTask        string         `json:"defaultTask"`
	Knowledge          map[string]any `json:"knowledge"`
	Connector          map[string]any `json:"connector"`
	App                map[string]any `json:"app"`
	Agent              map[string]any `json:"agent"`
	Project            map[string]any `json:"project"`
	Task               map[string]any `json:"task"`
	FirstTask          struct {
		Triggers []any `json:"triggers"`
		Steps    []any `json:"steps"`
	} `json:"firstTask"`
	LastTask struct {
		Triggers []any `json:"triggers"`
	} `json:"lastTask"`
}

func loadExportSeed() (*exportSeed, error) {
	var es exportSeed
	if err := json.Unmarshal(exportSeedJSON, &es); err != nil {
		return nil, fmt.Errorf("seed_bundles.json: %w", err)
	}
	return &es, nil
}

var placeholder = regexp.MustCompile(`\{(\w+)\}`)

// fill returns a deep copy of v with its placeholders replaced from vars: a
// string that is one placeholder becomes the value (a string or a list);
// placeholders inside a longer string take string values.
func fill(v any, vars map[string]any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = fill(x, vars)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = fill(x, vars)
		}
		return out
	case string:
		if m := placeholder.FindStringSubmatch(v); m != nil && m[0] == v {
			if x, ok := vars[m[1]]; ok {
				return x
			}
		}
		return placeholder.ReplaceAllStringFunc(v, func(p string) string {
			if s, ok := vars[p[1:len(p)-1]].(string); ok {
				return s
			}
			return p
		})
	}
	return v
}

// fillMap is fill for a map.
func fillMap(m map[string]any, vars map[string]any) map[string]any {
	return fill(m, vars).(map[string]any)
}

// seedBundles builds the project the export scenarios export from the
// profile's bundles.export: its agent with attached knowledge sets and
// connectors, a knowledge set and a connector it does not use, an app, and
// tasks that carry every trigger kind and every item of the "Dropped on
// export" table, so each row is observable. The content is seed_bundles.json.
func seedBundles(st *store, p *profile.Profile) error {
	st.bundles = newBundleStore()
	e := p.Bundles.Export
	if e.ProjectID == "" {
		return nil
	}
	if e.AgentID == "" {
		return fmt.Errorf("bundles.export: agentID is required with projectID")
	}
	if st.agents[e.AgentID] != nil {
		return fmt.Errorf("bundles.export: agent %q is also another role's agent", e.AgentID)
	}
	es, err := loadExportSeed()
	if err != nil {
		return err
	}
	attached, referenced := seedExportResources(st, es, e)
	// The first referenced connector is the project's, the rest the agent's.
	var projConn, agentConn []*resource
	if len(referenced) > 0 {
		projConn, agentConn = referenced[:1], referenced[1:]
	}
	agentName := e.AgentName
	if agentName == "" {
		agentName = e.AgentID
	}
	ag := &resource{id: e.AgentID, kind: kindAgent, name: agentName, version: "1.0.0",
		payload:   fillMap(es.Agent, map[string]any{"connectors": resourceNames(agentConn)}),
		knowledge: resourceIDs(attached), connectors: resourceIDs(agentConn)}
	st.bundles.resources[ag.id] = ag
	st.agents[ag.id] = &agent{id: ag.id, credTools: map[string]string{}}

	proj, pr, err := seedExportProject(st, es, e, ag, projConn)
	if err != nil {
		return err
	}
	seedExportTasks(es, e, proj, pr)
	return nil
}

// seedExportResources adds the knowledge sets, connectors and app of the
// export project, and returns the attached knowledge sets and the
// referenced connectors.
func seedExportResources(st *store, es *exportSeed, e profile.ExportProject) (attached, referenced []*resource) {
	add := func(kind, name string, tmpl map[string]any, vars map[string]any) *resource {
		vars["name"] = name
		r := &resource{id: newID(idPrefix[kind]), kind: kind, name: name, version: "1.0.0", payload: fillMap(tmpl, vars)}
		st.bundles.resources[r.id] = r
		st.nonAgents[r.id] = true
		return r
	}
	for _, n := range e.KnowledgeAttached {
		attached = append(attached, add(kindKnowledge, n, es.Knowledge, map[string]any{}))
	}
	for _, n := range e.KnowledgeDetached {
		add(kindKnowledge, n, es.Knowledge, map[string]any{})
	}
	for _, n := range e.ConnectorsReferenced {
		referenced = append(referenced, add(kindConnector, n, es.Connector, map[string]any{}))
	}
	for _, n := range e.ConnectorsUnreferenced {
		add(kindConnector, n, es.Connector, map[string]any{})
	}
	if e.AppPublicID != "" {
		app := add(kindApp, e.AppName, es.App, map[string]any{"publicID": e.AppPublicID})
		app.publicID = e.AppPublicID
	}
	return attached, referenced
}

// seedExportProject adds the export project, its lead thread and its
// runtime twin.
func seedExportProject(st *store, es *exportSeed, e profile.ExportProject, ag *resource, projConn []*resource) (*bundleProject, *project, error) {
	envNames := make([]string, 0, len(e.EnvVars))
	for name := range e.EnvVars {
		envNames = append(envNames, name)
	}
	sort.Strings(envNames)
	env := []any{}
	for _, name := range envNames {
		env = append(env, map[string]any{"name": name, "value": e.EnvVars[name]})
	}
	projectName := e.ProjectName
	if projectName == "" {
		projectName = es.DefaultProjectName
	}
	d := e.Dropped
	lead := fillMap(es.Project, map[string]any{
		"name": projectName, "connectors": resourceNames(projConn), "env": env,
		"capabilities": anyList(d.Capabilities), "sharedTasks": anyList(d.SharedTasks),
		"members": anyList(d.Members), "roleGrants": anyList(d.RoleGrants), "files": anyList(d.Files),
		"credentials": anyList(d.Credentials), "status": anyList(d.Status),
	})
	proj := &bundleProject{id: e.ProjectID, name: projectName, version: "1.0.0", agentID: ag.id,
		thread: lead, connectors: resourceIDs(projConn), tasks: map[string]*task{}}
	pr := &project{id: proj.id, agent: st.agents[ag.id], credentials: map[string]bool{}}
	th := &thread{id: newID("thr"), agent: pr.agent, project: pr}
	proj.threadID = th.id
	st.threads[th.id] = th
	if _, dup := st.projects[proj.id]; dup {
		return nil, nil, fmt.Errorf("bundles.export: project %q is also another role's project", proj.id)
	}
	st.projects[proj.id] = pr
	st.nonAgents[proj.id] = true
	st.bundles.projects[proj.id] = proj
	return proj, pr, nil
}

// seedExportTasks adds the export project's tasks: the first carries the
// firstTask triggers and an approval step, the last the lastTask triggers.
func seedExportTasks(es *exportSeed, e profile.ExportProject, proj *bundleProject, pr *project) {
	taskNames := e.Tasks
	if len(taskNames) == 0 {
		taskNames = []string{es.DefaultTask}
	}
	first, last := taskNames[0], taskNames[len(taskNames)-1]
	for i, name := range taskNames {
		vars := map[string]any{"name": name, "first": first, "approvers": anyList(e.Dropped.Approvers)}
		payload := fillMap(es.Task, vars)
		var triggers []any
		if i == 0 {
			triggers = append(triggers, fill(es.FirstTask.Triggers, vars).([]any)...)
			payload["steps"] = fill(es.FirstTask.Steps, vars)
		}
		if name == last {
			triggers = append(triggers, fill(es.LastTask.Triggers, vars).([]any)...)
		}
		payload["triggers"] = triggers
		t := &task{id: newID("tsk"), name: name, projectID: proj.id, payload: payload}
		proj.tasks[t.id] = t
		proj.taskIDs = append(proj.taskIDs, t.id)
		pr.tasks = append(pr.tasks, name)
	}
}

func resourceIDs(rs []*resource) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.id)
	}
	return out
}

func resourceNames(rs []*resource) []any {
	out := []any{}
	for _, r := range rs {
		out = append(out, r.name)
	}
	return out
}

func anyList(ss []string) []any {
	out := []any{}
	for _, s := range ss {
		out = append(out, s)
	}
	return out
}
