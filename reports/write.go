package reports

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/invokeconf/invokeconf/profile"
)

// File names in an output folder.
const (
	HTMLFile     = "report.html"
	JSONFile     = "summary.json"
	JUnitFile    = "junit.xml"
	CucumberFile = "cucumber.json" // written by godog during the run
)

// Options tune the writers.
type Options struct {
	// JUnitWarnings is JUnitWarningsPass ("" too) or JUnitWarningsFailure.
	JUnitWarnings string
}

// Write writes the HTML report, the JSON summary and JUnit XML into dir
// (for an active or a passive report alike), and for an active report
// completes godog's cucumber.json (keys scrubbed, outline rows named, the
// profile's placeholders filled, failures given their transcript, curl
// command and spec words). It returns the paths of every report in the
// folder.
func Write(dir string, rep *Report, p *profile.Profile, opts Options) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create output folder: %w", err)
	}
	writers := []struct {
		name  string
		write func(io.Writer, *Report) error
	}{
		{HTMLFile, WriteHTML},
		{JSONFile, WriteJSON},
		{JUnitFile, func(w io.Writer, rep *Report) error { return writeJUnit(w, rep, opts) }},
	}
	var paths []string
	for _, wr := range writers {
		var b bytes.Buffer
		if err := wr.write(&b, rep); err != nil {
			return nil, fmt.Errorf("render %s: %w", wr.name, err)
		}
		path := filepath.Join(dir, wr.name)
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			return nil, fmt.Errorf("write %s: %w", wr.name, err)
		}
		paths = append(paths, path)
	}
	cuc := filepath.Join(dir, CucumberFile)
	if rep.Mode == ModePassive {
		return paths, nil // no scenarios ran: there is no cucumber.json to complete
	}
	if b, err := os.ReadFile(cuc); err == nil {
		out, err := completeCucumber(b, rep, p)
		if err != nil {
			// Never leave a key behind, even in a file we could not read.
			out = []byte(p.RedactEnv(string(b)))
		}
		if err := os.WriteFile(cuc, out, 0o644); err != nil {
			return nil, fmt.Errorf("complete %s: %w", CucumberFile, err)
		}
		paths = append(paths, cuc)
	}
	return paths, nil
}
