// Command invokeconf is the conformance harness for the Agent Invoke Service.
//
//	invokeconf run [--profile FILE] [--rules IDS] [--areas AREAS] [--tags EXPR] [--quick]
//	               [--baseline FILE] [--write-baseline FILE] [--out DIR]   run the suite (no profile: against the embedded reference server)
//	invokeconf profile check --profile FILE                      validate a profile against its live target
//	invokeconf profile vars                                      list the INVOKECONF_* variables that override profile fields
//	invokeconf serve [--addr ADDR] [--defect NAME]... [--variant NAME]...  run the reference server
//	invokeconf model [--addr ADDR]                               run the scripted model server (OpenAI-compatible)
//	invokeconf rules [--format markdown|json]                    list the rule catalog with the scenarios of each rule
//	invokeconf defects                                           list the reference server's defect switches
//	invokeconf variants                                          list the reference server's variant switches
//	invokeconf proxy --target URL [--listen ADDR] [--out DIR]    record and judge live traffic (passive, docs/passive.md)
//	invokeconf judge FILE.har                                    judge recorded traffic offline
//
// Exit codes: 0 every applicable MUST rule passed; 1 a rule failed; 2 bad
// usage or profile; 3 harness error or no scenario ran.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/invokeconf/invokeconf/runner"
)

const usage = `invokeconf: conformance harness for the Agent Invoke Service

Usage:
  invokeconf run [flags]      run the suite; without --profile, against the embedded reference server
  invokeconf profile check    validate a profile against its live target (reachable, keys accepted)
  invokeconf profile vars     list the INVOKECONF_* environment variables that override profile fields
  invokeconf serve [flags]    run the reference server on loopback
  invokeconf model [flags]    run the scripted model server: an OpenAI-compatible model that follows agent scripts
  invokeconf rules [flags]    list the rule catalog
  invokeconf defects          list the reference server's defect switches
  invokeconf variants         list the reference server's variant switches (legal behaviours the spec allows)
  invokeconf proxy [flags]    record and judge the traffic between a client and the service (passive, never a certification)
  invokeconf judge FILE.har   judge recorded traffic offline

Run 'invokeconf <command> -h' for a command's flags.
Exit codes: 0 pass, 1 a rule failed, 2 bad usage or profile, 3 harness error or no scenario ran.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is bad usage: exit code 2.
type usageError struct{ error }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return runner.ExitUsage
	}
	var err error
	code := runner.ExitPass
	switch args[0] {
	case "run":
		code, err = cmdRun(ctx, args[1:], stdout, stderr)
	case "profile":
		err = cmdProfile(ctx, args[1:], stdout, stderr)
	case "serve":
		err = cmdServe(ctx, args[1:], stdout, stderr)
	case "model":
		err = cmdModel(ctx, args[1:], stdout, stderr)
	case "rules":
		err = cmdRules(args[1:], stdout, stderr)
	case "defects":
		err = cmdDefects(args[1:], stdout, stderr)
	case "variants":
		err = cmdVariants(args[1:], stdout, stderr)
	case "proxy":
		code, err = cmdProxy(ctx, args[1:], stdout, stderr)
	case "judge":
		code, err = cmdJudge(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return runner.ExitPass
	default:
		fmt.Fprintf(stderr, "invokeconf: unknown command %q\n\n%s", args[0], usage)
		return runner.ExitUsage
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return runner.ExitPass
		}
		fmt.Fprintf(stderr, "invokeconf %s: %v\n", args[0], err)
		var ue usageError
		if errors.As(err, &ue) {
			return runner.ExitUsage
		}
		return runner.ExitHarness
	}
	return code
}

// newFlags returns a FlagSet that reports errors instead of exiting.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("invokeconf "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses flags, wrapping failures as usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}
