package traffic

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// spillFile holds the spilled chunks of one body: records of the chunk's
// arrival, its size and its recorded bytes (keys hidden), in order. The file
// is opened for each batch, so a body that waits holds no descriptor.
type spillFile struct {
	path string
	n    int   // chunks written whole
	off  int64 // bytes written whole
	err  error // the first write error: no more writes
}

// nilData marks a chunk recorded without bytes (past MaxRecord).
const nilData = -1

// write appends chunks to the file, creating it in dir first.
func (s *spillFile) write(dir string, chunks []Chunk) {
	var buf []byte
	for _, c := range chunks {
		buf = binary.BigEndian.AppendUint64(buf, uint64(c.At))
		buf = binary.BigEndian.AppendUint64(buf, uint64(c.Size))
		n := int64(nilData)
		if c.Data != nil {
			n = int64(len(c.Data))
		}
		buf = binary.BigEndian.AppendUint64(buf, uint64(n))
		buf = append(buf, c.Data...)
	}
	var f *os.File
	var err error
	if s.path == "" {
		f, err = os.CreateTemp(dir, "body-*.spill")
		if err == nil {
			s.path = f.Name()
		}
	} else {
		f, err = os.OpenFile(s.path, os.O_WRONLY, 0)
	}
	if err == nil {
		_, err = f.WriteAt(buf, s.off)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		s.err = fmt.Errorf("spill a recorded body: %w", err)
		return
	}
	s.n += len(chunks)
	s.off += int64(len(buf))
}

// readAll reads the chunks written whole back and removes the file. A
// failed write lost nothing (the chunks stayed in memory), so only a failed
// read is an error.
func (s *spillFile) readAll() ([]Chunk, error) {
	defer s.remove()
	if s.n == 0 {
		return nil, nil
	}
	f, err := os.Open(s.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(io.LimitReader(f, s.off))
	out := make([]Chunk, 0, s.n)
	var hdr [24]byte
	for i := 0; i < s.n; i++ {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return out, err
		}
		c := Chunk{At: time.Duration(binary.BigEndian.Uint64(hdr[0:])), Size: int(binary.BigEndian.Uint64(hdr[8:]))}
		if n := int64(binary.BigEndian.Uint64(hdr[16:])); n != nilData {
			if n < 0 || n > s.off {
				return out, errors.New("spill file: bad record")
			}
			c.Data = make([]byte, n)
			if _, err := io.ReadFull(r, c.Data); err != nil {
				return out, err
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func (s *spillFile) remove() {
	if s.path != "" {
		_ = os.Remove(s.path)
		s.path = ""
	}
}
