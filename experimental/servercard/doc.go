// Package servercard serves and reads MCP Server Cards (SEP-2127): a small
// JSON document, with media type application/mcp-server-card+json, that
// tells a client about a remote server before it connects — its
// reverse-DNS name, version, description, where its endpoints are and
// which protocol versions they speak.
//
// The proposal is experimental (repository
// modelcontextprotocol/experimental-ext-server-card), and so is this
// package: its API may change with the proposal, outside Parley's
// deprecation policy. It is built on nothing but the server's public
// identity ([Source]) and net/http.
//
// # Serving a card
//
// A card is built once from what the server already knows, then served at
// the location the proposal reserves: the Streamable HTTP endpoint's URL
// with /server-card appended.
//
//	s := mcpserver.MustNew(mcp.Implementation{Name: "weather", Version: "1.4.0",
//		Description: "Forecasts and warnings for any city."}, nil)
//	card, err := servercard.Build(s.LowLevel(), &servercard.Options{
//		Name: "com.example/weather",
//		URL:  "https://weather.example.com/mcp", // as clients reach it
//	})
//	if err != nil { … }
//	mux := http.NewServeMux()
//	mux.Handle("/mcp", s.HTTPHandler(nil))
//	if err := servercard.Mount(mux, "/mcp", card, nil); err != nil { … } // GET /mcp/server-card
//
// The handler answers with the card's media type, a strong ETag,
// Cache-Control (one hour by default, [HandlerOptions]) and the CORS
// headers the proposal requires; If-None-Match is answered 304.
//
// A card lists no tools, prompts or resources: the proposal leaves those
// to the protocol's list requests, which stay the truth as the server
// changes. Nothing secret belongs in a card; it is public by design.
//
// # Reading a card
//
//	u, err := servercard.Location("https://weather.example.com/mcp")
//	card, err := servercard.Fetch(ctx, u)
//	switch {
//	case errors.Is(err, servercard.ErrNoCard): // the server publishes none
//	case err != nil: // unreachable, not a card, too large, invalid: typed errors
//	}
//
// A [Fetcher] remembers cards as their caching headers allow. A card is a
// claim made before the connection: once connected, [Card.Compare] lists
// what the live server contradicts, and the live values win. The command
// `parley card URL` prints a server's card.
package servercard
