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
	{Rule: "FMT-01", Spec: "text/event-stream (exactly): SSE stream, live during the run", Judge: AcceptSSE},
	{Rule: "FMT-02", Spec: "application/json (exactly): One JSON envelope {items:[...]} after the run ends", Judge: AcceptJSON},
	{Rule: "FMT-03", Spec: "Anything else, or absent: Plain text: the content of each event concatenated and streamed", Judge: AcceptOther},
	{Rule: "FMT-04", Spec: "A value such as text/event-stream, */* is not equal to text/event-stream; it yields the plain-text form, not SSE.", Judge: AcceptSSELiteral},
	{Rule: "FMT-05", Spec: "The same literal matching applies to application/json.", Judge: AcceptJSONLiteral},
	{Rule: "FMT-06", Spec: "output is flushed at most every 500 ms", Judge: PlainFlush},
}

// acceptIs returns x's synchronous invoke with its Accept value, or a Skip.
func acceptOf(x *traffic.Exchange) (string, bool, error) {
	if _, err := syncInvoke(x); err != nil {
		return "", false, err
	}
	v, present, ok := accept(x)
	if !ok {
		return "", false, skip("more than one Accept line")
	}
	return v, present, nil
}

// AcceptSSE: FMT-01. Accept exactly text/event-stream gives an SSE stream.
// "Live during the run" needs to know when the run produced its events,
// which traffic does not show; SSE-01 and the keepalive judge the timing
// they can.
func AcceptSSE(x *traffic.Exchange, _ *History) error {
	v, _, err := acceptOf(x)
	if err != nil {
		return err
	}
	if v != "text/event-stream" {
		return skip("Accept is not text/event-stream")
	}
	b, err := body(x, false)
	if err != nil {
		return err
	}
	if !looksSSE(x, b) {
		return outcome.Failf("the response form for Accept: text/event-stream", "an SSE stream (event: start first)",
			"Content-Type %q, body %s", x.Response.Header.Get("Content-Type"), quote(b))
	}
	return nil
}

// AcceptJSON: FMT-02. Accept exactly application/json gives one JSON
// envelope {items:[...]} after the run ends: its items are all events of the
// run, so the last is the run's final event, with runComplete true (a
// failed run aside: the spec does not say its last event completes it).
func AcceptJSON(x *traffic.Exchange, _ *History) error {
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
	items, ok := envelope(b)
	if !ok {
		return outcome.Failf("the response form for Accept: application/json", "one JSON envelope {\"items\":[...]}",
			"%s", quote(b))
	}
	var last eventObject
	for i, it := range items {
		e, ok := eventOf(string(it))
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
func notPlain(x *traffic.Exchange, accept string) error {
	b, err := body(x, false)
	if err != nil {
		return err
	}
	what := "Accept: " + accept
	if accept == "" {
		what = "no Accept"
	}
	switch {
	case surelySSE(x, b):
		return outcome.Failf("the response form for "+what, "plain text, not SSE", "an SSE stream: %s", quote(b))
	case !x.Response.Body.Truncated && surelyEnvelope(x, b):
		return outcome.Failf("the response form for "+what, "plain text, not the JSON envelope",
			"the JSON envelope: %s", quote(b))
	}
	return nil
}

// AcceptOther: FMT-03. Any Accept other than the two literal values, or
// none, gives plain text. Only an answer that is surely SSE or the envelope
// fails: plain text may itself look like either.
func AcceptOther(x *traffic.Exchange, _ *History) error {
	v, present, err := acceptOf(x)
	if err != nil {
		return err
	}
	if present && (strings.Contains(v, "text/event-stream") || strings.Contains(v, "application/json")) {
		return skip("Accept names an SSE or JSON type (FMT-01/02/04/05)")
	}
	return notPlain(x, v)
}

// AcceptSSELiteral: FMT-04. An Accept that holds text/event-stream but is
// not exactly it gives plain text.
// namesLoosely reports whether an Accept value names a media type once case
// and spaces are set aside: such a value that is not the exact text is the
// literal-matching rule's test case ("compared literally, as a whole").
func namesLoosely(v, mediaType string) bool {
	return strings.Contains(strings.ToLower(strings.Join(strings.Fields(v), "")), mediaType)
}

func AcceptSSELiteral(x *traffic.Exchange, _ *History) error {
	v, _, err := acceptOf(x)
	if err != nil {
		return err
	}
	if v == "text/event-stream" || !namesLoosely(v, "text/event-stream") {
		return skip("Accept is exactly text/event-stream or does not name it")
	}
	return notPlain(x, v)
}

// AcceptJSONLiteral: FMT-05. An Accept that holds application/json but is
// not exactly it gives plain text.
func AcceptJSONLiteral(x *traffic.Exchange, _ *History) error {
	v, _, err := acceptOf(x)
	if err != nil {
		return err
	}
	if v == "application/json" || !namesLoosely(v, "application/json") || namesLoosely(v, "text/event-stream") {
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
func scriptFragments(prompt string) ([]fragment, bool) {
	s, ok := parseScript(prompt)
	if !ok || s.fails {
		return nil, false
	}
	return s.frags, len(s.frags) > 1
}

// PlainFlush: FMT-06. Text is held at most FlushHold (plus FlushTolerance).
// Traffic shows when text arrived, not when the service produced it, so
// this decides only on prompts that are agent scripts of @say and @pause
// lines, whose production times the script states: fragment i, produced
// p(i) after the first, must arrive (a) within FlushHold+FlushTolerance of
// p(i) after the first fragment's arrival, and (b) no less than
// p(i)-p(i-1)-FlushHold-FlushTolerance after fragment i-1, so text held to
// the end fails.
func PlainFlush(x *traffic.Exchange, _ *History) error {
	v, present, err := acceptOf(x)
	if err != nil {
		return err
	}
	if present && (v == "text/event-stream" || v == "application/json") {
		return skip("not the plain-text form")
	}
	if x.Request.Body.Redacted {
		return untested(NoBody)
	}
	frags, ok := scriptFragments(string(x.Request.Body.Bytes()))
	if !ok {
		return skip("the prompt is not an agent script of @say and @pause lines: traffic does not show when the text was produced")
	}
	if _, err := body(x, true); err != nil {
		return err
	}
	if !x.Response.Body.Timed {
		return untested(NoTimings)
	}
	arrived, ok := fragmentArrivals(chunkPieces(&x.Response.Body), frags)
	if !ok {
		return skip("the answer is not the script's text")
	}
	limit := FlushHold + FlushTolerance
	if err := steadyGaps(frags, arrived, chunkPieces(&x.Response.Body), limit); err != nil {
		return err
	}
	for i := 1; i < len(frags); i++ {
		held := arrived[i] - arrived[0] - frags[i].at
		gap := arrived[i] - arrived[i-1]
		if held > limit || gap < frags[i].at-frags[i-1].at-limit {
			return outcome.Failf(fmt.Sprintf("the plain-text fragment %q", frags[i].text),
				fmt.Sprintf("arrival within %s of its production, %s after the first fragment", limit, frags[i].at),
				"%s", arrivalList(frags, arrived))
		}
	}
	return nil
}

// steadyGaps: text produced steadily (no pause longer than SteadyStep) must
// arrive in chunks at most limit apart for as long as the script surely
// still produces: up to the last fragment's production, counted from the
// first fragment's arrival less limit (the first may have been held that
// long). A flush timer slower than the bound leaves a wider gap.
func steadyGaps(frags []fragment, arrived []time.Duration, chunks []piece, limit time.Duration) error {
	for i := 1; i < len(frags); i++ {
		if frags[i].at-frags[i-1].at > SteadyStep {
			return nil
		}
	}
	producing := arrived[0] + frags[len(frags)-1].at - limit
	for i := 1; i < len(chunks); i++ {
		if chunks[i-1].at >= producing {
			break
		}
		if gap := chunks[i].at - chunks[i-1].at; gap > limit {
			return outcome.Failf("the plain-text flush", fmt.Sprintf("chunks at most %s apart while the script produced text every %s or less", limit, SteadyStep),
				"%s between chunks at %s and %s", gap, chunks[i-1].at, chunks[i].at)
		}
	}
	return nil
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

func arrivalList(frags []fragment, at []time.Duration) string {
	parts := make([]string, len(frags))
	for i, f := range frags {
		parts[i] = fmt.Sprintf("%q produced at +%s arrived at +%s", f.text, f.at, (at[i] - at[0]).Round(time.Millisecond))
	}
	return strings.Join(parts, ", ")
}
