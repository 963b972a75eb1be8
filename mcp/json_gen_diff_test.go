package mcp

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// generatedType is one type mcpgen writes an encoder for, with its
// reference encoding through encoding/json (json_gen_test.go lists them).
type generatedType struct {
	typ reflect.Type
	ref func(v any) ([]byte, error)
}

// TestGeneratedEncodersMatchEncodingJSON: for every //mcp:json type, many
// random values (strings that need escaping, invalid UTF-8, floats at the
// exponent cut-offs, NaN, nil and empty slices and maps, raw JSON with
// whitespace and HTML characters, invalid raw JSON, every implementation
// of a union interface) encode to exactly the bytes, and fail with exactly
// the error, of the same rules through encoding/json.
func TestGeneratedEncodersMatchEncodingJSON(t *testing.T) {
	if len(generatedTypes) == 0 {
		t.Fatal("no generated types")
	}
	for _, g := range generatedTypes {
		t.Run(g.typ.Name(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(g.typ.Name()))))
			for i := range 3000 {
				v := reflect.New(g.typ)
				fill(r, v.Elem(), 0)
				want, wantErr := g.ref(v.Interface())
				got, gotErr := v.Interface().(json.Marshaler).MarshalJSON()
				if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
					t.Fatalf("value %d: error %v, want %v\n%#v", i, gotErr, wantErr, v.Elem().Interface())
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("value %d:\n got %s\nwant %s", i, got, want)
				}
				// Inside another value, through encoding/json, the
				// generated MarshalJSON's output must survive its check.
				if wantErr == nil {
					if _, err := json.Marshal([]any{v.Interface()}); err != nil {
						t.Fatalf("value %d: encoding/json refused the output: %v", i, err)
					}
				}
			}
		})
	}
}

var (
	sampleStrings = []string{"", "a", "plain text", "<b>&amp;</b>", "quote\" back\\slash", "\x00\x1f\t\n\r\b\f", "\xff\xfe bad", "line\u2028sep\u2029", "émoji 😀", "ctrl\x7f"}
	sampleFloats  = []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 1e-6, 9.99e-7, 1e20, 1e21, 123456789.125, 1e-300, math.MaxFloat64, math.NaN(), math.Inf(1)}
	sampleRaw     = []string{`{}`, `{"a":1}`, ` { "a" : [1, 2 , "x<y>&z"] } `, `null`, `"s\u2028"`, `[]`, `12.5e3`, `true`, "\"line\u2028\"", `{`, `[1,]`, ``}
	sampleKeys    = []string{"k", "a<b", "", "ünï", "z"}
)

// fill sets v, which is settable and zero, to a random value of its type.
func fill(r *rand.Rand, v reflect.Value, depth int) {
	if depth > 5 {
		return
	}
	if v.Type() == reflect.TypeFor[json.RawMessage]() {
		if s := sampleRaw[r.IntN(len(sampleRaw))]; s != "" || r.IntN(2) == 0 {
			v.SetBytes([]byte(s))
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(sampleStrings[r.IntN(len(sampleStrings))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt([]int64{0, 1, -7, math.MaxInt32, math.MinInt64}[r.IntN(5)])
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint([]uint64{0, 1, 255}[r.IntN(3)])
	case reflect.Float32, reflect.Float64:
		v.SetFloat(sampleFloats[r.IntN(len(sampleFloats))])
	case reflect.Pointer:
		if r.IntN(3) > 0 {
			p := reflect.New(v.Type().Elem())
			fill(r, p.Elem(), depth+1)
			v.Set(p)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && r.IntN(4) > 0 {
				fill(r, v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		switch n := r.IntN(5); n {
		case 0: // nil
		default:
			s := reflect.MakeSlice(v.Type(), n-1, n-1)
			for i := range n - 1 {
				fill(r, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		switch n := r.IntN(5); n {
		case 0:
		default:
			m := reflect.MakeMap(v.Type())
			for range n - 1 {
				k := reflect.New(v.Type().Key()).Elem()
				k.SetString(sampleKeys[r.IntN(len(sampleKeys))])
				e := reflect.New(v.Type().Elem()).Elem()
				fill(r, e, depth+1)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Interface:
		if impls := implementations(v.Type()); len(impls) > 0 && r.IntN(4) > 0 {
			p := reflect.New(impls[r.IntN(len(impls))])
			fill(r, p.Elem(), depth+1)
			v.Set(p)
		} else if v.Type().NumMethod() == 0 && r.IntN(2) == 0 {
			if x := []any{"s<", 1.5, nil, map[string]any{"k": true}}[r.IntN(4)]; x != nil {
				v.Set(reflect.ValueOf(x))
			}
		}
	}
}

// implementations are the generated types whose pointer implements the
// interface type iface (the members of a union).
func implementations(iface reflect.Type) []reflect.Type {
	if iface.NumMethod() == 0 {
		return nil
	}
	var out []reflect.Type
	for _, g := range generatedTypes {
		if reflect.PointerTo(g.typ).Implements(iface) {
			out = append(out, g.typ)
		}
	}
	return out
}
