// Command resume drives a multi-round-trip call by hand and finishes it in
// another process: the case of a distributed client, where the process
// that called is not the one that shows the question.
//
// Process 1 begins the provision call (the tool of ./examples/provision)
// with Session.Begin. The server answers with an InputRequiredResult, which
// the session hands back as a client.Pending: the call, what the server
// asks, its requestState. Process 1 cannot ask anyone, so it writes the
// Pending to a file as JSON and starts process 2 (this program again, with
// -resume). Process 2 is a fresh client with a fresh connection to a fresh
// server: it reads the file, answers the question with its own callback
// (Session.Fulfil), sends the next round (Session.Continue) and prints the
// result. The server keeps nothing between rounds, so any server process
// can take round 2. Process 1 waits for process 2 and exits with its
// status.
//
// The two processes run a server each: two instances of one service. Each
// seals
// its requestState and verifies the other's, because both hold the keys in
// PROVISION_STATE_KEYS (base64, the sealing key first). Process 1 makes a
// random key when the variable is empty; process 2 inherits it. A server
// without the keys would refuse the state with "Invalid or expired
// requestState", and the flow would have to start again.
//
//	go run ./examples/resume
//
// The last line printed is the tool's result.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// keysEnv names the variable that holds the servers' shared key ring.
const keysEnv = "PROVISION_STATE_KEYS"

func main() {
	resumeFrom := flag.String("resume", "", "continue the call saved in this file (what the first process runs)")
	flag.Parse()
	ctx := context.Background()
	if err := ensureKeys(); err != nil {
		fmt.Fprintln(os.Stderr, "resume:", err)
		os.Exit(1)
	}
	if *resumeFrom != "" {
		if err := resume(ctx, os.Stdout, *resumeFrom); err != nil {
			fmt.Fprintln(os.Stderr, "resume:", err)
			os.Exit(1)
		}
		return
	}
	os.Exit(begin(ctx, os.Stdout, os.Stderr, selfResuming))
}

// ensureKeys makes a key ring for this run when the environment has none;
// the processes started from here inherit it. A real deployment provisions
// the keys (at least 32 random bytes each) from its secret store.
func ensureKeys() error {
	if os.Getenv(keysEnv) != "" {
		return nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	return os.Setenv(keysEnv, base64.StdEncoding.EncodeToString(key))
}

// selfResuming is the command of process 2: this program with -resume.
func selfResuming(path string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return exec.Command(exe, "-resume", path), nil
}

// begin is process 1: it begins the call, saves the Pending, runs process
// 2 made by next and returns its exit status.
func begin(ctx context.Context, stdout, stderr io.Writer, next func(path string) (*exec.Cmd, error)) int {
	fail := func(err error) int {
		fmt.Fprintln(stderr, "resume:", err)
		return 1
	}
	logf := prefixed(stdout)

	// This process can show no form, but it declares elicitation: the
	// question will be answered, only not here.
	c := client.New(mcp.Implementation{Name: "resume-caller", Version: "1.0.0"}, &client.Options{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}},
	})
	sess, stop, err := connect(ctx, c)
	if err != nil {
		return fail(err)
	}
	call, err := client.ToolCall("provision", map[string]string{"name": "orders"})
	if err != nil {
		return fail(err)
	}
	res, p, err := sess.Begin(ctx, call)
	sess.Close()
	stop()
	if err != nil {
		return fail(err)
	}
	if p == nil { // the server needed nothing
		fmt.Fprintln(stdout, resultText(res))
		return 0
	}
	logRound(logf, p)

	data, err := json.Marshal(p)
	if err != nil {
		return fail(err)
	}
	f, err := os.CreateTemp("", "parley-pending-*.json")
	if err != nil {
		return fail(err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	logf("saved the pending call (%d bytes of JSON) to %s; handing over to a new process", len(data), f.Name())

	cmd, err := next(f.Name())
	if err != nil {
		return fail(err)
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		return fail(err)
	}
	return 0
}

// maxRounds bounds the manual loop, as Options.Loop.MaxRounds bounds the
// automatic one.
const maxRounds = 10

// resume is process 2: a fresh client, connection and server, and the
// Pending from the file.
func resume(ctx context.Context, w io.Writer, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var p *client.Pending
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	logf := prefixed(w)
	logf("resumed %s %s from %s at round %d", p.Call.Method, p.Call.Name, path, p.Round)

	c := client.New(mcp.Implementation{Name: "resume-worker", Version: "1.0.0"}, &client.Options{
		// This process has the user: the callback stands in for the form.
		Elicit: func(ctx context.Context, req mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			form, ok := req.(*mcp.ElicitRequestFormParams)
			if !ok {
				return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
			}
			if _, asks := form.RequestedSchema.Properties["region"]; !asks {
				return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
			}
			logf("the user picks %q", "eu-west-1")
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu-west-1"}}, nil
		},
	})
	sess, stop, err := connect(ctx, c)
	if err != nil {
		return err
	}
	defer stop()
	defer sess.Close()

	// The manual loop: answer, continue, until the result comes.
	for {
		var in mcp.InputResponses
		if p.NeedsInput() {
			if in, err = sess.Fulfil(ctx, p); err != nil {
				return err
			}
		} else {
			time.Sleep(50 * time.Millisecond) // the server is not ready yet
		}
		res, next, err := sess.Continue(ctx, p, in)
		if err != nil {
			return err
		}
		if next == nil {
			r, ok := res.(*mcp.CallToolResult)
			if !ok {
				return fmt.Errorf("result %T", res)
			}
			if r.IsError {
				return fmt.Errorf("the tool failed: %s", resultText(r))
			}
			fmt.Fprintln(w, resultText(r))
			return sess.Close()
		}
		if next.Round > maxRounds {
			return fmt.Errorf("the server still asks after %d rounds", maxRounds)
		}
		p = next
		logRound(logf, p)
	}
}

// connect serves a fresh provisioner over an in-memory pipe and connects c
// to it.
func connect(ctx context.Context, c *client.Client) (*client.Session, func(), error) {
	clientEnd, serverEnd := transport.NewMemoryPipe()
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	s, err := newProvisioner()
	if err != nil {
		cancel()
		return nil, nil, err
	}
	go func() {
		defer close(done)
		s.ServeConn(sctx, serverEnd)
	}()
	stop := func() { cancel(); <-done }
	sess, err := c.Connect(ctx, transport.NewMemoryTransport(clientEnd))
	if err != nil {
		stop()
		return nil, nil, err
	}
	return sess, stop, nil
}

// prefixed returns a printf to w that says which process is talking.
func prefixed(w io.Writer) func(format string, args ...any) {
	pid := os.Getpid()
	return func(format string, args ...any) {
		fmt.Fprintf(w, "[pid %d] %s\n", pid, fmt.Sprintf(format, args...))
	}
}

func logRound(logf func(string, ...any), p *client.Pending) {
	for _, key := range p.InputRequests.Keys() {
		what := "for " + p.InputRequests[key].Method()
		if e, ok := p.InputRequests[key].(*mcp.ElicitRequest); ok {
			if f, ok := e.Params.(*mcp.ElicitRequestFormParams); ok {
				what = fmt.Sprintf("%q", f.Message)
			}
		}
		logf("round %d: the server asks %s (key %q, with a sealed requestState of %d bytes)", p.Round, what, key, len(p.RequestState))
	}
	if !p.NeedsInput() {
		logf("round %d: the server is not ready yet", p.Round)
	}
}

func resultText(r mcp.AnyResult) string {
	res, ok := r.(*mcp.CallToolResult)
	if !ok {
		return fmt.Sprintf("<%T>", r)
	}
	var parts []string
	for _, b := range res.Content {
		if t, ok := b.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// The provisioner, as in ./examples/provision-lowlevel: a low-level server whose
// provision tool asks for the region by form elicitation on the first call
// and answers on the retry.

const provisionState = "provision-v1"

func newProvisioner() (*server.Server, error) {
	s := server.New(mcp.Implementation{Name: "provisioner", Version: "1.0.0"}, &server.Options{
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	// Every instance holds the same keys, so any of them can take any round.
	keys, err := requeststate.ParseKeys(os.Getenv(keysEnv))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keysEnv, err)
	}
	if err := requeststate.Protect(s, &requeststate.Policy{Keys: keys}); err != nil {
		return nil, err
	}
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return &mcp.ListToolsResult{Tools: []mcp.Tool{{
			Name:        "provision",
			Description: "Create a database; asks which region it should live in.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		}}}, nil
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.Name != "provision" {
			return nil, wire.InvalidParams("Unknown tool: %s", p.Name)
		}
		var args struct {
			Name string `json:"name"`
		}
		if err := p.DecodeArguments(&args); err != nil || args.Name == "" {
			return nil, wire.InvalidParams("Invalid params: provision needs a name")
		}
		ask := &mcp.InputRequiredResult{
			InputRequests: mcp.InputRequests{
				"region": mcp.NewElicitFormRequest("Which region should "+args.Name+" live in?", mcp.ElicitRequestedSchema{
					Properties: map[string]mcp.PrimitiveSchemaDefinition{"region": &mcp.StringSchema{Title: "Region"}},
					Required:   []string{"region"},
				}),
			},
			RequestState: provisionState,
		}
		if !p.InputResponses.Has("region") {
			return ask, nil
		}
		if p.RequestState != provisionState {
			return nil, wire.InvalidParams("Invalid params: unknown requestState")
		}
		answer, err := p.InputResponses.Elicit("region")
		if err != nil {
			return nil, wire.InvalidParams("Invalid params: %v", err)
		}
		if !answer.Accepted() {
			return mcp.ErrorResult(fmt.Sprintf("Provisioning '%s' stopped: no region was chosen (%s).", args.Name, answer.Action)), nil
		}
		region, _ := answer.Content["region"].(string)
		if region == "" {
			return ask, nil
		}
		return mcp.TextResult(fmt.Sprintf("Provisioned '%s' in %s.", args.Name, region)), nil
	})
	return s, nil
}
