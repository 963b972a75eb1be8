package requeststate

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// The benchmarks and the allocation budget run the boundary's own path,
// Wrap around a handler that does nothing, so they count what the boundary
// adds to a round: building, sealing and encoding the envelope on the way
// out; decoding, opening and checking it, and handing the plaintext over,
// on the way in.

// typicalState is 200 bytes of handler state: a flow's step, a few ids and
// the answers so far.
var typicalState = `{"step":2,"fare":"Y-FLEX","seats":["12A","12B"],"quote":"q-7f3a9c1e","answers":{"from":"BER","to":"LIS"},"pad":"` + strings.Repeat("x", 200-114) + `"}`

// typicalRound returns a boundary, a tools/call with three arguments, and
// an input_required result carrying typicalState and one question.
func typicalRound(tb testing.TB) (*Boundary, *server.Request, *mcp.InputRequiredResult) {
	tb.Helper()
	b, err := NewBoundary("bench-server", &Policy{Keys: [][]byte{[]byte("bench-key: 0123456789abcdefghijklmnopqrstuv")}})
	if err != nil {
		tb.Fatal(err)
	}
	if len(typicalState) != 200 {
		tb.Fatalf("state is %d bytes", len(typicalState))
	}
	req := &server.Request{Method: mcp.MethodCallTool, Params: &mcp.CallToolRequestParams{
		Name:      "book_flight",
		Arguments: json.RawMessage(`{"from":"BER","to":"LIS","passengers":2}`),
	}}
	ir := &mcp.InputRequiredResult{
		InputRequests: mcp.InputRequests{"confirm": mcp.NewElicitFormRequest("Book BER to LIS for 2?", mcp.ElicitRequestedSchema{
			Properties: map[string]mcp.PrimitiveSchemaDefinition{"ok": &mcp.BooleanSchema{}},
			Required:   []string{"ok"},
		})},
		RequestState: typicalState,
	}
	return b, req, ir
}

// roundBench is one benchmark setting: what the handler returns, and
// whether the request echoes a token.
type roundBench struct {
	h       server.Handler
	req     *server.Request
	p       *mcp.CallToolRequestParams
	token   string
	inbound bool
}

func newRoundBench(tb testing.TB, questions, inbound, outbound bool) *roundBench {
	b, req, ir := typicalRound(tb)
	if !questions {
		ir.InputRequests = nil
	}
	done := mcp.TextResult("done")
	rb := &roundBench{req: req, p: req.Params.(*mcp.CallToolRequestParams), inbound: inbound}
	rb.h = b.wrap(func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
		if outbound {
			return ir, nil
		}
		return done, nil
	})
	var id identity
	var err error
	if rb.token, err = b.seal(context.Background(), req, ir, &id); err != nil {
		tb.Fatal(err)
	}
	if questions {
		rb.p.InputResponses = mcp.InputResponses{"confirm": json.RawMessage(`{"action":"accept","content":{"ok":true}}`)}
	}
	return rb
}

func (rb *roundBench) run(tb testing.TB) {
	rb.p.RequestState = ""
	if rb.inbound {
		rb.p.RequestState = rb.token
	}
	if _, err := rb.h(context.Background(), rb.req); err != nil {
		tb.Fatal(err)
	}
}

func benchRound(bm *testing.B, inbound, outbound bool) {
	for _, v := range []struct {
		name      string
		questions bool
	}{{"state", false}, {"state+question", true}} {
		bm.Run(v.name, func(bm *testing.B) {
			rb := newRoundBench(bm, v.questions, inbound, outbound)
			bm.ReportAllocs()
			for bm.Loop() {
				rb.run(bm)
			}
		})
	}
}

// BenchmarkSeal: a first round; the handler's state is sealed.
func BenchmarkSeal(bm *testing.B) { benchRound(bm, false, true) }

// BenchmarkUnseal: a last round; the echoed state is verified and the
// handler completes.
func BenchmarkUnseal(bm *testing.B) { benchRound(bm, true, false) }

// BenchmarkSealUnseal: a middle round; the echo is verified and the next
// state sealed.
func BenchmarkSealUnseal(bm *testing.B) { benchRound(bm, true, true) }

// TestSealUnsealAllocBudget holds the boundary to its allocation budget: a
// middle round with 200 bytes of state (verify the echo, seal the next
// state) costs at most 10 allocations, also when the round pins a form
// question (mcp renders a form elicitation without encoding/json).
func TestSealUnsealAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	for _, c := range []struct {
		name      string
		questions bool
		budget    float64
	}{{"state", false, 10}, {"state+question", true, 10}} {
		rb := newRoundBench(t, c.questions, true, true)
		if got := testing.AllocsPerRun(200, func() { rb.run(t) }); got > c.budget {
			t.Errorf("%s: %v allocations per seal+unseal, budget %v", c.name, got, c.budget)
		} else {
			t.Logf("%s: %v allocations per seal+unseal (budget %v)", c.name, got, c.budget)
		}
	}
}
