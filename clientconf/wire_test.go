package clientconf

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/fixtures"
)

// TestEveryVariantShowsOnTheWire: the probe of each variant shows bytes that
// differ from the default server's, once IDs and times are masked, but for
// the variants that change only timing, which show none.
func TestEveryVariantShowsOnTheWire(t *testing.T) {
	seed, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	w := newWireProbes(seed)
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for _, v := range fakeserver.Variants() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ex := w.example(context.Background(), v.Name)
			mu.Lock()
			defer mu.Unlock()
			var b strings.Builder
			for _, l := range ex.Lines {
				fmt.Fprintf(&b, "\n  %s %s", l.Op, l.Text)
			}
			t.Logf("%s: %s%s\n  %s", v.Name, ex.Probe, b.String(), ex.Note)
			_, timing := timingOnly[v.Name]
			switch {
			case strings.HasPrefix(ex.Note, "no example"):
				t.Errorf("%s: %s", v.Name, ex.Note)
			case timing && len(ex.Lines) > 0:
				t.Errorf("%s changes only timing, but its probe differs: %v", v.Name, ex.Lines)
			case !timing && len(ex.Lines) == 0:
				t.Errorf("%s: its probe (%s) shows no difference: give it one that does in variantProbes", v.Name, ex.Probe)
			}
		}()
	}
	wg.Wait()
	for name := range variantProbes {
		if _, ok := probes[variantProbes[name]]; !ok {
			t.Errorf("variantProbes: %s names no probe %q", name, variantProbes[name])
		}
	}
}

// TestMaskKeepsShapes: masking hides what differs on every run and keeps
// what a variant changes.
func TestMaskKeepsShapes(t *testing.T) {
	tests := []struct{ a, b string }{
		{`"runID":"run_0123456789abcdef"`, `"runID":"run_fedcba9876543210"`},
		{`"time":"2025-01-02T03:04:05.1Z"`, `"time":"2026-11-26T09:46:52.087649711Z"`},
		{"Date: Mon, 02 Jan 2006 15:04:05 GMT\r\n", "Date: Tue, 03 Jan 2006 15:04:06 GMT\r\n"},
	}
	for _, tt := range tests {
		if mask(tt.a) != mask(tt.b) {
			t.Errorf("%q and %q mask differently: %q, %q", tt.a, tt.b, mask(tt.a), mask(tt.b))
		}
	}
	for _, pair := range [][2]string{
		{`"runID":"run_0123456789abcdef"`, `"runID":"0b1e3c4d-1234-4abc-8def-0123456789ab"`},
		{`"runID":"run_0123456789abcdef"`, `"runID":1234567890123456`},
		{`"time":"2025-01-02T03:04:05Z"`, `"time":1735787045000`},
	} {
		if mask(pair[0]) == mask(pair[1]) {
			t.Errorf("%q and %q mask alike: %q", pair[0], pair[1], mask(pair[0]))
		}
	}
}
