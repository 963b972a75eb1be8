package requeststate

import (
	"encoding/base64"
	"errors"
	"sort"
	"sync"

	"github.com/parley-mcp/parley/mcp"
)

var errNotCarrier = errors.New("requeststate: not a tools/call, prompts/get or resources/read request")

// carrierParams returns the params of a request that may carry
// requestState, or nil. The method and the params type must agree: a
// middleware that rewrote one without the other gets no protection it did
// not ask for.
func carrierParams(method string, params any) mcp.RequestStateParams {
	switch p := params.(type) {
	case *mcp.CallToolRequestParams:
		if method == mcp.MethodCallTool {
			return p
		}
	case *mcp.GetPromptRequestParams:
		if method == mcp.MethodGetPrompt {
			return p
		}
	case *mcp.ReadResourceRequestParams:
		if method == mcp.MethodReadResource {
			return p
		}
	}
	return nil
}

// requestDigest digests what a token is bound to: the method, the target
// (tool name, prompt name or resource URI) and the arguments (see the
// comment at the top of digest.go for how they are canonicalised). Only
// these fields, chosen per method, are bound, so that a field a future
// protocol version adds cannot silently join or leave the digest.
func requestDigest(method string, params any) (d [digestLen]byte, err error) {
	c := getCanon(domainRequest)
	defer putCanon(c)
	c.textString(method)
	switch p := params.(type) {
	case *mcp.CallToolRequestParams:
		c.textString(p.Name)
		err = c.jsonArguments(p.Arguments)
	case *mcp.GetPromptRequestParams:
		c.textString(p.Name)
		c.stringMap(p.Arguments)
	case *mcp.ReadResourceRequestParams:
		c.textString(p.URI)
		c.byte('{')
		c.byte('}')
	default:
		err = errNotCarrier
	}
	if err != nil {
		return d, err
	}
	return c.sum(), nil
}

// questionDigests digests every input request of a round, by key, in key
// order. The digest covers the request as it goes on the wire (its JSON,
// canonicalised), so a reworded message or a changed schema is a
// different question.
func questionDigests(reqs mcp.InputRequests) ([]question, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	qs := make([]question, 0, len(reqs))
	for key, r := range reqs {
		d, err := cachedQuestionDigest(r)
		if err != nil {
			return nil, err
		}
		qs = append(qs, question{key: key, digest: d})
	}
	sort.Slice(qs, func(i, j int) bool { return qs[i].key < qs[j].key })
	return qs, nil
}

func questionDigest(r mcp.InputRequest) (d [questionTagLen]byte, err error) {
	bp := questionBufs.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxPooledQuestion {
			questionBufs.Put(bp)
		}
	}()
	raw, err := mcp.AppendJSON((*bp)[:0], r)
	*bp = raw[:0]
	if err != nil {
		return d, err
	}
	return digestQuestionJSON(raw)
}

// digestQuestionJSON digests a question's wire form.
func digestQuestionJSON(raw []byte) (d [questionTagLen]byte, err error) {
	c := getCanon(domainQuestion)
	defer putCanon(c)
	if err := c.jsonArguments(raw); err != nil {
		return d, err
	}
	sum := c.sum()
	copy(d[:], sum[:])
	return d, nil
}

// questionBufs recycles the buffers questions are rendered into before
// they are digested: every round a boundary seals renders its questions.
var questionBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledQuestion bounds the buffers kept in questionBufs.
const maxPooledQuestion = 64 << 10

// QuestionDigest returns a short, stable name of q as it goes on the wire:
// the digest the boundary pins each round's questions to (see [Asked]),
// as unpadded base64url. Two renderings of a question have the same digest
// exactly when they are the same question (the same kind, message, schema
// and parameters, however their JSON is spelled); a reworded message or a
// changed schema gives another.
//
// Code that records answers across rounds (the high-level server keeps
// every answer of a call in its sealed state) stores the digest with each
// answer and reuses the answer only while the question still digests the
// same.
func QuestionDigest(q mcp.InputRequest) (string, error) {
	if q == nil {
		return "", errors.New("requeststate: nil question")
	}
	d, err := cachedQuestionDigest(q)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(d[:]), nil
}
