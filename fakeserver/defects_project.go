package fakeserver

// Defects of the project variant, the tool and mode headers, and credential
// scopes (issue 3).
func init() {
	registerDefects(
		// Project variant.
		Defect{"project-route-missing", []string{"PROJ-01", "PROJ-02"}, "the project invoke routes are missing (404)"},
		Defect{"project-thread-segment-ignored", []string{"PROJ-02"}, "the project thread route starts a new thread instead of continuing the one in the path"},
		Defect{"project-envelope-only", []string{"PROJ-03"}, "project routes ignore Accept and always answer with the JSON envelope"},
		Defect{"project-async-ignored", []string{"PROJ-03"}, "project routes ignore async=true"},
		Defect{"project-no-thread-header", []string{"PROJ-03"}, "project route responses lack X-SVC-Thread-Id"},
		Defect{"project-thread-header-ignored", []string{"PROJ-03"}, "project routes ignore X-SVC-Thread-Id"},
		Defect{"project-context-dropped", []string{"PROJ-04", "PROJ-05", "PROJ-06"}, "a project invoke runs the agent bare: no tasks, project credentials or model settings"},
		Defect{"project-tasks-everywhere", []string{"PROJ-04"}, "a bare-agent invoke of a project's agent has the project's tasks as tools"},
		Defect{"project-credentials-everywhere", []string{"PROJ-05"}, "project-scoped credentials also work in bare-agent invokes"},
		Defect{"project-model-everywhere", []string{"PROJ-06"}, "a bare-agent invoke of a project's agent uses the project's model setting"},
		// Scopes of the project routes and the follow-up routes.
		Defect{"project-needs-agent-scope", []string{"AUTH-05"}, "the project routes need agent:chat:<agent> instead of project:chat:<project>"},
		Defect{"project-agent-scope-accepted", []string{"AUTH-05"}, "agent:chat:<agent> also covers the project routes of the agent's project"},
		Defect{"events-project-needs-thread-read", []string{"AUTH-06"}, "the events of a project thread need thread:read; project:threads is not honoured"},
		Defect{"abort-unscoped", []string{"AUTH-07"}, "any valid key may abort any thread"},
		// X-SVC-Scoped-Tools.
		Defect{"scoped-tools-untrimmed", []string{"TOOLS-01"}, "entries of X-SVC-Scoped-Tools are not trimmed"},
		Defect{"scoped-tools-empty-400", []string{"TOOLS-01"}, "an empty entry in X-SVC-Scoped-Tools is refused with 400"},
		Defect{"scoped-tools-ignored", []string{"TOOLS-02"}, "X-SVC-Scoped-Tools is ignored"},
		Defect{"scoped-tools-widen", []string{"TOOLS-02"}, "X-SVC-Scoped-Tools adds tools the agent lacks"},
		Defect{"scoped-tools-bypass-credentials", []string{"TOOLS-02"}, "a tool named in X-SVC-Scoped-Tools skips the credential gate"},
		Defect{"scoped-tools-sticky", []string{"TOOLS-03"}, "X-SVC-Scoped-Tools is saved on the agent and narrows later runs too"},
		Defect{"credential-gate-ignored", []string{"TOOLS-04", "CRED-01"}, "credential scopes are not checked for the agent's tools"},
		// X-SVC-Run-Mode.
		Defect{"mode-header-untrimmed", []string{"MODE-01"}, "entries of X-SVC-Run-Mode are not trimmed"},
		Defect{"mode-list-first-only", []string{"MODE-01"}, "only the first entry of X-SVC-Run-Mode is read"},
		Defect{"mode-replaces-tools", []string{"MODE-02"}, "a mode's tools replace the agent's own instead of adding to them"},
		Defect{"mode-entitlement-ignored", []string{"MODE-03"}, "research mode works without the workspace entitlement"},
		Defect{"mode-unentitled-403", []string{"MODE-03"}, "a mode the workspace is not entitled to is refused with 403"},
		Defect{"unknown-mode-400", []string{"MODE-04"}, "an unknown mode name is refused with 400"},
		Defect{"mode-tools-ungated", []string{"MODE-05"}, "tools a mode attaches skip the credential gate"},
		Defect{"mode-credential-403", []string{"MODE-05"}, "a mode whose tool the key's credential scopes exclude is refused with 403"},
		Defect{"research-mode-missing", []string{"MODE-06"}, "the research mode is unknown to the server"},
		Defect{"research-needs-wildcard-credential", []string{"MODE-06"}, "the research tool needs credential:use:*; credential:use:search is not enough"},
		// Credential scopes.
		Defect{"credential-removal-403", []string{"CRED-01"}, "a run whose tool the key's credential scopes exclude is refused with 403"},
		Defect{"credential-wildcard-ignored", []string{"CRED-02"}, "credential:use:* does not cover credential-backed tools"},
	)
}
