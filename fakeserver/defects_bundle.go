package fakeserver

// Defect switches for project bundles (bundle*.go). Each is a realistic
// deviation from one rule of the bundle areas.
func init() {
	registerDefects(
		// The bundle document.
		Defect{"export-tasks-outside-payload", []string{"BUNDLE-01"}, "the export puts the tasks beside spec.payload instead of in it"},
		Defect{"two-agents-accepted", []string{"BUNDLE-02"}, "a document with two agents installs"},
		Defect{"agentless-accepted", []string{"BUNDLE-02"}, "a document without an agent installs"},
		Defect{"invalid-half-written", []string{"BUNDLE-02"}, "a second agent is refused only when the install reaches it, after earlier children were written"},
		Defect{"two-apps-accepted", []string{"BUNDLE-03"}, "a document with two apps installs"},
		Defect{"app-required", []string{"BUNDLE-03"}, "a document without an app is refused"},
		Defect{"one-knowledge-set", []string{"BUNDLE-04"}, "a document with more than one knowledge set is refused"},
		Defect{"nested-project-accepted", []string{"BUNDLE-05"}, "a nested project child is silently skipped and the rest installs"},
		Defect{"installed-project-not-exportable", []string{"BUNDLE-06"}, "a project created by an installation is not a normal project: the export route refuses it"},
		Defect{"unknown-child-ignored", []string{"BUNDLE-08"}, "a child of an unknown type is silently skipped"},
		// Export and dropped items.
		Defect{"agent-inlined", []string{"EXPORT-01"}, "the agent is inlined in spec.payload instead of being a child bundle"},
		Defect{"export-all-knowledge", []string{"EXPORT-02"}, "every knowledge set of the workspace is exported, attached or not"},
		Defect{"export-all-connectors", []string{"EXPORT-03"}, "every connector of the workspace is exported, referenced or not"},
		Defect{"export-agent-connectors-only", []string{"EXPORT-03"}, "connectors the project references are not exported"},
		Defect{"export-app-always", []string{"EXPORT-04"}, "an app of the workspace is exported even without ?app="},
		Defect{"export-app-ignored", []string{"EXPORT-04"}, "?app= is ignored"},
		Defect{"export-keeps-approvers", []string{"DROP-01"}, "approver addresses travel"},
		Defect{"export-keeps-env-values", []string{"DROP-02"}, "environment variable values travel"},
		Defect{"export-drops-env-names", []string{"DROP-02"}, "environment variables are dropped altogether, names included"},
		Defect{"export-keeps-capabilities", []string{"DROP-03"}, "project capabilities travel"},
		Defect{"export-keeps-triggers", []string{"DROP-04"}, "webhook and email triggers travel"},
		Defect{"export-drops-schedule", []string{"DROP-04"}, "every trigger is dropped, schedule and onDemand included"},
		Defect{"export-keeps-shared-tasks", []string{"DROP-05"}, "SharedTasks travel"},
		Defect{"export-keeps-members", []string{"DROP-06"}, "members, role grants, files, credentials and Status travel"},
		Defect{"install-keeps-dropped", []string{"DROP-07"}, "a hand-written document's dropped items are installed as they are, without a warning"},
		// Install.
		Defect{"install-document-order", []string{"INSTALL-01"}, "children install in the document's order"},
		Defect{"knowledge-not-attached", []string{"INSTALL-02"}, "installed knowledge sets are not attached to the installed agent"},
		Defect{"failed-child-unnamed", []string{"INSTALL-03"}, "a failed install's error does not name the child"},
		Defect{"failure-not-marked", []string{"INSTALL-03"}, "a child that fails is skipped and the installation is marked installed"},
		Defect{"rollback-on-failure", []string{"INSTALL-04"}, "children installed before a failure are rolled back"},
		Defect{"failed-delete-keeps-children", []string{"INSTALL-05"}, "deleting a failed installation removes only the parent record"},
		// Update.
		Defect{"rerun-reinstalls-up-to-date", []string{"UPDATE-01"}, "a re-run writes children already at the target version again"},
		Defect{"gate-refusal-after-write", []string{"UPDATE-02"}, "the eval gate refusal comes after the children before the gated one were written"},
		Defect{"gate-error-unnamed", []string{"UPDATE-02"}, "the eval gate refusal does not name the child"},
		Defect{"gate-ignores-direct-update", []string{"UPDATE-03"}, "the gate trips on the target document even when the child is already at its version"},
		Defect{"undeclared-task-deleted", []string{"UPDATE-04"}, "a task the payload no longer declares is deleted"},
		Defect{"undeclared-task-keeps-marker", []string{"UPDATE-04"}, "a task the payload no longer declares keeps the bundle's marker"},
		Defect{"undeclared-child-removed", []string{"UPDATE-05"}, "a child spec.includes no longer declares is uninstalled"},
		Defect{"orphan-not-recorded", []string{"UPDATE-05"}, "a child no longer declared is forgotten instead of recorded as orphaned"},
		Defect{"update-rewrites-everything", []string{"UPDATE-07"}, "every update rewrites the project and its tasks, even when nothing changed"},
		// Uninstall.
		Defect{"uninstall-install-order", []string{"UNINSTALL-01"}, "uninstall removes in install order (connector first, project last)"},
		Defect{"uninstall-app-after-agent", []string{"UNINSTALL-01"}, "uninstall removes the agent before the app"},
		Defect{"uninstall-ignores-orphaned-tasks", []string{"UNINSTALL-02"}, "uninstall goes ahead and deletes orphaned tasks with the thread"},
		Defect{"orphan-task-refusal-unnamed", []string{"UNINSTALL-02"}, "the refusal names the orphaned task by ID, not by object name"},
		Defect{"refusal-drops-record", []string{"UNINSTALL-02"}, "a refused uninstall still deletes the installation record"},
		Defect{"orphan-task-undeletable", []string{"UNINSTALL-03"}, "DELETE /api/tasks/{id} does not find orphaned tasks"},
		Defect{"orphan-child-blocks-uninstall", []string{"UNINSTALL-04"}, "an orphaned child blocks the uninstall"},
		Defect{"uninstall-cascades-orphans", []string{"UNINSTALL-04"}, "uninstall also removes orphaned children"},
		Defect{"uninstall-leaves-children", []string{"UNINSTALL-05"}, "uninstall removes the project and the parent record but leaves the children"},
	)
}
