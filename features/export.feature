@export @capability-bundles
Feature: Exporting a project as a bundle, and what an export drops
  Spec: Bundle routes (GET /api/assistants/{assistant_id}/projects/{project_id}/bundle); Dropped on export.
  The profile's bundles.export describes a project provisioned for this: its agent, knowledge sets
  attached to the agent and not, connectors the project or agent references and not, an app, tasks
  that carry every trigger kind, and distinctive values that must not travel. The response shape is
  not shown beyond spec.type, spec.payload and spec.includes, so items are looked for as text
  among the keys and values of the parsed export. No status is named: any 2xx. Only the child
  types knowledge, connector and project are spelled; the agent and app children are found by
  the profile's names and IDs, whatever their type.

  Background:
    Given a target that manages bundles

  @EXPORT-01
  Scenario: The export holds the project's agent
    When I export the export project
    Then the status is 2xx
    And the export includes exactly one child that mentions the export agent

  @EXPORT-02
  Scenario: The export holds every standalone knowledge set attached to the agent, and no other
    When I export the export project
    Then the status is 2xx
    And the export includes a "knowledge" child for each knowledge set attached to the export agent
    And the export mentions no knowledge set that is not attached to the export agent

  @EXPORT-03
  Scenario: The export holds every connector the project or the agent references, and no other
    When I export the export project
    Then the status is 2xx
    And the export includes a "connector" child for each connector the export project references
    And the export mentions no connector that the export project does not reference

  @EXPORT-04
  Scenario: Without ?app the export holds no app
    When I export the export project
    Then the status is 2xx
    And the export includes no app child and does not mention the export app

  @EXPORT-04
  Scenario: With ?app=<publicID> the export holds that app as its one app child
    When I export the export project with its app
    Then the status is 2xx
    And the export includes exactly one child that mentions the export app

  @DROP-01
  Scenario: Approver addresses are dropped on export
    When I export the export project
    Then the status is 2xx
    And the export mentions none of the export project's dropped "approvers"

  @DROP-02
  Scenario: Environment variable names travel, their values do not
    When I export the export project
    Then the status is 2xx
    And the export names every environment variable of the export project but none of their values

  @DROP-03
  Scenario: Project capabilities are dropped on export
    When I export the export project
    Then the status is 2xx
    And the export mentions none of the export project's dropped "capabilities"

  @DROP-04
  Scenario: Only the schedule and onDemand task triggers survive an export
    When I export the export project
    Then the status is 2xx
    And the export holds no task trigger but schedule and onDemand, and holds both

  @DROP-05
  Scenario: SharedTasks are dropped; the bundle carries its own tasks
    When I export the export project
    Then the status is 2xx
    And the export mentions none of the export project's dropped "sharedTasks"
    And the payload of the export holds every task of the export project

  @DROP-06
  Scenario Outline: Members, role grants, files, credentials and Status are dropped on export
    When I export the export project
    Then the status is 2xx
    And the export mentions none of the export project's dropped "<item>"

    Examples:
      | item        |
      | members     |
      | roleGrants  |
      | files       |
      | credentials |
      | status      |

  @DROP-07 @bundle-contract
  Scenario: A hand-written document's dropped items are stripped on install, with a warning
    When I install the bundle "dropped.yaml" as "B"
    Then installation "B" is installed
    And installation "B" carries a warning
    When I export the project of installation "B"
    Then the status is 2xx
    And the export mentions none of "approver-${marker:b}@example.test, env-secret-${marker:b}, cap-${marker:b}, shared-${marker:b}, member-${marker:b}@example.test, grant-${marker:b}, file-${marker:b}.pdf, cred-${marker:b}, status-${marker:b}"
    And the export holds no task trigger but schedule and onDemand, and holds both
