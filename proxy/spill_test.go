package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/har"
	"github.com/invokeconf/invokeconf/internal/httpserve"
	"github.com/invokeconf/invokeconf/internal/sweep"
	"github.com/invokeconf/invokeconf/traffic"
)

// spoolRig is an upstream service behind a Proxy that records as
// `invokeconf proxy` does: bodies spill past threshold into dir, and each
// finished exchange goes to a har.Spool (and, when keep is set, to xs too).
type spoolRig struct {
	url   string
	dir   string
	spool *har.Spool
	p     *Proxy
	keep  bool
	mu    sync.Mutex
	xs    []traffic.Exchange
	done  chan struct{}
}

func newSpoolRig(t *testing.T, h http.Handler, threshold int64, keep bool) *spoolRig {
	t.Helper()
	up, err := httpserve.Start(h, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Stop(time.Second) })
	target, _ := url.Parse(up.URL)
	r := &spoolRig{dir: t.TempDir(), keep: keep, done: make(chan struct{}, 1<<16)}
	if r.spool, err = har.NewSpool(r.dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.spool.Close() })
	rec := traffic.NewRecorder(0, nil)
	rec.SpillDir, rec.SpillThreshold = r.dir, threshold
	r.p = New(Config{Target: target, Recorder: rec, Done: func(x traffic.Exchange) {
		if err := r.spool.Add(x); err != nil {
			t.Error(err)
		}
		if r.keep {
			r.mu.Lock()
			r.xs = append(r.xs, x)
			r.mu.Unlock()
		}
		r.done <- struct{}{}
	}})
	front, err := httpserve.Start(r.p, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = front.Stop(time.Second) })
	r.url = front.URL
	return r
}

// files returns the names and joined contents of the files in the rig's dir.
func (r *spoolRig) files(t *testing.T) ([]string, string) {
	t.Helper()
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var all strings.Builder
	for _, e := range ents {
		names = append(names, e.Name())
		b, err := os.ReadFile(filepath.Join(r.dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	return names, all.String()
}

func (r *spoolRig) wait(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d exchanges recorded", i, n)
		}
	}
}

// leaks returns the pieces of secretKey's secret that s holds.
func leaks(s string) []string {
	sec := secretKey[strings.LastIndex(secretKey, "-")+1:]
	var out []string
	for i := 0; i+6 <= len(sec); i++ {
		if strings.Contains(s, sec[i:i+6]) {
			out = append(out, sec[i:i+6])
		}
	}
	return out
}

// TestSpillKeepsNoKey: a body that echoes the client's key spills while
// the stream is open, and neither its spill file nor the spool ever holds a
// piece of the key; the HAR file the spool writes is the one Write writes
// for the same exchanges; every temporary file is gone at the end.
func TestSpillKeepsNoKey(t *testing.T) {
	release := make(chan struct{})
	echo := strings.Repeat("the key is "+secretKey+"; ", 40)
	r := newSpoolRig(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, echo+string(body))
		_ = http.NewResponseController(w).Flush()
		if req.URL.Query().Get("hold") != "" {
			select {
			case <-release:
			case <-req.Context().Done():
			}
		}
		_, _ = io.WriteString(w, "the end")
	}), 64, true)
	call := func(path string) (*http.Response, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, "POST", r.url+path, strings.NewReader(strings.Repeat(secretKey+" ", 10)))
		req.Header.Set("Authorization", "Bearer "+secretKey)
		return client().Do(req)
	}
	resp, err := call("/api/invoke/agt?hold=1")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(echo))
	if _, err := io.ReadFull(resp.Body, got); err != nil {
		t.Fatal(err)
	}
	// The stream is open and its recording has spilled.
	names, held := r.files(t)
	if !strings.Contains(strings.Join(names, " "), ".spill") {
		t.Errorf("no body spilled past 64 bytes: %v", names)
	}
	if l := leaks(held); len(l) > 0 {
		t.Errorf("a temporary file holds pieces of the key while the stream is open: %v", l)
	}
	close(release)
	rest, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.HasSuffix(rest, []byte("the end")) {
		t.Errorf("the stream ended with %q", rest)
	}
	for i := 0; i < 3; i++ {
		resp, err := call("/api/invoke/agt")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	r.wait(t, 4)
	names, held = r.files(t)
	if l := leaks(held); len(l) > 0 {
		t.Errorf("the spool holds pieces of the key: %v", l)
	}
	for _, n := range names {
		if strings.HasSuffix(n, ".spill") {
			t.Errorf("a body's spill file is left after its exchange ended: %s", n)
		}
	}
	var fromSpool, inMemory bytes.Buffer
	if err := r.spool.WriteHAR(&fromSpool, "test"); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	xs := r.xs
	r.mu.Unlock()
	if err := har.Write(&inMemory, "test", xs); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fromSpool.Bytes(), inMemory.Bytes()) {
		t.Error("the HAR file written from the spool differs from the one written from memory")
	}
	for _, x := range xs {
		if b := string(x.Response.Body.Bytes()); !strings.HasPrefix(b, "the key is [key alice-k1]; ") || !strings.HasSuffix(b, "the end") ||
			x.Response.Body.Truncated || x.Response.Body.Size != int64(len(echo)+10*len(secretKey+" ")+len("the end")) {
			t.Errorf("exchange #%d recorded %d of %d bytes: %.80q...", x.ID, len(b), x.Response.Body.Size, b)
		}
	}
	if err := r.spool.Close(); err != nil {
		t.Error(err)
	}
	if names, _ := r.files(t); len(names) != 0 {
		t.Errorf("files left after the spool closed: %v", names)
	}
}

// TestLongRunHeapBounded: many exchanges with bodies past the spill
// threshold leave the heap where a few of them left it: the recording is on
// disk, not in memory. Kept in memory, the 400 exchanges after the first
// 100 would hold 400 × 64 KiB = 25 MiB (200 and 12.5 MiB without
// INVOKECONF_FULL, still past the 8 MiB allowed).
func TestLongRunHeapBounded(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 4<<10) // 64 KiB
	r := newSpoolRig(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = w.Write(body)
	}), 0, false)
	c := &http.Transport{}
	defer c.CloseIdleConnections()
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	run := func(n int) {
		for i := 0; i < n; i++ {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			req, _ := http.NewRequestWithContext(ctx, "GET", r.url+"/big", nil)
			resp, err := c.RoundTrip(req)
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			cancel()
			if err != nil {
				t.Fatal(err)
			}
		}
		r.wait(t, n)
	}
	more := 200
	if sweep.Full() {
		more = 400
	}
	run(100)
	before := heap()
	run(more)
	after := heap()
	t.Logf("heap %d KiB after 100 exchanges, %d KiB after %d", before>>10, after>>10, 100+more)
	if after > before+8<<20 {
		t.Errorf("the heap grew by %d KiB over %d exchanges of 64 KiB", (after-before)>>10, more)
	}
	if r.spool.Len() != 100+more {
		t.Errorf("the spool holds %d exchanges, want %d", r.spool.Len(), 100+more)
	}
}
