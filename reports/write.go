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

// Write writes the HTML report, the JSON summary and JUnit XML into dir, and
// scrubs the keys of p out of godog's cucumber.json (its step messages are
// the steps' own, which may quote a response that echoed a key). It returns
// the paths of every report in the folder.
func Write(dir string, rep *Report, p *profile.Profile) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create output folder: %w", err)
	}
	writers := []struct {
		name  string
		write func(io.Writer, *Report) error
	}{
		{HTMLFile, WriteHTML},
		{JSONFile, WriteJSON},
		{JUnitFile, WriteJUnit},
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
	if b, err := os.ReadFile(cuc); err == nil {
		if err := os.WriteFile(cuc, []byte(p.RedactEnv(string(b))), 0o644); err != nil {
			return nil, fmt.Errorf("scrub %s: %w", CucumberFile, err)
		}
		paths = append(paths, cuc)
	}
	return paths, nil
}
