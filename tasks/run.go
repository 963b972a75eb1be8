package tasks

import (
	"context"
	"errors"
	"fmt"

	"github.com/parley-mcp/parley/mcp"
)

// Run is a running task, as its body sees it.
type Run struct {
	m        *Manager
	id       string
	cancel   context.CancelFunc
	answered chan struct{} // a tasks/update delivered answers
}

type runKey struct{}

// FromContext returns the Run whose body ctx belongs to, or nil outside a
// task.
func FromContext(ctx context.Context) *Run {
	r, _ := ctx.Value(runKey{}).(*Run)
	return r
}

// ID returns the task's id.
func (r *Run) ID() string { return r.id }

// ErrCancelled is returned by Ask when the task was cancelled while it
// waited.
var ErrCancelled = errors.New("tasks: the task was cancelled")

// Ask parks the task in input_required with requests, keyed as the
// client must key its answers, and returns the answers once tasks/update
// has delivered one for every key (a client may answer some now and the
// rest later; tasks/get shows only those still open). Decode each answer
// with mcp.InputResponses' accessors, and handle every answer a client can
// give: declined, cancelled, malformed. It returns ctx's error, or
// ErrCancelled, if the wait ends first.
func (r *Run) Ask(ctx context.Context, requests mcp.InputRequests) (mcp.InputResponses, error) {
	if len(requests) == 0 {
		return mcp.InputResponses{}, nil
	}
	for k, q := range requests {
		if q == nil {
			return nil, fmt.Errorf("tasks: Ask: request %q is nil", k)
		}
	}
	_, err := r.m.store.Update(context.WithoutCancel(ctx), r.id, func(rec *Record) error {
		if rec.Status.Terminal() {
			return ErrCancelled
		}
		rec.Status, rec.Pending, rec.Answers = mcp.TaskInputRequired, requests, nil
		rec.Updated = r.m.now().UTC()
		return nil
	})
	if err != nil {
		return nil, err
	}
	for {
		rec, err := r.m.store.Get(context.WithoutCancel(ctx), r.id)
		if err != nil {
			return nil, err
		}
		if rec.Status.Terminal() {
			return nil, ErrCancelled
		}
		if complete(rec) {
			answers := rec.Answers
			_, err := r.m.store.Update(context.WithoutCancel(ctx), r.id, func(rec *Record) error {
				if rec.Status.Terminal() {
					return ErrCancelled
				}
				rec.Status, rec.Pending, rec.Answers = mcp.TaskWorking, nil, nil
				rec.Updated = r.m.now().UTC()
				return nil
			})
			if err != nil {
				return nil, err
			}
			return answers, nil
		}
		select {
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), context.Canceled) {
				return nil, ErrCancelled
			}
			return nil, ctx.Err()
		case <-r.answered:
		}
	}
}

// complete reports whether every pending request has its answer.
func complete(rec *Record) bool {
	for k := range rec.Pending {
		if _, ok := rec.Answers[k]; !ok {
			return false
		}
	}
	return true
}
