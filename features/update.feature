@update @capability-bundles @bundle-contract
Feature: Updating an installed project bundle
  Spec: States and transitions (the Installed rows); Bundle rules 6 and 7; Errors / Other rules 5;
  Versioning. The update route is an extension (docs/bundles.md). Versions, writes and skips,
  orphans and the bundle's marker on tasks are observable only through the installation record.
  The status of a refused update is not shown: it is only not 2xx.

  Background:
    Given a target that manages bundles
    And installation "B" of "desk-v1.yaml"

  @UPDATE-01 @needs-bundleTestHooks
  Scenario: An update stopped partway finishes when the same request is sent again, skipping children already at the target version
    Given the target honours the bundle test hooks
    When I update installation "B" with "desk-v2-resume.yaml"
    Then the update of installation "B" stopped partway
    When I send the same update again
    Then installation "B" is installed with every child at its version in "desk-v2-resume.yaml"
    And the log of installation "B" updated each child once

  @UPDATE-07
  Scenario: The same update sent again once it is complete writes nothing
    Given installation "B" was updated with "desk-v2.yaml"
    When I send the same update again
    Then installation "B" is installed with every child at its version in "desk-v2.yaml"
    And the last update wrote nothing to the children of installation "B"

  @UPDATE-02 @needs-bundleTestHooks
  Scenario: An update that would trip a child's eval gate is refused before anything is written, naming the child
    Given the target honours the bundle test hooks
    When I update installation "B" with "desk-v2-gate.yaml"
    Then the update is refused, naming "agent-${marker:b}"
    And the refused update wrote nothing to installation "B"

  @UPDATE-03 @needs-bundleTestHooks
  Scenario: Once the gated child's own installation is updated, the composite update goes through
    Given the target honours the bundle test hooks
    And I update installation "B" with "desk-v2-gate.yaml"
    And the update is refused, naming "agent-${marker:b}"
    When I update the "agent" child of installation "B" directly with "desk-agent-v2-gate.yaml"
    Then the status is 2xx
    When I update installation "B" with "desk-v2-gate.yaml"
    Then installation "B" is installed with every child at its version in "desk-v2-gate.yaml"

  @UPDATE-04
  Scenario: A task the payload no longer declares stays on the project as an ordinary task, without the bundle's marker
    When I update installation "B" with "desk-v2-orphan-task.yaml"
    Then installation "B" is installed
    And installation "B" no longer counts the task "triage-${marker:b}" as its own
    When I export the project of installation "B"
    Then the status is 2xx
    And the payload of the export holds the tasks "digest-${marker:b}, triage-${marker:b}"

  @UPDATE-05
  Scenario: A child spec.includes no longer declares is recorded as orphaned and left untouched
    When I update installation "B" with "desk-v2-orphan-child.yaml"
    Then installation "B" is installed
    And installation "B" records the "connector" child "wiki-${marker:b}" as orphaned
    And the own installation of orphaned child "wiki-${marker:b}" is still there at version "1.0.0"

  @UPDATE-05
  Scenario: An orphaned child's resource is left untouched: an app no longer declared still exports with ?app
    When I update installation "B" with "desk-v2-orphan-app.yaml"
    Then installation "B" is installed
    And installation "B" records the "app" child "portal-${marker:b}" as orphaned
    When I export the project of installation "B" with the app "portal-${marker:b}"
    Then the status is 2xx
    And the export includes a child that mentions the app "portal-${marker:b}"
