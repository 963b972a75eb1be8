package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/parley-mcp/parley/bridge"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport/stdio"
)

// runBridge serves a desktop host on stdin and stdout and relays it to the
// remote server at the URL, with OAuth (package bridge does the relaying:
// a legacy host's calls reach a 2026-07-28 server, whose questions become
// real requests to the host). stdout is the host's, so everything parley
// has to say goes to stderr.
func runBridge(ctx context.Context, a *app, args []string) error {
	if a.opts.url == "" && len(args) > 0 && isURL(args[0]) {
		a.opts.url, args = args[0], args[1:]
	}
	switch {
	case len(a.opts.command) > 0:
		return usagef("bridge relays to a server's URL, not to a command: a host can run that command itself")
	case a.opts.url == "":
		return usagef("bridge needs the remote server's URL: parley bridge https://example.com/mcp")
	case len(args) > 0:
		return usagef("bridge takes only the URL, not %q", args)
	}
	hc, err := a.oauthClient()
	if err != nil {
		return err
	}
	host := stdio.NewConn(a.stdin, a.stdout, nil)
	err = bridge.ServeURL(ctx, host, a.opts.url, &bridge.Options{
		HTTPClient:      hc,
		ProtocolVersion: mcp.ProtocolVersion(a.opts.protocol),
		Logger:          slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return nil // the host went away or parley was interrupted: done
	}
	return err
}
