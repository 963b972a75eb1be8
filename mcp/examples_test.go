package mcp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/mcp"
)

// union adapts a union decoder to encoding/json so that a union definition
// can sit in the factory table like any other type.
type union[T any] struct {
	v      T
	decode func([]byte) (T, error)
}

func (u *union[T]) UnmarshalJSON(b []byte) error {
	v, err := u.decode(b)
	u.v = v
	return err
}

func (u *union[T]) MarshalJSON() ([]byte, error) { return json.Marshal(u.v) }

func unionOf[T any](decode func([]byte) (T, error)) func() any {
	return func() any { return &union[T]{decode: decode} }
}

func narrow[T any](what string) func([]byte) (T, error) {
	return func(b []byte) (T, error) {
		var zero T
		d, err := mcp.DecodePrimitiveSchemaDefinition(b)
		if err != nil {
			return zero, err
		}
		v, ok := d.(T)
		if !ok {
			return zero, fmt.Errorf("%T is not a %s", d, what)
		}
		return v, nil
	}
}

// factories maps every definition of the 2026-07-28 schema to a value of
// its Go type to decode into. The key is the schema name, which is also the
// Go type name (see TestFactoryNames for the few aliases).
var factories = map[string]func() any{
	"Annotations":                           func() any { return new(mcp.Annotations) },
	"AudioContent":                          func() any { return new(mcp.AudioContent) },
	"BaseMetadata":                          func() any { return new(mcp.BaseMetadata) },
	"BlobResourceContents":                  func() any { return new(mcp.BlobResourceContents) },
	"BooleanSchema":                         func() any { return new(mcp.BooleanSchema) },
	"CacheableResult":                       func() any { return new(mcp.CacheableResult) },
	"CallToolRequest":                       func() any { return new(CallToolRequest) },
	"CallToolRequestParams":                 func() any { return new(mcp.CallToolRequestParams) },
	"CallToolResult":                        func() any { return new(mcp.CallToolResult) },
	"CallToolResultResponse":                func() any { return new(CallToolResultResponse) },
	"CancelledNotification":                 func() any { return new(CancelledNotification) },
	"CancelledNotificationParams":           func() any { return new(mcp.CancelledNotificationParams) },
	"ClientCapabilities":                    func() any { return new(mcp.ClientCapabilities) },
	"ClientNotification":                    unionOf(DecodeClientNotification),
	"ClientRequest":                         unionOf(DecodeClientRequest),
	"ClientResult":                          func() any { return new(mcp.ClientResult) },
	"CompleteRequest":                       func() any { return new(CompleteRequest) },
	"CompleteRequestParams":                 func() any { return new(mcp.CompleteRequestParams) },
	"CompleteResult":                        func() any { return new(mcp.CompleteResult) },
	"CompleteResultResponse":                func() any { return new(CompleteResultResponse) },
	"ContentBlock":                          unionOf(mcp.DecodeContentBlock),
	"CreateMessageRequest":                  func() any { return new(mcp.CreateMessageRequest) },
	"CreateMessageRequestParams":            func() any { return new(mcp.CreateMessageRequestParams) },
	"CreateMessageResult":                   func() any { return new(mcp.CreateMessageResult) },
	"Cursor":                                func() any { return new(mcp.Cursor) },
	"DiscoverRequest":                       func() any { return new(DiscoverRequest) },
	"DiscoverResult":                        func() any { return new(mcp.DiscoverResult) },
	"DiscoverResultResponse":                func() any { return new(DiscoverResultResponse) },
	"ElicitRequest":                         func() any { return new(mcp.ElicitRequest) },
	"ElicitRequestFormParams":               func() any { return new(mcp.ElicitRequestFormParams) },
	"ElicitRequestParams":                   unionOf(mcp.DecodeElicitRequestParams),
	"ElicitRequestURLParams":                func() any { return new(mcp.ElicitRequestURLParams) },
	"ElicitResult":                          func() any { return new(mcp.ElicitResult) },
	"EmbeddedResource":                      func() any { return new(mcp.EmbeddedResource) },
	"EmptyResult":                           func() any { return new(mcp.EmptyResult) },
	"EnumSchema":                            unionOf(narrow[mcp.EnumSchema]("EnumSchema")),
	"Error":                                 func() any { return new(mcp.Error) },
	"GetPromptRequest":                      func() any { return new(GetPromptRequest) },
	"GetPromptRequestParams":                func() any { return new(mcp.GetPromptRequestParams) },
	"GetPromptResult":                       func() any { return new(mcp.GetPromptResult) },
	"GetPromptResultResponse":               func() any { return new(GetPromptResultResponse) },
	"HeaderMismatchError":                   func() any { return new(HeaderMismatchError) },
	"Icon":                                  func() any { return new(mcp.Icon) },
	"Icons":                                 func() any { return new(mcp.Icons) },
	"ImageContent":                          func() any { return new(mcp.ImageContent) },
	"Implementation":                        func() any { return new(mcp.Implementation) },
	"InputRequest":                          unionOf(mcp.DecodeInputRequest),
	"InputRequests":                         func() any { return new(mcp.InputRequests) },
	"InputRequiredResult":                   func() any { return new(mcp.InputRequiredResult) },
	"InputResponse":                         func() any { return new(json.RawMessage) }, // no discriminator: decoded by InputResponses accessors
	"InputResponseRequestParams":            func() any { return new(mcp.InputResponseRequestParams) },
	"InputResponses":                        func() any { return new(mcp.InputResponses) },
	"InternalError":                         func() any { return new(mcp.InternalError) },
	"InvalidParamsError":                    func() any { return new(mcp.InvalidParamsError) },
	"InvalidRequestError":                   func() any { return new(mcp.InvalidRequestError) },
	"JSONArray":                             func() any { return new(mcp.JSONArray) },
	"JSONObject":                            func() any { return new(mcp.JSONObject) },
	"JSONRPCErrorResponse":                  func() any { return new(JSONRPCErrorResponse) },
	"JSONRPCMessage":                        func() any { return new(JSONRPCMessage) },
	"JSONRPCNotification":                   func() any { return new(JSONRPCNotification) },
	"JSONRPCRequest":                        func() any { return new(JSONRPCRequest) },
	"JSONRPCResponse":                       func() any { return new(JSONRPCResponse) },
	"JSONRPCResultResponse":                 func() any { return new(JSONRPCResultResponse) },
	"JSONValue":                             func() any { return new(mcp.JSONValue) },
	"LegacyTitledEnumSchema":                func() any { return new(mcp.LegacyTitledEnumSchema) },
	"ListPromptsRequest":                    func() any { return new(ListPromptsRequest) },
	"ListPromptsResult":                     func() any { return new(mcp.ListPromptsResult) },
	"ListPromptsResultResponse":             func() any { return new(ListPromptsResultResponse) },
	"ListResourceTemplatesRequest":          func() any { return new(ListResourceTemplatesRequest) },
	"ListResourceTemplatesResult":           func() any { return new(mcp.ListResourceTemplatesResult) },
	"ListResourceTemplatesResultResponse":   func() any { return new(ListResourceTemplatesResultResponse) },
	"ListResourcesRequest":                  func() any { return new(ListResourcesRequest) },
	"ListResourcesResult":                   func() any { return new(mcp.ListResourcesResult) },
	"ListResourcesResultResponse":           func() any { return new(ListResourcesResultResponse) },
	"ListRootsRequest":                      func() any { return new(mcp.ListRootsRequest) },
	"ListRootsResult":                       func() any { return new(mcp.ListRootsResult) },
	"ListToolsRequest":                      func() any { return new(ListToolsRequest) },
	"ListToolsResult":                       func() any { return new(mcp.ListToolsResult) },
	"ListToolsResultResponse":               func() any { return new(ListToolsResultResponse) },
	"LoggingLevel":                          func() any { return new(mcp.LoggingLevel) },
	"LoggingMessageNotification":            func() any { return new(LoggingMessageNotification) },
	"LoggingMessageNotificationParams":      func() any { return new(mcp.LoggingMessageNotificationParams) },
	"MetaObject":                            func() any { return new(mcp.MetaObject) },
	"MethodNotFoundError":                   func() any { return new(mcp.MethodNotFoundError) },
	"MissingRequiredClientCapabilityError":  func() any { return new(MissingRequiredClientCapabilityError) },
	"ModelHint":                             func() any { return new(mcp.ModelHint) },
	"ModelPreferences":                      func() any { return new(mcp.ModelPreferences) },
	"MultiSelectEnumSchema":                 unionOf(narrow[mcp.MultiSelectEnumSchema]("MultiSelectEnumSchema")),
	"Notification":                          func() any { return new(Notification) },
	"NotificationMetaObject":                func() any { return new(mcp.NotificationMetaObject) },
	"NotificationParams":                    func() any { return new(mcp.NotificationParams) },
	"NumberSchema":                          func() any { return new(mcp.NumberSchema) },
	"PaginatedRequest":                      func() any { return new(PaginatedRequest) },
	"PaginatedRequestParams":                func() any { return new(mcp.PaginatedRequestParams) },
	"PaginatedResult":                       func() any { return new(mcp.PaginatedResult) },
	"ParseError":                            func() any { return new(mcp.ParseError) },
	"PrimitiveSchemaDefinition":             unionOf(mcp.DecodePrimitiveSchemaDefinition),
	"ProgressNotification":                  func() any { return new(ProgressNotification) },
	"ProgressNotificationParams":            func() any { return new(mcp.ProgressNotificationParams) },
	"ProgressToken":                         func() any { return new(mcp.ProgressToken) },
	"Prompt":                                func() any { return new(mcp.Prompt) },
	"PromptArgument":                        func() any { return new(mcp.PromptArgument) },
	"PromptListChangedNotification":         func() any { return new(PromptListChangedNotification) },
	"PromptMessage":                         func() any { return new(mcp.PromptMessage) },
	"PromptReference":                       func() any { return new(mcp.PromptReference) },
	"ReadResourceRequest":                   func() any { return new(ReadResourceRequest) },
	"ReadResourceRequestParams":             func() any { return new(mcp.ReadResourceRequestParams) },
	"ReadResourceResult":                    func() any { return new(mcp.ReadResourceResult) },
	"ReadResourceResultResponse":            func() any { return new(ReadResourceResultResponse) },
	"Request":                               func() any { return new(Request) },
	"RequestId":                             func() any { return new(mcp.RequestID) },
	"RequestMetaObject":                     func() any { return new(mcp.RequestMetaObject) },
	"RequestParams":                         func() any { return new(mcp.RequestParams) },
	"Resource":                              func() any { return new(mcp.Resource) },
	"ResourceContents":                      unionOf(mcp.DecodeResourceContents),
	"ResourceLink":                          func() any { return new(mcp.ResourceLink) },
	"ResourceListChangedNotification":       func() any { return new(ResourceListChangedNotification) },
	"ResourceRequestParams":                 func() any { return new(mcp.ResourceRequestParams) },
	"ResourceTemplate":                      func() any { return new(mcp.ResourceTemplate) },
	"ResourceTemplateReference":             func() any { return new(mcp.ResourceTemplateReference) },
	"ResourceUpdatedNotification":           func() any { return new(ResourceUpdatedNotification) },
	"ResourceUpdatedNotificationParams":     func() any { return new(mcp.ResourceUpdatedNotificationParams) },
	"Result":                                func() any { return new(mcp.Result) },
	"ResultMetaObject":                      func() any { return new(mcp.ResultMetaObject) },
	"ResultType":                            func() any { return new(mcp.ResultType) },
	"Role":                                  func() any { return new(mcp.Role) },
	"Root":                                  func() any { return new(mcp.Root) },
	"SamplingMessage":                       func() any { return new(mcp.SamplingMessage) },
	"SamplingMessageContentBlock":           unionOf(mcp.DecodeSamplingMessageContentBlock),
	"ServerCapabilities":                    func() any { return new(mcp.ServerCapabilities) },
	"ServerNotification":                    unionOf(DecodeServerNotification),
	"ServerResult":                          func() any { return new(mcp.Result) }, // decoded per method by mcp.DecodeResult
	"SingleSelectEnumSchema":                unionOf(narrow[mcp.SingleSelectEnumSchema]("SingleSelectEnumSchema")),
	"StringSchema":                          func() any { return new(mcp.StringSchema) },
	"SubscriptionFilter":                    func() any { return new(mcp.SubscriptionFilter) },
	"SubscriptionsAcknowledgedNotification": func() any { return new(SubscriptionsAcknowledgedNotification) },
	"SubscriptionsAcknowledgedNotificationParams": func() any { return new(mcp.SubscriptionsAcknowledgedNotificationParams) },
	"SubscriptionsListenRequest":                  func() any { return new(SubscriptionsListenRequest) },
	"SubscriptionsListenRequestParams":            func() any { return new(mcp.SubscriptionsListenRequestParams) },
	"SubscriptionsListenResult":                   func() any { return new(mcp.SubscriptionsListenResult) },
	"SubscriptionsListenResultMetaObject":         func() any { return new(mcp.SubscriptionsListenResultMetaObject) },
	"SubscriptionsListenResultResponse":           func() any { return new(SubscriptionsListenResultResponse) },
	"TextContent":                                 func() any { return new(mcp.TextContent) },
	"TextResourceContents":                        func() any { return new(mcp.TextResourceContents) },
	"TitledMultiSelectEnumSchema":                 func() any { return new(mcp.TitledMultiSelectEnumSchema) },
	"TitledSingleSelectEnumSchema":                func() any { return new(mcp.TitledSingleSelectEnumSchema) },
	"Tool":                                        func() any { return new(mcp.Tool) },
	"ToolAnnotations":                             func() any { return new(mcp.ToolAnnotations) },
	"ToolChoice":                                  func() any { return new(mcp.ToolChoice) },
	"ToolListChangedNotification":                 func() any { return new(ToolListChangedNotification) },
	"ToolResultContent":                           func() any { return new(mcp.ToolResultContent) },
	"ToolUseContent":                              func() any { return new(mcp.ToolUseContent) },
	"UnsupportedProtocolVersionError":             func() any { return new(UnsupportedProtocolVersionError) },
	"UntitledMultiSelectEnumSchema":               func() any { return new(mcp.UntitledMultiSelectEnumSchema) },
	"UntitledSingleSelectEnumSchema":              func() any { return new(mcp.UntitledSingleSelectEnumSchema) },
}

// roundTripExceptions lists the example files that cannot decode and
// re-encode to the same JSON, and why. TestExamples fails if any of them
// starts to round-trip, so the list cannot go stale.
var roundTripExceptions = map[string]string{
	"CallToolResult/result-with-unstructured-text.json":             `"isError": false is dropped: IsError is a bool with omitempty (absent means false)`,
	"CallToolResultResponse/call-tool-result-response.json":         `"isError": false is dropped: IsError is a bool with omitempty (absent means false)`,
	"CompleteResult/single-completion-value.json":                   `"hasMore": false is dropped: HasMore is a bool with omitempty (absent means false)`,
	"CompleteResultResponse/completion-result-response.json":        `"hasMore": false is dropped: HasMore is a bool with omitempty (absent means false)`,
	"ListRootsRequest/list-roots-request.json":                      `stale example: carries an "id", which embedded input requests no longer have`,
	"ReadResourceResultResponse/read-resource-result-response.json": `stale example: lacks the required ttlMs and cacheScope; re-encoding writes "ttlMs": 0`,
}

// schemaExceptions lists the example files that do not conform to the
// schema themselves. TestExamples fails if any of them starts to conform.
var schemaExceptions = map[string]string{
	"ReadResourceResultResponse/read-resource-result-response.json": "lacks the required ttlMs and cacheScope",
}

// encodedSchemaExceptions lists the example files whose re-encoding does not
// conform to the schema.
var encodedSchemaExceptions = map[string]string{
	"ReadResourceResultResponse/read-resource-result-response.json": "the decoded result has no cacheScope, which is written only when set",
}

func TestExamples(t *testing.T) {
	examples := spectest.Examples(t, mcp.Version20260728)
	seen := map[string]bool{}
	for _, ex := range examples {
		key := ex.Type + "/" + ex.Name
		seen[key] = true
		t.Run(key, func(t *testing.T) {
			factory, ok := factories[ex.Type]
			if !ok {
				t.Fatalf("no Go type for example folder %s: add it to the factory map", ex.Type)
			}
			checkSchema(t, key, "example", checkExample(ex.Type, ex.Data), schemaExceptions)

			v := factory()
			dec := json.NewDecoder(bytes.NewReader(ex.Data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(v); err != nil {
				if _, ok := roundTripExceptions[key]; ok {
					return
				}
				t.Fatalf("decode into %T: %v", v, err)
			}
			out, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("encode %T: %v", v, err)
			}
			diff := jsonDiff(ex.Data, out)
			reason, excepted := roundTripExceptions[key]
			switch {
			case diff != "" && !excepted:
				t.Errorf("round trip through %T changed the JSON: %s\n got: %s\nwant: %s", v, diff, out, compact(ex.Data))
			case diff == "" && excepted:
				t.Errorf("listed as an exception (%s) but now round-trips: remove it from roundTripExceptions", reason)
			}
			checkSchema(t, key, "re-encoding", checkExample(ex.Type, out), encodedSchemaExceptions)
		})
	}
	for _, table := range []map[string]string{roundTripExceptions, schemaExceptions, encodedSchemaExceptions} {
		for key := range table {
			if !seen[key] {
				t.Errorf("exception for %s, which is not an example file", key)
			}
		}
	}
}

// checkExample validates data against the definition def. A whole response
// is also checked by its result's own definition, because the schema's
// response definitions accept any result that looks like an
// InputRequiredResult (which needs nothing but resultType).
func checkExample(def string, data []byte) error {
	if err := spectest.Check(mcp.Version20260728, def, data); err != nil {
		return err
	}
	if base, ok := strings.CutSuffix(def, "ResultResponse"); ok {
		var msg struct{ Result json.RawMessage }
		if err := json.Unmarshal(data, &msg); err != nil {
			return err
		}
		return spectest.Check(mcp.Version20260728, base+"Result", msg.Result)
	}
	return nil
}

func checkSchema(t *testing.T, key, what string, err error, exceptions map[string]string) {
	t.Helper()
	reason, excepted := exceptions[key]
	switch {
	case err != nil && !excepted:
		t.Errorf("%s does not conform to the schema: %v", what, err)
	case err == nil && excepted:
		t.Errorf("%s is listed as not conforming (%s) but now conforms: remove the exception", what, reason)
	}
}

// TestFactoryCoversSchema checks that every definition of the schema has a
// Go type in the factory map, and nothing else is there.
func TestFactoryCoversSchema(t *testing.T) {
	path := filepath.Join(spectest.Dir(t), string(mcp.Version20260728), "schema.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	for name := range schema.Defs {
		if _, ok := factories[name]; !ok {
			t.Errorf("schema definition %s has no Go type in the factory map", name)
		}
	}
	for name := range factories {
		if _, ok := schema.Defs[name]; !ok {
			t.Errorf("factory %s names no schema definition", name)
		}
	}
	if len(schema.Defs) != 155 {
		t.Logf("schema has %d definitions", len(schema.Defs))
	}
}

// TestFactoryNames checks that each factory makes the Go type of the same
// name, apart from the listed aliases and unions.
func TestFactoryNames(t *testing.T) {
	aliases := map[string]string{
		"ClientResult":                        "Result",
		"EmptyResult":                         "Result",
		"ServerResult":                        "Result",
		"Cursor":                              "string",
		"RequestId":                           "ID",
		"ProgressToken":                       "ID",
		"SubscriptionsListenResultMetaObject": "ResultMetaObject",
		"JSONObject":                          "",
		"JSONArray":                           "",
		"JSONValue":                           "",
		"InputResponse":                       "RawMessage",
	}
	names := make([]string, 0, len(factories))
	for name := range factories {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		typ := reflect.TypeOf(factories[name]()).Elem()
		got := typ.Name()
		if typ.Kind() == reflect.Struct && typ.NumField() == 2 && typ.Field(1).Name == "decode" {
			continue // a union adapter
		}
		want := name
		if a, ok := aliases[name]; ok {
			want = a
		}
		if got != want {
			t.Errorf("factory %s makes %v (named %q)", name, typ, got)
		}
	}
}

// jsonDiff compares two JSON texts semantically (numbers by value) and
// describes the first difference, or returns "".
func jsonDiff(a, b []byte) string {
	va, err := decodeNumbers(a)
	if err != nil {
		return "left is not JSON: " + err.Error()
	}
	vb, err := decodeNumbers(b)
	if err != nil {
		return "right is not JSON: " + err.Error()
	}
	return diffValues("$", va, vb)
}

func decodeNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func diffValues(path string, a, b any) string {
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: object vs %T", path, b)
		}
		keys := map[string]bool{}
		for k := range a {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			av, aok := a[k]
			bv, bok := bm[k]
			switch {
			case !aok:
				return fmt.Sprintf("%s.%s: added", path, k)
			case !bok:
				return fmt.Sprintf("%s.%s: dropped", path, k)
			}
			if d := diffValues(path+"."+k, av, bv); d != "" {
				return d
			}
		}
		return ""
	case []any:
		bs, ok := b.([]any)
		if !ok || len(a) != len(bs) {
			return fmt.Sprintf("%s: array of %d vs %v", path, len(a), b)
		}
		for i := range a {
			if d := diffValues(fmt.Sprintf("%s[%d]", path, i), a[i], bs[i]); d != "" {
				return d
			}
		}
		return ""
	case json.Number:
		bn, ok := b.(json.Number)
		if !ok {
			return fmt.Sprintf("%s: number vs %T", path, b)
		}
		ra, _ := new(big.Rat).SetString(a.String())
		rb, _ := new(big.Rat).SetString(bn.String())
		if ra == nil || rb == nil || ra.Cmp(rb) != 0 {
			return fmt.Sprintf("%s: %s vs %s", path, a, bn)
		}
		return ""
	default:
		if !reflect.DeepEqual(a, b) {
			return fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
		return ""
	}
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}
