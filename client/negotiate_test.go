package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// aheadClient returns a client that prefers futureVersion and also speaks
// 2026-07-28, as a Parley that knows a newer version would.
func aheadClient(opts *client.Options) *client.Client {
	c := newClient(opts)
	client.SetVersionsForTest(c, futureVersion, mcp.LatestVersion)
	return c
}

func version(t testing.TB, m wireMsg) mcp.ProtocolVersion {
	t.Helper()
	var v mcp.ProtocolVersion
	if raw := m.meta(t)[mcp.MetaKeyProtocolVersion]; raw != nil {
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

func TestSchemaCatchesMissingMeta(t *testing.T) {
	// The wire checks would pass vacuously if the schema accepted anything.
	spectest.Dir(t)
	bad := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	if err := spectest.CheckMessage(mcp.LatestVersion, bad, ""); err == nil {
		t.Fatal("the schema accepts a tools/list request without _meta")
	}
}

func TestNegotiateDownOnDiscover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, tr := newFake(t)
		res := connectAsync(aheadClient(nil), tr)

		first := f.expect(mcp.MethodDiscover)
		if v := version(t, first); v != futureVersion {
			t.Fatalf("first discover speaks %q, want the preferred %q", v, futureVersion)
		}
		f.unsupported(first.ID, futureVersion, mcp.LatestVersion, mcp.Version20251125)

		second := f.expect(mcp.MethodDiscover)
		if v := version(t, second); v != mcp.LatestVersion {
			t.Fatalf("retry speaks %q, want %q", v, mcp.LatestVersion)
		}
		if string(second.ID) == string(first.ID) {
			t.Errorf("retry reuses request id %s", first.ID)
		}
		f.reply(second.ID, fakeDiscoverResult)
		r := <-res
		if r.err != nil {
			t.Fatal(r.err)
		}
		defer r.sess.Close()
		if got := r.sess.ProtocolVersion(); got != mcp.LatestVersion {
			t.Errorf("ProtocolVersion() = %q, want %q", got, mcp.LatestVersion)
		}

		// Later requests speak the negotiated version from the start.
		done := async(func() error { _, err := r.sess.ListTools(context.Background(), ""); return err })
		m := f.expect(mcp.MethodListTools)
		if v := version(t, m); v != mcp.LatestVersion {
			t.Errorf("tools/list after negotiation speaks %q", v)
		}
		f.reply(m.ID, `{"resultType":"complete","tools":[]}`)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestNegotiateWithRealServer has the real server refuse the client's
// preferred version.
func TestNegotiateWithRealServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, w := connect(t, aheadClient(nil), fixture(nil))
		if got := sess.ProtocolVersion(); got != mcp.LatestVersion {
			t.Errorf("ProtocolVersion() = %q, want %q", got, mcp.LatestVersion)
		}
		reqs := w.Requests(mcp.MethodDiscover)
		if len(reqs) != 2 || version(t, reqs[0]) != futureVersion || version(t, reqs[1]) != mcp.LatestVersion {
			t.Errorf("discover requests %v, want one with %s and one with %s", reqs, futureVersion, mcp.LatestVersion)
		}
		if _, err := sess.CallTool(context.Background(), "echo", echoArgs("x")); err != nil {
			t.Fatal(err)
		}
	})
}

// TestNegotiateNothingInCommon: a -32022 that names no 2026-07-28-style
// version the client speaks means a legacy server (or none the client can
// talk to): the client tries the legacy handshake, offering the newest
// legacy version listed that it speaks, else its own newest. When that
// fails too, the error wraps ErrUnsupportedVersion and keeps the -32022.
func TestNegotiateNothingInCommon(t *testing.T) {
	for _, tc := range []struct {
		name      string
		supported []mcp.ProtocolVersion
		offer     mcp.ProtocolVersion
	}{
		{"legacy only", []mcp.ProtocolVersion{mcp.Version20251125}, mcp.Version20251125},
		{"several legacy", []mcp.ProtocolVersion{mcp.Version20250618, mcp.Version20250326}, mcp.Version20250618},
		{"unknown only", []mcp.ProtocolVersion{"2030-01-01"}, mcp.Version20251125},
		{"empty list", nil, mcp.Version20251125},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, tr := newFake(t)
				res := connectAsync(newClient(nil), tr)
				m := f.expect(mcp.MethodDiscover)
				f.unsupported(m.ID, mcp.LatestVersion, tc.supported...)
				init := f.expect(mcp.MethodInitialize)
				var offered mcp.ProtocolVersion
				init.param(t, "protocolVersion", &offered)
				if offered != tc.offer {
					t.Errorf("initialize offers %q, want %q", offered, tc.offer)
				}
				f.fail(init.ID, jsonrpc.CodeMethodNotFound, "Method not found", "")
				r := <-res
				if r.err == nil {
					r.sess.Close()
					t.Fatal("Connect succeeded")
				}
				if !errors.Is(r.err, client.ErrUnsupportedVersion) {
					t.Errorf("error %v does not match ErrUnsupportedVersion", r.err)
				}
				if _, ok := mcp.AsUnsupportedProtocolVersion(r.err); !ok {
					t.Errorf("error %v does not carry the server's -32022", r.err)
				}
				f.expectClosed() // no third attempt, and the connection was closed
			})
		})
	}
}

// A server may refuse the very version it then lists as supported (a
// transient refusal, or a server that checks something else): the client
// retries once with it, as the conformance suite's request-metadata
// scenario expects, and gives up on a second refusal.
func TestNegotiateRefusedVersionRetriedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, tr := newFake(t)
		res := connectAsync(newClient(nil), tr)
		m := f.expect(mcp.MethodDiscover)
		f.unsupported(m.ID, mcp.LatestVersion, mcp.LatestVersion)
		retry := f.expect(mcp.MethodDiscover)
		if string(retry.ID) == string(m.ID) {
			t.Errorf("retry reused id %s", m.ID)
		}
		f.reply(retry.ID, `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"private"}`)
		r := <-res
		if r.err != nil {
			t.Fatalf("Connect after one refusal: %v", r.err)
		}
		r.sess.Close()
	})
	synctest.Test(t, func(t *testing.T) {
		f, tr := newFake(t)
		res := connectAsync(newClient(nil), tr)
		m := f.expect(mcp.MethodDiscover)
		f.unsupported(m.ID, mcp.LatestVersion, mcp.LatestVersion)
		m = f.expect(mcp.MethodDiscover)
		f.unsupported(m.ID, mcp.LatestVersion, mcp.LatestVersion)
		r := <-res
		if !errors.Is(r.err, client.ErrUnsupportedVersion) {
			t.Fatalf("second refusal: %v, want ErrUnsupportedVersion", r.err)
		}
		f.expectClosed()
	})
}

// TestNegotiateMalformedData checks a -32022 whose data the client cannot
// read: the server is modern, but names nothing to switch to.
func TestNegotiateMalformedData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, tr := newFake(t)
		res := connectAsync(aheadClient(nil), tr)
		m := f.expect(mcp.MethodDiscover)
		f.fail(m.ID, mcp.CodeUnsupportedProtocolVersion, "no", `"not an object"`)
		r := <-res
		if !errors.Is(r.err, client.ErrUnsupportedVersion) {
			t.Fatalf("Connect: %v, want ErrUnsupportedVersion", r.err)
		}
		f.expectClosed()
	})
}

func TestNegotiateOnlyOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, tr := newFake(t)
		res := connectAsync(aheadClient(nil), tr)
		m := f.expect(mcp.MethodDiscover)
		f.unsupported(m.ID, futureVersion, mcp.LatestVersion)
		m = f.expect(mcp.MethodDiscover)
		if v := version(t, m); v != mcp.LatestVersion {
			t.Fatalf("retry speaks %q", v)
		}
		// The server changes its mind: it refuses the version it offered.
		f.unsupported(m.ID, mcp.LatestVersion, futureVersion)
		r := <-res
		if r.err == nil {
			r.sess.Close()
			t.Fatal("Connect succeeded")
		}
		if !errors.Is(r.err, client.ErrUnsupportedVersion) {
			t.Errorf("error %v does not match ErrUnsupportedVersion", r.err)
		}
		if _, ok := mcp.AsUnsupportedProtocolVersion(r.err); !ok {
			t.Errorf("error %v does not carry the server's -32022", r.err)
		}
		f.expectClosed() // no third attempt
	})
}

// TestNegotiateOnAnyRequest has a server accept the preferred version for
// server/discover and refuse it later, for tools/list: that request is
// retried once with the mutual version, which the session keeps.
func TestNegotiateOnAnyRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, tr := newFake(t)
		res := connectAsync(aheadClient(nil), tr)
		m := f.expect(mcp.MethodDiscover)
		f.reply(m.ID, `{"resultType":"complete","supportedVersions":["2099-01-01","2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"private"}`)
		r := <-res
		if r.err != nil {
			t.Fatal(r.err)
		}
		sess := r.sess
		defer sess.Close()
		if got := sess.ProtocolVersion(); got != futureVersion {
			t.Fatalf("ProtocolVersion() = %q after discover accepted it", got)
		}

		type listed struct {
			res *mcp.ListToolsResult
			err error
		}
		done := make(chan listed, 1)
		go func() {
			res, err := sess.ListTools(context.Background(), "")
			done <- listed{res, err}
		}()
		m = f.expect(mcp.MethodListTools)
		f.unsupported(m.ID, futureVersion, mcp.LatestVersion)
		m = f.expect(mcp.MethodListTools)
		if v := version(t, m); v != mcp.LatestVersion {
			t.Fatalf("tools/list retry speaks %q", v)
		}
		f.reply(m.ID, `{"resultType":"complete","tools":[{"name":"a","inputSchema":{"type":"object"}}]}`)
		l := <-done
		if l.err != nil {
			t.Fatal(l.err)
		}
		if len(l.res.Tools) != 1 || l.res.Tools[0].Name != "a" {
			t.Errorf("tools %+v", l.res.Tools)
		}
		if got := sess.ProtocolVersion(); got != mcp.LatestVersion {
			t.Errorf("ProtocolVersion() = %q after the retry, want %q", got, mcp.LatestVersion)
		}

		// tools/call is retried too; after a second refusal it fails.
		call := async(func() error { _, err := sess.CallTool(context.Background(), "a", nil); return err })
		m = f.expect(mcp.MethodCallTool)
		f.unsupported(m.ID, mcp.LatestVersion, futureVersion)
		m = f.expect(mcp.MethodCallTool)
		if v := version(t, m); v != futureVersion {
			t.Fatalf("tools/call retry speaks %q", v)
		}
		f.unsupported(m.ID, futureVersion, mcp.LatestVersion)
		if err := <-call; !errors.Is(err, client.ErrUnsupportedVersion) {
			t.Errorf("tools/call refused twice: %v, want ErrUnsupportedVersion", err)
		}
	})
}

// TestPinnedVersionDoesNotNegotiate: Options.ProtocolVersion pins the
// version, so a -32022 is an error and nothing is retried.
func TestPinnedVersionDoesNotNegotiate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, tr := newFake(t)
		res := connectAsync(aheadClient(&client.Options{ProtocolVersion: futureVersion}), tr)
		m := f.expect(mcp.MethodDiscover)
		if v := version(t, m); v != futureVersion {
			t.Fatalf("discover speaks %q, want the pinned %q", v, futureVersion)
		}
		f.unsupported(m.ID, futureVersion, mcp.LatestVersion)
		r := <-res
		if !errors.Is(r.err, client.ErrUnsupportedVersion) {
			t.Fatalf("Connect: %v, want ErrUnsupportedVersion", r.err)
		}
		f.expectClosed()
	})
}

// countingTransport counts Connect calls.
type countingTransport struct {
	transport.Transport
	n atomic.Int32
}

func (c *countingTransport) Connect(ctx context.Context) (transport.Conn, error) {
	c.n.Add(1)
	return c.Transport.Connect(ctx)
}

func TestPinnedUnspeakableVersion(t *testing.T) {
	for _, v := range []mcp.ProtocolVersion{mcp.Version20241105, "2030-13-99"} {
		a, _ := transport.NewMemoryPipe()
		tr := &countingTransport{Transport: transport.NewMemoryTransport(a)}
		_, err := newClient(&client.Options{ProtocolVersion: v}).Connect(context.Background(), tr)
		if !errors.Is(err, client.ErrUnsupportedVersion) {
			t.Errorf("pinned %q: Connect: %v, want ErrUnsupportedVersion", v, err)
		}
		if n := tr.n.Load(); n != 0 {
			t.Errorf("pinned %q: the transport was connected %d times, want 0", v, n)
		}
	}
}

func TestPinnedLatestVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, w := connect(t, newClient(&client.Options{ProtocolVersion: mcp.LatestVersion}), fixture(nil))
		if got := sess.ProtocolVersion(); got != mcp.LatestVersion {
			t.Errorf("ProtocolVersion() = %q", got)
		}
		if n := len(w.Requests("")); n != 1 {
			t.Errorf("Connect sent %d requests, want 1", n)
		}
	})
}

// TestConnectDiscoverErrors: errors from server/discover that name a
// 2026-07-28 server (the codes only that generation defines) fail Connect
// as they are, without a handshake, and close the connection. (Every other
// code means a legacy server: legacy_test.go.)
func TestConnectDiscoverErrors(t *testing.T) {
	for _, code := range []int64{mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapability} {
		synctest.Test(t, func(t *testing.T) {
			f, tr := newFake(t)
			res := connectAsync(newClient(nil), tr)
			m := f.expect(mcp.MethodDiscover)
			f.fail(m.ID, code, "Something failed", "")
			r := <-res
			var rpcErr *jsonrpc.Error
			if !errors.As(r.err, &rpcErr) || rpcErr.Code != code {
				t.Fatalf("Connect: %v, want the server's %d", r.err, code)
			}
			if errors.Is(r.err, client.ErrUnsupportedVersion) {
				t.Errorf("%d reported as ErrUnsupportedVersion", code)
			}
			f.expectClosed()
		})
	}
	synctest.Test(t, func(t *testing.T) {
		// A result the client cannot read is an answer too: no handshake.
		f, tr := newFake(t)
		res := connectAsync(newClient(nil), tr)
		m := f.expect(mcp.MethodDiscover)
		f.reply(m.ID, `{"resultType":"complete","supportedVersions":7}`)
		r := <-res
		var bad *client.InvalidResponseError
		if !errors.As(r.err, &bad) {
			t.Fatalf("Connect: %v, want an InvalidResponseError", r.err)
		}
		f.expectClosed()
	})
}

func TestConnectContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, tr := newFake(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := newClient(nil).Connect(ctx, tr)
			done <- err
		}()
		f.expect(mcp.MethodDiscover) // and never answer
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Connect: %v, want context.Canceled", err)
		}
		// The client may tell the server it gave up (the cancellation is
		// sent in the background and can lose the race with Close); then
		// it closes the connection.
		raw, err := f.conn.Read(context.Background())
		if err == nil {
			if n := decodeWire(t, raw); n.Method != "notifications/cancelled" {
				t.Fatalf("client sent %s after giving up", raw)
			}
			f.expectClosed()
		}
	})
}
