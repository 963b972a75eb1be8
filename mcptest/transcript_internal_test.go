package mcptest

import (
	"strings"
	"testing"

	"github.com/parley-mcp/parley/internal/questionkey"
)

// records makes records of lines "client MSG" and "server MSG"; a
// server's "server@N MSG" belongs to round N of its questions.
func records(lines ...string) []record {
	rounds := map[string]*questionkey.Round{}
	var out []record
	for _, l := range lines {
		from, msg, _ := strings.Cut(l, " ")
		from, round, _ := strings.Cut(from, "@")
		r := record{fromServer: from == "server", data: []byte(msg)}
		if round != "" {
			if rounds[round] == nil {
				rounds[round] = new(questionkey.Round)
			}
			r.round = rounds[round]
		}
		out = append(out, r)
	}
	return out
}

// TestRenderNormalises: ids are numbered per sender in the transcript's
// order (a cancellation's requestId and a listen stream's subscriptionId
// with them), volatile values become numbered placeholders that keep
// equal values equal, times become <time>, members keep their order, and
// what is not JSON is written as it came.
func TestRenderNormalises(t *testing.T) {
	got := string(render(records(
		`client {"jsonrpc":"2.0","id":"listen-7","method":"subscriptions/listen","params":{}}`,
		`client {"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"_meta":{"progressToken":"p9"},"name":"a"}}`,
		`server {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p9","progress":1}}`,
		`server {"jsonrpc":"2.0","id":41,"result":{"resultType":"input_required","requestState":"sealed-AAA","taskId":"t-1","createdAt":"2026-12-07T10:00:00Z"}}`,
		`client {"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"requestState":"sealed-AAA","zeta":1,"alpha":[true,null,1.50]}}`,
		`client {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":42}}`,
		`server {"jsonrpc":"2.0","id":42,"result":{"requestState":"sealed-BBB","custom":"x<y>&z","lastUpdatedAt":"2026-12-07T10:00:01Z"}}`,
		`server {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-7"}}}`,
		`server not json`,
	), []string{"custom"}))
	want := `client {"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}
  server {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}
  server not json
client {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"progressToken":"<progressToken 1>"},"name":"a"}}
  server {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"<progressToken 1>","progress":1}}
server {"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","requestState":"<requestState 1>","taskId":"<taskId 1>","createdAt":"<time>"}}
client {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"requestState":"<requestState 1>","zeta":1,"alpha":[true,null,1.50]}}
  client {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}
server {"jsonrpc":"2.0","id":3,"result":{"requestState":"<requestState 2>","custom":"<custom 1>","lastUpdatedAt":"<time>"}}
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s\ndiff:\n%s", got, want, lineDiff(want, got))
	}
}

// TestRenderOrdersARound: the questions a legacy server sent together
// are written where the first was sent, sorted by content, each with its
// answer, and numbered in that order, however they crossed; questions of
// different rounds stay in the order they were sent; the call's response
// comes after them.
func TestRenderOrdersARound(t *testing.T) {
	call := `client {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"two"}}`
	ask := func(round, id, q string) string {
		return `server@` + round + ` {"jsonrpc":"2.0","id":` + id + `,"method":"elicitation/create","params":{"message":"` + q + `"}}`
	}
	answer := func(id, a string) string {
		return `client {"jsonrpc":"2.0","id":` + id + `,"result":{"action":"` + a + `"}}`
	}
	done := `server {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`
	sorted := `client {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"two"}}
  server {"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"A?"}}
  client {"jsonrpc":"2.0","id":1,"result":{"action":"accept"}}
  server {"jsonrpc":"2.0","id":2,"method":"elicitation/create","params":{"message":"B?"}}
  client {"jsonrpc":"2.0","id":2,"result":{"action":"decline"}}
server {"jsonrpc":"2.0","id":1,"result":{"content":[]}}
`
	bFirst := `client {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"two"}}
  server {"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"B?"}}
  client {"jsonrpc":"2.0","id":1,"result":{"action":"decline"}}
  server {"jsonrpc":"2.0","id":2,"method":"elicitation/create","params":{"message":"A?"}}
  client {"jsonrpc":"2.0","id":2,"result":{"action":"accept"}}
server {"jsonrpc":"2.0","id":1,"result":{"content":[]}}
`
	for _, c := range []struct {
		name  string
		order []string
		want  string
	}{
		{"in order", []string{call, ask("1", "1", "A?"), ask("1", "2", "B?"), answer("1", "accept"), answer("2", "decline"), done}, sorted},
		{"B first", []string{call, ask("1", "1", "B?"), ask("1", "2", "A?"), answer("1", "decline"), answer("2", "accept"), done}, sorted},
		{"answers crossed", []string{call, ask("1", "7", "B?"), ask("1", "8", "A?"), answer("8", "accept"), answer("7", "decline"), done}, sorted},
		{"B answered before A was sent", []string{call, ask("1", "5", "B?"), answer("5", "decline"), ask("1", "6", "A?"), answer("6", "accept"), done}, sorted},
		{"two rounds", []string{call, ask("1", "5", "B?"), answer("5", "decline"), ask("2", "6", "A?"), answer("6", "accept"), done}, bFirst},
		{"no rounds", []string{call, ask("", "5", "B?"), answer("5", "decline"), ask("", "6", "A?"), answer("6", "accept"), done}, bFirst},
	} {
		for i, l := range c.order {
			c.order[i] = strings.Replace(l, "server@ ", "server ", 1)
		}
		if got := string(render(records(c.order...), nil)); got != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}

// TestRenderLeavesOutIdlePolls: a tasks/get that found the task working,
// or waiting for answers it was sent (input_required without questions),
// is left out; one that found anything else stays.
func TestRenderLeavesOutIdlePolls(t *testing.T) {
	got := string(render(records(
		`client {"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"x"}}`,
		`server {"jsonrpc":"2.0","id":1,"result":{"taskId":"x","status":"working"}}`,
		`client {"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"x"}}`,
		`server {"jsonrpc":"2.0","id":2,"result":{"taskId":"x","status":"input_required","inputRequests":{}}}`,
		`client {"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"x"}}`,
		`server {"jsonrpc":"2.0","id":3,"result":{"taskId":"x","status":"input_required"}}`,
		`client {"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"x"}}`,
		`server {"jsonrpc":"2.0","id":4,"result":{"taskId":"x","status":"completed"}}`,
	), nil))
	want := `client {"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"<taskId 1>"}}
server {"jsonrpc":"2.0","id":1,"result":{"taskId":"<taskId 1>","status":"completed"}}
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestLineDiff: the changed lines with a line of context.
func TestLineDiff(t *testing.T) {
	got := lineDiff("a\nb\nc\nd\ne\n", "a\nb\nC\nd\ne\n")
	want := "  b\n- c\n+ C\n  d\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestWithKey: the key goes into a request's params' _meta, beside what
// is there; a notification or a response is left alone.
func TestWithKey(t *testing.T) {
	for in, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"method":"roots/list"}`:                                     `{"id":1,"jsonrpc":"2.0","method":"roots/list","params":{"_meta":{"dev.parley.mcptest/questionKey":"k"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"traceparent":"t"},"a":1}}`: `{"id":1,"jsonrpc":"2.0","method":"x","params":{"_meta":{"dev.parley.mcptest/questionKey":"k","traceparent":"t"},"a":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`:                    `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                                               `{"jsonrpc":"2.0","id":1,"result":{}}`,
	} {
		if got := string(withKey([]byte(in), "k")); got != want {
			t.Errorf("withKey(%s) = %s, want %s", in, got, want)
		}
	}
}
