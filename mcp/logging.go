package mcp

import "fmt"

// LoggingLevel is the severity of a log message, as in syslog (RFC 5424).
// Under 2026-07-28 a client opts in to notifications/message per request by
// putting a level in the request's _meta. The feature is deprecated but
// still functional.
type LoggingLevel string

// The eight levels, from least to most severe.
const (
	LevelDebug     LoggingLevel = "debug"
	LevelInfo      LoggingLevel = "info"
	LevelNotice    LoggingLevel = "notice"
	LevelWarning   LoggingLevel = "warning"
	LevelError     LoggingLevel = "error"
	LevelCritical  LoggingLevel = "critical"
	LevelAlert     LoggingLevel = "alert"
	LevelEmergency LoggingLevel = "emergency"
)

var loggingLevels = [...]LoggingLevel{
	LevelDebug, LevelInfo, LevelNotice, LevelWarning, LevelError, LevelCritical, LevelAlert, LevelEmergency,
}

// Severity returns 0 for debug up to 7 for emergency, and -1 for a value
// that is not a level.
func (l LoggingLevel) Severity() int {
	for i, v := range loggingLevels {
		if v == l {
			return i
		}
	}
	return -1
}

// Valid reports whether l is one of the eight levels.
func (l LoggingLevel) Valid() bool { return l.Severity() >= 0 }

// Enabled reports whether a message at level l should be sent to a
// subscriber whose threshold is min: both must be valid and l at least as
// severe as min. An empty (or invalid) min means "no messages".
func (l LoggingLevel) Enabled(min LoggingLevel) bool {
	s, m := l.Severity(), min.Severity()
	return s >= 0 && m >= 0 && s >= m
}

// ParseLoggingLevel returns the level named s, or an error.
func ParseLoggingLevel(s string) (LoggingLevel, error) {
	if l := LoggingLevel(s); l.Valid() {
		return l, nil
	}
	return "", fmt.Errorf("mcp: %q is not a logging level", s)
}

// LoggingMessageNotificationParams are the params of notifications/message.
//
//mcp:json
type LoggingMessageNotificationParams struct {
	// Meta is the notification's _meta (the subscription id on a listen
	// stream), if any.
	Meta *NotificationMetaObject `json:"_meta,omitempty"`
	// Level is the message's severity.
	Level LoggingLevel `json:"level"`
	// Logger names the source, if any.
	Logger string `json:"logger,omitempty"`
	// Data is the message: any JSON value (a string or an object, usually).
	Data any `json:"data"`
}
