// Package mcp holds the wire types of the Model Context Protocol: every
// request, result, notification and content type of protocol version
// 2026-07-28, the result unions of multi-round-trip requests, MCP's error
// codes and error data, the reserved _meta keys, and protocol versions and
// their eras. It does no I/O; the connection, transports, server and client
// live in their own packages.
//
// # Names
//
// Every definition of the official JSON schema that a params object, a
// result or a part of one has a Go type of the same name:
// CallToolRequestParams, CallToolResult, DiscoverResult, RequestMetaObject
// and so on (a few are aliases, such as RequestID, the schema's RequestId,
// for wire.ID, which package jsonrpc also calls jsonrpc.ID; where the
// schema's name is not idiomatic Go, the Go name is). Whole JSON-RPC
// messages (the schema's *Request, *Notification and *ResultResponse
// definitions) have no type here: package jsonrpc moves raw params and
// results, and each is decoded once, into its type. Tests that decode the
// specification's whole example messages find those types in Parley's
// internal/spectest.
//
// # Layout
//
// Each file declares a part of the schema (tools.go, prompts.go, ...) as
// plain types whose declarations and doc comments read like the schema; the
// hand-written one-pass JSON coders of the hot types sit beside them, in
// tools_codec.go, prompts_codec.go and so on. The package does no I/O and
// imports nothing that does: ids and error objects come from the leaf
// package jsonrpc/wire, JSON scanning from the shared scanner.
//
// # Requests carry their context
//
// Under 2026-07-28 there is no initialize handshake. Every request says
// which protocol version it speaks and what the client supports, in its
// params' _meta:
//
//	p := &mcp.CallToolRequestParams{Name: "get_weather"}
//	p.Meta = &mcp.RequestMetaObject{
//		ProtocolVersion:    mcp.Version20260728,
//		ClientCapabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}},
//		ClientInfo:         &mcp.Implementation{Name: "my-client", Version: "1.0.0"},
//	}
//	_ = p.SetArguments(map[string]any{"location": "New York"})
//
// Every params type has this Meta field and implements [AnyRequestParams],
// so code that sends any request can stamp _meta in one place. Keys that have
// no field are kept, raw, in Extra, and survive a round trip unchanged.
// [RequestMetaObject] and [CallToolRequestParams] have one-pass decoders:
// they run on every request. [UnmarshalParams] calls them directly.
//
// # Encoding and decoding on the hot path
//
// The types on the path of every tools/call round trip ([CallToolResult],
// [TextContent], [ResultMetaObject], [Implementation], [RequestMetaObject],
// [ClientCapabilities], [CallToolRequestParams]) have hand-written
// encoders that write exactly what encoding/json would, and the results a
// client decodes ([DecodeCallToolOutcome], [DecodeGetPromptOutcome],
// [DecodeReadResourceOutcome]) have one-pass decoders that accept exactly
// what encoding/json accepts. [AppendJSON] appends a value's encoding to a
// buffer of the caller's: a transport that builds whole messages calls it
// instead of json.Marshal and saves encoding/json's copy and re-validation
// of each message.
//
// # Results carry a header
//
// Every result embeds [Result]: its _meta (with the server's identity) and
// its resultType. Types leave resultType empty; a server stamps it, and
// serverInfo, on any result through [AnyResult]:
//
//	h := result.ResultHeader()
//	h.ResultType = mcp.ResultTypeComplete
//	h.ResultMeta().ServerInfo = &mcp.Implementation{Name: "weather", Version: "1.0.0"}
//
// Results a client may cache (server/discover, the list methods, a complete
// resources/read) embed [CacheableResult] with ttlMs and cacheScope.
//
// A client reads resultType with [ParseResultType]: absent means complete
// (legacy servers send none), and a value it does not know is an
// [*UnknownResultTypeError].
//
// # Asking the client for input: InputRequiredResult
//
// A server that needs the user (an elicitation), the client's LLM (a
// sampling) or the client's roots to finish tools/call, prompts/get or
// resources/read answers with an [InputRequiredResult]. The handler of
// tools/call therefore returns a [CallToolOutcome], implemented only by
// *CallToolResult and *InputRequiredResult:
//
//	var askRegion = mcp.NewElicitFormRequest("Which region?", mcp.ElicitRequestedSchema{
//		Properties: map[string]mcp.PrimitiveSchemaDefinition{"region": &mcp.StringSchema{}},
//		Required:   []string{"region"},
//	})
//
//	func callTool(p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
//		if !p.InputResponses.Has("region") { // not answered yet: ask
//			return &mcp.InputRequiredResult{
//				InputRequests: mcp.InputRequests{"region": askRegion},
//				RequestState:  "provision-v1",
//			}, nil
//		}
//		var form struct {
//			Region string `json:"region"`
//		}
//		switch answer, err := p.InputResponses.Elicit("region"); { // decoded as what was asked
//		case err != nil:
//			return mcp.ErrorResult("unreadable answer: " + err.Error()), nil
//		case !answer.Accepted(): // declined or cancelled: stop, do not ask again
//			return mcp.ErrorResult("no region chosen (" + string(answer.Action) + ")"), nil
//		case answer.DecodeContent(&form) != nil || form.Region == "":
//			return mcp.ErrorResult("the answer does not fit the form"), nil
//		}
//		return mcp.TextResult("Provisioned in " + form.Region), nil
//	}
//
// The high-level server (package mcpserver) does all of this for a tool
// that declares its questions, and seals the state.
//
// The client fulfils each entry of InputRequests, then sends the same
// request again with a new id, the answers in InputResponses under the same
// keys, and RequestState echoed byte for byte; "" is a state too, echoed
// when present ([RequestStateParams]). An answer carries no kind on
// the wire, so [InputResponses] keeps each one raw and the server decodes it
// as what it asked for, with [InputResponses.Elicit], [InputResponses.Sample]
// or [InputResponses.Roots]; a missing or malformed answer is an
// [*InputResponseError] matching [ErrInputResponseMissing] or
// [ErrInputResponseShape].
//
// A server must only ask for what the request's capabilities allow:
// [ClientCapabilities.MissingFor] says what is missing, ready for
// [NewMissingRequiredClientCapabilityError].
//
// On the client, [DecodeCallToolOutcome], [DecodeGetPromptOutcome] and
// [DecodeReadResourceOutcome] decode a result by its resultType:
//
//	out, err := mcp.DecodeCallToolOutcome(raw)
//	switch r := out.(type) {
//	case *mcp.CallToolResult:      // done
//	case *mcp.InputRequiredResult: // fulfil r.InputRequests, retry with r.RequestState
//	}
//
// # Unions
//
// The schema's unions are sealed interfaces whose implementations write
// their own discriminator, so a literal is complete: &mcp.TextContent{Text:
// "hi"} encodes as {"type":"text","text":"hi"}. Each union has a decoder
// that chooses the Go type: [DecodeContentBlock] (by "type"),
// [DecodeSamplingMessageContentBlock], [DecodeResourceContents] (text or
// blob), [DecodePrimitiveSchemaDefinition], [DecodeElicitRequestParams] (by
// "mode"), [DecodeInputRequest] (by "method"), [DecodeCompleteReference],
// [DecodeClientRequest] and [DecodeServerNotification]. Types that contain
// unions decode them through these.
//
// # Errors
//
// MCP's own codes are [CodeHeaderMismatch] (-32020),
// [CodeMissingRequiredClientCapability] (-32021) and
// [CodeUnsupportedProtocolVersion] (-32022). The constructors return a
// *jsonrpc.Error with the data the protocol defines, and the accessors read
// it back from any error chain:
//
//	if d, ok := mcp.AsUnsupportedProtocolVersion(err); ok {
//		// retry with one of d.Supported
//	}
//
// # Versions and eras
//
// [ProtocolVersion.Era] tells a modern (2026-07-28) version from a legacy
// one; code asks the era rather than comparing version strings.
package mcp
