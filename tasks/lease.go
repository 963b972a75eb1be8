package tasks

import (
	"context"
	"errors"
	"time"

	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
)

// Leases and word between instances (design record 028). While tasks run
// in this process, one keeper goroutine renews their leases every
// Lease/3 and, when the store is a Notifier, watches for word that one of
// them changed elsewhere. The renewal doubles as the fallback for lost
// word: each one re-reads the task, so an answer or a cancel taken by
// another instance reaches the body within Lease/3 even if no word came.

// errEnded stops a renewal of a task that has ended.
var errEnded = errors.New("tasks: the task has ended")

// startKeeper starts the keeper if it is not running. m.mu is held.
func (m *Manager) startKeeper() {
	if m.keeper != nil || m.lease <= 0 && m.notifier == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.keeper = cancel
	if m.notifier != nil {
		go func() {
			if err := m.notifier.Watch(ctx, m.heard); err != nil && ctx.Err() == nil {
				m.log.Warn("tasks: watching for task changes failed; they reach this instance at its lease renewals", "instance", m.instance, "err", err)
			}
		}()
	}
	if m.lease > 0 {
		go m.renewEvery(ctx, m.lease/3)
	}
}

// renewEvery renews the leases of the tasks running here every d until
// ctx ends.
func (m *Manager) renewEvery(ctx context.Context, d time.Duration) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.renew(ctx)
		}
	}
}

// renew extends the lease of every task running here, and passes on what
// the store says about each: an ended task (cancelled elsewhere, or
// failed because a renewal came too late) stops its body; answers wake it.
func (m *Manager) renew(ctx context.Context) {
	for _, run := range m.running() {
		rec, err := m.store.Update(ctx, run.id, func(r *Record) error {
			if r.Status.Terminal() {
				return errEnded
			}
			r.LeaseUntil = m.now().UTC().Add(m.lease)
			return nil
		})
		switch {
		case errors.Is(err, errEnded), errors.Is(err, ErrNotFound):
			run.cancel()
		case err != nil:
			// The store is out of reach: the lease runs out unless a later
			// renewal gets through, and then the task fails everywhere.
			m.log.Warn("tasks: renewing a lease failed", "task", run.id, "instance", m.instance, "err", err)
		case rec.Status == mcp.TaskInputRequired:
			run.wake()
		}
	}
}

// heard handles word that task id changed elsewhere; "" means any task
// may have.
func (m *Manager) heard(id string) {
	if id == "" {
		for _, run := range m.running() {
			m.heard(run.id)
		}
		return
	}
	m.mu.Lock()
	run := m.runs[id]
	m.mu.Unlock()
	if run == nil {
		return
	}
	rec, err := m.store.Get(context.Background(), id)
	if errors.Is(err, ErrNotFound) || err == nil && rec.Status.Terminal() {
		run.cancel()
		return
	}
	run.wake()
}

// running returns the tasks running here.
func (m *Manager) running() []*Run {
	m.mu.Lock()
	defer m.mu.Unlock()
	runs := make([]*Run, 0, len(m.runs))
	for _, r := range m.runs {
		runs = append(runs, r)
	}
	return runs
}

// notify passes word that task id changed to the other instances, best
// effort: the renewal is the bound if it is lost.
func (m *Manager) notify(ctx context.Context, id string) {
	if m.notifier == nil {
		return
	}
	if err := m.notifier.Notify(context.WithoutCancel(ctx), id); err != nil {
		m.log.Warn("tasks: passing on a task's change failed", "task", id, "err", err)
	}
}

// lapsed reports whether r is open with a lease that has run out.
func (m *Manager) lapsed(r *Record) bool {
	return !r.Status.Terminal() && !r.LeaseUntil.IsZero() && !m.now().Before(r.LeaseUntil)
}

// expireLease fails r if its lease has run out, and reports whether it
// did.
func (m *Manager) expireLease(r *Record) bool {
	if !m.lapsed(r) {
		return false
	}
	r.Status, r.Pending, r.Answers = mcp.TaskFailed, nil, nil
	r.Error = m.errorObject(r.ID, wire.Internal(LostMessage))
	r.Updated = m.now().UTC()
	return true
}
