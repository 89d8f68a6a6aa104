@tools @scripted
Feature: X-SVC-Scoped-Tools
  Spec: Endpoints / X-SVC-Scoped-Tools; Authentication 5. The header restricts one run to a
  subset of the agent's tools: comma-separated, trimmed, empty entries dropped, and it can
  only narrow. Without it the run has the agent's tools minus the credential-backed tools
  the key may not use. The agent script's @tools lists the tools a run really has.

  Background:
    Given the "agent" key

  @TOOLS-01
  Scenario: The header is comma-separated; entries are trimmed and empty entries dropped
    Given the request header "X-SVC-Scoped-Tools" is "${agents.main.plainTool} ,,  ${agents.main.plainTool2}  , ,"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are exactly "${agents.main.plainTool},${agents.main.plainTool2}"

  @TOOLS-02
  Scenario: The header narrows the run to the tools it names
    Given the request header "X-SVC-Scoped-Tools" is "${agents.main.plainTool}"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are exactly "${agents.main.plainTool}"

  # The spec does not say whether a reference the agent lacks is ignored or refused.
  # A tool another agent of the workspace has is one the agent lacks, too.
  @TOOLS-02
  Scenario Outline: Naming a tool the agent lacks adds nothing
    Given the request header "X-SVC-Scoped-Tools" is "${agents.main.plainTool},<lacked>"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the run is refused with a 4xx status, or its tools are exactly "${agents.main.plainTool}"

    Examples:
      | lacked                       |
      | ${unknownTool}               |
      | ${agents.other.distinctTools} |

  # Narrowing keeps what it names of the tools the run may have: a
  # credential-backed tool only when the key may use its credential.
  @TOOLS-02
  Scenario Outline: Naming a credential-backed tool keeps it only where the key's credential scopes allow it
    Given the "<key>" key
    And the request header "X-SVC-Scoped-Tools" is "${agents.main.plainTool},${agents.main.searchTool}"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are exactly "<tools>"

    Examples:
      | key              | tools                                              |
      | agent            | ${agents.main.plainTool}                           |
      | credentialSearch | ${agents.main.plainTool},${agents.main.searchTool} |

  # "It restricts one run to a subset of the agent's configured tools": the
  # header is one of the invoke routes' request headers ("Payload of all
  # five"; "Project routes behave identically to the agent routes ... same
  # Accept variants, same async parameter"), so the narrowing holds on every
  # route, for what {id} names, and in every response form. An async run's
  # tools are read from the events route by its runID. A thread is opened
  # first on every row: the thread routes continue it.
  @TOOLS-02 @cells
  Scenario Outline: The header narrows the run on every route and in every form: <route>, as <form>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    And the request header "X-SVC-Scoped-Tools" is "${agents.main.plainTool}"
    When I make a run that lists its tools on "<path>" as <form>
    Then the run's tools are exactly "${agents.main.plainTool}"

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

  # "comma-separated; whitespace is trimmed; empty entries are dropped": the
  # header's grammar is the same on every invoke route and in every form,
  # as its narrowing is (the rows above).
  @TOOLS-01 @cells
  Scenario Outline: Entries are trimmed and empty entries dropped on every route and in every form: <route>, as <form>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    And the request header "X-SVC-Scoped-Tools" is "${agents.main.plainTool} ,,  ${agents.main.plainTool2}  , ,"
    When I make a run that lists its tools on "<path>" as <form>
    Then the run's tools are exactly "${agents.main.plainTool},${agents.main.plainTool2}"

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

  @TOOLS-03
  Scenario: The restriction does not change the agent: the next run has all its tools again
    Given a thread "T" on the main agent
    And the request header "X-SVC-Scoped-Tools" is "${agents.main.plainTool}"
    When I invoke "/api/invoke/${agents.main.id}/thread/${thread:T}" with the prompt "@tools"
    Then the status is 2xx
    And the header narrowed the run's tools to exactly "${agents.main.plainTool}"
    Given the request header "X-SVC-Scoped-Tools" is absent
    When I invoke "/api/invoke/${agents.main.id}/thread/${thread:T}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are exactly "${agents.main.plainTools}"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are exactly "${agents.main.plainTools}"

  @TOOLS-04
  Scenario Outline: Without the header the run has the agent's tools, minus those the key's credential scopes exclude
    Given the "<key>" key
    When I invoke "/api/invoke/${agents.main.id}" with the prompt "@tools"
    Then the status is 2xx
    And the run's tools are exactly "<tools>"

    Examples:
      | key              | tools                                                |
      | agent            | ${agents.main.plainTools}                            |
      | credentialSearch | ${agents.main.plainTools},${agents.main.searchTools} |

  # "Without the header the run uses the agent's tools, subject to the key's
  # credential scopes": every run without it, on every route and in every
  # form. None of these keys has a credential:use scope; a project's runs
  # have its tasks too (PROJ-04).
  @TOOLS-04 @cells
  Scenario Outline: Without the header the run has the agent's tools on every route and in every form: <route>, as <form>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    When I make a run that lists its tools on "<path>" as <form>
    Then the run's tools are exactly "<tools>"

    Examples:
      | route | key | open | path | form | tools |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an SSE stream | ${agents.main.plainTools} |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | a JSON envelope | ${agents.main.plainTools} |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | plain text | ${agents.main.plainTools} |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an async run, its events read with the "agent" key | ${agents.main.plainTools} |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | an SSE stream | ${agents.main.plainTools} |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | a JSON envelope | ${agents.main.plainTools} |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | plain text | ${agents.main.plainTools} |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | an async run, its events read with the "agent" key | ${agents.main.plainTools} |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | an SSE stream | ${agents.main.plainTools} |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | a JSON envelope | ${agents.main.plainTools} |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | plain text | ${agents.main.plainTools} |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | an async run, its events read with the "agent" key | ${agents.main.plainTools} |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an SSE stream | ${agents.main.plainTools} |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | a JSON envelope | ${agents.main.plainTools} |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | plain text | ${agents.main.plainTools} |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an async run, its events read with the "agent" key | ${agents.main.plainTools} |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an SSE stream | ${agents.main.plainTools} |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | a JSON envelope | ${agents.main.plainTools} |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | plain text | ${agents.main.plainTools} |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an async run, its events read with the "agent" key | ${agents.main.plainTools} |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an SSE stream | ${agents.main.plainTools},${projects.main.tasks} |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | a JSON envelope | ${agents.main.plainTools},${projects.main.tasks} |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | plain text | ${agents.main.plainTools},${projects.main.tasks} |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an async run, its events read with the "project" key | ${agents.main.plainTools},${projects.main.tasks} |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an SSE stream | ${agents.main.plainTools},${projects.main.tasks} |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | a JSON envelope | ${agents.main.plainTools},${projects.main.tasks} |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | plain text | ${agents.main.plainTools},${projects.main.tasks} |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an async run, its events read with the "project" key | ${agents.main.plainTools},${projects.main.tasks} |

  # "The restriction does not change the agent": on every route and in every
  # form, the same cell's next run without the header has the tools the rows
  # above expect.
  @TOOLS-03 @cells
  Scenario Outline: The restriction does not stick on any route or in any form: <route>, as <form>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    And the request header "X-SVC-Scoped-Tools" is "${agents.main.plainTool}"
    When I make a run that lists its tools on "<path>" as <form>
    Then the header narrowed the run's tools to exactly "${agents.main.plainTool}"
    Given the request header "X-SVC-Scoped-Tools" is absent
    When I make a run that lists its tools on "<path>" as <form>
    Then the run's tools are exactly "<tools>"

    Examples:
      | route | key | open | path | form | tools |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an SSE stream | ${agents.main.plainTools} |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | a JSON envelope | ${agents.main.plainTools} |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | plain text | ${agents.main.plainTools} |
      | the agent-ID route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id} | an async run, its events read with the "agent" key | ${agents.main.plainTools} |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | an SSE stream | ${agents.main.plainTools} |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | a JSON envelope | ${agents.main.plainTools} |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | plain text | ${agents.main.plainTools} |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | an async run, its events read with the "agent" key | ${agents.main.plainTools} |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | an SSE stream | ${agents.main.plainTools} |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | a JSON envelope | ${agents.main.plainTools} |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | plain text | ${agents.main.plainTools} |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | an async run, its events read with the "agent" key | ${agents.main.plainTools} |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an SSE stream | ${agents.main.plainTools} |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | a JSON envelope | ${agents.main.plainTools} |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | plain text | ${agents.main.plainTools} |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | an async run, its events read with the "agent" key | ${agents.main.plainTools} |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an SSE stream | ${agents.main.plainTools} |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | a JSON envelope | ${agents.main.plainTools} |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | plain text | ${agents.main.plainTools} |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | an async run, its events read with the "agent" key | ${agents.main.plainTools} |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an SSE stream | ${agents.main.plainTools},${projects.main.tasks} |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | a JSON envelope | ${agents.main.plainTools},${projects.main.tasks} |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | plain text | ${agents.main.plainTools},${projects.main.tasks} |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | an async run, its events read with the "project" key | ${agents.main.plainTools},${projects.main.tasks} |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an SSE stream | ${agents.main.plainTools},${projects.main.tasks} |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | a JSON envelope | ${agents.main.plainTools},${projects.main.tasks} |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | plain text | ${agents.main.plainTools},${projects.main.tasks} |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | an async run, its events read with the "project" key | ${agents.main.plainTools},${projects.main.tasks} |
