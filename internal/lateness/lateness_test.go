package lateness

import (
	"reflect"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/traffic"
)

// started returns a probe that has started, without its goroutine: the
// tests feed it wake-ups.
func started(t0 time.Time) *Probe {
	p := New(Period, Floor)
	p.started, p.epoch = true, t0
	return p
}

func TestDuringCutsStallsToTheWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	p := started(t0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	p.observe(ms(100), ms(101))  // jitter under Floor: no stall
	p.observe(ms(200), ms(260))  // 60 ms
	p.observe(ms(900), ms(1600)) // 700 ms
	p.observe(ms(3000), ms(3050))
	got, ok := p.During(ms(250), ms(1000))
	want := []traffic.Stall{{From: 0, To: 10 * time.Millisecond}, {From: 650 * time.Millisecond, To: 750 * time.Millisecond}}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v %t, want %v", got, ok, want)
	}
	if got, ok := p.During(ms(1700), ms(2900)); !ok || got != nil {
		t.Errorf("a window without stalls: %v %t", got, ok)
	}
}

func TestDuringNeedsTheWholeWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	if _, ok := New(Period, Floor).During(t0, t0.Add(time.Second)); ok {
		t.Error("a probe that never started watched a window")
	}
	p := started(t0)
	if _, ok := p.During(t0.Add(-time.Millisecond), t0.Add(time.Second)); ok {
		t.Error("a window that began before the probe started was watched")
	}
	for i := 0; i < maxStalls+10; i++ {
		due := t0.Add(time.Duration(i) * 20 * time.Millisecond)
		p.observe(due, due.Add(5*time.Millisecond))
	}
	if _, ok := p.During(t0.Add(time.Millisecond), t0.Add(time.Second)); ok {
		t.Error("a window whose stalls the ring dropped was watched")
	}
	late := t0.Add(time.Duration(maxStalls) * 20 * time.Millisecond)
	if got, ok := p.During(late, late.Add(50*time.Millisecond)); !ok || len(got) != 3 {
		t.Errorf("a recent window: %v %t", got, ok)
	}
}

// TestProbeSeesAStall: the running probe records a wake-up that came late
// (its sleep is made to overrun 50 ms once, as on a starved machine) as a
// stall of about that length, and no stall where it woke on time.
func TestProbeSeesAStall(t *testing.T) {
	p := New(time.Millisecond, Floor)
	n, stalled, checked := 0, make(chan time.Time, 1), make(chan struct{})
	var stallFrom time.Time
	p.sleep = func(d time.Duration) {
		n++
		switch n {
		case 3:
			stallFrom = time.Now()
			time.Sleep(d + 50*time.Millisecond) // the artificial starvation
		case 5:
			stalled <- stallFrom
			<-checked // hold the probe still while the test reads it
		default:
			time.Sleep(d)
		}
	}
	p.Start()
	from := <-stalled
	defer close(checked)
	stalls, ok := p.During(from, time.Now())
	if !ok {
		t.Fatal("the probe did not watch the window")
	}
	var total time.Duration
	for _, s := range stalls {
		total += s.To - s.From
	}
	if total < 45*time.Millisecond {
		t.Fatalf("stalls %v: want about 50 ms", stalls)
	}
}
