package invokeconftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/profile"
)

// RemoteTimeout bounds each call Connect's Server makes to the admin
// routes.
const RemoteTimeout = 30 * time.Second

// maxAdminAnswer bounds what is read of an admin answer.
const maxAdminAnswer = 8 << 20

// Connect returns a Server for a reference server that runs elsewhere,
// started with `invokeconf serve --admin-key KEY`: baseURL is its base URL
// and adminKey that KEY. It reads the served profile (keys and IDs) from
// the admin routes, so a wrong URL or key fails here, with what was wrong.
func Connect(baseURL, adminKey string) (*Server, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invokeconftest: connect: %q is not a base URL (http://host:port)", baseURL)
	}
	base := strings.TrimSuffix(baseURL, "/")
	r := &remote{base: base, key: adminKey, client: &http.Client{Timeout: RemoteTimeout}}
	b, err := r.call("GET", "profile", nil)
	if err != nil {
		return nil, err
	}
	p, err := profile.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("invokeconftest: connect: the served profile: %w", err)
	}
	p.BaseURL = base
	return &Server{URL: base, Profile: p, ctl: r}, nil
}

// remote controls a server through its admin routes.
type remote struct {
	base, key string
	client    *http.Client
}

// call sends one admin request; body nil sends none. A problem answer
// becomes an error with its detail: a *fakeserver.SwitchError for the
// refusals of a switch change (400 and 409 of .../switches).
func (r *remote) call(method, route string, body any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.base+fakeserver.AdminPrefix+route, rd)
	if err != nil {
		return nil, fmt.Errorf("invokeconftest: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+r.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("invokeconftest: %s %s: %w", method, route, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAdminAnswer))
	if err != nil {
		return nil, fmt.Errorf("invokeconftest: %s %s: reading the answer: %w", method, route, err)
	}
	if resp.StatusCode < 300 {
		return b, nil
	}
	var pb struct{ Detail string }
	if json.Unmarshal(b, &pb) != nil || pb.Detail == "" {
		pb.Detail = strings.TrimSpace(string(b))
		if len(pb.Detail) > 200 {
			pb.Detail = pb.Detail[:200] + "..."
		}
	}
	switch {
	case route == "switches" && (resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusConflict):
		return nil, &fakeserver.SwitchError{Conflict: resp.StatusCode == http.StatusConflict, Problems: []string{pb.Detail}}
	case resp.StatusCode == http.StatusNotFound && route == "profile":
		return nil, fmt.Errorf("invokeconftest: %s has no admin routes: start it with invokeconf serve --admin-key KEY (%s)", r.base, pb.Detail)
	}
	return nil, fmt.Errorf("invokeconftest: %s %s: %d %s", method, route, resp.StatusCode, pb.Detail)
}

func (r *remote) switchesCall(method string, body any) (fakeserver.Switches, error) {
	b, err := r.call(method, "switches", body)
	if err != nil {
		return fakeserver.Switches{}, err
	}
	var w fakeserver.Switches
	if err := json.Unmarshal(b, &w); err != nil {
		return fakeserver.Switches{}, fmt.Errorf("invokeconftest: the switches: %w", err)
	}
	return w, nil
}

func (r *remote) switches() (fakeserver.Switches, error) { return r.switchesCall("GET", nil) }

func (r *remote) setSwitches(c fakeserver.SwitchChange) (fakeserver.Switches, error) {
	return r.switchesCall("PATCH", c)
}

func (r *remote) replaceSwitches(defects, variants []string) (fakeserver.Switches, error) {
	return r.switchesCall("PUT", map[string][]string{"defects": nonNil(defects), "variants": nonNil(variants)})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (r *remote) restoreSwitches() (fakeserver.Switches, error) { return r.switchesCall("DELETE", nil) }

func (r *remote) reset() error {
	_, err := r.call("POST", "reset", nil)
	return err
}

func (r *remote) requests(since int64) ([]fakeserver.Request, error) {
	b, err := r.call("GET", "requests?since="+strconv.FormatInt(since, 10), nil)
	if err != nil {
		return nil, err
	}
	var page struct{ Requests []fakeserver.Request }
	if err := json.Unmarshal(b, &page); err != nil {
		return nil, fmt.Errorf("invokeconftest: the requests: %w", err)
	}
	return page.Requests, nil
}

func (r *remote) close() error {
	r.client.CloseIdleConnections()
	return nil
}
