// Package interop tests Parley against peers it did not write: programs
// built on the TypeScript SDK v2 from the npm registry, at the versions
// ts/package-lock.json pins. Parley's client, in automatic mode, connects
// over Streamable HTTP and stdio to TypeScript servers of the 2025
// generation (sessionful, stateless, stdio-only) and calls a tool that
// elicits; the TypeScript client, in its legacy and automatic modes, does
// the same against Parley's server, and through the bridge (package
// bridge) to a server of the other generation. The tasks extension is run
// both ways against its own package, @modelcontextprotocol/ext-tasks
// (tasks_test.go). The clients people run today, the TypeScript SDK v1
// client and the MCP Inspector's CLI, run every flow they have against a
// Parley fixture (fixture_test.go, tsv1_test.go, inspector_test.go), and
// sameread_test.go pins down the TypeScript clients' loss of progress
// that shares a read with its answer. It is a module of its own, so that `go test ./...` at
// the root never needs Node.js; `make interop` (part of `make test`) runs
// it. See README.md.
package interop
