package client_test

import (
	"testing"
	"testing/synctest"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
)

// TestPinnedModernNeverFallsBack: a client pinned to 2026-07-28 never
// starts the legacy handshake, whatever the server (or a man in the
// middle of plain HTTP) answers: the answers that would send an automatic
// client to initialize fail Connect instead.
func TestPinnedModernNeverFallsBack(t *testing.T) {
	for _, c := range []struct {
		name string
		code int64
	}{{"method not found", -32601}, {"invalid request", -32600}, {"invalid params", -32602}, {"server error", -32000}} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, tr := newFake(t)
				res := connectAsync(newClient(&client.Options{ProtocolVersion: mcp.Version20260728}), tr)
				m := f.next()
				if m.Method == mcp.MethodInitialize {
					t.Fatal("a pinned 2026-07-28 client sent initialize")
				}
				f.fail(m.ID, c.code, "Nope", "")
				if r := <-res; r.err == nil {
					r.sess.Close()
					t.Fatalf("Connect succeeded after %d", c.code)
				}
				f.expectClosed() // and no initialize after it
			})
		})
	}
}

// TestPinnedLegacyNeverGoesModern: a client pinned to a legacy version
// refuses an initialize answer that names a 2026-07-28 version: it neither
// runs that version nor drops to per-request _meta.
func TestPinnedLegacyNeverGoesModern(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, tr := newFake(t)
		res := connectAsync(newClient(&client.Options{ProtocolVersion: mcp.Version20251125}), tr)
		m := f.expect(mcp.MethodInitialize)
		f.reply(m.ID, `{"protocolVersion":"2026-07-28","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`)
		r := <-res
		if r.err == nil {
			defer r.sess.Close()
			t.Fatalf("Connect accepted %s on a client pinned to 2025-11-25", r.sess.ProtocolVersion())
		}
	})
}
