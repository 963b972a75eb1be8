package transport_test

import (
	"context"
	"fmt"
	"log"

	"github.com/parley-mcp/parley/transport"
)

// A memory pipe joins two ends in one process: what one end writes, the
// other reads, one whole message at a time. Tests and in-process servers
// use it; NewMemoryTransport hands one end to a client.
func ExampleNewMemoryPipe() {
	ctx := context.Background()
	a, b := transport.NewMemoryPipe()
	defer a.Close()
	go func() {
		msg, err := b.Read(ctx)
		if err == nil {
			b.Write(ctx, append([]byte("echo: "), msg...))
		}
	}()
	if err := a.Write(ctx, []byte(`{"jsonrpc":"2.0","method":"ping","id":1}`)); err != nil {
		log.Fatal(err)
	}
	reply, err := a.Read(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(reply))
	// Output: echo: {"jsonrpc":"2.0","method":"ping","id":1}
}
