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
)

// serveEnv makes the test binary the stdio server, as -serve-stdio makes
// the command.
const serveEnv = "PROVISION_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) != "" {
		if err := serveOnStdio(context.Background()); err != nil {
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

// TestProvision runs the Provisioner over every transport, in both
// protocol generations: the same question, the same callback, the same
// result.
func TestProvision(t *testing.T) {
	for _, mode := range []string{"memory", "stdio", "http"} {
		for _, version := range []mcp.ProtocolVersion{"", mcp.Version20251125} {
			t.Run(mode+"/"+string(version), func(t *testing.T) {
				var out bytes.Buffer
				if err := run(context.Background(), &out, mode, version, testBinaryAsServer); err != nil {
					t.Fatalf("run: %v\n%s", err, &out)
				}
				lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
				if last := lines[len(lines)-1]; last != "Provisioned 'orders' in eu-west-1." {
					t.Errorf("last line %q\n%s", last, &out)
				}
				want, connected := "round 1: the server asks \"Which region should orders live in?\"\n", "protocol "+string(mcp.LatestVersion)
				if version != "" {
					want, connected = "over the back-channel, the server asks \"Which region should orders live in?\"\n", "protocol "+string(version)
				}
				if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), connected) {
					t.Errorf("want %q and %q in\n%s", want, connected, &out)
				}
				if strings.Contains(out.String(), "round 2") {
					t.Errorf("more than one round:\n%s", &out)
				}
			})
		}
	}
}

func TestUnknownTransport(t *testing.T) {
	err := run(context.Background(), new(bytes.Buffer), "carrier-pigeon", "", testBinaryAsServer)
	var usage usageError
	if !errors.As(err, &usage) {
		t.Errorf("run: %v, want a usage error", err)
	}
}

// The tool itself, driven by hand: it asks, answers, ends with a tool error
// on a decline or cancel, and refuses an answer that does not fit the form.
func TestProvisioner(t *testing.T) {
	ctx := context.Background()
	s, err := newProvisioner()
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(mcp.Implementation{Name: "t", Version: "1"}, &client.Options{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}},
	})
	sess, err := c.Connect(ctx, s.InMemoryTransport())
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
	for _, bad := range []map[string]any{{"region": 42.0}, {"zone": "eu-west-1"}, nil} {
		res, next := answer(&mcp.ElicitResult{Action: mcp.ActionAccept, Content: bad})
		if next != nil || !res.(*mcp.CallToolResult).IsError {
			t.Errorf("accepted content %v: %+v, %+v; want a tool error", bad, res, next)
		}
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
