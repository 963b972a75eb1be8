package tasks

import (
	"context"
	"slices"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// notifications/tasks: a listen stream names tasks in
// SubscriptionFilter.TaskIDs; the manager grants those the caller owns and
// sends the stream the task, as tasks/get would show it, each time this
// instance changes it. Changes made on another instance of a fleet reach
// only that instance's streams: a client of a fleet polls.

// listenTopic is the tasks extension's topic on listen streams.
func (m *Manager) listenTopic(s *server.Server) error {
	t, err := s.AddListenTopic(server.ListenTopic{
		Extension: mcp.ExtensionTasks,
		Keys:      func(f *mcp.SubscriptionFilter) *[]string { return &f.TaskIDs },
		Grant:     m.grant,
	})
	m.topic = t
	return err
}

// grant keeps the tasks, of ids, that req's principal owns (once each):
// another principal's task is not granted, as it is unknown to tasks/get.
func (m *Manager) grant(ctx context.Context, req *server.Request, ids []string) []string {
	var granted []string
	for _, id := range ids {
		if slices.Contains(granted, id) {
			continue
		}
		if _, err := m.lookup(ctx, req, id); err == nil {
			granted = append(granted, id)
		}
	}
	return granted
}

// write is Store.Update that tells the listen streams granted the task
// what it became.
func (m *Manager) write(ctx context.Context, id string, f func(*Record) error) (*Record, error) {
	r, err := m.store.Update(ctx, id, f)
	if err == nil && m.topic != nil && m.topic.Subscribed(id) {
		m.topic.Publish(id, mcp.NotificationTasks, func(meta *mcp.NotificationMetaObject) any {
			return m.notification(r, meta)
		})
	}
	return r, err
}

// notification is r as notifications/tasks carries it: what tasks/get
// would answer.
func (m *Manager) notification(r *Record, meta *mcp.NotificationMetaObject) *mcp.TaskStatusNotificationParams {
	g := m.detailed(r)
	return &mcp.TaskStatusNotificationParams{Meta: meta, Task: g.Task, ToolResult: g.ToolResult, Error: g.Error, InputRequests: g.InputRequests}
}
