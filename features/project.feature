@project @scripted
Feature: The project variant of the invoke interface
  Spec: What the service does 4-5; Endpoints / Invoke routes. The project routes run the
  project's agent inside the project and otherwise behave like the agent routes. A run
  inside the project has the project's tasks as tools and its credentials and model
  settings; a bare-agent run of the same agent has none of them. The agent script's
  directives tools and model show what a run has.

  @PROJ-01
  Scenario: The project route runs the project's agent inside the project
    Given the "project" key
    When I invoke "/api/projects/${projects.main.id}/invoke" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools include "${agents.main.plainTools}"
    And the run's tools include "${agents.main.distinctTools}"
    And the run's tools do not include "${agents.other.distinctTools}"

  @PROJ-02
  Scenario: The project thread route continues the thread in the path
    Given a project thread "P" on the main project
    And the "project" key
    When I invoke "/api/projects/${projects.main.id}/invoke/thread/${thread:P}" with the prompt "second turn ${marker:b}"
    Then the status is 2xx
    And the response header "X-SVC-Thread-Id" is thread "P"
    And the plain-text answer is "second turn ${marker:b}"
    And thread "P" was continued: its lastRunID moved on and its events without runID contain "second turn ${marker:b}"

  @PROJ-03
  Scenario Outline: The body is the prompt, verbatim, on the project route
    Given the "project" key
    When I invoke "/api/projects/${projects.main.id}/invoke" with the prompt "<prompt>"
    Then the status is 2xx
    And the plain-text answer is the prompt, byte for byte

    Examples:
      | prompt                                                                    |
      | \u0020 line one\nline two\t                                              |
      | {\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"model\":\"gpt-x\"} |

  @PROJ-03
  Scenario: Accept text/event-stream gives an SSE stream on the project route
    Given the "project" key
    And the request header "Accept" is "text/event-stream"
    When I invoke "/api/projects/${projects.main.id}/invoke" with the prompt:
      """
      @say "in the "
      @say project
      """
    Then the status is 2xx
    And the response is an SSE stream
    And the SSE answer is "in the project"
    And the response header "X-SVC-Thread-Id" names a new thread, remembered as "N"

  @PROJ-03
  Scenario: Accept application/json gives one JSON envelope on the project route
    Given the "project" key
    And the request header "Accept" is "application/json"
    When I invoke "/api/projects/${projects.main.id}/invoke" with the prompt:
      """
      @say "in the "
      @say project
      """
    Then the status is 2xx
    And the response is a JSON envelope whose items' content is "in the project"
    And the envelope's last item has runComplete true
    And the response header "X-SVC-Thread-Id" names a new thread, remembered as "N"

  @PROJ-03
  Scenario Outline: Any other Accept value gives plain text on the project route
    Given the "project" key
    And <accept>
    When I invoke "/api/projects/${projects.main.id}/invoke" with the prompt:
      """
      @say "plain "
      @say project
      """
    Then the status is 2xx
    And the plain-text answer is "plain project"
    And the response header "X-SVC-Thread-Id" names a new thread, remembered as "N"

    Examples:
      | accept                                                   |
      | the request header "Accept" is absent                    |
      | the request header "Accept" is "text/event-stream, */*"  |
      | the request header "Accept" is "application/json; q=0.9" |
      | the request header "Accept" is "Text/Event-Stream"       |
      | the request header "Accept" is "Application/JSON"        |

  # Tolerance: the answer must end within 1 s while the run pauses 1.5 s, so an
  # answer that waits for the run ends at least 500 ms past the limit.
  @PROJ-03
  Scenario: async=true answers at once on the project route while the run goes on
    Given the "project" key
    When I start "/api/projects/${projects.main.id}/invoke" asynchronously with the prompt:
      """
      @pause 1500ms
      @say "${escaped:done}"
      """
    Then the async answer came within 1s with a threadID and a runID, remembered as run "R" on thread "T"
    And the response header "X-SVC-Thread-Id" is thread "T"
    And the events of run "R" on thread "T", once it has finished, contain "${marker:done}"

  @PROJ-03
  Scenario: The thread segment wins over X-SVC-Thread-Id on the project thread route
    Given a project thread "P" on the main project
    And a project thread "Q" on the main project
    And the "project" key
    And the request header "X-SVC-Thread-Id" is thread "Q"
    When I invoke "/api/projects/${projects.main.id}/invoke/thread/${thread:P}" with the prompt "which thread? ${marker:w}"
    Then the status is 2xx
    And the response header "X-SVC-Thread-Id" is thread "P"
    And thread "P" was continued: its lastRunID moved on and its events without runID contain "which thread? ${marker:w}"

  @PROJ-03
  Scenario: X-SVC-Thread-Id continues a project thread on the project route
    Given a project thread "P" on the main project
    And the "project" key
    And the request header "X-SVC-Thread-Id" is thread "P"
    When I invoke "/api/projects/${projects.main.id}/invoke" with the prompt "by header ${marker:h}"
    Then the status is 2xx
    And the response header "X-SVC-Thread-Id" is thread "P"
    And thread "P" was continued: its lastRunID moved on and its events without runID contain "by header ${marker:h}"

  @PROJ-04
  Scenario: A run inside the project has the project's tasks as tools
    Given the "project" key
    When I invoke "/api/projects/${projects.main.id}/invoke" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools include "${projects.main.tasks}"

  @PROJ-04
  Scenario: A bare-agent run of the project's agent has no project tasks as tools
    Given the "agent" key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools do not include "${projects.main.tasks}"

  @PROJ-05
  Scenario: A project-scoped credential works inside the project
    Given the "credentialAll" key
    When I invoke "/api/projects/${projects.main.id}/invoke" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools include "${projects.main.credentialTools}"

  @PROJ-06
  Scenario: A run inside the project uses the project's model settings
    Given the "project" key
    When I invoke "/api/projects/${projects.main.id}/invoke" with the prompt "@model"
    Then the run's model is "${projects.main.model}"

  @PROJ-06
  Scenario: A bare-agent run of the project's agent does not use the project's model settings
    Given the "agent" key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@model"
    Then the run's model is not "${projects.main.model}"

  # "A bare-agent invoke has no shared workspace, no project tasks as tools,
  # and no project-scoped credentials or model settings. The project variant
  # supplies the project context": inside the project on both project routes,
  # outside it on every agent route, in every form ("Project routes behave
  # identically to the agent routes ... same Accept variants, same async
  # parameter").
  @PROJ-04 @cells
  Scenario Outline: The project's tasks are tools inside the project and nowhere else: <route>, as <form>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    When I make a run that lists its tools on "<path>" as <form>
    Then the run's tools <have> "${projects.main.tasks}"

    Examples:
      | route | key | open | path | form | have |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an SSE stream | include |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | a JSON envelope | include |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | plain text | include |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an async run, its events read with the "project" key | include |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an SSE stream | include |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | a JSON envelope | include |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | plain text | include |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an async run, its events read with the "project" key | include |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an SSE stream | do not include |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | a JSON envelope | do not include |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | plain text | do not include |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an async run, its events read with the "agent" key | do not include |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | an SSE stream | do not include |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | a JSON envelope | do not include |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | plain text | do not include |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | an async run, its events read with the "agent" key | do not include |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | an SSE stream | do not include |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | a JSON envelope | do not include |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | plain text | do not include |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | an async run, its events read with the "agent" key | do not include |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an SSE stream | do not include |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | a JSON envelope | do not include |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | plain text | do not include |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an async run, its events read with the "agent" key | do not include |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an SSE stream | do not include |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | a JSON envelope | do not include |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | plain text | do not include |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an async run, its events read with the "agent" key | do not include |

  # Only the project side of the credentials is observable (see PROJ-05's
  # strictness): with credential:use:*, the tool using the project's
  # credential is among the run's tools on both project routes.
  @PROJ-05 @cells
  Scenario Outline: A project-scoped credential works on every project route and in every form: <route>, as <form>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    When I make a run that lists its tools on "<path>" as <form>
    Then the run's tools include "${projects.main.credentialTools}"

    Examples:
      | route | key | open | path | form |
      | the project route | credentialAll | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an SSE stream |
      | the project route | credentialAll | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | a JSON envelope |
      | the project route | credentialAll | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | plain text |
      | the project route | credentialAll | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an async run, its events read with the "project" key |
      | the project thread route | credentialAll | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an SSE stream |
      | the project thread route | credentialAll | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | a JSON envelope |
      | the project thread route | credentialAll | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | plain text |
      | the project thread route | credentialAll | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an async run, its events read with the "project" key |

  @PROJ-06 @cells
  Scenario Outline: The project's model settings apply inside the project and nowhere else: <route>, as <form>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    When I make a run that reports its model on "<path>" as <form>
    Then the run's model <is> "${projects.main.model}"

    Examples:
      | route | key | open | path | form | is |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an SSE stream | is |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | a JSON envelope | is |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | plain text | is |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an async run, its events read with the "project" key | is |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an SSE stream | is |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | a JSON envelope | is |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | plain text | is |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an async run, its events read with the "project" key | is |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an SSE stream | is not |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | a JSON envelope | is not |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | plain text | is not |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an async run, its events read with the "agent" key | is not |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | an SSE stream | is not |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | a JSON envelope | is not |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | plain text | is not |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | an async run, its events read with the "agent" key | is not |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | an SSE stream | is not |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | a JSON envelope | is not |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | plain text | is not |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | an async run, its events read with the "agent" key | is not |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an SSE stream | is not |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | a JSON envelope | is not |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | plain text | is not |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an async run, its events read with the "agent" key | is not |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an SSE stream | is not |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | a JSON envelope | is not |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | plain text | is not |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an async run, its events read with the "agent" key | is not |
