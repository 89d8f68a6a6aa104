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
