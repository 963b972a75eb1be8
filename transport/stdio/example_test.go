package stdio_test

import (
	"context"
	"errors"
	"io"
	"log"
	"os/exec"
	"time"

	"github.com/parley-mcp/parley/transport/stdio"
)

// A server reads requests from stdin and writes responses to stdout until
// the client closes its stdin. Logs go to stderr, never to stdout.
func ExampleServerConn() {
	ctx := context.Background()
	conn := stdio.ServerConn(nil)
	defer conn.Close()
	for {
		msg, err := conn.Read(ctx)
		if err == io.EOF {
			return // the client wants us to exit
		}
		if err != nil {
			log.Printf("read: %v", err) // over-size messages are not fatal
			continue
		}
		_ = conn.Write(ctx, msg) // a real server would dispatch msg
	}
}

// A client launches a server and shuts it down when done.
func ExampleNewCommandTransport() {
	ctx := context.Background()
	t := stdio.NewCommandTransport(exec.Command("my-mcp-server"), &stdio.CommandOptions{
		CloseTimeout: 2 * time.Second,
	})
	conn, err := t.Connect(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_ = conn.Write(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	reply, err := conn.Read(ctx)
	if err == nil {
		log.Printf("server replied %s", reply)
	}

	err = conn.Close()
	var term *stdio.TerminatedError
	switch {
	case errors.As(err, &term):
		log.Printf("server ignored its stdin closing and was stopped with %v", term.Signal)
	case err != nil:
		log.Printf("server failed: %v", err)
	}
}
