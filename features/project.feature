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
