package mcp

import "slices"

// ProtocolVersion is an MCP protocol version, such as "2026-07-28".
//
// Code never compares version strings by hand: it asks a version for its
// [Era], or whether it is [ProtocolVersion.Known].
type ProtocolVersion string

// The protocol versions Parley knows.
const (
	Version20241105 ProtocolVersion = "2024-11-05"
	Version20250326 ProtocolVersion = "2025-03-26"
	Version20250618 ProtocolVersion = "2025-06-18"
	Version20251125 ProtocolVersion = "2025-11-25"
	Version20260728 ProtocolVersion = "2026-07-28"

	// LatestVersion is the newest version Parley speaks and the one it
	// prefers.
	LatestVersion = Version20260728
)

// Era is a generation of the protocol. Generations differ in how a
// conversation starts and what travels on each request, not just in fields.
type Era int

const (
	// EraUnknown is the era of a version Parley does not know.
	EraUnknown Era = iota
	// EraLegacy is 2025-11-25 and earlier: an initialize handshake, sessions,
	// and server-to-client requests.
	EraLegacy
	// EraModern is 2026-07-28 and later: no handshake, every request carries
	// its protocol version and client capabilities in _meta, and servers ask
	// for input by returning an InputRequiredResult.
	EraModern
)

// String returns "legacy", "modern" or "unknown".
func (e Era) String() string {
	switch e {
	case EraLegacy:
		return "legacy"
	case EraModern:
		return "modern"
	default:
		return "unknown"
	}
}

// knownVersions lists every version Parley knows, newest first.
var knownVersions = []ProtocolVersion{Version20260728, Version20251125, Version20250618, Version20250326, Version20241105}

// KnownVersions returns every protocol version Parley knows, newest first.
func KnownVersions() []ProtocolVersion { return slices.Clone(knownVersions) }

// Known reports whether Parley knows v.
func (v ProtocolVersion) Known() bool { return slices.Contains(knownVersions, v) }

// Era returns the generation v belongs to.
func (v ProtocolVersion) Era() Era {
	switch v {
	case Version20260728:
		return EraModern
	case Version20251125, Version20250618, Version20250326, Version20241105:
		return EraLegacy
	default:
		return EraUnknown
	}
}

// Spoken reports whether Parley's server serves and its client speaks v:
// every modern version, and the legacy versions from 2025-03-26 on.
// 2024-11-05 is not spoken: Parley's types assume at least the 2025-03-26
// shapes.
func (v ProtocolVersion) Spoken() bool {
	switch v.Era() {
	case EraModern:
		return true
	case EraLegacy:
		return v != Version20241105
	}
	return false
}

// SpokenVersions returns every version Parley speaks, newest first (see
// [ProtocolVersion.Spoken]).
func SpokenVersions() []ProtocolVersion {
	var vs []ProtocolVersion
	for _, v := range knownVersions {
		if v.Spoken() {
			vs = append(vs, v)
		}
	}
	return vs
}

// SupportsInputRequired reports whether a server may answer a request of
// version v with an InputRequiredResult (2026-07-28 and later only).
func (v ProtocolVersion) SupportsInputRequired() bool { return v.Era() == EraModern }
