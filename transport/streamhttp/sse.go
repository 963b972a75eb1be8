package streamhttp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// This file is the Server-Sent Events framing, both ways. The handler writes
// each JSON-RPC message as one event:
//
//	event: message
//	data: {"jsonrpc":"2.0",...}
//
// (a blank line ends the event), and comment lines (": keep-alive") on long
// quiet streams. Events of 2026-07-28 and of stateless legacy requests carry
// no id: those streams are not resumable. Events on the streams of a legacy
// session do ("id: 3-7", see eventID), and each such stream starts with a
// priming event, an id and a retry field with empty data, so that a client
// holds an id to resume from before any message arrives (SEP-1699).
// The client reads any conforming stream: LF, CRLF or CR line ends, data
// split over several lines, comments, and id, retry and unknown fields,
// which it ignores.

var (
	eventPrefix = []byte("event: message\ndata: ")
	eventSuffix = []byte("\n\n")
	keepAlive   = []byte(": keep-alive\n\n")
)

// appendEvent appends msg as one SSE message event. msg must not contain a
// line break; encoded JSON-RPC messages never do.
func appendEvent(dst, msg []byte) []byte {
	dst = append(dst, eventPrefix...)
	dst = append(dst, msg...)
	return append(dst, eventSuffix...)
}

// appendIDEvent appends msg as one SSE message event with the given id.
func appendIDEvent(dst []byte, id string, msg []byte) []byte {
	dst = append(dst, "id: "...)
	dst = append(dst, id...)
	dst = append(dst, '\n')
	return appendEvent(dst, msg)
}

// appendPriming appends a priming event: the id a client resumes from, the
// reconnection delay in milliseconds, and an empty data line. The empty
// data line is what makes it an event (one without data is never
// dispatched, so a client would not learn its id); clients skip its empty
// message.
func appendPriming(dst []byte, id string, retry time.Duration) []byte {
	dst = append(dst, "id: "...)
	dst = append(dst, id...)
	dst = append(dst, "\nretry: "...)
	dst = strconv.AppendInt(dst, retry.Milliseconds(), 10)
	return append(dst, "\ndata: \n\n"...)
}

// errEventTooLarge is returned by sseReader.next for an event over the
// limit; the stream cannot be read further.
var errEventTooLarge = errors.New("streamhttp: SSE event exceeds the message size limit")

// sseReader reads the data of message events from a stream.
type sseReader struct {
	sc    *bufio.Scanner
	limit int
	data  []byte
	event []byte
}

func newSSEReader(r io.Reader, limit int) *sseReader {
	sc := bufio.NewScanner(r)
	// A line holds at most the field name, a colon, a space and the data.
	sc.Buffer(make([]byte, 0, 4096), limit+64)
	sc.Split(splitSSELines)
	return &sseReader{sc: sc, limit: limit}
}

// next returns the data of the next message event (an event whose type is
// "message" or unset, with data). It returns io.EOF at the end of the
// stream; an event cut short by the end is discarded, as SSE requires.
func (r *sseReader) next() ([]byte, error) {
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if len(line) == 0 {
			data, event := r.data, r.event
			r.data, r.event = nil, nil
			if len(data) == 0 {
				continue
			}
			if len(event) != 0 && string(event) != "message" {
				continue
			}
			return data[:len(data)-1], nil // without the last "\n"
		}
		if line[0] == ':' {
			continue // a comment, such as a keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if len(r.data)+len(value)+1 > r.limit {
				return nil, errEventTooLarge
			}
			r.data = append(r.data, value...)
			r.data = append(r.data, '\n')
		case "event":
			r.event = append(r.event[:0], value...)
		}
		// id, retry and unknown fields are ignored.
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, errEventTooLarge
		}
		return nil, fmt.Errorf("streamhttp: reading the event stream: %w", err)
	}
	return nil, io.EOF
}

// splitSSELines is a bufio.SplitFunc for SSE lines, which end in CRLF, LF or
// a lone CR.
func splitSSELines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	i := bytes.IndexAny(data, "\r\n")
	switch {
	case i < 0:
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	case data[i] == '\n':
		return i + 1, data[:i], nil
	case i+1 < len(data):
		if data[i+1] == '\n' {
			return i + 2, data[:i], nil
		}
		return i + 1, data[:i], nil
	case atEOF:
		return i + 1, data[:i], nil
	default:
		return 0, nil, nil // a CR at the end of the buffer: is an LF next?
	}
}
