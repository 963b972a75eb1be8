package mcptest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/parley-mcp/parley/internal/questionkey"
	"github.com/parley-mcp/parley/mcp"
)

// Transcript returns the session's exchange so far: every JSON-RPC
// message that crossed the pipe, one a line, prefixed with who sent it
// ("client" or "server"). Each request is followed by what happened while
// it was open, indented one step (a legacy server's questions and their
// answers during a tools/call, progress and log notifications, the
// request's cancellation, a listen stream's notifications), and then by
// its response; the entries of one level are in the order they started.
// Members keep the order they were sent in, and volatile values are
// normalised, so that a test's transcript is the same on every run:
//
//   - JSON-RPC ids are numbered 1, 2, … per sender, in the transcript's
//     order (and so are the requestId of notifications/cancelled and a
//     listen stream's subscriptionId);
//   - requestState, progressToken, taskId, elicitationId, traceparent,
//     tracestate and the members Options.Volatile names become
//     "<name N>", N numbering the distinct values of each member in order
//     of first appearance: a requestState echoed back shows the same N as
//     the one that was issued;
//   - createdAt and lastUpdatedAt become "<time>";
//   - the polls of a task (tasks/get) that found nothing to do (the task
//     working, or waiting for answers already sent) are left out: how
//     many a client makes depends on timing.
//
// The questions a legacy server sends together (a round of a tool's
// declared questions, a bridged InputRequiredResult: server.Request.AskAll)
// race on the back-channel: they are written one after another, where
// the first was sent, sorted by their content. A test whose own calls
// overlap (calls made from several goroutines) may get a transcript that
// differs between runs.
func (s *Session) Transcript() []byte {
	return render(s.pipe.records(), s.pipe.volatile)
}

// numbered are the members whose values are replaced by numbered
// placeholders; timed those replaced by "<time>".
var (
	numbered = []string{"requestState", "progressToken", "taskId", "elicitationId", mcp.MetaKeyTraceparent, mcp.MetaKeyTracestate}
	timed    = []string{"createdAt", "lastUpdatedAt"}
)

// message is one record, parsed.
type message struct {
	fromServer bool
	round      *questionkey.Round
	raw        []byte
	v          *jvalue // nil: not a JSON object (written as it came)
	method     string
	id         string // the id's JSON; "" for a notification
	response   bool
}

// entry is a request with its response and what happened while it was
// open, or a lone notification (or a response to no request).
type entry struct {
	msg      *message
	resp     *message
	children []*entry
}

func (e *entry) exchange() bool { return e.msg.id != "" && !e.msg.response }

func parse(r record) *message {
	m := &message{fromServer: r.fromServer, round: r.round, raw: r.data}
	v, err := parseJSON(r.data)
	if err != nil || v.kind != '{' {
		return m
	}
	m.v = v
	if mv := v.get("method"); mv != nil && mv.kind == 's' {
		m.method = mv.str
	}
	if id := v.get("id"); id != nil {
		m.id = id.compact()
		m.response = m.method == ""
	}
	return m
}

// render writes the transcript of records.
func render(records []record, volatile []string) []byte {
	var top []*entry
	// open are the exchanges whose response has not come yet, by sender
	// and id, in the order they started.
	var open []*entry
	for _, r := range records {
		m := parse(r)
		if m.response {
			at := slices.IndexFunc(open, func(e *entry) bool {
				return e.msg.fromServer != m.fromServer && e.msg.id == m.id
			})
			if at >= 0 {
				open[at].resp = m
				open = slices.Delete(open, at, at+1)
				continue
			}
		}
		e := &entry{msg: m}
		parent := parentOf(m, open)
		if parent != nil {
			parent.children = append(parent.children, e)
		} else {
			top = append(top, e)
		}
		if e.exchange() {
			open = append(open, e)
		}
	}
	n := newNormaliser(volatile)
	var out bytes.Buffer
	n.write(&out, top, 0)
	return out.Bytes()
}

// parentOf returns the open exchange m belongs under, or nil: the one a
// cancellation names, or the listen stream a notification names; else
// the other side's request that m came during (what that request caused),
// the innermost, which started last.
func parentOf(m *message, open []*entry) *entry {
	if m.v != nil && m.id == "" {
		params := m.v.get("params")
		var named *jvalue
		sameSide := false
		if m.method == mcp.NotificationCancelled {
			named, sameSide = params.get("requestId"), true
		} else {
			named = params.get("_meta").get(mcp.MetaKeySubscriptionID)
		}
		if named != nil {
			id := named.compact()
			for _, o := range slices.Backward(open) {
				if o.msg.id == id && (o.msg.fromServer == m.fromServer) == sameSide {
					return o
				}
			}
		}
	}
	for _, o := range slices.Backward(open) {
		if o.msg.fromServer != m.fromServer {
			return o
		}
	}
	return nil
}

// order returns siblings in the order they started, except that the
// requests of one round of a legacy server's questions (sent together,
// and so in any order) are written together, where the first started,
// sorted by their content (ids and volatile values aside), then by their
// answers'.
func (n *normaliser) order(siblings []*entry) []*entry {
	out := make([]*entry, 0, len(siblings))
	placed := make(map[*questionkey.Round]bool)
	for _, e := range siblings {
		r := e.msg.round
		if r == nil || !e.exchange() {
			out = append(out, e)
			continue
		}
		if placed[r] {
			continue
		}
		placed[r] = true
		var run []*entry
		for _, o := range siblings {
			if o.msg.round == r && o.exchange() {
				run = append(run, o)
			}
		}
		keys := make(map[*entry]string, len(run))
		for _, o := range run {
			keys[o] = n.anonymous(o.msg) + "\n" + n.anonymous(o.resp)
		}
		sort.SliceStable(run, func(a, b int) bool { return keys[run[a]] < keys[run[b]] })
		out = append(out, run...)
	}
	return out
}

// idlePoll reports whether e is a poll of a task that found nothing to
// do: the task working, or waiting for answers it has been sent but not
// yet taken up (input_required without inputRequests). How many of those
// a client makes is a matter of timing, not of the server's behaviour,
// so the transcript leaves them out.
func (e *entry) idlePoll() bool {
	if e.msg.fromServer || e.msg.method != mcp.MethodGetTask || e.resp == nil || e.resp.v == nil {
		return false
	}
	res := e.resp.v.get("result")
	status := res.get("status")
	if status == nil || status.kind != 's' {
		return false
	}
	switch mcp.TaskStatus(status.str) {
	case mcp.TaskWorking:
		return true
	case mcp.TaskInputRequired:
		asks := res.get("inputRequests")
		return asks == nil || len(asks.members) == 0
	}
	return false
}

func (n *normaliser) write(w *bytes.Buffer, entries []*entry, depth int) {
	for _, e := range n.order(entries) {
		if e.idlePoll() {
			continue
		}
		n.line(w, e.msg, depth)
		n.write(w, e.children, depth+1)
		if e.resp != nil {
			n.line(w, e.resp, depth)
		}
	}
}

func (n *normaliser) line(w *bytes.Buffer, m *message, depth int) {
	w.WriteString(strings.Repeat("  ", depth))
	if m.fromServer {
		w.WriteString("server ")
	} else {
		w.WriteString("client ")
	}
	if m.v == nil {
		w.Write(bytes.TrimSpace(m.raw))
	} else {
		n.normalise(m, false).encode(w)
	}
	w.WriteByte('\n')
}

// normaliser numbers ids and volatile values in the order it meets them.
type normaliser struct {
	volatile map[string]bool
	ids      [2]map[string]int // by sender: 0 client, 1 server
	values   map[string]map[string]int
}

func newNormaliser(extra []string) *normaliser {
	n := &normaliser{volatile: make(map[string]bool), values: make(map[string]map[string]int)}
	for _, name := range numbered {
		n.volatile[name] = true
	}
	for _, name := range extra {
		n.volatile[name] = true
	}
	n.ids[0], n.ids[1] = make(map[string]int), make(map[string]int)
	return n
}

// anonymous is m normalised without numbering: what sorting compares.
func (n *normaliser) anonymous(m *message) string {
	if m == nil {
		return ""
	}
	if m.v == nil {
		return string(m.raw)
	}
	var b bytes.Buffer
	n.normalise(m, true).encode(&b)
	return b.String()
}

// normalise returns a copy of m's value with its volatile values
// replaced; anonymous replaces them without numbering (and assigns no
// numbers).
func (n *normaliser) normalise(m *message, anonymous bool) *jvalue {
	v := m.v.clone()
	// A request's id is its sender's; a response's, the other side's.
	sender := m.fromServer
	if m.response {
		sender = !sender
	}
	if id := v.get("id"); id != nil {
		v.set("id", n.id(sender, id, anonymous))
	}
	if p := v.get("params"); p != nil && p.kind == '{' {
		if m.method == mcp.NotificationCancelled {
			// The request cancelled is the canceller's own.
			if id := p.get("requestId"); id != nil {
				p.set("requestId", n.id(m.fromServer, id, anonymous))
			}
		}
		if meta := p.get("_meta"); meta != nil && meta.kind == '{' {
			if sub := meta.get(mcp.MetaKeySubscriptionID); sub != nil {
				// A listen stream's notifications name the client's
				// listen request.
				meta.set(mcp.MetaKeySubscriptionID, n.id(false, sub, anonymous))
			}
		}
	}
	n.walk(v, anonymous)
	return v
}

// id numbers an id of sender's.
func (n *normaliser) id(fromServer bool, id *jvalue, anonymous bool) *jvalue {
	if anonymous {
		return &jvalue{kind: 's', str: "<id>"}
	}
	side := 0
	if fromServer {
		side = 1
	}
	k := id.compact()
	num, ok := n.ids[side][k]
	if !ok {
		num = len(n.ids[side]) + 1
		n.ids[side][k] = num
	}
	return &jvalue{kind: 'l', str: strconv.Itoa(num)}
}

// walk replaces the values of volatile members anywhere in v.
func (n *normaliser) walk(v *jvalue, anonymous bool) {
	switch v.kind {
	case '{':
		for i := range v.members {
			m := &v.members[i]
			switch {
			case slices.Contains(timed, m.name):
				m.value = &jvalue{kind: 's', str: "<time>"}
			case n.volatile[m.name]:
				m.value = n.placeholder(m.name, m.value, anonymous)
			default:
				n.walk(m.value, anonymous)
			}
		}
	case '[':
		for _, e := range v.elems {
			n.walk(e, anonymous)
		}
	}
}

func (n *normaliser) placeholder(name string, v *jvalue, anonymous bool) *jvalue {
	if anonymous {
		return &jvalue{kind: 's', str: "<" + name + ">"}
	}
	seen := n.values[name]
	if seen == nil {
		seen = make(map[string]int)
		n.values[name] = seen
	}
	k := v.compact()
	num, ok := seen[k]
	if !ok {
		num = len(seen) + 1
		seen[k] = num
	}
	return &jvalue{kind: 's', str: fmt.Sprintf("<%s %d>", name, num)}
}

// jvalue is a JSON value that keeps its object members in order, so that
// a normalised message reads as it was sent.
type jvalue struct {
	kind    byte // '{', '[', 's' (string), 'l' (number, true, false, null: str holds it)
	members []jmember
	elems   []*jvalue
	str     string
}

type jmember struct {
	name  string
	value *jvalue
}

func (v *jvalue) get(name string) *jvalue {
	if v == nil || v.kind != '{' {
		return nil
	}
	for _, m := range v.members {
		if m.name == name {
			return m.value
		}
	}
	return nil
}

func (v *jvalue) set(name string, val *jvalue) {
	for i := range v.members {
		if v.members[i].name == name {
			v.members[i].value = val
			return
		}
	}
}

func (v *jvalue) clone() *jvalue {
	c := *v
	if v.members != nil {
		c.members = make([]jmember, len(v.members))
		for i, m := range v.members {
			c.members[i] = jmember{m.name, m.value.clone()}
		}
	}
	if v.elems != nil {
		c.elems = make([]*jvalue, len(v.elems))
		for i, e := range v.elems {
			c.elems[i] = e.clone()
		}
	}
	return &c
}

func (v *jvalue) compact() string {
	var b bytes.Buffer
	v.encode(&b)
	return b.String()
}

func (v *jvalue) encode(w *bytes.Buffer) {
	switch v.kind {
	case '{':
		w.WriteByte('{')
		for i, m := range v.members {
			if i > 0 {
				w.WriteByte(',')
			}
			writeString(w, m.name)
			w.WriteByte(':')
			m.value.encode(w)
		}
		w.WriteByte('}')
	case '[':
		w.WriteByte('[')
		for i, e := range v.elems {
			if i > 0 {
				w.WriteByte(',')
			}
			e.encode(w)
		}
		w.WriteByte(']')
	case 's':
		writeString(w, v.str)
	default:
		w.WriteString(v.str)
	}
}

// writeString writes s as a JSON string, without the HTML escapes
// encoding/json adds by default: a transcript is read by people.
func writeString(w *bytes.Buffer, s string) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	w.Truncate(w.Len() - 1) // Encode's newline
}

// parseJSON reads one JSON value, keeping the order of object members.
func parseJSON(data []byte) (*jvalue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("mcptest: more than one JSON value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder) (*jvalue, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := &jvalue{kind: '{', members: []jmember{}}
			for dec.More() {
				name, err := dec.Token()
				if err != nil {
					return nil, err
				}
				val, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				v.members = append(v.members, jmember{name.(string), val})
			}
			_, err := dec.Token() // '}'
			return v, err
		case '[':
			v := &jvalue{kind: '[', elems: []*jvalue{}}
			for dec.More() {
				e, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				v.elems = append(v.elems, e)
			}
			_, err := dec.Token() // ']'
			return v, err
		}
		return nil, fmt.Errorf("mcptest: unexpected %v", t)
	case string:
		return &jvalue{kind: 's', str: t}, nil
	case json.Number:
		return &jvalue{kind: 'l', str: t.String()}, nil
	case bool:
		return &jvalue{kind: 'l', str: strconv.FormatBool(t)}, nil
	case nil:
		return &jvalue{kind: 'l', str: "null"}, nil
	}
	return nil, fmt.Errorf("mcptest: unexpected token %v", tok)
}
