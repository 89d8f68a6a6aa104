@sse @scripted
Feature: SSE framing
  Spec: Events. start at once, an id and a data line per event, the final id with :after,
  a ": ping" after 20 s of quiet, close at the end. Checked on the raw bytes.

  Background:
    Given the "agent" key
    And the request header "Accept" is "text/event-stream"

  # Tolerance: content produced after a 1 s pause; the start frame must come
  # at least 500 ms before it (500 ms for scheduling and the network).
  @SSE-01
  Scenario: The start frame comes at once, before the agent produces anything
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @pause 1s
      @say first words
      """
    Then the status is 2xx
    And the first frame is "event: start" with data "{}"
    And the first frame arrived at least 500ms before the first content

  @SSE-02
  Scenario: Every event is an id line with the run ID, then a data line
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @say one
      @tool ${agents.main.plainTool}
      @say two
      """
    Then the status is 2xx
    And every event frame is an id line holding the run ID, then one data line

  @SSE-03
  Scenario: The last event has the id <run>:after, runComplete true and empty content
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "finish me"
    Then the status is 2xx
    And the last event frame has the id "<run ID>:after", runComplete true and empty content

  # Tolerance: 20 s plus 1.5 s. A comment line is timed by the end of its own
  # line, whether or not a blank line follows it. The client goes away at the
  # ping (the run is cancelled), so the scenario lasts about 20 s, not 23 s.
  @SSE-04 @slow
  Scenario: A quiet run gets a ": ping" comment after 20 seconds
    When I invoke "/api/invoke/${agents.main.id}" with the prompt below and stop reading at the first ": ping" comment after the content "before the quiet":
      """
      @say before the quiet
      @pause 23s
      @say after the quiet
      """
    Then the status is 2xx
    And a ": ping" comment arrived within 21.5s after the event with content "before the quiet"

  @SSE-05
  Scenario Outline: The stream ends with event: close, also after an error
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "<prompt>"
    Then the status is 2xx
    And the last frame is "event: close" with data "{}"

    Examples:
      | prompt                         |
      | a run that ends well           |
      | @say partial\n@fail it went wrong |

  @SSE-06
  Scenario: No event of the run follows the event with runComplete true
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @say a
      @tool ${agents.main.plainTool}
      @say b
      """
    Then the status is 2xx
    And no event frame follows the event with runComplete true

  @SSE-07
  Scenario: A failure after the stream began is an error event, not a status
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @say partial answer
      @fail the tool exploded
      """
    Then the status is 2xx
    And the response is an SSE stream
    And an event has error set
