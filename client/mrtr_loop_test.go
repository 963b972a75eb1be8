package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
)

// continuation returns what a request carries for the server's previous
// round: the keys of its inputResponses (sorted) and its requestState,
// decoded (nil when absent).
func continuation(t testing.TB, m wireMsg) (keys []string, state *string) {
	t.Helper()
	var p struct {
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		RequestState   *string                    `json:"requestState"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("params of %s: %v", m.Raw, err)
	}
	for k := range p.InputResponses {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, p.RequestState
}

// wantRounds checks the requests of method: how many, that every id is new,
// and what each carries for the round before it (nil keys and "" state for
// the first request, which must carry neither).
func wantRounds(t *testing.T, w *tap, method string, want []struct {
	keys  []string
	state string
}) {
	t.Helper()
	reqs := w.Requests(method)
	if len(reqs) != len(want) {
		t.Fatalf("%d %s requests, want %d", len(reqs), method, len(want))
	}
	ids := map[string]bool{}
	for i, m := range reqs {
		if ids[string(m.ID)] {
			t.Errorf("%s request %d reuses id %s", method, i+1, m.ID)
		}
		ids[string(m.ID)] = true
		keys, state := continuation(t, m)
		if !slices.Equal(keys, want[i].keys) {
			t.Errorf("%s request %d: inputResponses %v, want %v", method, i+1, keys, want[i].keys)
		}
		switch {
		case want[i].state == "" && state != nil:
			t.Errorf("%s request %d carries requestState %q, want none", method, i+1, *state)
		case want[i].state != "" && (state == nil || *state != want[i].state):
			t.Errorf("%s request %d: requestState %v, want %q", method, i+1, state, want[i].state)
		}
	}
}

type round = struct {
	keys  []string
	state string
}

func TestLoopOneRound(t *testing.T) {
	for _, c := range mrtrCarriers {
		t.Run(c.method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var shown []string
				sess, w := connect(t, newClient(&client.Options{Elicit: answerRegions(&shown, "eu-west-1")}), mrtrServer())
				got, err := c.run(context.Background(), sess, "one")
				if err != nil {
					t.Fatal(err)
				}
				if got != "orders in eu-west-1" {
					t.Errorf("result %q", got)
				}
				if want := []string{"Which region should orders live in?"}; !slices.Equal(shown, want) {
					t.Errorf("the callback was shown %q, want %q", shown, want)
				}
				wantRounds(t, w, c.method, []round{{nil, ""}, {[]string{"region"}, "one-v1"}})
			})
		})
	}
}

func TestLoopTwoRounds(t *testing.T) {
	for _, c := range mrtrCarriers {
		t.Run(c.method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var shown []string
				sess, w := connect(t, newClient(&client.Options{Elicit: answerRegions(&shown, "eu-west-1", "us-east-2")}), mrtrServer())
				got, err := c.run(context.Background(), sess, "two")
				if err != nil {
					t.Fatal(err)
				}
				if got != "first=eu-west-1 second=us-east-2" {
					t.Errorf("result %q", got)
				}
				if want := []string{"Which region first?", "And the backup region?"}; !slices.Equal(shown, want) {
					t.Errorf("the callback was shown %q, want one question a round: %q", shown, want)
				}
				// The state changes between rounds, and each retry carries
				// the latest state and the latest answers only.
				wantRounds(t, w, c.method, []round{
					{nil, ""},
					{[]string{"first"}, "two:1"},
					{[]string{"second"}, twoState + "eu-west-1"},
				})
			})
		})
	}
}

// One round asks for an elicitation, a sampling and the roots at once. The
// three callbacks each wait until all three have started, so the call only
// completes if the client runs them concurrently.
func TestLoopBatchedRoundIsConcurrent(t *testing.T) {
	for _, c := range mrtrCarriers {
		t.Run(c.method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newGate(3)
				sess, w := connect(t, newClient(gatedOptions(g)), mrtrServer())
				got, err := c.run(context.Background(), sess, "batch")
				if err != nil {
					t.Fatal(err)
				}
				if got != "who=Ada llm=eu-west-1 roots=file:///a,file:///b" {
					t.Errorf("result %q", got)
				}
				wantRounds(t, w, c.method, []round{{nil, ""}, {[]string{"llm", "roots", "who"}, "batch-1"}})
			})
		})
	}
}

// A server that sends no requestState gets none back.
func TestLoopWithoutState(t *testing.T) {
	for _, c := range mrtrCarriers {
		t.Run(c.method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sess, w := connect(t, newClient(&client.Options{Elicit: answerRegions(nil, "ap-south-1")}), mrtrServer())
				got, err := c.run(context.Background(), sess, "stateless")
				if err != nil || got != "orders in ap-south-1" {
					t.Fatalf("result %q, %v", got, err)
				}
				wantRounds(t, w, c.method, []round{{nil, ""}, {[]string{"region"}, ""}})
			})
		})
	}
}

// Decline and cancel are answers: they are sent, and the server decides.
func TestLoopDeclineIsAnAnswer(t *testing.T) {
	for _, action := range []mcp.ElicitAction{mcp.ActionDecline, mcp.ActionCancel} {
		t.Run(string(action), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				elicit := func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: action}, nil
				}
				sess, w := connect(t, newClient(&client.Options{Elicit: elicit}), mrtrServer())
				got, err := mrtrCarriers[0].run(context.Background(), sess, "one")
				if err != nil {
					t.Fatal(err)
				}
				if want := map[mcp.ElicitAction]string{mcp.ActionDecline: "declined", mcp.ActionCancel: "cancelled"}[action]; got != want {
					t.Errorf("result %q, want %q", got, want)
				}
				var responses map[string]mcp.ElicitResult
				w.Requests(mcp.MethodCallTool)[1].param(t, "inputResponses", &responses)
				if r := responses["region"]; r.Action != action || r.Content != nil {
					t.Errorf("sent %+v", r)
				}
			})
		})
	}
}

// The capabilities a client declares follow from its callbacks, and every
// request carries them: the discover, the first round, every retry.
func TestLoopCapabilitiesFromCallbacks(t *testing.T) {
	cases := []struct {
		name string
		opts *client.Options
		flow string
		want string
	}{
		{"none", &client.Options{}, "", `{}`},
		{"elicit", &client.Options{Elicit: answerRegions(nil, "x")}, "one", `{"elicitation":{}}`},
		{"sample", &client.Options{Sample: sampleText("x")}, "sample", `{"sampling":{}}`},
		{"roots", &client.Options{ListRoots: listRoots()}, "", `{"roots":{}}`},
		{"all", &client.Options{Elicit: answerRegions(nil, "x"), Sample: sampleText("x"), ListRoots: listRoots("file:///r")}, "batch", `{"elicitation":{},"sampling":{},"roots":{}}`},
		{"explicit", &client.Options{Elicit: answerRegions(nil, "x"), Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}}}}, "one", `{"elicitation":{"form":{}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sess, w := connect(t, newClient(tc.opts), mrtrServer())
				if tc.flow != "" {
					if _, err := mrtrCarriers[0].run(context.Background(), sess, tc.flow); err != nil {
						t.Fatal(err)
					}
					if n := len(w.Requests(mcp.MethodCallTool)); n != 2 {
						t.Errorf("%d tools/call requests, want 2", n)
					}
				}
				reqs := w.Requests("")
				if len(reqs) == 0 {
					t.Fatal("no requests")
				}
				for _, m := range reqs {
					if got := m.meta(t)[mcp.MetaKeyClientCapabilities]; got == nil || !jsonEqual(t, got, tc.want) {
						t.Errorf("%s: clientCapabilities %s, want %s", m.Method, got, tc.want)
					}
				}
			})
		})
	}
}

// A server that needs a capability the client did not declare answers
// -32021; the caller gets it as an error with the data readable, and no
// callback runs.
func TestLoopMissingCapability(t *testing.T) {
	for _, c := range mrtrCarriers {
		t.Run(c.method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var shown []string
				sess, w := connect(t, newClient(&client.Options{Elicit: answerRegions(&shown, "x")}), mrtrServer())
				_, err := c.run(context.Background(), sess, "sample")
				data, ok := mcp.AsMissingRequiredClientCapability(err)
				if !ok {
					t.Fatalf("error %v, want -32021", err)
				}
				if data.RequiredCapabilities.Sampling == nil || data.RequiredCapabilities.Elicitation != nil {
					t.Errorf("requiredCapabilities %+v, want sampling only", data.RequiredCapabilities)
				}
				if errors.Is(err, client.ErrInputRequired) || errors.Is(err, client.ErrTooManyRounds) {
					t.Errorf("error %v matches a loop sentinel", err)
				}
				if len(shown) != 0 {
					t.Errorf("a callback ran: %q", shown)
				}
				if n := len(w.Requests(c.method)); n != 1 {
					t.Errorf("%d requests, want 1", n)
				}
			})
		})
	}
}
