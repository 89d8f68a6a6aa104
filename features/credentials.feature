@credentials @scripted
Feature: Credential scopes
  Spec: Authentication 2 and 5; Errors / Other rules 3. A tool that uses a credential the
  key has no credential:use scope for is removed from the run, silently;
  credential:use:<credential> or credential:use:* lets the run use it.

  @CRED-01
  Scenario: A tool whose credential the key may not use is removed from the run, silently
    Given the "agent" key
    And the request header "Accept" is "text/event-stream"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And no event of the run has error set
    And the run's tools do not include "${agents.main.searchTools}"
    And the run's tools include "${agents.main.plainTools}"
    And no event of the run mentions "${agents.main.searchTools}"

  @CRED-01
  Scenario: Inside a project, too, a key without credential scopes loses the credential-backed tools
    Given the "project" key
    And the request header "Accept" is "application/json"
    When I invoke "/api/projects/${projects.main.id}/invoke" with the prompt "@tools"
    Then the status is 2xx
    And no event of the run has error set
    And the run's tools do not include "${projects.main.credentialTools}"
    And the run's tools do not include "${agents.main.searchTools}"
    And no event of the run mentions "${agents.main.searchTools}"

  @CRED-02
  Scenario Outline: credential:use:search or credential:use:* lets the run use a tool that uses search
    Given the "<key>" key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools include "${agents.main.searchTools}"

    Examples:
      | key              |
      | credentialSearch |
      | credentialAll    |
