package skills_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/skills"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

const pdfSkill = `---
name: pdf-processing
description: Extract, fill, and assemble PDF documents
metadata:
  version: "2.1.0"
---

# PDF processing

Read references/FORMS.md, then pick a template from templates/.
`

const refundsSkill = "---\r\nname: refunds\r\ndescription: Process refund requests <per policy> & more\r\nlicense: Apache-2.0\r\n---\r\nBody.\r\n"

// tree is the file system most tests serve: two skills (one nested under
// an organizational prefix), a file outside every skill, hidden files.
func tree() fstest.MapFS {
	return fstest.MapFS{
		"pdf-processing/SKILL.md":                    {Data: []byte(pdfSkill)},
		"pdf-processing/references/FORMS.md":         {Data: []byte("# Forms\n")},
		"pdf-processing/templates/invoice.md":        {Data: []byte("Invoice\n")},
		"pdf-processing/templates/regional/eu.md":    {Data: []byte("EU invoice\n")},
		"pdf-processing/scripts/extract.bin":         {Data: []byte{0xff, 0x00, 0xfe}},
		"pdf-processing/.hidden":                     {Data: []byte("never served")},
		"acme/billing/refunds/SKILL.md":              {Data: []byte(refundsSkill)},
		"acme/billing/README.md":                     {Data: []byte("outside every skill")},
		"README.md":                                  {Data: []byte("outside every skill")},
		".git/config":                                {Data: []byte("never served")},
		"acme/billing/refunds/examples/email.md":     {Data: []byte("Dear customer,\n")},
		"acme/billing/refunds/examples/.DS_Store":    {Data: []byte("hidden")},
		"acme/billing/refunds/examples/nested/x.txt": {Data: []byte("x")},
	}
}

func digest(data string) string {
	sum := sha256.Sum256([]byte(data))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// serve serves fsys with opts on a new mcpserver.Server.
func serve(t *testing.T, fsys fstest.MapFS, opts *skills.Options) (*mcpserver.Server, *skills.Catalog) {
	t.Helper()
	s, err := mcpserver.New(mcp.Implementation{Name: "skills-test", Version: "1.0.0"}, &mcpserver.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	c, err := skills.Serve(s, fsys, opts)
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	return s, c
}

// reads counts the resources/read requests a server answers, by URI.
type reads struct {
	mu   sync.Mutex
	uris []string
}

func (r *reads) middleware(next server.Handler) server.Handler {
	return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
		if p, ok := req.Params.(*mcp.ReadResourceRequestParams); ok {
			r.mu.Lock()
			r.uris = append(r.uris, p.URI)
			r.mu.Unlock()
		}
		return next(ctx, req)
	}
}

func (r *reads) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.uris, ",")
}

// session opens a client session to s, closed when the test ends.
func session(t *testing.T, s *mcpserver.Server, opts *client.Options) *client.Session {
	t.Helper()
	var o client.Options
	if opts != nil {
		o = *opts
	}
	o.Logger = quiet
	sess, err := client.New(mcp.Implementation{Name: "skills-test-client", Version: "1.0.0"}, &o).Connect(context.Background(), s.InMemoryTransport())
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantRPC checks err is a JSON-RPC error with code whose message holds
// text.
func wantRPC(t *testing.T, err error, code int64, text string) *jsonrpc.Error {
	t.Helper()
	var e *jsonrpc.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want a JSON-RPC error %d", err, code)
	}
	if e.Code != code || !strings.Contains(e.Message, text) {
		t.Fatalf("error = %d %q, want %d with %q", e.Code, e.Message, code, text)
	}
	return e
}
