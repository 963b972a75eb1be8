package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/stdio"
)

// serveEnv makes the test binary the stdio server, as -serve-stdio makes
// the command.
const serveEnv = "PROVISION_LOWLEVEL_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) != "" {
		if err := newProvisioner().ServeConn(context.Background(), stdio.ServerConn(nil)); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testBinaryAsServer() (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), serveEnv+"=1", "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	return cmd, nil
}

func TestProvision(t *testing.T) {
	for _, mode := range []string{"memory", "stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(context.Background(), &out, mode, testBinaryAsServer); err != nil {
				t.Fatalf("run: %v\n%s", err, &out)
			}
			lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
			if last := lines[len(lines)-1]; last != "Provisioned 'orders' in eu-west-1." {
				t.Errorf("last line %q\n%s", last, &out)
			}
			if !strings.Contains(out.String(), "round 1: the server asks \"Which region should orders live in?\"\n") {
				t.Errorf("no round log in\n%s", &out)
			}
			if strings.Contains(out.String(), "round 2") {
				t.Errorf("more than one round:\n%s", &out)
			}
		})
	}
}

func TestUnknownTransport(t *testing.T) {
	err := run(context.Background(), new(bytes.Buffer), "carrier-pigeon", testBinaryAsServer)
	var usage usageError
	if !errors.As(err, &usage) {
		t.Errorf("run: %v, want a usage error", err)
	}
}

// The tool itself, driven by hand: it asks, answers, refuses a decline, and
// asks again after an empty answer.
func TestProvisioner(t *testing.T) {
	ctx := context.Background()
	clientEnd, serverEnd := transport.NewMemoryPipe()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go newProvisioner().ServeConn(sctx, serverEnd)
	c := client.New(mcp.Implementation{Name: "t", Version: "1"}, &client.Options{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}},
	})
	sess, err := c.Connect(ctx, transport.NewMemoryTransport(clientEnd))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()

	call, err := client.ToolCall("provision", map[string]string{"name": "orders"})
	if err != nil {
		t.Fatal(err)
	}
	_, p, err := sess.Begin(ctx, call)
	if err != nil || p == nil {
		t.Fatalf("Begin: %+v, %v", p, err)
	}
	if p.RequestState == "" || len(p.InputRequests) != 1 || p.InputRequests["region"] == nil {
		t.Fatalf("round 1: %+v", p)
	}
	// The client holds a sealed token, not the handler's plaintext.
	if strings.Contains(p.RequestState, "provision") {
		t.Errorf("requestState %q is not sealed", p.RequestState)
	}
	answer := func(r *mcp.ElicitResult) (mcp.AnyResult, *client.Pending) {
		t.Helper()
		var in mcp.InputResponses
		if err := in.Set("region", r); err != nil {
			t.Fatal(err)
		}
		res, next, err := sess.Continue(ctx, p, in)
		if err != nil {
			t.Fatal(err)
		}
		return res, next
	}
	if res, _ := answer(&mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "us-east-1"}}); resultText(res.(*mcp.CallToolResult)) != "Provisioned 'orders' in us-east-1." {
		t.Errorf("accept: %+v", res)
	}
	if res, _ := answer(&mcp.ElicitResult{Action: mcp.ActionDecline}); !res.(*mcp.CallToolResult).IsError {
		t.Errorf("decline: %+v", res)
	}
	if res, _ := answer(&mcp.ElicitResult{Action: mcp.ActionCancel}); !res.(*mcp.CallToolResult).IsError {
		t.Errorf("cancel: %+v", res)
	}
	if _, next := answer(&mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": ""}}); next == nil {
		t.Error("an empty region was accepted")
	}
	// An accepted form whose region is not a string is refused with
	// invalid params (DecodeContent fails), not a panic.
	var in mcp.InputResponses
	in.Set("region", &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": 42.0}})
	if _, _, err := sess.Continue(ctx, p, in); err == nil || !strings.Contains(err.Error(), "the region form") {
		t.Errorf("a numeric region: %v, want invalid params", err)
	}
	// An answer that is not an elicitation result at all is refused by
	// the typed accessor.
	in = mcp.InputResponses{"region": []byte(`{"action":"maybe"}`)}
	if _, _, err := sess.Continue(ctx, p, in); err == nil {
		t.Error("an answer with a bad action was accepted")
	}
	// A forged state, even the handler's own plaintext, is refused with the
	// boundary's fixed error.
	for _, state := range []string{"provision-v1", p.RequestState + "x"} {
		forged := *p
		forged.RequestState = state
		var in mcp.InputResponses
		in.Set("region", &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "x"}})
		if _, _, err := sess.Continue(ctx, &forged, in); !mcp.IsInvalidRequestState(err) {
			t.Errorf("forged requestState %q: %v, want the fixed rejection", state, err)
		}
	}
}
