@cells @scripted
Feature: Every rule on every cell it is stated for
  Spec: "Payload of all five: request body is the plain-text prompt. The response depends on Accept and async";
  "Project routes behave identically to the agent routes (same response body, same X-SVC-Thread-Id response header,
  same Accept variants, same async parameter)"; "Every response carries the header X-SVC-Thread-Id"; "The last event
  of a run"; "Each event"; "Every SSE data: frame". The spec states these rules for every route, every response form,
  every run and every response: each row makes one run on one cell (the route, with what {id} names; the response
  form; how the run ends; a request header) and its last step judges every exchange the row made with every check
  traffic can decide, as the run's judgement of every exchange does (package runner). Which cells each rule must be
  judged on is the catalog's `cells` (features/rules.yaml); the run reports where each rule was judged.

  # The keepalive on every route, first: each row waits out 20 s of quiet (@slow: --quick leaves them out)

  @SSE-04 @slow
  Scenario: The agent-ID route: a quiet run gets a ": ping" comment
    Given the "agent" key
    And the request header "Accept" is "text/event-stream"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt below and stop reading at the first ": ping" comment after the content "quiet ${marker:q}":
      """
      @say quiet ${marker:q}
      @pause 23s
      @say awake
      """
    Then every exchange of the scenario holds every rule traffic decides

  @SSE-04 @slow
  Scenario: The alias route: a quiet run gets a ": ping" comment
    Given the "alias" key
    And the request header "Accept" is "text/event-stream"
    When I invoke "/api/invoke/${agents.main.alias}" with the prompt below and stop reading at the first ": ping" comment after the content "quiet ${marker:q}":
      """
      @say quiet ${marker:q}
      @pause 23s
      @say awake
      """
    Then every exchange of the scenario holds every rule traffic decides

  @SSE-04 @slow
  Scenario: The thread-ID route: a quiet run gets a ": ping" comment
    Given a thread "T" on the main agent, opened with the "wildcard" key
    And the "wildcard" key
    And the request header "Accept" is "text/event-stream"
    When I invoke "/api/invoke/${thread:T}" with the prompt below and stop reading at the first ": ping" comment after the content "quiet ${marker:q}":
      """
      @say quiet ${marker:q}
      @pause 23s
      @say awake
      """
    Then every exchange of the scenario holds every rule traffic decides

  @SSE-04 @slow
  Scenario: The /thread/ route: a quiet run gets a ": ping" comment
    Given a thread "T" on the main agent
    And the "agent" key
    And the request header "Accept" is "text/event-stream"
    When I invoke "/api/invoke/${agents.main.id}/thread/${thread:T}" with the prompt below and stop reading at the first ": ping" comment after the content "quiet ${marker:q}":
      """
      @say quiet ${marker:q}
      @pause 23s
      @say awake
      """
    Then every exchange of the scenario holds every rule traffic decides

  @SSE-04 @slow
  Scenario: The /threads/ route: a quiet run gets a ": ping" comment
    Given a thread "T" on the main agent
    And the "agent" key
    And the request header "Accept" is "text/event-stream"
    When I invoke "/api/invoke/${agents.main.id}/threads/${thread:T}" with the prompt below and stop reading at the first ": ping" comment after the content "quiet ${marker:q}":
      """
      @say quiet ${marker:q}
      @pause 23s
      @say awake
      """
    Then every exchange of the scenario holds every rule traffic decides

  @SSE-04 @slow @PROJ-03
  Scenario: The project route: a quiet run gets a ": ping" comment
    Given the "project" key
    And the request header "Accept" is "text/event-stream"
    When I invoke "/api/projects/${projects.main.id}/invoke" with the prompt below and stop reading at the first ": ping" comment after the content "quiet ${marker:q}":
      """
      @say quiet ${marker:q}
      @pause 23s
      @say awake
      """
    Then every exchange of the scenario holds every rule traffic decides

  @SSE-04 @slow @PROJ-03
  Scenario: The project thread route: a quiet run gets a ": ping" comment
    Given a project thread "T" on the main project
    And the "project" key
    And the request header "Accept" is "text/event-stream"
    When I invoke "/api/projects/${projects.main.id}/invoke/thread/${thread:T}" with the prompt below and stop reading at the first ": ping" comment after the content "quiet ${marker:q}":
      """
      @say quiet ${marker:q}
      @pause 23s
      @say awake
      """
    Then every exchange of the scenario holds every rule traffic decides

  # The agent-ID route: /api/invoke/${agents.main.id}
  Scenario Outline: The agent-ID route: a run that completes, as <form>
    Given the "agent" key
    When I make a run that completes on "/api/invoke/${agents.main.id}" as <form>
    And I fetch the events of the run's thread, by its runID and without
    Then the run's thread reports it through lastRunID
    And every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01 @SSE-02 @SSE-03 @SSE-05 @SSE-06 @EVT-01 @EVT-02 @EVT-04 @THREAD-04 @ASYNC-05 @ASYNC-02 @ASYNC-03 @ASYNC-04
    Examples: an SSE stream
      | form |
      | an SSE stream |

    @FMT-02 @FMT-07 @EVT-02 @EVT-04 @THREAD-04 @ASYNC-05 @ASYNC-02 @ASYNC-03 @ASYNC-04
    Examples: a JSON envelope
      | form |
      | a JSON envelope |

    @FMT-03 @THREAD-04 @ASYNC-05
    Examples: plain text
      | form |
      | plain text |

    @ASYNC-01 @THREAD-04 @ASYNC-05 @ASYNC-02 @ASYNC-03 @ASYNC-04
    Examples: an async run
      | form |
      | an async run |

  Scenario Outline: The agent-ID route: a run that <run>, as <form>
    Given the "agent" key
    When I make a run that <run> on "/api/invoke/${agents.main.id}" as <form>
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01 @SSE-02 @SSE-03 @SSE-05 @SSE-06 @EVT-01 @EVT-02 @EVT-04 @THREAD-04 @SSE-07
    Examples: an SSE stream
      | run | form |
      | fails | an SSE stream |
      | is aborted | an SSE stream |

    @FMT-02 @FMT-07 @EVT-02 @EVT-04 @THREAD-04
    Examples: a JSON envelope
      | run | form |
      | fails | a JSON envelope |

    @FMT-03 @THREAD-04
    Examples: plain text
      | run | form |
      | fails | plain text |
      | is aborted | plain text |

    @ASYNC-01 @THREAD-04 @ASYNC-06
    Examples: an async run
      | run | form |
      | fails | an async run |
      | is aborted | an async run |

  Scenario Outline: The agent-ID route: a run with the header <name>, as <form>
    Given a thread "H" opened on "/api/invoke/${agents.main.id}" with the "agent" key
    And the "agent" key
    When I make a run that completes on "/api/invoke/${agents.main.id}" as <form> with the header "<name>" set to "<value>"
    Then every exchange of the scenario holds every rule traffic decides

    @THREAD-04
    Examples:
      | name | value | form |
      | X-SVC-Scoped-Tools | ${agents.main.tools} | an SSE stream |
      | X-SVC-Run-Mode | no-such-mode-${marker:m} | a JSON envelope |

    @THREAD-04 @THREAD-02
    Examples: the thread header, in every form
      | name | value | form |
      | X-SVC-Thread-Id | ${thread:H} | an SSE stream |
      | X-SVC-Thread-Id | ${thread:H} | a JSON envelope |
      | X-SVC-Thread-Id | ${thread:H} | plain text |
      | X-SVC-Thread-Id | ${thread:H} | an async run |

  Scenario Outline: The agent-ID route: the body is the agent's prompt, verbatim, as <form>
    Given the "agent" key
    When I make a run that echoes on "/api/invoke/${agents.main.id}" as <form>
    Then the run's answer is its prompt, byte for byte
    And every exchange of the scenario holds every rule traffic decides

    @BODY-01
    Examples:
      | form |
      | an SSE stream |
      | a JSON envelope |
      | plain text |

  Scenario Outline: The agent-ID route: Accept <accept>, compared literally
    Given the "agent" key
    When I make a run that completes on "/api/invoke/${agents.main.id}" with the Accept header "<accept>"
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-04 @THREAD-04
    Examples: an SSE type among others
      | accept |
      | text/event-stream, */* |
      | Text/Event-Stream |
      | text/ event-stream |

    @FMT-05 @THREAD-04
    Examples: a JSON type with a parameter
      | accept |
      | application/json; charset=utf-8 |
      | Application/JSON |
      | application /json |

  @ERR-02 @ERR-10
  Scenario: The agent-ID route: a call without a key is refused, in the problem format
    Given no key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "no key ${marker:k}"
    Then the status is 401
    And every exchange of the scenario holds every rule traffic decides

  # The alias route: /api/invoke/${agents.main.alias}
  Scenario Outline: The alias route: a run that completes, as <form>
    Given the "alias" key
    When I make a run that completes on "/api/invoke/${agents.main.alias}" as <form>
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01 @SSE-02 @SSE-03 @SSE-05 @SSE-06 @EVT-01 @EVT-02 @EVT-04 @THREAD-04
    Examples: an SSE stream
      | form |
      | an SSE stream |

    @FMT-02 @FMT-07 @EVT-02 @EVT-04 @THREAD-04
    Examples: a JSON envelope
      | form |
      | a JSON envelope |

    @FMT-03 @THREAD-04
    Examples: plain text
      | form |
      | plain text |

    @ASYNC-01 @THREAD-04
    Examples: an async run
      | form |
      | an async run |

  Scenario Outline: The alias route: a run that <run>, as <form>
    Given the "alias" key
    When I make a run that <run> on "/api/invoke/${agents.main.alias}" as <form>
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01 @SSE-02 @SSE-03 @SSE-05 @SSE-06 @EVT-01 @EVT-02 @EVT-04 @THREAD-04 @SSE-07
    Examples: an SSE stream
      | run | form |
      | fails | an SSE stream |
      | is aborted | an SSE stream |

    @FMT-02 @FMT-07 @EVT-02 @EVT-04 @THREAD-04
    Examples: a JSON envelope
      | run | form |
      | fails | a JSON envelope |

    @FMT-03 @THREAD-04
    Examples: plain text
      | run | form |
      | fails | plain text |
      | is aborted | plain text |

    @ASYNC-01 @THREAD-04 @ASYNC-06
    Examples: an async run
      | run | form |
      | fails | an async run |
      | is aborted | an async run |

  Scenario Outline: The alias route: a run with the header <name>, as <form>
    Given a thread "H" opened on "/api/invoke/${agents.main.alias}" with the "alias" key
    And the "alias" key
    When I make a run that completes on "/api/invoke/${agents.main.alias}" as <form> with the header "<name>" set to "<value>"
    Then every exchange of the scenario holds every rule traffic decides

    @THREAD-04
    Examples:
      | name | value | form |
      | X-SVC-Scoped-Tools | ${agents.main.tools} | an SSE stream |
      | X-SVC-Run-Mode | no-such-mode-${marker:m} | a JSON envelope |

    @THREAD-04 @THREAD-02
    Examples: the thread header, in every form
      | name | value | form |
      | X-SVC-Thread-Id | ${thread:H} | an SSE stream |
      | X-SVC-Thread-Id | ${thread:H} | a JSON envelope |
      | X-SVC-Thread-Id | ${thread:H} | plain text |
      | X-SVC-Thread-Id | ${thread:H} | an async run |

  Scenario Outline: The alias route: the body is the agent's prompt, verbatim, as <form>
    Given the "alias" key
    When I make a run that echoes on "/api/invoke/${agents.main.alias}" as <form>
    Then the run's answer is its prompt, byte for byte
    And every exchange of the scenario holds every rule traffic decides

    @BODY-01
    Examples:
      | form |
      | an SSE stream |
      | a JSON envelope |
      | plain text |

  Scenario Outline: The alias route: Accept <accept>, compared literally
    Given the "alias" key
    When I make a run that completes on "/api/invoke/${agents.main.alias}" with the Accept header "<accept>"
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-04 @THREAD-04
    Examples: an SSE type among others
      | accept |
      | text/event-stream, */* |
      | Text/Event-Stream |
      | text/ event-stream |

    @FMT-05 @THREAD-04
    Examples: a JSON type with a parameter
      | accept |
      | application/json; charset=utf-8 |
      | Application/JSON |
      | application /json |

  @ERR-02 @ERR-10
  Scenario: The alias route: a call without a key is refused, in the problem format
    Given no key
    When I invoke "/api/invoke/${agents.main.alias}" with the prompt "no key ${marker:k}"
    Then the status is 401
    And every exchange of the scenario holds every rule traffic decides

  # The thread-ID route: /api/invoke/${thread:T}
  Scenario Outline: The thread-ID route: a run that completes, as <form>
    Given a thread "T" on the main agent, opened with the "wildcard" key
    And the "wildcard" key
    When I make a run that completes on "/api/invoke/${thread:T}" as <form>
    And I fetch the events of the run's thread, by its runID and without
    Then the run's thread reports it through lastRunID
    And every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01 @SSE-02 @SSE-03 @SSE-05 @SSE-06 @EVT-01 @EVT-02 @EVT-04 @THREAD-04 @ASYNC-05 @ASYNC-02 @ASYNC-03 @ASYNC-04
    Examples: an SSE stream
      | form |
      | an SSE stream |

    @FMT-02 @FMT-07 @EVT-02 @EVT-04 @THREAD-04 @ASYNC-05 @ASYNC-02 @ASYNC-03 @ASYNC-04
    Examples: a JSON envelope
      | form |
      | a JSON envelope |

    @FMT-03 @THREAD-04 @ASYNC-05
    Examples: plain text
      | form |
      | plain text |

    @ASYNC-01 @THREAD-04 @ASYNC-05 @ASYNC-02 @ASYNC-03 @ASYNC-04
    Examples: an async run
      | form |
      | an async run |

  Scenario Outline: The thread-ID route: a run that <run>, as <form>
    Given a thread "T" on the main agent, opened with the "wildcard" key
    And the "wildcard" key
    When I make a run that <run> on "/api/invoke/${thread:T}" as <form>
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01 @SSE-02 @SSE-03 @SSE-05 @SSE-06 @EVT-01 @EVT-02 @EVT-04 @THREAD-04 @SSE-07
    Examples: an SSE stream
      | run | form |
      | fails | an SSE stream |
      | is aborted | an SSE stream |

    @FMT-02 @FMT-07 @EVT-02 @EVT-04 @THREAD-04
    Examples: a JSON envelope
      | run | form |
      | fails | a JSON envelope |

    @FMT-03 @THREAD-04
    Examples: plain text
      | run | form |
      | fails | plain text |
      | is aborted | plain text |

    @ASYNC-01 @THREAD-04 @ASYNC-06
    Examples: an async run
      | run | form |
      | fails | an async run |
      | is aborted | an async run |

  Scenario Outline: The thread-ID route: a run with the header <name>, as <form>
    Given a thread "T" on the main agent, opened with the "wildcard" key
    Given a thread "H" opened on "/api/invoke/${agents.main.id}" with the "wildcard" key
    And the "wildcard" key
    When I make a run that completes on "/api/invoke/${thread:T}" as <form> with the header "<name>" set to "<value>"
    Then every exchange of the scenario holds every rule traffic decides

    @THREAD-04
    Examples:
      | name | value | form |
      | X-SVC-Scoped-Tools | ${agents.main.tools} | an SSE stream |
      | X-SVC-Run-Mode | no-such-mode-${marker:m} | a JSON envelope |

    @THREAD-04
    Examples: the thread header, in every form
      | name | value | form |
      | X-SVC-Thread-Id | ${thread:H} | an SSE stream |
      | X-SVC-Thread-Id | ${thread:H} | a JSON envelope |
      | X-SVC-Thread-Id | ${thread:H} | plain text |
      | X-SVC-Thread-Id | ${thread:H} | an async run |

  Scenario Outline: The thread-ID route: the body is the agent's prompt, verbatim, as <form>
    Given a thread "T" on the main agent, opened with the "wildcard" key
    And the "wildcard" key
    When I make a run that echoes on "/api/invoke/${thread:T}" as <form>
    Then the run's answer is its prompt, byte for byte
    And every exchange of the scenario holds every rule traffic decides

    @BODY-01
    Examples:
      | form |
      | an SSE stream |
      | a JSON envelope |
      | plain text |

  Scenario Outline: The thread-ID route: Accept <accept>, compared literally
    Given a thread "T" on the main agent, opened with the "wildcard" key
    And the "wildcard" key
    When I make a run that completes on "/api/invoke/${thread:T}" with the Accept header "<accept>"
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-04 @THREAD-04
    Examples: an SSE type among others
      | accept |
      | text/event-stream, */* |
      | Text/Event-Stream |
      | text/ event-stream |

    @FMT-05 @THREAD-04
    Examples: a JSON type with a parameter
      | accept |
      | application/json; charset=utf-8 |
      | Application/JSON |
      | application /json |

  @ERR-02 @ERR-10
  Scenario: The thread-ID route: a call without a key is refused, in the problem format
    Given a thread "T" on the main agent, opened with the "wildcard" key
    And no key
    When I invoke "/api/invoke/${thread:T}" with the prompt "no key ${marker:k}"
    Then the status is 401
    And every exchange of the scenario holds every rule traffic decides

  # The /thread/ route: /api/invoke/${agents.main.id}/thread/${thread:T}
  Scenario Outline: The /thread/ route: a run that completes, as <form>
    Given a thread "T" on the main agent
    And the "agent" key
    When I make a run that completes on "/api/invoke/${agents.main.id}/thread/${thread:T}" as <form>
    And I fetch the events of the run's thread, by its runID and without
    Then the run's thread reports it through lastRunID
    And every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01 @SSE-02 @SSE-03 @SSE-05 @SSE-06 @EVT-01 @EVT-02 @EVT-04 @THREAD-04 @ASYNC-05 @ASYNC-02 @ASYNC-03 @ASYNC-04
    Examples: an SSE stream
      | form |
      | an SSE stream |

    @FMT-02 @FMT-07 @EVT-02 @EVT-04 @THREAD-04 @ASYNC-05 @ASYNC-02 @ASYNC-03 @ASYNC-04
    Examples: a JSON envelope
      | form |
      | a JSON envelope |

    @FMT-03 @THREAD-04 @ASYNC-05
    Examples: plain text
      | form |
      | plain text |

    @ASYNC-01 @THREAD-04 @ASYNC-05 @ASYNC-02 @ASYNC-03 @ASYNC-04
    Examples: an async run
      | form |
      | an async run |

  Scenario Outline: The /thread/ route: a run that <run>, as <form>
    Given a thread "T" on the main agent
    And the "agent" key
    When I make a run that <run> on "/api/invoke/${agents.main.id}/thread/${thread:T}" as <form>
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01 @SSE-02 @SSE-03 @SSE-05 @SSE-06 @EVT-01 @EVT-02 @EVT-04 @THREAD-04 @SSE-07
    Examples: an SSE stream
      | run | form |
      | fails | an SSE stream |
      | is aborted | an SSE stream |

    @FMT-02 @FMT-07 @EVT-02 @EVT-04 @THREAD-04
    Examples: a JSON envelope
      | run | form |
      | fails | a JSON envelope |

    @FMT-03 @THREAD-04
    Examples: plain text
      | run | form |
      | fails | plain text |
      | is aborted | plain text |

    @ASYNC-01 @THREAD-04 @ASYNC-06
    Examples: an async run
      | run | form |
      | fails | an async run |
      | is aborted | an async run |

  Scenario Outline: The /thread/ route: a run with the header <name>, as <form>
    Given a thread "T" on the main agent
    Given a thread "H" opened on "/api/invoke/${agents.main.id}" with the "agent" key
    And the "agent" key
    When I make a run that completes on "/api/invoke/${agents.main.id}/thread/${thread:T}" as <form> with the header "<name>" set to "<value>"
    Then every exchange of the scenario holds every rule traffic decides

    @THREAD-04
    Examples:
      | name | value | form |
      | X-SVC-Scoped-Tools | ${agents.main.tools} | an SSE stream |
      | X-SVC-Run-Mode | no-such-mode-${marker:m} | a JSON envelope |

    @THREAD-04 @THREAD-01
    Examples: the thread header, in every form
      | name | value | form |
      | X-SVC-Thread-Id | ${thread:H} | an SSE stream |
      | X-SVC-Thread-Id | ${thread:H} | a JSON envelope |
      | X-SVC-Thread-Id | ${thread:H} | plain text |
      | X-SVC-Thread-Id | ${thread:H} | an async run |

  Scenario Outline: The /thread/ route: the body is the agent's prompt, verbatim, as <form>
    Given a thread "T" on the main agent
    And the "agent" key
    When I make a run that echoes on "/api/invoke/${agents.main.id}/thread/${thread:T}" as <form>
    Then the run's answer is its prompt, byte for byte
    And every exchange of the scenario holds every rule traffic decides

    @BODY-01
    Examples:
      | form |
      | an SSE stream |
      | a JSON envelope |
      | plain text |

  Scenario Outline: The /thread/ route: Accept <accept>, compared literally
    Given a thread "T" on the main agent
    And the "agent" key
    When I make a run that completes on "/api/invoke/${agents.main.id}/thread/${thread:T}" with the Accept header "<accept>"
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-04 @THREAD-04
    Examples: an SSE type among others
      | accept |
      | text/event-stream, */* |
      | Text/Event-Stream |
      | text/ event-stream |

    @FMT-05 @THREAD-04
    Examples: a JSON type with a parameter
      | accept |
      | application/json; charset=utf-8 |
      | Application/JSON |
      | application /json |

  @ERR-02 @ERR-10
  Scenario: The /thread/ route: a call without a key is refused, in the problem format
    Given a thread "T" on the main agent
    And no key
    When I invoke "/api/invoke/${agents.main.id}/thread/${thread:T}" with the prompt "no key ${marker:k}"
    Then the status is 401
    And every exchange of the scenario holds every rule traffic decides

  # The /threads/ route: /api/invoke/${agents.main.id}/threads/${thread:T}
  Scenario Outline: The /threads/ route: a run that completes, as <form>
    Given a thread "T" on the main agent
    And the "agent" key
    When I make a run that completes on "/api/invoke/${agents.main.id}/threads/${thread:T}" as <form>
    And I fetch the events of the run's thread, by its runID and without
    Then the run's thread reports it through lastRunID
    And every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01 @SSE-02 @SSE-03 @SSE-05 @SSE-06 @EVT-01 @EVT-02 @EVT-04 @THREAD-04 @ASYNC-05 @ASYNC-02 @ASYNC-03 @ASYNC-04
    Examples: an SSE stream
      | form |
      | an SSE stream |

    @FMT-02 @FMT-07 @EVT-02 @EVT-04 @THREAD-04 @ASYNC-05 @ASYNC-02 @ASYNC-03 @ASYNC-04
    Examples: a JSON envelope
      | form |
      | a JSON envelope |

    @FMT-03 @THREAD-04 @ASYNC-05
    Examples: plain text
      | form |
      | plain text |

    @ASYNC-01 @THREAD-04 @ASYNC-05 @ASYNC-02 @ASYNC-03 @ASYNC-04
    Examples: an async run
      | form |
      | an async run |

  Scenario Outline: The /threads/ route: a run that <run>, as <form>
    Given a thread "T" on the main agent
    And the "agent" key
    When I make a run that <run> on "/api/invoke/${agents.main.id}/threads/${thread:T}" as <form>
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01 @SSE-02 @SSE-03 @SSE-05 @SSE-06 @EVT-01 @EVT-02 @EVT-04 @THREAD-04 @SSE-07
    Examples: an SSE stream
      | run | form |
      | fails | an SSE stream |
      | is aborted | an SSE stream |

    @FMT-02 @FMT-07 @EVT-02 @EVT-04 @THREAD-04
    Examples: a JSON envelope
      | run | form |
      | fails | a JSON envelope |

    @FMT-03 @THREAD-04
    Examples: plain text
      | run | form |
      | fails | plain text |
      | is aborted | plain text |

    @ASYNC-01 @THREAD-04 @ASYNC-06
    Examples: an async run
      | run | form |
      | fails | an async run |
      | is aborted | an async run |

  Scenario Outline: The /threads/ route: a run with the header <name>, as <form>
    Given a thread "T" on the main agent
    Given a thread "H" opened on "/api/invoke/${agents.main.id}" with the "agent" key
    And the "agent" key
    When I make a run that completes on "/api/invoke/${agents.main.id}/threads/${thread:T}" as <form> with the header "<name>" set to "<value>"
    Then every exchange of the scenario holds every rule traffic decides

    @THREAD-04
    Examples:
      | name | value | form |
      | X-SVC-Scoped-Tools | ${agents.main.tools} | an SSE stream |
      | X-SVC-Run-Mode | no-such-mode-${marker:m} | a JSON envelope |

    @THREAD-04 @THREAD-01
    Examples: the thread header, in every form
      | name | value | form |
      | X-SVC-Thread-Id | ${thread:H} | an SSE stream |
      | X-SVC-Thread-Id | ${thread:H} | a JSON envelope |
      | X-SVC-Thread-Id | ${thread:H} | plain text |
      | X-SVC-Thread-Id | ${thread:H} | an async run |

  Scenario Outline: The /threads/ route: the body is the agent's prompt, verbatim, as <form>
    Given a thread "T" on the main agent
    And the "agent" key
    When I make a run that echoes on "/api/invoke/${agents.main.id}/threads/${thread:T}" as <form>
    Then the run's answer is its prompt, byte for byte
    And every exchange of the scenario holds every rule traffic decides

    @BODY-01
    Examples:
      | form |
      | an SSE stream |
      | a JSON envelope |
      | plain text |

  Scenario Outline: The /threads/ route: Accept <accept>, compared literally
    Given a thread "T" on the main agent
    And the "agent" key
    When I make a run that completes on "/api/invoke/${agents.main.id}/threads/${thread:T}" with the Accept header "<accept>"
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-04 @THREAD-04
    Examples: an SSE type among others
      | accept |
      | text/event-stream, */* |
      | Text/Event-Stream |
      | text/ event-stream |

    @FMT-05 @THREAD-04
    Examples: a JSON type with a parameter
      | accept |
      | application/json; charset=utf-8 |
      | Application/JSON |
      | application /json |

  @ERR-02 @ERR-10
  Scenario: The /threads/ route: a call without a key is refused, in the problem format
    Given a thread "T" on the main agent
    And no key
    When I invoke "/api/invoke/${agents.main.id}/threads/${thread:T}" with the prompt "no key ${marker:k}"
    Then the status is 401
    And every exchange of the scenario holds every rule traffic decides

  # The project route: /api/projects/${projects.main.id}/invoke
  Scenario Outline: The project route: a run that completes, as <form>
    Given the "project" key
    When I make a run that completes on "/api/projects/${projects.main.id}/invoke" as <form>
    And I fetch the events of the run's thread, by its runID and without
    Then the run's thread reports it through lastRunID
    And every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01 @SSE-02 @SSE-03 @SSE-05 @SSE-06 @EVT-01 @EVT-02 @EVT-04 @THREAD-04 @PROJ-03 @ASYNC-05 @ASYNC-02 @ASYNC-03 @ASYNC-04
    Examples: an SSE stream
      | form |
      | an SSE stream |

    @FMT-02 @FMT-07 @EVT-02 @EVT-04 @THREAD-04 @PROJ-03 @ASYNC-05 @ASYNC-02 @ASYNC-03 @ASYNC-04
    Examples: a JSON envelope
      | form |
      | a JSON envelope |

    @FMT-03 @THREAD-04 @PROJ-03 @ASYNC-05
    Examples: plain text
      | form |
      | plain text |

    @ASYNC-01 @THREAD-04 @PROJ-03 @ASYNC-05 @ASYNC-02 @ASYNC-03 @ASYNC-04
    Examples: an async run
      | form |
      | an async run |

  Scenario Outline: The project route: a run that <run>, as <form>
    Given the "project" key
    When I make a run that <run> on "/api/projects/${projects.main.id}/invoke" as <form>
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01 @SSE-02 @SSE-03 @SSE-05 @SSE-06 @EVT-01 @EVT-02 @EVT-04 @THREAD-04 @SSE-07 @PROJ-03
    Examples: an SSE stream
      | run | form |
      | fails | an SSE stream |
      | is aborted | an SSE stream |

    @FMT-02 @FMT-07 @EVT-02 @EVT-04 @THREAD-04 @PROJ-03
    Examples: a JSON envelope
      | run | form |
      | fails | a JSON envelope |

    @FMT-03 @THREAD-04 @PROJ-03
    Examples: plain text
      | run | form |
      | fails | plain text |
      | is aborted | plain text |

    @ASYNC-01 @THREAD-04 @ASYNC-06 @PROJ-03
    Examples: an async run
      | run | form |
      | fails | an async run |
      | is aborted | an async run |

  Scenario Outline: The project route: a run with the header <name>, as <form>
    Given a thread "H" opened on "/api/projects/${projects.main.id}/invoke" with the "project" key
    And the "project" key
    When I make a run that completes on "/api/projects/${projects.main.id}/invoke" as <form> with the header "<name>" set to "<value>"
    Then every exchange of the scenario holds every rule traffic decides

    @THREAD-04 @PROJ-03
    Examples:
      | name | value | form |
      | X-SVC-Scoped-Tools | ${agents.main.tools},${projects.main.tasks} | an SSE stream |
      | X-SVC-Run-Mode | no-such-mode-${marker:m} | a JSON envelope |

    @THREAD-04 @PROJ-03
    Examples: the thread header, in every form
      | name | value | form |
      | X-SVC-Thread-Id | ${thread:H} | an SSE stream |
      | X-SVC-Thread-Id | ${thread:H} | a JSON envelope |
      | X-SVC-Thread-Id | ${thread:H} | plain text |
      | X-SVC-Thread-Id | ${thread:H} | an async run |

  Scenario Outline: The project route: the body is the agent's prompt, verbatim, as <form>
    Given the "project" key
    When I make a run that echoes on "/api/projects/${projects.main.id}/invoke" as <form>
    Then the run's answer is its prompt, byte for byte
    And every exchange of the scenario holds every rule traffic decides

    @BODY-01 @PROJ-03
    Examples:
      | form |
      | an SSE stream |
      | a JSON envelope |
      | plain text |

  Scenario Outline: The project route: Accept <accept>, compared literally
    Given the "project" key
    When I make a run that completes on "/api/projects/${projects.main.id}/invoke" with the Accept header "<accept>"
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-04 @THREAD-04 @PROJ-03
    Examples: an SSE type among others
      | accept |
      | text/event-stream, */* |
      | Text/Event-Stream |
      | text/ event-stream |

    @FMT-05 @THREAD-04 @PROJ-03
    Examples: a JSON type with a parameter
      | accept |
      | application/json; charset=utf-8 |
      | Application/JSON |
      | application /json |

  @ERR-02 @ERR-10 @PROJ-03
  Scenario: The project route: a call without a key is refused, in the problem format
    Given no key
    When I invoke "/api/projects/${projects.main.id}/invoke" with the prompt "no key ${marker:k}"
    Then the status is 401
    And every exchange of the scenario holds every rule traffic decides

  # The project thread route: /api/projects/${projects.main.id}/invoke/thread/${thread:T}
  Scenario Outline: The project thread route: a run that completes, as <form>
    Given a project thread "T" on the main project
    And the "project" key
    When I make a run that completes on "/api/projects/${projects.main.id}/invoke/thread/${thread:T}" as <form>
    And I fetch the events of the run's thread, by its runID and without
    Then the run's thread reports it through lastRunID
    And every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01 @SSE-02 @SSE-03 @SSE-05 @SSE-06 @EVT-01 @EVT-02 @EVT-04 @THREAD-04 @PROJ-03 @ASYNC-05 @ASYNC-02 @ASYNC-03 @ASYNC-04
    Examples: an SSE stream
      | form |
      | an SSE stream |

    @FMT-02 @FMT-07 @EVT-02 @EVT-04 @THREAD-04 @PROJ-03 @ASYNC-05 @ASYNC-02 @ASYNC-03 @ASYNC-04
    Examples: a JSON envelope
      | form |
      | a JSON envelope |

    @FMT-03 @THREAD-04 @PROJ-03 @ASYNC-05
    Examples: plain text
      | form |
      | plain text |

    @ASYNC-01 @THREAD-04 @PROJ-03 @ASYNC-05 @ASYNC-02 @ASYNC-03 @ASYNC-04
    Examples: an async run
      | form |
      | an async run |

  Scenario Outline: The project thread route: a run that <run>, as <form>
    Given a project thread "T" on the main project
    And the "project" key
    When I make a run that <run> on "/api/projects/${projects.main.id}/invoke/thread/${thread:T}" as <form>
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01 @SSE-02 @SSE-03 @SSE-05 @SSE-06 @EVT-01 @EVT-02 @EVT-04 @THREAD-04 @SSE-07 @PROJ-03
    Examples: an SSE stream
      | run | form |
      | fails | an SSE stream |
      | is aborted | an SSE stream |

    @FMT-02 @FMT-07 @EVT-02 @EVT-04 @THREAD-04 @PROJ-03
    Examples: a JSON envelope
      | run | form |
      | fails | a JSON envelope |

    @FMT-03 @THREAD-04 @PROJ-03
    Examples: plain text
      | run | form |
      | fails | plain text |
      | is aborted | plain text |

    @ASYNC-01 @THREAD-04 @ASYNC-06 @PROJ-03
    Examples: an async run
      | run | form |
      | fails | an async run |
      | is aborted | an async run |

  Scenario Outline: The project thread route: a run with the header <name>, as <form>
    Given a project thread "T" on the main project
    Given a thread "H" opened on "/api/projects/${projects.main.id}/invoke" with the "project" key
    And the "project" key
    When I make a run that completes on "/api/projects/${projects.main.id}/invoke/thread/${thread:T}" as <form> with the header "<name>" set to "<value>"
    Then every exchange of the scenario holds every rule traffic decides

    @THREAD-04 @PROJ-03
    Examples:
      | name | value | form |
      | X-SVC-Scoped-Tools | ${agents.main.tools},${projects.main.tasks} | an SSE stream |
      | X-SVC-Run-Mode | no-such-mode-${marker:m} | a JSON envelope |

    @THREAD-04 @PROJ-03
    Examples: the thread header, in every form
      | name | value | form |
      | X-SVC-Thread-Id | ${thread:H} | an SSE stream |
      | X-SVC-Thread-Id | ${thread:H} | a JSON envelope |
      | X-SVC-Thread-Id | ${thread:H} | plain text |
      | X-SVC-Thread-Id | ${thread:H} | an async run |

  Scenario Outline: The project thread route: the body is the agent's prompt, verbatim, as <form>
    Given a project thread "T" on the main project
    And the "project" key
    When I make a run that echoes on "/api/projects/${projects.main.id}/invoke/thread/${thread:T}" as <form>
    Then the run's answer is its prompt, byte for byte
    And every exchange of the scenario holds every rule traffic decides

    @BODY-01 @PROJ-03
    Examples:
      | form |
      | an SSE stream |
      | a JSON envelope |
      | plain text |

  Scenario Outline: The project thread route: Accept <accept>, compared literally
    Given a project thread "T" on the main project
    And the "project" key
    When I make a run that completes on "/api/projects/${projects.main.id}/invoke/thread/${thread:T}" with the Accept header "<accept>"
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-04 @THREAD-04 @PROJ-03
    Examples: an SSE type among others
      | accept |
      | text/event-stream, */* |
      | Text/Event-Stream |
      | text/ event-stream |

    @FMT-05 @THREAD-04 @PROJ-03
    Examples: a JSON type with a parameter
      | accept |
      | application/json; charset=utf-8 |
      | Application/JSON |
      | application /json |

  @ERR-02 @ERR-10 @PROJ-03
  Scenario: The project thread route: a call without a key is refused, in the problem format
    Given a project thread "T" on the main project
    And no key
    When I invoke "/api/projects/${projects.main.id}/invoke/thread/${thread:T}" with the prompt "no key ${marker:k}"
    Then the status is 401
    And every exchange of the scenario holds every rule traffic decides

  # The agent-ID route, timed: the scripts pause, so the timing rules decide (@slow: --quick leaves them out)
  @slow
  Scenario Outline: The agent-ID route: a timed run, as <form>
    Given the "agent" key
    When I make a timed run on "/api/invoke/${agents.main.id}" as <form>
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01
    Examples: an SSE stream
      | form |
      | an SSE stream |

    @FMT-06
    Examples: plain text
      | form |
      | plain text |

    @FMT-02
    Examples: a JSON envelope
      | form |
      | a JSON envelope |

    @ASYNC-01
    Examples: an async run
      | form |
      | an async run |

  # The alias route, timed: the scripts pause, so the timing rules decide (@slow: --quick leaves them out)
  @slow
  Scenario Outline: The alias route: a timed run, as <form>
    Given the "alias" key
    When I make a timed run on "/api/invoke/${agents.main.alias}" as <form>
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01
    Examples: an SSE stream
      | form |
      | an SSE stream |

    @FMT-06
    Examples: plain text
      | form |
      | plain text |

    @FMT-02
    Examples: a JSON envelope
      | form |
      | a JSON envelope |

    @ASYNC-01
    Examples: an async run
      | form |
      | an async run |

  # The thread-ID route, timed: the scripts pause, so the timing rules decide (@slow: --quick leaves them out)
  @slow
  Scenario Outline: The thread-ID route: a timed run, as <form>
    Given a thread "T" on the main agent, opened with the "wildcard" key
    And the "wildcard" key
    When I make a timed run on "/api/invoke/${thread:T}" as <form>
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01
    Examples: an SSE stream
      | form |
      | an SSE stream |

    @FMT-06
    Examples: plain text
      | form |
      | plain text |

    @FMT-02
    Examples: a JSON envelope
      | form |
      | a JSON envelope |

    @ASYNC-01
    Examples: an async run
      | form |
      | an async run |

  # The /thread/ route, timed: the scripts pause, so the timing rules decide (@slow: --quick leaves them out)
  @slow
  Scenario Outline: The /thread/ route: a timed run, as <form>
    Given a thread "T" on the main agent
    And the "agent" key
    When I make a timed run on "/api/invoke/${agents.main.id}/thread/${thread:T}" as <form>
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01
    Examples: an SSE stream
      | form |
      | an SSE stream |

    @FMT-06
    Examples: plain text
      | form |
      | plain text |

    @FMT-02
    Examples: a JSON envelope
      | form |
      | a JSON envelope |

    @ASYNC-01
    Examples: an async run
      | form |
      | an async run |

  # The /threads/ route, timed: the scripts pause, so the timing rules decide (@slow: --quick leaves them out)
  @slow
  Scenario Outline: The /threads/ route: a timed run, as <form>
    Given a thread "T" on the main agent
    And the "agent" key
    When I make a timed run on "/api/invoke/${agents.main.id}/threads/${thread:T}" as <form>
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01
    Examples: an SSE stream
      | form |
      | an SSE stream |

    @FMT-06
    Examples: plain text
      | form |
      | plain text |

    @FMT-02
    Examples: a JSON envelope
      | form |
      | a JSON envelope |

    @ASYNC-01
    Examples: an async run
      | form |
      | an async run |

  # The project route, timed: the scripts pause, so the timing rules decide (@slow: --quick leaves them out)
  @slow
  Scenario Outline: The project route: a timed run, as <form>
    Given the "project" key
    When I make a timed run on "/api/projects/${projects.main.id}/invoke" as <form>
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01 @PROJ-03
    Examples: an SSE stream
      | form |
      | an SSE stream |

    @FMT-06 @PROJ-03
    Examples: plain text
      | form |
      | plain text |

    @FMT-02 @PROJ-03
    Examples: a JSON envelope
      | form |
      | a JSON envelope |

    @ASYNC-01 @PROJ-03
    Examples: an async run
      | form |
      | an async run |

  # The project thread route, timed: the scripts pause, so the timing rules decide (@slow: --quick leaves them out)
  @slow
  Scenario Outline: The project thread route: a timed run, as <form>
    Given a project thread "T" on the main project
    And the "project" key
    When I make a timed run on "/api/projects/${projects.main.id}/invoke/thread/${thread:T}" as <form>
    Then every exchange of the scenario holds every rule traffic decides

    @FMT-01 @SSE-01 @PROJ-03
    Examples: an SSE stream
      | form |
      | an SSE stream |

    @FMT-06 @PROJ-03
    Examples: plain text
      | form |
      | plain text |

    @FMT-02 @PROJ-03
    Examples: a JSON envelope
      | form |
      | a JSON envelope |

    @ASYNC-01 @PROJ-03
    Examples: an async run
      | form |
      | an async run |
