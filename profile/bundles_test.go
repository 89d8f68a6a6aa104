package profile

import (
	"errors"
	"testing"
)

func TestRoute(t *testing.T) {
	p := &Profile{Routes: map[string]string{
		"ok":      "put /api/bundles/installations/{id}",
		"spaced":  "  GET   /x  ",
		"nopath":  "GET",
		"relpath": "GET api/x",
	}}
	cases := []struct {
		name, method, path string
		missing, bad       bool
	}{
		{name: "ok", method: "PUT", path: "/api/bundles/installations/{id}"},
		{name: "spaced", method: "GET", path: "/x"},
		{name: "absent", missing: true},
		{name: "nopath", bad: true},
		{name: "relpath", bad: true},
	}
	for _, c := range cases {
		m, path, err := p.Route(c.name)
		var me *MissingError
		switch {
		case c.missing:
			if !errors.As(err, &me) {
				t.Errorf("%s: want a MissingError, got %v", c.name, err)
			}
		case c.bad:
			if err == nil || errors.As(err, &me) {
				t.Errorf("%s: want a format error, got %v", c.name, err)
			}
		case err != nil || m != c.method || path != c.path:
			t.Errorf("%s: got %q %q %v, want %q %q", c.name, m, path, err, c.method, c.path)
		}
	}
}
