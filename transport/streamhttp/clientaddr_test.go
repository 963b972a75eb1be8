package streamhttp

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// whoServer is a server whose tool "who" answers with the client's
// address and caller key as its context says them: "<addr> as <key>".
func whoServer() *server.Server {
	s := server.New(mcp.Implementation{Name: "who", Version: "1"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return mcp.TextResult(auth.RemoteAddrFrom(ctx) + " as " + auth.CallerKey(ctx)), nil
	})
	return s
}

// whoFrom calls "who" through h from the peer at remote (host:port), with
// the extra headers given as name, value pairs, and returns its answer.
func whoFrom(t *testing.T, h http.Handler, remote string, header ...string) string {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(rawRequest(1, "tools/call", `"name":"who"`)))
	r.Header = stdHeaders("tools/call", "who")
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Add(header[i], header[i+1])
	}
	r.RemoteAddr = remote
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	body := w.Body.String()
	i := strings.Index(body, `"text":"`)
	if w.Code != http.StatusOK || i < 0 {
		t.Fatalf("who from %s: %d %s", remote, w.Code, body)
	}
	text := body[i+len(`"text":"`):]
	return text[:strings.IndexByte(text, '"')]
}

func whoHandler(o *CallerOptions) *Handler {
	return NewHandler(whoServer(), &HandlerOptions{Callers: o, Logger: slog.New(slog.DiscardHandler)})
}

// TestHandlerForwardingHeadersNotBelievedByDefault: without trusted
// proxies, the client is the connection's peer whatever the request's
// forwarding headers say.
func TestHandlerForwardingHeadersNotBelievedByDefault(t *testing.T) {
	h := whoHandler(nil)
	got := whoFrom(t, h, "192.0.2.1:40000",
		"X-Forwarded-For", "203.0.113.9", "Forwarded", "for=203.0.113.9", "X-Real-IP", "203.0.113.9")
	if got != "192.0.2.1 as addr:192.0.2.1" {
		t.Errorf("with forwarding headers and no trusted proxy: %q, want the peer", got)
	}
}

// TestHandlerTrustedProxyXForwardedFor: behind trusted proxies the client
// is the rightmost address of X-Forwarded-For that is not a trusted
// proxy; a peer that is not trusted is not believed; an address that does
// not parse leaves the last trusted proxy standing for the client.
func TestHandlerTrustedProxyXForwardedFor(t *testing.T) {
	h := whoHandler(&CallerOptions{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	long := strings.Repeat("10.0.0.5, ", 40) + "10.0.0.5"
	for _, c := range []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"one hop", "10.0.0.1:80", []string{"203.0.113.9"}, "203.0.113.9"},
		{"untrusted peer", "192.0.2.1:80", []string{"203.0.113.9"}, "192.0.2.1"},
		{"a forged hop on the left", "10.0.0.1:80", []string{"198.51.100.7, 203.0.113.9, 10.0.0.2"}, "203.0.113.9"},
		{"header lines joined", "10.0.0.1:80", []string{"198.51.100.7", "203.0.113.9"}, "203.0.113.9"},
		{"not an address", "10.0.0.1:80", []string{"203.0.113.9, unknown"}, "10.0.0.1"},
		{"empty hop", "10.0.0.1:80", []string{"203.0.113.9, , 10.0.0.2"}, "10.0.0.2"},
		{"every hop trusted", "10.0.0.1:80", []string{"10.0.0.3, 10.0.0.2"}, "10.0.0.3"},
		{"no header", "10.0.0.1:80", nil, "10.0.0.1"},
		{"with a port, IPv6", "10.0.0.1:80", []string{"[2001:db8:1:2::1]:443"}, "2001:db8:1:2::1"},
		{"IPv4-mapped", "[::ffff:10.0.0.1]:80", []string{"::ffff:203.0.113.9"}, "203.0.113.9"},
		{"longer than the bound", "10.0.0.1:80", []string{"203.0.113.9, " + long}, "10.0.0.5"},
	} {
		var hdr []string
		for _, v := range c.xff {
			hdr = append(hdr, "X-Forwarded-For", v)
		}
		got := whoFrom(t, h, c.peer, hdr...)
		if addr, _, _ := strings.Cut(got, " as "); addr != c.want {
			t.Errorf("%s: the client is %q, want %s", c.name, got, c.want)
		}
	}
	if got := whoFrom(t, h, "10.0.0.1:80", "X-Forwarded-For", "2001:db8:1:2::1"); got != "2001:db8:1:2::1 as addr:2001:db8:1:2::/64" {
		t.Errorf("a forwarded IPv6 client is %q, want its /64", got)
	}
	// A proxy listed as an IPv4-mapped prefix is the IPv4 proxy.
	mapped := whoHandler(&CallerOptions{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("::ffff:10.0.0.0/104")}})
	if got := whoFrom(t, mapped, "10.0.0.1:80", "X-Forwarded-For", "203.0.113.9"); !strings.HasPrefix(got, "203.0.113.9 ") {
		t.Errorf("behind a proxy listed IPv4-mapped: %q, want the forwarded client", got)
	}
	// Another header than the one configured is not read.
	if got := whoFrom(t, h, "10.0.0.1:80", "Forwarded", "for=203.0.113.9"); !strings.HasPrefix(got, "10.0.0.1 ") {
		t.Errorf("Forwarded read while X-Forwarded-For is configured: %q", got)
	}
}

// TestHandlerTrustedProxyForwarded: the Forwarded header (RFC 7239) when
// configured: the for= parameter of each element, quoted or not, with or
// without a port; an obfuscated or missing one stops the walk; separators
// inside a quoted string do not separate.
func TestHandlerTrustedProxyForwarded(t *testing.T) {
	h := whoHandler(&CallerOptions{
		TrustedProxies:  []netip.Prefix{netip.MustParsePrefix("10.0.0.1/32"), netip.MustParsePrefix("2001:db8:ffff::/48")},
		ForwardedHeader: "forwarded",
	})
	for _, c := range []struct {
		name, value, want string
	}{
		{"token", "for=192.0.2.60;proto=http;by=203.0.113.43", "192.0.2.60"},
		{"quoted IPv6 with port", `for=198.51.100.7, For="[2001:db8:cafe::17]:4711";proto=https`, "2001:db8:cafe::17"},
		{"trusted hop skipped", `for=203.0.113.9;by="a;b,c", for="[2001:db8:ffff::1]"`, "203.0.113.9"},
		{"obfuscated", `for=203.0.113.9, for="_hidden"`, "10.0.0.1"},
		{"unknown", `for=unknown`, "10.0.0.1"},
		{"no for", `proto=https;by=10.0.0.1`, "10.0.0.1"},
		{"comma inside quotes", `for="203.0.113.9, for=10.0.0.1"`, "10.0.0.1"},
		{"escaped quote inside quotes", `for="203.0.113.9\", for=198.51.100.7"`, "10.0.0.1"},
	} {
		got := whoFrom(t, h, "10.0.0.1:80", "Forwarded", c.value, "X-Forwarded-For", "198.51.100.99")
		if addr, _, _ := strings.Cut(got, " as "); addr != c.want {
			t.Errorf("%s (%s): the client is %q, want %s", c.name, c.value, got, c.want)
		}
	}
}

// TestHandlerKeepsAMiddlewaresAddress: an address a middleware in front
// of the handler put in the context (auth.WithRemoteAddr, the way the
// fleet guide gives for proxies it cannot describe) is the client's, not
// the connection's peer; the handler's prefixes group it.
func TestHandlerKeepsAMiddlewaresAddress(t *testing.T) {
	h := NewHandler(whoServer(), &HandlerOptions{
		Callers: &CallerOptions{Prefixes: auth.AddrPrefixes{IPv4: 24}},
		Logger:  slog.New(slog.DiscardHandler),
	})
	mw := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(auth.WithRemoteAddr(r.Context(), "198.51.100.50")))
	})
	if got := whoFrom(t, mw, "10.0.0.1:80"); got != "198.51.100.50 as addr:198.51.100.0/24" {
		t.Errorf("behind a middleware that names the client: %q", got)
	}
}

// TestHandlerCallerPrefixes: CallerOptions.Prefixes groups addresses
// into callers; loopback stays one caller whatever the prefixes.
func TestHandlerCallerPrefixes(t *testing.T) {
	h := whoHandler(&CallerOptions{Prefixes: auth.AddrPrefixes{IPv4: 24, IPv6: 48}})
	for peer, want := range map[string]string{
		"192.0.2.77:1":        "192.0.2.77 as addr:192.0.2.0/24",
		"[2001:db8:1:2::1]:1": "2001:db8:1:2::1 as addr:2001:db8:1::/48",
		"127.0.0.5:1":         "127.0.0.5 as addr:loopback",
	} {
		if got := whoFrom(t, h, peer); got != want {
			t.Errorf("from %s: %q, want %q", peer, got, want)
		}
	}
	if got := whoFrom(t, whoHandler(nil), "[2001:db8:1:2::1]:1"); got != "2001:db8:1:2::1 as addr:2001:db8:1:2::/64" {
		t.Errorf("default prefixes: %q", got)
	}
}
