package har

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// TestWriterKeepsTheOrderAdded: a Writer's file holds the entries in the
// order they were added (as a run judged them), each referring to its
// page, and is the JSON encoding/json reads as a File with those pages; a
// Reader reads the exchanges back in that order.
func TestWriterKeepsTheOrderAdded(t *testing.T) {
	for _, n := range []int{0, 1, 7} {
		xs := exchanges(n) // shuffled: not in start order
		var buf bytes.Buffer
		w, err := NewWriter(&buf, "v<1>")
		if err != nil {
			t.Fatal(err)
		}
		var want []Entry
		for i, x := range xs {
			page := fmt.Sprintf("p%d", i%2)
			if err := w.Add(x, page, "scenario "+page); err != nil {
				t.Fatal(err)
			}
			e := entryOf(x)
			e.Pageref = page
			want = append(want, e)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		var f struct {
			Log struct {
				Entries []Entry `json:"entries"`
				Pages   []Page  `json:"pages"`
			} `json:"log"`
		}
		if err := json.Unmarshal(buf.Bytes(), &f); err != nil {
			t.Fatalf("%d entries: %v\n%s", n, err, buf.String())
		}
		if len(f.Log.Entries) != n || (n > 0 && !reflect.DeepEqual(f.Log.Entries, want)) {
			t.Errorf("%d entries: the file holds other entries than those added, in their order", n)
		}
		if pages := min(n, 2); len(f.Log.Pages) != pages {
			t.Errorf("%d entries: %d pages, want %d", n, len(f.Log.Pages), pages)
		}
		got, err := Read(bytes.NewReader(buf.Bytes()), nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i].ID != xs[i].ID {
				t.Errorf("%d entries: read #%d in place %d, added #%d there", n, got[i].ID, i, xs[i].ID)
			}
		}
	}
}
