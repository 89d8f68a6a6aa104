@auth
Feature: Authentication and scopes
  Spec: Authentication 1-4; Follow-up routes. The required scope comes from the literal
  path value; wildcard keys are re-checked against their owner's access.

  @AUTH-01
  Scenario Outline: The scope is agent:chat:<literal path value>
    Given the "<key>" key
    When I invoke "<path>" with the prompt "scope check"
    Then the status is <status>

    Examples:
      | key   | path                              | status |
      | agent | /api/invoke/${agents.main.id}     | 2xx    |
      | agent | /api/invoke/${agents.main.alias}  | 403    |
      | alias | /api/invoke/${agents.main.alias}  | 2xx    |
      | alias | /api/invoke/${agents.main.id}     | 403    |

  # "derived from the path value, not from a header": neither the thread header nor
  # X-SVC-Agent (which only the chat-completions route reads) widens the scope.
  @AUTH-01
  Scenario Outline: A header does not widen the scope the path value needs
    Given the "<key>" key
    And the request header "<header>" is "<value>"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "scope by header?"
    Then the status is 403

    Examples:
      | key        | header          | value              |
      | threadChat | X-SVC-Thread-Id | ${threads.main.id} |
      | otherAgent | X-SVC-Agent     | ${agents.other.id} |

  # "agent:chat:<the literal path value>": {id} is the same segment on the
  # thread routes, so the key must cover it as written there too.
  @AUTH-01
  Scenario Outline: On the thread routes the scope is the literal {id} too
    Given a thread "T" opened on "/api/invoke/${agents.main.id}" with the "agent" key
    And the "<key>" key
    When I invoke "<path>" with the prompt "scope check"
    Then the status is <status>

    Examples:
      | key   | path                                                   | status |
      | agent | /api/invoke/${agents.main.alias}/thread/${thread:T}    | 403    |
      | alias | /api/invoke/${agents.main.alias}/thread/${thread:T}    | 2xx    |
      | alias | /api/invoke/${agents.main.id}/threads/${thread:T}      | 403    |
      | agent | /api/invoke/${agents.main.alias}/threads/${thread:T}   | 403    |

  @AUTH-02
  Scenario Outline: A thread ID in {id} needs agent:chat:<thread> or a wildcard key
    Given a thread "T" on the main agent
    And the "<key>" key
    When I invoke "/api/invoke/${thread:T}" with the prompt "thread in id"
    Then the status is <status>

    Examples:
      | key      | status |
      | agent    | 403    |
      | wildcard | 2xx    |

  @AUTH-02
  Scenario Outline: A key scoped agent:chat:<thread ID> opens that thread, and only by its ID
    Given the "threadChat" key
    When I invoke "<path>" with the prompt "thread scope"
    Then the status is <status>

    Examples:
      | path                          | status |
      | /api/invoke/${threads.main.id} | 2xx    |
      | /api/invoke/${agents.main.id}  | 403    |

  @AUTH-03
  Scenario Outline: An agent-scoped key continues a thread with the agent in the path
    Given a thread "T" on the main agent
    And the "agent" key
    And the request header "X-SVC-Thread-Id" is <header>
    When I invoke "<path>" with the prompt "continue"
    Then the status is 2xx
    And the response header "X-SVC-Thread-Id" is thread "T"

    Examples:
      | header     | path                                               |
      | thread "T" | /api/invoke/${agents.main.id}                      |
      | absent     | /api/invoke/${agents.main.id}/thread/${thread:T}   |
      | absent     | /api/invoke/${agents.main.id}/threads/${thread:T}  |

  @AUTH-04
  Scenario Outline: A wildcard key reaches only agents its owner can open
    Given the "wildcardLimited" key
    When I invoke "/api/invoke/${agents.<agent>.id}" with the prompt "who may?"
    Then the status is <status>

    Examples:
      | agent      | status |
      | main       | 2xx    |
      | restricted | 403    |

  @AUTH-06
  Scenario Outline: The events route needs thread:read
    Given a thread "T" on the main agent
    And the "<key>" key
    When I fetch the events of thread "T" without runID as JSON
    Then the status is <status>

    Examples:
      | key        | status |
      | agent      | 2xx    |
      | threadRead | 2xx    |
      | alias      | 403    |
      | project    | 403    |

  @AUTH-07
  Scenario: Abort is covered by agent:chat
    Given the "agent" key
    When I start "/api/invoke/${agents.main.id}" asynchronously with the prompt "@pause 2s"
    And I remember the async run as "R" on thread "T"
    And I abort thread "T"
    Then the status is 2xx

  @AUTH-07
  Scenario: A key with agent:chat for the thread's agent and nothing else may abort
    Given the "otherAgent" key
    When I start "/api/invoke/${agents.other.id}" asynchronously with the prompt "@pause 2s"
    And I remember the async run as "R" on thread "T"
    And I abort thread "T"
    Then the status is 2xx

  @AUTH-05
  Scenario Outline: The project route needs project:chat:<project_id>; an agent scope does not cover it
    Given the "<key>" key
    When I invoke "/api/projects/${projects.main.id}/invoke" with the prompt "project scope"
    Then the status is <status>

    Examples:
      | key          | status |
      | project      | 2xx    |
      | agent        | 403    |
      | wildcard     | 403    |
      | otherProject | 403    |

  @AUTH-05
  Scenario Outline: The project thread route needs project:chat:<project_id>; an agent scope does not cover it
    Given a project thread "P" on the main project
    And the "<key>" key
    When I invoke "/api/projects/${projects.main.id}/invoke/thread/${thread:P}" with the prompt "project scope"
    Then the status is <status>

    Examples:
      | key          | status |
      | project      | 2xx    |
      | agent        | 403    |
      | wildcard     | 403    |
      | otherProject | 403    |

  @AUTH-01 @ERR-06
  Scenario: A project key does not cover the agent routes of the project's agent
    Given the "project" key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "agent route"
    Then the status is 403

  # The spec gives no precedence between 403 (the owner has no access) and 404
  # (the thread does not exist, as it may not for that owner): both are accepted.
  @AUTH-04
  Scenario Outline: A wildcard key cannot continue a thread of an agent its owner cannot open
    Given a thread "R" on the restricted agent, opened with the "wildcard" key
    And the "<key>" key
    When I invoke "<path>" with the prompt "whose thread?"
    Then the status is <status>

    Examples:
      | key             | path                                                   | status     |
      | wildcard        | /api/invoke/${thread:R}                                | 2xx        |
      | wildcardLimited | /api/invoke/${thread:R}                                | 403 or 404 |
      | wildcardLimited | /api/invoke/${agents.restricted.id}/thread/${thread:R} | 403 or 404 |

  @AUTH-06
  Scenario Outline: The events of a project thread need project:threads
    Given a project thread "P" on the main project
    And the "<key>" key
    When I fetch the events of thread "P" without runID as JSON
    Then the status is <status>

    Examples:
      | key     | status |
      | project | 2xx    |
      | alias   | 403    |

  @AUTH-07
  Scenario: Abort needs an agent:chat scope: thread:read alone does not cover it
    Given a thread "T" on the main agent
    And the "threadRead" key
    When I abort thread "T"
    Then the status is 403

  # "covered by agent:chat" names no resource: that the scope must be for the thread's
  # agent is an interpretation (see AUTH-09 in rules.yaml), so this is a SHOULD.
  @AUTH-09
  Scenario: Abort with agent:chat for another agent only is refused
    Given a thread "T" on the main agent
    And the "otherAgent" key
    When I abort thread "T"
    Then the status is 403
