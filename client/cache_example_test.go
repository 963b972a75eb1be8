package client_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// The server says its tools list may be cached for a minute (ttlMs
// 60000); the session then answers ListTools itself until the minute is
// over. The clock is the example's own, so that it need not wait.
func ExampleCacheOptions() {
	ctx := context.Background()
	s := server.New(mcp.Implementation{Name: "catalogue", Version: "1.0.0"}, &server.Options{ListTTL: time.Minute})
	served := 0
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		served++
		return &mcp.ListToolsResult{Tools: []mcp.Tool{{Name: "search", InputSchema: []byte(`{"type":"object"}`)}}}, nil
	})
	clientEnd, serverEnd := transport.NewMemoryPipe()
	go s.ServeConn(ctx, serverEnd)

	now := time.Date(2026, 7, 28, 9, 0, 0, 0, time.UTC)
	c := client.New(mcp.Implementation{Name: "host", Version: "1.0.0"}, &client.Options{
		Cache: &client.CacheOptions{Now: func() time.Time { return now }},
	})
	sess, err := c.Connect(ctx, transport.NewMemoryTransport(clientEnd))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()

	list := func() {
		if _, err := sess.ListTools(ctx, ""); err != nil {
			log.Fatal(err)
		}
		fmt.Println("tools/list served by the server:", served)
	}
	list()
	list() // fresh: from the cache
	now = now.Add(time.Minute)
	list() // stale: asked again
	// Output:
	// tools/list served by the server: 1
	// tools/list served by the server: 1
	// tools/list served by the server: 2
}
