package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"slices"
	"time"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// toolHandler serves one tool.
type toolHandler func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error)

// toolDef is a tool's listing and its handler.
type toolDef struct {
	tool mcp.Tool
	call toolHandler
}

// Schemas used by several tools.
var (
	noArgs = json.RawMessage(`{"type":"object","properties":{}}`)

	// jsonSchema2020Tool is the inputSchema the json-schema-2020-12 scenario
	// expects to find, keyword for keyword.
	jsonSchema2020Tool = json.RawMessage(`{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type": "object",
		"$defs": {
			"address": {
				"$anchor": "addressDef",
				"type": "object",
				"properties": {"street": {"type": "string"}, "city": {"type": "string"}}
			}
		},
		"properties": {
			"name": {"type": "string"},
			"address": {"$ref": "#/$defs/address"},
			"contactMethod": {"type": "string", "enum": ["phone", "email"]},
			"phone": {"type": "string"},
			"email": {"type": "string"}
		},
		"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
		"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
		"then": {"required": ["phone"]},
		"else": {"required": ["email"]},
		"additionalProperties": false
	}`)
)

// Media for the content tools, made once: a 1x1 red PNG and a short silent
// WAV.
var (
	redPixelPNG = makePNG()
	silenceWAV  = makeWAV()
)

// The name of the tool that test_trigger_tool_change adds and removes.
const dynamicToolName = "test_dynamic_tool"

// registerTools fills the tools/list and tools/call slots.
func (f *fixture) registerTools() {
	defs := []toolDef{
		{tool("test_simple_text", "Returns a simple text response", noArgs), f.simpleText},
		{tool("test_image_content", "Returns a 1x1 red PNG image", noArgs), f.imageContent},
		{tool("test_audio_content", "Returns a short WAV audio clip", noArgs), f.audioContent},
		{tool("test_embedded_resource", "Returns an embedded text resource", noArgs), f.embeddedResource},
		{tool("test_multiple_content_types", "Returns text, image and resource content", noArgs), f.multipleContentTypes},
		{tool("test_tool_with_logging", "Sends three log messages while it runs", noArgs), f.toolWithLogging},
		{tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100", noArgs), f.toolWithProgress},
		{tool("test_error_handling", "Always fails with a tool error", noArgs), f.errorHandling},
		{tool("test_sampling", "Asks the client's LLM to answer a prompt",
			json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`)), f.sampling},
		{tool("test_elicitation", "Asks the user for a username and an email address",
			json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`)), f.elicitation},
		{tool("test_elicitation_sep1034_defaults", "Elicits a form whose fields all have defaults (SEP-1034)", noArgs), f.elicitationDefaults},
		{tool("test_elicitation_sep1330_enums", "Elicits a form with every enum variant (SEP-1330)", noArgs), f.elicitationEnums},
		{tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", jsonSchema2020Tool), f.jsonSchema2020},
		{tool("test_reconnection", "Completes after a short pause (2025-11-25 SSE polling fixture)", noArgs), f.reconnection},
		{tool("test_x_mcp_header", "Echoes a parameter that is mirrored into the Mcp-Param-Region header",
			json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","description":"The region","x-mcp-header":"Region"}},"required":["region"]}`)), f.xMCPHeader},
		{tool("test_missing_capability", "Needs the sampling client capability; fails with -32021 without it", noArgs), f.missingCapability},
		{tool("test_streaming_elicitation", "Reports progress, then asks for input in its result, never by a request on the stream", noArgs), f.streamingElicitation},
		{tool("test_logging_tool", "Logs a message, which is sent only if the request set a log level", noArgs), f.loggingTool},
		{tool("test_trigger_tool_change", "Adds or removes "+dynamicToolName+" and announces the tool list change", noArgs), f.triggerToolChange},
		{tool("test_trigger_prompt_change", "Adds or removes "+dynamicPromptName+" and announces the prompt list change", noArgs), f.triggerPromptChange},
	}
	defs = append(defs, f.mrtrTools()...)

	f.tools = make(map[string]toolDef, len(defs)+1)
	order := make([]string, 0, len(defs))
	for _, d := range defs {
		f.tools[d.tool.Name] = d
		order = append(order, d.tool.Name)
	}
	dynamic := toolDef{tool(dynamicToolName, "Exists only while test_trigger_tool_change has added it", noArgs), f.simpleText}

	f.srv.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		list := make([]mcp.Tool, 0, len(order)+1)
		for _, name := range order {
			list = append(list, f.tools[name].tool)
		}
		if f.hasDynamicTool() {
			list = append(list, dynamic.tool)
		}
		page, next, err := server.Paginate(list, p.Cursor, 0)
		if err != nil {
			return nil, err
		}
		return &mcp.ListToolsResult{Tools: page, NextCursor: next}, nil
	})
	f.srv.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		d, ok := f.tools[p.Name]
		if !ok && p.Name == dynamicToolName && f.hasDynamicTool() {
			d, ok = dynamic, true
		}
		if !ok {
			return nil, server.InvalidParams("Unknown tool: %s", p.Name)
		}
		return d.call(ctx, req, p)
	})
}

func tool(name, description string, schema json.RawMessage) mcp.Tool {
	return mcp.Tool{Name: name, Description: description, InputSchema: schema}
}

func (f *fixture) hasDynamicTool() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dynamicTool
}

// ---- content ----

func (f *fixture) simpleText(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	return mcp.TextResult("This is a simple text response for testing."), nil
}

func (f *fixture) imageContent(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.NewImageContent(redPixelPNG, "image/png")}}, nil
}

func (f *fixture) audioContent(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.NewAudioContent(silenceWAV, "audio/wav")}}, nil
}

func (f *fixture) embeddedResource(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{
		mcp.NewEmbeddedResource(&mcp.TextResourceContents{
			URI:      "test://embedded-resource",
			MIMEType: "text/plain",
			Text:     "This is an embedded resource content.",
		}),
	}}, nil
}

func (f *fixture) multipleContentTypes(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{
		mcp.NewTextContent("Multiple content types test:"),
		mcp.NewImageContent(redPixelPNG, "image/png"),
		mcp.NewEmbeddedResource(&mcp.TextResourceContents{
			URI:      "test://mixed-content-resource",
			MIMEType: "application/json",
			Text:     `{"test":"data","value":123}`,
		}),
	}}, nil
}

func (f *fixture) errorHandling(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	return mcp.ErrorResult("This tool intentionally returns an error for testing"), nil
}

func (f *fixture) jsonSchema2020(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	var args map[string]any
	if err := p.DecodeArguments(&args); err != nil {
		return nil, server.InvalidParams("Invalid arguments: %v", err)
	}
	b, _ := json.Marshal(args)
	return mcp.TextResult("Received: " + string(b)), nil
}

func (f *fixture) xMCPHeader(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	var args struct {
		Region string `json:"region"`
	}
	if err := p.DecodeArguments(&args); err != nil {
		return nil, server.InvalidParams("Invalid arguments: %v", err)
	}
	return mcp.TextResult("region=" + args.Region), nil
}

// reconnection is the 2025-11-25 SSE polling fixture. 2026-07-28 streams
// cannot be resumed (closing a request's stream cancels it), so it only
// pauses, then completes.
func (f *fixture) reconnection(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	if err := sleep(ctx, 100*time.Millisecond); err != nil {
		return nil, err
	}
	return mcp.TextResult("Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."), nil
}

// ---- notifications on the request's stream ----

func (f *fixture) toolWithLogging(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	steps := []string{"Tool execution started", "Tool processing data", "Tool execution completed"}
	for i, msg := range steps {
		if i > 0 {
			if err := sleep(ctx, 50*time.Millisecond); err != nil {
				return nil, err
			}
		}
		if err := req.Log(ctx, mcp.LevelInfo, "test_tool_with_logging", msg); err != nil {
			return nil, err
		}
	}
	return mcp.TextResult("Tool with logging executed successfully"), nil
}

func (f *fixture) toolWithProgress(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	for i, progress := range []float64{0, 50, 100} {
		if i > 0 {
			if err := sleep(ctx, 50*time.Millisecond); err != nil {
				return nil, err
			}
		}
		if err := req.Progress(ctx, progress, 100, ""); err != nil {
			return nil, err
		}
	}
	return mcp.TextResult("Tool with progress executed successfully"), nil
}

// loggingTool logs at info level. Request.Log sends nothing unless the
// request set io.modelcontextprotocol/logLevel, which the server-stateless
// scenario checks.
func (f *fixture) loggingTool(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	if err := req.Log(ctx, mcp.LevelInfo, "test_logging_tool", "Diagnostic log message"); err != nil {
		return nil, err
	}
	return mcp.TextResult("Logging evaluated"), nil
}

// ---- list changes ----

func (f *fixture) triggerToolChange(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	f.mu.Lock()
	f.dynamicTool = !f.dynamicTool
	added := f.dynamicTool
	f.mu.Unlock()
	f.srv.NotifyToolListChanged()
	return mcp.TextResult(changeText(dynamicToolName, added)), nil
}

func (f *fixture) triggerPromptChange(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	f.mu.Lock()
	f.dynamicPrompt = !f.dynamicPrompt
	added := f.dynamicPrompt
	f.mu.Unlock()
	f.srv.NotifyPromptListChanged()
	return mcp.TextResult(changeText(dynamicPromptName, added)), nil
}

func changeText(name string, added bool) string {
	if added {
		return "Added " + name + "; list_changed sent"
	}
	return "Removed " + name + "; list_changed sent"
}

// ---- capabilities ----

// missingCapability needs sampling. Without it the request fails with
// -32021 and data.requiredCapabilities {"sampling":{}}.
func (f *fixture) missingCapability(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	if req.ClientCapabilities().Sampling == nil {
		return nil, mcp.NewMissingRequiredClientCapabilityError(&mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}})
	}
	return mcp.TextResult("Client declared the sampling capability; proceeding."), nil
}

// ---- tools that need input from the client ----
//
// Under 2026-07-28 a server never sends requests to the client: a tool that
// needs the user or the client's LLM answers with an InputRequiredResult and
// reads the answers from the retry's inputResponses. Each of these tools
// asks under one key and completes once that key is answered.

// sampling asks the client's LLM to answer the prompt argument.
func (f *fixture) sampling(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	var args struct {
		Prompt string `json:"prompt"`
	}
	if err := p.DecodeArguments(&args); err != nil {
		return nil, server.InvalidParams("Invalid arguments: %v", err)
	}
	if args.Prompt == "" {
		return nil, server.InvalidParams("Invalid arguments: prompt is required")
	}
	const key = "llm_response"
	if !p.InputResponses.Has(key) {
		return askOne(req, key, mcp.NewCreateMessageRequest(mcp.CreateMessageRequestParams{
			Messages:  []mcp.SamplingMessage{userMessage(args.Prompt)},
			MaxTokens: 100,
		}))
	}
	r, err := p.InputResponses.Sample(key)
	if err != nil {
		return nil, invalidInputResponse(err)
	}
	return mcp.TextResult("LLM response: " + r.Text()), nil
}

// elicitation asks the user for a username and an email address.
func (f *fixture) elicitation(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	var args struct {
		Message string `json:"message"`
	}
	if err := p.DecodeArguments(&args); err != nil {
		return nil, server.InvalidParams("Invalid arguments: %v", err)
	}
	if args.Message == "" {
		return nil, server.InvalidParams("Invalid arguments: message is required")
	}
	schema := mcp.ElicitRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{
			"username": &mcp.StringSchema{Description: "User's response"},
			"email":    &mcp.StringSchema{Description: "User's email address"},
		},
		Required: []string{"username", "email"},
	}
	return elicitOnce(req, p, "user_info", args.Message, schema)
}

// elicitationDefaults elicits a form whose every field has a default.
func (f *fixture) elicitationDefaults(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	schema := mcp.ElicitRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{
			"name":     &mcp.StringSchema{Description: "User name", Default: "John Doe"},
			"age":      &mcp.NumberSchema{Type: mcp.TypeInteger, Description: "User age", Default: ptr(30.0)},
			"score":    &mcp.NumberSchema{Type: mcp.TypeNumber, Description: "User score", Default: ptr(95.5)},
			"status":   &mcp.UntitledSingleSelectEnumSchema{Description: "User status", Enum: []string{"active", "inactive", "pending"}, Default: "active"},
			"verified": &mcp.BooleanSchema{Description: "Verification status", Default: ptr(true)},
		},
	}
	return elicitOnce(req, p, "defaults", "Please review and update the form fields with defaults", schema)
}

// elicitationEnums elicits a form with each of the five enum variants.
func (f *fixture) elicitationEnums(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	schema := mcp.ElicitRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{
			"untitledSingle": &mcp.UntitledSingleSelectEnumSchema{
				Description: "Choose an option",
				Enum:        []string{"option1", "option2", "option3"},
			},
			"titledSingle": &mcp.TitledSingleSelectEnumSchema{
				Description: "Choose a titled option",
				OneOf: []mcp.EnumOption{
					{Const: "value1", Title: "First Option"},
					{Const: "value2", Title: "Second Option"},
					{Const: "value3", Title: "Third Option"},
				},
			},
			"legacyEnum": &mcp.LegacyTitledEnumSchema{
				Description: "Choose a legacy option",
				Enum:        []string{"opt1", "opt2", "opt3"},
				EnumNames:   []string{"Option One", "Option Two", "Option Three"},
			},
			"untitledMulti": &mcp.UntitledMultiSelectEnumSchema{
				Description: "Choose multiple options",
				Items:       mcp.UntitledEnumItems{Enum: []string{"option1", "option2", "option3"}},
			},
			"titledMulti": &mcp.TitledMultiSelectEnumSchema{
				Description: "Choose multiple titled options",
				Items: mcp.TitledEnumItems{AnyOf: []mcp.EnumOption{
					{Const: "value1", Title: "First Choice"},
					{Const: "value2", Title: "Second Choice"},
					{Const: "value3", Title: "Third Choice"},
				}},
			},
		},
	}
	return elicitOnce(req, p, "enums", "Please select options from the enum fields", schema)
}

// streamingElicitation reports progress on the request's stream and then
// asks for input. The question travels in the result, so the stream holds
// notifications and the response, never a request to the client.
func (f *fixture) streamingElicitation(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
	if err := req.Progress(ctx, 50, 100, "asking for a word"); err != nil {
		return nil, err
	}
	schema := mcp.ElicitRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{"word": &mcp.StringSchema{Description: "Any word"}},
		Required:   []string{"word"},
	}
	return elicitOnce(req, p, "stream_probe", "The streaming probe asks for a word", schema)
}

// elicitOnce asks one form question under key and, once it is answered,
// completes with a text naming the action and content.
func elicitOnce(req *server.Request, p *mcp.CallToolRequestParams, key, message string, schema mcp.ElicitRequestedSchema) (mcp.CallToolOutcome, error) {
	if !p.InputResponses.Has(key) {
		return askOne(req, key, mcp.NewElicitFormRequest(message, schema))
	}
	r, err := p.InputResponses.Elicit(key)
	if err != nil {
		return nil, invalidInputResponse(err)
	}
	content, _ := json.Marshal(r.Content)
	if r.Content == nil {
		content = []byte("{}")
	}
	return mcp.TextResult(fmt.Sprintf("Elicitation completed: action=%s, content=%s", r.Action, content)), nil
}

// askOne answers with an InputRequiredResult holding one request, or with
// -32021 when the request did not declare the capability it needs.
func askOne(req *server.Request, key string, r mcp.InputRequest) (mcp.CallToolOutcome, error) {
	reqs := mcp.InputRequests{key: r}
	if missing := req.ClientCapabilities().MissingFor(reqs); missing != nil {
		return nil, mcp.NewMissingRequiredClientCapabilityError(missing)
	}
	return &mcp.InputRequiredResult{InputRequests: reqs}, nil
}

// invalidInputResponse turns a malformed answer into -32602.
func invalidInputResponse(err error) error {
	var ire *mcp.InputResponseError
	if errors.As(err, &ire) {
		return server.InvalidParams("Invalid params: inputResponses[%q] is not a valid %s result", ire.Key, ire.Method)
	}
	return server.InvalidParams("Invalid params: malformed inputResponses")
}

func userMessage(text string) mcp.SamplingMessage {
	return mcp.SamplingMessage{Role: mcp.RoleUser, Content: mcp.SamplingContent{mcp.NewTextContent(text)}}
}

// ---- helpers ----

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func ptr[T any](v T) *T { return &v }

func makePNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// makeWAV returns 10 ms of a 440 Hz tone: 8 kHz, mono, 16-bit PCM.
func makeWAV() []byte {
	const rate, samples = 8000, 80
	pcm := make([]byte, 0, samples*2)
	for i := range samples {
		v := int16(8000 * math.Sin(2*math.Pi*440*float64(i)/rate))
		pcm = binary.LittleEndian.AppendUint16(pcm, uint16(v))
	}
	var b []byte
	b = append(b, "RIFF"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(36+len(pcm)))
	b = append(b, "WAVEfmt "...)
	b = binary.LittleEndian.AppendUint32(b, 16)     // fmt chunk size
	b = binary.LittleEndian.AppendUint16(b, 1)      // PCM
	b = binary.LittleEndian.AppendUint16(b, 1)      // mono
	b = binary.LittleEndian.AppendUint32(b, rate)   // sample rate
	b = binary.LittleEndian.AppendUint32(b, rate*2) // byte rate
	b = binary.LittleEndian.AppendUint16(b, 2)      // block align
	b = binary.LittleEndian.AppendUint16(b, 16)     // bits per sample
	b = append(b, "data"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(pcm)))
	return slices.Concat(b, pcm)
}
