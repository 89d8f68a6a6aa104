@modes @scripted
Feature: Run modes
  Spec: Endpoints / X-SVC-Run-Mode; Authentication 5; Errors / Other rules 2. A mode adds its
  tools to the agent's own for one run; a mode the workspace is not entitled to and an
  unknown name are ignored, not refused; a mode's tool is gated by the key's credential
  scopes, silently. The spec does not name the research tool, so each scenario compares
  the tools of a run with the mode against the same run without it.

  @MODE-01 @capability-researchMode
  Scenario Outline: X-SVC-Run-Mode is a comma-separated list of mode names, trimmed
    Given the target offers research mode
    And the "credentialAll" key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the answer is remembered as "own"
    Given the request header "X-SVC-Run-Mode" is "<modes>"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are those of answer "own" and more

    Examples:
      | modes                         |
      | ${unknownMode},research       |
      | ${unknownMode} ,  research  , |
      | research , ${unknownMode}     |

  @MODE-02 @capability-researchMode
  Scenario: A mode adds its tools to the agent's own
    Given the target offers research mode
    And the "credentialSearch" key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the answer is remembered as "own"
    Given the request header "X-SVC-Run-Mode" is "research"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are those of answer "own" and more

  # "A run-mode entitlement problem or unknown mode is not an error (the mode
  # is ignored)": no event of the run has error set either.
  @MODE-03
  Scenario: A mode the workspace is not entitled to is ignored, not refused
    Given the "notEntitled" key
    And the request header "Accept" is "application/json"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the answer is remembered as "own"
    Given the request header "X-SVC-Run-Mode" is "research"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And no event of the run has error set
    And the run's tools are those of answer "own"

  # Modes are "not tool references": a tool's name, the agent's own or
  # another agent's, is a name the server does not know as a mode.
  @MODE-04
  Scenario Outline: A mode name the server does not know is ignored, not refused
    Given the "agent" key
    And the request header "Accept" is "application/json"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the answer is remembered as "own"
    Given the request header "X-SVC-Run-Mode" is "<modes>"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And no event of the run has error set
    And the run's tools are those of answer "own"

    Examples:
      | modes                          |
      | ${unknownMode}                 |
      | ${agents.main.plainTool}       |
      | ${agents.other.distinctTools}  |

  # The tools research adds are learnt from a key that may use them, so that
  # no event of the run without them may name them ("no error and no event").
  @MODE-05 @capability-researchMode
  Scenario: A mode's tool that the key's credential scopes exclude is removed, silently
    Given the target offers research mode
    And the request header "Accept" is "text/event-stream"
    And the "credentialSearch" key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the answer is remembered as "searchOwn"
    Given the request header "X-SVC-Run-Mode" is "research"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the answer is remembered as "searchResearch"
    Given the "agent" key
    And the request header "X-SVC-Run-Mode" is absent
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the answer is remembered as "own"
    Given the request header "X-SVC-Run-Mode" is "research"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And no event of the run has error set
    And the run's tools are those of answer "own"
    And the run's answer and kinds of events are those of answer "own"
    And no event of the run mentions the tools answer "searchResearch" has beyond answer "searchOwn"

  @MODE-06 @capability-researchMode
  Scenario Outline: research adds the research tool with credential:use:search or credential:use:*
    Given the target offers research mode
    And the "<key>" key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the answer is remembered as "own"
    Given the request header "X-SVC-Run-Mode" is "research"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are those of answer "own" and more

    Examples:
      | key              |
      | credentialSearch |
      | credentialAll    |
