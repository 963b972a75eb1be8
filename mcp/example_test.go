package mcp_test

import (
	"encoding/json"
	"fmt"

	"github.com/parley-mcp/parley/mcp"
)

// A low-level tools/call handler that asks the user for a region before it
// can finish.
func provision(p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	var args struct {
		Name string `json:"name"`
	}
	if err := p.DecodeArguments(&args); err != nil {
		return nil, err
	}
	answer, err := p.InputResponses.Elicit("region")
	if err != nil || !answer.Accepted() {
		return &mcp.InputRequiredResult{
			InputRequests: mcp.InputRequests{
				"region": mcp.NewElicitFormRequest("Which region should "+args.Name+" live in?", mcp.ElicitRequestedSchema{
					Properties: map[string]mcp.PrimitiveSchemaDefinition{"region": &mcp.StringSchema{}},
					Required:   []string{"region"},
				}),
			},
			RequestState: "provision-v1",
		}, nil
	}
	return mcp.TextResult(fmt.Sprintf("Provisioned '%s' in %s.", args.Name, answer.Content["region"])), nil
}

func ExampleInputRequiredResult() {
	// First round: no answers yet.
	p := &mcp.CallToolRequestParams{Name: "provision", Arguments: json.RawMessage(`{"name":"orders"}`)}
	out, _ := provision(p)
	b, _ := json.Marshal(out)
	fmt.Println(string(b))

	// Second round: the client answers under the same key and echoes the state.
	_ = p.InputResponses.Set("region", &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu-west-1"}})
	p.RequestState = out.(*mcp.InputRequiredResult).RequestState
	out, _ = provision(p)
	b, _ = json.Marshal(out)
	fmt.Println(string(b))
	// Output:
	// {"resultType":"input_required","inputRequests":{"region":{"method":"elicitation/create","params":{"message":"Which region should orders live in?","requestedSchema":{"type":"object","properties":{"region":{"type":"string"}},"required":["region"]}}}},"requestState":"provision-v1"}
	// {"content":[{"type":"text","text":"Provisioned 'orders' in eu-west-1."}]}
}

func ExampleDecodeCallToolOutcome() {
	for _, raw := range []string{
		`{"resultType":"complete","content":[{"type":"text","text":"72°F"}]}`,
		`{"content":[{"type":"text","text":"from a legacy server"}]}`,
		`{"resultType":"input_required","requestState":"busy, retry"}`,
		`{"resultType":"task","taskId":"t1","status":"working","createdAt":"2026-12-04T10:00:00Z","lastUpdatedAt":"2026-12-04T10:00:00Z","ttlMs":null}`,
		`{"resultType":"magic"}`,
	} {
		out, err := mcp.DecodeCallToolOutcome(json.RawMessage(raw))
		switch r := out.(type) {
		case *mcp.CallToolResult:
			fmt.Println("complete:", r.Content[0].(*mcp.TextContent).Text)
		case *mcp.InputRequiredResult:
			fmt.Printf("input required: %d requests, state %q\n", len(r.InputRequests), r.RequestState)
		case *mcp.CreateTaskResult:
			fmt.Printf("task %s: %s\n", r.TaskID, r.Status)
		default:
			fmt.Println("error:", err)
		}
	}
	// Output:
	// complete: 72°F
	// complete: from a legacy server
	// input required: 0 requests, state "busy, retry"
	// task t1: working
	// error: mcp: unknown resultType "magic"
}

func ExampleAsUnsupportedProtocolVersion() {
	err := fmt.Errorf("tools/list: %w", mcp.NewUnsupportedProtocolVersionError("2099-01-01",
		[]mcp.ProtocolVersion{mcp.Version20260728, mcp.Version20251125}))
	if d, ok := mcp.AsUnsupportedProtocolVersion(err); ok {
		fmt.Println("retry with", d.Supported[0])
	}
	// Output:
	// retry with 2026-07-28
}

func ExampleContentBlock() {
	res := &mcp.CallToolResult{Content: []mcp.ContentBlock{
		&mcp.TextContent{Text: "Here is the file:"},
		&mcp.ResourceLink{URI: "file:///project/README.md", Name: "README.md"},
	}}
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	// Output:
	// {"content":[{"type":"text","text":"Here is the file:"},{"type":"resource_link","uri":"file:///project/README.md","name":"README.md"}]}
}
