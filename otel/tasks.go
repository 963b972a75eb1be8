package otel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/tasks"
)

// AttrTaskStatus is the status a task entered: working, input_required,
// completed, failed or cancelled.
const AttrTaskStatus = attribute.Key("mcp.task.status")

// MetricServerTaskTransitions counts the statuses tasks entered, by
// mcp.task.status: a task's creation counts as entering working.
const MetricServerTaskTransitions = "mcp.server.task.transitions"

// TaskStore wraps the store of the tasks extension (tasks.Options.Store)
// so that every status a task enters is counted
// (mcp.server.task.transitions): the store sees every change, whoever
// makes it (the task's body, tasks/update, tasks/cancel), on whichever
// instance. With nothing to measure it returns inner itself.
func (t *Telemetry) TaskStore(inner tasks.Store) tasks.Store {
	if !t.measuring {
		return inner
	}
	return &taskStore{Store: inner, t: t}
}

type taskStore struct {
	tasks.Store
	t *Telemetry
}

func (s *taskStore) Create(ctx context.Context, r *tasks.Record) error {
	err := s.Store.Create(ctx, r)
	if err == nil {
		s.t.taskStatus(ctx, r.Status)
	}
	return err
}

func (s *taskStore) Update(ctx context.Context, id string, f func(*tasks.Record) error) (*tasks.Record, error) {
	var before mcp.TaskStatus
	r, err := s.Store.Update(ctx, id, func(r *tasks.Record) error {
		before = r.Status // the last attempt's, for a store that retries f
		return f(r)
	})
	if err == nil && r != nil && r.Status != before {
		s.t.taskStatus(ctx, r.Status)
	}
	return r, err
}

func (t *Telemetry) taskStatus(ctx context.Context, status mcp.TaskStatus) {
	t.taskTransitions.Add(ctx, 1, metric.WithAttributes(AttrTaskStatus.String(string(status))))
}
