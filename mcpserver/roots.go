package mcpserver

import (
	"encoding/json"
	"fmt"

	"github.com/parley-mcp/parley/mcp"
)

// RootsQuestion asks the client for its roots (roots/list): the
// directories or other places the person at the host has opened. Make one
// with [ListRoots].
type RootsQuestion struct{ q *question }

// ListRoots declares a roots/list request under key, asked once the
// questions in after are answered. It needs the client's roots
// capability.
func ListRoots(key string, after ...Dependency) *RootsQuestion {
	r := &RootsQuestion{q: newQuestion(key, mcp.MethodListRoots, after)}
	r.q.render = func(any, *Call) (mcp.InputRequest, error) { return mcp.NewListRootsRequest(), nil }
	r.q.consume = func(raw json.RawMessage) (*record, *answer, error) {
		res, err := (mcp.InputResponses{key: raw}).Roots(key)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrWrongKind, err)
		}
		return &record{Data: raw}, &answer{value: res.Roots}, nil
	}
	r.q.restore = func(rec *record) (*answer, bool) {
		if rec.Action != "" || len(rec.Data) == 0 {
			return nil, false
		}
		res, err := (mcp.InputResponses{key: rec.Data}).Roots(key)
		if err != nil {
			return nil, false
		}
		return &answer{value: res.Roots}, true
	}
	return r
}

// Key returns the question's key in inputRequests.
func (r *RootsQuestion) Key() string { return r.q.key }

func (r *RootsQuestion) base() *question { return r.q }

// Get returns the client's roots.
func (r *RootsQuestion) Get(c *Call) []mcp.Root {
	v, _ := answerOf(c, r.q).value.([]mcp.Root)
	return v
}
