package servercard_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/parley-mcp/parley/experimental/servercard"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

// A server's card, served beside its endpoint and read by a client.
func Example() {
	s := mcpserver.MustNew(mcp.Implementation{
		Name: "weather", Title: "Weather", Version: "1.4.0",
		Description: "Forecasts and warnings for any city.",
	}, nil)

	mux := http.NewServeMux()
	mux.Handle("/mcp", s.HTTPHandler(nil))
	ts := httptest.NewServer(mux)
	defer ts.Close()

	card, err := servercard.Build(s.LowLevel(), &servercard.Options{
		Name: "com.example/weather",
		URL:  ts.URL + "/mcp", // in production: the URL clients reach, https
	})
	if err != nil {
		fmt.Println("build:", err)
		return
	}
	if err := servercard.Mount(mux, "/mcp", card, nil); err != nil {
		fmt.Println("mount:", err)
		return
	}

	// The client side: the card's place follows from the endpoint's URL.
	where, err := servercard.Location(ts.URL + "/mcp")
	if err != nil {
		fmt.Println(err)
		return
	}
	got, err := servercard.Fetch(context.Background(), where)
	switch {
	case errors.Is(err, servercard.ErrNoCard):
		fmt.Println("the server publishes no card")
		return
	case err != nil:
		fmt.Println("no usable card:", err)
		return
	}
	fmt.Println(got.Name, got.Version, "-", got.Description)
	for _, r := range got.Remotes {
		fmt.Println(r.Type, "speaks", r.SupportedProtocolVersions)
	}
	// Output:
	// com.example/weather 1.4.0 - Forecasts and warnings for any city.
	// streamable-http speaks [2026-07-28 2025-11-25 2025-06-18 2025-03-26]
}
