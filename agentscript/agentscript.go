// Package agentscript defines the agent script language: the contract by which
// a prompt tells a scripted agent what to do.
//
// A prompt whose first line does not open with a directive is an echo script:
// the agent answers with the prompt, byte for byte. That is how "the body is
// the prompt, verbatim" is observed from outside.
//
// A prompt whose first line opens with a directive ("@" followed by a known
// directive name) is a script: one directive per line, run in order. Blank
// lines and lines starting with "#" are ignored. Text arguments are taken
// verbatim up to the end of the line; a text argument that starts with a
// double quote is a Go string literal, so "\n" and surrounding spaces can be
// written.
//
//	@say TEXT                          content event with TEXT
//	@pause DURATION                    stay quiet for DURATION (Go syntax: 800ms, 21s)
//	@waiting                           waitingOnModel event
//	@toolinput NAME [JSON]             toolInput event for tool NAME
//	@tool NAME [JSON]                  toolCall event: call tool NAME with JSON arguments
//	@tools                             content event listing the tools this run has (see FormatTools)
//	@model                             content event naming the model this run uses (see FormatModel)
//	@step DESCRIPTION                  step event
//	@ask [sensitive] [fields=a,b] MSG  prompt event (an OAuth-style request for input)
//	@fail MESSAGE                      the run fails with MESSAGE
//
// Time is bounded: one @pause lasts at most MaxPause, and the pauses of one
// script add up to at most MaxScriptPause; a script beyond either is refused
// when it is parsed. The other directives take no time of their own (a
// research tool call has its own cap), so a scripted run ends within about
// MaxScriptPause.
//
// @tools and @model make a run's set-up visible: the tools it really has
// (narrowed by X-SVC-Scoped-Tools, added to by run modes, gated by credential
// scopes and the project) and the model its settings select (a project's
// model settings apply only inside the project). A scripted model server
// answers them from the tools and the model name its chat-completions request
// carries.
//
// The same language is spoken by the fake reference server's agent and by the
// scripted model server (package modelserver, `invokeconf model`), so one
// scenario can drive either. docs/vendor-guide.md says, directive by
// directive, what each of them does.
package agentscript

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Kind names a directive.
type Kind string

// The directives of the language.
const (
	Say       Kind = "say"
	Pause     Kind = "pause"
	Waiting   Kind = "waiting"
	ToolInput Kind = "toolinput"
	Tool      Kind = "tool"
	Tools     Kind = "tools"
	Model     Kind = "model"
	Step      Kind = "step"
	Ask       Kind = "ask"
	Fail      Kind = "fail"
)

// MaxPause bounds a single pause so that a typo cannot hang a run for hours.
const MaxPause = 10 * time.Minute

// MaxScriptPause bounds the pauses of one script together, so that many
// pauses cannot hold a run longer than one may.
const MaxScriptPause = 10 * time.Minute

var kinds = map[Kind]bool{Say: true, Pause: true, Waiting: true, ToolInput: true, Tool: true,
	Tools: true, Model: true, Step: true, Ask: true, Fail: true}

// Kinds lists every directive of the language, in the order of the package
// documentation.
func Kinds() []Kind {
	return []Kind{Say, Pause, Waiting, ToolInput, Tool, Tools, Model, Step, Ask, Fail}
}

// Directive is one parsed line of a script.
type Directive struct {
	Kind      Kind
	Line      int             // 1-based line in the prompt
	Text      string          // say, step, ask (the message), fail
	Duration  time.Duration   // pause
	Name      string          // tool, toolinput
	Args      json.RawMessage // tool, toolinput; "{}" when not given
	Fields    []string        // ask
	Sensitive bool            // ask
}

// Script is a parsed prompt.
type Script struct {
	// Echo is true when the prompt held no directives; Directives is then a
	// single Say of the whole prompt.
	Echo       bool
	Directives []Directive
}

// Pauses returns the time the script's pauses add up to: the least a run
// of it lasts.
func (s Script) Pauses() time.Duration {
	var d time.Duration
	for _, dir := range s.Directives {
		if dir.Kind == Pause {
			d += dir.Duration
		}
	}
	return d
}

// IsScript reports whether the prompt opens with a directive line.
func IsScript(prompt string) bool {
	first, _, _ := strings.Cut(prompt, "\n")
	k, _ := splitDirective(strings.TrimRight(first, "\r"))
	return kinds[k]
}

// Parse turns a prompt into a script. A prompt that does not open with a
// directive line parses to an echo script and never fails.
func Parse(prompt string) (Script, error) {
	if !IsScript(prompt) {
		return Script{Echo: true, Directives: []Directive{{Kind: Say, Line: 1, Text: prompt}}}, nil
	}
	var s Script
	var paused time.Duration
	for i, raw := range strings.Split(prompt, "\n") {
		line := strings.TrimSpace(strings.TrimRight(raw, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		d, err := parseLine(line)
		if err != nil {
			return Script{}, fmt.Errorf("agent script line %d: %w", i+1, err)
		}
		d.Line = i + 1
		if paused += d.Duration; paused > MaxScriptPause {
			return Script{}, fmt.Errorf("agent script line %d: the pauses add up to more than %s", d.Line, MaxScriptPause)
		}
		s.Directives = append(s.Directives, d)
	}
	return s, nil
}

// splitDirective splits "@name rest" into its name and the rest.
func splitDirective(line string) (Kind, string) {
	if !strings.HasPrefix(line, "@") {
		return "", ""
	}
	name, rest, _ := strings.Cut(line[1:], " ")
	return Kind(strings.ToLower(name)), rest
}

func parseLine(line string) (Directive, error) {
	k, rest := splitDirective(line)
	if !kinds[k] {
		return Directive{}, fmt.Errorf("unknown directive %q (want one of @say @pause @waiting @toolinput @tool @tools @model @step @ask @fail)", line)
	}
	d := Directive{Kind: k}
	switch k {
	case Say, Step, Fail:
		text, err := parseText(rest)
		if err != nil {
			return d, err
		}
		d.Text = text
	case Pause:
		dur, err := time.ParseDuration(strings.TrimSpace(rest))
		if err != nil {
			return d, fmt.Errorf("@pause wants a duration such as 800ms or 21s: %w", err)
		}
		if dur < 0 || dur > MaxPause {
			return d, fmt.Errorf("@pause %s is outside 0..%s", dur, MaxPause)
		}
		d.Duration = dur
	case Waiting, Tools, Model:
		if strings.TrimSpace(rest) != "" {
			return d, fmt.Errorf("@%s takes no argument", k)
		}
	case Tool, ToolInput:
		name, args, _ := strings.Cut(strings.TrimSpace(rest), " ")
		if name == "" {
			return d, fmt.Errorf("@%s wants a tool name", k)
		}
		d.Name = name
		d.Args = json.RawMessage("{}")
		if args = strings.TrimSpace(args); args != "" {
			if !json.Valid([]byte(args)) {
				return d, fmt.Errorf("@%s %s: arguments are not valid JSON", k, name)
			}
			d.Args = json.RawMessage(args)
		}
	case Ask:
		return parseAsk(rest)
	}
	return d, nil
}

func parseAsk(rest string) (Directive, error) {
	d := Directive{Kind: Ask}
	rest = strings.TrimSpace(rest)
	for {
		word, tail, _ := strings.Cut(rest, " ")
		switch {
		case word == "sensitive":
			d.Sensitive = true
		case strings.HasPrefix(word, "fields="):
			for _, f := range strings.Split(strings.TrimPrefix(word, "fields="), ",") {
				if f = strings.TrimSpace(f); f != "" {
					d.Fields = append(d.Fields, f)
				}
			}
		default:
			text, err := parseText(rest)
			if err != nil {
				return d, err
			}
			if text == "" {
				return d, fmt.Errorf("@ask wants a message")
			}
			d.Text = text
			return d, nil
		}
		rest = strings.TrimSpace(tail)
	}
}

func parseText(rest string) (string, error) {
	if strings.HasPrefix(rest, `"`) {
		s, err := strconv.Unquote(strings.TrimSpace(rest))
		if err != nil {
			return "", fmt.Errorf("bad quoted text %s: %w", rest, err)
		}
		return s, nil
	}
	return rest, nil
}

// toolsPrefix opens the content written by @tools.
const toolsPrefix = "tools:"

// FormatTools renders the answer of @tools: "tools:" followed by the sorted,
// comma-separated tool names ("tools:" alone when the run has none).
func FormatTools(names []string) string {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	return toolsPrefix + strings.Join(sorted, ",")
}

// ParseTools reads an answer written by FormatTools out of a run's text,
// which may hold other content before or after it on other lines.
func ParseTools(answer string) ([]string, bool) {
	for _, line := range strings.Split(answer, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, toolsPrefix) {
			continue
		}
		names := []string{}
		for _, n := range strings.Split(strings.TrimPrefix(line, toolsPrefix), ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		return names, true
	}
	return nil, false
}

// modelPrefix opens the content written by @model.
const modelPrefix = "model:"

// FormatModel renders the answer of @model: "model:" followed by the name of
// the model the run uses.
func FormatModel(name string) string { return modelPrefix + name }

// ParseModel reads an answer written by FormatModel out of a run's text,
// which may hold other content before or after it on other lines.
func ParseModel(answer string) (string, bool) {
	for _, line := range strings.Split(answer, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), modelPrefix); ok {
			return strings.TrimSpace(name), true
		}
	}
	return "", false
}
