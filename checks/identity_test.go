package checks

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// identityRules are the rules an answer's names of its thread, and the
// follow-ups that read them, decide.
var identityRules = []string{"THREAD-01", "THREAD-02", "THREAD-03", "THREAD-04", "ASYNC-01", "ASYNC-02", "ASYNC-03", "EVT-02"}

// answer is a 2xx invoke answer sent at +sentMs: req are request headers
// ("path" sets the URL), header the X-SVC-Thread-Id response header ("" for
// none); an async answer acknowledges thread and run, any other is an
// envelope whose items name thread and run and complete it.
func answer(sentMs int, req map[string]string, async bool, header, thread, run string) *View {
	url := "http://s/api/invoke/agt"
	h := hdr()
	for k, v := range req {
		if k == "path" {
			url = v
			continue
		}
		h.Set(k, v)
	}
	body := fmt.Sprintf(`{"items":[{"content":"x","runID":%q,"threadID":%q},{"runComplete":true,"content":"","runID":%q,"threadID":%q}]}`,
		run, thread, run, thread)
	if async {
		url += "?async=true"
		body = fmt.Sprintf(`{"threadID":%q,"runID":%q}`, thread, run)
	} else {
		h.Set("Accept", "application/json")
	}
	resp := hdr("Content-Type", "application/json")
	if header != "" {
		resp.Set("X-SVC-Thread-Id", header)
	}
	x := ex{url: url, req: h, resp: resp, chunks: []at{{50, body}}}.build()
	x.Start = t0.Add(time.Duration(sentMs) * time.Millisecond)
	x.Response.HeaderAt = 40 * time.Millisecond
	return x
}

// missing is a GET answered 404 at +sentMs.
func missing(sentMs int, url string) *View {
	x := ex{method: "GET", url: url, status: 404, resp: hdr("Content-Type", "application/problem+json"), chunks: []at{{5, `{"status":404}`}}}.build()
	x.Start = t0.Add(time.Duration(sentMs) * time.Millisecond)
	x.Response.HeaderAt = 5 * time.Millisecond
	return x
}

// runEvents is the events route's envelope of a run on a thread.
func runEvents(thread, run string) string {
	return fmt.Sprintf(`{"items":[{"content":"x","runID":%q,"threadID":%q},{"runComplete":true,"runID":%q,"threadID":%q}]}`, run, thread, run, thread)
}

// failedIdentity judges xs in order (numbered from 1) and returns the
// identity rules the summary fails.
func failedIdentity(xs []*View) []string {
	j := NewJudgement()
	for i, x := range xs {
		x.ID = i + 1
		j.AddView(x)
	}
	var out []string
	for _, v := range j.Summary().Verdicts {
		if v.Verdict == Fail && slices.Contains(identityRules, v.Rule) {
			out = append(out, v.Rule)
		}
	}
	return out
}

// TestThreadNamesBlameOneRule: where an answer names its thread in several
// places and they disagree, each disagreement fails exactly one rule: the
// one of the name that differs from the thread the run is on, as the
// follow-ups show it (a thread that answers 404 is none; the events route
// or lastRunID places the run; a lastRunID left on an earlier run rules a
// thread out), or, with no follow-up, as the fewest broken rules explain it.
func TestThreadNamesBlameOneRule(t *testing.T) {
	resume := map[string]string{"X-SVC-Thread-Id": "t1"}
	opened := func() *View { return answer(0, nil, false, "t1", "t1", "r0") }
	tests := []struct {
		name string
		xs   []*View
		want []string
	}{
		{"every name the resumed thread", []*View{opened(),
			answer(1000, resume, true, "t1", "t1", "r1"), get(2000, "http://s/api/threads/t1/events?runID=r1", runEvents("t1", "r1"))}, nil},
		// Defect thread-header-ignored: the run is on a new thread, every
		// name says so: the selection rule alone.
		{"every name a new thread", []*View{opened(),
			answer(1000, resume, true, "n1", "n1", "r1")}, []string{"THREAD-02"}},
		// Defect async-ack-new-thread: the acknowledgement names a thread
		// that does not exist.
		{"the acknowledgement names a thread that is none", []*View{opened(),
			answer(1000, resume, true, "t1", "f1", "r1"), missing(2000, "http://s/api/threads/f1/events?runID=r1")}, []string{"ASYNC-01"}},
		{"the acknowledgement alone differs, nothing follows", []*View{opened(),
			answer(1000, resume, true, "t1", "f1", "r1")}, []string{"ASYNC-01"}},
		// Defect thread-resume-echoed: the run is on a fresh thread, the
		// header echoes the requested one.
		{"the events route places the run on the acknowledged thread", []*View{opened(),
			answer(1000, resume, true, "t1", "n1", "r1"), get(2000, "http://s/api/threads/n1/events?runID=r1", runEvents("n1", "r1"))},
			[]string{"THREAD-02", "THREAD-04"}},
		{"lastRunID stays on the earlier run", []*View{opened(),
			answer(1000, resume, false, "t1", "n1", "r1"), get(17500, "http://s/api/threads/t1", `{"lastRunID":"r0"}`)},
			[]string{"THREAD-02", "THREAD-04"}},
		{"the path's thread echoed", []*View{opened(),
			answer(1000, map[string]string{"path": "http://s/api/invoke/agt/thread/t1"}, false, "t1", "n1", "r1"),
			get(17500, "http://s/api/threads/t1", `{"lastRunID":"r0"}`)},
			[]string{"THREAD-01", "THREAD-04"}},
		// Defect no-thread-header-wrong-thread: no header, the events name
		// another thread than the run's.
		{"no header, lastRunID places the run on the requested thread", []*View{opened(),
			answer(1000, resume, false, "", "t1-other", "r1"), get(17500, "http://s/api/threads/t1", `{"lastRunID":"r1"}`)},
			[]string{"EVT-02", "THREAD-04"}},
		{"no header, nothing follows", []*View{opened(),
			answer(1000, resume, false, "", "t1-other", "r1")}, []string{"EVT-02", "THREAD-04"}},
		{"the events route's events name another thread", []*View{opened(),
			answer(1000, resume, true, "t1", "t1", "r1"), get(2000, "http://s/api/threads/t1/events?runID=r1", runEvents("t1-other", "r1"))},
			[]string{"EVT-02"}},
		// Defect new-thread-id-invented: a new thread's header names a
		// thread that does not exist.
		{"a new thread's header names a thread that is none", []*View{opened(),
			answer(1000, nil, false, "p1", "n1", "r1"), missing(2000, "http://s/api/threads/p1")},
			[]string{"THREAD-04"}},
		// Every name agrees on a thread that is none (as in plain text,
		// where only the header names it): the header's failure
		// (THREAD-04); the run's thread is not known, so THREAD-03 is not
		// judged.
		{"a new thread's names agree on none", []*View{opened(),
			answer(1000, nil, false, "p1", "p1", "r1"), missing(2000, "http://s/api/threads/p1")},
			[]string{"THREAD-04"}},
		{"a new thread's header differs, nothing follows", []*View{opened(),
			answer(1000, nil, false, "p1", "n1", "r1")}, []string{"THREAD-04"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := failedIdentity(tc.xs); !slices.Equal(got, tc.want) {
				t.Errorf("failed %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPendingThreadNames: a disputed answer waits for its follow-ups; the
// judgement keeps it as evidence meanwhile, and the follow-up that settles
// it carries the blame.
func TestPendingThreadNames(t *testing.T) {
	j := NewJudgement()
	xs := []*View{answer(0, nil, false, "t1", "t1", "r0"),
		answer(1000, map[string]string{"X-SVC-Thread-Id": "t1"}, true, "t1", "f1", "r1"),
		missing(2000, "http://s/api/threads/f1/events?runID=r1")}
	for i, x := range xs {
		x.ID = i + 1
		fs := j.AddView(x)
		switch i {
		case 1:
			if len(fs) != 0 || !j.Pending(2) {
				t.Errorf("the disputed answer: findings %v, pending %t", fs, j.Pending(2))
			}
		case 2:
			if len(fs) != 1 || fs[0].Rule != "ASYNC-01" || fs[0].Exchange != 3 || j.Pending(2) {
				t.Errorf("the follow-up: findings %v, pending %t", fs, j.Pending(2))
			}
		}
	}
}

// TestDisputesAreBounded: past maxDisputes the oldest disputed answer is
// blamed at once, by default, and leaves the judgement.
func TestDisputesAreBounded(t *testing.T) {
	j := NewJudgement()
	first := answer(0, nil, false, "t1", "t1", "r0")
	first.ID = 1
	j.AddView(first)
	var fs []Finding
	for i := 0; i <= maxDisputes; i++ {
		x := answer(1000+i, map[string]string{"X-SVC-Thread-Id": "t1"}, true, "t1", fmt.Sprintf("f%d", i), fmt.Sprintf("r%d", i+1))
		x.ID = i + 2
		fs = j.AddView(x)
	}
	if len(fs) != 1 || fs[0].Rule != "ASYNC-01" || fs[0].Exchange != 2 || j.Pending(2) || !j.Pending(3) {
		t.Errorf("findings %v; pending: the oldest %t, the next %t", fs, j.Pending(2), j.Pending(3))
	}
}
