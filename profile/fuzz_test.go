package profile

import (
	"os"
	"testing"
)

// FuzzParse: any document parses or is refused with an error, never a panic,
// and a parsed profile can be validated and written back.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("../fixtures/reference.yaml"); err == nil {
		f.Add(b)
	}
	for _, seed := range []string{"baseURL: http://x\nkeys:\n  agnet: sk-svc-a-b-c\n", "baseURL: [", "{}", "- a\n- b", "capabilities:\n  script: [echo, say]\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(b)
		if err != nil {
			return
		}
		_ = p.Validate()
		if _, err := p.Marshal(); err != nil {
			t.Fatalf("a parsed profile does not marshal: %v", err)
		}
	})
}

// FuzzApplyEnv: any value of any variable is applied or refused with an
// error, never a panic.
func FuzzApplyEnv(f *testing.F) {
	f.Add(uint8(0), "http://127.0.0.1:1")
	f.Add(uint8(3), "sk-svc-a-b-c")
	f.Add(uint8(40), "true")
	f.Add(uint8(41), "echo,say")
	f.Add(uint8(200), "")
	f.Fuzz(func(t *testing.T, which uint8, value string) {
		p := &Profile{}
		fields := p.Fields()
		env := fields[int(which)%len(fields)].Env
		_, _ = p.ApplyEnv(func(name string) (string, bool) { return value, name == env })
		_ = p.Validate()
	})
}
