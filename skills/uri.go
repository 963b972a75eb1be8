package skills

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// maxURILength bounds the URIs the extension's methods accept.
const maxURILength = 2048

// errHostileURI is matched by the refusals of checkURI.
var errHostileURI = errors.New("not a URI the skills extension serves")

// checkURI refuses a URI in a request that could only mean to reach
// outside the served tree, or that no URI this package makes can look
// like, with a reason the client can read: a URI of another scheme, an
// empty or dot segment (also percent-encoded), a backslash, a control
// character, a query or a fragment, a trailing slash, or one longer than
// maxURILength. Lookups are by exact URI, so a refused URI was never
// served; the refusal says why instead of "not found".
func checkURI(uri, scheme string) error {
	refuse := func(reason string) error { return fmt.Errorf("%w: %s", errHostileURI, reason) }
	if len(uri) > maxURILength {
		return refuse(fmt.Sprintf("it is longer than %d bytes", maxURILength))
	}
	rest, ok := strings.CutPrefix(uri, scheme+"://")
	if !ok {
		return refuse(fmt.Sprintf("its scheme is not %s://", scheme))
	}
	if strings.ContainsFunc(rest, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' || r == '?' || r == '#' }) {
		return refuse("it holds a control character, a backslash, a query or a fragment")
	}
	for seg := range strings.SplitSeq(rest, "/") {
		decoded, err := url.PathUnescape(seg)
		switch {
		case err != nil:
			return refuse("it holds a malformed percent-encoding")
		case seg == "":
			return refuse("it has an empty segment (a leading, doubled or trailing slash)")
		case decoded == "." || decoded == "..":
			return refuse("it has a dot segment")
		case strings.ContainsAny(decoded, "/\\"):
			return refuse("a segment holds an encoded slash or backslash")
		}
	}
	return nil
}

// makeURI returns the URI of the file or directory at the slash-separated
// path p of the served tree: each segment percent-encoded as a URI path
// segment, the first (the URI's authority) also without ':' and '@', so
// that it is a reg-name.
func makeURI(scheme, p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	segs[0] = strings.NewReplacer(":", "%3A", "@", "%40").Replace(segs[0])
	return scheme + "://" + strings.Join(segs, "/")
}
