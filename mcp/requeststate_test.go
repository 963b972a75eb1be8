package mcp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// An empty requestState is a state (requeststate.go): these tests hold
// every type with a RequestState to "present" meaning what encoding/json
// means by it, on the way in and on the way out.

// refStateMember is the oracle: encoding/json matches the member to the
// field (exactly or under case folding, the last one winning) and calls
// UnmarshalJSON with its value; null, as for a string field, changes
// nothing.
type refStateMember struct {
	s    string
	seen bool
}

func (m *refStateMember) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if err := json.Unmarshal(b, &m.s); err != nil {
		return err
	}
	m.seen = true
	return nil
}

// refState returns the requestState of the object data, and whether it is
// present, as encoding/json decodes a string field named requestState.
func refState(data []byte) (string, bool, error) {
	var v struct {
		RequestState refStateMember `json:"requestState"`
	}
	err := json.Unmarshal(data, &v)
	return v.RequestState.s, v.RequestState.seen, err
}

// stateCarriers returns a fresh value of each type with a RequestState,
// but CallToolRequestParams, whose decoder reads member names exactly (see
// TestCallToolParamsEmptyRequestState).
func stateCarriers() map[string]interface {
	LookupRequestState() (string, bool)
	SetRequestState(string, bool)
} {
	return map[string]interface {
		LookupRequestState() (string, bool)
		SetRequestState(string, bool)
	}{
		"GetPromptRequestParams":     new(GetPromptRequestParams),
		"ReadResourceRequestParams":  new(ReadResourceRequestParams),
		"InputResponseRequestParams": new(InputResponseRequestParams),
		"InputRequiredResult":        new(InputRequiredResult),
	}
}

var stateObjects = []struct {
	json    string
	state   string
	present bool
}{
	{`{}`, "", false},
	{`{"requestState":""}`, "", true},
	{`{"requestState":null}`, "", false},
	{`{"requestState":"s"}`, "s", true},
	{`{"requestState":"\u0000"}`, "\x00", true},
	{`{"requestState":"","requestState":null}`, "", true},
	{`{"requestState":"s","requestState":""}`, "", true},
	{`{"requestState":"","requestState":"s"}`, "s", true},
	{`{"RequestState":""}`, "", true},
	{`{"REQUESTSTATE":"x"}`, "x", true},
	{`{"request\u0053tate":""}`, "", true},
	{`{"requestStat":"","requestStates":""}`, "", false},
	{`{"nested":{"requestState":""}}`, "", false},
}

func TestDecodedRequestStatePresence(t *testing.T) {
	for _, c := range stateObjects {
		if s, ok, err := refState([]byte(c.json)); err != nil || s != c.state || ok != c.present {
			t.Fatalf("%s: the oracle says %q %v %v; the table %q %v", c.json, s, ok, err, c.state, c.present)
		}
		for name, v := range stateCarriers() {
			if err := json.Unmarshal([]byte(c.json), v); err != nil {
				t.Fatalf("%s into %s: %v", c.json, name, err)
			}
			if s, ok := v.LookupRequestState(); s != c.state || ok != c.present {
				t.Errorf("%s into %s: LookupRequestState = %q, %v; want %q, %v", c.json, name, s, ok, c.state, c.present)
			}
		}
	}
}

// TestEncodedRequestStatePresence: a present empty state is written as
// "requestState":"", an absent one not at all, and either decodes back to
// itself.
func TestEncodedRequestStatePresence(t *testing.T) {
	for _, c := range []struct {
		state   string
		present bool
		member  string // what the encoding must contain; "" for no member
	}{
		{"", true, `"requestState":""`},
		{"", false, ""},
		{"s", true, `"requestState":"s"`},
		{"ignored", false, ""},
	} {
		carriers := stateCarriers()
		carriers["CallToolRequestParams"] = new(CallToolRequestParams)
		for name, v := range carriers {
			v.SetRequestState(c.state, c.present)
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if has := strings.Contains(string(b), `"requestState"`); has != (c.member != "") || !strings.Contains(string(b), c.member) {
				t.Errorf("%s with state %q present %v: %s; want the member %s", name, c.state, c.present, b, c.member)
			}
			back := stateCarriers()[name]
			if back == nil {
				back = new(CallToolRequestParams)
			}
			if err := json.Unmarshal(b, back); err != nil {
				t.Fatalf("%s: %s: %v", name, b, err)
			}
			gs, gok := back.LookupRequestState()
			ws, wok := v.LookupRequestState()
			if gs != ws || gok != wok || wok != c.present {
				t.Errorf("%s: %s decodes to %q %v; encoded %q %v", name, b, gs, gok, ws, wok)
			}
		}
	}
}

// TestCallToolParamsEmptyRequestState: the one-pass decoder of tools/call
// reads member names exactly, and a null requestState is none.
func TestCallToolParamsEmptyRequestState(t *testing.T) {
	for _, c := range []struct {
		json    string
		state   string
		present bool
	}{
		{`{"name":"t"}`, "", false},
		{`{"name":"t","requestState":""}`, "", true},
		{`{"name":"t","requestState":null}`, "", false},
		{`{"name":"t","requestState":"s"}`, "s", true},
		{`{"name":"t","requestState":"s","requestState":""}`, "", true},
		{`{"name":"t","requestState":"","requestState":null}`, "", false},
		{`{"name":"t","request\u0053tate":""}`, "", true},
	} {
		var p CallToolRequestParams
		if err := json.Unmarshal([]byte(c.json), &p); err != nil {
			t.Fatal(err)
		}
		if s, ok := p.LookupRequestState(); s != c.state || ok != c.present {
			t.Errorf("%s: LookupRequestState = %q, %v; want %q, %v", c.json, s, ok, c.state, c.present)
		}
		// A decoded value equals the literal written for the same JSON.
		want := CallToolRequestParams{Name: "t"}
		want.SetRequestState(c.state, c.present)
		if p.Name != want.Name || p.RequestState != want.RequestState || p.ForceRequestState != want.ForceRequestState {
			t.Errorf("%s: decoded %+v, want %+v", c.json, p, want)
		}
	}
}

// TestEmptyRequestStateAloneIsInputRequired: a result that carries only
// "requestState":"" is a valid input_required result of each carrier, and
// one with neither member is still refused.
func TestEmptyRequestStateAloneIsInputRequired(t *testing.T) {
	only := json.RawMessage(`{"resultType":"input_required","requestState":""}`)
	decoders := map[string]func(json.RawMessage) (any, error){
		MethodCallTool:     func(r json.RawMessage) (any, error) { return DecodeCallToolOutcome(r) },
		MethodGetPrompt:    func(r json.RawMessage) (any, error) { return DecodeGetPromptOutcome(r) },
		MethodReadResource: func(r json.RawMessage) (any, error) { return DecodeReadResourceOutcome(r) },
	}
	for method, decode := range decoders {
		out, err := decode(only)
		if err != nil {
			t.Fatalf("%s: %s refused: %v", method, only, err)
		}
		ir, ok := out.(*InputRequiredResult)
		if !ok {
			t.Fatalf("%s: %T, want *InputRequiredResult", method, out)
		}
		if s, present := ir.LookupRequestState(); s != "" || !present {
			t.Errorf("%s: state %q present %v", method, s, present)
		}
		if _, err := DecodeResult(method, only); err != nil {
			t.Errorf("DecodeResult(%s): %v", method, err)
		}
		if _, err := decode(json.RawMessage(`{"resultType":"input_required","requestState":null}`)); !errors.Is(err, ErrInvalidInputRequiredResult) {
			t.Errorf("%s: a null requestState alone: %v, want ErrInvalidInputRequiredResult", method, err)
		}
	}
	if err := (&InputRequiredResult{ForceRequestState: true}).Validate(); err != nil {
		t.Errorf("Validate of a present empty state: %v", err)
	}
	if err := (&InputRequiredResult{}).Validate(); !errors.Is(err, ErrInvalidInputRequiredResult) {
		t.Errorf("Validate of nothing: %v", err)
	}
	b, err := json.Marshal(&InputRequiredResult{ForceRequestState: true})
	if err != nil || string(b) != string(only) {
		t.Errorf("encoded %s, %v; want %s", b, err, only)
	}
}

// FuzzRequestStatePresence holds every decoder of a requestState to the
// encoding/json oracle: what it decodes, it decodes as present exactly when
// encoding/json would set the string field from a string, and it writes
// back a value that decodes to the same state.
func FuzzRequestStatePresence(f *testing.F) {
	for _, c := range stateObjects {
		f.Add(c.json)
	}
	for _, s := range inputRequiredTaken {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ws, wok, werr := refState([]byte(s))
		check := func(name string, v interface{ LookupRequestState() (string, bool) }) {
			gs, gok := v.LookupRequestState()
			if werr != nil {
				t.Fatalf("%q: %s decodes what the oracle refuses (%v)", s, name, werr)
			}
			if gs != ws || gok != wok {
				t.Fatalf("%q: %s: %q %v; oracle %q %v", s, name, gs, gok, ws, wok)
			}
			b, err := json.Marshal(v)
			if err != nil {
				return
			}
			bs, bok, err := refState(b)
			if err != nil || bs != gs || bok != gok {
				t.Fatalf("%q: %s re-encodes as %s: %q %v %v", s, name, b, bs, bok, err)
			}
		}
		for name, v := range stateCarriers() {
			if json.Unmarshal([]byte(s), v) == nil {
				check(name, v)
			}
		}
		if r, ok := fastDecodeInputRequired([]byte(s)); ok {
			check("fastDecodeInputRequired", r)
		}
	})
}
