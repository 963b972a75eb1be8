package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
)

// Script is the person at the host, written down: what they answer to
// each question the server asks, by the question's key (the key a tool
// gives its question with mcpserver.Elicit, Sample or ListRoots, or the
// key of an InputRequiredResult's input request). An answer stands for
// every time its key is asked.
//
//	mcptest.Script{
//		"region":  mcptest.Accept(map[string]any{"region": "eu-west-1"}),
//		"confirm": mcptest.Decline(),
//		"summary": mcptest.Reply("Three tables, one index."),
//		"project": mcptest.Roots(mcp.Root{URI: "file:///src/app"}),
//	}
//
// Keys work in both protocol generations. Under 2026-07-28 every input
// request carries its key. On a legacy session the server asks over its
// back-channel, and the wire names no key; the kit's in-memory pipe takes
// the key from the server as each question is sent (server.Request.AskAll,
// through which declared questions and bridged InputRequiredResults are
// asked), so the same script answers the same tool in both generations. A
// legacy question sent one by one with server.Request.Ask has no key at
// all: it takes the one scripted answer of its kind (for a form, the one
// whose fields the form asks for), and fails the test when none or
// several fit.
type Script map[string]Answer

// Answer is one scripted answer. Make it with Accept, Decline, Cancel,
// Reply, ReplyResult, Roots or AnswerFunc; the zero Answer is a mistake
// the test reports.
type Answer struct {
	kind    answerKind
	action  mcp.ElicitAction
	content any
	sampled *mcp.CreateMessageResult
	roots   []mcp.Root
	fn      func(ctx context.Context, q Question) (mcp.InputResponse, error)
}

type answerKind int

const (
	noAnswer answerKind = iota
	elicitAnswer
	sampleAnswer
	rootsAnswer
	funcAnswer
)

// Accept accepts an elicitation. For a form, content is what the person
// fills in: a map from field name to value (map[string]any{"region":
// "eu-west-1"}), or a struct whose JSON encoding is one, such as the type
// the tool's question decodes. nil accepts a URL elicitation, or a form
// without fields. Content is sent as given, even when it does not fit the
// form: how the server takes a wrong answer can be tested too.
func Accept(content any) Answer {
	return Answer{kind: elicitAnswer, action: mcp.ActionAccept, content: content}
}

// Decline declines an elicitation: the person said no.
func Decline() Answer { return Answer{kind: elicitAnswer, action: mcp.ActionDecline} }

// Cancel cancels an elicitation: the person dismissed it without choosing.
func Cancel() Answer { return Answer{kind: elicitAnswer, action: mcp.ActionCancel} }

// Reply answers a sampling request with text, as the assistant, from a
// model named "mcptest" that stopped at the end of its turn.
func Reply(text string) Answer {
	return ReplyResult(&mcp.CreateMessageResult{
		Role:       mcp.RoleAssistant,
		Content:    mcp.SamplingContent{mcp.NewTextContent(text)},
		Model:      "mcptest",
		StopReason: mcp.StopReasonEndTurn,
	})
}

// ReplyResult answers a sampling request with res, for a reply Reply does
// not cover (a tool use, an image, another model or stop reason).
func ReplyResult(res *mcp.CreateMessageResult) Answer {
	return Answer{kind: sampleAnswer, sampled: res}
}

// Roots answers a roots/list request with roots (none: an empty list).
func Roots(roots ...mcp.Root) Answer { return Answer{kind: rootsAnswer, roots: roots} }

// AnswerFunc answers with f, for anything the other answers do not cover:
// an answer that depends on the question, one that changes from call to
// call, or an error (which the client reports to the server as a callback
// that failed; the test does not fail for it). f runs on a goroutine of
// the client's: it must not call t.Fatal, and should record what it wants
// checked. Its response must be of the question's kind.
func AnswerFunc(f func(ctx context.Context, q Question) (mcp.InputResponse, error)) Answer {
	return Answer{kind: funcAnswer, fn: f}
}

// Question is one question the server asked the person.
type Question struct {
	// Key is the question's key. It is "" only for a legacy server's
	// question sent one by one with server.Request.Ask, which has none.
	Key string
	// Request is the question as asked: an *mcp.ElicitRequest,
	// *mcp.CreateMessageRequest or *mcp.ListRootsRequest.
	Request mcp.InputRequest
}

// Method is the question's method, such as "elicitation/create".
func (q Question) Method() string {
	if q.Request == nil {
		return ""
	}
	return q.Request.Method()
}

// Message is what an elicitation says to the person; "" for the other
// kinds.
func (q Question) Message() string {
	if e, ok := q.Request.(*mcp.ElicitRequest); ok {
		switch p := e.Params.(type) {
		case *mcp.ElicitRequestFormParams:
			return p.Message
		case *mcp.ElicitRequestURLParams:
			return p.Message
		}
	}
	return ""
}

// String names the question as the kit's failures do: its key, its
// method and, for an elicitation, its message.
func (q Question) String() string {
	var b strings.Builder
	if q.Key != "" {
		b.WriteString(strconv.Quote(q.Key))
	} else {
		b.WriteString("a question without a key")
	}
	b.WriteString(" (")
	b.WriteString(q.Method())
	if m := q.Message(); m != "" {
		b.WriteString(" ")
		b.WriteString(strconv.Quote(m))
	}
	b.WriteString(")")
	return b.String()
}

// ErrUnexpectedQuestion is wrapped by the error with which the person
// refuses a question the script has no answer for. The client reports it
// as a callback that failed: under 2026-07-28 the call's error is a
// *client.CallbackError wrapping it; a legacy server gets an error answer.
// The test fails either way, when it ends, naming the question.
var ErrUnexpectedQuestion = errors.New("mcptest: the script has no answer to the question")

// person answers the server's questions from a script, and keeps what
// the test must hear about: the questions it could not answer, the
// mistakes in the script, and which answers were used.
type person struct {
	script Script
	// own says which kinds the caller's own callbacks answer: a question
	// of such a kind the script does not answer goes to them.
	ownElicit, ownSample, ownRoots bool

	mu       sync.Mutex
	asked    []Question
	used     map[string]bool
	failures []string
}

func newPerson(script Script, elicit, sample, roots bool) *person {
	return &person{script: script, ownElicit: elicit, ownSample: sample, ownRoots: roots, used: make(map[string]bool)}
}

// middleware answers every input request the client gets: a round's, a
// task's or a legacy server's.
func (p *person) middleware(next client.Handler) client.Handler {
	return func(ctx context.Context, req *client.Request) (any, error) {
		r, ok := req.Params.(mcp.InputRequest)
		if req.Kind != client.KindInput || !ok {
			return next(ctx, req)
		}
		q := Question{Key: req.Key, Request: r}
		if q.Key == "" {
			q.Key = takeKey(r) // a legacy question: the pipe put its key in _meta
		}
		key, a, found, ambiguous := p.lookup(q)
		p.mu.Lock()
		p.asked = append(p.asked, q)
		if found {
			p.used[key] = true
		}
		p.mu.Unlock()
		if !found {
			if ambiguous == "" && p.own(r) {
				return next(ctx, req)
			}
			if ambiguous == "" {
				p.fail(fmt.Sprintf("mcptest: the server asked %s, which the script does not answer", q))
			} else {
				p.fail(ambiguous)
			}
			return nil, fmt.Errorf("%w: %s", ErrUnexpectedQuestion, q)
		}
		res, err, mistake := a.respond(ctx, q)
		if mistake != nil {
			p.fail(fmt.Sprintf("mcptest: the script's answer to %s %v", q, mistake))
			return nil, mistake
		}
		if err != nil {
			return nil, err // an AnswerFunc's own error, on purpose
		}
		return res, nil
	}
}

// lookup finds the script's answer to q: by its key, or, for a question
// without one, the one answer that fits it. ambiguous, when set, is the
// failure that says why no answer was chosen among several.
func (p *person) lookup(q Question) (key string, a Answer, found bool, ambiguous string) {
	if q.Key != "" {
		a, found = p.script[q.Key]
		return q.Key, a, found, ""
	}
	var fit []string
	for k, a := range p.script {
		if a.fits(q) {
			fit = append(fit, k)
		}
	}
	switch len(fit) {
	case 0:
		return "", Answer{}, false, ""
	case 1:
		return fit[0], p.script[fit[0]], true, ""
	}
	sort.Strings(fit)
	return "", Answer{}, false, fmt.Sprintf("mcptest: the server asked %s, which several of the script's answers fit (%s); "+
		"a question without a key is answered only by the one answer of its kind that fits it", q, quoteAll(fit))
}

// fits reports whether a could answer q, which has no key: an answer of
// its kind, and for a form an Accept whose fields it asks for.
func (a Answer) fits(q Question) bool {
	switch a.kind {
	case funcAnswer:
		return true
	case sampleAnswer:
		return q.Method() == mcp.MethodCreateMessage
	case rootsAnswer:
		return q.Method() == mcp.MethodListRoots
	case elicitAnswer:
		if q.Method() != mcp.MethodElicit {
			return false
		}
		form := formOf(q)
		if a.action != mcp.ActionAccept || a.content == nil || form == nil {
			return true
		}
		fields, err := contentMap(a.content)
		if err != nil {
			return false
		}
		for f := range fields {
			if _, ok := form.RequestedSchema.Properties[f]; !ok {
				return false
			}
		}
		return true
	}
	return false
}

// own reports whether the caller's own callback answers r's kind.
func (p *person) own(r mcp.InputRequest) bool {
	switch r.(type) {
	case *mcp.ElicitRequest:
		return p.ownElicit
	case *mcp.CreateMessageRequest:
		return p.ownSample
	case *mcp.ListRootsRequest:
		return p.ownRoots
	}
	return false
}

// respond makes the answer's response to q. err is an AnswerFunc's own
// error; mistake says what is wrong with the script.
func (a Answer) respond(ctx context.Context, q Question) (res mcp.InputResponse, err, mistake error) {
	switch a.kind {
	case elicitAnswer:
		r := &mcp.ElicitResult{Action: a.action}
		if a.content != nil {
			if r.Content, mistake = contentMap(a.content); mistake != nil {
				return nil, nil, mistake
			}
		}
		res = r
	case sampleAnswer:
		if a.sampled == nil {
			return nil, nil, errors.New("is ReplyResult(nil)")
		}
		c := *a.sampled
		res = &c
	case rootsAnswer:
		res = &mcp.ListRootsResult{Roots: slices.Clone(a.roots)}
	case funcAnswer:
		res, err = a.fn(ctx, q)
		if err != nil {
			return nil, err, nil
		}
		if res == nil {
			return nil, nil, errors.New("is an AnswerFunc that returned neither a response nor an error")
		}
	default:
		return nil, nil, errors.New("is empty: make answers with Accept, Decline, Cancel, Reply, ReplyResult, Roots or AnswerFunc")
	}
	if want := responseMethod(res); want != q.Method() {
		return nil, nil, fmt.Errorf("answers %s, not %s", want, q.Method())
	}
	return res, nil, nil
}

// responseMethod names the method a response answers.
func responseMethod(r mcp.InputResponse) string {
	switch r.(type) {
	case *mcp.ElicitResult:
		return mcp.MethodElicit
	case *mcp.CreateMessageResult:
		return mcp.MethodCreateMessage
	case *mcp.ListRootsResult:
		return mcp.MethodListRoots
	}
	return fmt.Sprintf("%T", r)
}

// contentMap turns Accept's content into a form's content: a map as it
// is, anything else through its JSON encoding, which must be an object.
func contentMap(content any) (map[string]any, error) {
	if m, ok := content.(map[string]any); ok {
		return m, nil
	}
	raw, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("cannot be encoded: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("is %s, not an object of fields", raw)
	}
	return m, nil
}

// formOf returns q's form, or nil when q is not a form elicitation.
func formOf(q Question) *mcp.ElicitRequestFormParams {
	if e, ok := q.Request.(*mcp.ElicitRequest); ok {
		f, _ := e.Params.(*mcp.ElicitRequestFormParams)
		return f
	}
	return nil
}

// takeKey returns the key the kit's pipe put into a legacy question's
// _meta, and removes it, so that what the client's callbacks see is what
// the server sent. "" when the question has none.
func takeKey(r mcp.InputRequest) string {
	var meta *mcp.MetaObject
	switch r := r.(type) {
	case *mcp.ElicitRequest:
		switch p := r.Params.(type) {
		case *mcp.ElicitRequestFormParams:
			meta = &p.Meta
		case *mcp.ElicitRequestURLParams:
			meta = &p.Meta
		}
	case *mcp.CreateMessageRequest:
		meta = &r.Params.Meta
	case *mcp.ListRootsRequest:
		if r.Params != nil {
			meta = &r.Params.Meta
		}
	}
	if meta == nil {
		return ""
	}
	key, _ := (*meta)[metaKey].(string)
	delete(*meta, metaKey)
	if len(*meta) == 0 {
		*meta = nil
	}
	return key
}

func (p *person) fail(msg string) {
	p.mu.Lock()
	p.failures = append(p.failures, msg)
	p.mu.Unlock()
}

func (p *person) problems() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.failures)
}

func (p *person) questions() []Question {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.asked)
}

// unused returns a failure for every scripted answer no question asked
// for, in key order.
func (p *person) unused() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var keys []string
	for k := range p.script {
		if !p.used[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	asked := "no question was asked"
	if len(p.asked) > 0 {
		var names []string
		for _, q := range p.asked {
			if q.Key != "" && !slices.Contains(names, q.Key) {
				names = append(names, q.Key)
			}
		}
		asked = "the questions asked: " + quoteAll(names)
		if len(names) == 0 {
			asked = "only questions without a key were asked"
		}
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, fmt.Sprintf("mcptest: the script answers %q, but the server never asked it (%s)", k, asked))
	}
	return out
}

func quoteAll(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = strconv.Quote(k)
	}
	return strings.Join(q, ", ")
}

// The callbacks the client is given for the kinds the caller's own
// callbacks do not answer: they declare the capability and pass the
// client's checks, and the person's middleware answers before them.
func (p *person) unreachableElicit(context.Context, mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
	return nil, errUnreachable
}

func (p *person) unreachableSample(context.Context, *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
	return nil, errUnreachable
}

func (p *person) unreachableRoots(context.Context) (*mcp.ListRootsResult, error) {
	return nil, errUnreachable
}

var errUnreachable = errors.New("mcptest: a client callback ran without the person's middleware")
