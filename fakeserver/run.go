package fakeserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/invokeconf/invokeconf/agentscript"
)

// Event is the spec's event object (Resources: Event object). The
// always-available fields are always written; the richer ones only when set,
// and at most one of them per event (EVT-04).
type Event struct {
	Content     string `json:"content"`
	ContentID   string `json:"contentID,omitempty"`
	RunID       string `json:"runID"`
	ThreadID    string `json:"threadID"`
	RunComplete bool   `json:"runComplete"`
	Error       string `json:"error,omitempty"`
	Time        stamp  `json:"time"`

	WaitingOnModel bool       `json:"waitingOnModel,omitempty"`
	ToolInput      *ToolInput `json:"toolInput,omitempty"`
	ToolCall       *ToolCall  `json:"toolCall,omitempty"`
	Step           *Step      `json:"step,omitempty"`
	Prompt         *Prompt    `json:"prompt,omitempty"`
	Input          string     `json:"input,omitempty"`
	ReplayComplete bool       `json:"replayComplete,omitempty"`
	Username       string     `json:"username,omitempty"`

	// Notice is no member of the spec's: only the mode-removal-notice
	// defect sets it.
	Notice string `json:"notice,omitempty"`
}

// stamp is an event's time. It is formatted (RFC 3339, UTC) only when the
// event is encoded: a plain-text answer never shows it. The zero stamp
// encodes as "".
type stamp time.Time

// MarshalText formats the stamp.
func (t stamp) MarshalText() ([]byte, error) {
	if time.Time(t).IsZero() {
		return nil, nil
	}
	return t.appendText(make([]byte, 0, len(time.RFC3339Nano))), nil
}

// appendText appends the stamp as MarshalText writes it: RFC 3339 with the
// nanoseconds' trailing zeros left out, as time.RFC3339Nano; a UTC stamp
// (every event's) without going through time's layout interpreter.
func (t stamp) appendText(b []byte) []byte {
	tt := time.Time(t)
	switch {
	case tt.IsZero():
		return b
	case tt.Location() != time.UTC:
		return tt.AppendFormat(b, time.RFC3339Nano)
	}
	year, month, day := tt.Date()
	if year < 0 || year > 9999 {
		return tt.AppendFormat(b, time.RFC3339Nano)
	}
	hour, min, sec := tt.Clock()
	b = appendDigits(b, year, 4)
	b = append(b, '-')
	b = appendDigits(b, int(month), 2)
	b = append(b, '-')
	b = appendDigits(b, day, 2)
	b = append(b, 'T')
	b = appendDigits(b, hour, 2)
	b = append(b, ':')
	b = appendDigits(b, min, 2)
	b = append(b, ':')
	b = appendDigits(b, sec, 2)
	if ns := tt.Nanosecond(); ns != 0 {
		digits := 9
		for ns%10 == 0 {
			ns /= 10
			digits--
		}
		b = append(b, '.')
		b = appendDigits(b, ns, digits)
	}
	return append(b, 'Z')
}

// appendDigits appends n, 0 <= n, in exactly width digits.
func appendDigits(b []byte, n, width int) []byte {
	var d [9]byte
	for i := width - 1; i >= 0; i-- {
		d[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, d[:width]...)
}

// UnmarshalText reads what MarshalText writes.
func (t *stamp) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*t = stamp{}
		return nil
	}
	v, err := time.Parse(time.RFC3339Nano, string(b))
	*t = stamp(v)
	return err
}

// ToolInput is the richer field of an event whose model composes tool
// arguments.
type ToolInput struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input,omitempty"`
}

// ToolCall is the richer field of a tool invocation; clients read Name.
type ToolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Step is the richer field of a step change; clients read Description.
type Step struct {
	Description string `json:"description"`
}

// Prompt is the richer field of a request for user input.
type Prompt struct {
	Fields    []string `json:"fields"`
	Message   string   `json:"message"`
	Sensitive bool     `json:"sensitive"`
}

// run is one run of an agent on a thread. Its event log only grows; readers
// wait on changed, which is closed on every append. It is made only when a
// reader is about to wait: most appends have no one waiting.
type run struct {
	id     string
	thread *thread
	tools  []string
	cancel context.CancelFunc
	size   int64 // what the store counts the run as keeping (store.addRun)
	// keepOnDisconnect: the run goes on when its client goes away (the
	// project-disconnect-ignored defect, set as the run starts, and
	// disconnect-ignored-plain, set by the plain-text form).
	keepOnDisconnect bool
	// aborted: an abort of its thread cancelled it (ASYNC-06).
	aborted atomic.Bool
	// resumes: the run continues a thread that had runs before it (set
	// before the run starts; read by resumed-toolinput-dropped).
	resumes bool

	mu      sync.Mutex
	events  []Event
	done    bool
	changed chan struct{}
	// watchers are called, once each, at the run's next change (onChange).
	watchers []func()
}

// snapshot returns the events from index from on, whether the run is done,
// and a channel closed at the next change. The events are a view of the log,
// not a copy: the log only grows and its events never change, and the view's
// capacity ends at its length, so a later append never writes into it.
// Callers must not change the events.
func (r *run) snapshot(from int) ([]Event, bool, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var evs []Event
	if n := len(r.events); from < n {
		evs = r.events[from:n:n]
	}
	return evs, r.done, r.changedLocked()
}

// changedLocked returns a channel closed at the run's next change (closed
// already when the run is done); the caller holds r.mu.
func (r *run) changedLocked() <-chan struct{} {
	if r.done {
		return closedChan
	}
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return r.changed
}

// notifyLocked wakes the readers waiting for a change; the caller holds r.mu.
func (r *run) notifyLocked() {
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
	for _, f := range r.watchers {
		f()
	}
	r.watchers = nil
}

// since is snapshot without the channel: a reader that waits with onChange
// needs none.
func (r *run) since(from int) ([]Event, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.events); from < n {
		return r.events[from:n:n], r.done
	}
	return nil, r.done
}

// onChange arranges for f to be called once at the run's next change, unless
// the run is done or has events from index next on already: then it reports
// false and f is not kept. f is called with r.mu held, so it must only start
// work elsewhere (it may not touch the run). A waiter that keeps no
// goroutine waits this way.
func (r *run) onChange(next int, f func()) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done || len(r.events) > next {
		return false
	}
	r.watchers = append(r.watchers, f)
	return true
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (r *run) isDone() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

func (r *run) append(ev Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.appendLocked(ev)
}

// appendLocked appends an event; the caller holds r.mu.
func (r *run) appendLocked(ev Event) {
	ev.RunID, ev.ThreadID = r.id, r.thread.id
	ev.Time = stamp(time.Now().UTC())
	r.events = append(r.events, ev)
	r.notifyLocked()
}

// wait blocks until the run is done or ctx ends.
func (r *run) wait(ctx context.Context) bool {
	for {
		_, done, ch := r.snapshot(0)
		if done {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// startRun creates a run on the thread, with the events first given, and
// starts the agent on the prompt; resumed says whether the thread had runs
// before. The run lives on the server's context: a synchronous handler
// cancels it when its client goes away (FMT-08), an async run outlives its
// request. A run that cannot wait (quickRun) is played at once, on the
// caller's goroutine: it is over before anyone could tell the difference.
func (s *view) startRun(t *thread, k *apiKey, prompt string, tools []string, first ...Event) (r *run, resumed bool) {
	// The log starts with room for an echo's events (input, username,
	// content, end), or a script's first two, so that an idle run holds no
	// more than it needs.
	quick := s.quickRun(prompt)
	room := 2
	if quick {
		room = 4 + len(first)
	}
	r = &run{id: s.newRunID(), thread: t, tools: tools, events: make([]Event, 0, room)}
	// A quick run is over before anyone could cancel it: it needs no context
	// of its own.
	ctx := s.ctx
	if quick {
		r.cancel = noCancel
	} else {
		ctx, r.cancel = s.runContext(tools) // research.go: the research run-time cap
	}
	s.st.mu.Lock()
	resumed = len(t.runs) > 0
	r.resumes = resumed
	s.st.addRun(t, r, len(prompt))
	if s.defect(defLastrunAtStart) {
		t.lastCompleted = r // Defect: reported as completed as soon as it starts.
	}
	s.st.mu.Unlock()
	for _, ev := range first {
		r.append(ev)
	}
	if quick {
		s.echo(r, k, prompt)
	} else {
		go s.execute(ctx, r, k, prompt)
	}
	return r, resumed
}

// noCancel is the cancel function of a run that has nothing to cancel.
func noCancel() {}

// echo plays a quick run (quickRun) at once, as execute would have the
// in-process model play it, without the turn it builds: the answer to a
// prompt that is no agent script is one content event holding the prompt,
// the first of its content stream, and none of the deviations execute and
// the emitter put around a turn changes such a run (they hold back, drop or
// fold signals, prompts, steps and pauses; content-cumulative repeats the
// content so far, which is this content alone). TestEchoIsTheModelsTurn
// holds the two together.
func (s *view) echo(r *run, k *apiKey, prompt string) {
	prompt = s.introduce(r, k, prompt)
	if s.ctx.Err() != nil {
		r.append(Event{Error: stopped(s.ctx).Error()}) // the server is closing
	} else {
		r.append(Event{Content: prompt, ContentID: newID("cnt")})
	}
	s.finish(r)
}

// introduce appends the events that open every run (its input and who
// triggered it) and returns the prompt as the model reads it.
func (s *view) introduce(r *run, k *apiKey, prompt string) string {
	if !s.variant(varNoInputUsername) {
		r.append(Event{Input: prompt})
		r.append(Event{Username: k.user.name})
	}
	if s.defect(defPromptTrimmed) {
		prompt = strings.TrimSpace(prompt)
	}
	return prompt
}

// quickRun reports whether a run of the prompt ends without ever waiting:
// an echo prompt (agentscript) played by the in-process model, which emits
// its one content event and ends.
func (s *view) quickRun(prompt string) bool {
	if _, ok := s.model.(scriptModel); !ok {
		return false
	}
	if s.defect(defPromptTrimmed) {
		prompt = strings.TrimSpace(prompt) // as execute hands it to the model
	}
	return !agentscript.IsScript(prompt)
}

// execute runs the agent: its model (Config.ModelURL: a remote
// OpenAI-compatible model; otherwise the in-process script interpreter)
// plays the turn, and the events it makes are appended to the run. A model
// that can wait without a goroutine (waitingModel) is left to end the run
// itself: execute then returns at the turn's first wait.
func (s *view) execute(ctx context.Context, r *run, k *apiKey, prompt string) {
	prompt = s.introduce(r, k, prompt)
	t, flush := s.reorder(s.turn(r, prompt))
	t, settle := s.whenSlow(t)
	t = s.waitAfterPrompt(ctx, t)
	if s.variant(varPausesOverrun) {
		t.Overrun = pauseOverrun
	}
	end := func(err error) {
		defer r.cancel()
		settle()
		flush()
		if err != nil {
			r.append(Event{Error: err.Error()})
		}
		s.finish(r)
	}
	if m, ok := s.model.(waitingModel); ok {
		m.PlayThen(ctx, t, end)
		return
	}
	end(s.model.Play(ctx, t))
}

// waitingModel is a Model that waits without holding a goroutine: PlayThen
// plays the turn, returns as soon as the turn waits, and calls end once, with
// what Play would return, when the turn is over.
type waitingModel interface {
	PlayThen(ctx context.Context, t Turn, end func(error))
}

// reorder serves the ordering defects: waitingOnModel held back until after
// the model's first content, toolInput until after its toolCall. flush emits
// what is still held when the model is done.
func (s *view) reorder(t Turn) (Turn, func()) {
	late := s.defect(defWaitingLate) || s.defect(defToolinputLate)
	if !late {
		return t, func() {}
	}
	var mu sync.Mutex
	var held []Event
	emit, call := t.Emit, t.Call
	release := func() {
		mu.Lock()
		evs := held
		held = nil
		mu.Unlock()
		for _, ev := range evs {
			emit(ev)
		}
	}
	t.Emit = func(ev Event) {
		if (ev.WaitingOnModel && s.defect(defWaitingLate)) || (ev.ToolInput != nil && s.defect(defToolinputLate)) {
			mu.Lock()
			held = append(held, ev)
			mu.Unlock()
			return
		}
		emit(ev)
		if ev.Content != "" && s.defect(defWaitingLate) {
			release()
		}
	}
	t.Call = func(ctx context.Context, name string, args json.RawMessage) (string, error) {
		out, err := call(ctx, name, args)
		if s.defect(defToolinputLate) {
			release()
		}
		return out, err
	}
	return t, release
}

// finish appends the final event (SSE-03), ends the run and records it as
// the thread's last completed one, all at once: a reader never sees the
// final event of a run that is not done (it would flush an answer about to
// end anyway), and a client that has read the final event finds the run as
// its thread's last.
func (s *view) finish(r *run) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.thread.lastCompleted = r
	r.thread.running--
	r.appendLocked(Event{RunComplete: true})
	r.done = true
}

// waitAfterPrompt serves the prompt-waits variant: after a prompt event the
// run waits for input that never comes, until it is cancelled.
func (s *view) waitAfterPrompt(ctx context.Context, t Turn) Turn {
	if !s.variant(varPromptWaits) {
		return t
	}
	emit := t.Emit
	t.Emit = func(ev Event) {
		emit(ev)
		if ev.Prompt != nil {
			<-ctx.Done()
		}
	}
	return t
}

// pauseOverrun serves the pauses-overrun variant: a pause of up to 2 s
// lasts half as long again, as an agent slower than its script (longer
// pauses are left alone, so the keepalive scenario does not grow).
func pauseOverrun(d time.Duration) time.Duration {
	if d > 2*time.Second {
		return 0
	}
	return d / 2
}

// slowAfter is how long the model must stay silent after waitingOnModel or
// toolInput for the signals-when-slow variant to send it.
const slowAfter = 100 * time.Millisecond

// whenSlow serves the signals-when-slow variant: waitingOnModel and toolInput
// are sent only when the model then stays silent for slowAfter, as a server
// that signals only a wait a user would notice. settle drops what is held.
func (s *view) whenSlow(t Turn) (Turn, func()) {
	if !s.variant(varSignalsWhenSlow) {
		return t, func() {}
	}
	var mu sync.Mutex
	var timer *time.Timer
	drop := func() {
		mu.Lock()
		defer mu.Unlock()
		if timer != nil {
			timer.Stop()
			timer = nil
		}
	}
	emit := t.Emit
	t.Emit = func(ev Event) {
		drop()
		if !ev.WaitingOnModel && ev.ToolInput == nil {
			emit(ev)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		var mine *time.Timer
		mine = time.AfterFunc(slowAfter, func() {
			mu.Lock()
			defer mu.Unlock() // held while emitting: the next event waits for it
			if timer == mine {
				timer = nil
				emit(ev)
			}
		})
		timer = mine
	}
	call := t.Call
	t.Call = func(ctx context.Context, name string, args json.RawMessage) (string, error) {
		drop()
		return call(ctx, name, args)
	}
	return t, drop
}

// scriptModel is the in-process model: it interprets the prompt as an
// agent script (package agentscript).
type scriptModel struct{}

// Play implements Model.
func (m scriptModel) Play(ctx context.Context, t Turn) error {
	ended := make(chan error, 1)
	m.PlayThen(ctx, t, func(err error) { ended <- err })
	return <-ended
}

// PlayThen implements waitingModel: a pause waits on a timer, and the script
// goes on from the timer's own goroutine, so an idle run holds no goroutine.
func (scriptModel) PlayThen(ctx context.Context, t Turn, end func(error)) {
	script, err := agentscript.Parse(t.Prompt)
	if err != nil {
		end(err)
		return
	}
	interpret(ctx, t, script.Directives, end)
}

// interpret plays directives in order, then calls end; at a pause it returns,
// and the rest is played when the pause is over (or ended when ctx is).
func interpret(ctx context.Context, t Turn, directives []agentscript.Directive, end func(error)) {
	for i, d := range directives {
		if err := ctx.Err(); err != nil {
			end(stopped(ctx))
			return
		}
		switch d.Kind {
		case agentscript.Say:
			t.Emit(Event{Content: d.Text})
		case agentscript.Tools:
			t.Emit(Event{Content: agentscript.FormatTools(t.Tools)})
		case agentscript.Model:
			t.Emit(Event{Content: agentscript.FormatModel(t.modelName())}) // PROJ-06
		case agentscript.Pause:
			rest := directives[i+1:]
			dur := d.Duration
			if t.Overrun != nil {
				dur += t.Overrun(dur)
			}
			afterPause(ctx, dur, func() { interpret(ctx, t, rest, end) }, func() { end(stopped(ctx)) })
			return
		case agentscript.Waiting:
			t.Emit(Event{WaitingOnModel: true})
		case agentscript.ToolInput:
			if !contains(t.Tools, d.Name) {
				end(fmt.Errorf("tool %q is not available in this run", d.Name))
				return
			}
			t.Emit(Event{ToolInput: &ToolInput{Name: d.Name, Input: d.Args}})
		case agentscript.Tool:
			if _, err := t.Call(ctx, d.Name, d.Args); err != nil {
				end(err)
				return
			}
		case agentscript.Step:
			t.Emit(Event{Step: &Step{Description: d.Text}})
		case agentscript.Ask:
			t.Emit(askEvent(d.Text, d.Fields, d.Sensitive))
		case agentscript.Fail:
			end(fmt.Errorf("%s", d.Text))
			return
		}
	}
	end(nil)
}

// afterPause calls next once d has passed, or stopped if ctx ends first;
// exactly one of them is called, on a goroutine of its own. Nothing waits in
// between: a timer and a context callback are all a pause holds.
func afterPause(ctx context.Context, d time.Duration, next, stopped func()) {
	p := &pause{next: next, stopped: stopped}
	p.mu.Lock() // until both callbacks exist, so that each can reach the other
	defer p.mu.Unlock()
	p.timer = time.AfterFunc(d, p.elapsed)
	p.stopCallback = context.AfterFunc(ctx, p.cancelled)
}

// pause is a pause in progress (afterPause).
type pause struct {
	mu            sync.Mutex
	claimed       bool
	next, stopped func()
	timer         *time.Timer
	stopCallback  func() bool
}

// claim reports whether the caller is the first of the two callbacks.
func (p *pause) claim() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	first := !p.claimed
	p.claimed = true
	return first
}

func (p *pause) elapsed() {
	if p.claim() {
		p.stopCallback() // forget the context callback: it is never needed now
		p.next()
	}
}

func (p *pause) cancelled() {
	if p.claim() {
		p.timer.Stop()
		p.stopped()
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
