package runner_test

import (
	"testing"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/internal/sweep"
	"github.com/invokeconf/invokeconf/modelserver"
	"github.com/invokeconf/invokeconf/outcome"
	"github.com/invokeconf/invokeconf/runner"
	"github.com/invokeconf/invokeconf/testrun"
)

// TestRemoteModelPasses is the vendor's path end to end: the reference
// server's agent runs on a remote OpenAI-compatible model (`serve
// --model-url`) that is `invokeconf model`, both on loopback. Every scenario
// must pass: the verdicts TestCleanServerPasses requires of the in-process
// agent. The 20 s keepalive (@slow) runs with INVOKECONF_FULL=1: the model's
// quiet is the script's @pause either way, and TestCleanServerPasses waits
// it out in the quick run.
func TestRemoteModelPasses(t *testing.T) {
	// As TestCleanServerPasses: parallel, within suiteRuns.
	t.Parallel()
	model, err := modelserver.Listen(modelserver.Config{}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	p := startReference(t, fakeserver.Config{ModelURL: model.BaseURL})
	tags := "~@slow"
	if sweep.Full() {
		tags = ""
	}
	res, err := runSuite(runner.Config{Profile: p, Tags: tags})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scenarios) == 0 {
		t.Fatal("no scenario ran")
	}
	if !allPassed(t, res) || exitCode(t, res) != outcome.ExitPass {
		t.Fatalf("remote model: %d of %d passed, exit %d:%s", res.Count(testrun.Passed), len(res.Scenarios), exitCode(t, res), describe(res))
	}
}
