@routes
Feature: Invoke routes and the {id} path parameter
  Spec: Endpoints / Invoke routes; Path parameter {id}.

  @ROUTE-01 @scripted
  Scenario: An agent ID in the path runs that agent
    Given the "agent" key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "route by id ${marker:a}"
    Then the status is 2xx
    And the plain-text answer is "route by id ${marker:a}"

  # Which agent ran shows in its tools: each agent has a tool the other lacks.
  @ROUTE-01 @scripted
  Scenario: An agent ID runs that agent, not another agent
    Given the "wildcard" key
    When I invoke "/api/invoke/${agents.other.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools include "${agents.other.distinctTools}"
    And the run's tools do not include "${agents.main.distinctTools}"

  @ROUTE-02 @scripted
  Scenario: An alias in the path is resolved to the agent behind it
    Given the "alias" key
    When I invoke "/api/invoke/${agents.main.alias}" with the prompt "route by alias ${marker:a}"
    Then the status is 2xx
    And the plain-text answer is "route by alias ${marker:a}"

  # Which agent ran shows in its tools: each agent has a tool the other lacks.
  @ROUTE-02 @scripted
  Scenario: An alias runs the agent behind it, not another agent
    Given the "wildcard" key
    When I invoke "/api/invoke/${agents.other.alias}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools include "${agents.other.distinctTools}"
    And the run's tools do not include "${agents.main.distinctTools}"

  @ROUTE-03 @scripted
  Scenario: A thread ID in the path runs the agent that owns the thread
    Given a thread "O" on the other agent, opened with the "wildcard" key
    And the "wildcard" key
    When I invoke "/api/invoke/${thread:O}" with the prompt "@tools"
    Then the status is 2xx
    And the response header "X-SVC-Thread-Id" is thread "O"
    And the run's tools include "${agents.other.distinctTools}"
    And the run's tools do not include "${agents.main.distinctTools}"

  @ROUTE-03 @scripted
  Scenario: A thread ID in the path runs the owning agent and continues that thread
    Given a thread "T" on the main agent, opened with the "wildcard" key
    And the "wildcard" key
    When I invoke "/api/invoke/${thread:T}" with the prompt "second turn ${marker:b}"
    Then the status is 2xx
    And the response header "X-SVC-Thread-Id" is thread "T"
    And the plain-text answer is "second turn ${marker:b}"
    And thread "T" was continued: its lastRunID moved on and its events without runID contain "second turn ${marker:b}"

  @ROUTE-04 @scripted
  Scenario: The /thread/{thread} route continues the thread in the path
    Given a thread "T" on the main agent
    And the "agent" key
    When I invoke "/api/invoke/${agents.main.id}/thread/${thread:T}" with the prompt "on thread ${marker:b}"
    Then the status is 2xx
    And the response header "X-SVC-Thread-Id" is thread "T"
    And the plain-text answer is "on thread ${marker:b}"
    And thread "T" was continued: its lastRunID moved on and its events without runID contain "on thread ${marker:b}"

  @ROUTE-05 @scripted
  Scenario: The /threads/{thread} route is the same as /thread/{thread}
    Given a thread "T" on the main agent
    And the "agent" key
    When I invoke "/api/invoke/${agents.main.id}/threads/${thread:T}" with the prompt "on threads ${marker:b}"
    Then the status is 2xx
    And the response header "X-SVC-Thread-Id" is thread "T"
    And the plain-text answer is "on threads ${marker:b}"
    And thread "T" was continued: its lastRunID moved on and its events without runID contain "on threads ${marker:b}"

  # "Agent ID: Runs that agent"; "Agent alias: Resolved to the agent behind
  # the alias"; "Thread ID: Runs the agent that owns the thread": the route
  # decides the agent in every response form ("The response depends on
  # Accept and async"), not only in the one the scenarios above ask for.
  # The other agent's run shows in its tools.
  @cells @scripted
  Scenario Outline: The path decides the agent in every form: <route>, as <form>
    Given a thread "O" on the other agent, opened with the "wildcard" key
    And the "wildcard" key
    When I make a run that lists its tools on "<path>" as <form>
    Then the run's tools include "${agents.other.distinctTools}"
    And the run's tools do not include "${agents.main.distinctTools}"

    @ROUTE-01
    Examples: the agent-ID route
      | route | path | form |
      | the agent-ID route | /api/invoke/${agents.other.id} | an SSE stream |
      | the agent-ID route | /api/invoke/${agents.other.id} | a JSON envelope |
      | the agent-ID route | /api/invoke/${agents.other.id} | plain text |
      | the agent-ID route | /api/invoke/${agents.other.id} | an async run, its events read with the "wildcard" key |

    @ROUTE-02
    Examples: the alias route
      | route | path | form |
      | the alias route | /api/invoke/${agents.other.alias} | an SSE stream |
      | the alias route | /api/invoke/${agents.other.alias} | a JSON envelope |
      | the alias route | /api/invoke/${agents.other.alias} | plain text |
      | the alias route | /api/invoke/${agents.other.alias} | an async run, its events read with the "wildcard" key |

    @ROUTE-03
    Examples: the thread-ID route
      | route | path | form |
      | the thread-ID route | /api/invoke/${thread:O} | an SSE stream |
      | the thread-ID route | /api/invoke/${thread:O} | a JSON envelope |
      | the thread-ID route | /api/invoke/${thread:O} | plain text |
      | the thread-ID route | /api/invoke/${thread:O} | an async run, its events read with the "wildcard" key |

  # "Continues that thread"; "Run, continuing the thread in the path": in
  # every form, the thread's own follow-ups show the new run.
  @cells @scripted
  Scenario Outline: The thread in the path is continued in every form: <route>, as <form>
    Given a thread "T" opened on "/api/invoke/${agents.main.id}" with the "<key>" key
    And the "<key>" key
    When I make a run that completes on "<path>" as <form>
    Then thread "T" was continued: its lastRunID moved on and its events without runID contain "${marker:b}"

    @ROUTE-03
    Examples: the thread-ID route
      | route | key | path | form |
      | the thread-ID route | wildcard | /api/invoke/${thread:T} | an SSE stream |
      | the thread-ID route | wildcard | /api/invoke/${thread:T} | a JSON envelope |
      | the thread-ID route | wildcard | /api/invoke/${thread:T} | plain text |
      | the thread-ID route | wildcard | /api/invoke/${thread:T} | an async run |

    @ROUTE-04
    Examples: the /thread/ route
      | route | key | path | form |
      | the /thread/ route | agent | /api/invoke/${agents.main.id}/thread/${thread:T} | an SSE stream |
      | the /thread/ route | agent | /api/invoke/${agents.main.id}/thread/${thread:T} | a JSON envelope |
      | the /thread/ route | agent | /api/invoke/${agents.main.id}/thread/${thread:T} | plain text |
      | the /thread/ route | agent | /api/invoke/${agents.main.id}/thread/${thread:T} | an async run |

    @ROUTE-05
    Examples: the /threads/ route
      | route | key | path | form |
      | the /threads/ route | agent | /api/invoke/${agents.main.id}/threads/${thread:T} | an SSE stream |
      | the /threads/ route | agent | /api/invoke/${agents.main.id}/threads/${thread:T} | a JSON envelope |
      | the /threads/ route | agent | /api/invoke/${agents.main.id}/threads/${thread:T} | plain text |
      | the /threads/ route | agent | /api/invoke/${agents.main.id}/threads/${thread:T} | an async run |
