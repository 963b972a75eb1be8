package tasks

import (
	"context"
	"errors"
	"fmt"
	"strconv"

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
// task: an mcpserver.TaskOptional tool that a client without the extension
// called runs as an ordinary call, with no Run. Such a body asks with
// mcpserver.Call.Ask, which works in a task and out of one.
func FromContext(ctx context.Context) *Run {
	r, _ := ctx.Value(runKey{}).(*Run)
	return r
}

// wake tells the body that the task changed, without waiting.
func (r *Run) wake() {
	select {
	case r.answered <- struct{}{}:
	default:
	}
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
	_, err := r.m.write(context.WithoutCancel(ctx), r.id, func(rec *Record) error {
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
			_, err := r.m.write(context.WithoutCancel(ctx), r.id, func(rec *Record) error {
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

// Progress records how far the task has come as its statusMessage, which
// tasks/get shows while the task works: message when there is one, else
// the figures ("3 of 10", or "3" without a total). It costs one store
// write, so report at the pace a person reads, not per item of a tight
// loop. It does nothing once the task has ended or while it waits for
// answers.
func (r *Run) Progress(ctx context.Context, progress, total float64, message string) error {
	text := message
	switch {
	case text != "":
	case total > 0:
		text = strconv.FormatFloat(progress, 'g', -1, 64) + " of " + strconv.FormatFloat(total, 'g', -1, 64)
	default:
		text = strconv.FormatFloat(progress, 'g', -1, 64)
	}
	_, err := r.m.write(context.WithoutCancel(ctx), r.id, func(rec *Record) error {
		if rec.Status != mcp.TaskWorking {
			return errNotWorking
		}
		rec.StatusMessage = text
		rec.Updated = r.m.now().UTC()
		return nil
	})
	if errors.Is(err, errNotWorking) {
		return nil
	}
	return err
}

// errNotWorking leaves a task that is not working as it is.
var errNotWorking = errors.New("tasks: the task is not working")
