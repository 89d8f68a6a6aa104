package profile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// UnknownField is a key of a profile file that no field of Profile reads.
type UnknownField struct {
	Path string // e.g. "keys.wildcardlimited"
	Line int
	// Suggest is the known field it most likely meant, "" when none is close.
	Suggest string
}

func (u UnknownField) String() string {
	s := fmt.Sprintf("line %d: %s", u.Line, u.Path)
	if u.Suggest != "" {
		s += " (did you mean " + u.Suggest + "?)"
	}
	return s
}

// UnknownFieldsError lists every unknown field of a profile file at once, so
// a vendor fixes them in one go.
type UnknownFieldsError struct{ Fields []UnknownField }

func (e *UnknownFieldsError) Error() string {
	lines := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		lines[i] = "  " + f.String()
	}
	return "unknown fields (a misspelt field would leave its scenarios untested):\n" + strings.Join(lines, "\n")
}

// FindUnknownFields returns the keys of a profile document that Profile does
// not know, with a suggestion for each.
func FindUnknownFields(b []byte) ([]UnknownField, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, fmt.Errorf("decode YAML: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	var out []UnknownField
	walkUnknown(doc.Content[0], reflect.TypeOf(Profile{}), "", &out)
	return out, nil
}

func walkUnknown(n *yaml.Node, t reflect.Type, prefix string, out *[]UnknownField) {
	if n.Kind != yaml.MappingNode || t.Kind() != reflect.Struct {
		return
	}
	known := map[string]reflect.Type{}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		if name := yamlName(t.Field(i)); name != "" {
			known[name] = t.Field(i).Type
			names = append(names, name)
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		path := k.Value
		if prefix != "" {
			path = prefix + "." + k.Value
		}
		ft, ok := known[k.Value]
		if !ok {
			u := UnknownField{Path: path, Line: k.Line}
			if s := closest(k.Value, names); s != "" {
				u.Suggest = s
				if prefix != "" {
					u.Suggest = prefix + "." + s
				}
			}
			*out = append(*out, u)
			continue
		}
		walkUnknown(v, ft, path, out)
	}
}

// closest returns the candidate nearest to s: equal ignoring case, or within
// an edit distance of 2.
func closest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if strings.EqualFold(c, s) {
			return c
		}
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
