// Package mcptest tests an MCP server the way its users will reach it: a
// client session on the server in memory, a scripted person at the host
// who answers the server's questions, helpers that read results, and
// golden transcripts of the wire. It is for tests, in the tradition of
// net/http/httptest; it imports package testing.
//
// # A session
//
// One call gives a connected client session, of the protocol generation
// the test chooses, closed when the test ends:
//
//	func TestGreet(t *testing.T) {
//		sess := mcptest.Connect(t, newServer(), nil)
//		res := sess.Call("greet", map[string]any{"name": "Ada"})
//		if got := mcptest.Text(t, res); got != "Hello, Ada!" {
//			t.Errorf("greet said %q", got)
//		}
//	}
//
// Connect takes anything with a ServeConn method: an *mcpserver.Server or
// a low-level *server.Server. The session is a *client.Session (every
// call of the client is there) with a few methods of the kit's: Call,
// StartTask and AwaitTask fail the test on an error, Questions lists what
// the server asked, Transcript shows the wire.
//
// Options.Version pins the generation: 2026-07-28 unless set, or
// mcp.Version20251125 for a legacy session (initialize, sessions, the
// server's questions sent over its back-channel). Generations returns one
// version of each, to run a test in both.
//
// # The person at the host
//
// A tool that asks the person at the host (mcpserver.Elicit, Sample,
// ListRoots, or an InputRequiredResult by hand) gets its answers from
// Options.Script, by the question's key:
//
//	sess := mcptest.Connect(t, srv, &mcptest.Options{Script: mcptest.Script{
//		"region": mcptest.Accept(map[string]any{"region": "eu-west-1"}),
//	}})
//
// Accept, Decline and Cancel answer an elicitation as the person would;
// Reply and ReplyResult answer sampling; Roots lists roots; AnswerFunc
// answers with a function of the question. The same script works in both
// generations: on a legacy session, where the wire names no key, the kit
// learns each question's key from the server's side of the in-memory pipe
// (see Script).
//
// The person is strict. A question the script has no answer for is
// refused (the call fails with an error wrapping ErrUnexpectedQuestion),
// and the test fails when it ends, naming the question. A scripted answer
// that no question asked for fails the test too, when it ends, so a
// script cannot go stale unnoticed (unless the test had failed already).
// Callbacks run on the client's goroutines; the kit records what goes
// wrong there and reports it from the test's cleanup, never calling
// t.FailNow off the test's goroutine.
//
// # Results
//
// Text reads the text of a result, ToolError the message of a tool error,
// Structured a tool's structured content decoded into a type. Each fails
// the test with a message that says what it found instead.
//
// # Golden transcripts
//
// With Options.Golden set, the session's transcript (Session.Transcript:
// every JSON-RPC message both ways, in order, ids, sealed requestState and
// other volatile values normalised) is compared with a txtar file when the
// test ends. MCPTEST_UPDATE=1 go test writes it instead (so do
// Options.Update and a boolean -update flag the test binary defines
// itself; the kit registers no flag of its own).
package mcptest
