package mcp

// The JSON coding of the types declared in logging.go, kept apart so that
// logging.go reads as the schema: the hand-written one-pass coders, which
// keep encoding/json's rules (see jsonscan.go), and the decoders that choose
// the Go type of a union's member.

// decodeLoggingLevel decodes a level without allocating for valid ones.
// Unknown values are kept (a server rejects them with -32602).
func decodeLoggingLevel(raw []byte) (LoggingLevel, error) {
	if len(raw) > 2 && raw[0] == '"' {
		body := raw[1 : len(raw)-1]
		for _, v := range loggingLevels {
			if string(body) == string(v) {
				return v, nil
			}
		}
	}
	s, err := decodeString(raw)
	return LoggingLevel(s), err
}
