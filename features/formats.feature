@formats @scripted
Feature: Response forms chosen by the Accept header
  Spec: Endpoints / Response format rules; Resources / JSON envelope; Limits.
  The Accept header alone decides, compared literally and as a whole.

  Background:
    Given the "agent" key

  @FMT-01
  Scenario: Accept text/event-stream gives an SSE stream, live during the run
    Given the request header "Accept" is "text/event-stream"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @say early
      @pause 1500ms
      @say late
      """
    Then the status is 200
    And the response is an SSE stream
    And the SSE answer is "earlylate"
    And the event with content "early" arrived at least 1s before the event with content "late"

  @FMT-02 @FMT-07
  Scenario: Accept application/json gives one envelope after the run ends
    Given the request header "Accept" is "application/json"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @say Hel
      @pause 1s
      @say "lo, "
      @say world
      """
    Then the status is 200
    And the response is a JSON envelope whose items' content is "Hello, world"
    And the envelope's last item has runComplete true
    And the body did not begin before 1s had passed

  @FMT-03
  Scenario Outline: Any other Accept value, or none, gives plain text
    Given the request header "Accept" is "<accept>"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @say "plain "
      @say and simple
      """
    Then the status is 200
    And the plain-text answer is "plain and simple"

    Examples:
      | accept     |
      | (none)     |
      | */*        |
      | text/plain |
      | text/html  |

  @FMT-04
  Scenario Outline: An Accept value that only contains text/event-stream is not SSE
    Given the request header "Accept" is "<accept>"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "not a stream"
    Then the status is 200
    And the plain-text answer is "not a stream"

    Examples:
      | accept                           |
      | text/event-stream, */*           |
      | text/event-stream; charset=utf-8 |
      | text/event-stream;q=1.0          |
      | */*, text/event-stream           |

  @FMT-05
  Scenario Outline: An Accept value that only contains application/json is not the envelope
    Given the request header "Accept" is "<accept>"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "not an envelope"
    Then the status is 200
    And the plain-text answer is "not an envelope"

    Examples:
      | accept                          |
      | application/json, text/plain    |
      | application/json; charset=utf-8 |
      | text/plain, application/json    |

  # Tolerance: each fragment must arrive within 500 ms of the one produced before it
  # plus 200 ms for the network, so fragments produced 800 ms apart never arrive together.
  @FMT-06
  Scenario: Plain text is flushed at least every 500 ms
    Given the request header "Accept" is "text/plain"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @say one;
      @pause 800ms
      @say two;
      @pause 800ms
      @say three;
      @pause 800ms
      @say four;
      """
    Then the status is 200
    And the plain-text answer is "one;two;three;four;"
    And the fragments "one;", "two;", "three;", "four;" arrived one by one, each at least 100ms after the one before

  @FMT-08
  Scenario: A client that disconnects cancels its run
    Given the request header "Accept" is "text/event-stream"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt below and disconnect after the content "${marker:early}":
      """
      @say "${escaped:early}"
      @pause 300ms
      @say tick
      @pause 300ms
      @say tock
      @pause 2500ms
      @say "${escaped:late}"
      """
    Then the events of that run, once it has finished, contain "${marker:early}" but not "${marker:late}"
