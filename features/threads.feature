@threads
Feature: Thread selection
  Spec: Endpoints / Thread selection rules. Path segment, then X-SVC-Thread-Id, then a new
  thread; every response carries X-SVC-Thread-Id.

  Background:
    Given a thread "T" on the main agent
    And the "agent" key

  @THREAD-01
  Scenario: The thread segment of the path wins over the header
    Given a thread "U" on the main agent
    And the request header "X-SVC-Thread-Id" is thread "U"
    When I invoke "/api/invoke/${agents.main.id}/thread/${thread:T}" with the prompt "which thread? ${marker:w}"
    Then the status is 2xx
    And the response header "X-SVC-Thread-Id" is thread "T"
    And thread "T" was continued: its lastRunID moved on and its events without runID contain "which thread? ${marker:w}"

  @THREAD-02
  Scenario: Without a thread segment the X-SVC-Thread-Id header is used
    Given the request header "X-SVC-Thread-Id" is thread "T"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "continue by header ${marker:h}"
    Then the status is 2xx
    And the response header "X-SVC-Thread-Id" is thread "T"
    And thread "T" was continued: its lastRunID moved on and its events without runID contain "continue by header ${marker:h}"

  @THREAD-03
  Scenario: Without segment or header a new thread is created for every call
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "new conversation ${marker:n1}"
    Then the status is 2xx
    And the response header "X-SVC-Thread-Id" names a new thread, remembered as "N1"
    And thread "N1" exists: its lastRunID is set and its events without runID contain "new conversation ${marker:n1}"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "another new conversation ${marker:n2}"
    Then the response header "X-SVC-Thread-Id" names a new thread, remembered as "N2"
    And thread "N2" exists: its lastRunID is set and its events without runID contain "another new conversation ${marker:n2}"

  @THREAD-04
  Scenario Outline: Every response form carries X-SVC-Thread-Id for a resumed thread
    Given the request header "Accept" is "<accept>"
    And the request header "X-SVC-Thread-Id" is thread "T"
    When I invoke "/api/invoke/${agents.main.id}<query>" with the prompt "resumed"
    Then the status is 2xx
    And the response header "X-SVC-Thread-Id" is thread "T"

    Examples:
      | accept            | query       |
      | text/event-stream |             |
      | application/json  |             |
      | text/plain        |             |
      | application/json  | ?async=true |

  @THREAD-04
  Scenario Outline: Every response form carries X-SVC-Thread-Id for a new thread
    Given the request header "Accept" is "<accept>"
    When I invoke "/api/invoke/${agents.main.id}<query>" with the prompt "fresh ${marker:f}"
    Then the status is 2xx
    And the response header "X-SVC-Thread-Id" names a new thread, remembered as "N"
    And thread "N" exists: its lastRunID is set and its events without runID contain "fresh ${marker:f}"

    Examples:
      | accept            | query       |
      | text/event-stream |             |
      | application/json  |             |
      | */*               |             |
      | application/json  | ?async=true |
