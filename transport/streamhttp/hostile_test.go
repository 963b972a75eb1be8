package streamhttp

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
)

// Issue 12, item 1: the Mcp-Param-* check compares integers in work
// linear in their length, with no arbitrary-precision arithmetic.

func TestParseSafeInteger(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    int64
		verdict integerVerdict
	}{
		{"1", 1, safeInteger}, {"1.0", 1, safeInteger}, {"1e0", 1, safeInteger}, {"10e-1", 1, safeInteger},
		{"1E+0", 1, safeInteger}, {"0.1e1", 1, safeInteger}, {"100e-2", 1, safeInteger}, {"0.0000001e7", 1, safeInteger},
		{"-0", 0, safeInteger}, {"0", 0, safeInteger}, {"-0.0e-5", 0, safeInteger}, {"0e999999999", 0, safeInteger},
		{"42", 42, safeInteger}, {"4.2e1", 42, safeInteger}, {"420e-1", 42, safeInteger}, {"-7", -7, safeInteger},
		{"1E+2", 100, safeInteger},
		{"9007199254740991", 1<<53 - 1, safeInteger},
		{"-9007199254740991", -(1<<53 - 1), safeInteger},
		{"9.007199254740991e15", 1<<53 - 1, safeInteger},
		{"9007199254740992", 0, outOfRange},
		{"-9007199254740992", 0, outOfRange},
		{"10000000000000000", 0, outOfRange},
		{"1e16", 0, outOfRange}, {"1e18", 0, outOfRange}, {"1e19", 0, outOfRange}, {"-1e19", 0, outOfRange},
		{"99999999999999999999", 0, outOfRange}, {"9999999999999999999", 0, outOfRange}, {"9.3e18", 0, outOfRange},
		{"42abc", 0, notNumber},
		{"1e999999999", 0, outOfRange},
		{"1e99999999999999999999999999999999", 0, outOfRange}, // exponent beyond int64: saturated
		{"1.5", 0, notInteger}, {"0.1", 0, notInteger}, {"1e-1", 0, notInteger}, {"1e-999999999", 0, notInteger},
		{"1.0000000000000000000000001", 0, notInteger},
		{"", 0, notNumber}, {"-", 0, notNumber}, {"01", 0, notNumber}, {"1.", 0, notNumber}, {".5", 0, notNumber},
		{"+1", 0, notNumber}, {"1e", 0, notNumber}, {"1e+", 0, notNumber}, {"--1", 0, notNumber}, {" 1", 0, notNumber},
		{"1 ", 0, notNumber}, {"0x10", 0, notNumber}, {"1/2", 0, notNumber}, {"Infinity", 0, notNumber}, {"NaN", 0, notNumber},
	} {
		got, verdict := parseSafeInteger(tt.in)
		if got != tt.want || verdict != tt.verdict {
			t.Errorf("parseSafeInteger(%q) = %d, %d; want %d, %d", tt.in, got, verdict, tt.want, tt.verdict)
		}
	}
}

// hugeNumbers are multi-megabyte JSON numbers that arbitrary-precision
// parsing takes seconds of CPU over (issue 12: 17 s for 3 MB).
func hugeNumbers() map[string]string {
	const n = 3 << 20
	return map[string]string{
		"digits":         "1" + strings.Repeat("7", n),
		"fraction":       "0." + strings.Repeat("3", n),
		"zeros then e-n": "1" + strings.Repeat("0", n) + "e-" + strconv.Itoa(n), // exactly 1
		"leading zeros":  "0." + strings.Repeat("0", n) + "1e" + strconv.Itoa(n+1),
	}
}

// TestParseSafeIntegerHugeAllocBudget: the verdict on a multi-megabyte
// number is exact and costs no allocation (arbitrary-precision parsing,
// as before the fix, allocates a number of the input's size). Linearity is
// by construction: parseSafeInteger is two passes over the digits with
// constant work per digit, and the exponent saturates instead of growing.
func TestParseSafeIntegerHugeAllocBudget(t *testing.T) {
	want := map[string]integerVerdict{
		"digits": outOfRange, "fraction": notInteger, "zeros then e-n": safeInteger, "leading zeros": safeInteger,
	}
	for name, num := range hugeNumbers() {
		n, verdict := parseSafeInteger(num)
		if verdict != want[name] || (verdict == safeInteger && n != 1) {
			t.Errorf("%s: %d, %d; want verdict %d", name, n, verdict, want[name])
		}
		if allocs := testing.AllocsPerRun(2, func() { parseSafeInteger(num) }); allocs != 0 {
			t.Errorf("%s: %v allocations, want 0", name, allocs)
		}
		raw := json.RawMessage(num)
		if allocs := testing.AllocsPerRun(2, func() { matchesArgument("integer", "1", raw) }); allocs != 0 {
			t.Errorf("%s: matchesArgument makes %v allocations, want 0", name, allocs)
		}
	}
}

// TestHugeIntegerArgumentRefused: a tools/call whose annotated integer is
// spelled in megabytes is refused (-32602, naming the limit) before any
// comparison and before the handler runs, even when its value is exactly 1;
// before the fix the server spent seconds of CPU on it and then answered
// -32020 (or, for the spellings of 1, ran the handler).
func TestHugeIntegerArgumentRefused(t *testing.T) {
	h := NewHandler(newFixture().s, nil)
	for name, num := range hugeNumbers() {
		t.Run(name, func(t *testing.T) {
			status, body := callRoute(t, h, `{"region":"eu","priority":`+num+`}`,
				"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "1")
			if status != 400 {
				t.Fatalf("status %d, want 400: %.300s", status, body)
			}
			_, e := rpcError(t, body)
			if e.Code != jsonrpc.CodeInvalidParams || !strings.Contains(e.Message, `"/priority"`) ||
				!strings.Contains(e.Message, "bytes, more than the 256") {
				t.Fatalf("error %d %q, want -32602 naming the argument and the limit", e.Code, e.Message)
			}
		})
	}
}

// TestParamHeaderArgumentTypes: the JSON type of an annotated argument is
// checked against its schema before any comparison, and integers compare
// by value within the specification's range.
func TestParamHeaderArgumentTypes(t *testing.T) {
	h := NewHandler(newFixture().s, nil)
	for _, tt := range []struct {
		name   string
		args   string
		kv     []string
		code   int64 // 0: accepted
		phrase string
	}{
		{"1.0 for 1", `{"region":"eu","priority":1}`, []string{"Mcp-Param-Priority", "1.0"}, 0, ""},
		{"10e-1 for 1e0", `{"region":"eu","priority":1e0}`, []string{"Mcp-Param-Priority", "10e-1"}, 0, ""},
		{"0 for -0", `{"region":"eu","priority":-0}`, []string{"Mcp-Param-Priority", "0"}, 0, ""},
		{"header out of range", `{"region":"eu","priority":1}`, []string{"Mcp-Param-Priority", "1e999999999"}, mcp.CodeHeaderMismatch, "does not match"},
		{"argument 2^53", `{"region":"eu","priority":9007199254740992}`, []string{"Mcp-Param-Priority", "9007199254740992"}, jsonrpc.CodeInvalidParams, "2^53"},
		{"argument 1e999999999", `{"region":"eu","priority":1e999999999}`, []string{"Mcp-Param-Priority", "1e999999999"}, jsonrpc.CodeInvalidParams, "2^53"},
		{"fractional argument", `{"region":"eu","priority":1.5}`, []string{"Mcp-Param-Priority", "1.5"}, jsonrpc.CodeInvalidParams, "fractional"},
		{"string for integer", `{"region":"eu","priority":"1"}`, []string{"Mcp-Param-Priority", "1"}, jsonrpc.CodeInvalidParams, "is a string, but its schema type is integer"},
		{"number for string", `{"region":7}`, []string{"Mcp-Param-Region", "7"}, jsonrpc.CodeInvalidParams, "is a number, but its schema type is string"},
		{"string for boolean", `{"region":"eu","verbose":"true"}`, []string{"Mcp-Param-Verbose", "true"}, jsonrpc.CodeInvalidParams, "is a string, but its schema type is boolean"},
		{"object for string", `{"region":{}}`, []string{"Mcp-Param-Region", "{}"}, jsonrpc.CodeInvalidParams, "is an object"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kv := tt.kv
			if strings.Contains(tt.args, `"region":"eu"`) { // else region is the argument under test
				kv = append([]string{"Mcp-Param-Region", "eu"}, kv...)
			}
			status, body := callRoute(t, h, tt.args, kv...)
			if tt.code == 0 {
				if status != 200 || strings.Contains(string(body), `"error"`) {
					t.Fatalf("status %d, want a result: %s", status, body)
				}
				return
			}
			if status != 400 {
				t.Fatalf("status %d, want 400: %s", status, body)
			}
			if _, e := rpcError(t, body); e.Code != tt.code || !strings.Contains(e.Message, tt.phrase) {
				t.Fatalf("error %d %q, want %d with %q", e.Code, e.Message, tt.code, tt.phrase)
			}
		})
	}
}

// Issue 12, item 2: the header check reads members by exact name; a
// handler decoding with encoding/json (as mcp's DecodeArguments does)
// folds case. Arguments they could read differently are refused.
func TestParamHeaderAmbiguousArguments(t *testing.T) {
	h := NewHandler(newFixture().s, nil)
	for _, tt := range []struct {
		name    string
		args    string
		kv      []string
		phrases []string
	}{
		// Before the fix: the header check saw region "eu", the handler
		// (case-folding decode, last member wins) routed to "us".
		{"case-fold twin", `{"region":"eu","Region":"us"}`, []string{"Mcp-Param-Region", "eu"}, []string{`"region"`, `"Region"`, "case folding"}},
		{"exact duplicate", `{"region":"eu","region":"us"}`, []string{"Mcp-Param-Region", "us"}, []string{`"region"`, "same name"}},
		{"twin in a nested object", `{"region":"eu","config":{"zone":"a","ZONE":"b"}}`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Zone", "a"}, []string{`"zone"`, `"ZONE"`, `"/config"`}},
		// Before the fix: no header was required (no member is named
		// exactly "region"), and the handler read "REGION" as region.
		{"case variant alone", `{"REGION":"us"}`, nil, []string{`"REGION"`, `"region"`, "only in case"}},
		{"case variant nested", `{"region":"eu","config":{"Zone":"b"}}`, []string{"Mcp-Param-Region", "eu"}, []string{`"Zone"`, `"config.zone"`}},
		{"lone surrogate", `{"region":"\ud800"}`, []string{"Mcp-Param-Region", "=?base64?77+9?="}, []string{"lone surrogate"}},
		{"invalid UTF-8", "{\"region\":\"\xff\"}", []string{"Mcp-Param-Region", "=?base64?77+9?="}, []string{"not valid UTF-8"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := callRoute(t, h, tt.args, tt.kv...)
			if status != 400 {
				t.Fatalf("status %d, want 400: %s", status, body)
			}
			_, e := rpcError(t, body)
			if e.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("code %d, want -32602: %s", e.Code, body)
			}
			for _, p := range tt.phrases {
				if !strings.Contains(e.Message, p) {
					t.Errorf("message %q lacks %q", e.Message, p)
				}
			}
		})
	}
	// Controls: the same names in different objects, and a tool without
	// annotations, are not this check's business.
	if status, body := callRoute(t, h, `{"region":"eu","config":{"region":"x"}}`, "Mcp-Param-Region", "eu"); status != 200 {
		t.Errorf("distinct objects: status %d: %s", status, body)
	}
}

// FuzzParseSafeInteger holds the linear parser to arbitrary-precision
// arithmetic on short inputs (where big.Rat is cheap): it must classify
// every text as math/big does and read the same value, and never panic on
// any text, whatever its length.
func FuzzParseSafeInteger(f *testing.F) {
	for _, s := range []string{"0", "-0", "1", "1.0", "1e0", "10e-1", "9007199254740991", "9007199254740992", "-9007199254740991", "1.5", "1e999999999", "0e5", "00", "1.", ".1", "-", "1e", "1e+2", "12.340e1", "0.000001e6"} {
		f.Add(s)
	}
	maxSafe := new(big.Rat).SetInt64(maxSafeInteger)
	f.Fuzz(func(t *testing.T, s string) {
		n, verdict := parseSafeInteger(s)
		if len(s) > 40 || strings.ContainsAny(s, " \t\r\n") {
			return // big.Rat would be slow or lenient here; only the absence of a panic is checked
		}
		// big.Rat accepts more than JSON's grammar; json.Valid decides what a
		// number literal is.
		if !json.Valid([]byte(s)) || !strings.ContainsAny(s[:1], "-0123456789") {
			if verdict != notNumber {
				t.Fatalf("%q: verdict %d, want notNumber", s, verdict)
			}
			return
		}
		exp := s[strings.IndexAny(s+"eE", "eE"):]
		if len(exp) > 1 {
			if e, err := strconv.Atoi(strings.TrimLeft(exp[1:], "+")); err != nil || e > 400 || e < -400 {
				return // an exponent big.Rat would take long to expand
			}
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("%q: valid JSON number, but big.Rat refuses it", s)
		}
		switch {
		case !r.IsInt():
			if verdict != notInteger {
				t.Fatalf("%q: verdict %d, want notInteger", s, verdict)
			}
		case new(big.Rat).Abs(r).Cmp(maxSafe) > 0:
			if verdict != outOfRange {
				t.Fatalf("%q: verdict %d, want outOfRange", s, verdict)
			}
		default:
			if verdict != safeInteger || n != r.Num().Int64() {
				t.Fatalf("%q: %d (verdict %d), want %s", s, n, verdict, r.Num())
			}
		}
	})
}
