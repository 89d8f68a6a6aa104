package lateness

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/traffic"
)

// plainExchange is a plain-text answer to an agent script that says "x"
// every 100 ms for 1.6 s, read in chunks at the given offsets (ms) from
// start: the FMT-06 scenario of issue 18.
func plainExchange(start time.Time, reads ...int) *traffic.Exchange {
	prompt := strings.Repeat("@say x\n@pause 100ms\n", 16) + "@say x"
	x := &traffic.Exchange{ID: 1, Start: start, Request: traffic.Request{Method: "POST", URL: "http://svc.test/api/invoke/agt",
		Header: map[string][]string{"Accept": {"text/plain"}},
		Body:   traffic.Body{Size: int64(len(prompt)), Chunks: []traffic.Chunk{{Data: []byte(prompt), Size: len(prompt)}}}}}
	x.Response = &traffic.Response{Status: 200, Header: map[string][]string{}, End: traffic.EndComplete, Body: traffic.Body{Timed: true}}
	sent := 0
	for i, ms := range reads {
		n := 17 - sent
		if i < len(reads)-1 {
			n = min(ms/100+1-sent, 17-sent)
		}
		data := strings.Repeat("x", n)
		sent += n
		x.Response.Body.Chunks = append(x.Response.Body.Chunks, traffic.Chunk{At: time.Duration(ms) * time.Millisecond, Size: n, Data: []byte(data)})
		x.Response.Body.Size += int64(n)
	}
	return x
}

// TestStarvedProbeMakesFlushUntested: a probe fed the lateness of a
// starved machine (a 600 ms stall between two reads 731 ms apart) makes
// the FMT-06 check report untested with the reason; the same reads with
// no stall, or with only the jitter of a busy machine, fail.
func TestStarvedProbeMakesFlushUntested(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	reads := []int{0, 100, 200, 300, 400, 500, 600, 1331, 1400, 1500, 1600}
	for _, tc := range []struct {
		name   string
		feed   func(p *Probe, start time.Time)
		wantOK bool   // a pass would be wrong either way
		late   string // how late the reason says the harness ran
	}{
		{"starved", func(p *Probe, s time.Time) { p.observe(s.Add(700*time.Millisecond), s.Add(1300*time.Millisecond)) }, false, "600ms"},
		{"busy", func(p *Probe, s time.Time) {
			for ms := 610; ms < 1331; ms += 10 {
				p.observe(s.Add(time.Duration(ms)*time.Millisecond), s.Add(time.Duration(ms+3)*time.Millisecond))
			}
		}, true, ""},
		// Many short stalls, each well past a busy machine's jitter: a
		// process whose goroutines queue for the CPU (the read, and a
		// reference server's timer and write, each wait their turn).
		{"queued", func(p *Probe, s time.Time) {
			for ms := 610; ms < 1331; ms += 40 {
				p.observe(s.Add(time.Duration(ms)*time.Millisecond), s.Add(time.Duration(ms+30)*time.Millisecond))
			}
		}, false, "450ms"}, // 18 stalls of 30 ms in the window, 25 ms each beyond a busy machine's jitter
		{"idle", func(*Probe, time.Time) {}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := started(t0)
			start := t0.Add(time.Second)
			tc.feed(p, start)
			x := plainExchange(start, reads...)
			x.Stalls, x.Probed = p.DuringExchange(start, 1600*time.Millisecond)
			if !x.Probed {
				t.Fatal("the probe did not watch the exchange")
			}
			err := checks.PlainFlush.Judge(checks.NewView(x), nil)
			var s *checks.Skip
			switch {
			case tc.wantOK:
				if _, failed := outcome.AsFailure(err); !failed {
					t.Fatalf("want the 731 ms gap to fail, got %v", err)
				}
			case !errors.As(err, &s) || !s.Untested || !strings.Contains(s.Reason, "the harness itself ran "+tc.late+" late in this window"):
				t.Fatalf("want untested with the harness's lateness, got %v", err)
			}
		})
	}
}

// TestRealProbeStillFailsADefect: with the real probe running, a plain-text
// answer held 1.2 s (a flush timer far past the bound) still fails: the
// harness's real lateness meanwhile cannot explain it.
func TestRealProbeStillFailsADefect(t *testing.T) {
	Start()
	start := time.Now()
	time.Sleep(30 * time.Millisecond) // let the probe run through the window
	x := plainExchange(start, 0, 1200, 1600)
	x.Stalls, x.Probed = During(start, 30*time.Millisecond)
	if !x.Probed {
		t.Fatal("the default probe did not watch the window")
	}
	if _, failed := outcome.AsFailure(checks.PlainFlush.Judge(checks.NewView(x), nil)); !failed {
		t.Fatalf("a 1.2 s hold passed or was excused: stalls %v", x.Stalls)
	}
}
