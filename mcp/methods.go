package mcp

// Request methods of 2026-07-28, sent by clients.
const (
	MethodDiscover              = "server/discover"
	MethodListTools             = "tools/list"
	MethodCallTool              = "tools/call"
	MethodListPrompts           = "prompts/list"
	MethodGetPrompt             = "prompts/get"
	MethodListResources         = "resources/list"
	MethodListResourceTemplates = "resources/templates/list"
	MethodReadResource          = "resources/read"
	MethodComplete              = "completion/complete"
	MethodSubscriptionsListen   = "subscriptions/listen"
)

// Methods of the requests a server embeds in an InputRequiredResult (and,
// on legacy sessions, sends as server-to-client requests).
const (
	MethodElicit        = "elicitation/create"
	MethodCreateMessage = "sampling/createMessage"
	MethodListRoots     = "roots/list"
)

// Notification methods of 2026-07-28.
const (
	NotificationCancelled                 = "notifications/cancelled"
	NotificationProgress                  = "notifications/progress"
	NotificationMessage                   = "notifications/message"
	NotificationResourceUpdated           = "notifications/resources/updated"
	NotificationResourceListChanged       = "notifications/resources/list_changed"
	NotificationToolListChanged           = "notifications/tools/list_changed"
	NotificationPromptListChanged         = "notifications/prompts/list_changed"
	NotificationSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"
)

// Methods and notifications of the legacy era (2025-11-25 and earlier) that
// 2026-07-28 removed. A modern-only server answers the requests with
// -32601; a dual-era server serves them on legacy sessions.
const (
	MethodInitialize                = "initialize"
	MethodPing                      = "ping"
	MethodSetLoggingLevel           = "logging/setLevel"
	MethodSubscribeResource         = "resources/subscribe"
	MethodUnsubscribeResource       = "resources/unsubscribe"
	NotificationInitialized         = "notifications/initialized"
	NotificationRootsListChanged    = "notifications/roots/list_changed"
	NotificationElicitationComplete = "notifications/elicitation/complete"
)

// IsLegacyOnly reports whether method is a request or notification that
// exists only in the legacy era (removed by 2026-07-28). The core tasks/*
// methods of 2025-11-25 are not listed: the tasks extension reuses some of
// their names.
func IsLegacyOnly(method string) bool {
	switch method {
	case MethodInitialize, MethodPing, MethodSetLoggingLevel, MethodSubscribeResource,
		MethodUnsubscribeResource, NotificationInitialized, NotificationRootsListChanged,
		NotificationElicitationComplete:
		return true
	}
	return false
}

// AllowsInputRequired reports whether a request to method may be answered
// with an InputRequiredResult: only tools/call, prompts/get and
// resources/read.
func AllowsInputRequired(method string) bool {
	return method == MethodCallTool || method == MethodGetPrompt || method == MethodReadResource
}
