package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

// TestInspectorCLIAgainstParley: the MCP Inspector 2.x in its headless
// mode (`--cli`: one method per run, the answer as JSON on stdout) against
// the fixture (fixture_test.go), over Streamable HTTP and stdio (the test
// binary as its server), in each of its protocol eras: legacy (initialize,
// 2025-11-25), modern (2026-07-28 pinned) and auto (server/discover
// first). The Inspector declares roots (from its config file) but neither
// elicitation nor sampling, so a tool that asks the person fails naming
// the capability, in every era.
//
// Each run starts Node anew (seconds on a loaded machine), so the runs go
// four at a time, and the checks are subtests afterwards.
func TestInspectorCLIAgainstParley(t *testing.T) {
	needNode(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	launcher, err := inspectorLauncher()
	if err != nil {
		t.Fatal(err)
	}
	f, err := newFixture()
	if err != nil {
		t.Fatal(err)
	}
	url := serveFixtureHTTP(t, f)

	// The Inspector reads its servers from a config file (the mcpServers
	// format hosts use); its home folder is the test's own, so that it
	// neither reads nor writes the user's.
	home := t.TempDir()
	hostRoots := []map[string]string{{"uri": "file:///work/one", "name": "one"}, {"uri": "file:///work/two"}}
	config, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"http":  map[string]any{"type": "http", "url": url, "roots": hostRoots},
		"stdio": map[string]any{"command": self, "env": map[string]string{serveEnv: "fixture"}, "roots": hostRoots},
	}})
	if err != nil {
		t.Fatal(err)
	}
	configPath := filepath.Join(home, "servers.json")
	if err := os.WriteFile(configPath, config, 0o600); err != nil {
		t.Fatal(err)
	}

	// The runs: every method the CLI offers that the fixture serves, in
	// the legacy and modern eras over HTTP; the automatic era, which
	// settles on 2026-07-28 after its server/discover probe, and stdio
	// for what differs there (the handshake, and roots asked over the
	// connection or in a round).
	var runs []*inspectorRun
	add := func(server, era, name string, check func(*testing.T, *inspectorRun), args ...string) {
		runs = append(runs, &inspectorRun{name: server + "/" + era + "/" + name, server: server, era: era, args: args, check: check})
	}
	roots := wantToolText("file:///work/one,file:///work/two")
	for _, era := range []string{"legacy", "modern", "auto"} {
		version := mcp.LatestVersion
		if era == "legacy" {
			version = mcp.Version20251125
		}
		for _, server := range []string{"http", "stdio"} {
			add(server, era, "initialize", checkInitialize(version), "--method", "initialize")
			if era != "auto" || server == "http" {
				add(server, era, "roots", roots, "--method", "tools/call", "--tool-name", "roots")
			}
		}
		if era == "auto" {
			continue
		}
		add("http", era, "tools/list", wantNames("tools", fixtureTools), "--method", "tools/list")
		add("http", era, "structured", checkWeather, "--method", "tools/call", "--tool-name", "weather", "--tool-arg", "city=Paris")
		add("http", era, "isError", checkFail, "--method", "tools/call", "--tool-name", "fail")
		add("http", era, "elicitation-refused", checkAskRefused, "--method", "tools/call", "--tool-name", "ask")
		add("http", era, "prompts/get", checkPrompt, "--method", "prompts/get", "--prompt-name", "greeting", "--prompt-args", "name=Ada", "language=french")
		add("http", era, "resources/list", wantNames("resources", []string{"readme", "counter"}), "--method", "resources/list")
		add("http", era, "resources/read", checkRead, "--method", "resources/read", "--uri", "fixture://items/42")
	}
	add("http", "legacy", "prompts/list", wantNames("prompts", []string{"greeting"}), "--method", "prompts/list")
	add("http", "modern", "resources/templates/list", wantNames("resourceTemplates", []string{"item"}), "--method", "resources/templates/list")
	// logging/setLevel is a legacy method; in the other eras the Inspector
	// refuses it itself.
	add("http", "legacy", "logging/setLevel", checkSetLevel, "--method", "logging/setLevel", "--log-level", "warning")

	// Most of a run's time is Node compiling the Inspector's modules: the
	// first run fills a compile cache (NODE_COMPILE_CACHE, in the test's
	// folder) that the others, four at a time, start from.
	run := func(r *inspectorRun) {
		args := append([]string{launcher, "--cli", "--config", configPath, "--server", r.server, "--protocol-era", r.era, "--format", "json"}, r.args...)
		cmd := nodeCommand(t, args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "HOME="+home, "MCP_INSPECTOR_SECRET_STORE=memory", "NODE_COMPILE_CACHE="+filepath.Join(home, "compile-cache"))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		r.err = cmd.Run()
		r.stdout, r.stderr = stdout.Bytes(), stderr.Bytes()
	}
	run(runs[0])
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, r := range runs[1:] {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			run(r)
		})
	}
	wg.Wait()
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			r.parse(t)
			r.check(t, r)
		})
	}
}

// inspectorLauncher returns the Inspector's launcher, its package's bin
// "mcp-inspector", relative to the folder nodeCommand runs programs from.
func inspectorLauncher() (string, error) {
	pkg := filepath.Join("node_modules", "@modelcontextprotocol", "inspector")
	b, err := os.ReadFile(filepath.Join(scripts, pkg, "package.json"))
	if err != nil {
		return "", err
	}
	var p struct {
		Bin map[string]string `json:"bin"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return "", err
	}
	bin, ok := p.Bin["mcp-inspector"]
	if !ok {
		return "", errors.New("the Inspector's package.json has no bin mcp-inspector")
	}
	return filepath.Join(pkg, bin), nil
}

// inspectorRun is one run of the Inspector's CLI and what it printed: the
// answer ({"result": ...}) on stdout; on failure an error envelope
// ({"error": {"code", "message"}}) on stderr and a non-zero exit.
type inspectorRun struct {
	name, server, era string
	args              []string
	check             func(*testing.T, *inspectorRun)

	err            error
	stdout, stderr []byte

	result   json.RawMessage
	errCode  string
	errMsg   string
	exitCode int
}

// parse reads the run's answer and error envelope.
func (r *inspectorRun) parse(t *testing.T) {
	t.Helper()
	var exit *exec.ExitError
	switch {
	case r.err == nil:
	case errors.As(r.err, &exit):
		r.exitCode = exit.ExitCode()
	default:
		t.Fatalf("the Inspector did not run: %v", r.err)
	}
	var out struct {
		Result json.RawMessage `json:"result"`
	}
	if line := firstJSONLine(r.stdout); line != nil {
		if err := json.Unmarshal(line, &out); err != nil {
			t.Fatalf("the Inspector printed %q: %v", r.stdout, err)
		}
		r.result = out.Result
	}
	var env struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if line := firstJSONLine(r.stderr); line != nil && json.Unmarshal(line, &env) == nil {
		r.errCode, r.errMsg = env.Error.Code, env.Error.Message
	}
}

// firstJSONLine returns the first line of out that holds a JSON object;
// the Inspector's notices are plain text.
func firstJSONLine(out []byte) []byte {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); bytes.HasPrefix(line, []byte("{")) {
			return line
		}
	}
	return nil
}

// ok fails t unless the run succeeded with a result, which it decodes into
// v.
func (r *inspectorRun) ok(t *testing.T, v any) {
	t.Helper()
	if r.exitCode != 0 || r.result == nil {
		t.Fatalf("the Inspector exited %d (%s: %s)\nstdout: %s\nstderr: %s", r.exitCode, r.errCode, r.errMsg, r.stdout, r.stderr)
	}
	if err := json.Unmarshal(r.result, v); err != nil {
		t.Fatalf("result %s: %v", r.result, err)
	}
}

// inspectorTool is the part of a tools/call result the checks read.
type inspectorTool struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func (c inspectorTool) text() string {
	var s strings.Builder
	for _, b := range c.Content {
		s.WriteString(b.Text)
	}
	return s.String()
}

func checkInitialize(version mcp.ProtocolVersion) func(*testing.T, *inspectorRun) {
	return func(t *testing.T, r *inspectorRun) {
		var got struct {
			ServerInfo      mcp.Implementation `json:"serverInfo"`
			ProtocolVersion string             `json:"protocolVersion"`
			Capabilities    struct {
				Tools, Prompts, Logging, Completions, Resources *struct{}
			} `json:"capabilities"`
			Instructions string `json:"instructions"`
		}
		r.ok(t, &got)
		if got.ProtocolVersion != string(version) {
			t.Errorf("protocolVersion %q, want %q", got.ProtocolVersion, version)
		}
		if got.ServerInfo.Name != "parley-fixture" || got.ServerInfo.Version != "1.0.0" {
			t.Errorf("serverInfo %+v", got.ServerInfo)
		}
		c := got.Capabilities
		if c.Tools == nil || c.Prompts == nil || c.Resources == nil || c.Logging == nil || c.Completions == nil {
			t.Errorf("capabilities %s", r.result)
		}
		if !strings.HasPrefix(got.Instructions, "Parley's interop fixture") {
			t.Errorf("instructions %q", got.Instructions)
		}
	}
}

func wantToolText(want string) func(*testing.T, *inspectorRun) {
	return func(t *testing.T, r *inspectorRun) {
		var got inspectorTool
		r.ok(t, &got)
		if got.text() != want || got.IsError {
			t.Errorf("the tool answered %q (isError %v), want %q", got.text(), got.IsError, want)
		}
	}
}

// wantNames checks a list result: the names of its items under key, every
// page of them (the fixture's pages hold two).
func wantNames(key string, want []string) func(*testing.T, *inspectorRun) {
	return func(t *testing.T, r *inspectorRun) {
		var got map[string][]struct {
			Name string `json:"name"`
		}
		r.ok(t, &got)
		var names []string
		for _, item := range got[key] {
			names = append(names, item.Name)
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s: %v, want %v", key, names, want)
		}
	}
}

func checkWeather(t *testing.T, r *inspectorRun) {
	var got inspectorTool
	r.ok(t, &got)
	want := Forecast{City: "Paris", Celsius: 21.5, Conditions: "sunny", Humidity: 40, Description: "Sunny in Paris"}
	var sc Forecast
	if err := json.Unmarshal(got.StructuredContent, &sc); err != nil || sc != want || got.IsError {
		t.Errorf("structuredContent %s (isError %v), want %+v", got.StructuredContent, got.IsError, want)
	}
}

// checkFail: an isError result is printed, and the Inspector exits with
// its code for a tool error.
func checkFail(t *testing.T, r *inspectorRun) {
	var got inspectorTool
	if err := json.Unmarshal(r.result, &got); err != nil || !got.IsError || !strings.Contains(got.text(), "failed on purpose") {
		t.Errorf("result %s, want an isError result", r.result)
	}
	if r.errCode != "tool_is_error" || r.exitCode == 0 {
		t.Errorf("the Inspector exited %d with %q (%s), want tool_is_error", r.exitCode, r.errCode, r.errMsg)
	}
}

// checkAskRefused: the Inspector cannot fill in forms, and says so in its
// capabilities; the server refuses before asking, naming the capability
// and the question that needs it (mcpserver's check: the low-level
// server's own would name the capability only).
func checkAskRefused(t *testing.T, r *inspectorRun) {
	const want = `elicitation (needed by question "name" of tool "ask")`
	if r.exitCode == 0 || !strings.Contains(r.errMsg, want) {
		t.Errorf("the Inspector exited %d with %q, want an error naming the capability and the question: %s\nstdout: %s", r.exitCode, r.errMsg, want, r.stdout)
	}
}

func checkPrompt(t *testing.T, r *inspectorRun) {
	var got mcp.GetPromptResult
	r.ok(t, &got)
	if len(got.Messages) != 1 {
		t.Fatalf("messages %s", r.result)
	}
	if tc, ok := got.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Greet Ada in french." {
		t.Errorf("messages %s", r.result)
	}
}

func checkRead(t *testing.T, r *inspectorRun) {
	var got struct {
		Contents []struct {
			URI  string `json:"uri"`
			Text string `json:"text"`
		} `json:"contents"`
	}
	r.ok(t, &got)
	if len(got.Contents) != 1 || got.Contents[0].URI != "fixture://items/42" || got.Contents[0].Text != "item 42" {
		t.Errorf("contents %s", r.result)
	}
}

func checkSetLevel(t *testing.T, r *inspectorRun) {
	var got map[string]any
	r.ok(t, &got)
}
