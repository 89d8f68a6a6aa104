package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/har"
	"github.com/invokeconf/invokeconf/internal/httpserve"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/traffic"
)

// harLeaks writes xs as a HAR file and returns it with the pieces of
// secretKey's secret (profile.FragmentMin characters) and the start of its
// secret after its public part, wherever they stand, and the other
// secrets given, that it holds.
func harLeaks(t *testing.T, xs []traffic.Exchange, others ...string) (string, []string) {
	t.Helper()
	var buf bytes.Buffer
	if err := har.Write(&buf, "test", xs); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	i := strings.LastIndex(secretKey, "-") + 1
	sec := secretKey[i:]
	var found []string
	for j := 0; j+profile.FragmentMin <= len(sec); j++ {
		if strings.Contains(text, sec[j:j+profile.FragmentMin]) {
			found = append(found, sec[j:j+profile.FragmentMin])
		}
	}
	if strings.Contains(text, secretKey[:i+1]) {
		found = append(found, secretKey[:i+1])
	}
	for _, o := range others {
		if strings.Contains(text, o) {
			found = append(found, o)
		}
	}
	return text, found
}

// TestKeyAByteAtATimeIsHidden: a key the service writes, and one the client
// uploads, a byte at a time (each byte a read of its own: the next is sent
// only once the previous one has passed the proxy) leave no piece in the
// HAR file, at any spill threshold.
func TestKeyAByteAtATimeIsHidden(t *testing.T) {
	echo := "the key is " + secretKey + " and again " + secretKey[:len(secretKey)-3] + ", its end " + secretKey[len(secretKey)-9:] + "."
	for _, threshold := range []int64{0, 1, 16} {
		passed := make(chan struct{}) // a byte reached the other end
		up, err := httpStart(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			one := make([]byte, 1)
			for {
				n, err := req.Body.Read(one)
				if n > 0 {
					passed <- struct{}{}
				}
				if err != nil {
					break
				}
			}
			w.Header().Set("Content-Type", "text/plain")
			rc := http.NewResponseController(w)
			for i := range len(echo) {
				_, _ = io.WriteString(w, echo[i:i+1])
				_ = rc.Flush()
				select {
				case <-passed:
				case <-req.Context().Done():
					return
				}
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		target, _ := url.Parse(up)
		rec := traffic.NewRecorder(0, nil)
		if threshold > 0 {
			rec.SpillDir, rec.SpillThreshold = t.TempDir(), threshold
		}
		done := make(chan traffic.Exchange, 1)
		front, err := httpStart(t, New(Config{Target: target, Recorder: rec, Done: func(x traffic.Exchange) { done <- x }}))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		pr, pw := io.Pipe()
		go func() {
			// The upload: a byte, then wait for it to reach the service.
			for i := range len(echo) {
				if _, err := pw.Write([]byte{echo[i]}); err != nil {
					return
				}
				select {
				case <-passed:
				case <-ctx.Done():
					return
				}
			}
			pw.Close()
		}()
		req, _ := http.NewRequestWithContext(ctx, "POST", front+"/api/invoke/agt", pr)
		req.Header.Set("Authorization", "Bearer "+secretKey)
		resp, err := client().Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		one := make([]byte, 1)
		var got []byte
		for {
			n, err := resp.Body.Read(one)
			if n > 0 {
				got = append(got, one[0])
				passed <- struct{}{}
			}
			if err != nil {
				break
			}
		}
		resp.Body.Close()
		cancel()
		if string(got) != echo {
			t.Fatalf("spill %d: the client read %q", threshold, got)
		}
		x := <-done
		for _, b := range []traffic.Body{x.Request.Body, x.Response.Body} {
			if len(b.Chunks) < len(echo)/2 {
				t.Fatalf("spill %d: %d chunks for %d bytes: the bytes were not read one at a time", threshold, len(b.Chunks), len(echo))
			}
		}
		if text, leaks := harLeaks(t, []traffic.Exchange{x}); len(leaks) > 0 {
			t.Errorf("spill %d: the HAR file holds %q:\n%s", threshold, leaks, text)
		}
	}
}

// TestKeysHiddenWhereverTheRequestHoldsThem: a key (the request's own, in
// its Authorization header) percent-encoded in the URL's query and path, as
// the method, as a header's name, and credentials in the headers, query
// parameters and JSON members DefaultHidden names leave nothing in the HAR
// file; what holds none is recorded byte for byte.
func TestKeysHiddenWhereverTheRequestHoldsThem(t *testing.T) {
	r := newRig(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"items":[],"access_token":"TokenFromTheService42"}`)
	}), 0)
	encoded := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[s[i]>>4])+string("0123456789abcdef"[s[i]&15])))
		}
		return b.String()
	}
	path := "/api/invoke/" + encoded(secretKey) + "?runID=r1&note=" + encoded(secretKey) + "&api_key=ApiKeyInTheQuery99&async=true"
	body := `{"user":"bob","password":"PasswordInTheBody7","nested":"{\"client_secret\":\"ClientSecretInside5\"}"}`
	for _, method := range []string{"POST", secretKey} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req, _ := http.NewRequestWithContext(ctx, method, r.url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+secretKey)
		req.Header.Set("X-Api-Key", "ApiKeyInAHeader123")
		req.Header.Set("X-Forwarded-Authorization", "Bearer sk-svc-bob-k9-ForwardedSecret77")
		req.Header.Set("X-Named-"+secretKey, "a key as a header's name")
		resp, err := client().Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		cancel()
		x := r.next(t)
		text, leaks := harLeaks(t, []traffic.Exchange{x}, "ApiKeyInTheQuery99", "PasswordInTheBody7", "ClientSecretInside5",
			"ApiKeyInAHeader123", "ForwardedSecret77", "TokenFromTheService42")
		if len(leaks) > 0 {
			t.Errorf("%s: the HAR file holds %q:\n%s", method[:4], leaks, text)
		}
		if q := x.Request.Query(); q.Get("runID") != "r1" || q.Get("async") != "true" || q.Get("api_key") != traffic.Hidden {
			t.Errorf("%s: the recorded query lost what it held: %q", method[:4], x.Request.URL)
		}
		if got := string(x.Request.Body.Bytes()); got != `{"user":"bob","password":"[hidden]","nested":"{\"client_secret\":\"[hidden]\"}"}` {
			t.Errorf("%s: body recorded as %s", method[:4], got)
		}
	}
}

// httpStart serves h on a loopback port until the test ends.
func httpStart(t *testing.T, h http.Handler) (string, error) {
	t.Helper()
	l, err := httpserve.Start(h, "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	t.Cleanup(func() { _ = l.Stop(time.Second) })
	return l.URL, nil
}
