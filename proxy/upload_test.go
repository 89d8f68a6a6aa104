package proxy

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/internal/httpserve"
	"github.com/invokeconf/invokeconf/traffic"
)

// uploadRig is a service that reads a whole upload and answers with its
// length, behind a Proxy whose server bounds a whole request's read at
// readTimeout and whose body reads wait up to idle.
func uploadRig(t *testing.T, readTimeout, idle time.Duration) (string, chan traffic.Exchange) {
	t.Helper()
	up, err := httpStart(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		n, err := io.Copy(io.Discard, req.Body)
		if err != nil {
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, strings.Repeat("x", int(n%97)))
	}))
	if err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse(up)
	done := make(chan traffic.Exchange, 1)
	p := New(Config{Target: target, BodyIdle: idle, Done: func(x traffic.Exchange) { done <- x }})
	front, err := httpserve.StartWith(p, "127.0.0.1:0", httpserve.Timeouts{Read: readTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = front.Stop(time.Second) })
	return front.URL, done
}

// TestSlowUploadPasses: an upload that keeps sending passes whole however
// long it lasts past the server's whole-request read timeout (here 400 ms;
// the upload sends a piece every 10 ms for 1.5 s; each read may wait 3 s).
func TestSlowUploadPasses(t *testing.T) {
	base, done := uploadRig(t, 400*time.Millisecond, 3*time.Second)
	pr, pw := io.Pipe()
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); <-tick.C {
			if _, err := pw.Write([]byte("0123456789")); err != nil {
				return
			}
		}
		pw.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/invoke/agt", pr)
	resp, err := client().Do(req)
	if err != nil {
		t.Fatalf("the upload was cut: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	x := <-done
	if resp.StatusCode != 200 || x.Error != "" || x.Response == nil || x.Response.End != traffic.EndComplete {
		t.Fatalf("status %d, recorded error %q, response %+v", resp.StatusCode, x.Error, x.Response)
	}
	if took := x.Request.Body.Chunks[len(x.Request.Body.Chunks)-1].At; took < 400*time.Millisecond {
		t.Errorf("the upload took %s: it proves nothing past the read timeout", took)
	}
}

// TestStalledUploadIsTheClients: a client that stops sending its body is
// cut after the idle bound, and the recording says so, as the client's
// doing, not the service's.
func TestStalledUploadIsTheClients(t *testing.T) {
	base, done := uploadRig(t, time.Hour, 200*time.Millisecond)
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write([]byte("the start of a body that never ends")) }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/invoke/agt", pr)
	errc := make(chan error, 1)
	go func() {
		resp, err := client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	var x traffic.Exchange
	select {
	case x = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the stalled upload was not cut within 20 s")
	}
	if !strings.Contains(x.Error, "the client sent nothing of its request body for 200ms") || x.Response != nil {
		t.Errorf("recorded as %q (response %v)", x.Error, x.Response)
	}
	if got := string(x.Request.Body.Bytes()); got != "the start of a body that never ends" {
		t.Errorf("recorded body %q", got)
	}
	cancel()
	pw.Close() // the client's transport waits for its body's end
	<-errc
}
