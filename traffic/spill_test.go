package traffic

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// record feeds pieces to a body recorder of rc and returns it unfinished.
func record(rc *Recorder, start time.Time, pieces []string) *BodyRecorder {
	br := rc.Body(start)
	for i, p := range pieces {
		br.Add([]byte(p), start.Add(time.Duration(i)*time.Millisecond))
	}
	return br
}

// spillDirHolds returns the bytes of every file in dir.
func spillDirHolds(t *testing.T, dir string) (string, int) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	return all.String(), len(ents)
}

// TestSpillMatchesMemory: a body that spills finishes exactly as one kept
// in memory, its spill file holds no piece of a key while it is recorded,
// and it is gone after Finish.
func TestSpillMatchesMemory(t *testing.T) {
	many := make([]string, maxChunks+2*spillChunks)
	for i := range many {
		many[i] = "x"
	}
	for _, tc := range []struct {
		name      string
		maxRecord int64
		pieces    []string
	}{
		{"under the threshold", 0, []string{"short"}},
		{"keys in many chunks", 0, []string{"before " + key + " after ", strings.Repeat("padding ", 10), "piece S3cr3tS3cr",
			" and sk-svc-bob-k2-Other0Secret99 end", strings.Repeat("tail ", 20), key}},
		{"past max-record", 50, []string{strings.Repeat("a", 30), key, strings.Repeat("b", 40), "c"}},
		{"tiny chunks", 0, many},
		{"past the chunk entries' cap", 10, many[:maxChunks+3*spillChunks/2]},
		{"not UTF-8", 0, []string{"\xff\xfe", strings.Repeat("\x00", 100), "\xc3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			mem := NewRecorder(tc.maxRecord, nil)
			mem.Header(map[string][]string{"Authorization": {"Bearer " + key}})
			want := record(mem, start, tc.pieces).Finish()

			dir := t.TempDir()
			sp := NewRecorder(tc.maxRecord, nil)
			sp.SpillDir, sp.SpillThreshold = dir, 16
			sp.Header(map[string][]string{"Authorization": {"Bearer " + key}})
			br := record(sp, start, tc.pieces)
			held, files := spillDirHolds(t, dir)
			for _, leak := range []string{"S3cr3t", "Other0Secret", "3cr3tS"} {
				if strings.Contains(held, leak) {
					t.Errorf("a spill file holds %q", leak)
				}
			}
			if len(br.held) > spillChunks || int64(len(br.buf)) > 16+int64(len(key)+200) {
				t.Errorf("%d chunks and %d bytes held in memory", len(br.held), len(br.buf))

			}
			got := br.Finish()
			if !reflect.DeepEqual(got, want) {
				t.Errorf("spilled body differs:\n got  %d chunks %+v\n want %d chunks %+v", len(got.Chunks), got.Bytes(),
					len(want.Chunks), want.Bytes())
			}
			if _, n := spillDirHolds(t, dir); n != 0 {
				t.Errorf("%d files left after Finish (%d while recording)", n, files)
			}
		})
	}
}

// TestSpillFailure: a spill directory that cannot be written keeps memory
// bounded: the body keeps what it held and records no more bytes.
func TestSpillFailure(t *testing.T) {
	rc := NewRecorder(0, nil)
	rc.SpillDir, rc.SpillThreshold = filepath.Join(t.TempDir(), "gone"), 10
	start := time.Now()
	a, b, c := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	br := record(rc, start, []string{a, b, c, "d"})
	body := br.Finish()
	// The first spill, of a's chunk (b's stays as the tail a key could
	// still straddle), fails at b.
	if got := string(body.Bytes()); got != a+b || !body.Truncated || body.Size != 121 || len(body.Chunks) != 4 {
		t.Errorf("kept %q (truncated %v, size %d, %d chunks)", got, body.Truncated, body.Size, len(body.Chunks))
	}
}
