package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/internal/wiregolden"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

var _ = flag.Bool("update", false, "rewrite the golden files from what the server sends (internal/wiregolden reads it)")

// TestGolden replays the JSON-RPC exchanges in testdata/golden/*.txtar
// against the fixture server over the in-memory transport. Each archive has
// a file "in" (messages to send, one per line) and "out" (every message the
// server sent, one per line, byte for byte). Run with -update to rewrite
// "out" after a deliberate change, and review the diff.
//
// In "in", blank lines and lines starting with # are skipped, except two
// kinds of line that script what is not a request:
//
//   - after the server sends a request of its own (elicitation/create on a
//     legacy session's back-channel), the next line is sent as the client's
//     answer to it;
//   - "#! publish <notification method> [uri]" has the server publish a
//     change (NotifyToolListChanged, NotifyResourceUpdated and the like),
//     and records the one notification that follows.
//
// Every message the server sends is validated against the schema of the
// archive's generation, and held to the members that schema names
// (spectest.ValidateMessageStrict): an archive that starts with an
// initialize without the envelope is a legacy session, checked against
// 2025-11-25, so that nothing of 2026-07-28 reaches a legacy client.
func TestGolden(t *testing.T) {
	wiregolden.Each(t, "testdata/golden/*.txtar", func(t *testing.T, in []byte) []byte {
		got := replay(t, in)
		// A Go error chain or a %v never reaches the wire, in any answer.
		if leaks := spectest.GoText(got); len(leaks) > 0 {
			t.Errorf("the server sent Go's own text %q:\n%s", leaks, got)
		}
		return got
	})
}

// publishPrefix starts a line of "in" that publishes a change.
const publishPrefix = "#! publish "

// replay sends each input line and collects what the server sends until the
// response to it (a request, or input that is not a valid notification, is
// answered; a notification is not). It returns every message received, one
// per line, and validates each against the official schema.
func replay(t *testing.T, input []byte) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	clientEnd, serverEnd := transport.NewMemoryPipe()
	s := newFixture(nil)
	done := make(chan error, 1)
	go func() { done <- s.ServeConn(ctx, serverEnd) }()

	// An archive that starts with an initialize without the envelope is a
	// legacy session, validated against the 2025-11-25 schema.
	version := mcp.LatestVersion
	if m, _ := classify(firstLine(input)); m == mcp.MethodInitialize && !bytes.Contains(input, []byte(mcp.MetaKeyProtocolVersion)) {
		version = mcp.Version20251125
	}
	validate := func(msg []byte, method string) { spectest.ValidateMessageStrict(t, version, msg, method) }
	var lines [][]byte
	for _, line := range bytes.Split(input, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && (line[0] != '#' || bytes.HasPrefix(line, []byte(publishPrefix))) {
			lines = append(lines, line)
		}
	}
	var got bytes.Buffer
	read := func(after []byte) []byte {
		msg, err := clientEnd.Read(ctx)
		if err != nil {
			t.Fatalf("reading what follows %s: %v", after, err)
		}
		got.Write(msg)
		got.WriteByte('\n')
		return msg
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if what, ok := bytes.CutPrefix(line, []byte(publishPrefix)); ok {
			publish(t, s, string(what))
			validate(read(line), "")
			continue
		}
		if err := clientEnd.Write(ctx, bytes.Clone(line)); err != nil {
			t.Fatal(err)
		}
		method, answered := classify(line)
		if !answered {
			continue
		}
		for {
			msg := read(line)
			var probe struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Error  json.RawMessage `json:"error"`
			}
			json.Unmarshal(msg, &probe)
			if probe.Method == "" {
				if method != "" || probe.Error != nil {
					validate(msg, method)
				}
				break
			}
			validate(msg, "")
			if probe.ID != nil {
				// A request of the server's: the next line answers it.
				if i++; i == len(lines) {
					t.Fatalf("the server sent %s and the archive has no answer", msg)
				}
				if err := clientEnd.Write(ctx, bytes.Clone(lines[i])); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	clientEnd.Close()
	if err := <-done; err != nil {
		t.Errorf("ServeConn: %v", err)
	}
	return got.Bytes()
}

// publish has s publish the change a "#! publish" line names: a
// notification method, and the uri of a resource update.
func publish(t *testing.T, s *server.Server, what string) {
	t.Helper()
	method, uri, _ := strings.Cut(what, " ")
	switch method {
	case mcp.NotificationToolListChanged:
		s.NotifyToolListChanged()
	case mcp.NotificationPromptListChanged:
		s.NotifyPromptListChanged()
	case mcp.NotificationResourceListChanged:
		s.NotifyResourceListChanged()
	case mcp.NotificationResourceUpdated:
		s.NotifyResourceUpdated(uri)
	default:
		t.Fatalf("cannot publish %q", what)
	}
}

// firstLine returns the first message line of an "in" file.
func firstLine(input []byte) []byte {
	for _, line := range bytes.Split(input, []byte("\n")) {
		if line = bytes.TrimSpace(line); len(line) > 0 && line[0] != '#' {
			return line
		}
	}
	return nil
}

// classify reports the method of a request line and whether the server
// answers it: everything but a well-formed notification is answered.
func classify(line []byte) (method string, answered bool) {
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &probe) != nil {
		return "", true
	}
	if probe.Method != "" && probe.ID == nil {
		return "", false
	}
	if !knownMethod(probe.Method) {
		return "", true
	}
	return probe.Method, true
}

// knownMethod reports whether responses to method have a schema definition
// to validate against.
func knownMethod(m string) bool {
	switch m {
	case mcp.MethodDiscover, mcp.MethodListTools, mcp.MethodCallTool, mcp.MethodListPrompts, mcp.MethodGetPrompt,
		mcp.MethodListResources, mcp.MethodListResourceTemplates, mcp.MethodReadResource, mcp.MethodComplete,
		mcp.MethodInitialize, mcp.MethodPing, mcp.MethodSetLoggingLevel, mcp.MethodSubscribeResource, mcp.MethodUnsubscribeResource:
		return true
	}
	return false
}
