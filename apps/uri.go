package apps

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
)

// ErrNotUIURI is matched (errors.Is) by the error for a view URI that is
// not a ui:// URI.
var ErrNotUIURI = errors.New("apps: not a ui:// URI")

// maxURILength bounds a view URI: far beyond any real one, and short
// enough that a URI read from a peer is never a burden to log.
const maxURILength = 2048

// CheckURI reports whether uri can name a view: the ui scheme (written in
// lower case, as hosts compare it), something after "ui://" but slashes,
// no whitespace or control characters, and a URI that parses. The error
// wraps [ErrNotUIURI] and names what is wrong.
func CheckURI(uri string) error {
	rest, scheme := strings.CutPrefix(uri, "ui://")
	switch {
	case len(uri) > maxURILength:
		return fmt.Errorf("%w: %d bytes, longer than %d", ErrNotUIURI, len(uri), maxURILength)
	case !scheme:
		return fmt.Errorf("%w: %q does not start with \"ui://\"", ErrNotUIURI, uri)
	case strings.Trim(rest, "/") == "":
		return fmt.Errorf("%w: %q names nothing after \"ui://\"", ErrNotUIURI, uri)
	case strings.ContainsFunc(uri, spaceOrControl):
		return fmt.Errorf("%w: %q holds whitespace or a control character", ErrNotUIURI, uri)
	}
	if _, err := url.Parse(uri); err != nil {
		return fmt.Errorf("%w: %q: %v", ErrNotUIURI, uri, err)
	}
	return nil
}

func spaceOrControl(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }
