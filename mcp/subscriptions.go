package mcp

// subscriptions/listen opens a long-lived stream of notifications: the
// client names what it wants in a SubscriptionFilter, the server first
// acknowledges what it will honour, then tags every notification on the
// stream with the listen request's id in _meta.

// SubscriptionFilter names the notifications a subscriber wants. Everything
// is opt-in: a server sends nothing that is not asked for.
//
//mcp:json
type SubscriptionFilter struct {
	// ToolsListChanged asks for notifications/tools/list_changed.
	ToolsListChanged bool `json:"toolsListChanged,omitempty"`
	// PromptsListChanged asks for notifications/prompts/list_changed.
	PromptsListChanged bool `json:"promptsListChanged,omitempty"`
	// ResourcesListChanged asks for notifications/resources/list_changed.
	ResourcesListChanged bool `json:"resourcesListChanged,omitempty"`
	// ResourceSubscriptions lists resource URIs to receive
	// notifications/resources/updated for.
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	// TaskIDs lists tasks to receive notifications/tasks for: a member of
	// the tasks extension (io.modelcontextprotocol/tasks), which a client
	// may ask for only when it declares the extension.
	TaskIDs []string `json:"taskIds,omitempty"`
}

// SubscriptionsListenRequestParams are the params of subscriptions/listen.
//
//mcp:json
type SubscriptionsListenRequestParams struct {
	// Meta is the request's _meta: protocol version, client capabilities
	// and the rest. A 2026-07-28 request must carry it; legacy requests may
	// omit it (nil).
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// Notifications names what to deliver.
	Notifications SubscriptionFilter `json:"notifications"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *SubscriptionsListenRequestParams) RequestMeta() *RequestMetaObject {
	return requestMeta(&p.Meta)
}

// SubscriptionsAcknowledgedNotificationParams are the params of
// notifications/subscriptions/acknowledged, the first message of a
// subscription: the part of the filter the server honours.
//
//mcp:json
type SubscriptionsAcknowledgedNotificationParams struct {
	// Meta is the notification's _meta (the subscription id on a listen
	// stream), if any.
	Meta *NotificationMetaObject `json:"_meta,omitempty"`
	// Notifications is the honoured subset of the requested filter.
	Notifications SubscriptionFilter `json:"notifications"`
}

// SubscriptionsListenResult ends a subscriptions/listen stream gracefully.
// Its _meta carries the subscription id (Meta.SubscriptionID).
//
//mcp:json
type SubscriptionsListenResult struct {
	Result
}
