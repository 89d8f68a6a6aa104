package steps

import (
	"github.com/invokeconf/invokeconf/checks"
	"github.com/invokeconf/invokeconf/traffic"
)

// cellOf returns the cell of an exchange the scenario is about to send (x
// holds its request only): the invoke route by what {id} names in the
// profile, the form it asks for, how its run ends (the script's @fail, or a
// client that aborts or goes away: aborting), the headers it carries. A
// follow-up on a thread (events, thread, abort) is in the cell of the run
// the scenario last made on that thread; ok is false for any other request.
func (w *World) cellOf(x *checks.View, aborting bool) (checks.Cell, bool) {
	rt := x.Route()
	var route string
	switch rt.Kind {
	case checks.RouteInvoke:
		switch {
		case rt.Thread != "" && rt.Threads:
			route = checks.RouteThreadsPath
		case rt.Thread != "":
			route = checks.RouteThreadPath
		default:
			route = map[routeKind]string{routeAgentID: checks.RouteAgentID, routeAlias: checks.RouteAlias,
				routeThreadID: checks.RouteThreadID}[w.idKind(rt.ID)]
		}
	case checks.RouteProjectInvoke:
		route = checks.RouteProject
		if rt.Thread != "" {
			route = checks.RouteProjectThread
		}
	case checks.RouteEvents, checks.RouteThread, checks.RouteAbort:
		w.cellMu.Lock()
		defer w.cellMu.Unlock()
		c, ok := w.threadCells[rt.ID]
		return c, ok
	}
	if route == "" {
		return checks.Cell{}, false
	}
	c := checks.Cell{Route: route, Form: checks.FormOf(x), Outcome: checks.ScriptOutcome(x), Headers: checks.HeadersOf(x)}
	if aborting {
		c.Outcome = checks.OutcomeAborted
	}
	return c, true
}

// noteThreadCell remembers the cell of the run an invoke's answer put on
// its thread (its headers have arrived), for the follow-ups on it.
func (w *World) noteThreadCell(x *traffic.Exchange, c checks.Cell) {
	if k := checks.ParseRoute(x.Request.Method, x.Request.URL).Kind; k != checks.RouteInvoke && k != checks.RouteProjectInvoke {
		return
	}
	w.cellMu.Lock()
	defer w.cellMu.Unlock()
	w.lastCell = &c
	if t := x.Response.Header.Get("X-SVC-Thread-Id"); t != "" {
		w.threadCells[t] = c
	}
}

// LastCell returns the cell of the scenario's last invoke, nil when it made
// none.
func (w *World) LastCell() *checks.Cell {
	w.cellMu.Lock()
	defer w.cellMu.Unlock()
	return w.lastCell
}

// abortingThread marks the run on a thread as aborted (the scenario is
// about to abort it): its follow-ups are in an aborted run's cell.
func (w *World) abortingThread(thread string) {
	w.cellMu.Lock()
	defer w.cellMu.Unlock()
	if c, ok := w.threadCells[thread]; ok {
		c.Outcome = checks.OutcomeAborted
		w.threadCells[thread] = c
	}
}
