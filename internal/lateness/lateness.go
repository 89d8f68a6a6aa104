// Package lateness measures how late the harness's own process runs: a probe
// goroutine sleeps a short period again and again and records each wake-up
// that came late, a stall. A CPU-starved machine, a long garbage collection
// or a paused process shows as stalls; so does a process whose own
// goroutines queue for the CPU (a reference server in the same process,
// many scenarios at once). Timing checks (package checks) read
// the stalls of an exchange's window (traffic.Exchange.Stalls) and do not
// blame the service for a delay the harness's own lateness could explain.
package lateness

import (
	"runtime"
	"sync"
	"time"

	"github.com/invokeconf/invokeconf/traffic"
)

// Defaults of the process-wide probe: a wake-up every Period; a wake-up
// later than Floor is a stall (timer and scheduling jitter on an idle
// machine stay well under it).
const (
	Period = 10 * time.Millisecond
	Floor  = 2 * time.Millisecond
)

// maxStalls bounds the stalls a probe keeps: at one stall per wake-up,
// minutes of them.
const maxStalls = 1 << 14

// span is a stall: the probe was due at from and woke at to, both counted
// from the probe's epoch.
type span struct{ from, to time.Duration }

// Probe records the stalls of the process it runs in.
type Probe struct {
	period, floor time.Duration
	// sleep waits out one period; a test may make it late.
	sleep func(time.Duration)

	mu      sync.Mutex
	epoch   time.Time // when Start was first called
	started bool
	ring    []span // the last maxStalls stalls, oldest first from head
	head    int
}

// New returns a probe that wakes every period and records a wake-up later
// than floor as a stall. It records nothing until Start.
func New(period, floor time.Duration) *Probe {
	p := &Probe{period: period, floor: floor}
	t := time.NewTimer(0)
	<-t.C
	p.sleep = func(d time.Duration) {
		t.Reset(d)
		<-t.C
	}
	return p
}

// Default is the process-wide probe.
var Default = New(Period, Floor)

// Start starts the default probe; calling it again does nothing.
func Start() { Default.Start() }

// During returns the default probe's stalls in the window of an exchange
// that started at start and lasted d (see Probe.During).
func During(start time.Time, d time.Duration) ([]traffic.Stall, bool) {
	return Default.DuringExchange(start, d)
}

// DuringExchange returns the probe's stalls in the window of an exchange
// that started at start and lasted d.
func (p *Probe) DuringExchange(start time.Time, d time.Duration) ([]traffic.Stall, bool) {
	return p.During(start, start.Add(d))
}

// Start starts the probe's goroutine, which runs for the rest of the
// process (a wake-up every period costs next to nothing); calling it again
// does nothing.
func (p *Probe) Start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return
	}
	p.started, p.epoch = true, time.Now()
	go p.run()
}

func (p *Probe) run() {
	for {
		due := time.Now().Add(p.period)
		p.sleep(p.period)
		// A goroutine a timer wakes runs next on its processor; a
		// handler or a read woken by the network queues behind every
		// goroutine ready to run. Yielding queues the probe there too, so
		// it also measures how long this process makes its work wait.
		runtime.Gosched()
		p.observe(due, time.Now())
	}
}

// observe records the wake-up of a sleep due at due that came at woke.
func (p *Probe) observe(due, woke time.Time) {
	if woke.Sub(due) < p.floor {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s := span{due.Sub(p.epoch), woke.Sub(p.epoch)}
	if len(p.ring) < maxStalls {
		p.ring = append(p.ring, s)
		return
	}
	p.ring[p.head] = s
	p.head = (p.head + 1) % maxStalls
}

// During returns the stalls that overlap the window from..to, as offsets
// from from (cut to the window), in order; ok is false when the probe did
// not watch the whole window: it started after from, or the stalls it kept
// no longer reach back to from.
func (p *Probe) During(from, to time.Time) (stalls []traffic.Stall, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started || from.Before(p.epoch) {
		return nil, false
	}
	f, t := from.Sub(p.epoch), to.Sub(p.epoch)
	n := len(p.ring)
	if n == maxStalls && p.ring[p.head].from > f {
		return nil, false // the ring has dropped stalls of the window
	}
	for i := 0; i < n; i++ {
		s := p.ring[(p.head+i)%n]
		if s.to <= f || s.from >= t {
			continue
		}
		stalls = append(stalls, traffic.Stall{From: max(s.from, f) - f, To: min(s.to, t) - f})
	}
	return stalls, true
}
