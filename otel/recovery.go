package otel

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/parley-mcp/parley/client"
)

// What the spans of a client's requests say about the recovery of a
// legacy session (client.Options.DisableRecovery, design record 041).
// They go on spans only, not on metrics: a session id would make every
// series its own.
const (
	// AttrSessionRecovery says why a request was sent: "reinitialize" for
	// the initialize (and logging/setLevel) that open a new session after
	// the server lost the last one, "repeat" for a request sent again
	// (after a lost session, or a POST that failed).
	AttrSessionRecovery = attribute.Key("mcp.session.recovery")
	// AttrLostSessionID is the id of the session the server lost, on the
	// requests sent because of it.
	AttrLostSessionID = attribute.Key("mcp.session.lost_id")
)

// recoveryAttrs appends to attrs what a request's span says about the
// recovery it belongs to, if any.
func recoveryAttrs(attrs []attribute.KeyValue, req *client.Request) []attribute.KeyValue {
	r := req.Reinitialization
	switch {
	case req.Repeat:
		attrs = append(attrs, AttrSessionRecovery.String("repeat"))
	case r != nil:
		attrs = append(attrs, AttrSessionRecovery.String("reinitialize"))
	default:
		return attrs
	}
	if r != nil && r.LostSessionID != "" {
		attrs = append(attrs, AttrLostSessionID.String(r.LostSessionID))
	}
	return attrs
}
