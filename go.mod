module github.com/parley-mcp/parley

go 1.25.0

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2
	golang.org/x/tools v0.45.0
)

require golang.org/x/text v0.14.0 // indirect
