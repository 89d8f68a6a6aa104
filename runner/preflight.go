package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/invokeconf/invokeconf/profile"
)

// PreflightTimeout bounds each preflight request.
const PreflightTimeout = 5 * time.Second

// UnreachableError says the target did not answer HTTP at all.
type UnreachableError struct {
	BaseURL string
	Err     error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("the target %s is not reachable: %v (check baseURL in the profile or %s)",
		e.BaseURL, e.Err, profile.EnvName("baseURL"))
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Reachable checks that the target answers HTTP: any status will do. It
// sends GET {baseURL}/ without a key, which reads nothing and starts no run.
func Reachable(ctx context.Context, p *profile.Profile) error {
	ctx, cancel := context.WithTimeout(ctx, PreflightTimeout)
	defer cancel()
	base := strings.TrimRight(p.BaseURL, "/")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/", nil)
	if err != nil {
		return &UnreachableError{redactURL(p.BaseURL), err}
	}
	client := preflightClient()
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in the message already
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %s", PreflightTimeout)
		}
		return &UnreachableError{redactURL(p.BaseURL), err}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return nil
}

// KeyCheck is what the target said to one key of the profile.
type KeyCheck struct {
	Role   string `json:"role"`
	Env    string `json:"env"`
	Status int    `json:"status,omitempty"`
	OK     bool   `json:"ok"`
	Note   string `json:"note"`
}

// CheckKeys sends each key of the profile once to the target, on an invoke
// route for an agent that does not exist, so no run starts. A key the
// target knows is answered with anything but 401 (403 or 404 by the spec);
// the expired key must be answered 401 (ERR-05).
func CheckKeys(ctx context.Context, p *profile.Profile) []KeyCheck {
	var b [6]byte
	_, _ = rand.Read(b[:])
	target := strings.TrimRight(p.BaseURL, "/") + "/api/invoke/zz_invokeconf_check_" + hex.EncodeToString(b[:])
	var out []KeyCheck
	for _, f := range p.Fields() {
		role, ok := strings.CutPrefix(f.Path, "keys.")
		if !ok || f.Kind != "string" {
			continue
		}
		kc := KeyCheck{Role: role, Env: f.Env}
		if f.Value() == "" {
			kc.OK, kc.Note = true, "not set: its scenarios will be untested"
			out = append(out, kc)
			continue
		}
		kc.Status, kc.Note = keyStatus(ctx, target, f.Value())
		switch {
		case kc.Status == 0:
			// keyStatus said why.
		case role == "expired":
			kc.OK = kc.Status == http.StatusUnauthorized
			kc.Note = "answered 401, as an expired key must"
			if !kc.OK {
				kc.Note = fmt.Sprintf("answered %d, want 401: is it really expired? ERR-05 will fail", kc.Status)
			}
		case kc.Status == http.StatusUnauthorized:
			kc.Note = "answered 401: the target does not accept this key"
		case kc.Status >= 500:
			kc.Note = fmt.Sprintf("answered %d: the target failed", kc.Status)
		default:
			kc.OK, kc.Note = true, fmt.Sprintf("accepted (answered %d for an agent that does not exist)", kc.Status)
		}
		out = append(out, kc)
	}
	return out
}

func keyStatus(ctx context.Context, target, key string) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, PreflightTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader("invokeconf profile check"))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Accept", "application/json")
	client := preflightClient()
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Sprintf("no answer within %s", PreflightTimeout)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, "request failed: " + err.Error()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode, ""
}

func preflightClient() *http.Client {
	c := newClient()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// redactURL hides a password in a URL's user information.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	return u.Redacted()
}
