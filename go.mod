module github.com/parley-mcp/parley

go 1.26.0

require (
	github.com/go-json-experiment/json v1.27.2
	github.com/google/jsonschema-go v0.4.3
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2
	github.com/yosida95/uritemplate/v3 v3.0.2
	golang.org/x/oauth2 v0.38.0
	golang.org/x/tools v0.45.0
)

require golang.org/x/text v0.14.0 // indirect
