@errors
Feature: Error statuses before streaming
  Spec: Errors. The status tells what went wrong; the body uses the platform's problem
  format (its shape is not shown), never the OpenAI error envelope.

  @ERR-01
  Scenario: An ID that resolves to no agent is 400
    Given the "wildcard" key
    When I invoke "/api/invoke/${nonAgentID}" with the prompt "hello"
    Then the status is 400

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

  @ERR-08
  Scenario Outline: An agent, alias or thread that does not exist is 404
    Given the "<key>" key
    When I invoke "<path>" with the prompt "hello"
    Then the status is 404

    Examples:
      | key      | path                                                |
      | wildcard | /api/invoke/${unknownID}                            |
      | agent    | /api/invoke/${agents.main.id}/thread/${unknownID}   |

  @ERR-08
  Scenario: An X-SVC-Thread-Id naming no thread is 404, not a new thread
    Given the "agent" key
    And the request header "X-SVC-Thread-Id" is "${unknownID}"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "hello"
    Then the status is 404

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
