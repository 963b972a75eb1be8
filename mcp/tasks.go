package mcp

import "encoding/json"

// The wire types of the tasks extension (io.modelcontextprotocol/tasks,
// SEP-2663): a tools/call may be answered with a task instead of its
// result, which the client then polls (tasks/get), answers (tasks/update)
// and may cancel (tasks/cancel). Package tasks implements the server side.
// Each type is its declaration: the encoders are generated (//mcp:json) and
// encoding/json decodes them.

// ExtensionTasks is the tasks extension's identifier, the key under which
// client and server declare it in their capabilities' extensions.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// The tasks extension's methods and notification.
const (
	MethodGetTask     = "tasks/get"
	MethodUpdateTask  = "tasks/update"
	MethodCancelTask  = "tasks/cancel"
	NotificationTasks = "notifications/tasks"
)

// ResultTypeTask marks a [CreateTaskResult]: the tools/call was turned into
// a task, whose result comes from tasks/get.
const ResultTypeTask ResultType = "task"

// TaskStatus is where a task stands.
type TaskStatus string

// The task statuses. Completed, failed and cancelled are terminal: a task
// in one of them never changes again.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether s is a status a task never leaves.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Task is what every task message says about a task. It is embedded in
// [CreateTaskResult] and [GetTaskResult].
type Task struct {
	// TaskID names the task; it is unguessable and bound to whoever
	// created it.
	TaskID string `json:"taskId"`
	// Status is where the task stands.
	Status TaskStatus `json:"status"`
	// StatusMessage, when set, says more about the status for a person.
	StatusMessage string `json:"statusMessage,omitempty"`
	// CreatedAt and LastUpdatedAt are ISO 8601 times (RFC 3339, UTC).
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTLMs is how long, in milliseconds from its creation, the task stays
	// readable; nil (null on the wire) means no limit. Always written.
	TTLMs *int64 `json:"ttlMs"`
	// PollIntervalMs, when not zero, is how long the client should wait
	// between polls.
	PollIntervalMs int64 `json:"pollIntervalMs,omitempty"`
}

// CreateTaskResult answers a tools/call that the server turned into a
// task: the task's state, flat beside the result header, with resultType
// "task". It never carries a requestState.
//
//mcp:json
type CreateTaskResult struct {
	Result
	Task
}

// GetTaskRequestParams are the params of tasks/get.
//
//mcp:json
type GetTaskRequestParams struct {
	// Meta is the request's _meta.
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// TaskID is the task asked about.
	TaskID string `json:"taskId"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *GetTaskRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

// GetTaskResult answers tasks/get: the task's state and, by its status,
// the tool's result (completed, which a tool error is too), the protocol
// error it ended with (failed), or the questions it waits on
// (input_required).
//
//mcp:json
type GetTaskResult struct {
	Result
	Task
	// ToolResult is the tool's result, raw, once the task completed.
	ToolResult json.RawMessage `json:"result,omitempty"`
	// Error is the JSON-RPC error object the task failed with.
	Error json.RawMessage `json:"error,omitempty"`
	// InputRequests are the questions the task waits on, keyed as the
	// answers in tasks/update must be.
	InputRequests InputRequests `json:"inputRequests,omitempty"`
}

// UpdateTaskRequestParams are the params of tasks/update: answers to the
// questions of a task that waits for input.
//
//mcp:json
type UpdateTaskRequestParams struct {
	// Meta is the request's _meta.
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// TaskID is the task answered.
	TaskID string `json:"taskId"`
	// InputResponses are the answers, keyed as GetTaskResult.InputRequests.
	InputResponses InputResponses `json:"inputResponses"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *UpdateTaskRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

// CancelTaskRequestParams are the params of tasks/cancel.
//
//mcp:json
type CancelTaskRequestParams struct {
	// Meta is the request's _meta.
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// TaskID is the task to cancel.
	TaskID string `json:"taskId"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *CancelTaskRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

// TaskStatusNotificationParams are the params of notifications/tasks, sent
// on a subscriptions/listen stream that asked for the task
// (SubscriptionFilter.TaskIDs) when its status changes: the task as
// tasks/get would show it at that moment.
//
//mcp:json
type TaskStatusNotificationParams struct {
	// Meta is the notification's _meta: the listen stream's subscription
	// id.
	Meta *NotificationMetaObject `json:"_meta,omitempty"`
	Task
	// ToolResult, Error and InputRequests are as in GetTaskResult.
	ToolResult    json.RawMessage `json:"result,omitempty"`
	Error         json.RawMessage `json:"error,omitempty"`
	InputRequests InputRequests   `json:"inputRequests,omitempty"`
}

func (*CreateTaskResult) isCallToolOutcome() {}
