@errors
Feature: Error statuses before streaming
  Spec: Errors. The status tells what went wrong; the body uses the platform's problem
  format (its shape is not shown), never the OpenAI error envelope.

  @ERR-01
  Scenario: An ID that resolves to no agent is 400
    Given the "wildcard" key
    When I invoke "/api/invoke/${nonAgentID}" with the prompt "hello"
    Then the status is 400

  # "400: {id} resolves to no agent": {id} is the same segment on the
  # thread routes, so an ID that names something other than an agent is 400
  # there too, whatever thread follows it (the thread exists: not 404).
  @ERR-01 @cells
  Scenario Outline: An ID that resolves to no agent is 400 on the thread routes too: <route>
    Given a thread "T" opened on "/api/invoke/${agents.main.id}" with the "agent" key
    And the "wildcard" key
    When I invoke "<path>" with the prompt "hello"
    Then the status is 400

    Examples:
      | route               | path                                           |
      | the /thread/ route  | /api/invoke/${nonAgentID}/thread/${thread:T}   |
      | the /threads/ route | /api/invoke/${nonAgentID}/threads/${thread:T}  |

  @ERR-02
  Scenario: A request without a key is 401
    Given no key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "hello"
    Then the status is 401

  @ERR-03
  Scenario Outline: A malformed Authorization is 401
    Given <authorization>
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "hello"
    Then the status is 401

    Examples:
      | authorization                                            |
      | the Authorization header "Bearer not-a-key"              |
      | the Authorization header "Bearer sk-svc-alice"           |
      | the Authorization header "Bearer sk-svc--k1-s3cr3t"      |
      | the Authorization header "Basic YWxpY2U6c2VjcmV0"        |
      | the Authorization header is the agent key without Bearer |

  @ERR-04
  Scenario Outline: An unknown key is 401
    Given <authorization>
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "hello"
    Then the status is 401

    Examples:
      | authorization                                                          |
      | the Authorization header "Bearer sk-svc-nobody-nokey-0000000000000000" |
      | the Authorization header is the agent key with another secret          |

  @ERR-05
  Scenario: An expired key is 401
    Given the "expired" key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "hello"
    Then the status is 401

  @ERR-06
  Scenario: A key whose scopes do not cover the agent is 403
    Given the "otherAgent" key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "hello"
    Then the status is 403

  @ERR-07
  Scenario: A key on an instance with API access disabled is 403
    Given the "apiDisabled" key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "hello"
    Then the status is 403

  # The key alone decides: on every agent route, for what {id} names and a
  # thread in the path. (On the project routes the key, agent:chat:* only,
  # is refused for its scope anyway: AUTH-05.)
  @ERR-07 @cells
  Scenario Outline: A key on an instance with API access disabled is 403 on every agent route: <route>
    Given a thread "T" opened on "/api/invoke/${agents.main.id}" with the "agent" key
    And the "apiDisabled" key
    When I invoke "<path>" with the prompt "hello"
    Then the status is 403

    Examples:
      | route               | path                                                 |
      | the agent-ID route  | /api/invoke/${agents.main.id}                        |
      | the alias route     | /api/invoke/${agents.main.alias}                     |
      | the thread-ID route | /api/invoke/${thread:T}                              |
      | the /thread/ route  | /api/invoke/${agents.main.id}/thread/${thread:T}     |
      | the /threads/ route | /api/invoke/${agents.main.id}/threads/${thread:T}    |

  # The key alone decides on the follow-up routes too: abort is covered by
  # agent:chat (AUTH-07), which this key holds as agent:chat:*. (The events
  # and thread routes need thread:read, which it lacks: a 403 there shows
  # nothing of this rule.)
  @ERR-07
  Scenario: A key on an instance with API access disabled cannot abort a thread's run either
    Given a thread "T" on the main agent
    And the "apiDisabled" key
    When I abort thread "T"
    Then the status is 403

  @ERR-08
  Scenario Outline: An agent, alias or thread that does not exist is 404
    Given the "<key>" key
    When I invoke "<path>" with the prompt "hello"
    Then the status is 404

    Examples:
      | key      | path                                                |
      | wildcard | /api/invoke/${unknownID}                            |
      | agent    | /api/invoke/${agents.main.id}/thread/${unknownID}   |
      | agent    | /api/invoke/${agents.main.id}/threads/${unknownID}  |

    # "Project routes behave identically to the agent routes": a thread the
    # project thread route names that does not exist is 404 there too.
    @PROJ-03
    Examples: the project thread route
      | key      | path                                                |
      | project  | /api/projects/${projects.main.id}/invoke/thread/${unknownID} |

  # The header is read on every invoke route that takes no thread in its
  # path (the agent ID, the alias, the project route).
  @ERR-08
  Scenario Outline: An X-SVC-Thread-Id naming no thread is 404, not a new thread: <route>
    Given the "<key>" key
    And the request header "X-SVC-Thread-Id" is "${unknownID}"
    When I invoke "<path>" with the prompt "hello"
    Then the status is 404

    Examples:
      | route              | key   | path                             |
      | the agent-ID route | agent | /api/invoke/${agents.main.id}    |
      | the alias route    | alias | /api/invoke/${agents.main.alias} |

    @PROJ-03
    Examples: the project route
      | route             | key     | path                                     |
      | the project route | project | /api/projects/${projects.main.id}/invoke |

  @ERR-10
  Scenario Outline: Errors before streaming are not the OpenAI error envelope
    Given <setup>
    And the request header "Accept" is "text/event-stream"
    When I invoke "<path>" with the prompt "hello"
    Then the status is <status>
    And the body is not an OpenAI error envelope

    Examples:
      | setup                  | path                              | status |
      | no key                 | /api/invoke/${agents.main.id}     | 401    |
      | the "otherAgent" key   | /api/invoke/${agents.main.id}     | 403    |
      | the "wildcard" key     | /api/invoke/${unknownID}          | 404    |
      | the "wildcard" key     | /api/invoke/${nonAgentID}         | 400    |

  # "Every invoke call carries Authorization": a key that is malformed,
  # unknown or expired is 401 on each of the five routes, for what {id}
  # names, in the problem format (ERR-10). A thread is opened first with a
  # good key: the thread routes name it.
  @cells
  Scenario Outline: A bad key is 401 on every route: <route>, <what>
    Given a thread "T" opened on "<open>" with the "<opener>" key
    And <authorization>
    When I invoke "<path>" with the prompt "hello ${marker:h}"
    Then the status is 401
    And every exchange of the scenario holds every rule traffic decides

    @ERR-03
    Examples: a malformed key
      | route | opener | open | path | what | authorization |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | a malformed key | the Authorization header "Bearer not-a-key" |
      | the alias route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.alias} | a malformed key | the Authorization header "Bearer not-a-key" |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | a malformed key | the Authorization header "Bearer not-a-key" |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | a malformed key | the Authorization header "Bearer not-a-key" |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | a malformed key | the Authorization header "Bearer not-a-key" |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | a malformed key | the Authorization header "Bearer not-a-key" |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | a malformed key | the Authorization header "Bearer not-a-key" |

    @ERR-04
    Examples: an unknown key
      | route | opener | open | path | what | authorization |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an unknown key | the Authorization header is the agent key with another secret |
      | the alias route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.alias} | an unknown key | the Authorization header is the agent key with another secret |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | an unknown key | the Authorization header is the agent key with another secret |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an unknown key | the Authorization header is the agent key with another secret |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an unknown key | the Authorization header is the agent key with another secret |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an unknown key | the Authorization header is the agent key with another secret |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an unknown key | the Authorization header is the agent key with another secret |

    @ERR-05
    Examples: an expired key
      | route | opener | open | path | what | authorization |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an expired key | the "expired" key |
      | the alias route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.alias} | an expired key | the "expired" key |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | an expired key | the "expired" key |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an expired key | the "expired" key |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an expired key | the "expired" key |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an expired key | the "expired" key |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an expired key | the "expired" key |

  # "403: the key's scopes do not cover the requested agent", on each of the
  # five routes: the other agent's key covers neither the main agent, its
  # alias and threads, nor the project ("derived from the path value").
  @ERR-06 @cells
  Scenario Outline: A key whose scopes do not cover the route is 403 on every route: <route>
    Given a thread "T" opened on "<open>" with the "<opener>" key
    And the "otherAgent" key
    When I invoke "<path>" with the prompt "not mine ${marker:o}"
    Then the status is 403
    And every exchange of the scenario holds every rule traffic decides

    Examples:
      | route | opener | open | path |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} |
      | the alias route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.alias} |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} |
