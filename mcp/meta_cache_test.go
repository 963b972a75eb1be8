package mcp

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

var implementationSeeds = []string{
	`{"name":"golden","version":"1.0.0"}`,
	`{"name":"c","title":"C","version":"1","description":"d","websiteUrl":"https://example.com"}`,
	`{"name":"c","version":"1","icons":[{"src":"https://example.com/i.png","sizes":["48x48"]}]}`,
	`{"name":"c","version":"1","icons":null}`,
	`{"name":"\u00e9\n","version":1}`,
	`{"name":"a","name":"b"}`,
	`null`, `{}`, `[]`, `{"name":`,
}

var clientCapsSeeds = []string{
	`{}`,
	`{"elicitation":{}}`,
	`{"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true},"sampling":{"tools":{},"context":{}}}`,
	`{"extensions":{"io.modelcontextprotocol/ui":{}},"experimental":{"x":{}}}`,
	`{"roots":{"listChanged":1}}`,
	`{"elicitation":null,"roots":{}}`,
	`{"sampling":[]}`, `null`, `{`,
}

// FuzzImplementationCache decodes data through the cache twice (filling it, then
// hitting it, when data is cacheable) and once directly, and reports any
// difference in value or error.
func FuzzImplementationCache(f *testing.F) {
	for _, s := range implementationSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		var want Implementation
		wantErr := want.decode(data, nil)
		for i := range 2 {
			var got Implementation
			err := got.decodeCached(data, newArena(data))
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("%q (pass %d): cached error %v, direct %v", s, i, err, wantErr)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%q (pass %d): cached %#v, direct %#v", s, i, got, want)
			}
		}
	})
}

func FuzzClientCapabilitiesCache(f *testing.F) {
	for _, s := range clientCapsSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		var want ClientCapabilities
		wantErr := want.decode(data, new(capsBlock))
		for i := range 2 {
			var got ClientCapabilities
			blk := new(capsBlock)
			err := got.decodeCached(data, blk)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("%q (pass %d): cached error %v, direct %v", s, i, err, wantErr)
			}
			if err != nil {
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q (pass %d): cached %#v, direct %#v", s, i, got, want)
			}
			// The sub-capabilities live in the caller's room, not the cache's.
			if got.Roots != nil && got.Roots != &blk.roots || got.Sampling != nil && got.Sampling != &blk.sampling ||
				got.Elicitation != nil && got.Elicitation != &blk.elicitation {
				t.Fatalf("%q (pass %d): sub-capabilities not in the caller's block", s, i)
			}
		}
	})
}

// A handler that changes the _meta of its request must not change what the
// next request decodes to.
func TestMetaCacheHitsAreNotShared(t *testing.T) {
	raw := []byte(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"roots":{"listChanged":true}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"shared-test","version":"1.0.0"}}`)
	for i := range 3 {
		m, err := decodeRequestMetaField(raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		if m.ClientInfo.Name != "shared-test" || m.ClientCapabilities.Roots == nil || !m.ClientCapabilities.Roots.ListChanged ||
			m.ClientCapabilities.Elicitation == nil || m.ClientCapabilities.Sampling != nil {
			t.Fatalf("decode %d: %+v %+v", i, m.ClientInfo, m.ClientCapabilities)
		}
		m.ClientInfo.Name = "changed"
		m.ClientCapabilities.Roots.ListChanged = false
		m.ClientCapabilities.Sampling = &SamplingCapability{}
		m.ClientCapabilities.Elicitation.URL = &struct{}{}
	}
}

// A peer whose info differs on every request fills the cache to its bound
// and no further.
func TestMetaCacheBounded(t *testing.T) {
	for i := range 3 * maxCachedDecodes {
		var m Implementation
		if err := m.decodeCached(fmt.Appendf(nil, `{"name":"bounded-%d","version":"1"}`, i), nil); err != nil {
			t.Fatal(err)
		}
	}
	implementationCache.mu.RLock()
	n := len(implementationCache.m)
	implementationCache.mu.RUnlock()
	if n > maxCachedDecodes {
		t.Errorf("%d entries, over the bound of %d", n, maxCachedDecodes)
	}
	big := fmt.Appendf(nil, `{"name":"%s","version":"1"}`, strings.Repeat("x", maxCachedDecodeLen))
	var m Implementation
	if err := m.decodeCached(big, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := implementationCache.get(big); ok {
		t.Errorf("a %d-byte value was kept, over maxCachedDecodeLen", len(big))
	}
}

var requestMetaSeeds = []string{
	`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"golden","version":"1.0.0"}}`,
	`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"roots":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"info"}`,
	`{"io.modelcontextprotocol/protocolVersion":"1999-01-01","progressToken":"p1"}`,
	`{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`,
	`{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"x":{}}},"com.example/k":1}`,
	`{"io.modelcontextprotocol/clientInfo":{"name":"c","icons":[{"src":"s"}]}}`,
	`{"io.modelcontextprotocol/clientInfo":null,"io.modelcontextprotocol/clientCapabilities":null}`,
	`{"io.modelcontextprotocol/clientInfo":{"name":"a"},"io.modelcontextprotocol/clientInfo":{"name":"b"}}`,
	`{"io.modelcontextprotocol/logLevel":7}`, `{}`, `{"a":`,
}

// FuzzRequestMetaCache decodes a request _meta through requestMetaCache
// twice and directly once, and reports any difference, or a hit whose
// pointers lead into another decode's room.
func FuzzRequestMetaCache(f *testing.F) {
	for _, s := range requestMetaSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		if isNullJSON(data) {
			return // decodeRequestMetaField's caller's business
		}
		var want RequestMetaObject
		wantErr := want.decode(data, nil, nil)
		var prev *RequestMetaObject
		for i := range 2 {
			got, err := decodeRequestMetaField(data, newArena(data))
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("%q (pass %d): cached error %v, direct %v", s, i, err, wantErr)
			}
			if err != nil {
				continue
			}
			if !reflect.DeepEqual(*got, want) {
				t.Fatalf("%q (pass %d): cached %#v, direct %#v", s, i, *got, want)
			}
			if prev != nil && (got.ClientInfo != nil && got.ClientInfo == prev.ClientInfo ||
				got.ClientCapabilities != nil && got.ClientCapabilities == prev.ClientCapabilities) {
				t.Fatalf("%q: two decodes share their pointed-to values", s)
			}
			prev = got
		}
	})
}

var resultMetaSeeds = []string{
	`{"io.modelcontextprotocol/serverInfo":{"name":"fixture","version":"0.1.0"}}`,
	`{"io.modelcontextprotocol/serverInfo":{"name":"s","icons":[]}}`,
	`{"io.modelcontextprotocol/serverInfo":null}`,
	`{"io.modelcontextprotocol/subscriptionId":3}`,
	`{"io.modelcontextprotocol/serverInfo":{"name":"s"},"x":[1]}`,
	`{}`, `{"io.modelcontextprotocol/serverInfo":{"name":1}}`,
}

// FuzzResultMetaCache is FuzzRequestMetaCache for a result's _meta.
func FuzzResultMetaCache(f *testing.F) {
	for _, s := range resultMetaSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		if len(data) == 0 || data[0] == 'n' {
			return // decodeResultMetaMember's own case
		}
		var want ResultMetaObject
		wantErr := want.decode(data, nil, nil)
		var prevInfo *Implementation
		for i := range 2 {
			var meta ResultMetaObject
			info := new(Implementation)
			got, err := decodeResultMetaMember(data, newArena(data), &meta, info)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("%q (pass %d): cached error %v, direct %v", s, i, err, wantErr)
			}
			if err != nil {
				continue
			}
			if !reflect.DeepEqual(*got, want) {
				t.Fatalf("%q (pass %d): cached %#v, direct %#v", s, i, *got, want)
			}
			if got.ServerInfo != nil && (got.ServerInfo != info || got.ServerInfo == prevInfo) {
				t.Fatalf("%q: serverInfo not in the caller's room", s)
			}
			prevInfo = got.ServerInfo
		}
	})
}
