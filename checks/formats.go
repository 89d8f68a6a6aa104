package checks

import (
	"fmt"
	"strings"
	"time"

	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/traffic"
)

// FlushHold is the plain-text flush bound: "output is flushed at most every
// 500 ms".
const FlushHold = 500 * time.Millisecond

// FlushTolerance is what network and scheduling may add to FlushHold.
const FlushTolerance = 200 * time.Millisecond

var formatChecks = []Check{
	AcceptSSE,
	AcceptJSON,
	AcceptOther,
	AcceptSSELiteral,
	AcceptJSONLiteral,
	PlainFlush,
}

// acceptIs returns x's synchronous invoke with its Accept value, or a Skip.
func acceptOf(x *View) (string, bool, error) {
	if _, err := syncInvoke(x); err != nil {
		return "", false, err
	}
	return accept(x)
}

// AcceptSSE: FMT-01. Accept exactly text/event-stream gives an SSE stream:
// a 2xx answer of media type text/event-stream (any parameters: the spec
// fixes only the Accept value). Frames under another media type are no SSE
// stream to a client: EventSource refuses them. The active steps call it
// before every SSE step. "Live during the run" is LiveSSE's.
var AcceptSSE = Check{Rule: "FMT-01", Spec: "text/event-stream (exactly): SSE stream, live during the run", Judge: acceptSSE}

func acceptSSE(x *View, _ *History) error {
	v, _, err := acceptOf(x)
	if err != nil {
		return err
	}
	if v != "text/event-stream" {
		return skip("Accept is not text/event-stream")
	}
	if err := responseGap(x, "Content-Type"); err != nil {
		return err
	}
	ct := x.Response.Header.Get("Content-Type")
	if traffic.MediaType(ct) != "text/event-stream" {
		return outcome.Failf("the response form for Accept: text/event-stream", "an SSE stream: Content-Type text/event-stream",
			"Content-Type %q, body %s", ct, quote(x.Body()))
	}
	return nil
}

// AcceptJSON: FMT-02. Accept exactly application/json gives one JSON
// envelope {items:[...]} after the run ends: its items are all events of the
// run, so the last is the run's final event, with runComplete true (a
// failed run aside: the spec does not say its last event completes it).
var AcceptJSON = Check{Rule: "FMT-02", Spec: "application/json (exactly): One JSON envelope {items:[...]} after the run ends", Judge: acceptJSON}

func acceptJSON(x *View, _ *History) error {
	v, _, err := acceptOf(x)
	if err != nil {
		return err
	}
	if v != "application/json" {
		return skip("Accept is not application/json")
	}
	b, err := body(x, true)
	if err != nil {
		return err
	}
	items, ok := x.envelopeItems()
	if !ok {
		return outcome.Failf("the response form for Accept: application/json", "one JSON envelope {\"items\":[...]}",
			"%s", quote(b))
	}
	var last eventObject
	for i, it := range items {
		e, ok := it.ev, it.evOK
		if ok && e.failed() {
			return nil
		}
		if i == len(items)-1 {
			last = e // an item that is no event object (EVT-01) completes nothing
		}
	}
	if !last.complete() {
		return outcome.Failf("the JSON envelope", "sent after the run ended: the last item has runComplete true",
			"%s", quote(b))
	}
	return nil
}

// notPlain returns a Failure when x's answer is beyond doubt an SSE stream or
// the JSON envelope instead of plain text.
func notPlain(x *View, accept string) error {
	b, err := body(x, false)
	if err != nil {
		return err
	}
	what := "Accept: " + accept
	if accept == "" {
		what = "no Accept"
	}
	switch {
	case surelySSE(x):
		return outcome.Failf("the response form for "+what, "plain text, not SSE", "an SSE stream: %s", quote(b))
	case x.Response.Body.Complete() && surelyEnvelope(x):
		return outcome.Failf("the response form for "+what, "plain text, not the JSON envelope",
			"the JSON envelope: %s", quote(b))
	}
	return nil
}

// AcceptOther: FMT-03. Any Accept other than the two literal values, or
// none, gives plain text. Only an answer that is surely SSE or the envelope
// fails: plain text may itself look like either.
var AcceptOther = Check{Rule: "FMT-03", Spec: "Anything else, or absent: Plain text: the content of each event concatenated and streamed", Judge: acceptOther}

func acceptOther(x *View, _ *History) error {
	v, present, err := acceptOf(x)
	if err != nil {
		return err
	}
	if AcceptRule(v, present) != "FMT-03" {
		return skip("Accept names an SSE or JSON type, in any case or spacing (FMT-01/02/04/05)")
	}
	return notPlain(x, v)
}

// AcceptRule returns the rule that decides what an Accept value gives: FMT-01
// for exactly text/event-stream, FMT-02 for exactly application/json,
// FMT-04 for another value that names text/event-stream (in any case or
// spacing), FMT-05 for another that names application/json, FMT-03 for
// anything else or none (present false). The active steps name the same
// rule for what a request rests on.
func AcceptRule(v string, present bool) string {
	switch {
	case !present:
		return "FMT-03"
	case v == "text/event-stream":
		return "FMT-01"
	case v == "application/json":
		return "FMT-02"
	case namesLoosely(v, "text/event-stream"):
		return "FMT-04"
	case namesLoosely(v, "application/json"):
		return "FMT-05"
	}
	return "FMT-03"
}

// namesLoosely reports whether an Accept value names a media type once case
// and spaces are set aside: such a value that is not the exact text is the
// literal-matching rule's test case ("compared literally, as a whole").
func namesLoosely(v, mediaType string) bool {
	return strings.Contains(strings.ToLower(strings.Join(strings.Fields(v), "")), mediaType)
}

// AcceptSSELiteral: FMT-04. An Accept that holds text/event-stream but is
// not exactly it gives plain text.
var AcceptSSELiteral = Check{Rule: "FMT-04", Spec: "A value such as text/event-stream, */* is not equal to text/event-stream; it yields the plain-text form, not SSE.", Judge: acceptSSELiteral}

func acceptSSELiteral(x *View, _ *History) error {
	v, _, err := acceptOf(x)
	if err != nil {
		return err
	}
	if AcceptRule(v, true) != "FMT-04" {
		return skip("Accept is exactly text/event-stream or does not name it")
	}
	return notPlain(x, v)
}

// AcceptJSONLiteral: FMT-05. An Accept that holds application/json but is
// not exactly it gives plain text.
var AcceptJSONLiteral = Check{Rule: "FMT-05", Spec: "The same literal matching applies to application/json.", Judge: acceptJSONLiteral}

func acceptJSONLiteral(x *View, _ *History) error {
	v, _, err := acceptOf(x)
	if err != nil {
		return err
	}
	if AcceptRule(v, true) != "FMT-05" {
		return skip("Accept is exactly application/json or does not name it")
	}
	return notPlain(x, v)
}

// fragment is text an agent script produces at one moment.
type fragment struct {
	text string
	at   time.Duration // production time after the first fragment
}

// scriptFragments returns the fragments of a prompt that is an agent script
// of only @say and @pause lines, when it produces more than one.
func scriptFragments(x *View) ([]fragment, bool) {
	s, ok := x.timedScript()
	if !ok || s.fails {
		return nil, false
	}
	return s.frags, len(s.frags) > 1
}

// PlainFlush: FMT-06. Text is held at most FlushHold (plus FlushTolerance).
// Traffic shows when text arrived, not when the service produced it, so
// this decides only on prompts that are agent scripts of @say and @pause
// lines, whose production times the script states: fragment i is produced
// p(i) after the first, and arrives a(i) no earlier than its production
// and no later than limit after it. So a fragment's delay a(i)-p(i) exceeds
// that of any fragment produced after it by at most limit: by more, it was
// held back and sent with later text. The other way round proves nothing:
// an agent whose pauses overrun delays later fragments. Text produced
// steadily also arrives in chunks at most limit apart (steadyGaps).
var PlainFlush = Check{Rule: "FMT-06", Spec: "output is flushed at most every 500 ms", Judge: plainFlush}

func plainFlush(x *View, _ *History) error {
	v, present, err := acceptOf(x)
	if err != nil {
		return err
	}
	if present && (v == "text/event-stream" || v == "application/json") {
		return skip("not the plain-text form")
	}
	if _, err := x.RequestText(); err != nil {
		return err
	}
	frags, ok := scriptFragments(x)
	if !ok {
		return skip("the prompt is not an agent script of @say and @pause lines: traffic does not show when the text was produced")
	}
	if _, err := body(x, true); err != nil {
		return err
	}
	if !x.Response.Body.Timed {
		return untested(NoTimings)
	}
	chunks := chunkPieces(&x.Response.Body)
	arrived, ok := fragmentArrivals(chunks, frags)
	if !ok {
		return skip("the answer is not the script's text")
	}
	limit := FlushHold + FlushTolerance
	var w worst
	steadyGaps(x, frags, chunks, limit, &w)
	// A script's pauses may overrun (a pause is "at least"), which only
	// delays later fragments: so a fragment's delay d may exceed a later
	// one's by at most limit, never the other way round.
	held := 0
	for j := range frags {
		d := func(i int) time.Duration { return arrived[i] - frags[i].at }
		if d(j) > d(held) {
			held = j
			continue
		}
		if gap := d(held) - d(j); gap > limit {
			f := outcome.Failf(fmt.Sprintf("the plain-text fragment %q", frags[held].text),
				fmt.Sprintf("arrival within %s of its production", limit),
				"held at least %s, as %q shows: %s", gap.Round(time.Millisecond), frags[j].text, arrivalList(frags, arrived))
			// The harness reading it late, or (in its process) the
			// server writing it late, would delay it alike.
			w.add(starved(x, arrived[held]-gap, arrived[held], gap-limit), f)
		}
	}
	return w.err()
}

// steadyGaps: text produced steadily (no pause longer than SteadyStep)
// arrives in chunks at most limit apart: a flush timer slower than the
// bound leaves a wider gap. A gap the harness's own lateness could explain
// is excused.
func steadyGaps(x *View, frags []fragment, chunks []piece, limit time.Duration, w *worst) {
	for i := 1; i < len(frags); i++ {
		if frags[i].at-frags[i-1].at > SteadyStep {
			return
		}
	}
	for i := 1; i < len(chunks); i++ {
		if gap := chunks[i].at - chunks[i-1].at; gap > limit {
			f := outcome.Failf("the plain-text flush", fmt.Sprintf("chunks at most %s apart while the script produced text every %s or less", limit, SteadyStep),
				"%s between chunks at +%s and +%s", gap.Round(time.Millisecond), chunks[i-1].at.Round(time.Millisecond), chunks[i].at.Round(time.Millisecond))
			w.add(starved(x, chunks[i-1].at, chunks[i].at, gap-limit), f)
		}
	}
}

// SteadyStep is the longest pause of a script that counts as producing
// text steadily (steadyGaps).
const SteadyStep = 100 * time.Millisecond

// chunkPieces returns a body's chunks as pieces of text.
func chunkPieces(b *traffic.Body) []piece {
	out := make([]piece, 0, len(b.Chunks))
	for _, c := range b.Chunks {
		if len(c.Data) > 0 {
			out = append(out, piece{string(c.Data), c.At})
		}
	}
	return out
}

// maxArrivals bounds the fragments a failure lists.
const maxArrivals = 12

// arrivalList says when each fragment was produced and arrived, counted
// from the first.
func arrivalList(frags []fragment, at []time.Duration) string {
	var parts []string
	for i, f := range frags {
		if i == maxArrivals {
			parts = append(parts, fmt.Sprintf("... (%d fragments)", len(frags)))
			break
		}
		parts = append(parts, fmt.Sprintf("%s produced at +%s arrived at +%s", quote([]byte(f.text)), f.at, (at[i]-at[0]).Round(time.Millisecond)))
	}
	return strings.Join(parts, ", ")
}
