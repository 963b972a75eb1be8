package server

import "sync"

// changeQueue holds the changes published to one listen stream or legacy
// session until they are sent. An idle receiver holds no buffer: the queue
// grows as changes arrive, up to its limit, and lets its room go once
// drained, so that ten thousand idle streams cost ten thousand empty
// queues rather than ten thousand channel buffers of Options.ListenBuffer
// changes each (4 KiB apiece at the default). Publishing never waits: a
// change over the limit is dropped, and push says so.
type changeQueue struct {
	mu    sync.Mutex
	items []change
	limit int // most changes waiting; at least 1
	// sending is set while a goroutine started by push (for legacy
	// sessions, which have no goroutine of their own) is sending the
	// queue; push starts one only when none is.
	sending bool
}

// push queues c. ok is false when the queue is full and c was dropped;
// start is true when the caller must start a sender (the queue was idle
// and startSender was asked for), which then owns the queue until take
// reports it empty.
func (q *changeQueue) push(c change, startSender bool) (ok, start bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) >= max(q.limit, 1) {
		return false, false
	}
	q.items = append(q.items, c)
	if startSender && !q.sending {
		q.sending = true
		return true, true
	}
	return true, false
}

// take returns the queued changes, oldest first, and empties the queue,
// which takes spare (emptied) as its room for the next ones: a receiver
// that hands back the batch it has sent as the next spare publishes and
// drains without allocating. With none queued it returns nil and, when a
// sender started by push is asking, marks the queue as having no sender:
// a later push starts one.
func (q *changeQueue) take(spare []change, sender bool) []change {
	clear(spare) // the sent changes' strings and closures are not kept
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	if len(items) == 0 {
		if sender {
			q.sending = false
		}
		return nil
	}
	if cap(spare) > maxSpare {
		spare = nil // a burst's room is let go: an idle receiver holds little
	}
	q.items = spare[:0]
	return items
}

// maxSpare bounds the room a receiver keeps between bursts of changes.
const maxSpare = 8

// drop empties the queue, for a receiver that has gone.
func (q *changeQueue) drop() {
	q.mu.Lock()
	q.items = nil
	q.mu.Unlock()
}
