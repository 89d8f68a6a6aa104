@body @scripted
Feature: Invoke request body
  Spec: Resources / Invoke request body. The body is a plain-text prompt, used verbatim;
  JSON in it is literal text. The agent echoes a prompt without directives, so the
  plain-text answer shows exactly what the agent received.

  Background:
    Given the "agent" key

  @BODY-01
  Scenario Outline: The prompt reaches the agent verbatim
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "<prompt>"
    Then the status is 2xx
    And the plain-text answer is the prompt, byte for byte

    Examples:
      | prompt                               |
      | hello                                |
      | \u0020 leading and trailing blanks \t |
      | line one\nline two\r\nline three\n   |
      | Ünïcödé ✓ 日本語 🚀                    |
      | quotes \" and backslashes \\\\ stay  |

  @BODY-02
  Scenario Outline: A JSON body is literal prompt text, not parsed
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "<json>"
    Then the status is 2xx
    And the plain-text answer is the prompt, byte for byte

    Examples:
      | json                                                                      |
      | {\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"model\":\"gpt-x\"} |
      | {\"prompt\": \"only this?\", \"stream\": true}                              |

  # "The agent receives the JSON as literal text of the prompt; it is not
  # parsed": the body of all five routes ("Payload of all five"), in every
  # form that carries the answer (an async acknowledgement carries none).
  @cells
  Scenario Outline: A JSON body is literal prompt text on every route and in every form: <route>, as <form>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    When I make a run that echoes JSON on "<path>" as <form>
    Then the run's answer is its JSON prompt, byte for byte
    And every exchange of the scenario holds every rule traffic decides

    @BODY-02
    Examples: the agent routes
      | route | key | open | path | form |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an SSE stream |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | a JSON envelope |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | plain text |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | an SSE stream |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | a JSON envelope |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | plain text |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | an SSE stream |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | a JSON envelope |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | plain text |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an SSE stream |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | a JSON envelope |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | plain text |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an SSE stream |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | a JSON envelope |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | plain text |

    @BODY-02 @PROJ-03
    Examples: the project routes
      | route | key | open | path | form |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an SSE stream |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | a JSON envelope |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | plain text |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an SSE stream |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | a JSON envelope |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | plain text |
