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
