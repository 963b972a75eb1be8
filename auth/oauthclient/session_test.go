package oauthclient

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// TestTypedErrorReachesSession: the Transport's typed errors reach the
// caller of client.Client.Connect over Streamable HTTP, under 2026-07-28
// and on a legacy session alike, where the transport stands in for the
// missing answer with a -32603 error response: errors.Is and errors.As find
// the OAuth error, and errors.As still finds that *jsonrpc.Error.
func TestTypedErrorReachesSession(t *testing.T) {
	for _, version := range []mcp.ProtocolVersion{"", mcp.Version20251125} {
		t.Run("version="+string(version), func(t *testing.T) {
			as := newFakeAS(t, func(as *fakeAS) { as.issuerOverride = "https://attacker.example" })
			rs := newFakeRS(t, as, nil)
			quiet := slog.New(slog.DiscardHandler)
			c := client.New(mcp.Implementation{Name: "app", Version: "1"}, &client.Options{ProtocolVersion: version, Logger: quiet})
			sess, err := c.Connect(context.Background(), streamhttp.NewClientTransport(rs.url(), &streamhttp.ClientOptions{
				HTTPClient: newTransport(t, Config{}).Client(),
				Logger:     quiet,
			}))
			if err == nil {
				sess.Close()
				t.Fatal("Connect succeeded with mismatched authorization server metadata")
			}
			var ie *IssuerMismatchError
			if !errors.Is(err, ErrIssuerMismatch) || !errors.As(err, &ie) || ie.Got != "https://attacker.example" {
				t.Errorf("Connect = %v, want an error matching ErrIssuerMismatch and *IssuerMismatchError", err)
			}
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInternalError {
				t.Errorf("Connect = %v, want it to match the -32603 *jsonrpc.Error too", err)
			}
			if auth, token, reg := as.counts(); auth+token+reg != 0 {
				t.Errorf("the client used the endpoints of mismatched metadata: %d %d %d requests", auth, token, reg)
			}
		})
	}
}
