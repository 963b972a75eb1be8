package streamhttp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// This file reads the event streams of legacy sessions (2025-11-25 and
// earlier) on the client side. Unlike sseReader, which serves the
// non-resumable 2026-07-28 streams and ignores ids, legacyEvents keeps what
// resumption needs: the id of the last event (sent back as Last-Event-ID)
// and the reconnection time the server asked for with "retry:". It keeps
// both across the connections of one logical stream (see reset), so that a
// resumed stream continues where the broken one stopped.

// Reconnection delays of legacy streams.
const (
	// defaultRetryDelay is the wait before reconnecting when the server
	// gave no retry field. SSE leaves it to the client; a second is what
	// browsers use and keeps a flapping server from being hammered.
	defaultRetryDelay = time.Second
	// maxRetryDelay bounds the retry a server may ask for, so that a bad
	// value cannot park a call or the GET stream for hours.
	maxRetryDelay = 5 * time.Minute
)

// legacyEvents reads the data of message events from the successive
// connections of one event stream.
type legacyEvents struct {
	sc    *bufio.Scanner
	limit int
	data  []byte
	event []byte
	seen  bool // a field of the current event has been read

	idBuf    string        // the id field in force for the next dispatch
	lastID   string        // the id of the last event dispatched: Last-Event-ID
	retry    time.Duration // the server's reconnection time, if retrySet
	retrySet bool
	events   int // events dispatched, with or without data: progress
}

func newLegacyEvents(limit int) *legacyEvents {
	return &legacyEvents{limit: limit}
}

// reset starts reading the next connection of the stream. The last event
// id and the retry carry over; a partial event of the previous connection
// was discarded at its end, as SSE requires.
func (r *legacyEvents) reset(body io.Reader) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 4096), r.limit+64)
	sc.Split(splitSSELines)
	r.sc = sc
	r.data, r.event, r.seen = nil, nil, false
	r.idBuf = r.lastID
}

// delay is how long to wait before reconnecting: the server's retry, at
// most maxRetryDelay, or defaultRetryDelay when it gave none.
func (r *legacyEvents) delay() time.Duration {
	if !r.retrySet {
		return defaultRetryDelay
	}
	return min(r.retry, maxRetryDelay)
}

// next returns the data of the next message event (type "message" or
// unset) that carries something: events whose data is empty or blank, such
// as the "priming" event a server sends to hand out a first id, only
// update the last event id. It returns io.EOF at the end of the connection.
func (r *legacyEvents) next() ([]byte, error) {
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if len(line) == 0 {
			if !r.seen {
				continue
			}
			data, event := r.data, r.event
			r.data, r.event, r.seen = nil, nil, false
			r.lastID = r.idBuf
			r.events++
			if len(data) == 0 {
				continue
			}
			data = data[:len(data)-1] // without the last "\n"
			if len(bytes.TrimSpace(data)) == 0 {
				continue
			}
			if len(event) != 0 && string(event) != "message" {
				continue
			}
			return data, nil
		}
		if line[0] == ':' {
			continue // a comment, such as a keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		r.seen = true
		switch string(field) {
		case "data":
			if len(r.data)+len(value)+1 > r.limit {
				return nil, errEventTooLarge
			}
			r.data = append(r.data, value...)
			r.data = append(r.data, '\n')
		case "event":
			r.event = append(r.event[:0], value...)
		case "id":
			if bytes.IndexByte(value, 0) < 0 { // SSE ignores ids with NUL
				r.idBuf = string(value)
			}
		case "retry":
			if ms, ok := parseRetry(value); ok {
				r.retry, r.retrySet = ms, true
			}
		}
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, errEventTooLarge
		}
		return nil, fmt.Errorf("streamhttp: reading the event stream: %w", err)
	}
	return nil, io.EOF
}

// parseRetry reads a retry field: ASCII digits only, in milliseconds, as
// SSE requires (anything else is ignored). Values beyond maxRetryDelay
// saturate there.
func parseRetry(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var ms int64
	for _, b := range v {
		if b < '0' || b > '9' {
			return 0, false
		}
		if ms < int64(maxRetryDelay/time.Millisecond) {
			ms = ms*10 + int64(b-'0')
		}
	}
	return min(time.Duration(ms)*time.Millisecond, maxRetryDelay), true
}
