package profile

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// EnvPrefix starts the name of every environment variable that sets a
// profile field.
const EnvPrefix = "INVOKECONF_"

// Field is one leaf setting of a profile, found by reflection over the yaml
// tags, so a field added to Profile gets its path and variable for free.
type Field struct {
	// Path is the field's place in the YAML, e.g. "keys.agent".
	Path string
	// Env is the environment variable that overrides it, e.g.
	// INVOKECONF_KEYS_AGENT (see EnvName).
	Env string
	// Kind says how the variable's value is read: "string", "bool", "int",
	// "list" (comma-separated) or "map" (comma-separated name=value pairs).
	Kind string
	// Secret is true for every field under keys, and for fields tagged
	// `invokeconf:"secret"` (and everything inside them): their values never
	// appear in a report or log line.
	Secret bool

	v reflect.Value
}

// Value renders the field's current value in the variable's format.
func (f Field) Value() string {
	switch f.v.Kind() {
	case reflect.String:
		return f.v.String()
	case reflect.Bool:
		return strconv.FormatBool(f.v.Bool())
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(f.v.Int(), 10)
	case reflect.Slice:
		parts := make([]string, f.v.Len())
		for i := range parts {
			parts[i] = f.v.Index(i).String()
		}
		return strings.Join(parts, ",")
	case reflect.Map:
		keys := make([]string, 0, f.v.Len())
		for _, k := range f.v.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + f.v.MapIndex(reflect.ValueOf(k)).String()
		}
		return strings.Join(parts, ",")
	}
	return ""
}

// IsZero reports whether the field is unset.
func (f Field) IsZero() bool {
	return f.v.IsZero() || (f.Kind == "list" || f.Kind == "map") && f.v.Len() == 0
}

// Blank empties the field: "", false, 0, or no items. A profile with the
// field blanked is what a vendor who leaves it out hands the harness; the
// scenarios that need it become untested (see runner.Gaps).
func (f Field) Blank() { f.v.Set(reflect.Zero(f.v.Type())) }

// set parses a variable's value into the field.
func (f Field) set(s string) error {
	switch f.v.Kind() {
	case reflect.String:
		f.v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%s=%q: want true or false", f.Env, s)
		}
		f.v.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return fmt.Errorf("%s=%q: want an integer", f.Env, s)
		}
		f.v.SetInt(n)
	case reflect.Slice:
		var items []string
		for _, it := range strings.Split(s, ",") {
			if it = strings.TrimSpace(it); it != "" {
				items = append(items, it)
			}
		}
		f.v.Set(reflect.ValueOf(items))
	case reflect.Map:
		m := reflect.MakeMap(f.v.Type())
		for _, it := range strings.Split(s, ",") {
			if it = strings.TrimSpace(it); it == "" {
				continue
			}
			k, v, ok := strings.Cut(it, "=")
			if !ok {
				return fmt.Errorf("%s: %q is not name=value", f.Env, it)
			}
			m.SetMapIndex(reflect.ValueOf(strings.TrimSpace(k)), reflect.ValueOf(strings.TrimSpace(v)))
		}
		f.v.Set(m)
	default:
		return fmt.Errorf("%s: fields of kind %s cannot be set from the environment", f.Env, f.v.Kind())
	}
	return nil
}

// Fields lists every leaf field of the profile in declaration order. The
// returned fields write through to p.
func (p *Profile) Fields() []Field {
	var out []Field
	walkFields(reflect.ValueOf(p).Elem(), "", false, &out)
	return out
}

func walkFields(v reflect.Value, prefix string, secret bool, out *[]Field) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name := yamlName(sf)
		if name == "" {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		fv := v.Field(i)
		sec := secret || path == "keys" || sf.Tag.Get("invokeconf") == "secret"
		if fv.Kind() == reflect.Struct {
			walkFields(fv, path, sec, out)
			continue
		}
		kind := fv.Kind().String()
		switch fv.Kind() {
		case reflect.Slice:
			kind = "list"
		case reflect.Map:
			kind = "map"
		case reflect.Int64:
			kind = "int"
		}
		*out = append(*out, Field{Path: path, Env: EnvName(path), Kind: kind, Secret: sec, v: fv})
	}
}

// yamlName is the YAML key of a struct field ("" when the field is not in
// the YAML).
func yamlName(sf reflect.StructField) string {
	if !sf.IsExported() {
		return ""
	}
	tag := sf.Tag.Get("yaml")
	name, _, _ := strings.Cut(tag, ",")
	switch name {
	case "-":
		return ""
	case "":
		return strings.ToLower(sf.Name)
	}
	return name
}

// EnvName turns a field path into its environment variable: the prefix, then
// each path segment split at its camel-case humps, upper-cased and joined
// with underscores. baseURL -> INVOKECONF_BASE_URL, keys.wildcardLimited ->
// INVOKECONF_KEYS_WILDCARD_LIMITED, agents.main.id -> INVOKECONF_AGENTS_MAIN_ID.
func EnvName(path string) string {
	if v, ok := envNames.Load(path); ok {
		return v.(string)
	}
	v := envName(path)
	envNames.Store(path, v)
	return v
}

// envNames caches EnvName: every redaction walks the fields (RedactEnv), and
// a run redacts each exchange of each scenario.
var envNames sync.Map

func envName(path string) string {
	var words []string
	for _, seg := range strings.Split(path, ".") {
		words = append(words, splitCamel(seg)...)
	}
	return EnvPrefix + strings.ToUpper(strings.Join(words, "_"))
}

// splitCamel splits "nonAgentID" into non, Agent, ID and "baseURL" into
// base, URL; a run of capitals ends before a capital that starts a word.
func splitCamel(s string) []string {
	rs := []rune(s)
	var words []string
	start := 0
	for i := 1; i < len(rs); i++ {
		prev, cur := rs[i-1], rs[i]
		nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
		if unicode.IsUpper(cur) && (unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && nextLower) ||
			!unicode.IsLetter(cur) && !unicode.IsDigit(cur) {
			if w := strings.Trim(string(rs[start:i]), "-_"); w != "" {
				words = append(words, w)
			}
			start = i
		}
	}
	if w := strings.Trim(string(rs[start:]), "-_"); w != "" {
		words = append(words, w)
	}
	return words
}

// ApplyEnv overrides fields from environment variables; lookup is usually
// os.LookupEnv. A variable that is set, even to "", wins over the file. It
// returns the variables it used.
func (p *Profile) ApplyEnv(lookup func(string) (string, bool)) ([]string, error) {
	var used []string
	for _, f := range p.Fields() {
		v, ok := lookup(f.Env)
		if !ok {
			continue
		}
		if err := f.set(v); err != nil {
			return used, err
		}
		if name, ok := strings.CutPrefix(f.Path, "capabilities."); ok {
			p.DeclareCapability(name)
		}
		used = append(used, f.Env)
	}
	return used, nil
}

// Capability reports whether the profile declares a capability on, by its
// YAML name under capabilities (e.g. "researchMode"); known is false when
// the name is not a capability at all.
func (p *Profile) Capability(name string) (on, known bool) {
	for _, f := range p.Fields() {
		if f.Path == "capabilities."+name && f.Kind == "bool" {
			return f.v.Bool(), true
		}
	}
	return false, false
}

// CapabilityNames lists the capabilities a profile can declare.
func CapabilityNames() []string {
	var out []string
	for _, f := range (&Profile{}).Fields() {
		if name, ok := strings.CutPrefix(f.Path, "capabilities."); ok && f.Kind == "bool" {
			out = append(out, name)
		}
	}
	return out
}

// LoadWithEnv reads a profile file and then applies the environment
// overrides (see ApplyEnv). It returns the variables used.
func LoadWithEnv(path string, lookup func(string) (string, bool)) (*Profile, []string, error) {
	p, err := Load(path)
	if err != nil {
		return nil, nil, err
	}
	used, err := p.ApplyEnv(lookup)
	if err != nil {
		return nil, nil, fmt.Errorf("environment: %w", err)
	}
	return p, used, nil
}
