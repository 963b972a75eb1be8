module github.com/parley-mcp/parley/interop

go 1.26.0

replace github.com/parley-mcp/parley => ../

require github.com/parley-mcp/parley v0.0.0-00010101000000-000000000000

require (
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
)
