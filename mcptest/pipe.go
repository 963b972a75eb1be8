package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/parley-mcp/parley/internal/questionkey"
	"github.com/parley-mcp/parley/transport"
)

// metaKey is the _meta member under which the pipe hands the client a
// legacy question's key. The person takes it out before anything but the
// caller's own client middleware sees the question; the transcript never
// holds it.
const metaKey = "dev.parley.mcptest/questionKey"

// recorder is the server's end of the session's pipe. It records every
// message that crosses it, both ways, in the order the server sends and
// reads them (the transcript), and hands the client the key of each
// question a legacy server asks over its back-channel.
type recorder struct {
	transport.Conn // the server's end of the pipe

	volatile []string // Options.Volatile

	mu   sync.Mutex
	msgs []record
}

// record is one message as it crossed the pipe.
type record struct {
	fromServer bool
	data       []byte
	dropped    bool               // a Write that failed: the client never got it
	round      *questionkey.Round // the questions a legacy server sent together share one
}

func newRecorder(c transport.Conn, volatile []string) *recorder {
	return &recorder{Conn: c, volatile: volatile}
}

// Read is a message from the client, recorded once it has arrived.
func (r *recorder) Read(ctx context.Context) ([]byte, error) {
	msg, err := r.Conn.Read(ctx)
	if err == nil {
		r.add(false, msg, nil)
	}
	return msg, err
}

// Write is a message from the server. It is recorded before it is sent,
// so that the client's answer to it can never be recorded first; the
// lock is not held while sending, so that a full pipe cannot stall the
// server's reads behind it.
func (r *recorder) Write(ctx context.Context, msg []byte) error {
	key, round, keyed := questionkey.From(ctx)
	i := r.add(true, msg, round)
	if keyed {
		msg = withKey(msg, key)
	}
	err := r.Conn.Write(ctx, msg)
	if err != nil {
		r.mu.Lock()
		r.msgs[i].dropped = true
		r.mu.Unlock()
	}
	return err
}

func (r *recorder) add(fromServer bool, msg []byte, round *questionkey.Round) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, record{fromServer: fromServer, data: bytes.Clone(msg), round: round})
	return len(r.msgs) - 1
}

// records returns what crossed so far.
func (r *recorder) records() []record {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]record, 0, len(r.msgs))
	for _, m := range r.msgs {
		if !m.dropped {
			out = append(out, m)
		}
	}
	return out
}

// withKey returns msg, a server's request, with key in its params' _meta
// under metaKey; msg as it is when it is not a request.
func withKey(msg []byte, key string) []byte {
	var env map[string]json.RawMessage
	if json.Unmarshal(msg, &env) != nil || env["method"] == nil || env["id"] == nil {
		return msg
	}
	var params map[string]json.RawMessage
	if p := env["params"]; len(p) > 0 && json.Unmarshal(p, &params) != nil {
		return msg
	}
	if params == nil {
		params = make(map[string]json.RawMessage, 1)
	}
	var meta map[string]json.RawMessage
	if m := params["_meta"]; len(m) > 0 && json.Unmarshal(m, &meta) != nil {
		return msg
	}
	if meta == nil {
		meta = make(map[string]json.RawMessage, 1)
	}
	k, _ := json.Marshal(key)
	meta[metaKey] = k
	var err error
	if params["_meta"], err = json.Marshal(meta); err != nil {
		return msg
	}
	if env["params"], err = json.Marshal(params); err != nil {
		return msg
	}
	out, err := json.Marshal(env)
	if err != nil {
		return msg
	}
	return out
}
