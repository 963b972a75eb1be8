package jsontext

import (
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// CheckUnambiguous reports, as an *AmbiguityError, the first thing in the
// JSON text data that decoders in common use read differently, or nil when
// there is none:
//
//   - an object with two members whose names are equal (after unescaping):
//     some decoders keep the first, most the last, strict ones refuse;
//   - an object with two members whose names are equal under Unicode
//     simple case folding ("amount" and "Amount", "s" and "ſ"): Go's
//     encoding/json fills one struct field from both, case-exact decoders
//     see two members;
//   - a string that is not valid UTF-8, or that holds an escaped lone
//     surrogate ("\ud800"): decoders replace these with U+FFFD (one or
//     several), keep the bytes, or refuse;
//   - a number spelled in more than [MaxNumberLen] bytes: exact readers
//     and floating-point ones disagree on its value.
//
// Two texts that pass are read the same way by every decoder that follows
// RFC 8259, which is what lets one reader (a digest, a header check) speak
// for another (the handler's decoder).
//
// data must be valid JSON (json.Valid); on invalid input the result is
// unspecified, but the function never panics. The work is linear in
// len(data): each byte is visited a bounded number of times, member names
// are compared through a hash map once an object has more than a few
// members, and the name buffers are pooled, so a check of small arguments
// does not allocate.
func CheckUnambiguous(data []byte) error {
	c := checkers.Get().(*checker)
	c.data = data
	_, err := c.inner(skipSpace(data, 0), 0)
	c.data = nil
	if cap(c.keys) <= maxPooledKeys && cap(c.folds) <= maxPooledFolds {
		c.keys, c.folds = c.keys[:0], c.folds[:0]
		checkers.Put(c)
	}
	if err != nil {
		return err.finish()
	}
	return nil
}

// checkers recycles the name buffers of CheckUnambiguous, which runs on
// every call's arguments, up to a size past which a buffer is left to the
// collector rather than kept for the next caller.
var checkers = sync.Pool{New: func() any {
	return &checker{keys: make([]checkedKey, 0, 2*smallObject), folds: make([]byte, 0, 256)}
}}

const (
	maxPooledKeys  = 1024
	maxPooledFolds = 16 << 10
)

// smallObject is the number of members below which names are compared
// pairwise instead of through a map.
const smallObject = 16

// An AmbiguityError says what in a JSON text decoders read differently, and
// where.
type AmbiguityError struct {
	// Path locates the object or string, as a JSON Pointer (RFC 6901):
	// "" is the whole text.
	Path string
	// Members are the two member names that collide, as they were written
	// (unescaped); empty for a string problem.
	Members [2]string
	// Problem is a short description of the problem.
	Problem string

	subject  string   // what at Path has the problem, when not a string
	segments []string // Path's segments, innermost first, while unwinding
}

func (e *AmbiguityError) Error() string {
	where := "the top-level value"
	if e.Path != "" {
		where = strconv.Quote(e.Path)
	}
	if e.Members[0] != "" || e.Members[1] != "" {
		return "members " + strconv.Quote(e.Members[0]) + " and " + strconv.Quote(e.Members[1]) +
			" of the object at " + where + " " + e.Problem
	}
	subject := e.subject
	if subject == "" {
		subject = "the string"
	}
	return subject + " at " + where + " " + e.Problem
}

// at records that the error happened inside the segment seg of its parent.
func (e *AmbiguityError) at(seg string) *AmbiguityError {
	e.segments = append(e.segments, seg)
	return e
}

func (e *AmbiguityError) finish() *AmbiguityError {
	var b strings.Builder
	for i := len(e.segments) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(e.segments[i]))
	}
	e.Path = b.String()
	e.segments = nil
	return e
}

// checkedKey is one member name of an object being checked: its span in
// data (quotes excluded) and the span of its folded form in folds.
type checkedKey struct {
	start, end         int
	foldStart, foldEnd int
}

type checker struct {
	data  []byte
	keys  []checkedKey // the names of the objects being checked, outermost first
	folds []byte       // folded names, as keys points into it
}

// inner checks the value at pos and returns the offset just past it. Its
// errors are not finished: callers add the path segments as they unwind.
func (c *checker) inner(pos, depth int) (int, *AmbiguityError) {
	switch peek(c.data, pos) {
	case '"':
		return c.str(pos)
	case '{', '[':
		if depth >= MaxDepth {
			return 0, &AmbiguityError{subject: "the value", Problem: "is nested too deeply to check"}
		}
		if c.data[pos] == '{' {
			return c.object(pos, depth)
		}
		return c.array(pos, depth)
	}
	_, end := value(c.data, pos)
	if end <= pos {
		end = pos + 1 // invalid input: still make progress
	}
	if b := peek(c.data, pos); (b == '-' || '0' <= b && b <= '9') && end-pos > MaxNumberLen {
		return 0, &AmbiguityError{subject: "the number", Problem: "is spelled in " + strconv.Itoa(end-pos) +
			" bytes, more than the " + strconv.Itoa(MaxNumberLen) + " within which decoders are known to read numbers alike"}
	}
	return end, nil
}

// MaxNumberLen is the longest number literal CheckUnambiguous accepts.
// Readers of numbers disagree beyond some length: the argument digest and
// the Mcp-Param-* check compare exact decimal values, while Go's strconv
// (behind encoding/json's float64) counts at most 800 integer digits, so
// that 1 followed by a thousand zeros and e-1000, which is exactly 1, reads
// as about 1e-200. No real argument needs a longer spelling; rejecting it
// also keeps every reader's work per number small.
const MaxNumberLen = 256

func (c *checker) array(pos, depth int) (int, *AmbiguityError) {
	pos = skipSpace(c.data, pos+1)
	for i := 0; ; i++ {
		switch peek(c.data, pos) {
		case ']':
			return pos + 1, nil
		case 0:
			return len(c.data), nil
		}
		end, err := c.inner(pos, depth+1)
		if err != nil {
			return 0, err.at(strconv.Itoa(i))
		}
		pos = skipSpace(c.data, end)
		if peek(c.data, pos) == ',' {
			pos = skipSpace(c.data, pos+1)
		}
	}
}

func (c *checker) object(pos, depth int) (int, *AmbiguityError) {
	base, foldBase := len(c.keys), len(c.folds)
	defer func() { c.keys, c.folds = c.keys[:base], c.folds[:foldBase] }()
	var index map[string]int // folded name -> index in c.keys, for large objects
	pos = skipSpace(c.data, pos+1)
	for {
		if peek(c.data, pos) != '"' {
			if peek(c.data, pos) == '}' {
				return pos + 1, nil
			}
			return len(c.data), nil // invalid input
		}
		keyEnd, err := c.str(pos)
		if err != nil {
			err.subject = "a member name of the object"
			return 0, err
		}
		k := checkedKey{start: pos + 1, end: keyEnd - 1, foldStart: len(c.folds)}
		c.folds = c.appendFolded(c.folds, k.start, k.end)
		k.foldEnd = len(c.folds)
		folded := c.folds[k.foldStart:k.foldEnd]
		other := -1
		switch {
		case index != nil:
			if i, ok := index[string(folded)]; ok {
				other = i
			} else {
				index[string(folded)] = len(c.keys)
			}
		default:
			for i := base; i < len(c.keys); i++ {
				if string(c.folds[c.keys[i].foldStart:c.keys[i].foldEnd]) == string(folded) {
					other = i
					break
				}
			}
		}
		if other >= 0 {
			a, b := c.name(c.keys[other].start, c.keys[other].end), c.name(k.start, k.end)
			problem := "have names equal under case folding, which some decoders (Go's encoding/json among them) read as one"
			if a == b {
				problem = "have the same name, which decoders resolve differently (first, last or refused)"
			}
			return 0, &AmbiguityError{Members: [2]string{a, b}, Problem: problem}
		}
		c.keys = append(c.keys, k)
		if index == nil && len(c.keys)-base > smallObject {
			index = make(map[string]int, 2*smallObject)
			for i := base; i < len(c.keys); i++ {
				index[string(c.folds[c.keys[i].foldStart:c.keys[i].foldEnd])] = i
			}
		}
		pos = skipSpace(c.data, keyEnd)
		if peek(c.data, pos) != ':' {
			return len(c.data), nil
		}
		pos = skipSpace(c.data, pos+1)
		end, err := c.inner(pos, depth+1)
		if err != nil {
			return 0, err.at(c.name(k.start, k.end))
		}
		pos = skipSpace(c.data, end)
		if peek(c.data, pos) == ',' {
			pos = skipSpace(c.data, pos+1)
		}
	}
}

// name returns the unescaped member name in data[start:end]; it is only
// built for error messages.
func (c *checker) name(start, end int) string {
	s, _ := Unquote(c.data[start-1 : min(end+1, len(c.data))])
	return s
}

// str checks the string literal at pos and returns the offset just past it.
func (c *checker) str(pos int) (int, *AmbiguityError) {
	data := c.data
	i := pos + 1
	for i < len(data) {
		b := data[i]
		switch {
		case b == '"':
			return i + 1, nil
		case b == '\\':
			if i+1 >= len(data) {
				return len(data), nil
			}
			if data[i+1] != 'u' {
				i += 2
				continue
			}
			r, ok := hexRune(data, i+2)
			if !ok {
				return len(data), nil // invalid input
			}
			switch {
			case r >= 0xD800 && r < 0xDC00:
				lo, ok := rune(0), false
				if i+11 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
					lo, ok = hexRune(data, i+8)
				}
				if !ok || lo < 0xDC00 || lo >= 0xE000 {
					return 0, &AmbiguityError{Problem: "holds an escaped lone surrogate (\\u" + string(data[i+2:i+6]) + "), which decoders replace with U+FFFD or refuse"}
				}
				i += 12
			case r >= 0xDC00 && r < 0xE000:
				return 0, &AmbiguityError{Problem: "holds an escaped lone surrogate (\\u" + string(data[i+2:i+6]) + "), which decoders replace with U+FFFD or refuse"}
			default:
				i += 6
			}
		case b < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n <= 1 {
				return 0, &AmbiguityError{Problem: "is not valid UTF-8 (byte 0x" + strconv.FormatUint(uint64(b), 16) + " at offset " + strconv.Itoa(i) + "), which decoders replace with U+FFFD or refuse"}
			}
			i += n
		}
	}
	return len(data), nil
}

// hexRune reads the four hex digits at data[i:].
func hexRune(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// appendFolded appends the folded form of the member name in
// data[start:end] (a checked string body): unescaped, then each rune
// replaced by the smallest rune of its simple case-folding orbit, which is
// how encoding/json matches names to fields.
func (c *checker) appendFolded(dst []byte, start, end int) []byte {
	data := c.data
	for i := start; i < end; {
		b := data[i]
		if b == '\\' && i+1 < end {
			var r rune
			switch data[i+1] {
			case 'u':
				r, _ = hexRune(data, i+2)
				i += 6
				if r >= 0xD800 && r < 0xDC00 && i+6 <= end {
					lo, _ := hexRune(data, i+2)
					r = (r-0xD800)<<10 | (lo - 0xDC00) + 0x10000
					i += 6
				}
			case 'b':
				r, i = '\b', i+2
			case 'f':
				r, i = '\f', i+2
			case 'n':
				r, i = '\n', i+2
			case 'r':
				r, i = '\r', i+2
			case 't':
				r, i = '\t', i+2
			default:
				r, i = rune(data[i+1]), i+2
			}
			dst = utf8.AppendRune(dst, foldRune(r))
			continue
		}
		if b < utf8.RuneSelf {
			if 'a' <= b && b <= 'z' {
				b -= 'a' - 'A'
			}
			dst = append(dst, b)
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:end])
		dst = utf8.AppendRune(dst, foldRune(r))
		i += n
	}
	return dst
}

// foldRune returns the smallest rune of r's simple case-folding orbit.
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			r -= 'a' - 'A'
		}
		return r
	}
	low := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		low = min(low, f)
	}
	return low
}

// FoldName returns name with every rune replaced by the smallest rune of
// its simple case-folding orbit: two names are equal under the case
// folding Go's encoding/json matches member names with exactly when their
// FoldName are equal. It is what CheckUnambiguous compares names by, for
// callers that hold names outside a JSON text (a decoded map).
func FoldName(name string) string {
	var b []byte
	for i := 0; i < len(name); {
		r, n := utf8.DecodeRuneInString(name[i:])
		b = utf8.AppendRune(b, foldRune(r))
		i += n
	}
	return string(b)
}
