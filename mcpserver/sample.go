package mcpserver

import (
	"encoding/json"
	"fmt"

	"github.com/parley-mcp/parley/mcp"
)

// SampleQuestion asks the client's language model for a completion
// (sampling/createMessage). Make one with [Sample].
type SampleQuestion struct{ q *question }

// Sample declares a sampling request under key. params renders every
// parameter of sampling/createMessage (messages, maxTokens, system prompt,
// tools and toolChoice, and the rest) from the call's arguments (of type
// In) and the answers of the questions in after. A request with tools or
// toolChoice needs the client's sampling.tools capability.
//
// The completion is recorded in the sealed state, so it is sampled once
// per call however many rounds follow.
func Sample[In any](key string, params func(in In, c *Call) mcp.CreateMessageRequestParams, after ...Dependency) *SampleQuestion {
	s := &SampleQuestion{q: newQuestion(key, mcp.MethodCreateMessage, after)}
	s.q.inType = inTypeOf[In]()
	if params == nil && s.q.err == nil {
		s.q.err = fmt.Errorf("question %q has no parameters", key)
	}
	s.q.render = func(in any, c *Call) (mcp.InputRequest, error) {
		return mcp.NewCreateMessageRequest(params(in.(In), c)), nil
	}
	s.q.consume = func(raw json.RawMessage) (*record, *answer, error) {
		res, err := (mcp.InputResponses{key: raw}).Sample(key)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrWrongKind, err)
		}
		return &record{Data: raw}, &answer{value: res}, nil
	}
	s.q.restore = func(r *record) (*answer, bool) {
		if r.Action != "" || len(r.Data) == 0 {
			return nil, false
		}
		res, err := (mcp.InputResponses{key: r.Data}).Sample(key)
		if err != nil {
			return nil, false
		}
		return &answer{value: res}, true
	}
	return s
}

// Key returns the question's key in inputRequests.
func (s *SampleQuestion) Key() string { return s.q.key }

func (s *SampleQuestion) base() *question { return s.q }

// Get returns the client's completion.
func (s *SampleQuestion) Get(c *Call) *mcp.CreateMessageResult {
	v, _ := answerOf(c, s.q).value.(*mcp.CreateMessageResult)
	return v
}
