package apps

import (
	"encoding/json"
	"slices"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// ClientSettings are the settings a client declares with the extension:
// the view MIME types it renders.
type ClientSettings struct {
	// MIMETypes lists the view types the host renders; the specification
	// requires it, and a host that renders HTML views lists [MIMEType].
	MIMETypes []string `json:"mimeTypes"`
}

// ClientExtension returns the settings a client that renders HTML views
// declares under [ExtensionID]:
//
//	client.New(info, &client.Options{Extensions: map[string]json.RawMessage{
//		apps.ExtensionID: apps.ClientExtension(),
//	}})
func ClientExtension() json.RawMessage {
	return json.RawMessage(`{"mimeTypes":["` + MIMEType + `"]}`)
}

// SettingsOf returns the settings under which caps declare the extension,
// and whether they declare it at all. Settings that do not decode are
// returned empty: such a client renders nothing this package knows.
func SettingsOf(caps *mcp.ClientCapabilities) (ClientSettings, bool) {
	if caps == nil {
		return ClientSettings{}, false
	}
	raw, ok := caps.Extensions[ExtensionID]
	if !ok {
		return ClientSettings{}, false
	}
	var s ClientSettings
	if json.Unmarshal(raw, &s) != nil {
		return ClientSettings{}, true
	}
	return s, true
}

// Declared reports whether caps declare the extension with [MIMEType]
// among its MIME types: whether the client renders HTML views.
func Declared(caps *mcp.ClientCapabilities) bool {
	s, ok := SettingsOf(caps)
	return ok && slices.Contains(s.MIMETypes, MIMEType)
}

// RendersApps reports whether the client that sent req renders HTML views:
// under 2026-07-28 by the capabilities the request itself carries, on a
// 2025-era session by those its initialize declared. A tool body that
// finds false degrades to text; its result's content is all such a client
// shows.
func RendersApps(req *server.Request) bool {
	return req != nil && Declared(req.ClientCapabilities())
}

// Enable makes s declare the extension in the capabilities it announces
// (server/discover, and a legacy initialize's result). The extension
// defines no server settings, so it is declared as {}. A server whose
// capabilities are fixed (server.Options.Capabilities) declares it there.
func Enable(s *server.Server) error {
	return s.DeclareExtension(ExtensionID, nil)
}
