package outcome

// Exit codes of the CLI; package reports decides which a run gets.
const (
	ExitPass    = 0 // every applicable MUST rule passed
	ExitFail    = 1 // a rule failed
	ExitUsage   = 2 // bad usage or profile
	ExitHarness = 3 // harness error, or no rule tested (no scenario ran, or none that ran tested one)
	ExitPartial = 4 // a partial run, with --require-complete
)
