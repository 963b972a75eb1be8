package bench_test

import (
	"encoding/json"
	"testing"
)

// The workloads are those of Parley's own benchmarks (mcpserver's
// BenchmarkTypedCall and BenchmarkProvisioner, jsonrpc's
// BenchmarkCallRoundTrip), so that the Parley side of each pair measures
// what BENCHMARKS.md reports.

// echoArgs is the typed input of every tool here, on both SDKs: one
// required string.
type echoArgs struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

// regionAnswer is the form of the two-round flow's one question.
type regionAnswer struct {
	Region string `json:"region" jsonschema:"where the database lives, such as eu-west-1"`
}

// toolArgs are the arguments of every call, pre-encoded on both sides so
// that neither client's encoding of a Go map counts against it.
var toolArgs = json.RawMessage(`{"name":"orders"}`)

const (
	// echoText is the text of the echo tool's result.
	echoText = "orders"
	// region is what every elicitation callback answers.
	region = "eu-west-1"
	// provisioned is the text of the two-round tool's result.
	provisioned = "Provisioned orders in eu-west-1."
	// plainState is the requestState of the unsealed two-round tools, on
	// both SDKs: a constant, as neither seals it.
	plainState = "provision-v1"
	// legacyVersion is the protocol version of the session-based
	// workloads.
	legacyVersion = "2025-11-25"
)

// question is the message of the two-round flow's elicitation, made from
// the typed arguments on each call, as mcpserver makes it.
func question(a echoArgs) string { return "Which region should " + a.Name + " live in?" }

// checkText fails the benchmark unless got is want: each iteration checks
// the answer, so that neither side can be fast by being wrong.
func checkText(tb testing.TB, got, want string) {
	if got != want {
		tb.Fatalf("result text %q, want %q", got, want)
	}
}
