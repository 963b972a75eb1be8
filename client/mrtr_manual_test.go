package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
)

// roundCall is one of the *Round methods, with its params built around
// the given continuation.
type roundCall struct {
	method string
	call   func(ctx context.Context, s *client.Session, in mcp.InputResponses, state string) (any, mcp.AnyResult, error)
	// complete is a complete result of the method.
	complete string
}

func roundCalls() []roundCall {
	return []roundCall{
		{mcp.MethodCallTool, func(ctx context.Context, s *client.Session, in mcp.InputResponses, state string) (any, mcp.AnyResult, error) {
			p := &mcp.CallToolRequestParams{Name: "t", Arguments: json.RawMessage(`{"a":1}`), InputResponses: in, RequestState: state}
			out, err := s.CallToolRound(ctx, p)
			return p, out, err
		}, `{"resultType":"complete","content":[]}`},
		{mcp.MethodGetPrompt, func(ctx context.Context, s *client.Session, in mcp.InputResponses, state string) (any, mcp.AnyResult, error) {
			p := &mcp.GetPromptRequestParams{Name: "p", Arguments: map[string]string{"a": "1"}, InputResponses: in, RequestState: state}
			out, err := s.GetPromptRound(ctx, p)
			return p, out, err
		}, `{"resultType":"complete","messages":[]}`},
		{mcp.MethodReadResource, func(ctx context.Context, s *client.Session, in mcp.InputResponses, state string) (any, mcp.AnyResult, error) {
			p := &mcp.ReadResourceRequestParams{URI: "file:///x", InputResponses: in, RequestState: state}
			out, err := s.ReadResourceRound(ctx, p)
			return p, out, err
		}, `{"resultType":"complete","contents":[]}`},
	}
}

// continuationOf returns the inputResponses and requestState of params.
func continuationOf(p any) (mcp.InputResponses, string) {
	in, state := p.(mcp.InputResponseParams).Continuation()
	return *in, *state
}

// The *Round calls send the caller's inputResponses and requestState as
// given, return the union the server answered without acting on it, and
// leave the caller's values alone.
func TestRoundCallsSendWhatTheyAreGiven(t *testing.T) {
	const state = "given: \"quoted\" é ✓ \\ spaces  "
	given := mcp.InputResponses{
		"a": json.RawMessage(`{"action":"accept","content":{"x":"é","n":2,"l":["p","q"]}}`),
		"b": json.RawMessage(`{"roots":[{"uri":"file:///w"}]}`),
		"c": json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"t"},"model":"m"}`),
	}
	for _, c := range roundCalls() {
		t.Run(c.method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sess, f := dialFake(t, newClient(nil))
				ctx := context.Background()

				// Responses and state go out exactly as given, and the
				// interim answer comes back as it is, with no retry.
				type res struct {
					p   any
					out mcp.AnyResult
					err error
				}
				ch := make(chan res, 1)
				in := maps(given)
				go func() {
					p, out, err := c.call(ctx, sess, in, state)
					ch <- res{p, out, err}
				}()
				m := f.expect(c.method)
				p := rawParams(t, m)
				var sent map[string]json.RawMessage
				if err := json.Unmarshal(p["inputResponses"], &sent); err != nil {
					t.Fatal(err)
				}
				for k, v := range given {
					if string(sent[k]) != string(v) {
						t.Errorf("inputResponses[%q] = %s, want the bytes %s", k, sent[k], v)
					}
				}
				if len(sent) != len(given) {
					t.Errorf("inputResponses %s, want %d answers", p["inputResponses"], len(given))
				}
				if string(p["requestState"]) != jsonString(state) {
					t.Errorf("requestState %s, want %s", p["requestState"], jsonString(state))
				}
				f.reply(m.ID, inputRequired(`{"next":`+elicitJSON+`}`, `"server's new state"`))
				r := <-ch
				if r.err != nil {
					t.Fatal(r.err)
				}
				ir, ok := r.out.(*mcp.InputRequiredResult)
				if !ok {
					t.Fatalf("result %T, want *mcp.InputRequiredResult", r.out)
				}
				if ir.RequestState != "server's new state" || !slices.Equal(ir.InputRequests.Keys(), []string{"next"}) {
					t.Errorf("result %+v", ir)
				}
				gotIn, gotState := continuationOf(r.p)
				if gotState != state || !reflect.DeepEqual(gotIn, given) || !reflect.DeepEqual(in, given) {
					t.Errorf("the caller's params were changed: %v %q", gotIn, gotState)
				}

				// Nothing given, nothing sent; a complete result is
				// returned as such.
				go func() {
					p, out, err := c.call(ctx, sess, nil, "")
					ch <- res{p, out, err}
				}()
				m = f.expect(c.method)
				if p := rawParams(t, m); p["inputResponses"] != nil || p["requestState"] != nil {
					t.Errorf("a first round carries a continuation: %s", m.Raw)
				}
				f.reply(m.ID, c.complete)
				if r := <-ch; r.err != nil {
					t.Fatal(r.err)
				} else if _, interim := r.out.(*mcp.InputRequiredResult); interim {
					t.Errorf("result %T", r.out)
				}

				// State alone, answers alone.
				go func() {
					p, out, err := c.call(ctx, sess, nil, "only-state")
					ch <- res{p, out, err}
				}()
				m = f.expect(c.method)
				if keys, st := continuation(t, m); keys != nil || st == nil || *st != "only-state" {
					t.Errorf("state-only round: %s", m.Raw)
				}
				f.reply(m.ID, c.complete)
				<-ch
				go func() {
					p, out, err := c.call(ctx, sess, mcp.InputResponses{"b": given["b"]}, "")
					ch <- res{p, out, err}
				}()
				m = f.expect(c.method)
				if keys, st := continuation(t, m); !slices.Equal(keys, []string{"b"}) || st != nil {
					t.Errorf("answers-only round: %s", m.Raw)
				}
				f.reply(m.ID, c.complete)
				<-ch
				noMoreRequests(f, sess)
			})
		})
	}
}

func maps(m mcp.InputResponses) mcp.InputResponses {
	out := make(mcp.InputResponses, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Begin, Fulfil and Continue drive a flow by hand, on every carrier, and a
// round may be continued on another session (here: another client and
// another server instance), since the server keeps nothing between rounds.
func TestBeginFulfilContinue(t *testing.T) {
	calls := []*client.Call{
		mustToolCall(t, "two", map[string]any{"name": "orders"}),
		client.PromptCall("two", map[string]string{"name": "orders"}),
		client.ResourceCall("mrtr:///two?name=orders"),
	}
	for _, call := range calls {
		t.Run(call.Method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				var shown []string
				first, w1 := connect(t, newClient(&client.Options{Elicit: answerRegions(&shown, "eu-west-1")}), mrtrServer())
				res, p, err := first.Begin(ctx, call)
				if err != nil || res != nil || p == nil {
					t.Fatalf("Begin = %v, %+v, %v", res, p, err)
				}
				if p.Round != 1 || !p.NeedsInput() || !slices.Equal(p.InputRequests.Keys(), []string{"first"}) || p.RequestState != "two:1" {
					t.Errorf("round 1: %+v", p)
				}
				if !reflect.DeepEqual(p.Call, *call) {
					t.Errorf("Pending.Call %+v, want %+v", p.Call, *call)
				}
				in, err := first.Fulfil(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				res, p, err = first.Continue(ctx, p, in)
				if err != nil || res != nil || p == nil {
					t.Fatalf("Continue = %v, %+v, %v", res, p, err)
				}
				if p.Round != 2 || !slices.Equal(p.InputRequests.Keys(), []string{"second"}) || p.RequestState != twoState+"eu-west-1" {
					t.Errorf("round 2: %+v", p)
				}

				// The second round is answered by hand, on another session.
				second, w2 := connect(t, newClient(nil), mrtrServer())
				var answer mcp.InputResponses
				if err := answer.Set("second", &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "us-east-2"}}); err != nil {
					t.Fatal(err)
				}
				res, p, err = second.Continue(ctx, p, answer)
				if err != nil || p != nil {
					t.Fatalf("Continue = %v, %+v, %v", res, p, err)
				}
				var got string
				switch r := res.(type) {
				case *mcp.CallToolResult:
					got = text(r)
				case *mcp.GetPromptResult:
					got = r.Messages[0].Content.(*mcp.TextContent).Text
				case *mcp.ReadResourceResult:
					got = r.Contents[0].(*mcp.TextResourceContents).Text
				default:
					t.Fatalf("result %T", res)
				}
				if got != "first=eu-west-1 second=us-east-2" {
					t.Errorf("result %q", got)
				}
				if len(shown) != 1 || len(w1.Requests(call.Method)) != 2 || len(w2.Requests(call.Method)) != 1 {
					t.Errorf("%d questions, %d + %d requests", len(shown), len(w1.Requests(call.Method)), len(w2.Requests(call.Method)))
				}
			})
		})
	}
}

func mustToolCall(t testing.TB, name string, args any) *client.Call {
	t.Helper()
	c, err := client.ToolCall(name, args)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestBeginCompleteAndBadCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sess, _ := connect(t, newClient(nil), fixture(nil))
		res, p, err := sess.Begin(ctx, mustToolCall(t, "echo", map[string]string{"text": "at once"}))
		if err != nil || p != nil || text(res.(*mcp.CallToolResult)) != "at once" {
			t.Errorf("Begin of a call that needs nothing: %v, %+v, %v", res, p, err)
		}
		if _, _, err := sess.Begin(ctx, &client.Call{Method: mcp.MethodListTools}); err == nil {
			t.Error("Begin of tools/list succeeded")
		}
		if _, err := client.ToolCall("x", []int{1}); err == nil {
			t.Error("ToolCall with an array for arguments succeeded")
		}
		// Fulfil of a round without input requests has nothing to do.
		in, err := sess.Fulfil(ctx, &client.Pending{RequestState: "s", Round: 1})
		if err != nil || in != nil {
			t.Errorf("Fulfil of a state-only round = %v, %v", in, err)
		}
		// A hand-built Pending with a hole in it is refused, not a panic.
		if _, err := sess.Fulfil(ctx, &client.Pending{InputRequests: mcp.InputRequests{"k": nil}}); err == nil {
			t.Error("Fulfil of a nil request succeeded")
		}
	})
}

// richInputRequired is an input_required result using every kind and most
// fields of the input requests.
const richInputRequired = `{"resultType":"input_required","inputRequests":{
	"form":{"method":"elicitation/create","params":{"mode":"form","message":"Fill in é ✓","requestedSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{
		"s":{"type":"string","title":"S","minLength":1,"maxLength":9,"format":"email","default":"a@b.c"},
		"n":{"type":"integer","minimum":1,"maximum":5,"default":2},
		"b":{"type":"boolean","default":true},
		"e":{"type":"string","enum":["x","y"],"default":"x"},
		"o":{"type":"string","oneOf":[{"const":"x","title":"X"}]},
		"m":{"type":"array","items":{"type":"string","enum":["p","q"]},"minItems":1}
	},"required":["s"]}}},
	"plain":{"method":"elicitation/create","params":{"message":"No mode","requestedSchema":{"type":"object","properties":{}}}},
	"url":{"method":"elicitation/create","params":{"mode":"url","message":"Sign in","url":"https://example.com/login?x=1&y=2"}},
	"llm":{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}},{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],"modelPreferences":{"hints":[{"name":"claude"}],"speedPriority":0.5},"systemPrompt":"be brief","includeContext":"none","temperature":0.2,"maxTokens":64,"stopSequences":["\n"],"metadata":{"k":"v"}}},
	"roots":{"method":"roots/list"},
	"roots2":{"method":"roots/list","params":{"_meta":{"k":"v"}}}
},"requestState":"state \u00e9 \"q\" \\ ✓ 🚀 <&>  "}`

// A Pending is plain data: it survives JSON and back without loss, and the
// copy continues the call exactly as the original would.
func TestPendingJSONRoundTrip(t *testing.T) {
	for _, call := range []*client.Call{
		mustToolCall(t, "deploy", toolArgs),
		client.PromptCall("plan", map[string]string{"goal": "ship é", "when": "now"}),
		client.ResourceCall("file:///plans/é.txt?x=1&y=2"),
	} {
		t.Run(call.Method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				sess, f := dialFake(t, newClient(nil))
				type begun struct {
					p   *client.Pending
					err error
				}
				ch := make(chan begun, 1)
				go func() {
					_, p, err := sess.Begin(ctx, call)
					ch <- begun{p, err}
				}()
				first := f.expect(call.Method)
				f.reply(first.ID, richInputRequired)
				b := <-ch
				if b.err != nil {
					t.Fatal(b.err)
				}
				p := b.p

				data, err := json.Marshal(p)
				if err != nil {
					t.Fatal(err)
				}
				var back client.Pending
				if err := json.Unmarshal(data, &back); err != nil {
					t.Fatalf("%s: %v", data, err)
				}
				if !reflect.DeepEqual(&back, p) {
					t.Errorf("after JSON:\n%#v\nwant\n%#v", back, *p)
				}
				again, err := json.Marshal(&back)
				if err != nil || string(again) != string(data) {
					t.Errorf("the copy encodes as\n%s\nnot\n%s (%v)", again, data, err)
				}
				// The record names its format; another format is refused,
				// a record without one is read as the first.
				if !strings.HasPrefix(string(data), `{"v":1,`) {
					t.Errorf("the record does not start with its format version: %s", data)
				}
				var other client.Pending
				if err := json.Unmarshal([]byte(strings.Replace(string(data), `"v":1`, `"v":2`, 1)), &other); err == nil {
					t.Error("a record of format version 2 was read")
				}
				var unversioned client.Pending
				if err := json.Unmarshal([]byte(`{`+strings.TrimPrefix(string(data), `{"v":1,`)), &unversioned); err != nil || !reflect.DeepEqual(&unversioned, p) {
					t.Errorf("a record without a version: %+v, %v", unversioned, err)
				}
				// The requests are what the server sent.
				var sent, kept struct {
					InputRequests json.RawMessage `json:"inputRequests"`
				}
				json.Unmarshal([]byte(richInputRequired), &sent)
				json.Unmarshal(data, &kept)
				if !jsonEqual(t, kept.InputRequests, string(sent.InputRequests)) {
					t.Errorf("inputRequests kept as\n%s\nsent as\n%s", kept.InputRequests, sent.InputRequests)
				}

				// A fresh client on a fresh connection continues from the
				// copy: the same call, the same state.
				later, f2 := dialFake(t, newClient(nil))
				done := async(func() error {
					_, _, err := later.Continue(ctx, &back, mcp.InputResponses{"roots": json.RawMessage(`{"roots":[]}`)})
					return err
				})
				retry := f2.expect(call.Method)
				// (Its id may be the first's: ids belong to a connection.)
				wantSameCall(t, fakeCarrier{method: call.Method, target: targets(call)}, first, retry)
				var state string
				retry.param(t, "requestState", &state)
				if state != "state é \"q\" \\ ✓ 🚀 <&>  " {
					t.Errorf("requestState %q", state)
				}
				f2.reply(retry.ID, `{"resultType":"complete","content":[],"messages":[],"contents":[]}`)
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

func targets(c *client.Call) []string {
	if c.Method == mcp.MethodReadResource {
		return []string{"uri"}
	}
	return []string{"name", "arguments"}
}

// A callback that panics panics on the caller's goroutine, whether its round
// has one request (the callback runs there) or several (each runs on a
// goroutine of its own).
func TestFulfilCallbackPanicReachesCaller(t *testing.T) {
	for _, batched := range []bool{false, true} {
		t.Run(map[bool]string{false: "single", true: "batched"}[batched], func(t *testing.T) {
			opts := &client.Options{
				Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
					panic("elicit exploded")
				},
				ListRoots: func(ctx context.Context) (*mcp.ListRootsResult, error) {
					return &mcp.ListRootsResult{Roots: []mcp.Root{}}, nil
				},
			}
			sess, _ := connect(t, newClient(opts), mrtrServer())
			call, err := client.ToolCall("t", nil)
			if err != nil {
				t.Fatal(err)
			}
			p := &client.Pending{
				Call:          *call,
				InputRequests: mcp.InputRequests{"who": mcp.NewElicitFormRequest("Who?", mcp.ElicitRequestedSchema{})},
				Round:         1,
			}
			if batched {
				p.InputRequests["roots"] = mcp.NewListRootsRequest()
			}
			ctx := context.Background() // a single request then runs on this goroutine
			defer func() {
				if v := recover(); v != "elicit exploded" {
					t.Errorf("recovered %v, want the callback's panic", v)
				}
			}()
			_, err = sess.Fulfil(ctx, p)
			t.Errorf("Fulfil returned (%v) instead of panicking", err)
		})
	}
}

// A round with more input requests than the limit fails before any
// callback runs: a server cannot make the client run callbacks by the
// thousand at once.
func TestFulfilInputRequestLimit(t *testing.T) {
	var calls atomic.Int32
	opts := &client.Options{
		ListRoots: func(ctx context.Context) (*mcp.ListRootsResult, error) {
			calls.Add(1)
			return &mcp.ListRootsResult{Roots: []mcp.Root{}}, nil
		},
		Loop: &client.LoopOptions{MaxInputRequests: 3},
	}
	sess, _ := connect(t, newClient(opts), mrtrServer())
	call, err := client.ToolCall("t", nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &client.Pending{Call: *call, InputRequests: mcp.InputRequests{}, Round: 1}
	for i := range 3 {
		p.InputRequests[fmt.Sprint("r", i)] = mcp.NewListRootsRequest()
	}
	if _, err := sess.Fulfil(context.Background(), p); err != nil {
		t.Fatalf("3 requests, limit 3: %v", err)
	}
	p.InputRequests["r3"] = mcp.NewListRootsRequest()
	calls.Store(0)
	_, err = sess.Fulfil(context.Background(), p)
	var le *client.InputRequestLimitError
	if !errors.As(err, &le) || le.Count != 4 || le.Limit != 3 {
		t.Fatalf("4 requests, limit 3: %v, want an *InputRequestLimitError", err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d callbacks ran", n)
	}
}

// An answer that cannot be encoded fails the round as the callback's error,
// naming the input, on the single-request path and the batched one.
func TestFulfilUnencodableAnswer(t *testing.T) {
	for _, batched := range []bool{false, true} {
		opts := &client.Options{
			Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"f": func() {}}}, nil
			},
			ListRoots: func(ctx context.Context) (*mcp.ListRootsResult, error) {
				return &mcp.ListRootsResult{Roots: []mcp.Root{}}, nil
			},
		}
		sess, _ := connect(t, newClient(opts), mrtrServer())
		call, err := client.ToolCall("t", nil)
		if err != nil {
			t.Fatal(err)
		}
		p := &client.Pending{Call: *call, InputRequests: mcp.InputRequests{"who": mcp.NewElicitFormRequest("Who?", mcp.ElicitRequestedSchema{})}, Round: 1}
		if batched {
			p.InputRequests["roots"] = mcp.NewListRootsRequest()
		}
		_, err = sess.Fulfil(context.Background(), p)
		var ce *client.CallbackError
		if !errors.As(err, &ce) || ce.Key != "who" || ce.Method != mcp.MethodElicit || !strings.Contains(err.Error(), "encoding the answer") {
			t.Errorf("batched=%v: %v, want a *CallbackError for who", batched, err)
		}
	}
}

// An empty requestState survives the manual loop: Begin returns it as
// present, a persisted Pending keeps it, and Continue echoes it exactly.
func TestPendingEmptyState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		call, err := client.ToolCall("deploy", map[string]any{"env": "prod"})
		if err != nil {
			t.Fatal(err)
		}
		sess, f := dialFake(t, newClient(nil))
		type begun struct {
			p   *client.Pending
			err error
		}
		ch := make(chan begun, 1)
		go func() {
			_, p, err := sess.Begin(ctx, call)
			ch <- begun{p, err}
		}()
		first := f.expect(call.Method)
		f.reply(first.ID, inputRequired(`{"roots":`+rootsJSON+`}`, `""`))
		b := <-ch
		if b.err != nil {
			t.Fatal(b.err)
		}
		if st, ok := b.p.LookupRequestState(); st != "" || !ok {
			t.Fatalf("Begin: state %q present %v, want the empty state present", st, ok)
		}

		data, err := json.Marshal(b.p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), `"requestState":""`) {
			t.Errorf("the record drops the empty state: %s", data)
		}
		var back client.Pending
		if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(&back, b.p) {
			t.Fatalf("after JSON: %+v, %v; want %+v", back, err, *b.p)
		}
		for _, rec := range []string{`{"v":1,"call":{"method":"tools/call","name":"deploy"},"round":1}`, `{"v":1,"call":{"method":"tools/call","name":"deploy"},"requestState":null,"round":1}`} {
			var none client.Pending
			if err := json.Unmarshal([]byte(rec), &none); err != nil {
				t.Fatal(err)
			}
			if _, ok := none.LookupRequestState(); ok {
				t.Errorf("%s: a state is present", rec)
			}
		}

		later, f2 := dialFake(t, newClient(nil))
		done := async(func() error {
			_, _, err := later.Continue(ctx, &back, mcp.InputResponses{"roots": json.RawMessage(`{"roots":[]}`)})
			return err
		})
		retry := f2.expect(call.Method)
		if got, ok := rawParams(t, retry)["requestState"]; !ok || string(got) != `""` {
			t.Errorf("Continue: requestState %s (present %v): %s", got, ok, retry.Raw)
		}
		f2.reply(retry.ID, `{"resultType":"complete","content":[]}`)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
