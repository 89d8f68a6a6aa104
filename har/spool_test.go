package har

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/invokeconf/invokeconf/traffic"
)

// exchanges returns n exchanges in the order a proxy might finish them:
// shuffled, some starting at the same instant.
func exchanges(n int) []traffic.Exchange {
	base := sample()
	rnd := rand.New(rand.NewSource(1))
	xs := make([]traffic.Exchange, n)
	for i := range xs {
		x := base
		x.ID = i + 1
		x.Start = base.Start.Add(time.Duration(i/3) * time.Millisecond) // three per instant
		x.Request.URL = fmt.Sprintf("http://127.0.0.1:1/api/invoke/agt?n=%d", i)
		if i%5 == 0 {
			x.Response = nil
			x.Error = "unreachable"
		}
		xs[i] = x
	}
	rnd.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
	return xs
}

// TestWriteFormat: Write's streamed file is byte for byte what
// encoding/json writes for the whole File.
func TestWriteFormat(t *testing.T) {
	for _, n := range []int{0, 1, 7} {
		for _, version := range []string{"invokeconf", "v<1>&\"x\""} {
			xs := exchanges(n)
			var got bytes.Buffer
			if err := Write(&got, version, xs); err != nil {
				t.Fatal(err)
			}
			sort.SliceStable(xs, func(i, j int) bool { return keyOf(xs[i]).less(keyOf(xs[j])) })
			f := File{Log: Log{Version: "1.2", Creator: Creator{Name: "invokeconf", Version: version}, Entries: []Entry{}}}
			for _, x := range xs {
				f.Log.Entries = append(f.Log.Entries, entryOf(x))
			}
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetIndent("", "  ")
			if err := enc.Encode(f); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("%d entries, version %q: Write wrote\n%s\nencoding/json\n%s", n, version, got.String(), want.String())
			}
		}
	}
}

// TestSpoolMatchesWrite: a Spool writes the same HAR file as Write, for a
// small recording and for one of several sorted runs, and leaves no file
// behind.
func TestSpoolMatchesWrite(t *testing.T) {
	for _, n := range []int{0, 3, 2*spoolRun + 17} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			xs := exchanges(n)
			var want bytes.Buffer
			if err := Write(&want, "test", xs); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			s, err := NewSpool(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range xs {
				if err := s.Add(x); err != nil {
					t.Fatal(err)
				}
			}
			if s.Len() != n || len(s.run) >= spoolRun {
				t.Errorf("Len %d, %d places in memory", s.Len(), len(s.run))
			}
			var got bytes.Buffer
			if err := s.WriteHAR(&got, "test"); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("the spool wrote %d bytes, Write %d; they differ", got.Len(), want.Len())
			}
			if back, err := Read(&got, nil); err != nil || len(back) != n {
				t.Errorf("read back %d entries, %v", len(back), err)
			}
			if err := s.Close(); err != nil {
				t.Error(err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("%d files left after Close", len(ents))
			}
			if err := s.Add(sample()); err == nil {
				t.Error("Add after Close did not fail")
			}
		})
	}
}
