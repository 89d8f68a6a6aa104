package har

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/invokeconf/invokeconf/traffic"
)

// spoolRun is how many exchanges' places a Spool sorts in memory before it
// writes them out as one sorted run.
const spoolRun = 4096

// mergeBlock is how many places a run's cursor reads at a time when the
// runs are merged.
const mergeBlock = 128

// place says where an entry is in the data file and where it goes in the HAR
// file.
type place struct {
	key    order
	off, n int64
}

const placeSize = 32

// Spool keeps finished exchanges on disk, as the HAR entries Write would
// write for them, so a long recording is never held in memory: Add encodes
// an exchange (its keys already hidden by the recording) and appends it to a
// file, and WriteHAR writes the HAR file by merging their places in start
// order, reading each entry back as it goes. Memory holds the places of the
// last spoolRun exchanges only, and while WriteHAR runs, one block of places
// per spoolRun exchanges. It is safe for concurrent use.
type Spool struct {
	mu     sync.Mutex
	data   *os.File // the entries, in the order they were added
	dw     *bufio.Writer
	places *os.File // sorted runs of places
	run    []place  // the current run, not sorted yet
	runs   int      // runs in places, spoolRun places each
	off    int64
	err    error
	closed bool
}

// NewSpool returns a Spool whose files are temporary files in dir. Close
// removes them.
func NewSpool(dir string) (*Spool, error) {
	data, err := os.CreateTemp(dir, "entries-*.spool")
	if err != nil {
		return nil, fmt.Errorf("har spool: %w", err)
	}
	places, err := os.CreateTemp(dir, "places-*.spool")
	if err != nil {
		data.Close()
		os.Remove(data.Name())
		return nil, fmt.Errorf("har spool: %w", err)
	}
	return &Spool{data: data, dw: bufio.NewWriterSize(data, 64<<10), places: places}, nil
}

// errClosed is Add's error after Close.
var errClosed = errors.New("har spool: closed")

// unusable is why the spool takes nothing more (closed, or a write failed),
// or nil; s.mu is held.
func (s *Spool) unusable() error {
	if s.closed {
		return errClosed
	}
	return s.err
}

// Add writes x out. After a write error every later Add and WriteHAR returns
// that error.
func (s *Spool) Add(x traffic.Exchange) error {
	e, err := encodeEntry(x)
	if err != nil {
		return fmt.Errorf("har spool: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.unusable(); err != nil {
		return err
	}
	if _, err := s.dw.Write(e); err != nil {
		s.err = fmt.Errorf("har spool: %w", err)
		return s.err
	}
	s.run = append(s.run, place{key: keyOf(x), off: s.off, n: int64(len(e))})
	s.off += int64(len(e))
	if len(s.run) == spoolRun {
		s.flushRun()
	}
	return s.err
}

// Len returns the number of exchanges added.
func (s *Spool) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs*spoolRun + len(s.run)
}

// sortRun sorts the current run, stably: exchanges with the same key keep
// the order they were added in, as Write keeps them.
func (s *Spool) sortRun() {
	sort.SliceStable(s.run, func(i, j int) bool { return s.run[i].key.less(s.run[j].key) })
}

// flushRun writes the current run out, sorted.
func (s *Spool) flushRun() {
	s.sortRun()
	buf := make([]byte, 0, len(s.run)*placeSize)
	for _, p := range s.run {
		buf = appendPlace(buf, p)
	}
	if _, err := s.places.WriteAt(buf, int64(s.runs)*spoolRun*placeSize); err != nil {
		s.err = fmt.Errorf("har spool: %w", err)
		return
	}
	s.runs++
	s.run = s.run[:0]
}

func appendPlace(b []byte, p place) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(p.key.start))
	b = binary.BigEndian.AppendUint64(b, uint64(p.key.id))
	b = binary.BigEndian.AppendUint64(b, uint64(p.off))
	return binary.BigEndian.AppendUint64(b, uint64(p.n))
}

func readPlace(b []byte) place {
	return place{key: order{int64(binary.BigEndian.Uint64(b)), int64(binary.BigEndian.Uint64(b[8:]))},
		off: int64(binary.BigEndian.Uint64(b[16:])), n: int64(binary.BigEndian.Uint64(b[24:]))}
}

// cursor reads one sorted run's places.
type cursor struct {
	run   int
	block []place // places read, not yet taken
	next  int64   // the next place to read from the file
	end   int64
	f     *os.File
	err   error
}

func (c *cursor) head() (place, bool) {
	if len(c.block) == 0 && c.next < c.end && c.err == nil {
		n := min(mergeBlock, c.end-c.next)
		buf := make([]byte, n*placeSize)
		if _, err := c.f.ReadAt(buf, c.next*placeSize); err != nil {
			c.err = err
			return place{}, false
		}
		for i := int64(0); i < n; i++ {
			c.block = append(c.block, readPlace(buf[i*placeSize:]))
		}
		c.next += n
	}
	if len(c.block) == 0 {
		return place{}, false
	}
	return c.block[0], true
}

// cursors is a heap of the runs' cursors by their next place; a tie goes to
// the earlier run, so the merge is stable.
type cursors []*cursor

func (h cursors) Len() int { return len(h) }
func (h cursors) Less(i, j int) bool {
	a, _ := h[i].head()
	b, _ := h[j].head()
	return a.key.less(b.key) || (a.key == b.key && h[i].run < h[j].run)
}
func (h cursors) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursors) Push(x any)   { *h = append(*h, x.(*cursor)) }
func (h *cursors) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// WriteHAR writes every exchange added as one HAR file, the same bytes as
// Write would write for them. Exchanges added while it runs may be left out.
func (s *Spool) WriteHAR(w io.Writer, creatorVersion string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.unusable(); err != nil {
		return err
	}
	if err := s.dw.Flush(); err != nil {
		return fmt.Errorf("har spool: %w", err)
	}
	s.sortRun()
	var h cursors
	for r := 0; r < s.runs; r++ {
		c := &cursor{run: r, next: int64(r) * spoolRun, end: int64(r+1) * spoolRun, f: s.places}
		if _, ok := c.head(); ok {
			h = append(h, c)
		} else if c.err != nil {
			return fmt.Errorf("har spool: %w", c.err)
		}
	}
	if len(s.run) > 0 {
		h = append(h, &cursor{run: s.runs, block: append([]place(nil), s.run...)})
	}
	heap.Init(&h)
	var buf []byte
	return writeFile(w, creatorVersion, func() ([]byte, error) {
		if len(h) == 0 {
			return nil, io.EOF
		}
		c := h[0]
		p, _ := c.head()
		c.block = c.block[1:]
		if _, ok := c.head(); ok {
			heap.Fix(&h, 0)
		} else {
			if c.err != nil {
				return nil, fmt.Errorf("har spool: %w", c.err)
			}
			heap.Pop(&h)
		}
		if int64(cap(buf)) < p.n {
			buf = make([]byte, p.n)
		}
		buf = buf[:p.n]
		if _, err := s.data.ReadAt(buf, p.off); err != nil {
			return nil, fmt.Errorf("har spool: %w", err)
		}
		return buf, nil
	})
}

// Close removes the spool's files. Add and WriteHAR fail after it.
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for _, f := range []*os.File{s.data, s.places} {
		errs = append(errs, f.Close(), os.Remove(f.Name()))
	}
	s.run = nil
	return errors.Join(errs...)
}
