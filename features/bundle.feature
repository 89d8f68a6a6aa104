@bundle @capability-bundles
Feature: The project bundle document
  Spec: Resources / Project bundle; Limits (project bundle children); What the service does 6.
  Installing, the document's schema beyond spec.type, spec.payload and spec.includes, and the
  installation record are extensions the spec leaves out: docs/bundles.md defines them and the
  profile names their routes. The cardinality of spec.includes is the spec's, read from an export;
  refusing a document that breaks it (a 4xx naming the problem, nothing installed) is the
  contract's (BUNDLE-09..13): the spec shows no status codes for bundle errors.

  Background:
    Given a target that manages bundles

  @BUNDLE-01
  Scenario: An export is a project bundle, with the project and its tasks in spec.payload
    When I export the export project
    Then the status is 2xx
    And the export is a project bundle
    And the payload of the export holds the export project
    And the payload of the export holds every task of the export project

  @BUNDLE-02 @BUNDLE-03 @BUNDLE-05 @BUNDLE-08
  Scenario Outline: An export's children obey the project bundle's cardinality and types
    When I export <project>
    Then the status is 2xx
    And the export includes exactly one agent, at most one app, no project, and no child of another type

    Examples:
      | project                         |
      | the export project              |
      | the export project with its app |

  @BUNDLE-01 @BUNDLE-02 @BUNDLE-04 @bundle-contract
  Scenario Outline: A project bundle with one agent, knowledge sets and connectors installs, as YAML or as JSON
    When I install the bundle "<document>" as "B"
    Then installation "B" is installed with every child of "<document>"

    Examples:
      | document     |
      | desk-v1.yaml |
      | desk-v1.json |

  @BUNDLE-03 @BUNDLE-04 @bundle-contract
  Scenario Outline: Apps, knowledge sets and connectors are optional, and any number of the last two install
    When I install the bundle "<document>" as "B"
    Then installation "B" is installed with every child of "<document>"

    Examples:
      | document     |
      | minimal.yaml |
      | many.yaml    |

  @BUNDLE-09 @bundle-contract
  Scenario Outline: A document that is not a project bundle is refused and nothing of it is installed
    When I install the bundle "<document>" as "B"
    Then the install is refused with a 4xx naming "<problem>"
    And nothing of the bundle is installed

    Examples:
      | document        | problem |
      | malformed.yaml  |         |
      | malformed.json  |         |
      | no-payload.yaml | payload |

  @BUNDLE-10 @bundle-contract
  Scenario Outline: A project bundle without exactly one agent is refused and nothing of it is installed
    When I install the bundle "<document>" as "B"
    Then the install is refused with a 4xx naming "agent"
    And nothing of the bundle is installed

    Examples:
      | document        |
      | two-agents.yaml |
      | no-agent.yaml   |

  @BUNDLE-11 @bundle-contract
  Scenario: A project bundle with two apps is refused and nothing of it is installed
    When I install the bundle "two-apps.yaml" as "B"
    Then the install is refused with a 4xx naming "app"
    And nothing of the bundle is installed

  @BUNDLE-12 @bundle-contract
  Scenario: A project bundle that nests another project is refused and nothing of it is installed
    When I install the bundle "nested-project.yaml" as "B"
    Then the install is refused with a 4xx naming "project"
    And nothing of the bundle is installed

  @BUNDLE-13 @bundle-contract
  Scenario: A child of a type the spec does not list is refused and nothing of it is installed
    When I install the bundle "unknown-type.yaml" as "B"
    Then the install is refused with a 4xx naming "spreadsheet"
    And nothing of the bundle is installed

  @BUNDLE-06 @bundle-contract
  Scenario: Installing a bundle creates a normal project, which exports like any other
    Given installation "B" of "desk-v1.yaml"
    When I export the project of installation "B"
    Then the status is 2xx
    And the export is a project bundle
    And the payload of the export holds the project "Support desk ${marker:b}"
    And the payload of the export holds the tasks "digest-${marker:b}, triage-${marker:b}"
