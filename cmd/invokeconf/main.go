// Command invokeconf is the conformance harness for the Agent Invoke Service.
//
//	invokeconf run [--profile FILE] [--rules IDS] [--areas AREAS] [--tags EXPR] [--quick] [--spec-only]
//	               [--require-complete] [--baseline FILE] [--write-baseline FILE] [--out DIR] [--evidence=false] [--sign KEY]
//	                                                             run the suite (no profile: against the embedded reference server)
//	invokeconf profile check --profile FILE [selection flags of run] [--require-complete]
//	                                                             validate a profile against its live target and forecast the run
//	invokeconf profile vars                                      list the INVOKECONF_* variables that override profile fields
//	invokeconf serve [--addr ADDR] [--defect NAME]... [--variant NAME]...  run the reference server
//	invokeconf model [--addr ADDR]                               run the scripted model server (OpenAI-compatible)
//	invokeconf rules [ID...] [--format text|markdown|json]       list the rule catalog, or show rules whole
//	invokeconf rules --uncovered                                 list the spec's statements no rule quotes, with why
//	invokeconf defects                                           list the reference server's defect switches
//	invokeconf variants                                          list the reference server's variant switches
//	invokeconf version                                           print the harness build and the spec and catalog digests
//	invokeconf help COMMAND                                      print a command's help, with its own exit codes
//	invokeconf proxy --target URL [--listen ADDR] [--out DIR]    record and judge live traffic (passive, docs/passive.md)
//	invokeconf judge FILE.har                                    judge recorded traffic offline
//	invokeconf clients [flags] -- COMMAND [ARGS...]              run a client's tests against every legal variant
//	invokeconf verify [--key PUB] DIR                            check a run's reports offline against its evidence
//
// Exit codes of run: 0 every applicable MUST rule passed; 1 a rule failed;
// 2 bad usage (a selection that leaves no scenario included), a bad profile,
// or a target that does not answer; 3 harness error or no rule tested; 4 a
// partial run with --require-complete. Every other command's help lists its
// own.
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

	"github.com/invokeconf/invokeconf/evidence"
	"github.com/invokeconf/invokeconf/internal/suggest"
	"github.com/invokeconf/invokeconf/outcome"
)

// exitCodes are run's exit codes: a contract with CI jobs (README, docs/ci.md).
const exitCodes = `Exit codes:
  0  every applicable MUST rule passed (warnings, untested rules and a partial run included)
  1  a MUST rule failed, or a baseline entry is stale
  2  bad usage (a selection that leaves no scenario included), a bad profile or baseline, or a target that
     does not answer
  3  the harness broke, or no rule was tested (no scenario ran: the profile made every selected scenario
     untested or not applicable; or every scenario that ran was untested), or the run was interrupted (Ctrl-C,
     SIGTERM: the reports hold what ran before)
  4  with --require-complete: the run is PARTIAL (it did not judge every observable spec rule)
`

// listExits are the exit codes of a command that only prints.
const listExits = `Exit codes:
  0  printed
  2  bad usage
`

var usage = `invokeconf: conformance harness for the Agent Invoke Service

Usage:
  invokeconf run [flags]      run the suite; without --profile, against the embedded reference server
  invokeconf profile check    validate a profile against its live target (reachable, keys accepted)
  invokeconf profile vars     list the INVOKECONF_* environment variables that override profile fields
  invokeconf serve [flags]    run the reference server on loopback
  invokeconf model [flags]    run the scripted model server: an OpenAI-compatible model that follows agent scripts
  invokeconf rules [ID...]    list the rule catalog, or show rules whole
  invokeconf defects          list the reference server's defect switches
  invokeconf variants         list the reference server's variant switches (legal behaviours the spec allows)
  invokeconf version          print the harness version, commit, and the digests of the spec and the rule catalog
  invokeconf proxy [flags]    record and judge the traffic between a client and the service (passive, never a certification)
  invokeconf judge FILE.har   judge recorded traffic offline
  invokeconf clients [flags] -- COMMAND [ARGS...]
                              run a client's own tests once per legal variant of the reference server
  invokeconf verify DIR       check a run's reports offline: digests, the evidence judged again, the signature

Run 'invokeconf help COMMAND' or 'invokeconf COMMAND -h' for a command's description, flags, examples and
exit codes.

` + strings.Replace(exitCodes, "Exit codes:", "Exit codes of run:", 1)

// commandDoc is what a command's help says beyond its flags.
type commandDoc struct {
	synopsis    string
	description string
	examples    []string
	exits       string // the command's own exit codes
}

var commandDocs = map[string]commandDoc{
	"run": {"invokeconf run [flags]",
		"Runs the scenarios against a target and judges every rule of the catalog. Without --profile it starts the\n" +
			"embedded reference server on a free loopback port and tests that. Reports land in --out: report.html,\n" +
			"summary.json, junit.xml and cucumber.json, with the run's evidence beside them (" + evidence.HARFile + ": every\n" +
			"exchange as judged, keys hidden; plan.json; profile.yaml), bound by digest in summary.json, for\n" +
			"'invokeconf verify' (--sign KEY signs them). A run that does not judge every observable spec rule is\n" +
			"PARTIAL, never a certification; contract rules (docs/bundles.md) are judged apart from spec rules.",
		[]string{"invokeconf run", "invokeconf run --profile target.yaml --out reports/out",
			"invokeconf run --profile target.yaml --spec-only", "invokeconf run --profile target.yaml --areas sse,events --quick",
			"invokeconf run --profile target.yaml --baseline known-failures.yaml --junit-warnings failure",
			"invokeconf run --profile target.yaml --require-complete",
			"invokeconf run --profile target.yaml --sign vendor-key.pem   # openssl genpkey -algorithm ed25519 -out vendor-key.pem"}, exitCodes},
	"profile check": {"invokeconf profile check --profile FILE [flags]",
		"Reads a profile as run does (with INVOKECONF_* overrides) and asks its target: does it answer, are the\n" +
			"keys accepted (the expired key refused); tells capabilities declared false (their scenarios not\n" +
			"applicable) from those left out (untested) and warns about INVOKECONF_* variables that override no\n" +
			"field. Then it plans the run its selection flags (those of run) select, as run plans it, and forecasts\n" +
			"it: every rule the run will leave untested and why, those it will find not applicable, and whether it\n" +
			"will be PARTIAL. Only the run itself can add to that: a failure (which blocks the other rules of its\n" +
			"scenario), or, when capabilities.script lacks echo, a scenario that reads an echoed answer.",
		[]string{"invokeconf profile check --profile target.yaml", "invokeconf profile check --profile target.yaml --spec-only --require-complete"},
		`Exit codes:
  0  the profile is usable (the run may still be PARTIAL: the forecast says so)
  2  bad usage, a bad profile, a target that does not answer, or a key it does not take as the profile says
  3  the check broke
  4  with --require-complete: the run will be PARTIAL
`},
	"profile vars": {"invokeconf profile vars [--profile FILE]",
		"Lists every INVOKECONF_* variable with the profile field it overrides; with --profile, whether it is set.",
		[]string{"invokeconf profile vars", "invokeconf profile vars --profile target.yaml"}, `Exit codes:
  0  listed
  2  bad usage, or a profile that cannot be read
`},
	"serve": {"invokeconf serve [flags]",
		"Runs the reference server on loopback and prints its URL, keys by role, IDs and a curl command.",
		[]string{"invokeconf serve", "invokeconf serve --addr 127.0.0.1:0 --write-profile ref.yaml",
			"invokeconf serve --defect no-close", "invokeconf serve --variant async-202",
			"invokeconf serve --admin-key-file admin.key   # switch variants at run time: docs/clients.md",
			"INVOKECONF_ADMIN_KEY=\"$ADMIN_KEY\" invokeconf serve   # the same, the key from the environment"}, `Exit codes:
  0  stopped by Ctrl-C or SIGTERM
  2  bad usage: an unknown defect or variant, a seed file that cannot be read, an address it cannot listen on, an admin key that could be a service key, an admin key file that cannot be read
  3  the server failed, or --write-profile could not be written
`},
	"model": {"invokeconf model [flags]",
		"Runs the scripted model server: an OpenAI-compatible chat-completions API whose model follows the agent\n" +
			"script language, for a vendor's agent to run on (docs/vendor-guide.md).",
		[]string{"invokeconf model", "invokeconf model --addr 127.0.0.1:8090"}, `Exit codes:
  0  stopped by Ctrl-C or SIGTERM
  2  bad usage, or an address it cannot listen on
  3  the server failed
`},
	"rules": {"invokeconf rules [ID...] [--format text|markdown|json]",
		"Lists the rule catalog: a line per rule that fits the terminal ($COLUMNS wide, else 100) with its level,\n" +
			"area, source, number of scenarios, whether recorded traffic alone can decide it (invokeconf proxy and\n" +
			"judge: yes, partly or no) and its statement. With rule IDs it shows each rule whole: section,\n" +
			"statement, the spec's words, the strictness of its check, whether it is observable, passive with why,\n" +
			"and every scenario that checks it. --format markdown or json gives every field of the rules listed.\n" +
			"--uncovered lists instead the spec's normative statements that no rule's spec words quote, each with\n" +
			"the catalog's reason (features/uncovered.yaml).",
		[]string{"invokeconf rules", "invokeconf rules SSE-04", "invokeconf rules SSE-01,SSE-02 --format json", "invokeconf rules --format markdown",
			"invokeconf rules --uncovered"},
		`Exit codes:
  0  listed
  2  bad usage: an unknown rule or format
  3  the catalog cannot be read
`},
	"defects": {"invokeconf defects",
		"Lists the reference server's defect switches: each a realistic deviation from the rules it names.\n" +
			"Switch one on with 'invokeconf serve --defect NAME' or 'invokeconf run --defect NAME'.",
		[]string{"invokeconf defects", "invokeconf run --defect no-close --rules SSE-05"}, listExits},
	"proxy": {synopsis: "invokeconf proxy --target URL [flags]",
		description: "Sits between any client and the service: forwards every request and response unchanged and unbuffered,\n" +
			"records each exchange with the arrival time of every response chunk, judges it against every rule that\n" +
			"traffic can decide and prints a line per exchange (--quiet: none) and each failure as it happens (rule,\n" +
			"level, what was seen, which request).\n" +
			"On Ctrl-C, SIGTERM or the end of --duration it writes the HAR file and the reports run writes\n" +
			"(report.html, summary.json with mode passive, junit.xml) and " + passiveSummaryFile + ": a verdict per rule, pass\n" +
			"with the number of exchanges that decided it, fail with the exchange, untested, not seen, or not decidable\n" +
			"from traffic with why.\n" +
			"A passive report says \"observed N exchanges; judged M of K rules\" and is never a certification; one that\n" +
			"observed no exchange says NOTHING OBSERVED and exits 2, as 'invokeconf judge' does on an empty recording.\n" +
			"No key is recorded: an Authorization header is kept as the key's <user>-<key> ID, and keys are hidden\n" +
			"wherever they appear; the values of common credential headers, query parameters and JSON members\n" +
			"(X-Api-Key, api_key, \"password\"...; --hide adds names) are recorded as [hidden].\n" +
			"See docs/passive.md.",
		examples: []string{"invokeconf proxy --target https://svc.staging.example --listen 127.0.0.1:8089",
			"invokeconf proxy --target http://127.0.0.1:8080 --duration 10m --out passive/ --redact-bodies"},
		exits: "Exit codes: 0 no rule failed, 1 a rule failed, 2 bad usage, or nothing observed (no client went through the\n" +
			"proxy: nothing judged, which is no pass), 3 the proxy broke.\n"},
	"judge": {synopsis: "invokeconf judge [flags] FILE.har",
		description: "Judges recorded traffic offline against every rule that traffic can decide: the same judgement as\n" +
			"'invokeconf proxy', on a HAR 1.2 file written by the proxy, by browser developer tools or by mitmproxy.\n" +
			"A file without chunk timings (the \"_chunks\" extension, docs/passive.md) leaves every timing rule\n" +
			"untested, and what a file lacks (a body without text, a header listed twice with different values) leaves\n" +
			"the rules that need it untested. The file is read as a stream, each body up to --max-record bytes.\n" +
			"--out DIR writes the same reports as the proxy. A passive judgement is never a certification.",
		examples: []string{"invokeconf judge reports/out/passive/traffic.har", "invokeconf judge --out judged/ staging.har"},
		exits: "Exit codes: 0 no rule failed, 1 a rule failed, 2 bad usage, an unreadable file, or nothing observed (a file\n" +
			"with no exchange, or none with a response: nothing judged, which is no pass), 3 a report could not be written,\n" +
			"or Ctrl-C or SIGTERM stopped the reading (the reports hold the entries judged before).\n"},
	"clients": {synopsis: "invokeconf clients [flags] -- COMMAND [ARGS...]",
		description: "Runs a client's own test command once against the default reference server, once per legal variant\n" +
			"(a behaviour the spec allows a service: CRLF line endings, comments, numeric IDs, 202 for async...) and\n" +
			"once per compatible group of them, each against a fresh server with the variant on. The command finds\n" +
			"the server in the INVOKECONF_* variables ('invokeconf profile vars': INVOKECONF_BASE_URL,\n" +
			"INVOKECONF_KEYS_AGENT, INVOKECONF_AGENTS_MAIN_ID...), beside the rest of the environment. Each run gets a\n" +
			"verdict: the exit code (or the signal that ended it), the tail of its output (keys, and environment values\n" +
			"that look like secrets or --secret-env names, redacted), the spec's words that allow the variant and what\n" +
			"it changes on the wire. Nothing the command starts outlives its run. --defects also runs it against broken\n" +
			"servers, reported apart and never failing the run. Reports land in --out: report.html, junit.xml,\n" +
			"summary.json. On Ctrl-C or SIGTERM the run under way is killed and reported interrupted (no verdict on\n" +
			"the client), the rest not run, and the reports are written. See docs/clients.md.",
		examples: []string{"invokeconf clients -- go test ./client/...", "invokeconf clients --defects no-close,stream-cut-mid-frame -- npm test",
			"invokeconf clients --variants sse-crlf,sse-cr --timeout 30s -- ./run-client-tests.sh"},
		exits: "Exit codes: 0 the client passed every legal run, 1 it failed one (the default server, a variant or a group),\n" +
			"2 bad usage (no command, an unknown variant or defect, a command not found or not executable), 3 the harness\n" +
			"could not run it or was interrupted.\n"},
	"variants": {"invokeconf variants",
		"Lists the reference server's variant switches: each a behaviour the spec allows but the reference does\n" +
			"not use by default, with the spec's words that allow it. The suite must pass on every one.",
		[]string{"invokeconf variants", "invokeconf serve --variant async-202"}, listExits},
	"verify": {synopsis: "invokeconf verify [--key PUB] DIR",
		description: "Checks, offline, the reports a run wrote in DIR (run --out) against the evidence it kept beside them:\n" +
			"the digest of every evidence file summary.json binds (the traffic, the plan, the profile), that the report\n" +
			"names the spec, catalog and harness build of this verifier, and, judging the recorded traffic again with\n" +
			"the same checks, that the run's judgement of every exchange comes out the same and every verdict of the\n" +
			"report stands on it. It prints what it verified in the report's words: how many verdicts were recomputed\n" +
			"from the traffic, and how many are taken on trust (rules no check decides from traffic, or that the\n" +
			"scenarios judged where traffic alone does not decide them). With --key it checks the run's signature\n" +
			"(" + evidence.SignatureFile + ", a DSSE envelope of an in-toto statement) with the signer's public key.\n" +
			"Nothing needs a network. See docs/vendor-guide.md, \"Publishing your result\".",
		examples: []string{"invokeconf verify reports/out", "invokeconf verify --key vendor-pub.pem published-run/"},
		exits:    verifyExits},
	"version": {"invokeconf version [--profile FILE]",
		"Prints the harness version and commit, how they were found (set at link time, stamped by go build, the\n" +
			"module version, or asked of git about the source tree the binary was compiled from), the digest of the\n" +
			"running executable, and the digests of the spec text and rule catalog every report names; with\n" +
			"--profile, the target's product and version too.",
		[]string{"invokeconf version", "invokeconf version --profile target.yaml"}, `Exit codes:
  0  printed
  2  bad usage, or a profile that cannot be read
`},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal asks the command to stop and write what it has; a
	// second one ends the process at once, as without the handler.
	go func() {
		<-ctx.Done()
		stop()
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is bad usage: exit code 2.
type usageError struct{ error }

// exitError ends a command with its own exit code.
type exitError struct {
	code int
	error
}

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
		return outcome.ExitUsage
	}
	var err error
	code := outcome.ExitPass
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
			return outcome.ExitPass
		}
		return run(ctx, append(args[1:], "-h"), stdout, stderr)
	case "proxy":
		code, err = cmdProxy(ctx, args[1:], stdout, stderr)
	case "judge":
		code, err = cmdJudge(ctx, args[1:], stdout, stderr)
	case "clients":
		code, err = cmdClients(ctx, args[1:], stdout, stderr)
	case "verify":
		code, err = cmdVerify(args[1:], stdout, stderr)
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return outcome.ExitPass
	default:
		// The suggestion and where the commands are listed, not the whole
		// usage: the one line that matters stays on the screen.
		fmt.Fprintf(stderr, "invokeconf: unknown command %q%s (see 'invokeconf help')\n", args[0], suggestCommand(args[0]))
		return outcome.ExitUsage
	}
	if err != nil {
		var he *helpError
		if errors.As(err, &he) {
			printHelp(stdout, he.name, he.fs)
			return outcome.ExitPass
		}
		fmt.Fprintf(stderr, "invokeconf %s: %v\n", args[0], err)
		var ue usageError
		var ee exitError
		switch {
		case errors.As(err, &ue):
			return outcome.ExitUsage
		case errors.As(err, &ee):
			return ee.code
		}
		return outcome.ExitHarness
	}
	return code
}

func suggestCommand(name string) string {
	names := []string{"help"}
	for n := range commandDocs {
		names = append(names, strings.Fields(n)[0])
	}
	if best := suggest.Closest(name, names); best != "" {
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
	fmt.Fprint(w, doc.exits)
}

// newFlags returns a FlagSet that reports errors instead of exiting and
// prints nothing itself: parse returns its errors, which are printed once,
// and its help goes to stdout through parse's helpError.
func newFlags(name string, _ io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("invokeconf "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // parse prints the help, to stdout
	return fs
}

// parse parses flags, wrapping failures as usage errors (with the nearest
// flag for an unknown one) and -h as a request for the command's help; an
// argument left over is bad usage.
func parse(fs *flag.FlagSet, args []string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q (see 'invokeconf help %s')", fs.Arg(0), strings.TrimPrefix(fs.Name(), "invokeconf "))}
	}
	return nil
}

// parseArgs is parse for a command that takes arguments (fs.Args), before,
// after or between its flags: 'rules SSE-04 --format json'.
func parseArgs(fs *flag.FlagSet, args []string) error {
	var rest []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	return fs.Parse(append([]string{"--"}, rest...))
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		name := strings.TrimPrefix(fs.Name(), "invokeconf ")
		if errors.Is(err, flag.ErrHelp) {
			return &helpError{name, fs}
		}
		msg := err.Error()
		if bad, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
			var known []string
			fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
			// The flag package writes every flag with one dash; the
			// commands' help writes them with two, as users type them.
			bad = strings.TrimLeft(bad, "-")
			msg = "unknown flag --" + bad
			if best := suggest.Closest(bad, known); best != "" {
				msg += " (did you mean --" + best + "?)"
			}
		}
		return usageError{fmt.Errorf("%s (see 'invokeconf help %s')", msg, name)}
	}
	return nil
}
