package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// The engine's plaintext state, as a key holder (a sister instance of
// another release, say) may have issued it: only records that fit the
// questions as they are now count; anything else is no progress and the
// question is asked again, never an error, and never a value the client
// could not have given.

// lowLevelTransport serves a low-level server over an in-memory pipe.
type lowLevelTransport struct{ s *server.Server }

func (t lowLevelTransport) Connect(ctx context.Context) (transport.Conn, error) {
	c, s := transport.NewMemoryPipe()
	go t.s.ServeConn(context.WithoutCancel(ctx), s)
	return c, nil
}

// issueState returns a round of the provision call for name, sealed for
// the "fleet" servers holding sharedKeys, whose plaintext state is state
// and which asks asks.
func issueState(t *testing.T, name, state string, asks mcp.InputRequests) *client.Pending {
	t.Helper()
	issuer := server.New(mcp.Implementation{Name: "fleet", Version: "0"}, &server.Options{Logger: quietLogger()})
	requeststate.MustProtect(issuer, &requeststate.Policy{Keys: sharedKeys()})
	issuer.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return &mcp.InputRequiredResult{InputRequests: asks, RequestState: state}, nil
	})
	opts := *manual
	opts.Logger = quietLogger()
	sess, err := client.New(clientInfo, &opts).Connect(context.Background(), lowLevelTransport{issuer})
	mustOK(t, err)
	defer sess.Close()
	return begin(t, sess, provisionCall(t, name))
}

func TestEngineStateRecords(t *testing.T) {
	s := provisionServer(t, "fleet", &requeststate.Policy{Keys: sharedKeys()})
	sess := connect(t, s, manual)
	// The question exactly as the server renders it, and its digest.
	asked := begin(t, sess, provisionCall(t, "orders")).InputRequests
	digest, err := requeststate.QuestionDigest(asked["region"])
	mustOK(t, err)
	other, err := requeststate.QuestionDigest(mcp.NewElicitFormRequest("Which region should users live in?", mcp.ElicitRequestedSchema{}))
	mustOK(t, err)
	record := func(key, action, data, q string) string {
		r := fmt.Sprintf(`{"a":%q,"q":%q`, action, q)
		if data != "" {
			r += `,"d":` + data
		}
		return fmt.Sprintf(`%q:%s}`, key, r)
	}

	// A record that fits is used: the call completes without asking.
	p := issueState(t, "orders", `{"v":1,"o":{`+record("region", "accept", `{"region":"sa-east-1"}`, digest)+`}}`, asked)
	wantText(t, finish(t, sess, p, nil), false, "Provisioned orders in sa-east-1.")

	// A recorded decline ends the call as a fresh one would.
	p = issueState(t, "orders", `{"v":1,"o":{`+record("region", "decline", "", digest)+`}}`, asked)
	wantText(t, finish(t, sess, p, nil), true, `Tool "provision" stopped: the user declined question "region" of tool "provision".`)

	for _, tc := range []struct{ name, state string }{
		{"accept failing the schema", `{"v":1,"o":{` + record("region", "accept", `{"region":5}`, digest) + `}}`},
		{"accept without content", `{"v":1,"o":{` + record("region", "accept", "", digest) + `}}`},
		{"decline with content", `{"v":1,"o":{` + record("region", "decline", `{"region":"x"}`, digest) + `}}`},
		{"unknown action", `{"v":1,"o":{` + record("region", "maybe", `{"region":"x"}`, digest) + `}}`},
		{"digest of another question", `{"v":1,"o":{` + record("region", "accept", `{"region":"x"}`, other) + `}}`},
		{"no digest", `{"v":1,"o":{"region":{"a":"accept","d":{"region":"x"}}}}`},
		{"only a ghost entry", `{"v":1,"o":{` + record("ghost", "accept", `{"region":"x"}`, digest) + `}}`},
		{"another state version", `{"v":2,"o":{` + record("region", "accept", `{"region":"x"}`, digest) + `}}`},
		{"not JSON", `region=x`},
		{"wrong shapes", `{"v":1,"o":[1,2]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := issueState(t, "orders", tc.state, asked)
			next := again(t, sess, p, nil)
			wantKeys(t, next.InputRequests, "region")
			// The new round's state carries nothing of the old one: answering
			// now completes with the fresh answer.
			wantText(t, finish(t, sess, next, responses(t, map[string]mcp.InputResponse{"region": accept(map[string]any{"region": "eu"})})),
				false, "Provisioned orders in eu.")
		})
	}

	// An answer to the question the issuer's round asked counts; the
	// state's garbage does not stand in the way.
	p = issueState(t, "orders", `not json`, asked)
	wantText(t, finish(t, sess, p, responses(t, map[string]mcp.InputResponse{"region": accept(map[string]any{"region": "ap"})})),
		false, "Provisioned orders in ap.")

	// An answer to a question the issuer's round did not ask (it asked for
	// roots) does not count.
	p = issueState(t, "orders", `{"v":1}`, mcp.InputRequests{"region": mcp.NewListRootsRequest()})
	next := again(t, sess, p, mcp.InputResponses{"region": json.RawMessage(`{"action":"accept","content":{"region":"ap"}}`)})
	wantKeys(t, next.InputRequests, "region")
}
