// Command invokeconf is the conformance harness for the Agent Invoke Service.
//
//	invokeconf run [--profile FILE] [--rules IDS] [--areas AREAS] [--tags EXPR] [--quick] [--spec-only]
//	               [--baseline FILE] [--write-baseline FILE] [--out DIR]   run the suite (no profile: against the embedded reference server)
//	invokeconf profile check --profile FILE                      validate a profile against its live target
//	invokeconf profile vars                                      list the INVOKECONF_* variables that override profile fields
//	invokeconf serve [--addr ADDR] [--defect NAME]... [--variant NAME]...  run the reference server
//	invokeconf model [--addr ADDR]                               run the scripted model server (OpenAI-compatible)
//	invokeconf rules [--format markdown|json]                    list the rule catalog with the scenarios of each rule
//	invokeconf defects                                           list the reference server's defect switches
//	invokeconf variants                                          list the reference server's variant switches
//	invokeconf version                                           print the harness version and the spec and catalog digests
//	invokeconf help COMMAND                                      print a command's help
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
	"sort"
	"strings"
	"syscall"

	"github.com/invokeconf/invokeconf/runner"
)

const exitCodes = `Exit codes:
  0  every applicable MUST rule passed (warnings, untested rules and a partial run included)
  1  a MUST rule failed, or a baseline entry is stale
  2  bad usage, a bad profile or baseline, or a target that does not answer
  3  the harness broke, or no scenario ran
`

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
  invokeconf version          print the harness version, commit, and the digests of the spec and the rule catalog
  invokeconf proxy [flags]    record and judge the traffic between a client and the service (passive, never a certification)
  invokeconf judge FILE.har   judge recorded traffic offline

Run 'invokeconf help COMMAND' or 'invokeconf COMMAND -h' for a command's description, flags and examples.

` + exitCodes

// commandDoc is what a command's help says beyond its flags.
type commandDoc struct {
	synopsis    string
	description string
	examples    []string
	exits       string // the command's own exit codes; "" means the run's
}

var commandDocs = map[string]commandDoc{
	"run": {"invokeconf run [flags]",
		"Runs the scenarios against a target and judges every rule of the catalog. Without --profile it starts the\n" +
			"embedded reference server on a free loopback port and tests that. Reports land in --out: report.html,\n" +
			"summary.json, junit.xml and cucumber.json. A run that does not judge every observable spec rule is\n" +
			"PARTIAL, never a certification; contract rules (docs/bundles.md) are judged apart from spec rules.",
		[]string{"invokeconf run", "invokeconf run --profile target.yaml --out reports/out",
			"invokeconf run --profile target.yaml --spec-only", "invokeconf run --profile target.yaml --areas sse,events --quick",
			"invokeconf run --profile target.yaml --baseline known-failures.yaml --junit-warnings failure"}, ""},
	"profile check": {"invokeconf profile check --profile FILE",
		"Reads a profile as run does (with INVOKECONF_* overrides) and asks its target: does it answer, are the\n" +
			"keys accepted (the expired key refused); then says what the profile's gaps leave untested, tells\n" +
			"capabilities declared false (their scenarios not applicable) from those left out (untested), and\n" +
			"warns about INVOKECONF_* variables that override no field.",
		[]string{"invokeconf profile check --profile target.yaml"}, ""},
	"profile vars": {"invokeconf profile vars [--profile FILE]",
		"Lists every INVOKECONF_* variable with the profile field it overrides; with --profile, whether it is set.",
		[]string{"invokeconf profile vars", "invokeconf profile vars --profile target.yaml"}, ""},
	"serve": {"invokeconf serve [flags]",
		"Runs the reference server on loopback and prints its URL, keys by role, IDs and a curl command.",
		[]string{"invokeconf serve", "invokeconf serve --addr 127.0.0.1:0 --write-profile ref.yaml",
			"invokeconf serve --defect no-close", "invokeconf serve --variant async-202"}, ""},
	"model": {"invokeconf model [flags]",
		"Runs the scripted model server: an OpenAI-compatible chat-completions API whose model follows the agent\n" +
			"script language, for a vendor's agent to run on (docs/vendor-guide.md).",
		[]string{"invokeconf model", "invokeconf model --addr 127.0.0.1:8090"}, ""},
	"rules": {"invokeconf rules [--format markdown|json]",
		"Lists the rule catalog with the scenarios that check each rule, and whether recorded traffic alone can\n" +
			"decide it (invokeconf proxy and judge: yes, partly or no, with why).",
		[]string{"invokeconf rules", "invokeconf rules --format json"}, ""},
	"defects": {"invokeconf defects",
		"Lists the reference server's defect switches: each a realistic deviation from the rules it names.\n" +
			"Switch one on with 'invokeconf serve --defect NAME' or 'invokeconf run --defect NAME'.",
		[]string{"invokeconf defects", "invokeconf run --defect no-close --rules SSE-05"}, ""},
	"proxy": {synopsis: "invokeconf proxy --target URL [flags]",
		description: "Sits between any client and the service: forwards every request and response unchanged and unbuffered,\n" +
			"records each exchange with the arrival time of every response chunk, judges it against every rule that\n" +
			"traffic can decide and prints a line per exchange (--quiet: none) and each failure as it happens (rule,\n" +
			"level, what was seen, which request).\n" +
			"On Ctrl-C, SIGTERM or the end of --duration it writes the HAR file and the reports run writes\n" +
			"(report.html, summary.json with mode passive, junit.xml) and " + passiveSummaryFile + ": a verdict per rule, pass\n" +
			"with the number of exchanges that decided it, fail with the exchange, untested, not seen, or not decidable\n" +
			"from traffic with why.\n" +
			"A passive report says \"observed N exchanges; judged M of K rules\" and is never a certification.\n" +
			"No key is recorded: an Authorization header is kept as the key's <user>-<key> ID, and keys in bodies\n" +
			"are hidden.\n" +
			"See docs/passive.md.",
		examples: []string{"invokeconf proxy --target https://svc.staging.example --listen 127.0.0.1:8089",
			"invokeconf proxy --target http://127.0.0.1:8080 --duration 10m --out passive/ --redact-bodies"},
		exits: "Exit codes: 0 no rule failed, 1 a rule failed, 2 bad usage, 3 the proxy broke.\n"},
	"judge": {synopsis: "invokeconf judge [flags] FILE.har",
		description: "Judges recorded traffic offline against every rule that traffic can decide: the same judgement as\n" +
			"'invokeconf proxy', on a HAR 1.2 file written by the proxy, by browser developer tools or by mitmproxy.\n" +
			"A file without chunk timings (the \"_chunks\" extension, docs/passive.md) leaves every timing rule\n" +
			"untested, and what a file lacks (a body without text, a header listed twice with different values) leaves\n" +
			"the rules that need it untested. The file is read as a stream, each body up to --max-record bytes.\n" +
			"--out DIR writes the same reports as the proxy. A passive judgement is never a certification.",
		examples: []string{"invokeconf judge reports/out/passive/traffic.har", "invokeconf judge --out judged/ staging.har"},
		exits:    "Exit codes: 0 no rule failed, 1 a rule failed, 2 bad usage, an unreadable file or one with no exchange, 3 a report could not be written.\n"},
	"variants": {"invokeconf variants",
		"Lists the reference server's variant switches: each a behaviour the spec allows but the reference does\n" +
			"not use by default, with the spec's words that allow it. The suite must pass on every one.",
		[]string{"invokeconf variants", "invokeconf serve --variant async-202"}, ""},
	"version": {"invokeconf version [--profile FILE]",
		"Prints the harness version and commit, and the digests of the spec text and rule catalog every report\n" +
			"names; with --profile, the target's product and version too.",
		[]string{"invokeconf version", "invokeconf version --profile target.yaml"}, ""},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is bad usage: exit code 2.
type usageError struct{ error }

// helpError asks for a command's help: its flags are in fs.
type helpError struct {
	name string
	fs   *flag.FlagSet
}

func (e *helpError) Error() string { return "help requested" }
func (e *helpError) Unwrap() error { return flag.ErrHelp }

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
	case "version":
		err = cmdVersion(args[1:], stdout, stderr)
	case "help":
		if len(args) == 1 {
			fmt.Fprint(stdout, usage)
			return runner.ExitPass
		}
		return run(ctx, append(args[1:], "-h"), stdout, stderr)
	case "proxy":
		code, err = cmdProxy(ctx, args[1:], stdout, stderr)
	case "judge":
		code, err = cmdJudge(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return runner.ExitPass
	default:
		fmt.Fprintf(stderr, "invokeconf: unknown command %q%s\n\n%s", args[0], suggestCommand(args[0]), usage)
		return runner.ExitUsage
	}
	if err != nil {
		var he *helpError
		if errors.As(err, &he) {
			printHelp(stdout, he.name, he.fs)
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

func suggestCommand(name string) string {
	names := []string{"help"}
	for n := range commandDocs {
		names = append(names, strings.Fields(n)[0])
	}
	if best := runner.Closest(name, names); best != "" {
		return " (did you mean " + best + "?)"
	}
	return ""
}

// printHelp writes a command's help: synopsis, description, flags with
// their -- spelling, examples and exit codes.
func printHelp(w io.Writer, name string, fs *flag.FlagSet) {
	doc := commandDocs[name]
	fmt.Fprintf(w, "Usage: %s\n\n", doc.synopsis)
	if doc.description != "" {
		fmt.Fprintf(w, "%s\n\n", doc.description)
	}
	var flags []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f) })
	sort.Slice(flags, func(i, j int) bool { return flags[i].Name < flags[j].Name })
	if len(flags) > 0 {
		fmt.Fprintln(w, "Flags:")
		for _, f := range flags {
			arg, text := flag.UnquoteUsage(f)
			switch arg {
			case "value":
				arg = "NAME"
			case "string":
				arg = strings.ToUpper(f.Name)
			}
			fmt.Fprintf(w, "  --%s", f.Name)
			if arg != "" {
				fmt.Fprintf(w, " %s", arg)
			}
			fmt.Fprintf(w, "\n      %s", text)
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
				fmt.Fprintf(w, " (default %s)", f.DefValue)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}
	if len(doc.examples) > 0 {
		fmt.Fprintln(w, "Examples:")
		for _, e := range doc.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
		fmt.Fprintln(w)
	}
	if doc.exits != "" {
		fmt.Fprint(w, doc.exits)
		return
	}
	fmt.Fprint(w, exitCodes)
}

// newFlags returns a FlagSet that reports errors instead of exiting; its
// help goes to stdout through parse's helpError.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("invokeconf "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // parse prints the help, to stdout
	return fs
}

// parse parses flags, wrapping failures as usage errors and -h as a request
// for the command's help.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return &helpError{strings.TrimPrefix(fs.Name(), "invokeconf "), fs}
		}
		return usageError{fmt.Errorf("%w (see 'invokeconf help %s')", err, strings.TrimPrefix(fs.Name(), "invokeconf "))}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}
