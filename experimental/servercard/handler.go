package servercard

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// HandlerOptions tunes how a card is served; nil means the defaults.
type HandlerOptions struct {
	// MaxAge is how long clients and shared caches may keep the card
	// without asking again (Cache-Control max-age). Default one hour, the
	// proposal's example; negative means no-cache (always revalidate,
	// which the ETag makes cheap).
	MaxAge time.Duration
}

// handler serves one encoded card.
type handler struct {
	body         []byte
	etag         string
	cacheControl string
}

// Handler returns an http.Handler that serves c as the proposal asks: GET
// and HEAD answer the card with its media type, a strong ETag (a digest
// of the bytes), Cache-Control and the CORS headers that let a page in a
// browser read it; a request whose If-None-Match names the ETag gets 304
// Not Modified without the body; OPTIONS answers a CORS preflight; any
// other method gets 405. c is validated and encoded once, here: later
// changes to c are not served.
func Handler(c *Card, opts *HandlerOptions) (http.Handler, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	body, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("servercard: encoding the card: %w", err)
	}
	sum := sha256.Sum256(body)
	h := &handler{
		body:         body,
		etag:         `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`,
		cacheControl: "public, max-age=3600",
	}
	if opts != nil && opts.MaxAge != 0 {
		if opts.MaxAge < 0 {
			h.cacheControl = "public, no-cache"
		} else {
			h.cacheControl = "public, max-age=" + strconv.FormatInt(int64(opts.MaxAge/time.Second), 10)
		}
	}
	return h, nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	// The card is public and read-only, so any page may read it (the
	// proposal's CORS requirement); it carries no credentials.
	hdr.Set("Access-Control-Allow-Origin", "*")
	hdr.Set("Access-Control-Allow-Methods", "GET")
	hdr.Set("Access-Control-Allow-Headers", "Content-Type, If-None-Match")
	hdr.Set("Access-Control-Expose-Headers", "ETag")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		hdr.Set("Allow", "GET, HEAD, OPTIONS")
		http.Error(w, "servercard: a Server Card is read with GET", http.StatusMethodNotAllowed)
		return
	}
	hdr.Set("ETag", h.etag)
	hdr.Set("Cache-Control", h.cacheControl)
	if matchesETag(r.Header.Values("If-None-Match"), h.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hdr.Set("Content-Type", MediaType)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Length", strconv.Itoa(len(h.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		w.Write(h.body)
	}
}

// matchesETag reports whether an If-None-Match header (possibly several,
// each a list) names etag or is "*". If-None-Match compares weakly
// (RFC 9110 13.1.2): W/"x" matches "x".
func matchesETag(values []string, etag string) bool {
	for _, v := range values {
		for tag := range strings.SplitSeq(v, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
				return true
			}
		}
	}
	return false
}

// Mount serves c at the reserved location of the Streamable HTTP endpoint
// mounted at endpoint on mux: Mount(mux, "/mcp", c, nil) serves
// /mcp/server-card.
func Mount(mux *http.ServeMux, endpoint string, c *Card, opts *HandlerOptions) error {
	h, err := Handler(c, opts)
	if err != nil {
		return err
	}
	mux.Handle(strings.TrimSuffix(endpoint, "/")+Suffix, h)
	return nil
}

// Location returns the reserved location of the card of the Streamable
// HTTP endpoint at endpointURL: the path gets [Suffix] (after any trailing
// slash is dropped); the query stays, the fragment goes. A URL that
// already ends in /server-card is returned as it is, so that a person may
// give either.
func Location(endpointURL string) (string, error) {
	u, err := url.Parse(endpointURL)
	if err != nil {
		return "", fmt.Errorf("servercard: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("servercard: %q is not an http(s) URL", endpointURL)
	}
	u.Fragment, u.RawFragment = "", ""
	if !strings.HasSuffix(u.Path, Suffix) {
		u.Path = strings.TrimSuffix(u.Path, "/") + Suffix
		if u.RawPath != "" {
			u.RawPath = strings.TrimSuffix(u.RawPath, "/") + Suffix
		}
	}
	return u.String(), nil
}
