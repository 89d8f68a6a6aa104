package profile

import (
	"fmt"
	"strings"
)

// Names of the extension routes for bundles (docs/bundles.md). The spec
// shows the export and DELETE routes but leaves out installing, updating and
// reading an installation, so a target names its own in Profile.Routes.
const (
	RouteBundleInstall       = "bundleInstall"       // install a document; answers the installation record
	RouteBundleUpdate        = "bundleUpdate"        // update installation {id} with a document
	RouteBundleInstallation  = "bundleInstallation"  // read installation record {id}
	RouteBundleInstallations = "bundleInstallations" // list every installation record
)

// Route returns the method and path of an extension route, or a
// MissingError when the profile does not name it.
func (p *Profile) Route(name string) (method, path string, err error) {
	v := strings.TrimSpace(p.Routes[name])
	if v == "" {
		return "", "", &MissingError{What: "routes." + name}
	}
	method, path, ok := strings.Cut(v, " ")
	path = strings.TrimSpace(path)
	if !ok || method == "" || !strings.HasPrefix(path, "/") {
		return "", "", fmt.Errorf("routes.%s: %q is not \"METHOD /path\"", name, v)
	}
	return strings.ToUpper(method), path, nil
}

// Bundles describes what the bundle scenarios need beyond routes.
type Bundles struct {
	// Export is a project provisioned so that every rule of the export
	// (EXPORT-*, DROP-01..06) is observable.
	Export ExportProject `yaml:"export,omitempty"`
}

// ExportProject describes a project provisioned for the export scenarios.
// Names are what the export shows for each item; the scenarios look for them
// as text inside the exported document, so they should be distinctive.
type ExportProject struct {
	// AgentID and ProjectID fill the export route's {assistant_id} and
	// {project_id}: the project and its agent.
	AgentID   string `yaml:"agentID"`
	ProjectID string `yaml:"projectID"`
	// ProjectName is the project's name as the export shows it in
	// spec.payload (BUNDLE-01: the payload holds the project itself).
	ProjectName string `yaml:"projectName"`
	// AgentName is the agent's name as the export shows it.
	AgentName string `yaml:"agentName"`
	// AppPublicID is the publicID of an app of the workspace, passed as
	// ?app=; AppName is its name.
	AppPublicID string `yaml:"appPublicID"`
	AppName     string `yaml:"appName"`
	// KnowledgeAttached are standalone knowledge sets attached to the agent;
	// KnowledgeDetached are knowledge sets of the workspace that are not.
	KnowledgeAttached []string `yaml:"knowledgeAttached"`
	KnowledgeDetached []string `yaml:"knowledgeDetached"`
	// ConnectorsReferenced are MCP connectors the project or the agent
	// references (the reference server: the first by the project, the rest
	// by the agent); ConnectorsUnreferenced exist but neither references them.
	ConnectorsReferenced   []string `yaml:"connectorsReferenced"`
	ConnectorsUnreferenced []string `yaml:"connectorsUnreferenced"`
	// Tasks are the project's own tasks. Between them they carry every
	// trigger kind: schedule, onDemand, webhook, email, poll, onSlackMessage,
	// onDiscordMessage, onTaskComplete.
	Tasks []string `yaml:"tasks"`
	// EnvVars are the project's environment variables, name to value.
	EnvVars map[string]string `yaml:"envVars"`
	// Dropped are values the project holds that must not travel.
	Dropped DroppedValues `yaml:"dropped"`
}

// DroppedValues are distinctive values of the export project, by the row of
// the spec's "Dropped on export" table they belong to. None may appear in an
// export.
type DroppedValues struct {
	Approvers    []string `yaml:"approvers"`    // step.approval.approvers addresses on its tasks
	Capabilities []string `yaml:"capabilities"` // project capabilities
	SharedTasks  []string `yaml:"sharedTasks"`  // names of tasks shared into the project
	Members      []string `yaml:"members"`      // project members
	RoleGrants   []string `yaml:"roleGrants"`   // role grants on the project
	Files        []string `yaml:"files"`        // names of files of the project
	Credentials  []string `yaml:"credentials"`  // names of credentials of the project
	Status       []string `yaml:"status"`       // values under the project's Status
}

// Kind returns the dropped values of one row by its name in the profile
// (approvers, capabilities, sharedTasks, members, roleGrants, files,
// credentials, status).
func (d DroppedValues) Kind(name string) ([]string, bool) {
	m := map[string][]string{
		"approvers": d.Approvers, "capabilities": d.Capabilities, "sharedTasks": d.SharedTasks,
		"members": d.Members, "roleGrants": d.RoleGrants, "files": d.Files,
		"credentials": d.Credentials, "status": d.Status,
	}
	v, ok := m[name]
	return v, ok
}
