package main

import (
	"fmt"
	"io"
	"os"

	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/reports"
)

// cmdVersion prints what every report names: the harness build, the spec
// and catalog digests and, with a profile, the target's product.
func cmdVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", stderr)
	path := fs.String("profile", "", "also print the target's product and version from this profile")
	if err := parse(fs, args); err != nil {
		return err
	}
	var p *profile.Profile
	if *path != "" {
		var err error
		if p, _, err = profile.LoadWithEnv(*path, os.LookupEnv); err != nil {
			return usageError{err}
		}
	}
	id := reports.Identify(p)
	commit := id.HarnessCommit
	if commit == "" {
		commit = "(none recorded)"
	}
	binary := id.HarnessBinary
	if binary == "" {
		binary = "(the running executable cannot be read)"
	}
	fmt.Fprintf(stdout, "invokeconf %s\n", id.HarnessVersion)
	fmt.Fprintf(stdout, "commit:   %s\n", commit)
	fmt.Fprintf(stdout, "found:    %s: %s\n", id.HarnessSource, id.HarnessNote)
	fmt.Fprintf(stdout, "binary:   %s (the running executable)\n", binary)
	fmt.Fprintf(stdout, "go:       %s\n", id.GoVersion)
	fmt.Fprintf(stdout, "spec:     %s (features/spec.md, the spec text the rule catalog was written from)\n", id.SpecDigest)
	fmt.Fprintf(stdout, "catalog:  %s (features/rules.yaml)\n", id.CatalogDigest)
	if p != nil {
		name := id.TargetName()
		if name == "" {
			name = "(the profile names no product: set product and productVersion)"
		}
		fmt.Fprintf(stdout, "target:   %s\n", name)
	}
	return nil
}
