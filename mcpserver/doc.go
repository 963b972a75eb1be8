// Package mcpserver is Parley's high-level MCP server: register typed
// tools, prompts, resources and resource templates, declare what they must
// ask the person at the host, and serve them on any transport.
//
// # A tool
//
// A tool is a Go function of a struct. Its input schema is inferred from
// the struct, the arguments are validated against it before the function
// runs, and a result of the wrong shape is never sent:
//
//	type GreetArgs struct {
//		Name string `json:"name" jsonschema:"who to greet"`
//	}
//
//	s := mcpserver.MustNew(mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
//	err := mcpserver.AddTool(s, &mcp.Tool{Name: "greet", Description: "Say hello."},
//		func(ctx context.Context, call *mcpserver.Call, a GreetArgs) (string, error) {
//			return "Hello, " + a.Name + "!", nil
//		})
//
// Arguments that do not fit (a missing required member, a wrong type, an
// unknown member) get an isError result that names the member and the
// rule; the function does not run. Arguments are read strictly: member
// names match exactly, never by case folding. Arguments that other
// decoders would read differently are refused with -32602 before
// anything else: a member name given twice, two names equal under case
// folding ("amount" and "Amount"), invalid UTF-8, an escaped lone
// surrogate, a number spelled in more than 256 bytes. So the schema check,
// the sealed state's argument binding, the HTTP Mcp-Param-* check, the
// function and whatever it hands its arguments on to all see the same
// values. Prompt arguments whose names are equal under case folding are
// refused the same way.
//
// The struct-tag dialect is that of github.com/google/jsonschema-go:
// `json:"name"` names a member, a field without omitempty is required,
// `jsonschema:"..."` is its description, and no other members are
// allowed. Parley's `mcp` tag adds the constraints asked for most,
// advertised in the schema and checked before the function runs:
//
//	type ForecastArgs struct {
//		City  string `json:"city" mcp:"minLength=1,maxLength=80,pattern='^[^0-9]+$'"`
//		Units string `json:"units,omitempty" mcp:"enum=celsius,enum=fahrenheit,default=celsius"`
//		Days  int    `json:"days,omitempty" mcp:"minimum=1,maximum=14,default=3"`
//		Mail  string `json:"mail,omitempty" mcp:"format=email,title=E-mail"`
//	}
//
// Its items are keyword=value, comma-separated; a value holding a comma is
// single-quoted ('a,b'; a quote inside is doubled). enum (repeated; enumTitle
// labels each value), minimum, maximum, minLength, maxLength and pattern
// (a Go regular expression, unanchored) are checked; format and title are
// annotations; default is the value an absent optional member takes. A
// tag that does not fit its field (a bound on a string, a default outside
// the enum, an unknown keyword) is a registration error. The same tag
// works on Elicit form fields (within what a form can carry: no pattern,
// enums of strings, four formats), on prompt arguments and on resource
// template variables (where it also opts a variable in to slashes, dot
// segments or control characters; see [AddResourceTemplate]). For
// anything richer set Tool.InputSchema by hand; it is then used for
// validation instead.
//
// The function returns a string (the result's text), a struct (sent as
// structuredContent, with an output schema inferred from its type), or a
// *mcp.CallToolResult built by hand. An error becomes an isError result
// the model can read; a *jsonrpc.Error is sent as a protocol error; a
// panic is logged and answered with an internal error.
//
// # Asking the person at the host
//
// A tool that cannot finish without something only the client has (a
// choice, a confirmation, a sampled LLM answer, the client's roots)
// declares it as a question. Under MCP 2026-07-28 the server cannot call
// the client back: it answers tools/call with an InputRequiredResult, and
// the client repeats the call with the answers. The server does all of
// that for a declared question, and calls the function once, when every
// question is answered, with typed values:
//
//	type Region struct {
//		Region string `json:"region" jsonschema:"where the database lives, such as eu-west-1"`
//	}
//
//	var region = mcpserver.Elicit[Region]("region", func(a ProvisionArgs, _ *mcpserver.Call) string {
//		return "Which region should " + a.Name + " live in?"
//	})
//
//	mcpserver.AddTool(s, &mcp.Tool{Name: "provision", Description: "Create a database."},
//		func(ctx context.Context, call *mcpserver.Call, a ProvisionArgs) (string, error) {
//			return fmt.Sprintf("Provisioned '%s' in %s.", a.Name, region.Get(call).Region), nil
//		}, region)
//
// There are three kinds of question: [Elicit] (a form, whose fields are
// those of a struct), [Sample] (a completion from the client's model, with
// every sampling/createMessage parameter) and [ListRoots] (the client's
// roots). The rules:
//
//   - A question's key is the name its author gives it: the same on every
//     instance of the server, and never derived from memory addresses.
//   - A question may depend on others (the after arguments of its
//     constructor): it is asked once they are answered, and its message may
//     use their answers. Questions that do not depend on each other go out
//     together, in one round. Each question is asked once per call.
//   - A decline or cancel ends the call with an isError result naming the
//     question, unless the question allows it ([ElicitQuestion.AllowDecline]);
//     then the function reads the whole outcome. An answer of the wrong
//     kind, or content that does not match the form, is an isError result
//     too, never a panic.
//   - Answers are recorded in the sealed requestState, each pinned to a
//     digest of the question as it was shown. A reworded question is asked
//     again rather than answered by a stale reply. Build messages from the
//     arguments and earlier answers only: a message with a timestamp in it
//     never matches its answer.
//   - Before a question goes on the wire, the capabilities the client
//     declared on the request are checked: a client that cannot answer it
//     gets error -32021 naming the capability and the question.
//
// Prompts ([AddPrompt]) and resource templates ([AddResourceTemplate])
// declare questions the same way.
//
// # Asking by hand
//
// Where declared questions do not fit, a tool, prompt or template function
// returns an *mcp.InputRequiredResult itself (its result type is then
// mcp.CallToolOutcome, mcp.GetPromptOutcome or mcp.ReadResourceOutcome)
// and reads the retry's answers with [Call.InputResponses] and its
// requestState with [Call.RequestState]. A registration cannot do both: a
// call has one inputResponses/requestState channel, so a registration that
// declares questions and whose function can return an InputRequiredResult
// is refused. Static resources ([Server.AddResource]) cannot ask at all:
// their function has no Call and returns only a *mcp.ReadResourceResult.
//
// # Sealed requestState
//
// The client holds requestState between rounds, so what it sends back is
// client input. Every Server seals every requestState it issues (declared
// questions' and hand-built alike) and verifies every one it receives,
// with package requeststate: encrypted, authenticated, and bound to the
// request, the caller, the server's name and a ten-minute window. Functions
// read and write plaintext. With no configuration the key is made at
// start-up, which suits one process; several instances behind a load
// balancer share a key ring:
//
//	keys, err := requeststate.ParseKeys(os.Getenv("MCP_STATE_KEYS"))
//	s, err := mcpserver.New(info, &mcpserver.Options{RequestState: &requeststate.Policy{Keys: keys}})
//
// # Serving
//
// One Server serves any number of connections, on every transport:
//
//	s.ServeConn(ctx, stdio.ServerConn(nil))    // stdio
//	mux.Handle("/mcp", s.HTTPHandler(nil))     // stateless Streamable HTTP
//	client.New(info, nil).Connect(ctx, s.InMemoryTransport()) // in-process, for tests
//
// Registrations may change while the server serves; listening clients
// (subscriptions/listen) are told the lists changed. The list methods
// return entries in registration order, paginated ([Options.PageSize]).
package mcpserver
