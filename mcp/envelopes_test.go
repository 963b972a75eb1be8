package mcp_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
)

// This file holds the whole-message types of the schema (moved here from
// internal/spectest, whose schema checks know nothing of package mcp): each request,
// notification and response with its jsonrpc, id, method and params or
// result, as Go types named as the schema names them, so that tests can
// decode the specification's example messages into them. Parley itself
// never uses them: its connection layer (package jsonrpc) moves raw params
// and results, decoded once into the types of package mcp.

// JSONRPCVersion is the "jsonrpc" member. It always encodes as "2.0" and
// decodes only "2.0", so envelopes never need it set.
type JSONRPCVersion struct{}

// MarshalJSON writes "2.0".
func (JSONRPCVersion) MarshalJSON() ([]byte, error) { return []byte(`"2.0"`), nil }

// UnmarshalJSON accepts only "2.0".
func (*JSONRPCVersion) UnmarshalJSON(data []byte) error {
	if string(data) != `"2.0"` {
		return fmt.Errorf(`spectest: "jsonrpc" must be "2.0", not %s`, data)
	}
	return nil
}

// ErrUnknownMethod is matched by the error of the union decoders for a
// message whose method the union does not include.
var ErrUnknownMethod = errors.New("envelopes: unknown method")

// JSONRPCRequest is any request, with raw params.
type JSONRPCRequest struct {
	JSONRPC JSONRPCVersion  `json:"jsonrpc"`          // always "2.0"
	ID      mcp.RequestID   `json:"id"`               // the request id
	Method  string          `json:"method"`           // the method name
	Params  json.RawMessage `json:"params,omitempty"` // the params
}

// JSONRPCNotification is any notification, with raw params.
type JSONRPCNotification struct {
	JSONRPC JSONRPCVersion  `json:"jsonrpc"`          // always "2.0"
	Method  string          `json:"method"`           // the method name
	Params  json.RawMessage `json:"params,omitempty"` // the params
}

// JSONRPCResultResponse is any successful response, with a raw result.
type JSONRPCResultResponse struct {
	JSONRPC JSONRPCVersion  `json:"jsonrpc"` // always "2.0"
	ID      mcp.RequestID   `json:"id"`      // the id of the request answered
	Result  json.RawMessage `json:"result"`  // the result
}

// JSONRPCErrorResponse is any error response. ID is omitted when zero (the
// request's id could not be read).
type JSONRPCErrorResponse struct {
	JSONRPC JSONRPCVersion `json:"jsonrpc"`     // always "2.0"
	ID      mcp.RequestID  `json:"id,omitzero"` // the id of the request answered
	Error   *wire.Error    `json:"error"`       // the error object
}

// JSONRPCResponse is any response: exactly one of Result and Error is set.
type JSONRPCResponse struct {
	JSONRPC JSONRPCVersion  `json:"jsonrpc"`          // always "2.0"
	ID      mcp.RequestID   `json:"id,omitzero"`      // the id of the request answered
	Result  json.RawMessage `json:"result,omitempty"` // the result
	Error   *wire.Error     `json:"error,omitempty"`  // the error object
}

// JSONRPCMessage is any message in one struct; which members are set says
// what it is. To read messages off a connection, use jsonrpc.DecodeMessage,
// which also validates them.
type JSONRPCMessage struct {
	JSONRPC JSONRPCVersion  `json:"jsonrpc"`          // always "2.0"
	ID      mcp.RequestID   `json:"id,omitzero"`      // the request id
	Method  string          `json:"method,omitempty"` // the method name
	Params  json.RawMessage `json:"params,omitempty"` // the params
	Result  json.RawMessage `json:"result,omitempty"` // the result
	Error   *wire.Error     `json:"error,omitempty"`  // the error object
}

// IsRequest reports whether m is a request (a method and an id).
func (m *JSONRPCMessage) IsRequest() bool { return m.Method != "" && m.ID.IsValid() }

// IsNotification reports whether m is a notification (a method, no id).
func (m *JSONRPCMessage) IsNotification() bool { return m.Method != "" && !m.ID.IsValid() }

// IsResponse reports whether m is a response (a result or an error).
func (m *JSONRPCMessage) IsResponse() bool {
	return m.Method == "" && (m.Result != nil || m.Error != nil)
}

// Request is the schema's base request shape, without jsonrpc and id.
type Request struct {
	Method string          `json:"method"`           // the method name
	Params json.RawMessage `json:"params,omitempty"` // the params
}

// Notification is the schema's base notification shape, without jsonrpc.
type Notification struct {
	Method string          `json:"method"`           // the method name
	Params json.RawMessage `json:"params,omitempty"` // the params
}

// Requests.

// DiscoverRequest is a whole server/discover request.
type DiscoverRequest struct {
	JSONRPC JSONRPCVersion    `json:"jsonrpc"` // always "2.0"
	ID      mcp.RequestID     `json:"id"`      // the request id
	Method  string            `json:"method"`  // the method name
	Params  mcp.RequestParams `json:"params"`  // the params
}

// PaginatedRequest is a whole request to any list method.
type PaginatedRequest struct {
	JSONRPC JSONRPCVersion             `json:"jsonrpc"` // always "2.0"
	ID      mcp.RequestID              `json:"id"`      // the request id
	Method  string                     `json:"method"`  // the method name
	Params  mcp.PaginatedRequestParams `json:"params"`  // the params
}

// ListToolsRequest is a whole tools/list request.
type ListToolsRequest PaginatedRequest

// ListPromptsRequest is a whole prompts/list request.
type ListPromptsRequest PaginatedRequest

// ListResourcesRequest is a whole resources/list request.
type ListResourcesRequest PaginatedRequest

// ListResourceTemplatesRequest is a whole resources/templates/list request.
type ListResourceTemplatesRequest PaginatedRequest

// CallToolRequest is a whole tools/call request.
type CallToolRequest struct {
	JSONRPC JSONRPCVersion            `json:"jsonrpc"` // always "2.0"
	ID      mcp.RequestID             `json:"id"`      // the request id
	Method  string                    `json:"method"`  // the method name
	Params  mcp.CallToolRequestParams `json:"params"`  // the params
}

// GetPromptRequest is a whole prompts/get request.
type GetPromptRequest struct {
	JSONRPC JSONRPCVersion             `json:"jsonrpc"` // always "2.0"
	ID      mcp.RequestID              `json:"id"`      // the request id
	Method  string                     `json:"method"`  // the method name
	Params  mcp.GetPromptRequestParams `json:"params"`  // the params
}

// ReadResourceRequest is a whole resources/read request.
type ReadResourceRequest struct {
	JSONRPC JSONRPCVersion                `json:"jsonrpc"` // always "2.0"
	ID      mcp.RequestID                 `json:"id"`      // the request id
	Method  string                        `json:"method"`  // the method name
	Params  mcp.ReadResourceRequestParams `json:"params"`  // the params
}

// CompleteRequest is a whole completion/complete request.
type CompleteRequest struct {
	JSONRPC JSONRPCVersion            `json:"jsonrpc"` // always "2.0"
	ID      mcp.RequestID             `json:"id"`      // the request id
	Method  string                    `json:"method"`  // the method name
	Params  mcp.CompleteRequestParams `json:"params"`  // the params
}

// SubscriptionsListenRequest is a whole subscriptions/listen request.
type SubscriptionsListenRequest struct {
	JSONRPC JSONRPCVersion                       `json:"jsonrpc"` // always "2.0"
	ID      mcp.RequestID                        `json:"id"`      // the request id
	Method  string                               `json:"method"`  // the method name
	Params  mcp.SubscriptionsListenRequestParams `json:"params"`  // the params
}

// Notifications.

// CancelledNotification is a whole notifications/cancelled.
type CancelledNotification struct {
	JSONRPC JSONRPCVersion                  `json:"jsonrpc"` // always "2.0"
	Method  string                          `json:"method"`  // the method name
	Params  mcp.CancelledNotificationParams `json:"params"`  // the params
}

// ProgressNotification is a whole notifications/progress.
type ProgressNotification struct {
	JSONRPC JSONRPCVersion                 `json:"jsonrpc"` // always "2.0"
	Method  string                         `json:"method"`  // the method name
	Params  mcp.ProgressNotificationParams `json:"params"`  // the params
}

// LoggingMessageNotification is a whole notifications/message.
type LoggingMessageNotification struct {
	JSONRPC JSONRPCVersion                       `json:"jsonrpc"` // always "2.0"
	Method  string                               `json:"method"`  // the method name
	Params  mcp.LoggingMessageNotificationParams `json:"params"`  // the params
}

// ResourceUpdatedNotification is a whole notifications/resources/updated.
type ResourceUpdatedNotification struct {
	JSONRPC JSONRPCVersion                        `json:"jsonrpc"` // always "2.0"
	Method  string                                `json:"method"`  // the method name
	Params  mcp.ResourceUpdatedNotificationParams `json:"params"`  // the params
}

// SubscriptionsAcknowledgedNotification is a whole
// notifications/subscriptions/acknowledged.
type SubscriptionsAcknowledgedNotification struct {
	JSONRPC JSONRPCVersion                                  `json:"jsonrpc"` // always "2.0"
	Method  string                                          `json:"method"`  // the method name
	Params  mcp.SubscriptionsAcknowledgedNotificationParams `json:"params"`  // the params
}

// ListChangedNotification is the shape of the three list_changed
// notifications, whose params are optional.
type ListChangedNotification struct {
	JSONRPC JSONRPCVersion          `json:"jsonrpc"`          // always "2.0"
	Method  string                  `json:"method"`           // the method name
	Params  *mcp.NotificationParams `json:"params,omitempty"` // the params
}

// ResourceListChangedNotification is a whole
// notifications/resources/list_changed.
type ResourceListChangedNotification ListChangedNotification

// ToolListChangedNotification is a whole notifications/tools/list_changed.
type ToolListChangedNotification ListChangedNotification

// PromptListChangedNotification is a whole
// notifications/prompts/list_changed.
type PromptListChangedNotification ListChangedNotification

// Responses.

// DiscoverResultResponse is a whole response to server/discover.
type DiscoverResultResponse struct {
	JSONRPC JSONRPCVersion     `json:"jsonrpc"` // always "2.0"
	ID      mcp.RequestID      `json:"id"`      // the id of the request answered
	Result  mcp.DiscoverResult `json:"result"`  // the result
}

// ListToolsResultResponse is a whole response to tools/list.
type ListToolsResultResponse struct {
	JSONRPC JSONRPCVersion      `json:"jsonrpc"` // always "2.0"
	ID      mcp.RequestID       `json:"id"`      // the id of the request answered
	Result  mcp.ListToolsResult `json:"result"`  // the result
}

// ListPromptsResultResponse is a whole response to prompts/list.
type ListPromptsResultResponse struct {
	JSONRPC JSONRPCVersion        `json:"jsonrpc"` // always "2.0"
	ID      mcp.RequestID         `json:"id"`      // the id of the request answered
	Result  mcp.ListPromptsResult `json:"result"`  // the result
}

// ListResourcesResultResponse is a whole response to resources/list.
type ListResourcesResultResponse struct {
	JSONRPC JSONRPCVersion          `json:"jsonrpc"` // always "2.0"
	ID      mcp.RequestID           `json:"id"`      // the id of the request answered
	Result  mcp.ListResourcesResult `json:"result"`  // the result
}

// ListResourceTemplatesResultResponse is a whole response to
// resources/templates/list.
type ListResourceTemplatesResultResponse struct {
	JSONRPC JSONRPCVersion                  `json:"jsonrpc"` // always "2.0"
	ID      mcp.RequestID                   `json:"id"`      // the id of the request answered
	Result  mcp.ListResourceTemplatesResult `json:"result"`  // the result
}

// CompleteResultResponse is a whole response to completion/complete.
type CompleteResultResponse struct {
	JSONRPC JSONRPCVersion     `json:"jsonrpc"` // always "2.0"
	ID      mcp.RequestID      `json:"id"`      // the id of the request answered
	Result  mcp.CompleteResult `json:"result"`  // the result
}

// SubscriptionsListenResultResponse is the whole response that ends a
// subscriptions/listen stream.
type SubscriptionsListenResultResponse struct {
	JSONRPC JSONRPCVersion                `json:"jsonrpc"` // always "2.0"
	ID      mcp.RequestID                 `json:"id"`      // the id of the request answered
	Result  mcp.SubscriptionsListenResult `json:"result"`  // the result
}

// CallToolResultResponse is a whole response to tools/call: Result is
// *CallToolResult or *InputRequiredResult.
type CallToolResultResponse struct {
	JSONRPC JSONRPCVersion      `json:"jsonrpc"` // always "2.0"
	ID      mcp.RequestID       `json:"id"`      // the id of the request answered
	Result  mcp.CallToolOutcome `json:"result"`  // the result
}

// UnmarshalJSON decodes the response, choosing the result's type by its
// resultType.
func (r *CallToolResultResponse) UnmarshalJSON(data []byte) error {
	type plain CallToolResultResponse
	*r = CallToolResultResponse{}
	w := struct {
		*plain
		Result json.RawMessage `json:"result"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	var err error
	r.Result, err = mcp.DecodeCallToolOutcome(w.Result)
	return err
}

// GetPromptResultResponse is a whole response to prompts/get: Result is
// *GetPromptResult or *InputRequiredResult.
type GetPromptResultResponse struct {
	JSONRPC JSONRPCVersion       `json:"jsonrpc"` // always "2.0"
	ID      mcp.RequestID        `json:"id"`      // the id of the request answered
	Result  mcp.GetPromptOutcome `json:"result"`  // the result
}

// UnmarshalJSON decodes the response, choosing the result's type by its
// resultType.
func (r *GetPromptResultResponse) UnmarshalJSON(data []byte) error {
	type plain GetPromptResultResponse
	*r = GetPromptResultResponse{}
	w := struct {
		*plain
		Result json.RawMessage `json:"result"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	var err error
	r.Result, err = mcp.DecodeGetPromptOutcome(w.Result)
	return err
}

// ReadResourceResultResponse is a whole response to resources/read: Result
// is *ReadResourceResult or *InputRequiredResult.
type ReadResourceResultResponse struct {
	JSONRPC JSONRPCVersion          `json:"jsonrpc"` // always "2.0"
	ID      mcp.RequestID           `json:"id"`      // the id of the request answered
	Result  mcp.ReadResourceOutcome `json:"result"`  // the result
}

// UnmarshalJSON decodes the response, choosing the result's type by its
// resultType.
func (r *ReadResourceResultResponse) UnmarshalJSON(data []byte) error {
	type plain ReadResourceResultResponse
	*r = ReadResourceResultResponse{}
	w := struct {
		*plain
		Result json.RawMessage `json:"result"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	var err error
	r.Result, err = mcp.DecodeReadResourceOutcome(w.Result)
	return err
}

// Unions of whole messages.

// ClientRequest is any request a 2026-07-28 client sends: *DiscoverRequest,
// *ListToolsRequest, *CallToolRequest, *ListPromptsRequest,
// *GetPromptRequest, *ListResourcesRequest, *ListResourceTemplatesRequest,
// *ReadResourceRequest, *CompleteRequest or *SubscriptionsListenRequest.
// The interface is sealed. Decode one with [DecodeClientRequest].
type ClientRequest interface {
	isClientRequest()
}

func (*DiscoverRequest) isClientRequest()              {}
func (*ListToolsRequest) isClientRequest()             {}
func (*CallToolRequest) isClientRequest()              {}
func (*ListPromptsRequest) isClientRequest()           {}
func (*GetPromptRequest) isClientRequest()             {}
func (*ListResourcesRequest) isClientRequest()         {}
func (*ListResourceTemplatesRequest) isClientRequest() {}
func (*ReadResourceRequest) isClientRequest()          {}
func (*CompleteRequest) isClientRequest()              {}
func (*SubscriptionsListenRequest) isClientRequest()   {}

// DecodeClientRequest decodes a whole client request by its method.
func DecodeClientRequest(data []byte) (ClientRequest, error) {
	method, err := peekMethod(data)
	if err != nil {
		return nil, err
	}
	var r ClientRequest
	switch method {
	case mcp.MethodDiscover:
		r = new(DiscoverRequest)
	case mcp.MethodListTools:
		r = new(ListToolsRequest)
	case mcp.MethodCallTool:
		r = new(CallToolRequest)
	case mcp.MethodListPrompts:
		r = new(ListPromptsRequest)
	case mcp.MethodGetPrompt:
		r = new(GetPromptRequest)
	case mcp.MethodListResources:
		r = new(ListResourcesRequest)
	case mcp.MethodListResourceTemplates:
		r = new(ListResourceTemplatesRequest)
	case mcp.MethodReadResource:
		r = new(ReadResourceRequest)
	case mcp.MethodComplete:
		r = new(CompleteRequest)
	case mcp.MethodSubscriptionsListen:
		r = new(SubscriptionsListenRequest)
	default:
		return nil, fmt.Errorf("envelopes: client request %q: %w", method, ErrUnknownMethod)
	}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, err
	}
	return r, nil
}

// ClientNotification is any notification a 2026-07-28 client sends: only
// *CancelledNotification. The interface is sealed.
type ClientNotification interface {
	isClientNotification()
}

func (*CancelledNotification) isClientNotification() {}

// DecodeClientNotification decodes a whole client notification by its
// method.
func DecodeClientNotification(data []byte) (ClientNotification, error) {
	method, err := peekMethod(data)
	if err != nil {
		return nil, err
	}
	if method != mcp.NotificationCancelled {
		return nil, fmt.Errorf("envelopes: client notification %q: %w", method, ErrUnknownMethod)
	}
	n := new(CancelledNotification)
	if err := json.Unmarshal(data, n); err != nil {
		return nil, err
	}
	return n, nil
}

// ServerNotification is any notification a 2026-07-28 server sends:
// *CancelledNotification, *ProgressNotification,
// *LoggingMessageNotification, *ResourceUpdatedNotification,
// *ResourceListChangedNotification, *ToolListChangedNotification,
// *PromptListChangedNotification or *SubscriptionsAcknowledgedNotification.
// The interface is sealed. Decode one with [DecodeServerNotification].
type ServerNotification interface {
	isServerNotification()
}

func (*CancelledNotification) isServerNotification()                 {}
func (*ProgressNotification) isServerNotification()                  {}
func (*LoggingMessageNotification) isServerNotification()            {}
func (*ResourceUpdatedNotification) isServerNotification()           {}
func (*ResourceListChangedNotification) isServerNotification()       {}
func (*ToolListChangedNotification) isServerNotification()           {}
func (*PromptListChangedNotification) isServerNotification()         {}
func (*SubscriptionsAcknowledgedNotification) isServerNotification() {}

// DecodeServerNotification decodes a whole server notification by its
// method.
func DecodeServerNotification(data []byte) (ServerNotification, error) {
	method, err := peekMethod(data)
	if err != nil {
		return nil, err
	}
	var n ServerNotification
	switch method {
	case mcp.NotificationCancelled:
		n = new(CancelledNotification)
	case mcp.NotificationProgress:
		n = new(ProgressNotification)
	case mcp.NotificationMessage:
		n = new(LoggingMessageNotification)
	case mcp.NotificationResourceUpdated:
		n = new(ResourceUpdatedNotification)
	case mcp.NotificationResourceListChanged:
		n = new(ResourceListChangedNotification)
	case mcp.NotificationToolListChanged:
		n = new(ToolListChangedNotification)
	case mcp.NotificationPromptListChanged:
		n = new(PromptListChangedNotification)
	case mcp.NotificationSubscriptionsAcknowledged:
		n = new(SubscriptionsAcknowledgedNotification)
	default:
		return nil, fmt.Errorf("envelopes: server notification %q: %w", method, ErrUnknownMethod)
	}
	if err := json.Unmarshal(data, n); err != nil {
		return nil, err
	}
	return n, nil
}

// peekMethod returns the method member of a whole message.
func peekMethod(data []byte) (string, error) {
	var head struct {
		Method string `json:"method"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return "", err
	}
	return head.Method, nil
}

// The schema's error responses that carry MCP's own codes, as whole
// messages.

// HeaderMismatchError is the wire shape of a whole JSON-RPC error response
// carrying a -32020 error.
type HeaderMismatchError JSONRPCErrorResponse

// MissingRequiredClientCapabilityError is the wire shape of a whole JSON-RPC
// error response carrying a -32021 error.
type MissingRequiredClientCapabilityError JSONRPCErrorResponse

// UnsupportedProtocolVersionError is the wire shape of a whole JSON-RPC
// error response carrying a -32022 error.
type UnsupportedProtocolVersionError JSONRPCErrorResponse
