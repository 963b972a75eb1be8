package spectest

import (
	"regexp"
)

// goText matches what Go's own error and formatting text looks like, none
// of which belongs in a message to a peer: fmt's complaints (%!d(string=x),
// %!(EXTRA ...)), the %v of a pointer to an error type or of a struct
// (*errors.errorString, &{...}), Go type and package names (*mcp.Tool,
// wire.Error, json.RawMessage), encoding/json's and the runtime's error
// prefixes, source paths, and <nil>.
var goText = regexp.MustCompile(alternatives(
	`%!`,
	`\*?errors\.[a-zA-Z]+`,
	`\*?fmt\.[a-zA-Z]+Error`,
	`&\{`,
	`\*(mcp|wire|jsonrpc|server|client|mcpserver|requeststate|streamhttp|transport|json|url|http)\.[A-Z][A-Za-z]*`,
	`\b(mcp|wire|jsonrpc|mcpserver|requeststate)\.[A-Z][A-Za-z]*\b`,
	`\bjson: `,
	`runtime error`,
	`goroutine [0-9]`,
	`\.go:[0-9]`,
	`<nil>`,
))

func alternatives(alts ...string) string {
	out := ""
	for i, a := range alts {
		if i > 0 {
			out += "|"
		}
		out += "(?:" + a + ")"
	}
	return out
}

// GoText returns every fragment of data that reads as Go's own text: a Go
// error chain or a %v that reached the wire by accident. Messages to a peer
// are written for the peer (see jsonrpc/wire's constructors); the detail of
// a Go error goes to the log.
func GoText(data []byte) []string {
	var out []string
	for _, m := range goText.FindAll(data, -1) {
		out = append(out, string(m))
	}
	return out
}
