package auth_test

import (
	"context"
	"testing"

	"github.com/parley-mcp/parley/auth"
)

// keyOf is the caller key of a request from host, unauthenticated.
func keyOf(host string) string {
	return auth.CallerKey(auth.WithRemoteAddr(context.Background(), host))
}

// TestCallerKeyOneHostOneCaller: the addresses one machine or one site
// holds are one caller, so that a client cannot multiply its shares by
// changing its source address: an IPv6 /64 (the least a site is given,
// and what one host configures itself in), every loopback address, an
// IPv4 address however it is written (an IPv4-mapped IPv6 address is the
// IPv4 address), an address whatever its zone.
func TestCallerKeyOneHostOneCaller(t *testing.T) {
	for _, same := range [][]string{
		{"2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:DB8:1:2:0:0:0:7"},
		{"127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "::ffff:127.0.0.9"},
		{"192.0.2.7", "::ffff:192.0.2.7", "::ffff:c000:207"},
		{"fe80::1%eth0", "fe80::1%eth1", "fe80::2", "fe80::1"},
		{"2001:db8:1:2::1%1", "2001:db8:1:2::9"},
	} {
		want := keyOf(same[0])
		for _, host := range same[1:] {
			if got := keyOf(host); got != want {
				t.Errorf("%s is caller %q, %s is %q: want one caller", same[0], want, host, got)
			}
		}
	}
	for _, apart := range [][2]string{
		{"2001:db8:1:2::1", "2001:db8:1:3::1"},
		{"2001:db8:1:2::1", "2001:db9:1:2::1"},
		{"192.0.2.7", "192.0.2.8"},
		{"192.0.2.7", "::ffff:192.0.2.8"},
		{"127.0.0.1", "192.0.2.7"},
		{"::1", "::2"},
		{"10.0.0.1", "::a00:1"}, // an IPv4-compatible address is IPv6, not IPv4
		{"unix-socket", "other-socket"},
	} {
		if a, b := keyOf(apart[0]), keyOf(apart[1]); a == b {
			t.Errorf("%s and %s are both caller %q: want two", apart[0], apart[1], a)
		}
	}
	// Keys name no principal, and an unknown peer is no caller.
	if k := keyOf("192.0.2.7"); k != "addr:192.0.2.7" {
		t.Errorf("an IPv4 address is caller %q, want addr:192.0.2.7", k)
	}
	if k := keyOf(""); k != "" {
		t.Errorf("an empty address is caller %q, want none", k)
	}
}

// TestCallerKeyPrefixes: WithRemoteAddrPrefixes groups by the prefixes
// given; zero, negative and oversized prefixes mean the default and the
// whole address; the keys name the address or its prefix.
func TestCallerKeyPrefixes(t *testing.T) {
	for _, c := range []struct {
		host string
		p    auth.AddrPrefixes
		want string
	}{
		{"192.0.2.77", auth.AddrPrefixes{}, "addr:192.0.2.77"},
		{"192.0.2.77", auth.AddrPrefixes{IPv4: 24}, "addr:192.0.2.0/24"},
		{"::ffff:192.0.2.77", auth.AddrPrefixes{IPv4: 24, IPv6: 128}, "addr:192.0.2.0/24"},
		{"192.0.2.77", auth.AddrPrefixes{IPv4: 40}, "addr:192.0.2.77"},
		{"192.0.2.77", auth.AddrPrefixes{IPv4: -3}, "addr:192.0.2.77"},
		{"2001:db8:1:2:3::1", auth.AddrPrefixes{}, "addr:2001:db8:1:2::/64"},
		{"2001:db8:1:2:3::1", auth.AddrPrefixes{IPv6: 48}, "addr:2001:db8:1::/48"},
		{"2001:db8:1:2:3::1", auth.AddrPrefixes{IPv6: 128}, "addr:2001:db8:1:2:3::1"},
		{"2001:db8:1:2:3::1", auth.AddrPrefixes{IPv6: -1}, "addr:2001:db8:1:2::/64"},
		{"[2001:db8:1:2:3::1]", auth.AddrPrefixes{}, "addr:2001:db8:1:2::/64"},
		{"fe80::1%eth0", auth.AddrPrefixes{IPv6: 128}, "addr:fe80::1"},
		{"127.0.0.3", auth.AddrPrefixes{IPv4: 32}, "addr:loopback"},
		{"::1", auth.AddrPrefixes{IPv6: 128}, "addr:loopback"},
		{"pipe", auth.AddrPrefixes{}, "addr:pipe"},
	} {
		ctx := auth.WithRemoteAddrPrefixes(context.Background(), c.host, c.p)
		if got := auth.CallerKey(ctx); got != c.want {
			t.Errorf("%s with %+v: %q, want %q", c.host, c.p, got, c.want)
		}
		if got := auth.AddrCallerKey(c.host, c.p); got != c.want {
			t.Errorf("AddrCallerKey(%s, %+v) = %q, want %q", c.host, c.p, got, c.want)
		}
		if got := auth.RemoteAddrFrom(ctx); got != c.host {
			t.Errorf("RemoteAddrFrom = %q, want the host as given, %q", got, c.host)
		}
	}
	// A principal comes before any address.
	ctx := auth.WithInfo(auth.WithRemoteAddr(context.Background(), "192.0.2.7"), &auth.Info{Subject: "ada"})
	if got := auth.CallerKey(ctx); got != auth.PrincipalKey(auth.InfoFrom(ctx)) {
		t.Errorf("an authenticated request from an address is caller %q, want its principal", got)
	}
}
