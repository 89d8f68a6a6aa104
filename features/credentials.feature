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

  # "a tool that uses a credential the key has no credential:use: scope for
  # is removed from the run": every run, so on every invoke route and in
  # every form. None of these keys has a credential:use scope.
  @CRED-01 @cells
  Scenario Outline: A key without credential scopes loses the credential-backed tools on every route and in every form: <route>, as <form>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    When I make a run that lists its tools on "<path>" as <form>
    Then the run's tools do not include "${agents.main.searchTools}"
    And the run's tools include "${agents.main.plainTools}"

    Examples:
      | route | key | open | path | form |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an SSE stream |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | a JSON envelope |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | plain text |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an async run, its events read with the "agent" key |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | an SSE stream |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | a JSON envelope |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | plain text |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | an async run, its events read with the "agent" key |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | an SSE stream |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | a JSON envelope |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | plain text |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | an async run, its events read with the "agent" key |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an SSE stream |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | a JSON envelope |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | plain text |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an async run, its events read with the "agent" key |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an SSE stream |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | a JSON envelope |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | plain text |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an async run, its events read with the "agent" key |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an SSE stream |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | a JSON envelope |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | plain text |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an async run, its events read with the "project" key |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an SSE stream |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | a JSON envelope |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | plain text |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an async run, its events read with the "project" key |

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

  # "credential:use:<credential> or credential:use:*" lets every run use the
  # tool, on every route and in every form. The alias and the thread-ID
  # route are left out: no key role has their chat scope together with a
  # credential:use scope.
  @CRED-02 @cells
  Scenario Outline: A credential scope lets the run use the tool on every route and in every form: <route>, as <form>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    When I make a run that lists its tools on "<path>" as <form>
    Then the run's tools include "${agents.main.searchTools}"

    Examples:
      | route | key | open | path | form |
      | the agent-ID route | credentialSearch | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an SSE stream |
      | the agent-ID route | credentialSearch | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | a JSON envelope |
      | the agent-ID route | credentialSearch | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | plain text |
      | the agent-ID route | credentialSearch | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an async run, its events read with the "agent" key |
      | the /thread/ route | credentialSearch | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an SSE stream |
      | the /thread/ route | credentialSearch | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | a JSON envelope |
      | the /thread/ route | credentialSearch | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | plain text |
      | the /thread/ route | credentialSearch | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an async run, its events read with the "agent" key |
      | the /threads/ route | credentialSearch | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an SSE stream |
      | the /threads/ route | credentialSearch | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | a JSON envelope |
      | the /threads/ route | credentialSearch | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | plain text |
      | the /threads/ route | credentialSearch | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an async run, its events read with the "agent" key |
      | the project route | credentialAll | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an SSE stream |
      | the project route | credentialAll | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | a JSON envelope |
      | the project route | credentialAll | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | plain text |
      | the project route | credentialAll | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an async run, its events read with the "project" key |
      | the project thread route | credentialAll | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an SSE stream |
      | the project thread route | credentialAll | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | a JSON envelope |
      | the project thread route | credentialAll | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | plain text |
      | the project thread route | credentialAll | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an async run, its events read with the "project" key |
