package mcp

// This file keeps names that earlier versions of Parley exported and that
// have since been renamed, so that programs written against them still
// compile. Each says what to use instead; CHANGELOG.md says when it went
// and when it may be removed (not before the next minor release after its
// deprecation).

// CallToolParams is the earlier name of [CallToolRequestParams].
//
// Deprecated: use [CallToolRequestParams], the schema's name.
type CallToolParams = CallToolRequestParams

// RequestId is the schema's spelling of [RequestID].
//
// Deprecated: use [RequestID], the Go spelling of the same type.
type RequestId = RequestID //nolint:revive // kept for programs that use the schema's name
