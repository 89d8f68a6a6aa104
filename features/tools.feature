@tools @scripted
Feature: X-SVC-Scoped-Tools
  Spec: Endpoints / X-SVC-Scoped-Tools; Authentication 5. The header restricts one run to a
  subset of the agent's tools: comma-separated, trimmed, empty entries dropped, and it can
  only narrow. Without it the run has the agent's tools minus the credential-backed tools
  the key may not use. The agent script's @tools lists the tools a run really has.

  Background:
    Given the "agent" key

  @TOOLS-01
  Scenario: The header is comma-separated; entries are trimmed and empty entries dropped
    Given the request header "X-SVC-Scoped-Tools" is "${agents.main.plainTool} ,,  ${agents.main.plainTool2}  , ,"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are exactly "${agents.main.plainTool},${agents.main.plainTool2}"

  @TOOLS-02
  Scenario: The header narrows the run to the tools it names
    Given the request header "X-SVC-Scoped-Tools" is "${agents.main.plainTool}"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are exactly "${agents.main.plainTool}"

  # The spec does not say whether a reference the agent lacks is ignored or refused.
  @TOOLS-02
  Scenario: Naming a tool the agent lacks adds nothing
    Given the request header "X-SVC-Scoped-Tools" is "${agents.main.plainTool},${unknownTool}"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the run is refused with a 4xx status, or its tools are exactly "${agents.main.plainTool}"

  @TOOLS-02
  Scenario: Naming a credential-backed tool does not get it past the key's credential scopes
    Given the request header "X-SVC-Scoped-Tools" is "${agents.main.plainTool},${agents.main.searchTool}"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are exactly "${agents.main.plainTool}"

  @TOOLS-03
  Scenario: The restriction does not change the agent: the next run has all its tools again
    Given a thread "T" on the main agent
    And the request header "X-SVC-Scoped-Tools" is "${agents.main.plainTool}"
    When I invoke "/api/invoke/${agents.main.id}/thread/${thread:T}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are exactly "${agents.main.plainTool}"
    Given the request header "X-SVC-Scoped-Tools" is absent
    When I invoke "/api/invoke/${agents.main.id}/thread/${thread:T}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are exactly "${agents.main.plainTools}"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are exactly "${agents.main.plainTools}"

  @TOOLS-04
  Scenario Outline: Without the header the run has the agent's tools, minus those the key's credential scopes exclude
    Given the "<key>" key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are exactly "<tools>"

    Examples:
      | key              | tools                                                |
      | agent            | ${agents.main.plainTools}                            |
      | credentialSearch | ${agents.main.plainTools},${agents.main.searchTools} |
