package dpopverify

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// normalizeURL returns raw without query and fragment, normalized as RFC
// 9449 section 4.3 asks before htu is compared: syntax-based normalization
// (RFC 3986 section 6.2.2: scheme and host in lower case, percent-encodings
// in upper case and decoded where they stand for an unreserved character,
// dot segments removed) and scheme-based normalization (section 6.2.3: the
// default port dropped, an empty path made "/"). Only absolute http and
// https URLs are taken.
func normalizeURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", errors.New("not a URL")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("not an http or https URL")
	}
	if u.Opaque != "" || u.Host == "" {
		return "", errors.New("no authority")
	}
	if u.User != nil {
		return "", errors.New("a URL with user information")
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", errors.New("no host")
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // an IPv6 literal
	}
	switch port := u.Port(); {
	case port == "", scheme == "http" && port == "80", scheme == "https" && port == "443":
	default:
		host = net.JoinHostPort(strings.Trim(host, "[]"), port)
	}
	path, err := normalizePercents(u.EscapedPath())
	if err != nil {
		return "", err
	}
	path = removeDotSegments(path)
	if path == "" {
		path = "/"
	}
	return scheme + "://" + host + path, nil
}

// normalizePercents decodes the percent-encodings of unreserved characters
// (ALPHA, DIGIT, '-', '.', '_', '~') and writes the others in upper case.
func normalizePercents(p string) (string, error) {
	if !strings.Contains(p, "%") {
		return p, nil
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] != '%' {
			b.WriteByte(p[i])
			continue
		}
		if i+2 >= len(p) || !isHex(p[i+1]) || !isHex(p[i+2]) {
			return "", errors.New("a malformed percent-encoding")
		}
		c := unhex(p[i+1])<<4 | unhex(p[i+2])
		if isUnreserved(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteString(strings.ToUpper(p[i+1 : i+3]))
		}
		i += 2
	}
	return b.String(), nil
}

// removeDotSegments is RFC 3986 section 5.2.4 for an absolute path.
func removeDotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	if len(out) == 1 && out[0] == "" {
		return "/"
	}
	return strings.Join(out, "/")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}
