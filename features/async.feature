@async
Feature: Async runs and the follow-up routes
  Spec: Endpoints / Query parameters (async); Follow-up routes for async runs.
  Event shapes of the follow-up routes are not shown, so answers are looked for as text.

  Background:
    Given the "agent" key

  # Tolerance: the answer must end within 1 s while the run pauses 1.5 s, so an
  # answer that waits for the run ends at least 500 ms past the limit.
  @ASYNC-01 @scripted
  Scenario: async=true answers at once with threadID and runID while the run goes on
    When I start "/api/invoke/${agents.main.id}" asynchronously with the prompt:
      """
      @say started
      @pause 1500ms
      @say "${escaped:done}"
      """
    Then the async answer came within 1s with a threadID and a runID, remembered as run "R" on thread "T"
    And the response header "X-SVC-Thread-Id" is thread "T"
    And the events of run "R" on thread "T", once it has finished, contain "${marker:done}"

  @ASYNC-01 @scripted
  Scenario: On a resumed thread the async answer's threadID is that thread
    Given a thread "T" on the main agent
    And the request header "X-SVC-Thread-Id" is thread "T"
    When I start "/api/invoke/${agents.main.id}" asynchronously with the prompt "resumed ${marker:r}"
    Then the status is 2xx
    And the async answer names thread "T" and a runID, remembered as run "R"
    And the events of run "R" on thread "T", once it has finished, contain "resumed ${marker:r}"

  @ASYNC-02 @scripted
  Scenario: The events route with runID delivers that run's events
    Given a thread "T" on the main agent whose run "R1" said "${marker:first}"
    And run "R2" on thread "T" said "${marker:second}"
    When I fetch the events of thread "T" with runID of run "R1" as JSON
    Then the status is 2xx
    And the body contains "${marker:first}" but not "${marker:second}"

  # With Accept: application/json the call "stays open until the run finishes": a service
  # may apply that to the form without runID too, and answer with the running run once
  # it has completed, which by then is the last completed one.
  @ASYNC-03 @scripted
  Scenario: The events route without runID returns the last completed run
    Given a thread "T" on the main agent whose run "R1" said "${marker:first}"
    When I start "/api/invoke/${agents.main.id}/thread/${thread:T}" asynchronously with the prompt:
      """
      @pause 2s
      @say ${marker:second}
      """
    And I remember the async run as "R2" on thread "T"
    And I fetch the events of thread "T" without runID as JSON
    Then the status is 2xx
    And the body holds the last completed run's answer "${marker:first}", or "${marker:second}" if the call stayed open until run "R2" on thread "T" finished

  @ASYNC-03 @scripted
  Scenario: With several completed runs, the events route without runID returns the last of them
    Given a thread "T" on the main agent whose run "R1" said "${marker:first}"
    And run "R2" on thread "T" said "${marker:second}"
    When I start "/api/invoke/${agents.main.id}/thread/${thread:T}" asynchronously with the prompt:
      """
      @pause 2s
      @say ${marker:third}
      """
    And I remember the async run as "R3" on thread "T"
    And I fetch the events of thread "T" without runID as JSON
    Then the status is 2xx
    And the body holds the last completed run's answer "${marker:second}" and not "${marker:first}", or "${marker:third}" if the call stayed open until run "R3" on thread "T" finished

  # Without Accept: application/json nothing keeps the call open: the last completed
  # run is the one completed when the call came.
  @ASYNC-03 @scripted
  Scenario: Without Accept application/json the events route without runID answers with the run completed when it was called
    Given a thread "T" on the main agent whose run "R1" said "${marker:first}"
    And run "R2" on thread "T" said "${marker:second}"
    When I start "/api/invoke/${agents.main.id}/thread/${thread:T}" asynchronously with the prompt:
      """
      @pause 2s
      @say ${marker:third}
      """
    And I remember the async run as "R3" on thread "T"
    And I fetch the events of thread "T" without runID and without Accept
    Then the status is 2xx
    And the body contains "${marker:second}" but not "${marker:first}", nor "${marker:third}", the answer of run "R3", which had not finished when the call came

  @ASYNC-04 @scripted
  Scenario: With Accept application/json the events route waits for the run to finish
    When I start "/api/invoke/${agents.main.id}" asynchronously with the prompt:
      """
      @say early
      @pause 1500ms
      @say "${escaped:late}"
      """
    And I remember the async run as "R" on thread "T"
    And I fetch the events of thread "T" with runID of run "R" as JSON
    Then the status is 2xx
    And the body contains "${marker:late}"

  # Tolerance: the thread's answer must end within 1 s while the run pauses
  # 1.5 s, so an answer that waits for the run ends at least 500 ms past the limit.
  @ASYNC-05 @scripted
  Scenario: GET /api/threads/{id} answers at once and reports completion through lastRunID
    When I start "/api/invoke/${agents.main.id}" asynchronously with the prompt:
      """
      @pause 1500ms
      @say done
      """
    And I remember the async run as "R" on thread "T"
    And I get thread "T"
    Then the status is 2xx
    And the answer came within 1s
    And lastRunID is not run "R"
    And lastRunID of thread "T" eventually becomes run "R"

  # The abort is sent once the run has said something, so it lands while the run is
  # under way even on a service whose agent waits on a model. The pause leaves the
  # first content and the abort 4 s before what is said after it counts (1 s after
  # the abort was answered): a cancelled run ends the scenario at once.
  @ASYNC-06 @scripted
  Scenario: Abort cancels a run
    Given the request header "Accept" is "text/event-stream"
    When I invoke "/api/invoke/${agents.main.id}" with the prompt below as run "A" on thread "T" and abort the thread once the content "${marker:working}" arrived:
      """
      @say "${escaped:working}"
      @pause 5s
      @say "${escaped:after}"
      """
    Then the abort answered 2xx and the stream ended without the content "${marker:after}"
    And the events of run "A" on thread "T" show the content "${marker:working}" and that it ended without "${marker:after}"

  @ASYNC-07 @scripted
  Scenario Outline: Without async=true the call is synchronous
    When I invoke "/api/invoke/${agents.main.id}<query>" with the prompt "sync ${marker:s}"
    Then the status is 2xx
    And the plain-text answer is "sync ${marker:s}"

    Examples:
      | query        |
      |              |
      | ?async=false |

  # "async: boolean, default false" is a query parameter of every invoke
  # route ("Payload of all five"; the project routes take "the same async
  # parameter").
  @ASYNC-07 @scripted @cells
  Scenario Outline: Without async=true the call is synchronous on every route: <route><query>
    Given a thread "T" opened on "<open>" with the "<key>" key
    And the "<key>" key
    When I invoke "<path><query>" with the prompt "sync ${marker:s}"
    Then the status is 2xx
    And the plain-text answer is "sync ${marker:s}"

    Examples:
      | route | key | open | path | query |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} |  |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} |  |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} |  |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} |  |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke |  |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} |  |
      | the alias route | alias | /api/invoke/${agents.main.alias} | /api/invoke/${agents.main.alias} | ?async=false |
      | the thread-ID route | wildcard | /api/invoke/${agents.main.id} | /api/invoke/${thread:T} | ?async=false |
      | the /thread/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/thread/${thread:T} | ?async=false |
      | the /threads/ route | agent | /api/invoke/${agents.main.id} | /api/invoke/${agents.main.id}/threads/${thread:T} | ?async=false |
      | the project route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke | ?async=false |
      | the project thread route | project | /api/projects/${projects.main.id}/invoke | /api/projects/${projects.main.id}/invoke/thread/${thread:T} | ?async=false |
