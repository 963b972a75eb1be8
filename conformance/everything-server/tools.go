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

	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// none is the arguments of a tool that takes none: its inputSchema is
// noArgs, written by hand.
type none struct{}

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

// registerTools registers the tools, in tools/list order: these, then the
// multi-round-trip ones (mrtr.go); test_dynamic_tool joins the end of the
// list while test_trigger_tool_change has added it.
func (f *fixture) registerTools() error {
	s := f.srv
	return errors.Join(
		mcpserver.AddTool(s, tool("test_simple_text", "Returns a simple text response", noArgs), simpleText),
		mcpserver.AddTool(s, tool("test_image_content", "Returns a 1x1 red PNG image", noArgs), imageContent),
		mcpserver.AddTool(s, tool("test_audio_content", "Returns a short WAV audio clip", noArgs), audioContent),
		mcpserver.AddTool(s, tool("test_embedded_resource", "Returns an embedded text resource", noArgs), embeddedResource),
		mcpserver.AddTool(s, tool("test_multiple_content_types", "Returns text, image and resource content", noArgs), multipleContentTypes),
		mcpserver.AddTool(s, tool("test_tool_with_logging", "Sends three log messages while it runs", noArgs), toolWithLogging),
		mcpserver.AddTool(s, tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100", noArgs), toolWithProgress),
		mcpserver.AddTool(s, tool("test_error_handling", "Always fails with a tool error", noArgs), errorHandling),
		mcpserver.AddTool(s, tool("test_sampling", "Asks the client's LLM to answer a prompt",
			json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`)),
			sampling, llmResponse),
		mcpserver.AddTool(s, tool("test_elicitation", "Asks the user for a username and an email address",
			json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`)),
			elicitation, userInfo),
		mcpserver.AddTool(s, tool("test_elicitation_sep1034_defaults", "Elicits a form whose fields all have defaults (SEP-1034)", noArgs),
			elicitationDefaults, defaults),
		mcpserver.AddTool(s, tool("test_elicitation_sep1330_enums", "Elicits a form with every enum variant (SEP-1330)", noArgs), elicitationEnums),
		mcpserver.AddTool(s, tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", jsonSchema2020Tool), jsonSchema2020),
		mcpserver.AddTool(s, tool("test_reconnection", "Completes after a short pause (2025-11-25 SSE polling fixture)", noArgs), reconnection),
		mcpserver.AddTool(s, tool("test_x_mcp_header", "Echoes a parameter that is mirrored into the Mcp-Param-Region header",
			json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","description":"The region","x-mcp-header":"Region"}},"required":["region"]}`)), xMCPHeader),
		mcpserver.AddTool(s, tool("test_missing_capability", "Needs the sampling client capability; fails with -32021 without it", noArgs), missingCapability),
		mcpserver.AddTool(s, tool("test_streaming_elicitation", "Reports progress, then asks for input in its result, never by a request on the stream", noArgs), streamingElicitation),
		mcpserver.AddTool(s, tool("test_logging_tool", "Logs a message, which is sent only if the request set a log level", noArgs), loggingTool),
		mcpserver.AddTool(s, tool("test_trigger_tool_change", "Adds or removes "+dynamicToolName+" and announces the tool list change", noArgs), f.triggerToolChange),
		mcpserver.AddTool(s, tool("test_trigger_prompt_change", "Adds or removes "+dynamicPromptName+" and announces the prompt list change", noArgs), f.triggerPromptChange),
		f.registerMRTRTools(),
		f.registerTaskTools(),
	)
}

func tool(name, description string, schema json.RawMessage) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: description, InputSchema: schema}
}

// ---- content ----

func simpleText(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
	return "This is a simple text response for testing.", nil
}

func imageContent(ctx context.Context, c *mcpserver.Call, _ none) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.NewImageContent(redPixelPNG, "image/png")}}, nil
}

func audioContent(ctx context.Context, c *mcpserver.Call, _ none) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.NewAudioContent(silenceWAV, "audio/wav")}}, nil
}

func embeddedResource(ctx context.Context, c *mcpserver.Call, _ none) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{
		mcp.NewEmbeddedResource(&mcp.TextResourceContents{
			URI:      "test://embedded-resource",
			MIMEType: "text/plain",
			Text:     "This is an embedded resource content.",
		}),
	}}, nil
}

func multipleContentTypes(ctx context.Context, c *mcpserver.Call, _ none) (*mcp.CallToolResult, error) {
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

func errorHandling(ctx context.Context, c *mcpserver.Call, _ none) (*mcp.CallToolResult, error) {
	return mcp.ErrorResult("This tool intentionally returns an error for testing"), nil
}

// jsonSchema2020 echoes its arguments, which mcpserver has validated
// against jsonSchema2020Tool.
func jsonSchema2020(ctx context.Context, c *mcpserver.Call, args map[string]any) (string, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return "", err
	}
	return "Received: " + string(b), nil
}

type regionArgs struct {
	Region string `json:"region"`
}

func xMCPHeader(ctx context.Context, c *mcpserver.Call, args regionArgs) (string, error) {
	return "region=" + args.Region, nil
}

// reconnection is the 2025-11-25 SSE polling fixture. 2026-07-28 streams
// cannot be resumed (closing a request's stream cancels it), so it only
// pauses, then completes.
func reconnection(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
	// On a 2025-11-25 session, close the event stream so that the client
	// resumes it with Last-Event-ID (SEP-1699); elsewhere this does nothing.
	streamhttp.CloseEventStream(ctx)
	if err := sleep(ctx, 100*time.Millisecond); err != nil {
		return "", err
	}
	return "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.", nil
}

// ---- notifications on the request's stream ----

func toolWithLogging(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
	steps := []string{"Tool execution started", "Tool processing data", "Tool execution completed"}
	for i, msg := range steps {
		if i > 0 {
			if err := sleep(ctx, 50*time.Millisecond); err != nil {
				return "", err
			}
		}
		if err := c.Log(ctx, mcp.LevelInfo, "test_tool_with_logging", msg); err != nil {
			return "", err
		}
	}
	return "Tool with logging executed successfully", nil
}

func toolWithProgress(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
	for i, progress := range []float64{0, 50, 100} {
		if i > 0 {
			if err := sleep(ctx, 50*time.Millisecond); err != nil {
				return "", err
			}
		}
		if err := c.Progress(ctx, progress, 100, ""); err != nil {
			return "", err
		}
	}
	return "Tool with progress executed successfully", nil
}

// loggingTool logs at info level. Request.Log sends nothing unless the
// request set io.modelcontextprotocol/logLevel, which the server-stateless
// scenario checks.
func loggingTool(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
	if err := c.Log(ctx, mcp.LevelInfo, "test_logging_tool", "Diagnostic log message"); err != nil {
		return "", err
	}
	return "Logging evaluated", nil
}

// ---- list changes ----

// triggerToolChange adds test_dynamic_tool, or removes it if it is there.
// mcpserver tells listening clients the tool list changed.
func (f *fixture) triggerToolChange(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dynamicTool {
		f.srv.RemoveTools(dynamicToolName)
	} else if err := mcpserver.AddTool(f.srv, tool(dynamicToolName, "Exists only while test_trigger_tool_change has added it", noArgs), simpleText); err != nil {
		return "", err
	}
	f.dynamicTool = !f.dynamicTool
	return changeText(dynamicToolName, f.dynamicTool), nil
}

// triggerPromptChange adds test_dynamic_prompt, or removes it if it is
// there. mcpserver tells listening clients the prompt list changed.
func (f *fixture) triggerPromptChange(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dynamicPrompt {
		f.srv.RemovePrompts(dynamicPromptName)
	} else if err := mcpserver.AddPrompt(f.srv, &mcp.Prompt{Name: dynamicPromptName, Description: "Exists only while test_trigger_prompt_change has added it"}, simplePrompt); err != nil {
		return "", err
	}
	f.dynamicPrompt = !f.dynamicPrompt
	return changeText(dynamicPromptName, f.dynamicPrompt), nil
}

func changeText(name string, added bool) string {
	if added {
		return "Added " + name + "; list_changed sent"
	}
	return "Removed " + name + "; list_changed sent"
}

// ---- capabilities ----

// missingCapability needs sampling. Without it the request fails with
// -32021 and data.requiredCapabilities {"sampling":{}}: a *jsonrpc.Error
// from a body is sent as the protocol error it is.
func missingCapability(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
	if c.ClientCapabilities().Sampling == nil {
		return "", mcp.NewMissingRequiredClientCapabilityError(&mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}})
	}
	return "Client declared the sampling capability; proceeding.", nil
}

// ---- tools that need input from the client ----
//
// Under 2026-07-28 a server never sends requests to the client: a tool that
// needs the user or the client's LLM answers with an InputRequiredResult and
// reads the answers from the retry's inputResponses. Each of these tools
// asks one question under one key and completes once it is answered.
//
// test_sampling, test_elicitation and test_elicitation_sep1034_defaults
// declare their question (mcpserver.Sample, mcpserver.Elicit): mcpserver
// asks it, checks the answer against what was asked and runs the body
// once it is answered. test_elicitation_sep1330_enums and
// test_streaming_elicitation build their InputRequiredResult by hand: the
// first because its form has multi-select (array) fields, which a form
// struct of mcpserver.Elicit cannot hold; the second because it reports
// progress in the very round that asks, before the question goes out,
// while a declared question is asked before the body runs.

type samplingArgs struct {
	Prompt string `json:"prompt"`
}

// llmResponse asks the client's LLM the prompt argument of test_sampling.
var llmResponse = mcpserver.Sample("llm_response", func(a samplingArgs, _ *mcpserver.Call) mcp.CreateMessageRequestParams {
	return mcp.CreateMessageRequestParams{
		Messages:  []mcp.SamplingMessage{userMessage(a.Prompt)},
		MaxTokens: 100,
	}
})

func sampling(ctx context.Context, c *mcpserver.Call, _ samplingArgs) (string, error) {
	return "LLM response: " + llmResponse.Get(c).Text(), nil
}

type elicitationArgs struct {
	Message string `json:"message"`
}

// userInfoForm is the form test_elicitation shows.
type userInfoForm struct {
	Username string `json:"username"`
	Email    string `json:"email"`
}

// userInfo asks the user for a username and an email address, with the
// message argument of test_elicitation. A decline or cancel completes the
// call too: the body reports the action.
var userInfo = mcpserver.Elicit[userInfoForm]("user_info", func(a elicitationArgs, _ *mcpserver.Call) string {
	return a.Message
}).WithSchema(mcp.ElicitRequestedSchema{
	Properties: map[string]mcp.PrimitiveSchemaDefinition{
		"username": &mcp.StringSchema{Description: "User's response"},
		"email":    &mcp.StringSchema{Description: "User's email address"},
	},
	Required: []string{"username", "email"},
}).AllowDecline()

func elicitation(ctx context.Context, c *mcpserver.Call, _ elicitationArgs) (string, error) {
	return completedText(userInfo.Outcome(c)), nil
}

// defaultsForm is the form of test_elicitation_sep1034_defaults; its
// schema (below) gives every field a default and requires none.
type defaultsForm struct {
	Name     string  `json:"name"`
	Age      int     `json:"age"`
	Score    float64 `json:"score"`
	Status   string  `json:"status"`
	Verified bool    `json:"verified"`
}

// defaults elicits a form whose every field has a default.
var defaults = mcpserver.Elicit[defaultsForm]("defaults", func(_ any, _ *mcpserver.Call) string {
	return "Please review and update the form fields with defaults"
}).WithSchema(mcp.ElicitRequestedSchema{
	Properties: map[string]mcp.PrimitiveSchemaDefinition{
		"name":     &mcp.StringSchema{Description: "User name", Default: "John Doe"},
		"age":      &mcp.NumberSchema{Type: mcp.TypeInteger, Description: "User age", Default: ptr(30.0)},
		"score":    &mcp.NumberSchema{Type: mcp.TypeNumber, Description: "User score", Default: ptr(95.5)},
		"status":   &mcp.UntitledSingleSelectEnumSchema{Description: "User status", Enum: []string{"active", "inactive", "pending"}, Default: "active"},
		"verified": &mcp.BooleanSchema{Description: "Verification status", Default: ptr(true)},
	},
}).AllowDecline()

func elicitationDefaults(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
	return completedText(defaults.Outcome(c)), nil
}

// completedText names an elicitation's action and, if accepted, its
// content.
func completedText[T any](e mcpserver.Elicitation[T]) string {
	content := []byte("{}")
	if e.Accepted() {
		content, _ = json.Marshal(e.Content)
	}
	return fmt.Sprintf("Elicitation completed: action=%s, content=%s", e.Action, content)
}

// elicitationEnums elicits a form with each of the five enum variants
// (hand-built: two of them are multi-select arrays).
func elicitationEnums(ctx context.Context, c *mcpserver.Call, _ none) (mcp.CallToolOutcome, error) {
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
	return elicitOnce(c, "enums", "Please select options from the enum fields", schema)
}

// streamingElicitation reports progress on the request's stream and then
// asks for input (hand-built: the progress goes out in the round that
// asks). The question travels in the result, so the stream holds
// notifications and the response, never a request to the client.
func streamingElicitation(ctx context.Context, c *mcpserver.Call, _ none) (mcp.CallToolOutcome, error) {
	if err := c.Progress(ctx, 50, 100, "asking for a word"); err != nil {
		return nil, err
	}
	schema := mcp.ElicitRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{"word": &mcp.StringSchema{Description: "Any word"}},
		Required:   []string{"word"},
	}
	return elicitOnce(c, "stream_probe", "The streaming probe asks for a word", schema)
}

// elicitOnce asks one form question under key and, once it is answered,
// completes with a text naming the action and content.
func elicitOnce(c *mcpserver.Call, key, message string, schema mcp.ElicitRequestedSchema) (mcp.CallToolOutcome, error) {
	responses := c.InputResponses()
	if !responses.Has(key) {
		return askOne(c, key, mcp.NewElicitFormRequest(message, schema))
	}
	r, err := responses.Elicit(key)
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
func askOne(c *mcpserver.Call, key string, r mcp.InputRequest) (mcp.CallToolOutcome, error) {
	reqs := mcp.InputRequests{key: r}
	if missing := c.ClientCapabilities().MissingFor(reqs); missing != nil {
		return nil, mcp.NewMissingRequiredClientCapabilityError(missing)
	}
	return &mcp.InputRequiredResult{InputRequests: reqs}, nil
}

// invalidInputResponse turns a malformed answer into -32602.
func invalidInputResponse(err error) error {
	var ire *mcp.InputResponseError
	if errors.As(err, &ire) {
		return wire.InvalidParams("Invalid params: inputResponses[%q] is not a valid %s result", ire.Key, ire.Method)
	}
	return wire.InvalidParams("Invalid params: malformed inputResponses")
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
