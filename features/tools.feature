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
  # A tool another agent of the workspace has is one the agent lacks, too.
  @TOOLS-02
  Scenario Outline: Naming a tool the agent lacks adds nothing
    Given the request header "X-SVC-Scoped-Tools" is "${agents.main.plainTool},<lacked>"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the run is refused with a 4xx status, or its tools are exactly "${agents.main.plainTool}"

    Examples:
      | lacked                       |
      | ${unknownTool}               |
      | ${agents.other.distinctTools} |

  # Narrowing keeps what it names of the tools the run may have: a
  # credential-backed tool only when the key may use its credential.
  @TOOLS-02
  Scenario Outline: Naming a credential-backed tool keeps it only where the key's credential scopes allow it
    Given the "<key>" key
    And the request header "X-SVC-Scoped-Tools" is "${agents.main.plainTool},${agents.main.searchTool}"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are exactly "<tools>"

    Examples:
      | key              | tools                                              |
      | agent            | ${agents.main.plainTool}                           |
      | credentialSearch | ${agents.main.plainTool},${agents.main.searchTool} |

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
