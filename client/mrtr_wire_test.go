package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
)

// Input requests as a server writes them.
const (
	elicitJSON = `{"method":"elicitation/create","params":{"message":"Sure?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}`
	sampleJSON = `{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}}`
	rootsJSON  = `{"method":"roots/list"}`
)

// inputRequired returns an input_required result with the given requests
// (a JSON object, or "" for none) and requestState (raw JSON, or "" for
// none).
func inputRequired(requests, stateJSON string) string {
	var members []string
	members = append(members, `"resultType":"input_required"`)
	if requests != "" {
		members = append(members, `"inputRequests":`+requests)
	}
	if stateJSON != "" {
		members = append(members, `"requestState":`+stateJSON)
	}
	return "{" + strings.Join(members, ",") + "}"
}

func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// allCallbacks answers everything: the form with ok=true, a sampling with
// "sampled", the roots with one root. It counts its calls.
type allCallbacks struct {
	mu    sync.Mutex
	calls map[string]int
}

func (a *allCallbacks) count(kind string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.calls == nil {
		a.calls = map[string]int{}
	}
	a.calls[kind]++
}

func (a *allCallbacks) n(kind string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls[kind]
}

func (a *allCallbacks) options() *client.Options {
	return &client.Options{
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			a.count(mcp.MethodElicit)
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"ok": true}}, nil
		},
		Sample: func(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
			a.count(mcp.MethodCreateMessage)
			return sampleText("sampled")(ctx, p)
		},
		ListRoots: func(ctx context.Context) (*mcp.ListRootsResult, error) {
			a.count(mcp.MethodListRoots)
			return listRoots("file:///work")(ctx)
		},
	}
}

// fakeCarrier is one of the three carriers, driven against the fake.
type fakeCarrier struct {
	method   string
	start    func(ctx context.Context, s *client.Session) <-chan error
	complete string   // a complete result
	target   []string // the params that name what is called
}

var toolArgs = map[string]any{"env": "prod", "n": 3, "tags": []string{"a", "b"}, "nested": map[string]any{"k": "v é"}}

func fakeCarriers() []fakeCarrier {
	return []fakeCarrier{
		{mcp.MethodCallTool, func(ctx context.Context, s *client.Session) <-chan error {
			return async(func() error {
				res, err := s.CallTool(ctx, "deploy", toolArgs)
				if err == nil && text(res) != "done" {
					err = fmt.Errorf("result %q", text(res))
				}
				return err
			})
		}, `{"resultType":"complete","content":[{"type":"text","text":"done"}]}`, []string{"name", "arguments"}},
		{mcp.MethodGetPrompt, func(ctx context.Context, s *client.Session) <-chan error {
			return async(func() error {
				_, err := s.GetPrompt(ctx, "plan", map[string]string{"goal": "ship it", "when": "now"})
				return err
			})
		}, `{"resultType":"complete","messages":[]}`, []string{"name", "arguments"}},
		{mcp.MethodReadResource, func(ctx context.Context, s *client.Session) <-chan error {
			return async(func() error {
				_, err := s.ReadResource(ctx, "file:///secret%20plans/é.txt?x=1")
				return err
			})
		}, `{"resultType":"complete","contents":[],"ttlMs":0,"cacheScope":"private"}`, []string{"uri"}},
	}
}

func rawParams(t testing.TB, m wireMsg) map[string]json.RawMessage {
	t.Helper()
	var p map[string]json.RawMessage
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("params of %s: %v", m.Raw, err)
	}
	return p
}

// wantRetryOf checks that retry repeats first: a new id, the same method
// and the same target params, byte for byte, and nothing else besides
// _meta, inputResponses and requestState.
func wantRetryOf(t *testing.T, c fakeCarrier, first, retry wireMsg) {
	t.Helper()
	wantSameCall(t, c, first, retry)
	if string(retry.ID) == string(first.ID) {
		t.Errorf("retry reuses id %s", retry.ID)
	}
}

// wantSameCall is wantRetryOf without the id check, for a retry sent on
// another connection (where ids start afresh).
func wantSameCall(t *testing.T, c fakeCarrier, first, retry wireMsg) {
	t.Helper()
	if retry.Method != first.Method {
		t.Errorf("retry method %q, want %q", retry.Method, first.Method)
	}
	fp, rp := rawParams(t, first), rawParams(t, retry)
	for _, k := range c.target {
		if fp[k] == nil {
			t.Fatalf("first request has no %q: %s", k, first.Raw)
		}
		if string(rp[k]) != string(fp[k]) {
			t.Errorf("retry %s = %s, want %s", k, rp[k], fp[k])
		}
	}
	for k := range rp {
		if !slices.Contains(c.target, k) && k != "_meta" && k != "inputResponses" && k != "requestState" {
			t.Errorf("retry has an unexpected %q: %s", k, retry.Raw)
		}
	}
	for k := range fp {
		if k == "inputResponses" || k == "requestState" {
			t.Errorf("first request carries %q: %s", k, first.Raw)
		}
	}
}

// The retry is the original request again under a new id, with this round's
// answers only and the latest requestState echoed exactly; when the server
// sends no state, none goes back.
func TestRetryOnTheWire(t *testing.T) {
	// state1 is sent as encoding/json writes it, so it must come back in
	// the very same bytes. state2 is sent with escapes a client is free to
	// write differently, so it must come back as the same string.
	const state1 = "round 1: \"quoted\" back\\slash\ttab\nnewline é ✓ 🚀 \u2028  spaces  "
	const state2Wire = `"caf\u00e9 \/ \ud83d\ude80 \u0041 \"x\" "`
	const state2 = `café / 🚀 A "x" `
	for _, c := range fakeCarriers() {
		t.Run(c.method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cb := &allCallbacks{}
				sess, f := dialFake(t, newClient(cb.options()))
				done := c.start(context.Background(), sess)

				first := f.expect(c.method)
				f.reply(first.ID, inputRequired(`{"confirm":`+elicitJSON+`,"llm":`+sampleJSON+`}`, jsonString(state1)))

				r1 := f.expect(c.method)
				wantRetryOf(t, c, first, r1)
				p1 := rawParams(t, r1)
				if got := string(p1["requestState"]); got != jsonString(state1) {
					t.Errorf("requestState %s, want the bytes %s", got, jsonString(state1))
				}
				var responses map[string]json.RawMessage
				r1.param(t, "inputResponses", &responses)
				if keys := slices.Sorted(mapKeys(responses)); !slices.Equal(keys, []string{"confirm", "llm"}) {
					t.Errorf("inputResponses keys %v", keys)
				}
				if !jsonEqual(t, responses["confirm"], `{"action":"accept","content":{"ok":true}}`) {
					t.Errorf("confirm answered with %s", responses["confirm"])
				}
				if !jsonEqual(t, responses["llm"], `{"role":"assistant","content":{"type":"text","text":"sampled"},"model":"test-model"}`) {
					t.Errorf("llm answered with %s", responses["llm"])
				}
				f.reply(r1.ID, inputRequired(`{"where":`+rootsJSON+`}`, state2Wire))

				r2 := f.expect(c.method)
				wantRetryOf(t, c, first, r2)
				var s2 string
				r2.param(t, "requestState", &s2)
				if s2 != state2 {
					t.Errorf("requestState %q, want %q", s2, state2)
				}
				responses = nil // Unmarshal would add to the map
				r2.param(t, "inputResponses", &responses)
				if keys := slices.Sorted(mapKeys(responses)); !slices.Equal(keys, []string{"where"}) {
					t.Errorf("inputResponses keys %v: answers of earlier rounds must not come again", keys)
				}
				// No state this time: the retry must carry none.
				f.reply(r2.ID, inputRequired(`{"again":`+elicitJSON+`}`, ""))

				r3 := f.expect(c.method)
				wantRetryOf(t, c, first, r3)
				if _, ok := rawParams(t, r3)["requestState"]; ok {
					t.Errorf("retry carries a requestState the server never sent: %s", r3.Raw)
				}
				responses = nil
				r3.param(t, "inputResponses", &responses)
				if keys := slices.Sorted(mapKeys(responses)); !slices.Equal(keys, []string{"again"}) {
					t.Errorf("inputResponses keys %v", keys)
				}
				f.reply(r3.ID, c.complete)
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				if cb.n(mcp.MethodElicit) != 2 || cb.n(mcp.MethodCreateMessage) != 1 || cb.n(mcp.MethodListRoots) != 1 {
					t.Errorf("callbacks ran %v", cb.calls)
				}
			})
		})
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// While one call is between rounds, other calls on the session carry
// nothing of it.
func TestParallelIsolation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started, release := make(chan struct{}), make(chan struct{})
		elicit := func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			close(started)
			<-release
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"ok": true}}, nil
		}
		sess, f := dialFake(t, newClient(&client.Options{Elicit: elicit}))
		ctx := context.Background()
		a := async(func() error { _, err := sess.CallTool(ctx, "a", nil); return err })
		first := f.expect(mcp.MethodCallTool)
		f.reply(first.ID, inputRequired(`{"q":`+elicitJSON+`}`, `"state-of-a"`))
		<-started

		// A's callback is waiting for its user: other calls go out clean.
		others := []<-chan error{
			async(func() error { _, err := sess.CallTool(ctx, "b", map[string]any{"x": 1}); return err }),
			async(func() error { _, err := sess.GetPrompt(ctx, "p", nil); return err }),
			async(func() error { _, err := sess.ReadResource(ctx, "file:///r"); return err }),
			async(func() error { _, err := sess.ListTools(ctx, ""); return err }),
		}
		results := map[string]string{
			mcp.MethodCallTool:     `{"resultType":"complete","content":[]}`,
			mcp.MethodGetPrompt:    `{"resultType":"complete","messages":[]}`,
			mcp.MethodReadResource: `{"resultType":"complete","contents":[]}`,
			mcp.MethodListTools:    `{"resultType":"complete","tools":[]}`,
		}
		for range others {
			m := f.next()
			p := rawParams(t, m)
			if p["inputResponses"] != nil || p["requestState"] != nil {
				t.Errorf("an unrelated request carries another call's round: %s", m.Raw)
			}
			f.reply(m.ID, results[m.Method])
		}
		for _, o := range others {
			if err := <-o; err != nil {
				t.Error(err)
			}
		}

		close(release)
		retry := f.expect(mcp.MethodCallTool)
		keys, state := continuation(t, retry)
		if !slices.Equal(keys, []string{"q"}) || state == nil || *state != "state-of-a" {
			t.Errorf("A's retry: %s", retry.Raw)
		}
		f.reply(retry.ID, `{"resultType":"complete","content":[]}`)
		if err := <-a; err != nil {
			t.Fatal(err)
		}

		// A new call after A starts from nothing.
		b := async(func() error { _, err := sess.CallTool(ctx, "a", nil); return err })
		m := f.expect(mcp.MethodCallTool)
		if p := rawParams(t, m); p["inputResponses"] != nil || p["requestState"] != nil {
			t.Errorf("a new call carries an old round: %s", m.Raw)
		}
		f.reply(m.ID, `{"resultType":"complete","content":[]}`)
		if err := <-b; err != nil {
			t.Fatal(err)
		}
	})
}

// serveRounds answers every request of method with reply(n) (n counts the
// requests from 1) until reply returns "", and returns how many requests
// it saw. The caller then expects nothing more from the client.
func serveRounds(f *fake, method string, reply func(n int) string) int {
	for n := 1; ; n++ {
		m := f.expect(method)
		r := reply(n)
		f.reply(m.ID, r)
		if !strings.Contains(r, `"input_required"`) {
			return n
		}
	}
}

// endless is a server that asks for the roots on every round.
func endless(int) string { return inputRequired(`{"r":`+rootsJSON+`}`, `"again"`) }

// noMoreRequests closes the session and checks that the client sent
// nothing after the call ended.
func noMoreRequests(f *fake, sess *client.Session) {
	sess.Close()
	f.expectClosed()
}

func TestRoundLimit(t *testing.T) {
	cases := []struct {
		name      string
		maxRounds int
		want      int // the limit
	}{
		{"default", 0, 10},
		{"three", 3, 3},
		{"one", 1, 1},
		{"twenty", 20, 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cb := &allCallbacks{}
				opts := cb.options()
				opts.Loop = &client.LoopOptions{MaxRounds: tc.maxRounds}
				sess, f := dialFake(t, newClient(opts))
				done := async(func() error { _, err := sess.CallTool(context.Background(), "forever", nil); return err })
				requests := 0
				for n := 1; n <= tc.want+1; n++ {
					m := f.expect(mcp.MethodCallTool)
					requests++
					f.reply(m.ID, endless(n))
				}
				err := <-done
				var re *client.RoundsExceededError
				if !errors.As(err, &re) {
					t.Fatalf("error %v (%T), want *RoundsExceededError", err, err)
				}
				if !errors.Is(err, client.ErrTooManyRounds) {
					t.Errorf("%v does not match ErrTooManyRounds", err)
				}
				if re.Rounds != tc.want || re.Method != mcp.MethodCallTool || re.Target != "forever" {
					t.Errorf("RoundsExceededError %+v", re)
				}
				// The last round asked for is handed back, to resume or persist.
				if re.Last == nil || re.Last.Round != tc.want+1 || re.Last.Call.Name != "forever" || len(re.Last.InputRequests) == 0 {
					t.Errorf("RoundsExceededError.Last = %+v", re.Last)
				}
				// The limit is on retries: N retries, then the (N+1)th
				// input_required fails the call.
				if requests != tc.want+1 || cb.n(mcp.MethodListRoots) != tc.want {
					t.Errorf("%d requests and %d fulfilled rounds, want %d and %d", requests, cb.n(mcp.MethodListRoots), tc.want+1, tc.want)
				}
				noMoreRequests(f, sess)
			})
		})
	}
	// A call that completes on its last allowed round succeeds.
	synctest.Test(t, func(t *testing.T) {
		cb := &allCallbacks{}
		opts := cb.options()
		opts.Loop = &client.LoopOptions{MaxRounds: 3}
		sess, f := dialFake(t, newClient(opts))
		done := async(func() error { _, err := sess.CallTool(context.Background(), "x", nil); return err })
		n := serveRounds(f, mcp.MethodCallTool, func(n int) string {
			if n <= 3 {
				return endless(n)
			}
			return `{"resultType":"complete","content":[]}`
		})
		if err := <-done; err != nil || n != 4 {
			t.Errorf("%d requests, %v", n, err)
		}
	})
}

// stateOnly is a server that says "not ready yet" for the first n rounds.
func stateOnly(rounds int) func(int) string {
	return func(n int) string {
		if n <= rounds {
			return inputRequired("", jsonString(fmt.Sprintf("wait-%d", n)))
		}
		return `{"resultType":"complete","content":[]}`
	}
}

// waits serves the rounds and returns the time between each request and
// the next, on the bubble's clock.
func waits(t *testing.T, f *fake, reply func(n int) string) []time.Duration {
	t.Helper()
	var out []time.Duration
	last := time.Now()
	for n := 1; ; n++ {
		m := f.expect(mcp.MethodCallTool)
		now := time.Now()
		if n > 1 {
			out = append(out, now.Sub(last))
			keys, state := continuation(t, m)
			if want := fmt.Sprintf("wait-%d", n-1); strings.Contains(reply(n-1), "wait-") && (state == nil || *state != want) {
				t.Errorf("request %d: requestState %v, want %q", n, state, want)
			}
			if strings.Contains(reply(n-1), `"inputRequests"`) != (keys != nil) {
				t.Errorf("request %d: inputResponses %v after %s", n, keys, reply(n-1))
			}
		}
		last = now
		r := reply(n)
		f.reply(m.ID, r)
		if !strings.Contains(r, `"input_required"`) {
			return out
		}
	}
}

func TestStateOnlyBackoff(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name string
		loop *client.LoopOptions
		want []time.Duration
	}{
		{"default", nil, []time.Duration{50 * ms, 100 * ms, 200 * ms, 250 * ms, 250 * ms, 250 * ms}},
		{"both", &client.LoopOptions{Backoff: 10 * ms, MaxBackoff: 35 * ms}, []time.Duration{10 * ms, 20 * ms, 35 * ms, 35 * ms, 35 * ms, 35 * ms}},
		{"cap below the default start", &client.LoopOptions{MaxBackoff: 20 * ms}, []time.Duration{20 * ms, 20 * ms, 20 * ms, 20 * ms, 20 * ms, 20 * ms}},
		{"start above the default cap", &client.LoopOptions{Backoff: 400 * ms}, []time.Duration{400 * ms, 400 * ms, 400 * ms, 400 * ms, 400 * ms, 400 * ms}},
		{"start above the cap", &client.LoopOptions{Backoff: time.Second, MaxBackoff: 100 * ms}, []time.Duration{100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms}},
		{"no doubling past a second", &client.LoopOptions{Backoff: time.Second, MaxBackoff: time.Hour}, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sess, f := dialFake(t, newClient(&client.Options{Loop: tc.loop}))
				done := async(func() error { _, err := sess.CallTool(context.Background(), "slow", nil); return err })
				got := waits(t, f, stateOnly(6))
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("waits %v, want %v", got, tc.want)
				}
			})
		})
	}
}

// A round with input requests is answered at once and resets the backoff.
func TestBackoffResetsAfterInputRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, f := dialFake(t, newClient((&allCallbacks{}).options()))
		done := async(func() error { _, err := sess.CallTool(context.Background(), "x", nil); return err })
		got := waits(t, f, func(n int) string {
			switch n {
			case 1, 2, 4, 5:
				return inputRequired("", jsonString(fmt.Sprintf("wait-%d", n)))
			case 3:
				return inputRequired(`{"r":`+rootsJSON+`}`, `"asked"`)
			}
			return `{"resultType":"complete","content":[]}`
		})
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		ms := time.Millisecond
		if want := []time.Duration{50 * ms, 100 * ms, 0, 50 * ms, 100 * ms}; !slices.Equal(got, want) {
			t.Errorf("waits %v, want %v", got, want)
		}
	})
}

// A kind of request the client has no callback for ends the call before
// any callback runs, and no retry is sent.
func TestMissingCallback(t *testing.T) {
	all := (&allCallbacks{}).options()
	cases := []struct {
		kind string
		opts *client.Options
	}{
		{mcp.MethodElicit, &client.Options{Sample: all.Sample, ListRoots: all.ListRoots}},
		{mcp.MethodCreateMessage, &client.Options{Elicit: all.Elicit, ListRoots: all.ListRoots}},
		{mcp.MethodListRoots, &client.Options{Elicit: all.Elicit, Sample: all.Sample}},
	}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ran := false
				opts := *tc.opts
				// Declare everything, so only the callback is missing.
				opts.Capabilities = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}, Sampling: &mcp.SamplingCapability{}, Roots: &mcp.RootsCapability{}}
				wrap := func(o *client.Options) {
					if e := o.Elicit; e != nil {
						o.Elicit = func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
							ran = true
							return e(ctx, p)
						}
					}
					if s := o.Sample; s != nil {
						o.Sample = func(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
							ran = true
							return s(ctx, p)
						}
					}
					if r := o.ListRoots; r != nil {
						o.ListRoots = func(ctx context.Context) (*mcp.ListRootsResult, error) { ran = true; return r(ctx) }
					}
				}
				wrap(&opts)
				sess, f := dialFake(t, newClient(&opts))
				done := async(func() error { _, err := sess.CallTool(context.Background(), "x", nil); return err })
				m := f.expect(mcp.MethodCallTool)
				f.reply(m.ID, inputRequired(`{"e":`+elicitJSON+`,"s":`+sampleJSON+`,"r":`+rootsJSON+`}`, `"s"`))
				err := <-done
				var me *client.MissingCallbackError
				if !errors.As(err, &me) {
					t.Fatalf("error %v (%T), want *MissingCallbackError", err, err)
				}
				if me.Method != tc.kind || !strings.Contains(err.Error(), tc.kind) {
					t.Errorf("MissingCallbackError %+v (%v), want method %s", me, err, tc.kind)
				}
				if !errors.Is(err, client.ErrInputRequired) {
					t.Errorf("%v does not match ErrInputRequired", err)
				}
				if ran {
					t.Error("a callback ran although the round could not be answered")
				}
				noMoreRequests(f, sess)
			})
		})
	}
}

var errBoom = errors.New("boom")

// A failing callback ends the call with its error, cancels the other
// callbacks of the round, and no retry is sent.
func TestCallbackError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var inFlight sync.WaitGroup
		inFlight.Add(2)
		seen := make(chan error, 2)
		opts := &client.Options{
			Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
				inFlight.Wait() // fail only once the others are running
				return nil, fmt.Errorf("the form broke: %w", errBoom)
			},
			Sample: func(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
				inFlight.Done()
				<-ctx.Done()
				seen <- ctx.Err()
				return nil, ctx.Err()
			},
			ListRoots: func(ctx context.Context) (*mcp.ListRootsResult, error) {
				inFlight.Done()
				<-ctx.Done()
				seen <- ctx.Err()
				return nil, ctx.Err()
			},
		}
		sess, f := dialFake(t, newClient(opts))
		done := async(func() error { _, err := sess.CallTool(context.Background(), "x", nil); return err })
		m := f.expect(mcp.MethodCallTool)
		f.reply(m.ID, inputRequired(`{"e":`+elicitJSON+`,"s":`+sampleJSON+`,"r":`+rootsJSON+`}`, `"s"`))
		err := <-done
		if !errors.Is(err, errBoom) {
			t.Fatalf("error %v, want it to wrap the callback's error", err)
		}
		var ce *client.CallbackError
		if !errors.As(err, &ce) || ce.Key != "e" || ce.Method != mcp.MethodElicit {
			t.Errorf("CallbackError %+v", ce)
		}
		if errors.Is(err, context.Canceled) {
			t.Errorf("error %v reports a cancellation, not the failure", err)
		}
		for range 2 {
			if err := <-seen; !errors.Is(err, context.Canceled) {
				t.Errorf("a sibling callback's context ended with %v", err)
			}
		}
		noMoreRequests(f, sess)
	})
	// A lone callback (which the client may run on the caller's goroutine)
	// fails the same way.
	for _, cancellable := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			if cancellable {
				ctx = t.Context()
			}
			opts := &client.Options{Sample: func(context.Context, *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
				return nil, errBoom
			}}
			sess, f := dialFake(t, newClient(opts))
			done := async(func() error { _, err := sess.CallTool(ctx, "x", nil); return err })
			m := f.expect(mcp.MethodCallTool)
			f.reply(m.ID, inputRequired(`{"s":`+sampleJSON+`}`, ""))
			err := <-done
			var ce *client.CallbackError
			if !errors.Is(err, errBoom) || !errors.As(err, &ce) || ce.Key != "s" || ce.Method != mcp.MethodCreateMessage {
				t.Errorf("error %v", err)
			}
			noMoreRequests(f, sess)
		})
	}
}

// A callback that returns neither a result nor an error is broken: the call
// fails rather than send null.
func TestCallbackReturnsNothing(t *testing.T) {
	opts := &client.Options{
		Elicit: func(context.Context, mcp.ElicitRequestParams) (*mcp.ElicitResult, error) { return nil, nil },
		Sample: func(context.Context, *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
			return nil, nil
		},
		ListRoots: func(context.Context) (*mcp.ListRootsResult, error) { return nil, nil },
	}
	for _, req := range []string{elicitJSON, sampleJSON, rootsJSON} {
		synctest.Test(t, func(t *testing.T) {
			sess, f := dialFake(t, newClient(opts))
			done := async(func() error { _, err := sess.CallTool(context.Background(), "x", nil); return err })
			m := f.expect(mcp.MethodCallTool)
			f.reply(m.ID, inputRequired(`{"k":`+req+`}`, ""))
			err := <-done
			var ce *client.CallbackError
			if !errors.As(err, &ce) || ce.Key != "k" {
				t.Errorf("%s: error %v, want a *CallbackError", req, err)
			}
			noMoreRequests(f, sess)
		})
	}
}

// OnRound sees every round, in order, before it is fulfilled, and may
// refuse one.
func TestOnRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type seen struct {
			round int
			keys  []string
			state string
			call  client.Call
			needs bool
		}
		var rounds []seen
		errRefused := errors.New("no sampling here")
		cb := &allCallbacks{}
		opts := cb.options()
		opts.Loop = &client.LoopOptions{OnRound: func(ctx context.Context, p *client.Pending) error {
			rounds = append(rounds, seen{p.Round, p.InputRequests.Keys(), p.RequestState, p.Call, p.NeedsInput()})
			for _, r := range p.InputRequests {
				if r.Method() == mcp.MethodCreateMessage {
					return errRefused
				}
			}
			return nil
		}}
		sess, f := dialFake(t, newClient(opts))
		done := async(func() error {
			_, err := sess.CallTool(context.Background(), "audit", map[string]int{"n": 1})
			return err
		})
		n := 0
		for _, r := range []string{
			inputRequired(`{"a":`+elicitJSON+`}`, `"s1"`),
			inputRequired("", `"s2"`),
			inputRequired(`{"b":`+rootsJSON+`}`, `"s3"`),
			inputRequired(`{"c":`+sampleJSON+`,"d":`+rootsJSON+`}`, `"s4"`),
		} {
			m := f.expect(mcp.MethodCallTool)
			n++
			f.reply(m.ID, r)
		}
		err := <-done
		if !errors.Is(err, errRefused) {
			t.Fatalf("error %v, want the refusal", err)
		}
		if n != 4 || cb.n(mcp.MethodCreateMessage) != 0 || cb.n(mcp.MethodListRoots) != 1 {
			t.Errorf("%d requests, callbacks %v: the refused round must not be fulfilled", n, cb.calls)
		}
		want := []seen{
			{1, []string{"a"}, "s1", client.Call{}, true},
			{2, []string{}, "s2", client.Call{}, false},
			{3, []string{"b"}, "s3", client.Call{}, true},
			{4, []string{"c", "d"}, "s4", client.Call{}, true},
		}
		if len(rounds) != len(want) {
			t.Fatalf("OnRound saw %d rounds, want %d", len(rounds), len(want))
		}
		for i, r := range rounds {
			w := want[i]
			if r.round != w.round || !slices.Equal(r.keys, w.keys) || r.state != w.state || r.needs != w.needs {
				t.Errorf("round %d: %+v, want %+v", i+1, r, w)
			}
			if r.call.Method != mcp.MethodCallTool || r.call.Name != "audit" || string(r.call.Arguments) != `{"n":1}` {
				t.Errorf("round %d: call %+v", i+1, r.call)
			}
		}
		noMoreRequests(f, sess)
	})
}

// Cancelling the call's context while a callback runs ends the call at
// once with ctx.Err(), even if the callback does not watch its context.
func TestCancelDuringCallback(t *testing.T) {
	for _, watches := range []bool{true, false} {
		t.Run(fmt.Sprintf("callback watches ctx=%v", watches), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				defer close(release)
				started := make(chan struct{}, 1)
				opts := &client.Options{Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
					started <- struct{}{}
					if watches {
						<-ctx.Done()
						return nil, ctx.Err()
					}
					<-release // a user who never answers
					return &mcp.ElicitResult{Action: mcp.ActionCancel}, nil
				}}
				sess, f := dialFake(t, newClient(opts))
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				start := time.Now()
				done := async(func() error { _, err := sess.CallTool(ctx, "x", nil); return err })
				m := f.expect(mcp.MethodCallTool)
				f.reply(m.ID, inputRequired(`{"e":`+elicitJSON+`}`, `"s"`))
				<-started
				err := <-done
				if err != context.DeadlineExceeded {
					t.Errorf("error %v (%T), want ctx.Err() itself", err, err)
				}
				if d := time.Since(start); d != 2*time.Second {
					t.Errorf("the call ended after %v, want at the 2s deadline", d)
				}
				noMoreRequests(f, sess)
			})
		})
	}
	// An explicit cancel.
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		opts := &client.Options{ListRoots: func(c context.Context) (*mcp.ListRootsResult, error) {
			cancel()
			<-c.Done()
			return nil, c.Err()
		}}
		sess, f := dialFake(t, newClient(opts))
		done := async(func() error { _, err := sess.CallTool(ctx, "x", nil); return err })
		m := f.expect(mcp.MethodCallTool)
		f.reply(m.ID, inputRequired(`{"r":`+rootsJSON+`}`, ""))
		if err := <-done; err != context.Canceled {
			t.Errorf("error %v, want context.Canceled", err)
		}
		noMoreRequests(f, sess)
	})
}

// Cancelling during the wait before a state-only retry ends the call at
// once, and the retry is never sent.
func TestCancelDuringBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, f := dialFake(t, newClient(nil))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		start := time.Now()
		done := async(func() error { _, err := sess.CallTool(ctx, "x", nil); return err })
		m := f.expect(mcp.MethodCallTool)
		f.reply(m.ID, inputRequired("", `"not yet"`))
		if err := <-done; err != context.DeadlineExceeded {
			t.Errorf("error %v, want ctx.Err()", err)
		}
		if d := time.Since(start); d != 30*time.Millisecond {
			t.Errorf("the call ended after %v, want 30ms (inside the 50ms wait)", d)
		}
		noMoreRequests(f, sess)
	})
}

// Only the three carriers may answer input_required; anything else doing so
// is an invalid response, and nothing is fulfilled or retried.
func TestInputRequiredOnOtherMethods(t *testing.T) {
	ir := inputRequired(`{"r":`+rootsJSON+`}`, `"s"`)
	calls := []struct {
		method string
		call   func(context.Context, *client.Session) error
	}{
		{mcp.MethodListTools, func(ctx context.Context, s *client.Session) error { _, err := s.ListTools(ctx, ""); return err }},
		{mcp.MethodListPrompts, func(ctx context.Context, s *client.Session) error { _, err := s.ListPrompts(ctx, ""); return err }},
		{mcp.MethodComplete, func(ctx context.Context, s *client.Session) error {
			_, err := s.Complete(ctx, &mcp.CompleteRequestParams{Ref: &mcp.PromptReference{Name: "p"}, Argument: mcp.CompleteArgument{Name: "a", Value: "x"}})
			return err
		}},
	}
	for _, c := range calls {
		t.Run(c.method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cb := &allCallbacks{}
				sess, f := dialFake(t, newClient(cb.options()))
				done := async(func() error { return c.call(context.Background(), sess) })
				m := f.expect(c.method)
				f.reply(m.ID, ir)
				wantInvalid(t, <-done, c.method)
				if cb.n(mcp.MethodListRoots) != 0 {
					t.Error("a callback ran")
				}
				noMoreRequests(f, sess)
			})
		})
	}
}

// A result without resultType is complete, whatever else it holds: no
// retry.
func TestMissingResultTypeIsComplete(t *testing.T) {
	for _, c := range fakeCarriers() {
		t.Run(c.method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sess, f := dialFake(t, newClient((&allCallbacks{}).options()))
				done := c.start(context.Background(), sess)
				m := f.expect(c.method)
				complete := strings.Replace(c.complete, `"resultType":"complete",`, ``, 1)
				// A stray requestState does not make it interim either.
				complete = strings.Replace(complete, `{`, `{"requestState":"stray",`, 1)
				f.reply(m.ID, complete)
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				noMoreRequests(f, sess)
			})
		})
	}
}

// LoopOptions.RoundTimeout bounds each request the loop sends, not the
// callbacks: a slow callback is fine, a server that does not answer a
// retry ends the call with a *RoundTimeoutError naming the request.
func TestRoundTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := &client.Options{
			ListRoots: func(ctx context.Context) (*mcp.ListRootsResult, error) {
				time.Sleep(time.Minute) // the user takes a while: virtual time
				return listRoots("file:///work")(ctx)
			},
			Loop: &client.LoopOptions{RoundTimeout: 10 * time.Second},
		}
		sess, f := dialFake(t, newClient(opts))
		start := time.Now()
		done := async(func() error { _, err := sess.CallTool(context.Background(), "slow", nil); return err })
		m := f.expect(mcp.MethodCallTool)
		f.reply(m.ID, endless(1))    // round 1 answered at once
		f.expect(mcp.MethodCallTool) // the retry, after the minute-long callback; never answered
		err := <-done
		var te *client.RoundTimeoutError
		if !errors.As(err, &te) || te.Round != 2 || te.Target != "slow" || te.Timeout != 10*time.Second {
			t.Fatalf("error %v (%T), want a *RoundTimeoutError for request 2", err, err)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%v does not match context.DeadlineExceeded", err)
		}
		if got := time.Since(start); got != time.Minute+10*time.Second {
			t.Errorf("the call ended after %v, want the callback's minute plus the round's 10s", got)
		}
	})
}

// "requestState":"" is a state: the client echoes it exactly, also when it
// is all a round carries, and sends none when the server sends none.
func TestEmptyStateOnTheWire(t *testing.T) {
	for _, c := range fakeCarriers() {
		t.Run(c.method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cb := &allCallbacks{}
				sess, f := dialFake(t, newClient(cb.options()))
				done := c.start(context.Background(), sess)

				first := f.expect(c.method)
				f.reply(first.ID, inputRequired(`{"confirm":`+elicitJSON+`}`, `""`))

				r1 := f.expect(c.method)
				wantRetryOf(t, c, first, r1)
				p1 := rawParams(t, r1)
				if got, ok := p1["requestState"]; !ok || string(got) != `""` {
					t.Errorf("retry after an empty state: requestState %s (present %v), want the bytes \"\": %s", got, ok, r1.Raw)
				}
				if _, ok := p1["inputResponses"]; !ok {
					t.Errorf("retry without its answers: %s", r1.Raw)
				}
				// A round that carries only an empty state is a valid
				// input_required result: the client backs off and echoes it.
				f.reply(r1.ID, inputRequired("", `""`))

				r2 := f.expect(c.method)
				wantRetryOf(t, c, first, r2)
				p2 := rawParams(t, r2)
				if got, ok := p2["requestState"]; !ok || string(got) != `""` {
					t.Errorf("retry of a state-only round: requestState %s (present %v): %s", got, ok, r2.Raw)
				}
				if _, ok := p2["inputResponses"]; ok {
					t.Errorf("retry of a state-only round carries answers: %s", r2.Raw)
				}
				f.reply(r2.ID, inputRequired(`{"again":`+elicitJSON+`}`, ""))

				r3 := f.expect(c.method)
				if _, ok := rawParams(t, r3)["requestState"]; ok {
					t.Errorf("retry carries a requestState the server never sent: %s", r3.Raw)
				}
				f.reply(r3.ID, c.complete)
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}
