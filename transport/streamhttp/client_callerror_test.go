package streamhttp

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// refusal is a typed error of an http.RoundTripper, as an OAuth transport
// returns for an authorization server it must not trust.
type refusal struct{ reason string }

func (e *refusal) Error() string { return "refused: " + e.reason }

// errRefused is what refusal matches with errors.Is.
var errRefused = errors.New("refused")

func (e *refusal) Is(target error) bool { return target == errRefused }

// refusingTransport passes requests to http.DefaultTransport until refuse
// is set, then fails them with a *refusal.
type refusingTransport struct{ refuse atomic.Bool }

func (rt *refusingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if rt.refuse.Load() {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, &refusal{"issuer mismatch"}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// wantRefusal checks that err matches the RoundTripper's typed error and
// still matches the -32603 error response that stood in for the answer.
func wantRefusal(t *testing.T, what string, err error) {
	t.Helper()
	var r *refusal
	if !errors.As(err, &r) || r.reason != "issuer mismatch" || !errors.Is(err, errRefused) {
		t.Errorf("%s: error %v (%T), want one matching the RoundTripper's *refusal", what, err, err)
	}
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != jsonrpc.CodeInternalError || !strings.HasPrefix(e.Message, "streamhttp: POST failed: ") || !strings.Contains(e.Message, "refused: issuer mismatch") {
		t.Errorf("%s: error %v, want one matching a -32603 *jsonrpc.Error about the failed POST", what, err)
	}
}

// TestRoundTripperErrorReachesCaller: a typed error of the HTTP client's
// RoundTripper reaches the caller of Session.CallTool (and of Connect),
// matchable with errors.As and errors.Is, while errors.As to
// *jsonrpc.Error still finds the -32603 it came with; the session goes
// on once the RoundTripper lets requests through again.
func TestRoundTripperErrorReachesCaller(t *testing.T) {
	f := newFixture()
	url, _ := serve(t, NewHandler(f.s, nil))
	rt := &refusingTransport{}
	sess := connect(t, url, nil, &ClientOptions{HTTPClient: &http.Client{Transport: rt}})
	ctx := context.Background()

	rt.refuse.Store(true)
	_, err := sess.CallTool(ctx, "echo", map[string]string{"text": "hi"})
	wantRefusal(t, "CallTool", err)
	rt.refuse.Store(false)
	res, err := sess.CallTool(ctx, "echo", map[string]string{"text": "again"})
	if err != nil || textOf(res) != "again" {
		t.Fatalf("CallTool after the refusal: %v %v", textOf(res), err)
	}

	// Connect's probe fails the same way, and the -32603 in the chain
	// keeps the automatic fallback from trying a legacy handshake.
	rt.refuse.Store(true)
	c := client.New(mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	s2, err := c.Connect(ctx, NewClientTransport(url, &ClientOptions{HTTPClient: &http.Client{Transport: rt}}))
	if err == nil {
		s2.Close()
		t.Fatal("Connect succeeded through a refusing RoundTripper")
	}
	wantRefusal(t, "Connect", err)
}

// TestLegacyRoundTripperError: on a legacy session the failed POST of a
// request is a *transport.CallError from Read, carrying the cause and the
// same -32603 error response the connection delivered before, and the
// connection goes on.
func TestLegacyRoundTripperError(t *testing.T) {
	e := newLegacyEndpoint(t, "s1", "2025-11-25", nil)
	rt := &refusingTransport{}
	c, _ := dialLegacy(t, e.url, &ClientOptions{HTTPClient: &http.Client{Transport: rt}})
	handshake(t, c)

	rt.refuse.Store(true)
	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := c.Read(ctx)
	var ce *transport.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("Read = %q, %v; want a *transport.CallError", raw, err)
	}
	if !errors.Is(err, errRefused) {
		t.Errorf("Read's error %v does not match the RoundTripper's", err)
	}
	m, _, derr := jsonrpc.DecodeMessage(ce.Response)
	r, ok := m.(*jsonrpc.Response)
	if derr != nil || !ok || r.ID.Raw() != "2" || r.Error == nil || r.Error.Code != jsonrpc.CodeInternalError ||
		!strings.HasPrefix(r.Error.Message, "streamhttp: POST failed: ") {
		t.Fatalf("CallError.Response = %s (%v), want the -32603 response to request 2", ce.Response, derr)
	}

	rt.refuse.Store(false)
	write(t, c, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if r := readResponse(t, c); r.ID.Raw() != "3" || r.Error != nil {
		t.Fatalf("after the refusal: %+v", r)
	}
}

// TestLegacyRoundTripperErrorReachesSession: the same through a
// client.Session pinned to a legacy version.
func TestLegacyRoundTripperErrorReachesSession(t *testing.T) {
	e := newLegacyEndpoint(t, "", "2025-11-25", nil)
	rt := &refusingTransport{}
	sess := connect(t, e.url, &client.Options{ProtocolVersion: "2025-11-25"}, &ClientOptions{HTTPClient: &http.Client{Transport: rt}})
	rt.refuse.Store(true)
	_, err := sess.CallTool(context.Background(), "x", nil)
	wantRefusal(t, "legacy CallTool", err)
}
