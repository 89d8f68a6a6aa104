package checks

import (
	"fmt"
	"strings"
	"time"
)

// A harness starved of CPU must never blame the target. Each timing check
// (FMT-01 live, FMT-06 flush, SSE-01 at once, SSE-04 keepalive, ASYNC-01 at
// once, the answered-within steps) knows the window in which a delay broke
// its bound and by how much; when the recorder's own process ran at least
// that late within the window (traffic.Exchange.Stalls, measured by
// internal/lateness), the delay may be the harness's, not the service's:
// the rule is untested on that exchange, with the reason, never failed.
//
// How late the process ran is its longest stall in the window (a read, or
// the timer or write of a reference server in the same process, falls in
// one stall and is delayed by it), or, when more, what its stalls lost
// beyond busyJitter each: a delay made of many hops (a connection accepted,
// a handler run, a write, a read), each queued behind the process's other
// work, is as long as their sum. Summing whole stalls would excuse anything
// on a merely busy machine, whose wake-ups come a few milliseconds late all
// the time; the part beyond busyJitter is what starvation adds.

// busyJitter is how late a wake-up may come on a busy machine that does not
// starve the harness; a stall counts towards the sum only beyond it.
const busyJitter = 5 * time.Millisecond

// harnessLate returns how late the recorder's process ran within the window
// from..to (offsets from the exchange's start): its longest stall there,
// cut to the window, or the sum of its stalls' parts beyond busyJitter.
func harnessLate(x *View, from, to time.Duration) time.Duration {
	var longest, lost time.Duration
	for _, s := range x.Stalls {
		lo, hi := max(s.From, from), min(s.To, to)
		if hi <= lo {
			continue
		}
		longest = max(longest, hi-lo)
		lost += max(0, hi-lo-busyJitter)
	}
	return max(longest, lost)
}

// starved returns an untested Skip when the recorder's own lateness within
// from..to could explain a delay that broke a bound by excess; nil when it
// could not (or the recording does not say: a delay is then judged as it
// stands).
func starved(x *View, from, to, excess time.Duration) error {
	late := harnessLate(x, from, to)
	if late <= 0 || late < excess {
		return nil
	}
	return untested(fmt.Sprintf(HarnessLatePhrase+" %s late in this window (+%s to +%s), which could explain the %s past the bound: no verdict on the service",
		late.Round(time.Millisecond), from.Round(time.Millisecond), to.Round(time.Millisecond), excess.Round(time.Millisecond)))
}

// HarnessLatePhrase begins the reason of every verdict the harness's own
// lateness excused (starved's, and the steps' that asked too late to tell).
const HarnessLatePhrase = "the harness itself ran"

// HarnessWasLate reports whether reason (an untested verdict's, or the
// message of a scenario it left untested) says the harness's own lateness
// kept a timing rule from being judged: a verdict no test may expect
// either way on a loaded machine.
func HarnessWasLate(reason string) bool { return strings.Contains(reason, HarnessLatePhrase) }

// worst keeps the first failure a timing check found and, apart, the first
// delay the harness's lateness excused: a clear failure elsewhere in the
// exchange still fails it.
type worst struct{ failure, excused error }

// add notes a delay that broke a bound: excuse is starved's answer for it.
func (w *worst) add(excuse, failure error) {
	switch {
	case excuse != nil && w.excused == nil:
		w.excused = excuse
	case excuse == nil && w.failure == nil:
		w.failure = failure
	}
}

// err is the verdict: the failure, else the excuse, else nil.
func (w *worst) err() error {
	if w.failure != nil {
		return w.failure
	}
	return w.excused
}
