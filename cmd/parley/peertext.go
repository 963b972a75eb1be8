package main

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// peerText makes text that a server chose (a description, a message, a
// result, a question, an error it answered with) safe to print on a
// terminal: every character that a terminal would act on instead of
// showing is shown as its escape, so that a server cannot write the
// clipboard (OSC 52), retitle the window, clear the screen, move the
// cursor over earlier output, or make text read other than it is:
//
//   - C0 controls but line feed and tab, and DEL, as \xNN (ESC is \x1b);
//   - a carriage return not followed by a line feed as \r;
//   - C1 controls (U+0080–U+009F) and the bidirectional controls
//     (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) as \uNNNN;
//   - a byte that is not UTF-8 as \xNN.
//
// Everything parley prints of a server's text passes through here (or
// peerLine); --json output does not, it is the server's text exactly (JSON
// escapes C0 controls itself).
func peerText(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
			b.WriteRune(r)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// needsEscape reports whether peerText has anything to change in s.
func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return true
		}
		i += size
	}
	return false
}

// peerLine is peerText for text that must stay on one line of a layout (a
// table's cell, a line of a card): line breaks and tabs become spaces
// first.
func peerLine(s string) string {
	return peerText(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s))
}
