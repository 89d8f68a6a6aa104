package fakeserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Model is what the reference server's agent runs on. Play plays one turn of
// a run: it reads the prompt and makes the agent act through t.Emit and
// t.Call; an error fails the run (it becomes the run's error event).
//
// Two models exist: scriptModel interprets the prompt in process (the
// default), remoteModel asks an OpenAI-compatible chat-completions API such
// as `invokeconf model` (Config.ModelURL). The runtime around them (content
// streams, tools, the event defects) is the same, so the events of a run do
// not depend on which one plays it.
type Model interface {
	Play(ctx context.Context, t Turn) error
}

// Turn is one run as its model sees it.
type Turn struct {
	// Prompt is the invoke body, verbatim.
	Prompt string
	// Tools are the tools the run has (the agent's, narrowed by scopes).
	Tools []string
	// History returns the thread's earlier turns, oldest first. It is a
	// function because only a remote model reads them: the in-process agent
	// follows the prompt alone.
	History func() []Message
	// ModelSetting is the model the run's project selects (PROJ-06); empty
	// outside a project, where the agent's own model applies.
	ModelSetting string
	// Emit appends an event to the run. Safe for concurrent use.
	Emit func(Event)
	// Call runs one of the run's tools: it emits the toolCall event and
	// returns the tool's result.
	Call func(ctx context.Context, name string, args json.RawMessage) (string, error)
	// Overrun, when set, is how much longer than stated a pause of the
	// agent script lasts (the pauses-overrun variant).
	Overrun func(time.Duration) time.Duration
}

// Message is one message of a thread's history.
type Message struct {
	Role    string // "user" or "assistant"
	Content string
}

// modelName is the model the turn runs on, as @model reports it.
func (t Turn) modelName() string {
	if t.ModelSetting != "" {
		return t.ModelSetting
	}
	return AgentModel
}

// turn prepares the turn a model plays for a run.
func (s *view) turn(r *run, prompt string) Turn {
	em := &emitter{s: s, r: r}
	return Turn{
		Prompt:       prompt,
		Tools:        r.tools,
		History:      func() []Message { return s.history(r) },
		ModelSetting: s.projectModel(r),
		Emit:         em.emit,
		Call: func(ctx context.Context, name string, args json.RawMessage) (string, error) {
			return s.callTool(ctx, r, em.emit, name, args)
		},
	}
}

// emitter appends a model's events to its run. It gives content events the
// ID of their content stream (a stream ends at any richer event) and applies
// the event defects, so that both models show them.
type emitter struct {
	s *view
	r *run

	mu        sync.Mutex
	contentID string
	sofar     string
	// held serves the defects that fold a signal into a later event or
	// send a step late.
	heldWaiting bool
	heldInput   *ToolInput
	heldStep    *Step
	// rnd cuts content for the content-resplit variant.
	rnd *rand.Rand
}

func (e *emitter) emit(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case ev.WaitingOnModel && e.s.defect(defWaitingDropped):
		return
	case ev.ToolInput != nil && (e.s.defect(defToolinputDropped) || e.s.defect(defResumedToolinputDropped) && e.r.resumes):
		return
	case ev.Prompt != nil && e.s.defect(defProjectPromptUnflagged) && e.r.thread.project != nil:
		p := *ev.Prompt
		p.Sensitive = false
		ev.Prompt = &p
	case ev.ToolCall != nil && e.s.defect(defRicherMerged):
		ev.Step = &Step{Description: "calling " + ev.ToolCall.Name}
	}
	if !e.fold(&ev) {
		return
	}
	step := e.heldStep
	e.heldStep = nil
	e.append(ev)
	if step != nil {
		e.append(Event{Step: step}) // Defect: after an event that belongs to it.
	}
}

// fold serves the defects waiting-with-content, toolinput-with-toolcall and
// step-after-content: it holds a signal for the event it folds into, or a
// step for after the next event; false when ev is held.
func (e *emitter) fold(ev *Event) bool {
	switch {
	case ev.WaitingOnModel && e.s.defect(defWaitingWithContent):
		e.heldWaiting = true
		return false
	case ev.ToolInput != nil && e.s.defect(defToolinputWithToolcall):
		e.heldInput = ev.ToolInput
		return false
	case ev.Step != nil && e.s.defect(defStepAfterContent) && !ev.WaitingOnModel:
		if e.heldStep != nil {
			e.append(Event{Step: e.heldStep})
		}
		e.heldStep = ev.Step
		return false
	case ev.Content != "" && e.heldWaiting:
		ev.WaitingOnModel, e.heldWaiting = true, false
	case ev.ToolCall != nil && e.heldInput != nil:
		ev.ToolInput, e.heldInput = e.heldInput, nil
	case ev.Prompt != nil && e.s.defect(defPromptFieldsGeneric):
		p := *ev.Prompt
		p.Fields = []string{"value"}
		ev.Prompt = &p
	}
	return true
}

// append adds a model's event to the run; e.mu is held.
func (e *emitter) append(ev Event) {
	if hasRicher(ev) {
		e.contentID = ""
		e.r.append(ev)
		return
	}
	if e.contentID == "" {
		e.contentID = newID("cnt")
	}
	ev.ContentID = e.contentID
	e.sofar += ev.Content
	if e.s.defect(defContentCumulative) {
		ev.Content = e.sofar
	}
	if e.s.variant(varContentResplit) && ev.Content != "" {
		for _, piece := range e.resplit(ev.Content) {
			p := ev
			p.Content = piece
			e.r.append(p)
		}
		return
	}
	e.r.append(ev)
}

// resplit cuts a content event's text at random points between its
// characters (variant content-resplit), from a source seeded per run, so a
// run splits the same way each time.
func (e *emitter) resplit(text string) []string {
	if e.rnd == nil {
		e.rnd = rand.New(rand.NewPCG(resplitSeed, uint64(len(e.r.id))))
	}
	var out []string
	for text != "" {
		n := 1 + e.rnd.IntN(8) // characters in this piece
		cut := 0
		for i := 0; i < n && cut < len(text); i++ {
			_, size := utf8.DecodeRuneInString(text[cut:])
			cut += size
		}
		out = append(out, text[:cut])
		text = text[cut:]
	}
	return out
}

// resplitSeed seeds the content-resplit variant's cuts.
const resplitSeed = 20261127

// hasRicher reports whether a model's event sets a richer field.
func hasRicher(ev Event) bool {
	return ev.WaitingOnModel || ev.ToolInput != nil || ev.ToolCall != nil || ev.Step != nil || ev.Prompt != nil
}

// askEvent is the prompt event of a request for user input (EVT-07).
func askEvent(message string, fields []string, sensitive bool) Event {
	if fields == nil {
		fields = []string{}
	}
	return Event{Prompt: &Prompt{Fields: fields, Message: message, Sensitive: sensitive}}
}

// callTool runs one of the run's tools for its model: a tool the run lacks
// fails the run; otherwise the toolCall event (EVT-05), then the tool. The
// reference server's tools do nothing and answer {"ok":true}, except the
// research tool (research.go).
func (s *view) callTool(ctx context.Context, r *run, emit func(Event), name string, args json.RawMessage) (string, error) {
	if !contains(r.tools, name) {
		return "", fmt.Errorf("tool %q is not available in this run", name)
	}
	if !json.Valid(args) {
		args, _ = json.Marshal(string(args)) // a remote model's arguments may be any text
	}
	emit(Event{ToolCall: &ToolCall{Name: name, Arguments: args}})
	return s.useTool(ctx, emit, name, args)
}

// history returns the thread's turns completed before r: each run's prompt
// and answer (its content).
func (s *view) history(r *run) []Message {
	s.st.mu.Lock()
	runs := append([]*run(nil), r.thread.runs...)
	s.st.mu.Unlock()
	var h []Message
	for _, prev := range runs {
		if prev == r {
			break
		}
		evs, done, _ := prev.snapshot(0)
		if !done {
			continue
		}
		var prompt string
		var answer strings.Builder
		for _, ev := range evs {
			switch {
			case ev.Input != "":
				prompt = ev.Input
			case !hasRicher(ev):
				answer.WriteString(ev.Content)
			}
		}
		h = append(h, Message{Role: "user", Content: prompt}, Message{Role: "assistant", Content: answer.String()})
	}
	return h
}
