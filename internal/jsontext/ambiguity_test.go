package jsontext

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	gjt "github.com/go-json-experiment/json/jsontext"
)

func TestCheckUnambiguousRefuses(t *testing.T) {
	for _, tt := range []struct {
		in      string
		path    string
		members [2]string
		problem string // a substring of the message
	}{
		{`{"amount":1,"Amount":1000}`, "", [2]string{"amount", "Amount"}, "case folding"},
		{`{"amount":1,"amount":1000}`, "", [2]string{"amount", "amount"}, "same name"},
		{`{"amount":1,"\u0061mount":1000}`, "", [2]string{"amount", "amount"}, "same name"},
		{`{"a":{"b":[0,{"x":1,"X":2}]}}`, "/a/b/1", [2]string{"x", "X"}, "case folding"},
		{`{"s":1,"ſ":2}`, "", [2]string{"s", "ſ"}, "case folding"},           // U+017F folds to s
		{`{"k":1,"\u212a":2}`, "", [2]string{"k", "\u212a"}, "case folding"}, // Kelvin sign
		{`{"straße":1,"STRAßE":2}`, "", [2]string{"straße", "STRAßE"}, "case folding"},
		{`{"a/b~c":{"q":1,"Q":1}}`, "/a~1b~0c", [2]string{"q", "Q"}, "case folding"},
		{`{"v":"\ud800"}`, "/v", [2]string{}, `lone surrogate (\ud800)`},
		{`{"v":"\udc00\ud800"}`, "/v", [2]string{}, `lone surrogate (\udc00)`},
		{`{"v":"\ud800\u0041"}`, "/v", [2]string{}, "lone surrogate"},
		{`{"v":"\ud800x"}`, "/v", [2]string{}, "lone surrogate"},
		{`["ok","\uDBFF"]`, "/1", [2]string{}, "lone surrogate"},
		{"{\"v\":\"\xff\"}", "/v", [2]string{}, "not valid UTF-8"},
		{"{\"v\":\"\xed\xa0\x80\"}", "/v", [2]string{}, "not valid UTF-8"}, // a surrogate, raw
		{"{\"v\":\"ab\xc3\"}", "/v", [2]string{}, "not valid UTF-8"},
		{"\"\xc0\xaf\"", "", [2]string{}, "not valid UTF-8"}, // overlong
		{"{\"\xff\":1}", "", [2]string{}, "member name"},
		{`{"\ud800":1}`, "", [2]string{}, "member name"},
		{`{"n":[1,1` + strings.Repeat("0", 1000) + `e-1000]}`, "/n/1", [2]string{}, "1007 bytes, more than the 256"},
		{`-0.` + strings.Repeat("0", 300), "", [2]string{}, "the number at the top-level value is spelled in"},
		{`[1` + strings.Repeat("0", MaxNumberLen) + `]`, "/0", [2]string{}, "257 bytes"},
	} {
		err := CheckUnambiguous([]byte(tt.in))
		var ae *AmbiguityError
		if !errors.As(err, &ae) {
			t.Errorf("%s: err = %v, want an *AmbiguityError", tt.in, err)
			continue
		}
		if ae.Path != tt.path || ae.Members != tt.members || !strings.Contains(err.Error(), tt.problem) {
			t.Errorf("%s: path %q members %q %q, want path %q members %q and a message with %q", tt.in, ae.Path, ae.Members, err, tt.path, tt.members, tt.problem)
		}
	}
}

func TestCheckUnambiguousAccepts(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `null`, `1e999999999`, `"x"`, `"` + strings.Repeat("9", 1000) + `"`,
		`1` + strings.Repeat("0", MaxNumberLen-1), `[-1.` + strings.Repeat("5", MaxNumberLen-3) + `]`,
		`{"amount":1,"amounts":2,"a":{"amount":3}}`,             // equal names in different objects
		`[{"a":1},{"a":2},{"A":3}]`,                             // siblings in an array
		`{"v":"\ud83d\ude00 \u00e9 é 😀 \ufffd \u0000 \\ud800"}`, // pairs, U+FFFD itself, an escaped backslash
		`{"a":"\"","b":"\\","c":"\/"}`,
		`{"ß":1,"ss":2}`, // full case folding would merge these; simple folding, as Go uses, does not
	} {
		if err := CheckUnambiguous([]byte(in)); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
}

// Large objects are checked through a map: the collision is found whatever
// its position, and the check stays linear.
func TestCheckUnambiguousLargeObject(t *testing.T) {
	const n = 5000
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, `"key%d":%d,`, i, i)
	}
	ok := b.String() + `"last":0}`
	if err := CheckUnambiguous([]byte(ok)); err != nil {
		t.Fatalf("distinct names: %v", err)
	}
	for _, dup := range []string{`"KEY3"`, `"key4999"`, `"Key17"`, `"key16"`} {
		bad := b.String() + dup + `:0}`
		var ae *AmbiguityError
		if err := CheckUnambiguous([]byte(bad)); !errors.As(err, &ae) || !strings.EqualFold(ae.Members[0], ae.Members[1]) {
			t.Errorf("%s appended: %v", dup, err)
		}
	}
}

// Whatever CheckUnambiguous accepts, encoding/json decodes into the same
// struct as a case-exact, duplicate-refusing decoder sees members: a
// spot check of the property the digest and the header check rely on.
func TestCheckUnambiguousAgreesWithDecoders(t *testing.T) {
	type args struct {
		Amount int `json:"amount"`
	}
	for _, in := range []string{`{"amount":1,"Amount":1000}`, `{"Amount":1000,"amount":1}`} {
		var v args
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		_ = json.Unmarshal([]byte(in), &m)
		exact := string(m["amount"])
		if fmt.Sprint(v.Amount) != exact && CheckUnambiguous([]byte(in)) == nil {
			t.Errorf("%s: encoding/json reads amount=%d, an exact reader %q, and the check accepts it", in, v.Amount, exact)
		}
	}
}

func TestCheckUnambiguousInvalidInputNoPanic(t *testing.T) {
	for _, in := range []string{`{`, `{"a`, `{"a":`, `{"a":1,`, `["\u12`, `"\ud800\u`, `{"a":1 "A":2}`, `[1 2`, `}`, ``, `"\`, `{"\u00`} {
		_ = CheckUnambiguous([]byte(in))
	}
	deep := strings.Repeat("[", 1000) + strings.Repeat("]", 1000)
	var ae *AmbiguityError
	if err := CheckUnambiguous([]byte(deep)); !errors.As(err, &ae) || !strings.Contains(err.Error(), "nested too deeply") {
		t.Errorf("1000 levels: %v", err)
	}
}

func TestCheckUnambiguousAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	in := []byte(`{"name":"x","amount":12,"tags":["a","b"],"nested":{"k":"v","é":"\u00e9"}}`)
	if n := testing.AllocsPerRun(100, func() { _ = CheckUnambiguous(in) }); n != 0 {
		t.Errorf("CheckUnambiguous of small arguments allocates %v times, want 0", n)
	}
}

func FuzzCheckUnambiguous(f *testing.F) {
	f.Add([]byte(`{"a":1,"A":2}`))
	f.Add([]byte(`{"v":"\ud800"}`))
	f.Add([]byte(`{"v":"\ud83d\ude00","w":[{"x":1},{"x":2}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		err := CheckUnambiguous(data)
		if !json.Valid(data) || err != nil {
			return
		}
		// What the check accepts is I-JSON (RFC 7493: no duplicate names,
		// no invalid UTF-8, no lone surrogates) as the strict parser sees it.
		if !gjt.Value(data).IsValid() {
			t.Errorf("%q: accepted, but it is not I-JSON", data)
		}
	})
}

func TestFoldName(t *testing.T) {
	for _, tt := range [][2]string{{"amount", "AMOUNT"}, {"s", "ſ"}, {"k", "\u212a"}, {"straße", "STRAßE"}} {
		if FoldName(tt[0]) != FoldName(tt[1]) {
			t.Errorf("FoldName(%q) = %q, FoldName(%q) = %q", tt[0], FoldName(tt[0]), tt[1], FoldName(tt[1]))
		}
	}
	if FoldName("ß") == FoldName("ss") || FoldName("a") == FoldName("b") {
		t.Error("FoldName merges names encoding/json keeps apart")
	}
}

// TestCheckUnambiguousEscapedSurrogatePairs: a member name written with an
// escaped surrogate pair is compared by the character the pair stands
// for, folded like any other: "\ud801\udc00" (DESERET CAPITAL LONG I,
// U+10400) and "\ud801\udc28" (its small letter, U+10428) are case twins
// that encoding/json reads as one field, escaped or not; two different
// characters outside the Basic Multilingual Plane, escaped, are two names.
// Folding the halves one by one (each a lone surrogate, U+FFFD once
// encoded) would make every pair of escaped astral names twins, and
// combining them wrongly would miss real ones. Small objects and large
// ones (compared through a map) alike.
func TestCheckUnambiguousEscapedSurrogatePairs(t *testing.T) {
	filler := func(large bool) string {
		if !large {
			return ""
		}
		var b strings.Builder
		for i := range 2 * smallObject {
			fmt.Fprintf(&b, `"f%d":0,`, i)
		}
		return b.String()
	}
	for _, large := range []bool{false, true} {
		for _, tt := range []struct{ a, b string }{
			{`\ud801\udc00`, `\ud801\udc28`}, // both escaped
			{`\uD801\uDC00`, `\ud801\udc28`}, // hex digits in either case
			{`\ud801\udc00`, "\U00010428"},   // escaped capital, literal small
			{"\U00010400", `\ud801\udc28`},   // literal capital, escaped small
			{`x\ud801\udc00y`, `X\ud801\udc28Y`},
		} {
			in := `{` + filler(large) + `"` + tt.a + `":1,"` + tt.b + `":2}`
			err := CheckUnambiguous([]byte(in))
			var ae *AmbiguityError
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), "case folding") {
				t.Errorf("large=%v %s: err = %v, want case twins", large, in, err)
			}
		}
		for _, names := range [][]string{
			{`\ud83d\ude00`},                               // one emoji
			{`\ud83d\ude00`, `\ud83d\ude01`},               // two emoji with one high surrogate
			{`\ud83d\ude00`, `\ud83d\ude00x`},              // one a prefix of the other
			{`\ud801\udc00`, `\ud801\udc01`},               // two capitals: not twins
			{`\ud801\udc28`, `\ud801\udc29`},               // two small letters
			{`\ud801\udc00`, `\ud83d\ude00`, "\U0001F601"}, // escaped and literal, all different
			{`\udbff\udfff`, `\ud800\udc00`},               // the last and the first astral code points
		} {
			var b strings.Builder
			b.WriteString("{" + filler(large))
			for i, n := range names {
				if i > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, `"%s":%d`, n, i)
			}
			b.WriteString("}")
			if err := CheckUnambiguous([]byte(b.String())); err != nil {
				t.Errorf("large=%v %s: %v", large, b.String(), err)
			}
		}
	}
}
