package httpserve

import (
	"io"
	"net/http"
	"testing"
	"time"
)

func TestStartStop(t *testing.T) {
	var status int
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &StatusRecorder{ResponseWriter: w}
		_, _ = rec.Write([]byte("hi"))
		_ = http.NewResponseController(rec).Flush() // reaches the real writer through Unwrap
		status = rec.Status
	})
	l, err := Start(h, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(l.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hi" || status != http.StatusOK {
		t.Fatalf("body %q, recorded status %d", b, status)
	}
	if err := l.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	default:
		t.Fatal("Done is not closed after Stop")
	}
	if _, err := Start(h, "256.0.0.1:0"); err == nil {
		t.Fatal("Start on a bad address succeeded")
	}
}
