package mcp

import "bytes"

// An empty requestState is a state. The protocol distinguishes a
// requestState that is absent from one that is present, whatever string it
// holds, "" included: a client echoes "requestState":"" exactly as it came,
// and a result that carries only "requestState":"" is a valid
// input_required result. A Go string cannot say "present and empty", so
// every type with a RequestState field has a ForceRequestState flag beside
// it, as net/url.URL has ForceQuery beside RawQuery: the state is present
// when RequestState is not empty or ForceRequestState is set. Decoding sets
// the flag exactly when the member is present and empty, so a decoded
// value equals the literal a Go programmer writes for the same JSON.
// Design record 015 says why it is a flag and not a *string.

// RequestStateParams is implemented by the params of tools/call,
// prompts/get and resources/read (and [InputResponseRequestParams]): code
// that handles any of the three (a client's retry loop, a server's state
// verifier) reads and writes the requestState through it, because the
// *string of [InputResponseParams.Continuation] cannot tell an empty state
// from none.
type RequestStateParams interface {
	InputResponseParams
	// LookupRequestState returns the requestState and whether it is
	// present; like os.LookupEnv, an empty state may be present.
	LookupRequestState() (state string, present bool)
	// SetRequestState makes the requestState state, present even when it
	// is empty; when present is false it removes it and state is ignored.
	// p.SetRequestState(q.LookupRequestState()) carries a state over as it
	// is: absent, empty or not.
	SetRequestState(state string, present bool)
}

// lookupState is LookupRequestState of a RequestState field and its
// ForceRequestState flag.
func lookupState(state string, force bool) (string, bool) {
	return state, state != "" || force
}

// setState is SetRequestState for a RequestState field and its
// ForceRequestState flag: the flag is set only when the state is present
// and empty, as a decoder sets it.
func setState(state *string, force *bool, s string, present bool) {
	if !present {
		s = ""
	}
	*state, *force = s, present && s == ""
}

// stateRef is the requestState member of a type's encoding/json reference
// encoding: a *string, which is how encoding/json tells present-and-empty
// from absent. Embedding the type's plain alias beside a field
// `RequestState *string "json:\"requestState,omitempty\""` shadows the
// alias's string field, and keeps the member last, where it is declared.
func stateRef(state string, force bool) *string {
	if s, ok := lookupState(state, force); ok {
		return &s
	}
	return nil
}

// stateMemberSeen reports whether encoding/json, decoding the object data
// into a struct with a string field named requestState, would set that
// field from a string: some member is named requestState, exactly or under
// case folding, and holds a string (null leaves a string field alone).
// Decoders that delegate to encoding/json call it to learn whether an
// empty RequestState was present.
func stateMemberSeen(data []byte) bool {
	seen := false
	it := newObjectIter(data)
	for it.Next() {
		if it.Val[0] == '"' && bytes.EqualFold(it.Key, []byte("requestState")) {
			seen = true
		}
	}
	return seen
}

// forceAfterDecode returns ForceRequestState for a struct that encoding/json
// has just decoded data into: force and state are the flag before and the
// field after. Without a requestState member the field kept its value,
// and so does the flag.
func forceAfterDecode(data []byte, state string, force bool) bool {
	if state != "" {
		return false
	}
	return force || stateMemberSeen(data)
}
