@uninstall @capability-bundles @bundle-contract
Feature: Uninstalling a project bundle
  Spec: Bundle routes (DELETE /api/bundles/installations/{id}, DELETE /api/tasks/{id}); Bundle rules 2,
  4 and 5; States and transitions (uninstall of the project); Errors / Other rules 6.
  The record is gone after an uninstall, so the order of removal is read from the final record the
  DELETE answers with (docs/bundles.md). The status of a refused uninstall is not shown: it is only
  not 2xx.

  Background:
    Given a target that manages bundles
    And installation "B" of "desk-v1.yaml"

  @UNINSTALL-05
  Scenario: Uninstalling removes the installation and every child that landed, in one step
    When I uninstall installation "B"
    Then the status is 2xx
    And installation "B" and every child it recorded are gone

  @UNINSTALL-01
  Scenario: Uninstall removes the project's own thread first, then app, agent, knowledge, connector
    When I uninstall installation "B"
    Then the status is 2xx
    And the final record of installation "B" removed in the order project, app, agent, knowledge, connector

  @UNINSTALL-02
  Scenario: Uninstall is refused while an orphaned task exists; the error names it and the record survives
    Given installation "B" was updated with "desk-v2-orphan-task.yaml"
    When I uninstall installation "B"
    Then the uninstall is refused, naming "triage-${marker:b}"
    And installation "B" is still installed

  @UNINSTALL-03
  Scenario: Deleting the orphaned task lets the uninstall be retried
    Given installation "B" was updated with "desk-v2-orphan-task.yaml"
    And I uninstall installation "B"
    And the uninstall is refused, naming "triage-${marker:b}"
    When I delete the task "triage-${marker:b}" of installation "B"
    Then the status is 2xx
    When I uninstall installation "B"
    Then the status is 2xx
    And installation "B" and every child it recorded are gone

  @UNINSTALL-03
  Scenario: DELETE /api/tasks/{id} removes a task the bundle still owns, too
    When I delete the task "digest-${marker:b}" of installation "B"
    Then the status is 2xx
    And installation "B" no longer counts the task "digest-${marker:b}" as its own
    When I export the project of installation "B"
    Then the status is 2xx
    And the payload of the export does not hold the task "digest-${marker:b}"
    And the payload of the export holds the tasks "triage-${marker:b}"

  @UNINSTALL-04
  Scenario: A child orphaned by an update neither blocks the uninstall nor is touched by it, and goes by its own uninstall
    Given installation "B" was updated with "desk-v2-orphan-child.yaml"
    When I uninstall installation "B"
    Then the status is 2xx
    And the own installation of orphaned child "wiki-${marker:b}" is still there at version "1.0.0"
    When I uninstall the own installation of orphaned child "wiki-${marker:b}"
    Then the status is 2xx
    And the own installation of orphaned child "wiki-${marker:b}" is gone
