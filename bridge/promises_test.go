package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-mcp/parley/bridge"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// countArgs are the arguments of the "count" tool of the counting
// remotes: who asks, and how many questions.
type countArgs struct {
	Who string `json:"who"`
	N   int    `json:"n"`
}

var nameSchema = mcp.ElicitRequestedSchema{Properties: map[string]mcp.PrimitiveSchemaDefinition{"name": &mcp.StringSchema{}}}

// question is the text of a counting remote's k-th question for who.
func question(who string, k int) string { return who + " #" + strconv.Itoa(k) }

// nameOf reads the name out of an elicitation's answer.
func nameOf(raw json.RawMessage) (string, error) {
	res, err := mcp.InputResponses{"a": raw}.Elicit("a")
	if err != nil {
		return "", err
	}
	name, _ := res.Content["name"].(string)
	return name, nil
}

// countingRemote serves, over HTTP, a low-level server of version's
// generation whose tool "count" asks n questions one after the other,
// each naming who and its number, and answers with the names it was
// given, joined by commas. A legacy server asks on the back-channel while
// the call runs; a 2026-07-28 server answers input_required n times,
// carrying the names so far in its requestState.
func countingRemote(t *testing.T, version mcp.ProtocolVersion, extension string) string {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "counting", Version: "1"}, &server.Options{
		Logger:            quiet,
		SupportedVersions: []mcp.ProtocolVersion{version},
	})
	if extension != "" {
		must(t, s.DeclareExtension(extension, nil))
	}
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		var a countArgs
		if err := json.Unmarshal(p.Arguments, &a); err != nil {
			return nil, err
		}
		if version.Era() == mcp.EraLegacy {
			var names []string
			for k := 1; k <= a.N; k++ {
				raw, err := req.Ask(ctx, mcp.NewElicitFormRequest(question(a.Who, k), nameSchema))
				if err != nil {
					return nil, err
				}
				name, err := nameOf(raw)
				if err != nil {
					return nil, err
				}
				names = append(names, name)
			}
			return mcp.TextResult(strings.Join(names, ",")), nil
		}
		state, _ := p.LookupRequestState()
		var names []string
		if state != "" {
			names = strings.Split(state, ",")
		}
		if raw, ok := p.InputResponses["q"]; ok {
			name, err := nameOf(raw)
			if err != nil {
				return nil, err
			}
			names = append(names, name)
		}
		if len(names) < a.N {
			ir := &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"q": mcp.NewElicitFormRequest(question(a.Who, len(names)+1), nameSchema)}}
			ir.SetRequestState(strings.Join(names, ","), true)
			return ir, nil
		}
		return mcp.TextResult(strings.Join(names, ",")), nil
	})
	srv := httptest.NewServer(streamhttp.NewHandler(s, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// startBridgeWith is startBridge with the bridge's options.
func startBridgeWith(t *testing.T, remote transport.Transport, bo *bridge.Options, opts *client.Options) *client.Session {
	t.Helper()
	hostSide, bridgeSide := transport.NewMemoryPipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	o := *bo
	o.Logger = quiet
	go func() { served <- bridge.Serve(ctx, bridgeSide, remote, &o) }()
	co := *opts
	co.Logger = quiet
	cctx, ccancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer ccancel()
	sess, err := client.New(mcp.Implementation{Name: "host", Version: "1.0.0"}, &co).Connect(cctx, transport.NewMemoryTransport(hostSide))
	if err != nil {
		cancel()
		t.Fatalf("host Connect through the bridge: %v", err)
	}
	t.Cleanup(func() {
		sess.Close()
		testwait.Recv(t, served, "Serve to return after the host left")
		cancel()
	})
	return sess
}

// echoingHost answers every form with the question's own text plus "!"
// as the name, so that each answer says which question it is for.
func echoingHost(o *client.Options) *client.Options {
	o.Elicit = func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
		f, _ := p.(*mcp.ElicitRequestFormParams)
		if f == nil {
			return nil, fmt.Errorf("not a form: %T", p)
		}
		return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": f.Message + "!"}}, nil
	}
	o.Loop = &client.LoopOptions{MaxRounds: 100} // the bridge's limit is under test, not the host's
	return o
}

// wantNames is what "count" answers for who and n when the host echoes.
func wantNames(who string, n int) string {
	var names []string
	for k := 1; k <= n; k++ {
		names = append(names, question(who, k)+"!")
	}
	return strings.Join(names, ",")
}

// count calls "count" and returns its text, or the error.
func count(t *testing.T, sess *client.Session, who string, n int) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	res, err := sess.CallTool(ctx, "count", countArgs{Who: who, N: n})
	if err != nil {
		return "", err
	}
	if res.IsError {
		return "", fmt.Errorf("tool error %q", resultText(res))
	}
	return resultText(res), nil
}

// The bridge's round limit is exact, both ways questions cross it: a
// legacy server's questions relayed to a 2026-07-28 host, and a
// 2026-07-28 server's input_required rounds asked of a legacy host. A
// call may take MaxRounds rounds (10 by default); one more fails the
// call with an internal error.
func TestRoundLimitExact(t *testing.T) {
	for _, tc := range []struct {
		name         string
		remote, host mcp.ProtocolVersion
	}{
		{"legacy server, 2026-07-28 host", mcp.Version20251125, mcp.LatestVersion},
		{"2026-07-28 server, legacy host", mcp.LatestVersion, mcp.Version20251125},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := countingRemote(t, tc.remote, "")
			for _, limit := range []int{0, 2} {
				rounds := limit
				if rounds == 0 {
					rounds = 10 // the default
				}
				sess := startBridgeWith(t, streamhttp.NewClientTransport(url, nil), &bridge.Options{MaxRounds: limit},
					echoingHost(&client.Options{ProtocolVersion: tc.host}))
				if got, err := count(t, sess, "ann", rounds); err != nil || got != wantNames("ann", rounds) {
					t.Errorf("MaxRounds %d: %d questions: %q, %v; want every answer", limit, rounds, got, err)
				}
				var rpcErr *jsonrpc.Error
				if got, err := count(t, sess, "bob", rounds+1); !errors.As(err, &rpcErr) || rpcErr.Code != -32603 {
					t.Errorf("MaxRounds %d: %d questions: %q, %v; want an internal error", limit, rounds+1, got, err)
				}
			}
		})
	}
}

// Concurrent calls through the bridge never receive each other's
// answers: calls of one host, each asking its own questions, all waiting
// at once, each get exactly the answers to their own. For a 2026-07-28
// host and a legacy server, every waiting call is parked under its own
// requestState at the same time (the host answers only once all have
// asked), which is where two calls could be confused.
func TestConcurrentCallsKeepTheirAnswers(t *testing.T) {
	const calls, questions = 6, 2
	for _, tc := range []struct {
		name         string
		remote, host mcp.ProtocolVersion
	}{
		{"legacy server, 2026-07-28 host", mcp.Version20251125, mcp.LatestVersion},
		{"2026-07-28 server, legacy host", mcp.LatestVersion, mcp.Version20251125},
		{"legacy server, legacy host", mcp.Version20251125, mcp.Version20251125},
		{"2026-07-28 server, 2026-07-28 host", mcp.LatestVersion, mcp.LatestVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := countingRemote(t, tc.remote, "")
			// The host answers a round's questions only once every call
			// is waiting for an answer to its round.
			var mu sync.Mutex
			waiting, round := 0, 0
			all := make(chan struct{})
			o := echoingHost(&client.Options{ProtocolVersion: tc.host})
			echo := o.Elicit
			o.Elicit = func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
				mu.Lock()
				waiting++
				if waiting == calls {
					waiting, round = 0, round+1
					close(all)
					all = make(chan struct{})
				}
				gate := all
				if waiting == 0 {
					gate = nil
				}
				mu.Unlock()
				if gate != nil {
					select {
					case <-gate:
					case <-ctx.Done():
						return nil, ctx.Err()
					case <-time.After(testwait.FailAfter):
						return nil, fmt.Errorf("not every call asked")
					}
				}
				return echo(ctx, p)
			}
			sess := startBridgeWith(t, streamhttp.NewClientTransport(url, nil), &bridge.Options{}, o)
			var wg sync.WaitGroup
			for i := range calls {
				who := "caller" + strconv.Itoa(i)
				wg.Go(func() {
					if got, err := count(t, sess, who, questions); err != nil || got != wantNames(who, questions) {
						t.Errorf("%s got %q, %v; want the answers to its own questions, %q", who, got, err, wantNames(who, questions))
					}
				})
			}
			wg.Wait()
			mu.Lock()
			defer mu.Unlock()
			if round != questions {
				t.Errorf("%d rounds in which every call waited at once, want %d", round, questions)
			}
		})
	}
}

// A 2026-07-28 host that offers only roots, or only sampling, or only
// forms, is one that can answer: its call to a legacy server is relayed,
// so that the server's question reaches it, instead of going on the
// bridge's shared session, which declares nothing.
func TestHostThatCanAnswerIsRelayed(t *testing.T) {
	url, _ := legacyRemote(t, newRemoteEvents())
	full := hostCallbacks(&client.Options{}, false)
	for _, tc := range []struct {
		tool, want string
		only       func(o *client.Options)
	}{
		{"roots", "roots:file:///work", func(o *client.Options) { o.ListRoots = full.ListRoots }},
		{"sample", "sampled:a rose", func(o *client.Options) { o.Sample = full.Sample }},
		{"ask", "accept:Ada", func(o *client.Options) { o.Elicit = full.Elicit }},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			o := &client.Options{ProtocolVersion: mcp.LatestVersion}
			tc.only(o)
			sess := startBridge(t, httpRemote(url), o)
			if got := callTool(t, sess, tc.tool); got != tc.want {
				t.Errorf("%s from a host offering only what it asks = %q, want %q", tc.tool, got, tc.want)
			}
		})
	}
}

// A 2026-07-28 server's extensions are not shown to the host, of either
// generation: the bridge does not forward their methods. The rest of
// the capabilities is.
func TestExtensionsNotShownToHost(t *testing.T) {
	url := countingRemote(t, mcp.LatestVersion, "io.example/widgets")
	for _, version := range []mcp.ProtocolVersion{mcp.Version20251125, mcp.LatestVersion} {
		t.Run(string(version), func(t *testing.T) {
			sess := startBridge(t, httpRemote(url), &client.Options{ProtocolVersion: version})
			caps := sess.ServerCapabilities()
			if caps == nil || caps.Tools == nil {
				t.Fatalf("capabilities %+v: the remote server's tools are missing", caps)
			}
			if len(caps.Extensions) != 0 {
				t.Errorf("the host is shown the remote server's extensions %v", caps.Extensions)
			}
		})
	}
}
