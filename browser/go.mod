module github.com/parley-mcp/parley/browser

go 1.26.0

replace github.com/parley-mcp/parley => ../

require github.com/parley-mcp/parley v0.0.0-00010101000000-000000000000
