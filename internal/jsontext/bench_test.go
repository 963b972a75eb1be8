package jsontext

import (
	"encoding/json"
	"strings"
	"testing"
)

// benchMessages are JSON-RPC messages of the sizes Parley reads: a
// tools/call response, a tools/list result of a few tools (2 KB), and a
// tools/call response carrying 64 KB of text with escapes in it.
func benchMessages(tb testing.TB) []struct {
	name string
	msg  []byte
} {
	small := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Hello, world, and a somewhat longer text"}],"structuredContent":{"greeting":"Hello"}}}`
	tool := `{"name":"tool_x","description":"Does a thing with \"quotes\" and numbers","inputSchema":{"type":"object","properties":{"x":{"type":"integer","minimum":-10.5e2}},"required":["x"]}}`
	tools := strings.TrimSuffix(strings.Repeat(tool+",", 2048/len(tool)), ",")
	medium := `{"jsonrpc":"2.0","id":"abc","result":{"tools":[` + tools + `]}}`
	line := `Lorem ipsum dolor sit amet, consectetur adipiscing elit \"q\" \u00e9\n`
	large := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + strings.Repeat(line, 64<<10/len(line)) + `"}]}}`
	msgs := []struct {
		name string
		msg  []byte
	}{{"170B", []byte(small)}, {"2KB", []byte(medium)}, {"64KB", []byte(large)}}
	for _, m := range msgs {
		if !json.Valid(m.msg) {
			tb.Fatalf("%s: not JSON", m.name)
		}
	}
	return msgs
}

// BenchmarkScanMembers measures the validating pass the JSON-RPC layer
// makes over every message it reads, against json.Valid.
func BenchmarkScanMembers(b *testing.B) {
	for _, m := range benchMessages(b) {
		b.Run(m.name+"/ScanMembers", func(b *testing.B) {
			b.SetBytes(int64(len(m.msg)))
			n := 0
			for b.Loop() {
				if ScanMembers(m.msg, func(_, _ []byte) { n++ }) != nil {
					b.Fatal("invalid")
				}
			}
		})
		b.Run(m.name+"/json.Valid", func(b *testing.B) {
			b.SetBytes(int64(len(m.msg)))
			for b.Loop() {
				json.Valid(m.msg)
			}
		})
	}
}
