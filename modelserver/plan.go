package modelserver

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/invokeconf/invokeconf/agentscript"
)

// The server keeps no state: every request carries the conversation, and
// the conversation says how far the script has got. The script is the last
// user message. Each tool call the assistant made after it, answered by a
// tool message, moves the script on past one call-making directive (@tool,
// @step, @ask). So a script is cut into segments, each ending with one call
// (or with the script's end), and a request is answered with the segment
// after the calls it already holds.

// conversation is what the server reads from a request's messages.
type conversation struct {
	// prompt is the last user message: the agent script.
	prompt string
	// calls are the names of the tool calls the assistant made after it,
	// in order; each has its tool result.
	calls []string
	// textBytes counts the bytes of text in all messages, for usage.
	textBytes int
}

// readConversation finds the script and the calls made since. A tool call
// without a tool message answering it is refused as the OpenAI API refuses
// it.
func readConversation(msgs []message) (conversation, *apiError) {
	var c conversation
	if len(msgs) == 0 {
		return c, badRequest(codeInvalidRequest, "messages", "messages must hold at least one message")
	}
	last := -1
	for i, m := range msgs {
		text, err := m.text()
		if err != nil {
			return c, badRequest(codeInvalidRequest, fmt.Sprintf("messages[%d].content", i), "messages[%d]: %v", i, err)
		}
		c.textBytes += len(text)
		if m.Role == "user" {
			last, c.prompt = i, text
		}
	}
	if last < 0 {
		return c, badRequest(codeInvalidRequest, "messages",
			"the conversation holds no user message: the model server reads its agent script from the last user message")
	}
	answered := map[string]bool{}
	for _, m := range msgs[last+1:] {
		if m.Role == "tool" {
			answered[m.ToolCallID] = true
		}
	}
	var missing []string
	for _, m := range msgs[last+1:] {
		if m.Role != "assistant" {
			continue
		}
		for _, tc := range m.ToolCalls {
			c.calls = append(c.calls, tc.Function.Name)
			if !answered[tc.ID] {
				missing = append(missing, tc.ID)
			}
		}
	}
	if len(missing) > 0 {
		return c, badRequest(codeInvalidRequest, "messages",
			"an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; these tool_call_ids have none: %s",
			strings.Join(missing, ", "))
	}
	return c, nil
}

// plan is a script cut into segments.
type plan struct {
	script agentscript.Script
	// segments: segment i ends with the call calls[i]; the last segment ends
	// the script (it may be empty).
	segments [][]agentscript.Directive
	calls    []string
}

// callName is the tool a call-making directive calls, "" for other
// directives.
func callName(d agentscript.Directive) string {
	switch d.Kind {
	case agentscript.Tool:
		return d.Name
	case agentscript.Step:
		return StepTool
	case agentscript.Ask:
		return AskTool
	}
	return ""
}

// newPlan parses the script and checks that a model can follow it with the
// tools the request offers.
func newPlan(prompt string, offered map[string]bool) (*plan, *apiError) {
	script, err := agentscript.Parse(prompt)
	if err != nil {
		return nil, badRequest(codeScriptError, "messages", "the last user message is an agent script that does not parse: %v", err)
	}
	p := &plan{script: script}
	var seg []agentscript.Directive
	for i, d := range script.Directives {
		seg = append(seg, d)
		if err := p.check(i, offered); err != nil {
			return nil, err
		}
		if name := callName(d); name != "" {
			p.segments = append(p.segments, seg)
			p.calls = append(p.calls, name)
			seg = nil
		}
	}
	p.segments = append(p.segments, seg)
	return p, nil
}

// check refuses a directive that a model cannot express with this request.
func (p *plan) check(i int, offered map[string]bool) *apiError {
	d := p.script.Directives[i]
	switch d.Kind {
	case agentscript.Step, agentscript.Ask:
		name := callName(d)
		if !offered[name] {
			return badRequest(codeScriptError, "tools",
				"@%s (line %d) cannot be expressed by a model: %s are produced by the service itself, not by its model. "+
					"A service that lets its model trigger them offers a tool named %s; this request does not",
				d.Kind, d.Line, map[agentscript.Kind]string{agentscript.Step: "steps", agentscript.Ask: "prompts for user input (OAuth logins)"}[d.Kind], name)
		}
	case agentscript.ToolInput:
		// A model composes the arguments of a call it then makes: the next
		// call-making directive must be that @tool.
		for _, next := range p.script.Directives[i+1:] {
			if name := callName(next); name != "" {
				if next.Kind == agentscript.Tool && next.Name == d.Name {
					return nil
				}
				break
			}
		}
		return badRequest(codeScriptError, "messages",
			"@toolinput %s (line %d) must be followed by @tool %s before any other call: a model streams the arguments of the call it makes",
			d.Name, d.Line, d.Name)
	}
	return nil
}

// notOffered is the error of a @tool or @toolinput whose tool the request
// does not offer. Which tools a run has is the service's business (scopes,
// modes), so this is found where the call comes, as an agent would find it,
// not before the script starts.
func notOffered(d agentscript.Directive, offered map[string]bool) *apiError {
	if offered[d.Name] {
		return nil
	}
	return badRequest(codeScriptError, "tools", "@%s %s (line %d): the request offers no tool named %q (it offers: %s)",
		d.Kind, d.Name, d.Line, d.Name, offeredList(offered))
}

// segmentFor returns the segment that answers a conversation holding the
// given calls, after checking that those calls are the script's.
func (p *plan) segmentFor(calls []string) ([]agentscript.Directive, *apiError) {
	if len(calls) >= len(p.segments) {
		return nil, badRequest(codeOffScript, "messages",
			"the conversation does not fit the script: the script makes %d tool calls and the conversation already holds %d",
			len(p.calls), len(calls))
	}
	for i, name := range calls {
		if name != p.calls[i] {
			return nil, badRequest(codeOffScript, "messages",
				"the conversation does not fit the script: tool call %d is %q, the script's call %d is %q",
				i+1, name, i+1, p.calls[i])
		}
	}
	return p.segments[len(calls)], nil
}

// offeredList names the offered tools for an error message.
func offeredList(offered map[string]bool) string {
	var names []string
	for n := range offered {
		names = append(names, n)
	}
	if len(names) == 0 {
		return "none"
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// StepArgs are the arguments of a call to StepTool, by which the model
// server expresses @step.
type StepArgs struct {
	Description string `json:"description"`
}

// AskArgs are the arguments of a call to AskTool, by which the model server
// expresses @ask.
type AskArgs struct {
	Message   string   `json:"message"`
	Fields    []string `json:"fields"`
	Sensitive bool     `json:"sensitive"`
}

// serviceCallArgs renders the arguments of a @step or @ask call.
func serviceCallArgs(d agentscript.Directive) string {
	var v any
	switch d.Kind {
	case agentscript.Step:
		v = StepArgs{Description: d.Text}
	case agentscript.Ask:
		fields := d.Fields
		if fields == nil {
			fields = []string{}
		}
		v = AskArgs{Message: d.Text, Fields: fields, Sensitive: d.Sensitive}
	}
	b, _ := json.Marshal(v)
	return string(b)
}
