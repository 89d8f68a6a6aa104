@events @scripted
Feature: Event objects
  Spec: Resources / Event object. Each SSE data frame is one JSON object; at most one
  richer field per event; tool calls, steps and prompts carry the fields clients read.

  Background:
    Given the "agent" key
    And the request header "Accept" is "text/event-stream"

  # A run that asks for input may wait for it and never end: the stream is
  # judged up to its prompt event, the script's last.
  @EVT-01 @EVT-04
  Scenario: Every data frame is one JSON object with at most one richer field
    When I invoke "/api/invoke/${agents.main.id}" with the prompt below and stop reading at the first prompt event:
      """
      @waiting
      @say thinking
      @toolinput ${agents.main.plainTool} {"a":1}
      @tool ${agents.main.plainTool} {"a":1}
      @step Summarise
      @ask sensitive fields=token Paste a token
      """
    Then the status is 2xx
    And every data frame of the run holds one JSON object
    And no event has more than one richer field set

  @EVT-02
  Scenario: Events carry the run ID and the thread ID
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @say one
      @say two
      """
    Then the status is 2xx
    And every event has runID equal to its id line and threadID equal to the X-SVC-Thread-Id header

  @EVT-03
  Scenario: Concatenating content gives the answer
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @say Hel
      @say "lo, "
      @pause 100ms
      @say world
      """
    Then the status is 2xx
    And the SSE answer is "Hello, world"

  # "Concatenating content across events gives the answer" holds for every
  # stream, whichever route started it.
  @cells
  Scenario Outline: Concatenating content gives the answer on every route: <route>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    When I invoke "<path>" with the prompt:
      """
      @say Hel
      @say "lo, "
      @pause 100ms
      @say world
      """
    Then the status is 2xx
    And the SSE answer is "Hello, world"
    And every exchange of the scenario holds every rule traffic decides

    @EVT-03
    Examples: the agent routes
      | route | key | open | path |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} |

    @EVT-03
    Examples: the project routes
      | route | key | open | path |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} |

  # Tool calls and steps are events like any other: "Each SSE data frame is
  # one JSON object" and the envelope's items are "all events of the run", on
  # every invoke route ("Payload of all five"; the project routes "behave
  # identically"). Their members are read in both forms. (Two outlines: a
  # target whose agent cannot be made to show @step still has its tool
  # calls judged.)
  @EVT-05 @cells
  Scenario Outline: Tool calls carry their name on every route and in both forms of events: <route>, as <form>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    And the request header "Accept" is "<accept>"
    When I invoke "<path>" with the prompt:
      """
      @tool ${agents.main.plainTool} {"x":2}
      @say used it
      """
    Then the status is 2xx
    And an event has toolCall with name "${agents.main.plainTool}"

    Examples:
      | route | key | open | path | form | accept |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an SSE stream | text/event-stream |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | an SSE stream | text/event-stream |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | an SSE stream | text/event-stream |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an SSE stream | text/event-stream |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an SSE stream | text/event-stream |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an SSE stream | text/event-stream |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an SSE stream | text/event-stream |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | a JSON envelope | application/json |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | a JSON envelope | application/json |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | a JSON envelope | application/json |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | a JSON envelope | application/json |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | a JSON envelope | application/json |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | a JSON envelope | application/json |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | a JSON envelope | application/json |

  @EVT-06 @cells
  Scenario Outline: Steps carry their description, ahead of their events, on every route and in both forms of events: <route>, as <form>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    And the request header "Accept" is "<accept>"
    When I invoke "<path>" with the prompt:
      """
      @step Collecting sources
      @say collected
      """
    Then the status is 2xx
    And an event has step with description "Collecting sources"
    And the step event comes before the events that belong to the step

    Examples:
      | route | key | open | path | form | accept |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an SSE stream | text/event-stream |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | an SSE stream | text/event-stream |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | an SSE stream | text/event-stream |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an SSE stream | text/event-stream |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an SSE stream | text/event-stream |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an SSE stream | text/event-stream |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an SSE stream | text/event-stream |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | a JSON envelope | application/json |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | a JSON envelope | application/json |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | a JSON envelope | application/json |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | a JSON envelope | application/json |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | a JSON envelope | application/json |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | a JSON envelope | application/json |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | a JSON envelope | application/json |

  # A request for input, and the signals of a model not yet answering or
  # composing a tool's arguments, are events like the others, on every
  # route. The prompt event is read in the stream only: a run that asks for
  # input may wait for it and never end, so no envelope need come.
  @EVT-07 @cells
  Scenario Outline: Prompt events carry fields, message and the sensitive flag on every route: <route>, as <form>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    And the request header "Accept" is "<accept>"
    When I invoke "<path>" with the prompt "@ask sensitive fields=username,password Log in to Example" and stop reading at the first prompt event
    Then the status is 2xx
    And an event has prompt with message "Log in to Example" and sensitive true, and carries fields

    Examples:
      | route | key | open | path | form | accept |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an SSE stream | text/event-stream |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | an SSE stream | text/event-stream |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | an SSE stream | text/event-stream |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an SSE stream | text/event-stream |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an SSE stream | text/event-stream |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an SSE stream | text/event-stream |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an SSE stream | text/event-stream |

  @EVT-08 @cells
  Scenario Outline: Waiting on the model is signalled on every route and in both forms of events: <route>, as <form>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    And the request header "Accept" is "<accept>"
    When I invoke "<path>" with the prompt:
      """
      @waiting
      @pause 300ms
      @say here I am
      """
    Then the status is 2xx
    And an event has waitingOnModel set before the first event with content

    Examples:
      | route | key | open | path | form | accept |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an SSE stream | text/event-stream |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | an SSE stream | text/event-stream |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | an SSE stream | text/event-stream |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an SSE stream | text/event-stream |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an SSE stream | text/event-stream |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an SSE stream | text/event-stream |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an SSE stream | text/event-stream |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | a JSON envelope | application/json |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | a JSON envelope | application/json |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | a JSON envelope | application/json |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | a JSON envelope | application/json |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | a JSON envelope | application/json |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | a JSON envelope | application/json |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | a JSON envelope | application/json |

  @EVT-09 @cells
  Scenario Outline: Composing tool arguments is signalled on every route and in both forms of events: <route>, as <form>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    And the request header "Accept" is "<accept>"
    When I invoke "<path>" with the prompt:
      """
      @toolinput ${agents.main.plainTool} {"q":"x"}
      @pause 300ms
      @tool ${agents.main.plainTool} {"q":"x"}
      """
    Then the status is 2xx
    And an event has toolInput set before the first event with toolCall

    Examples:
      | route | key | open | path | form | accept |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an SSE stream | text/event-stream |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | an SSE stream | text/event-stream |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | an SSE stream | text/event-stream |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an SSE stream | text/event-stream |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an SSE stream | text/event-stream |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an SSE stream | text/event-stream |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an SSE stream | text/event-stream |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | a JSON envelope | application/json |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | a JSON envelope | application/json |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | a JSON envelope | application/json |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | a JSON envelope | application/json |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | a JSON envelope | application/json |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | a JSON envelope | application/json |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | a JSON envelope | application/json |

  @EVT-05
  Scenario: A tool call event carries the tool's name
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @tool ${agents.main.plainTool} {"x":2}
      @say used it
      """
    Then the status is 2xx
    And an event has toolCall with name "${agents.main.plainTool}"

  # "following events belong to it": the step's event comes before the
  # content the script says in that step.
  @EVT-06
  Scenario: A step event carries its description, ahead of the events that belong to the step
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @step Collecting sources
      @say collected
      """
    Then the status is 2xx
    And an event has step with description "Collecting sources"
    And the step event comes before the events that belong to the step

  @EVT-07
  Scenario Outline: A prompt event carries fields, message and the sensitive flag
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "<script>" and stop reading at the first prompt event
    Then the status is 2xx
    And an event has prompt with message "<message>" and sensitive <sensitive>, and carries fields

    Examples:
      | script                                                       | message                | sensitive |
      | @ask sensitive fields=username,password Log in to Example    | Log in to Example      | true      |
      | @ask fields=choice Pick a repository                         | Pick a repository      | false     |

  @EVT-08
  Scenario: Waiting on the model is signalled with waitingOnModel
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @waiting
      @pause 300ms
      @say here I am
      """
    Then the status is 2xx
    And an event has waitingOnModel set before the first event with content

  @EVT-09
  Scenario: Composing tool arguments is signalled with toolInput
    When I invoke "/api/invoke/${agents.main.id}" with the prompt:
      """
      @toolinput ${agents.main.plainTool} {"q":"x"}
      @pause 300ms
      @tool ${agents.main.plainTool} {"q":"x"}
      """
    Then the status is 2xx
    And an event has toolInput set before the first event with toolCall
