package har

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/invokeconf/invokeconf/traffic"
)

// Page is a HAR page: here, the scenario whose exchanges refer to it.
type Page struct {
	StartedDateTime string   `json:"startedDateTime"`
	ID              string   `json:"id"`
	Title           string   `json:"title"`
	PageTimings     struct{} `json:"pageTimings"`
}

// Writer writes a HAR file as exchanges come, in the order they are added
// (not sorted by start: a reader that judges the file in its order judges
// them in the order they were judged when written), holding nothing but
// the pages seen: each entry goes out as it is added. Close writes the
// pages and ends the file. It is safe for concurrent use.
type Writer struct {
	mu    sync.Mutex
	bw    *bufio.Writer
	n     int
	pages []Page
	seen  map[string]bool
	err   error
}

// NewWriter starts a HAR file on w.
func NewWriter(w io.Writer, creatorVersion string) (*Writer, error) {
	version, err := json.Marshal(creatorVersion)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("{\n  \"log\": {\n    \"version\": \"1.2\",\n    \"creator\": {\n      \"name\": \"invokeconf\",\n" +
		"      \"version\": ")
	bw.Write(version)
	bw.WriteString("\n    },\n    \"entries\": [")
	return &Writer{bw: bw, seen: map[string]bool{}}, nil
}

// Add writes x's entry; a page ID other than "" refers it to that page
// (titled title, started when its first exchange did). After an error
// every later Add and Close return it.
func (w *Writer) Add(x traffic.Exchange, page, title string) error {
	e := entryOf(x)
	e.Pageref = page
	b, err := json.MarshalIndent(e, entryIndent, "  ")
	if err != nil {
		return fmt.Errorf("har: entry %d: %w", x.ID, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if page != "" && !w.seen[page] {
		w.seen[page] = true
		w.pages = append(w.pages, Page{StartedDateTime: x.Start.UTC().Format(time.RFC3339Nano), ID: page, Title: title})
	}
	if w.n > 0 {
		w.bw.WriteByte(',')
	}
	w.n++
	w.bw.WriteString("\n" + entryIndent)
	if _, err := w.bw.Write(b); err != nil {
		w.err = fmt.Errorf("har: %w", err)
	}
	return w.err
}

// Len returns the number of entries written.
func (w *Writer) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Close ends the entries, writes the pages and ends the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.n > 0 {
		w.bw.WriteString("\n    ")
	}
	w.bw.WriteString("]")
	if len(w.pages) > 0 {
		b, err := json.MarshalIndent(w.pages, "    ", "  ")
		if err != nil {
			return fmt.Errorf("har: pages: %w", err)
		}
		w.bw.WriteString(",\n    \"pages\": ")
		w.bw.Write(b)
	}
	w.bw.WriteString("\n  }\n}\n")
	if err := w.bw.Flush(); err != nil {
		w.err = fmt.Errorf("har: %w", err)
	}
	return w.err
}
