@modes @scripted
Feature: Run modes
  Spec: Endpoints / X-SVC-Run-Mode; Authentication 5; Errors / Other rules 2. A mode adds its
  tools to the agent's own for one run; a mode the workspace is not entitled to and an
  unknown name are ignored, not refused; a mode's tool is gated by the key's credential
  scopes, silently. The spec does not name the research tool, so each scenario compares
  the tools of a run with the mode against the same run without it.

  @MODE-01 @capability-researchMode
  Scenario Outline: X-SVC-Run-Mode is a comma-separated list of mode names, trimmed
    Given the target offers research mode
    And the "credentialAll" key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the answer is remembered as "own"
    Given the request header "X-SVC-Run-Mode" is "<modes>"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are those of answer "own" and more

    Examples:
      | modes                         |
      | ${unknownMode},research       |
      | ${unknownMode} ,  research  , |
      | research , ${unknownMode}     |

  @MODE-02 @capability-researchMode
  Scenario: A mode adds its tools to the agent's own
    Given the target offers research mode
    And the "credentialSearch" key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the answer is remembered as "own"
    Given the request header "X-SVC-Run-Mode" is "research"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are those of answer "own" and more

  # "A mode adds that mode's tools to the agent's own for the run", on every
  # route and in every form, as the scoped tools are. The alias and the
  # thread-ID route are left out: no key role has their chat scope together
  # with credential:use:search, without which the research tool is removed
  # again (MODE-06), so no tool could be added there.
  @MODE-02 @capability-researchMode @cells
  Scenario Outline: A mode adds its tools on every route and in every form: <route>, as <form>
    Given the target offers research mode
    And a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    When I make a run that lists its tools on "<path>" as <form>
    Then the answer is remembered as "own"
    Given the request header "X-SVC-Run-Mode" is "research"
    When I make a run that lists its tools on "<path>" as <form>
    Then the run's tools are those of answer "own" and more

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

  # "comma-separated mode names; whitespace is trimmed": the list's grammar
  # is the same on every route and in every form the mode adds tools on
  # (the rows above); the research entry comes after an unknown one, padded.
  @MODE-01 @capability-researchMode @cells
  Scenario Outline: The mode list is read whole and trimmed on every route and in every form: <route>, as <form>
    Given the target offers research mode
    And a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    When I make a run that lists its tools on "<path>" as <form>
    Then the answer is remembered as "own"
    Given the request header "X-SVC-Run-Mode" is "${unknownMode} ,  research  ,"
    When I make a run that lists its tools on "<path>" as <form>
    Then the run's tools are those of answer "own" and more

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

  # "A run-mode entitlement problem or unknown mode is not an error (the mode
  # is ignored)": no event of the run has error set either.
  @MODE-03
  Scenario: A mode the workspace is not entitled to is ignored, not refused
    Given the "notEntitled" key
    And the request header "Accept" is "application/json"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the answer is remembered as "own"
    Given the request header "X-SVC-Run-Mode" is "research"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And no event of the run has error set
    And the run's tools are those of answer "own"

  # Modes are "not tool references": a tool's name, the agent's own or
  # another agent's, is a name the server does not know as a mode.
  # "A run-mode entitlement problem ... is not an error (the mode is ignored)",
  # on every route and in every form the notEntitled key can run on: its
  # scopes are the main agent's, so the alias, thread-ID and project routes
  # are not its to run.
  @MODE-03 @cells
  Scenario Outline: A mode the workspace is not entitled to is ignored on every route and in every form: <route>, as <form>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    When I make a run that lists its tools on "<path>" as <form>
    Then the answer is remembered as "own"
    Given the request header "X-SVC-Run-Mode" is "research"
    When I make a run that lists its tools on "<path>" as <form>
    Then the run's tools are those of answer "own"

    Examples:
      | route | key | open | path | form |
      | the agent-ID route | notEntitled | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an SSE stream |
      | the agent-ID route | notEntitled | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | a JSON envelope |
      | the agent-ID route | notEntitled | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | plain text |
      | the agent-ID route | notEntitled | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an async run, its events read with the "agent" key |
      | the /thread/ route | notEntitled | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an SSE stream |
      | the /thread/ route | notEntitled | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | a JSON envelope |
      | the /thread/ route | notEntitled | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | plain text |
      | the /thread/ route | notEntitled | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an async run, its events read with the "agent" key |
      | the /threads/ route | notEntitled | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an SSE stream |
      | the /threads/ route | notEntitled | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | a JSON envelope |
      | the /threads/ route | notEntitled | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | plain text |
      | the /threads/ route | notEntitled | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an async run, its events read with the "agent" key |

  @MODE-04
  Scenario Outline: A mode name the server does not know is ignored, not refused
    Given the "agent" key
    And the request header "Accept" is "application/json"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the answer is remembered as "own"
    Given the request header "X-SVC-Run-Mode" is "<modes>"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And no event of the run has error set
    And the run's tools are those of answer "own"

    Examples:
      | modes                          |
      | ${unknownMode}                 |
      | ${agents.main.plainTool}       |
      | ${agents.other.distinctTools}  |

  # "ignored, not refused", on every invoke route and in every form, as the
  # header is read there.
  @MODE-04 @cells
  Scenario Outline: A mode name the server does not know is ignored on every route and in every form: <route>, as <form>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    When I make a run that lists its tools on "<path>" as <form>
    Then the answer is remembered as "own"
    Given the request header "X-SVC-Run-Mode" is "${unknownMode}"
    When I make a run that lists its tools on "<path>" as <form>
    Then the run's tools are those of answer "own"

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

  # The tools research adds are learnt from a key that may use them, so that
  # no event of the run without them may name them ("no error and no event").
  @MODE-05 @capability-researchMode
  Scenario: A mode's tool that the key's credential scopes exclude is removed, silently
    Given the target offers research mode
    And the request header "Accept" is "text/event-stream"
    And the "credentialSearch" key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the answer is remembered as "searchOwn"
    Given the request header "X-SVC-Run-Mode" is "research"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the answer is remembered as "searchResearch"
    Given the "agent" key
    And the request header "X-SVC-Run-Mode" is absent
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the answer is remembered as "own"
    Given the request header "X-SVC-Run-Mode" is "research"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And no event of the run has error set
    And the run's tools are those of answer "own"
    And the run's answer and kinds of events are those of answer "own"
    And no event of the run mentions the tools answer "searchResearch" has beyond answer "searchOwn"

  # "A tool attached by a mode is gated by the key's credential scopes": on
  # every route and in every form where a key of an entitled workspace lacks
  # credential:use:search (the agent key: the main agent's routes), the
  # research tool is removed, silently. The profile names no such key for
  # the alias, thread-ID and project routes.
  @MODE-05 @capability-researchMode @cells
  Scenario Outline: A mode's tool the key's credential scopes exclude is removed on every route and in every form: <route>, as <form>
    Given the target offers research mode
    And a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    When I make a run that lists its tools on "<path>" as <form>
    Then the answer is remembered as "own"
    Given the request header "X-SVC-Run-Mode" is "research"
    When I make a run that lists its tools on "<path>" as <form>
    Then the run's tools are those of answer "own"

    Examples:
      | route | key | open | path | form |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an SSE stream |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | a JSON envelope |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | plain text |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an async run, its events read with the "agent" key |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an SSE stream |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | a JSON envelope |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | plain text |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an async run, its events read with the "agent" key |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an SSE stream |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | a JSON envelope |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | plain text |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an async run, its events read with the "agent" key |

  @MODE-06 @capability-researchMode
  Scenario Outline: research adds the research tool with credential:use:search or credential:use:*
    Given the target offers research mode
    And the "<key>" key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the answer is remembered as "own"
    Given the request header "X-SVC-Run-Mode" is "research"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are those of answer "own" and more

    Examples:
      | key              |
      | credentialSearch |
      | credentialAll    |
