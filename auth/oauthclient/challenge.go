package oauthclient

import (
	"net/http"
	"strings"

	"golang.org/x/oauth2"
)

// challenge is one authentication challenge of a WWW-Authenticate header
// (RFC 9110 section 11.6.1): a scheme and its auth-params.
type challenge struct {
	scheme string
	params map[string]string
}

// bearerChallenge returns the params of the first Bearer challenge in h's
// WWW-Authenticate fields, or nil when there is none.
func bearerChallenge(h http.Header) map[string]string { return challengeParams(h, "Bearer") }

// challengeParams returns the params of the first challenge of scheme in
// h's WWW-Authenticate fields, or nil when there is none.
func challengeParams(h http.Header, scheme string) map[string]string {
	for _, v := range h.Values("WWW-Authenticate") {
		for _, c := range parseChallenges(v) {
			if strings.EqualFold(c.scheme, scheme) {
				return c.params
			}
		}
	}
	return nil
}

// authChallenge returns the params of the challenge that speaks to the
// request that was refused: the DPoP challenge for a request that sent a
// DPoP-bound token, the Bearer challenge otherwise, and the other when
// that one is missing (a server that takes only DPoP challenges with DPoP
// alone; its resource_metadata is wanted all the same).
func authChallenge(h http.Header, sent *oauth2.Token) map[string]string {
	first, second := "Bearer", "DPoP"
	if sent != nil && isDPoPToken(sent) {
		first, second = second, first
	}
	if p := challengeParams(h, first); p != nil {
		return p
	}
	return challengeParams(h, second)
}

// parseChallenges parses a WWW-Authenticate field value. It is lenient: a
// malformed part ends the parse with what was read so far, since the header
// is only a hint and a peer's garbage must not fail the request.
func parseChallenges(s string) []challenge {
	var out []challenge
	p := &parser{s: s}
	for {
		p.skip(", \t")
		scheme := p.token()
		if scheme == "" {
			return out
		}
		c := challenge{scheme: scheme, params: map[string]string{}}
		for {
			save := p.i
			p.skip(", \t")
			name := p.token()
			p.skip(" \t")
			if name == "" || p.done() || p.s[p.i] != '=' {
				// The next challenge's scheme (or the end): hand it
				// back to the outer loop.
				p.i = save
				break
			}
			p.i++ // '='
			p.skip(" \t")
			var val string
			if !p.done() && p.s[p.i] == '"' {
				val = p.quoted()
			} else {
				val = p.token()
				p.skip("=") // the padding of a token68, as in "Basic YQ=="
			}
			c.params[strings.ToLower(name)] = val
		}
		out = append(out, c)
		if p.i == len(p.s) {
			return out
		}
	}
}

type parser struct {
	s string
	i int
}

func (p *parser) done() bool { return p.i >= len(p.s) }

func (p *parser) skip(set string) {
	for !p.done() && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

// token reads an RFC 9110 token.
func (p *parser) token() string {
	start := p.i
	for !p.done() && isTokenChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// quoted reads a quoted-string, unescaping quoted-pairs.
func (p *parser) quoted() string {
	p.i++ // opening quote
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch c {
		case '\\':
			if !p.done() {
				b.WriteByte(p.s[p.i])
				p.i++
			}
		case '"':
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isTokenChar(c byte) bool {
	if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
