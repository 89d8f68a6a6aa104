package steps

import (
	"fmt"

	"github.com/invokeconf/invokeconf/agentscript"
)

// Capabilities. A scenario needs of the target's agent what its prompts ask
// for. Every prompt a step sends is parsed with the agent script language;
// a directive the profile's capabilities.script lacks makes the scenario
// untested, never passed. An echo prompt is only remembered: many scenarios
// send one just to get a status or a thread, so the echo capability is
// checked when a step reads an answer's text (needEcho).

// needPrompt checks a prompt about to be sent (after expansion).
func (w *World) needPrompt(prompt string) error {
	s, err := agentscript.Parse(prompt)
	if err != nil {
		return scenarioErrorf("the prompt is not a valid agent script: %v", err)
	}
	if s.Echo {
		w.echoSent = true
		return nil
	}
	for _, d := range s.Directives {
		if !w.P.Capabilities.CanScript(string(d.Kind)) {
			return &untested{reason: fmt.Sprintf("the target's agent cannot be made to show @%s (capabilities.script lacks %s)", d.Kind, d.Kind)}
		}
	}
	return nil
}

// needEcho is called by steps that read an answer's text: when the scenario
// sent a prompt without directives, its answer is the prompt only on a target
// whose agent echoes.
func (w *World) needEcho() error {
	if w.echoSent && !w.P.Capabilities.CanScript("echo") {
		return &untested{reason: "the target's agent does not answer a prompt without directives verbatim (capabilities.script lacks echo)"}
	}
	return nil
}
