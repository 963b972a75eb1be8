package mcpserver

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// What a resource template's variables may hold (design record 017).
//
// Matching a URI against a template undoes the template's expansion, and
// expansion percent-encodes: RFC 6570 lets a simple {var} (and {/var},
// {.var}, {;var}, {?var}, {&var}) expand to unreserved characters only,
// everything else encoded; the reserved expansions {+var} and {#var} also
// let reserved characters such as '/' through as they are. So a function
// receives its variables percent-decoded, as the values they were before
// expansion: "..%2F..%2Fetc%2Fpasswd" in a simple variable arrives as
// "../../etc/passwd", and "%00" as a NUL. A value used as a file name, a
// key or a path would then reach outside what the template names.
//
// By default a variable is refused when its value, decoded:
//
//   - is not valid UTF-8 (always);
//   - holds a control character (NUL among them), unless allow=control;
//   - holds a '\', unless allow=backslash;
//   - holds a '/', unless allow=slash, or the variable is expanded with
//     {+var} or {#var} in every expression it appears in; even there, a
//     leading '/' (an absolute path) needs allow=slash;
//   - has a "." or ".." segment (between '/' or '\' or at either end),
//     unless allow=dots.
//
// The allowances are given in the variable's field's mcp tag.

// reservedVars returns the variables of the template text that appear
// only in reserved expansions ({+var}, {#var}), which give '/' back as it
// is.
func reservedVars(tmpl string) map[string]bool {
	reserved := map[string]bool{}
	for {
		open := strings.IndexByte(tmpl, '{')
		if open < 0 {
			return reserved
		}
		end := strings.IndexByte(tmpl[open:], '}')
		if end < 0 {
			return reserved
		}
		expr := tmpl[open+1 : open+end]
		tmpl = tmpl[open+end+1:]
		isReserved := strings.HasPrefix(expr, "+") || strings.HasPrefix(expr, "#")
		expr = strings.TrimLeft(expr, "+#./;?&=,!@|")
		for _, spec := range strings.Split(expr, ",") {
			name := varName(spec)
			if was, seen := reserved[name]; seen {
				reserved[name] = was && isReserved
			} else {
				reserved[name] = isReserved
			}
		}
	}
}

// varName strips a varspec's modifier: "id:3" and "list*" name id and
// list. Matching captures a prefixed variable under its varspec.
func varName(spec string) string {
	spec = strings.TrimSuffix(spec, "*")
	name, _, _ := strings.Cut(spec, ":")
	return name
}

// refuseVariable returns why value may not reach the function as the
// variable, or "" when it may. reserved says the variable is expanded only
// with {+var} or {#var}.
func refuseVariable(value string, reserved bool, allow allowSet) string {
	if !utf8.ValidString(value) {
		return "is not valid UTF-8"
	}
	if allow&allowControl == 0 {
		for _, r := range value {
			if unicode.IsControl(r) {
				return "holds a control character"
			}
		}
	}
	if allow&allowBackslash == 0 && strings.Contains(value, `\`) {
		return `holds a '\'`
	}
	if allow&allowSlash == 0 {
		if !reserved && strings.Contains(value, "/") {
			return "holds a '/'"
		}
		if strings.HasPrefix(value, "/") {
			return "starts with a '/'"
		}
	}
	if allow&allowDots == 0 && hasDotSegment(value) {
		return `holds a "." or ".." segment`
	}
	return ""
}

// hasDotSegment reports whether a segment of s, split at '/' and '\', is
// "." or "..".
func hasDotSegment(s string) bool {
	for {
		i := strings.IndexAny(s, `/\`)
		seg := s
		if i >= 0 {
			seg = s[:i]
		}
		if seg == "." || seg == ".." {
			return true
		}
		if i < 0 {
			return false
		}
		s = s[i+1:]
	}
}
