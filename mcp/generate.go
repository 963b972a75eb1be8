package mcp

// The encoders of the types marked //mcp:json are written by mcpgen from
// their declarations into json_gen.go (design record 022); `make vet`
// fails when that file is not what mcpgen writes now.
//go:generate go run ../internal/mcpgen
