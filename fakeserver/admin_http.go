package fakeserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/invokeconf/invokeconf/internal/httpserve"
	"github.com/invokeconf/invokeconf/internal/suggest"
)

// AdminPrefix starts every admin route. No route of the spec or of the
// bundle contract starts with it.
const AdminPrefix = "/_invokeconf/admin/"

// The admin routes (docs/clients.md), open with Config.AdminKey only.
//
//	GET    /_invokeconf/admin/switches  every defect and variant with its state (Switches)
//	PATCH  /_invokeconf/admin/switches  {"variants":{"sse-crlf":true},"defects":{"no-close":false}}: switch some
//	PUT    /_invokeconf/admin/switches  {"variants":["sse-crlf"],"defects":[]}: exactly these on
//	DELETE /_invokeconf/admin/switches  back to the start-up switches
//	POST   /_invokeconf/admin/reset     threads, runs and installed bundles back to the seed
//	GET    /_invokeconf/admin/requests  ?since=SEQ: the recent requests, keys by ID only
//	GET    /_invokeconf/admin/profile   the served profile (YAML), keys included
var adminRoutes = []struct {
	pattern string
	handle  func(*Server, http.ResponseWriter, *http.Request)
}{
	{"GET " + AdminPrefix + "switches", (*Server).adminSwitches},
	{"PATCH " + AdminPrefix + "switches", (*Server).adminPatchSwitches},
	{"PUT " + AdminPrefix + "switches", (*Server).adminPutSwitches},
	{"DELETE " + AdminPrefix + "switches", (*Server).adminRestoreSwitches},
	{"POST " + AdminPrefix + "reset", (*Server).adminReset},
	{"GET " + AdminPrefix + "requests", (*Server).adminRequests},
	{"GET " + AdminPrefix + "profile", (*Server).adminProfile},
}

// maxAdminBody bounds an admin request's body.
const maxAdminBody = 64 << 10

func isAdminPath(p string) bool {
	return p+"/" == AdminPrefix || strings.HasPrefix(p, AdminPrefix)
}

// serveAdmin answers an admin route: the admin key first, then the route.
// Neither defects nor variants touch these answers, and they are not
// recorded among the recent requests.
func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request) {
	tok, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case r.Header.Get("Authorization") == "" || !bearer:
		w.Header().Set("WWW-Authenticate", `Bearer realm="invokeconf-admin"`)
		adminProblem(w, http.StatusUnauthorized, "the admin routes need Authorization: Bearer <admin key> (serve --admin-key)")
		return
	case !s.adminKeyMatches(tok):
		adminProblem(w, http.StatusForbidden, "this is not the admin key (a service key never is one)")
		return
	}
	s.ctl.adminMuxOnce.Do(func() {
		m := http.NewServeMux()
		for _, rt := range adminRoutes {
			m.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) { rt.handle(s, w, r) })
		}
		m.HandleFunc("GET "+AdminPrefix+"{$}", s.adminIndex)
		m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			var allow []string
			for _, rt := range adminRoutes {
				if method, path, _ := strings.Cut(rt.pattern, " "); path == r.URL.Path {
					allow = append(allow, method)
				}
			}
			if len(allow) > 0 {
				w.Header().Set("Allow", strings.Join(allow, ", "))
				adminProblem(w, http.StatusMethodNotAllowed, "%s %s: the route takes %s", r.Method, r.URL.Path, strings.Join(allow, ", "))
				return
			}
			adminProblem(w, http.StatusNotFound, "no admin route %s %s (GET %s lists them)", r.Method, r.URL.Path, AdminPrefix)
		})
		s.ctl.adminMux = m
	})
	s.ctl.adminMux.ServeHTTP(w, r)
}

// adminProblem writes an RFC 9457 problem, whatever the switches say.
func adminProblem(w http.ResponseWriter, status int, format string, args ...any) {
	b, _ := json.Marshal(problemBody{Type: "about:blank", Title: http.StatusText(status), Status: status,
		Detail: fmt.Sprintf(format, args...)})
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func (s *Server) adminIndex(w http.ResponseWriter, _ *http.Request) {
	var routes []string
	for _, rt := range adminRoutes {
		routes = append(routes, rt.pattern)
	}
	httpserve.WriteJSON(w, http.StatusOK, map[string]any{"routes": routes})
}

func (s *Server) adminSwitches(w http.ResponseWriter, _ *http.Request) {
	httpserve.WriteJSON(w, http.StatusOK, s.Switches())
}

func (s *Server) adminPatchSwitches(w http.ResponseWriter, r *http.Request) {
	var c SwitchChange
	if !readAdminJSON(w, r, &c, `{"variants":{"NAME":true},"defects":{"NAME":false}}`) {
		return
	}
	state, err := s.SetSwitches(c)
	answerSwitches(w, state, err)
}

// switchList is the body of PUT .../switches.
type switchList struct {
	Defects  []string `json:"defects"`
	Variants []string `json:"variants"`
}

func (s *Server) adminPutSwitches(w http.ResponseWriter, r *http.Request) {
	var l switchList
	if !readAdminJSON(w, r, &l, `{"variants":["NAME"],"defects":["NAME"]}`) {
		return
	}
	state, err := s.ReplaceSwitches(l.Defects, l.Variants)
	answerSwitches(w, state, err)
}

func (s *Server) adminRestoreSwitches(w http.ResponseWriter, _ *http.Request) {
	httpserve.WriteJSON(w, http.StatusOK, s.RestoreSwitches())
}

func answerSwitches(w http.ResponseWriter, state Switches, err error) {
	var se *SwitchError
	switch {
	case errors.As(err, &se) && se.Conflict:
		adminProblem(w, http.StatusConflict, "%s", se.Error())
	case err != nil:
		adminProblem(w, http.StatusBadRequest, "%v", err)
	default:
		httpserve.WriteJSON(w, http.StatusOK, state)
	}
}

func (s *Server) adminReset(w http.ResponseWriter, _ *http.Request) {
	if err := s.Reset(); err != nil {
		adminProblem(w, http.StatusInternalServerError, "reset: %v", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// requestsPage is the answer of GET .../requests.
type requestsPage struct {
	Requests []Request `json:"requests"`
	// Last is the Seq of the last request listed (or the since given): the
	// since of the next call.
	Last int64 `json:"last"`
}

func (s *Server) adminRequests(w http.ResponseWriter, r *http.Request) {
	var since int64
	if v := r.URL.Query().Get("since"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			adminProblem(w, http.StatusBadRequest, "since=%q: want the seq of a request (a whole number from 0)", v)
			return
		}
		since = n
	}
	page := requestsPage{Requests: s.Requests(since), Last: since}
	if n := len(page.Requests); n > 0 {
		page.Last = page.Requests[n-1].Seq
	}
	httpserve.WriteJSON(w, http.StatusOK, page)
}

// adminProfile answers the served profile, its base URL the one the
// request came to: a remote test suite reads its keys and IDs here.
func (s *Server) adminProfile(w http.ResponseWriter, r *http.Request) {
	p := s.Profile()
	p.BaseURL = "http://" + r.Host
	b, err := p.Marshal()
	if err != nil {
		adminProblem(w, http.StatusInternalServerError, "profile: %v", err)
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(b)
}

// readAdminJSON decodes a bounded JSON body into v, refusing unknown
// members; on failure it answers 400, showing the shape wanted.
func readAdminJSON(w http.ResponseWriter, r *http.Request, v any, shape string) bool {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxAdminBody+1))
	if err != nil {
		adminProblem(w, http.StatusBadRequest, "reading the body: %v", err)
		return false
	}
	if len(b) > maxAdminBody {
		adminProblem(w, http.StatusRequestEntityTooLarge, "the body is over %d bytes", maxAdminBody)
		return false
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "json: ")
		if f, ok := strings.CutPrefix(msg, "unknown field "); ok {
			msg += suggest.DidYouMean(strings.Trim(f, `"`), []string{"defects", "variants"})
		}
		adminProblem(w, http.StatusBadRequest, "the body is not the JSON wanted (%s): %s", shape, msg)
		return false
	}
	return true
}
