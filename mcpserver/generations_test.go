package mcpserver_test

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/stdio"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

type genArgs struct {
	Name string `json:"name"`
}

type genRegion struct {
	Region string `json:"region"`
}

type genSize struct {
	Size string `json:"size"`
}

// generationServer has a two-question dependency tool: the size question
// names the region, so it can only be asked once the region is answered.
func generationServer(t *testing.T) *mcpserver.Server {
	t.Helper()
	s, _ := newServer(t, nil)
	region := mcpserver.Elicit[genRegion]("region", func(a genArgs, _ *mcpserver.Call) string {
		return "Which region for " + a.Name + "?"
	})
	size := mcpserver.Elicit[genSize]("size", func(a genArgs, c *mcpserver.Call) string {
		return "Which size in " + region.Get(c).Region + "?"
	}, region)
	err := mcpserver.AddTool(s, &mcp.Tool{Name: "provision"}, func(ctx context.Context, c *mcpserver.Call, a genArgs) (string, error) {
		return "Provisioned " + a.Name + " (" + size.Get(c).Size + ") in " + region.Get(c).Region + ".", nil
	}, region, size)
	mustOK(t, err)
	return s
}

// generationAnswers answers the two questions by their wording.
func generationAnswers() *elicitor {
	return &elicitor{answer: func(message string) *mcp.ElicitResult {
		switch {
		case strings.HasPrefix(message, "Which region"):
			return accept(map[string]any{"region": "eu-west-1"})
		case message == "Which size in eu-west-1?":
			return accept(map[string]any{"size": "large"})
		}
		return &mcp.ElicitResult{Action: mcp.ActionDecline}
	}}
}

// TestBothGenerations runs the same dependency tool with the same client
// callbacks in both protocol generations, in memory and over Streamable
// HTTP: under 2026-07-28 the questions come back as InputRequiredResults,
// on a legacy session as server-to-client requests within the one call.
// The body sees the same typed answers and the caller the same result.
func TestBothGenerations(t *testing.T) {
	s := generationServer(t)
	httpSrv := httptest.NewServer(s.HTTPHandler(nil))
	t.Cleanup(httpSrv.Close)
	transports := map[string]transport.Transport{
		"memory": s.InMemoryTransport(),
		"stdio":  stdioPipe{s},
		"http":   streamhttp.NewClientTransport(httpSrv.URL, nil),
	}
	for tname, tr := range transports {
		for _, pin := range []mcp.ProtocolVersion{"", mcp.Version20260728, mcp.Version20251125, mcp.Version20250618} {
			t.Run(tname+"/"+string(pin), func(t *testing.T) {
				e := generationAnswers()
				sess, err := client.New(clientInfo, &client.Options{ProtocolVersion: pin, Elicit: e.elicit, Logger: quietLogger()}).
					Connect(context.Background(), tr)
				mustOK(t, err)
				defer sess.Close()
				want := pin
				if want == "" {
					want = mcp.LatestVersion
				}
				if sess.ProtocolVersion() != want {
					t.Errorf("ProtocolVersion = %s, want %s", sess.ProtocolVersion(), want)
				}
				res, err := sess.CallTool(context.Background(), "provision", map[string]any{"name": "orders"})
				mustOK(t, err)
				wantText(t, res, false, "Provisioned orders (large) in eu-west-1.")
				if e.count() != 2 {
					t.Errorf("the client was asked %d times, want 2", e.count())
				}
			})
		}
	}
}

// TestLegacyStatelessHTTPHasNoBackChannel: a dependency tool on a legacy
// deployment that keeps no sessions cannot ask, and says so.
func TestLegacyStatelessHTTPHasNoBackChannel(t *testing.T) {
	s := generationServer(t)
	httpSrv := httptest.NewServer(s.HTTPHandler(&streamhttp.HandlerOptions{Sessions: &streamhttp.SessionOptions{Stateless: true}}))
	t.Cleanup(httpSrv.Close)
	e := generationAnswers()
	sess, err := client.New(clientInfo, &client.Options{ProtocolVersion: mcp.Version20251125, Elicit: e.elicit, Logger: quietLogger()}).
		Connect(context.Background(), streamhttp.NewClientTransport(httpSrv.URL, nil))
	mustOK(t, err)
	defer sess.Close()
	_, err = sess.CallTool(context.Background(), "provision", map[string]any{"name": "orders"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(rpcErr.Message, "no back-channel") {
		t.Fatalf("err = %v, want -32600 saying there is no back-channel", err)
	}
	if e.count() != 0 {
		t.Errorf("the client was asked %d times without a back-channel", e.count())
	}
}

// TestLegacyHandBuiltInputRequired: a hand-built InputRequiredResult on a
// legacy session is -32603 (S15); the mixing rule and the bridge live in
// the low-level server.
func TestLegacyHandBuiltInputRequired(t *testing.T) {
	s, _ := newServer(t, nil)
	err := mcpserver.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, c *mcpserver.Call, a genArgs) (mcp.CallToolOutcome, error) {
		return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"q": &mcp.ListRootsRequest{}}}, nil
	})
	mustOK(t, err)
	sess := connect(t, s, &client.Options{ProtocolVersion: mcp.Version20251125,
		ListRoots: func(context.Context) (*mcp.ListRootsResult, error) { return &mcp.ListRootsResult{}, nil }})
	_, err = sess.CallTool(context.Background(), "ask", map[string]any{"name": "x"})
	wantRPCError(t, err, jsonrpc.CodeInternalError, "")
}

// TestLegacySessionLimit: a legacy client over the session limit gets an
// error that names the limit; the sessions already open keep working.
func TestLegacySessionLimit(t *testing.T) {
	s := generationServer(t)
	httpSrv := httptest.NewServer(s.HTTPHandler(&streamhttp.HandlerOptions{Sessions: &streamhttp.SessionOptions{MaxSessions: 1}}))
	t.Cleanup(httpSrv.Close)
	connectLegacy := func(e *elicitor) (*client.Session, error) {
		return client.New(clientInfo, &client.Options{ProtocolVersion: mcp.Version20251125, Elicit: e.elicit, Logger: quietLogger()}).
			Connect(context.Background(), streamhttp.NewClientTransport(httpSrv.URL, nil))
	}
	first, err := connectLegacy(generationAnswers())
	mustOK(t, err)
	defer first.Close()
	if _, err := connectLegacy(generationAnswers()); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("second session: %v, want an error naming the limit", err)
	}
	// A 2026-07-28 client needs no session: the limit does not touch it.
	modern, err := client.New(clientInfo, &client.Options{Elicit: generationAnswers().elicit, Logger: quietLogger()}).
		Connect(context.Background(), streamhttp.NewClientTransport(httpSrv.URL, nil))
	mustOK(t, err)
	defer modern.Close()
	for _, sess := range []*client.Session{first, modern} {
		res, err := sess.CallTool(context.Background(), "provision", map[string]any{"name": "orders"})
		mustOK(t, err)
		wantText(t, res, false, "Provisioned orders (large) in eu-west-1.")
	}
}

// stdioPipe connects a client to s with stdio's newline framing over a
// pair of in-process pipes, as a spawned server process would be reached.
type stdioPipe struct{ s *mcpserver.Server }

func (p stdioPipe) Connect(ctx context.Context) (transport.Conn, error) {
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	go func() {
		p.s.ServeConn(context.WithoutCancel(ctx), stdio.NewConn(toServer, fromServer, nil))
		fromServer.Close()
	}()
	return &closeBoth{Conn: stdio.NewConn(toClient, fromClient, nil), w: fromClient}, nil
}

// closeBoth closes the client's end of the pipe to the server too, so that
// the server sees the end of its input.
type closeBoth struct {
	transport.Conn
	w io.Closer
}

func (c *closeBoth) Close() error {
	c.w.Close()
	return c.Conn.Close()
}
