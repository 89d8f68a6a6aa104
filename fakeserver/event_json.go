package fakeserver

import (
	"encoding/json"
	"strconv"
)

// appendEventJSON appends ev as JSON, byte for byte what json.Marshal
// writes for it (event_json_test.go holds the two together), without
// reflection: every answer encodes its events, and json.Marshal was most of
// what a JSON envelope cost. An event with a tool's arguments (raw JSON,
// which json.Marshal compacts and escapes) goes through json.Marshal.
func appendEventJSON(b []byte, ev *Event) []byte {
	if ev.ToolInput != nil || ev.ToolCall != nil {
		e := *ev // a copy escapes, so that ev need not
		out, _ := json.Marshal(e)
		return append(b, out...)
	}
	b = append(b, `{"content":`...)
	b = appendJSONString(b, ev.Content)
	if ev.ContentID != "" {
		b = append(b, `,"contentID":`...)
		b = appendJSONString(b, ev.ContentID)
	}
	b = append(b, `,"runID":`...)
	b = appendJSONString(b, ev.RunID)
	b = append(b, `,"threadID":`...)
	b = appendJSONString(b, ev.ThreadID)
	b = append(b, `,"runComplete":`...)
	b = strconv.AppendBool(b, ev.RunComplete)
	if ev.Error != "" {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, ev.Error)
	}
	b = append(b, `,"time":"`...)
	b = ev.Time.appendText(b)
	b = append(b, '"')
	if ev.WaitingOnModel {
		b = append(b, `,"waitingOnModel":true`...)
	}
	if ev.Step != nil {
		b = append(b, `,"step":{"description":`...)
		b = appendJSONString(b, ev.Step.Description)
		b = append(b, '}')
	}
	if p := ev.Prompt; p != nil {
		b = append(b, `,"prompt":{"fields":`...)
		if p.Fields == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for i, f := range p.Fields {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, f)
			}
			b = append(b, ']')
		}
		b = append(b, `,"message":`...)
		b = appendJSONString(b, p.Message)
		b = append(b, `,"sensitive":`...)
		b = strconv.AppendBool(b, p.Sensitive)
		b = append(b, '}')
	}
	if ev.Input != "" {
		b = append(b, `,"input":`...)
		b = appendJSONString(b, ev.Input)
	}
	if ev.ReplayComplete {
		b = append(b, `,"replayComplete":true`...)
	}
	if ev.Username != "" {
		b = append(b, `,"username":`...)
		b = appendJSONString(b, ev.Username)
	}
	if ev.Notice != "" {
		b = append(b, `,"notice":`...)
		b = appendJSONString(b, ev.Notice)
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string the way json.Marshal writes
// it: printable ASCII that needs no escape as it is, anything else through
// json.Marshal itself (its escapes, HTML's characters included, and its
// replacement of invalid UTF-8).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plainJSON[s[i]] {
			out, _ := json.Marshal(s)
			return append(b, out...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainJSON marks the bytes json.Marshal writes in a string as they are:
// printable ASCII but the quote, the backslash and HTML's <, > and &.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c <= 0x7e; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
