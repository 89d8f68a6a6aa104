package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/invokeconf/invokeconf/evidence"
	"github.com/invokeconf/invokeconf/internal/safetext"
	"github.com/invokeconf/invokeconf/outcome"
)

// verifyExits are verify's exit codes.
const verifyExits = `Exit codes:
  0  verified: every digest matches, the evidence judged again gives the run's judgement, and every verdict
     stands on it (or is named as taken on trust)
  1  something differs, each difference named: a changed file, a verdict the evidence does not give, a report
     of another spec, catalog or harness build, a signature that does not verify
  2  bad usage: no folder, a folder without a report or without evidence, a key file that cannot be read
  3  verify itself broke
`

// cmdVerify checks a run's folder offline (package evidence).
func cmdVerify(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("verify", stderr)
	keyPath := fs.String("key", "", "the signer's ed25519 public key, a PEM file as 'openssl pkey -pubout' writes it: the run must be signed with it")
	if err := parseArgs(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() != 1 {
		return 0, usageError{errors.New("give one folder: the run's --out (see 'invokeconf help verify')")}
	}
	dir := fs.Arg(0)
	var opts evidence.Options
	if *keyPath != "" {
		k, err := evidence.LoadPublicKey(*keyPath)
		if err != nil {
			return 0, usageError{fmt.Errorf("--key: %w", err)}
		}
		opts.Key = k
	}
	v, err := evidence.Verify(dir, opts)
	if err != nil {
		var ue *evidence.UsageError
		if errors.As(err, &ue) {
			return 0, usageError{err}
		}
		return 0, err
	}
	rep := v.Report
	clean := safetext.Clean
	fmt.Fprintf(stdout, "invokeconf verify %s\n", clean(dir))
	fmt.Fprintf(stdout, "  report: %s (exit %d): %s\n", strings.ToUpper(rep.Outcome), rep.ExitCode, clean(rep.Headline))
	fmt.Fprintf(stdout, "  run: %s, against %s\n", rep.Started.Format("2006-01-02 15:04:05Z"), clean(rep.Target))
	for _, line := range v.Summary() {
		fmt.Fprintf(stdout, "  %s\n", clean(line))
	}
	if !v.OK() {
		fmt.Fprintf(stdout, "NOT VERIFIED: %s:\n", plural(len(v.Problems), "difference", "differences"))
		for _, p := range v.Problems {
			fmt.Fprintf(stdout, "  - %s\n", clean(p))
		}
		return outcome.ExitFail, nil
	}
	signed := "unsigned: it shows that the verdicts follow from the evidence, not who made them; run --sign KEY signs a run"
	switch {
	case v.Signed:
		signed = "signed by " + evidence.KeyID(opts.Key)
	case v.SignedUnchecked:
		signed = "signed; the signature not checked: give the signer's public key with --key"
	}
	fmt.Fprintf(stdout, "VERIFIED: the report's verdicts stand on its evidence (%s)\n", signed)
	return outcome.ExitPass, nil
}
