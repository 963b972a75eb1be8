package client_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
)

// TestPinnedModernNeverFallsBack: a client pinned to 2026-07-28 never
// initializes, whatever answers its server/discover: the answers that send
// automatic mode to the legacy handshake (any code 2026-07-28 does not
// define, a -32022 listing only legacy versions, a connection that closes
// before any answer) fail Connect instead. Nothing else crosses the
// connection and the transport is connected once, so neither a legacy
// server nor a man in the middle can downgrade a pinned client.
func TestPinnedModernNeverFallsBack(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(f *fake, m wireMsg)
	}{
		{"-32601", func(f *fake, m wireMsg) { f.fail(m.ID, jsonrpc.CodeMethodNotFound, "Method not found", "") }},
		{"-32000", func(f *fake, m wireMsg) { f.fail(m.ID, -32000, "Bad Request: Server not initialized", "") }},
		{"-32602", func(f *fake, m wireMsg) { f.fail(m.ID, jsonrpc.CodeInvalidParams, "Invalid params", "") }},
		{"-32022 listing only legacy versions", func(f *fake, m wireMsg) {
			f.unsupported(m.ID, mcp.LatestVersion, mcp.Version20251125, mcp.Version20250618)
		}},
		{"closed before any answer", func(f *fake, m wireMsg) { f.conn.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, inner := newFake(t)
				tr := &countingTransport{Transport: inner}
				res := connectAsync(newClient(&client.Options{ProtocolVersion: mcp.LatestVersion}), tr)
				m := f.expect(mcp.MethodDiscover)
				if v := version(t, m); v != mcp.LatestVersion {
					t.Fatalf("discover speaks %q, want the pinned %q", v, mcp.LatestVersion)
				}
				tc.answer(f, m)
				r := <-res
				if r.err == nil {
					r.sess.Close()
					t.Fatalf("Connect succeeded on protocol version %s", r.sess.ProtocolVersion())
				}
				if n := tr.n.Load(); n != 1 {
					t.Errorf("the transport was connected %d times, want 1 (a pinned client connected again to initialize)", n)
				}
				if tc.name != "closed before any answer" {
					f.expectClosed() // no initialize, no notification: nothing more
				}
			})
		})
	}
}

// TestPinnedLegacyNeverGoesModern: a client pinned to a legacy version
// never speaks 2026-07-28. It initializes at once; whatever its server
// answers (a 2026-07-28 version, no handshake, a -32022 listing only
// 2026-07-28) Connect fails without a server/discover; and a -32022 to a
// request on a legacy session, pinned or reached automatically, is an
// error, never a switch to a listed modern version.
func TestPinnedLegacyNeverGoesModern(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(f *fake, m wireMsg)
	}{
		{"answered with 2026-07-28", func(f *fake, m wireMsg) {
			f.reply(m.ID, `{"protocolVersion":"`+string(mcp.LatestVersion)+`","capabilities":{},"serverInfo":{"name":"x","version":"1"}}`)
		}},
		{"-32601", func(f *fake, m wireMsg) { f.fail(m.ID, jsonrpc.CodeMethodNotFound, "Method not found", "") }},
		{"-32022 listing only 2026-07-28", func(f *fake, m wireMsg) {
			f.unsupported(m.ID, mcp.Version20251125, mcp.LatestVersion)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, inner := newFake(t)
				tr := &countingTransport{Transport: inner}
				res := connectAsync(newClient(pinned(client.Options{})), tr)
				tc.answer(f, f.lexpect(mcp.MethodInitialize))
				r := <-res
				if r.err == nil {
					r.sess.Close()
					t.Fatalf("Connect succeeded on protocol version %s", r.sess.ProtocolVersion())
				}
				if n := tr.n.Load(); n != 1 {
					t.Errorf("the transport was connected %d times, want 1", n)
				}
				f.expectClosed() // no server/discover: nothing more
			})
		})
	}

	for _, tc := range []struct {
		name string
		opts *client.Options
	}{
		{"a pinned", pinned(client.Options{})},
		{"an automatic", nil},
	} {
		t.Run("a -32022 on "+tc.name+" legacy session", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, tr := newFake(t)
				res := connectAsync(newClient(tc.opts), tr)
				if tc.opts == nil {
					f.fail(f.expect(mcp.MethodDiscover).ID, jsonrpc.CodeMethodNotFound, "Method not found", "")
				}
				f.handshake(legacyInit)
				r := <-res
				if r.err != nil {
					t.Fatalf("Connect: %v", r.err)
				}
				defer r.sess.Close()
				call := async(func() error {
					_, err := r.sess.CallTool(context.Background(), "echo", nil)
					return err
				})
				m := f.lexpect(mcp.MethodCallTool)
				f.unsupported(m.ID, mcp.Version20251125, mcp.LatestVersion)
				// A client that switched would send tools/call again under
				// 2026-07-28 and wait for it: a deadlock the bubble reports.
				if err := <-call; err == nil {
					t.Fatal("tools/call refused with -32022 succeeded")
				}
				if got := r.sess.ProtocolVersion(); got != mcp.Version20251125 {
					t.Fatalf("ProtocolVersion() = %q after a -32022, want %q", got, mcp.Version20251125)
				}
				// The next request still goes out as a legacy one.
				list := async(func() error {
					_, err := r.sess.ListTools(context.Background(), "")
					return err
				})
				p := f.lexpect(mcp.MethodListTools)
				if p.meta(t) != nil {
					t.Errorf("tools/list after a -32022 carries _meta: %s", p.Raw)
				}
				f.reply(p.ID, `{"tools":[]}`)
				if err := <-list; err != nil {
					t.Fatalf("ListTools: %v", err)
				}
			})
		})
	}
}
