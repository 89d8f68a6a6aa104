package fakeserver

import (
	"mime"
	"net/http"
	"strings"
)

// headerVariants applies the header variants (charset-utf8, header-case) to
// every response as its header goes out, whichever handler wrote it.
func (s *view) headerVariants(w http.ResponseWriter) http.ResponseWriter {
	if !s.variant(varCharsetUTF8) && !s.variant(varHeaderCase) {
		return w
	}
	return &variantWriter{ResponseWriter: w, s: s}
}

type variantWriter struct {
	http.ResponseWriter
	s    *view
	sent bool
}

func (v *variantWriter) WriteHeader(code int) {
	v.apply()
	v.ResponseWriter.WriteHeader(code)
}

func (v *variantWriter) Write(b []byte) (int, error) {
	v.apply()
	return v.ResponseWriter.Write(b)
}

// FlushError lets http.ResponseController flush through the wrapper, after
// the header is rewritten.
func (v *variantWriter) FlushError() error {
	v.apply()
	return http.NewResponseController(v.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (v *variantWriter) Unwrap() http.ResponseWriter { return v.ResponseWriter }

func (v *variantWriter) apply() {
	if v.sent {
		return
	}
	v.sent = true
	h := v.Header()
	if ct := h.Get("Content-Type"); ct != "" && v.s.variant(varCharsetUTF8) {
		if _, params, err := mime.ParseMediaType(ct); err == nil && params["charset"] == "" {
			h.Set("Content-Type", ct+"; charset=utf-8")
		}
	}
	if v.s.variant(varHeaderCase) {
		for k, vals := range h {
			// net/http sniffs and adds a second Content-Type when it does
			// not find the canonical key, so that one stays.
			if k == "Content-Type" || strings.ToLower(k) == k {
				continue
			}
			delete(h, k)
			h[strings.ToLower(k)] = vals
		}
	}
}
