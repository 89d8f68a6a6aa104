@formats @scripted
Feature: Response forms chosen by the Accept header
  Spec: Endpoints / Response format rules; Resources / JSON envelope; Limits.
  The Accept header alone decides, compared literally and as a whole.

  Background:
    Given the "agent" key

  # Tolerance: events produced 1 s apart must arrive at least 500 ms apart.
  @FMT-01
  Scenario: Accept text/event-stream gives an SSE stream, live during the run
    Given the request header "Accept" is "text/event-stream"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @say early
      @pause 1s
      @say late
      """
    Then the status is 2xx
    And the response is an SSE stream
    And the SSE answer is "earlylate"
    And the event with content "early" arrived at least 500ms before the event with content "late"

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
    Then the status is 2xx
    And the response is a JSON envelope whose items' content is "Hello, world"
    And the envelope's last item has runComplete true
    And the body did not begin before 1s had passed

  @FMT-07
  Scenario: The envelope holds every event of the run, each with its run and thread
    Given the request header "Accept" is "application/json"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @say before
      @tool ${agents.main.plainTool} {"n":1}
      @step Wrapping up
      @say after
      """
    Then the status is 2xx
    And the response is a JSON envelope whose items' content is "beforeafter"
    And the envelope holds a toolCall with name "${agents.main.plainTool}" and a step with description "Wrapping up"
    And every item of the envelope has the same runID and threadID equal to the X-SVC-Thread-Id header

  # The status is not judged: the spec names none for a run that failed
  # before the envelope was written.
  @FMT-07
  Scenario: The envelope of a failed run holds its error event
    Given the request header "Accept" is "application/json"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @say partial
      @fail it went wrong
      """
    Then an item of the envelope has error set

  @FMT-03
  Scenario Outline: Any other Accept value, or none, gives plain text
    Given the request header "Accept" is "<accept>"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @say "plain "
      @say and simple
      """
    Then the status is 2xx
    And the plain-text answer is "plain and simple"

    Examples:
      | accept     |
      | */*        |
      | text/plain |
      | text/html  |

  @FMT-03
  Scenario: No Accept header gives plain text
    Given the request header "Accept" is absent
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @say "plain "
      @say and simple
      """
    Then the status is 2xx
    And the plain-text answer is "plain and simple"

  @FMT-04
  Scenario Outline: An Accept value that only contains text/event-stream is not SSE
    Given the request header "Accept" is "<accept>"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "not a stream"
    Then the status is 2xx
    And the plain-text answer is "not a stream"

    Examples:
      | accept                           |
      | text/event-stream, */*           |
      | text/event-stream; charset=utf-8 |
      | text/event-stream;q=1.0          |
      | */*, text/event-stream           |

  # HTTP drops the whitespace around a header value (RFC 9110, 5.5), so a
  # server never sees it: only case and inner whitespace are tried.
  @FMT-04 @FMT-05
  Scenario Outline: An Accept value equal only when case or spacing is ignored gives plain text
    Given the request header "Accept" is "<accept>"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "compared literally"
    Then the status is 2xx
    And the plain-text answer is "compared literally"

    Examples:
      | accept             |
      | Text/Event-Stream  |
      | TEXT/EVENT-STREAM  |
      | text/ event-stream |
      | Application/JSON   |
      | application /json  |

  @FMT-05
  Scenario Outline: An Accept value that only contains application/json is not the envelope
    Given the request header "Accept" is "<accept>"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "not an envelope"
    Then the status is 2xx
    And the plain-text answer is "not an envelope"

    Examples:
      | accept                          |
      | application/json, text/plain    |
      | application/json; charset=utf-8 |
      | text/plain, application/json    |

  # Tolerance: text may be held 500 ms, plus 200 ms for scheduling and the
  # network. Each fragment must arrive within 700 ms of when it was produced,
  # counted from the first fragment's arrival (the first was produced no later
  # than that), and fragments produced 800 ms apart never arrive together.
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
      """
    Then the status is 2xx
    And the plain-text answer is "one;two;three;"
    And the fragments "one;", "two;", "three;" arrived one by one, each at least 100ms after the one before
    And each of the fragments "one;", "two;", "three;", produced 800ms apart, arrived within 700ms of when it was produced, counted from the first

  # Tolerance: a flush every 500 ms plus 200 ms for scheduling and the
  # network. Text produced every 100 ms for 1.6 s must arrive in reads at
  # most 700 ms apart that span at least 0.9 s: a flush timer slower than
  # 700 ms leaves a wider gap or a shorter span.
  # Every plain-text answer is flushed so, whichever Accept (or none) asked
  # for it: "Anything else, or absent".
  @FMT-06
  Scenario Outline: Plain text produced steadily is never held longer than 500 ms
    Given <accept>
    When I invoke "/api/invoke/${agents.main.id}" with a script that says "x" 17 times, every 100ms
    Then the status is 2xx
    And the 17 fragments "x", produced every 100ms, arrived in reads at most 700ms apart

    Examples:
      | accept                                     |
      | the request header "Accept" is "text/plain" |
      | the request header "Accept" is absent       |

  @FMT-08
  Scenario: A client that disconnects cancels its run
    Given the request header "Accept" is "text/event-stream"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt below as run "A" on thread "T" and disconnect after the content "${marker:early}":
      """
      @say "${escaped:early}"
      @pause 300ms
      @say tick
      @pause 300ms
      @say tock
      @pause 2500ms
      @say "${escaped:late}"
      """
    Then the events of run "A" on thread "T", fetched by its runID as JSON, contain "${marker:early}" but not "${marker:late}"

  # The plain-text form names no run: the thread's lastRunID does, once the
  # run completes. A run that went on completes when its script ends (about
  # 3.1 s); a cancelled one need not be reported at all.
  @FMT-08
  Scenario: A plain-text client that disconnects cancels its run
    Given the request header "Accept" is "text/plain"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt below on thread "T" and disconnect once the plain text holds "${marker:early}":
      """
      @say "${escaped:early}"
      @pause 300ms
      @say tick
      @pause 300ms
      @say tock
      @pause 2500ms
      @say "${escaped:late}"
      """
    Then the run that thread "T" reports completed within 5s, if any, has events that contain "${marker:early}" but not "${marker:late}"

  # "When the client disconnects, the server notices on its next write and
  # cancels the run": every call, whichever route started it. Each row waits
  # for the run's script to end (@slow: --quick leaves them out).
  @cells @slow
  Scenario Outline: A client that disconnects cancels its run on every route: <route>, as an SSE stream
    Given a thread "P" opened on "<open>" with the "<key>" key
    And the "<key>" key
    And the request header "Accept" is "text/event-stream"
    When I invoke "<path>" with the prompt below as run "A" on thread "T" and disconnect after the content "${marker:early}":
      """
      @say "${escaped:early}"
      @pause 300ms
      @say tick
      @pause 300ms
      @say tock
      @pause 2500ms
      @say "${escaped:late}"
      """
    And the "<reader>" key
    Then the events of run "A" on thread "T", fetched by its runID as JSON, contain "${marker:early}" but not "${marker:late}"

    @FMT-08
    Examples:
      | route | key | open | path | reader |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | agent |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | agent |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:P} | wildcard |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:P} | agent |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:P} | agent |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | project |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:P} | project |

  @cells @slow
  Scenario Outline: A plain-text client that disconnects cancels its run on every route: <route>
    Given a thread "P" opened on "<open>" with the "<key>" key
    And the "<key>" key
    And the request header "Accept" is "text/plain"
    When I invoke "<path>" with the prompt below on thread "T" and disconnect once the plain text holds "${marker:early}":
      """
      @say "${escaped:early}"
      @pause 300ms
      @say tick
      @pause 300ms
      @say tock
      @pause 2500ms
      @say "${escaped:late}"
      """
    And the "<reader>" key
    Then the run that thread "T" reports completed within 5s, if any, has events that contain "${marker:early}" but not "${marker:late}"

    @FMT-08
    Examples:
      | route | key | open | path | reader |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | agent |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | agent |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:P} | wildcard |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:P} | agent |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:P} | agent |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | project |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:P} | project |
