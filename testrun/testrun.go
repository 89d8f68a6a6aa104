// Package testrun holds what a test run of the suite planned and produced,
// as the reports read it: the Plan (its Selection, what it decided for each
// scenario, the profile's Gaps), each scenario's ScenarioResult and Status,
// the Observations of the run's judgement of every exchange, and the whole
// Result.
//
// Package runner plans and runs (godog, the steps) and fills these types;
// package reports and the passive judge read them alone, so judging
// recorded traffic links neither godog nor httpexpect
// (passive/deps_test.go). They are not in package outcome because a
// ScenarioResult carries a checks.Cell, and package checks imports outcome.
package testrun
