package runner

import "github.com/invokeconf/invokeconf/internal/suggest"

// didYouMean returns " (did you mean X?)" for the known name closest to
// name, or "" when none is close.
func didYouMean(name string, known []string) string { return suggest.DidYouMean(name, known) }

// Closest returns the known name closest to name, or "" when none is close
// (suggest.Closest).
func Closest(name string, known []string) string { return suggest.Closest(name, known) }
