// Package bench holds benchmarks that run the same MCP workloads on Parley
// and on the official Go SDK (github.com/modelcontextprotocol/go-sdk), in one
// `go test -bench` run, so that the two can be compared on one machine at
// one time. It is a module of its own so that Parley does not depend on the
// official SDK; see README.md for the workloads and cmd/ratio for the table
// of ratios.
package bench
