package mcp_test

import (
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

func TestProtocolVersionEras(t *testing.T) {
	cases := []struct {
		v     mcp.ProtocolVersion
		era   mcp.Era
		known bool
	}{
		{mcp.Version20260728, mcp.EraModern, true},
		{mcp.Version20251125, mcp.EraLegacy, true},
		{mcp.Version20250618, mcp.EraLegacy, true},
		{mcp.Version20250326, mcp.EraLegacy, true},
		{mcp.Version20241105, mcp.EraLegacy, true},
		{"2099-01-01", mcp.EraUnknown, false},
		{"", mcp.EraUnknown, false},
	}
	for _, c := range cases {
		if got := c.v.Era(); got != c.era {
			t.Errorf("%q.Era() = %v, want %v", c.v, got, c.era)
		}
		if got := c.v.Known(); got != c.known {
			t.Errorf("%q.Known() = %v", c.v, got)
		}
		if got := c.v.SupportsInputRequired(); got != (c.era == mcp.EraModern) {
			t.Errorf("%q.SupportsInputRequired() = %v", c.v, got)
		}
	}
	for era, s := range map[mcp.Era]string{mcp.EraModern: "modern", mcp.EraLegacy: "legacy", mcp.EraUnknown: "unknown"} {
		if era.String() != s {
			t.Errorf("%d.String() = %s", era, era.String())
		}
	}
	vs := mcp.KnownVersions()
	if vs[0] != mcp.LatestVersion || len(vs) != 5 {
		t.Errorf("KnownVersions = %v", vs)
	}
	vs[0] = "mutated"
	if mcp.KnownVersions()[0] != mcp.LatestVersion {
		t.Error("KnownVersions returns shared state")
	}
}

func TestLoggingLevel(t *testing.T) {
	order := []mcp.LoggingLevel{mcp.LevelDebug, mcp.LevelInfo, mcp.LevelNotice, mcp.LevelWarning,
		mcp.LevelError, mcp.LevelCritical, mcp.LevelAlert, mcp.LevelEmergency}
	for i, l := range order {
		if l.Severity() != i || !l.Valid() {
			t.Errorf("%s: severity %d", l, l.Severity())
		}
		for j, min := range order {
			if got := l.Enabled(min); got != (i >= j) {
				t.Errorf("%s.Enabled(%s) = %v", l, min, got)
			}
		}
		if p, err := mcp.ParseLoggingLevel(string(l)); err != nil || p != l {
			t.Errorf("ParseLoggingLevel(%s)", l)
		}
	}
	for _, bad := range []mcp.LoggingLevel{"", "warn", "ERROR"} {
		if bad.Valid() || bad.Severity() != -1 || bad.Enabled(mcp.LevelDebug) || mcp.LevelEmergency.Enabled(bad) {
			t.Errorf("%q treated as a level", bad)
		}
		if _, err := mcp.ParseLoggingLevel(string(bad)); err == nil {
			t.Errorf("ParseLoggingLevel(%q) succeeded", bad)
		}
	}
	p := mcp.LoggingMessageNotificationParams{Level: mcp.LevelError, Logger: "db", Data: "down"}
	validateNotification(t, mcp.NotificationMessage, p)
}

func TestMethods(t *testing.T) {
	for _, m := range []string{mcp.MethodInitialize, mcp.MethodPing, mcp.MethodSetLoggingLevel, mcp.MethodSubscribeResource,
		mcp.MethodUnsubscribeResource, mcp.NotificationInitialized, mcp.NotificationRootsListChanged, mcp.NotificationElicitationComplete} {
		if !mcp.IsLegacyOnly(m) {
			t.Errorf("IsLegacyOnly(%s) = false", m)
		}
	}
	for _, m := range []string{mcp.MethodCallTool, mcp.MethodDiscover, mcp.NotificationCancelled, "tasks/get"} {
		if mcp.IsLegacyOnly(m) {
			t.Errorf("IsLegacyOnly(%s) = true", m)
		}
	}
	for m, want := range map[string]bool{mcp.MethodCallTool: true, mcp.MethodGetPrompt: true, mcp.MethodReadResource: true,
		mcp.MethodListTools: false, mcp.MethodDiscover: false, mcp.MethodComplete: false, mcp.MethodSubscriptionsListen: false} {
		if mcp.AllowsInputRequired(m) != want {
			t.Errorf("AllowsInputRequired(%s) != %v", m, want)
		}
	}
}
