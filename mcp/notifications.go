package mcp

// CancelledNotificationParams are the params of notifications/cancelled:
// the sender no longer wants the answer to a request (on stdio; over HTTP a
// client cancels by closing the request's stream). A server also sends it to
// end a subscriptions/listen stream on stdio.
//
//mcp:json
type CancelledNotificationParams struct {
	// Meta is the notification's _meta (the subscription id on a listen
	// stream), if any.
	Meta *NotificationMetaObject `json:"_meta,omitempty"`
	// RequestID is the id of the request to cancel.
	RequestID RequestID `json:"requestId"`
	// Reason says why, for logs.
	Reason string `json:"reason,omitempty"`
}

// ProgressNotificationParams are the params of notifications/progress.
//
//mcp:json
type ProgressNotificationParams struct {
	// Meta is the notification's _meta (the subscription id on a listen
	// stream), if any.
	Meta *NotificationMetaObject `json:"_meta,omitempty"`
	// ProgressToken is the token from the request's _meta.
	ProgressToken ProgressToken `json:"progressToken"`
	// Progress is the progress so far; it must increase with each
	// notification.
	Progress float64 `json:"progress"`
	// Total is the progress at completion, when known (0 is not sent).
	Total float64 `json:"total,omitempty"`
	// Message describes the current step.
	Message string `json:"message,omitempty"`
}

// ResourceUpdatedNotificationParams are the params of
// notifications/resources/updated.
//
//mcp:json
type ResourceUpdatedNotificationParams struct {
	// Meta is the notification's _meta (the subscription id on a listen
	// stream), if any.
	Meta *NotificationMetaObject `json:"_meta,omitempty"`
	// URI is the resource that changed (possibly a sub-resource of the one
	// subscribed to).
	URI string `json:"uri"`
}
