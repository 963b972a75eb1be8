package servercard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parley-mcp/parley/mcp"
)

// DefaultMaxSize bounds a fetched card: the v1 card is a few kilobytes;
// a megabyte leaves room for _meta and refuses a stream of garbage.
const DefaultMaxSize = 1 << 20

// maxCached bounds how many cards one Fetcher remembers.
const maxCached = 256

// ErrNoCard matches (errors.Is) a *StatusError of 404 or 410: the server
// publishes no card at that location.
var ErrNoCard = errors.New("servercard: no card at this location")

// StatusError is an HTTP answer other than 200 (or 304 to a revalidation).
type StatusError struct {
	URL        string
	StatusCode int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("servercard: GET %s: HTTP %d %s", e.URL, e.StatusCode, http.StatusText(e.StatusCode))
}

// Is makes errors.Is(err, ErrNoCard) true for 404 and 410.
func (e *StatusError) Is(target error) bool {
	return target == ErrNoCard && (e.StatusCode == http.StatusNotFound || e.StatusCode == http.StatusGone)
}

// MediaTypeError is an answer that is not a card's media type nor JSON:
// typically a web site's HTML page answering every path.
type MediaTypeError struct {
	URL, ContentType string
}

func (e *MediaTypeError) Error() string {
	return fmt.Sprintf("servercard: GET %s answered %q, not %s", e.URL, e.ContentType, MediaType)
}

// TooLargeError is a card longer than the Fetcher's MaxSize.
type TooLargeError struct {
	URL   string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("servercard: the card at %s is longer than the limit of %d bytes (Fetcher.MaxSize)", e.URL, e.Limit)
}

// InsecureURLError is a card URL, or a redirect, to plain HTTP on another
// machine: the proposal asks for HTTPS outside local development.
type InsecureURLError struct {
	URL string
}

func (e *InsecureURLError) Error() string {
	return fmt.Sprintf("servercard: %s is plain HTTP to another machine; a card is read over HTTPS (Fetcher.AllowInsecure for a test network)", e.URL)
}

// Fetcher reads cards over HTTP and remembers them as the server's caching
// headers allow: a card still fresh (Cache-Control max-age) is answered
// without a request, a stale one is revalidated with its ETag
// (If-None-Match, answered 304 without a body). Its zero value is ready;
// it is safe for concurrent use.
type Fetcher struct {
	// HTTPClient sends the requests. Default: a client with a 30-second
	// timeout. Its redirects are followed only to HTTPS (or loopback).
	HTTPClient *http.Client
	// MaxSize bounds a card's body; default DefaultMaxSize.
	MaxSize int64
	// AllowInsecure permits plain HTTP to hosts other than loopback.
	AllowInsecure bool

	mu    sync.Mutex
	cache map[string]*cached
	now   func() time.Time // tests replace it
}

type cached struct {
	body  []byte
	etag  string
	fresh time.Time // until when no request is needed
}

// Fetch reads the card at cardURL with a Fetcher of default settings.
func Fetch(ctx context.Context, cardURL string) (*Card, error) {
	return new(Fetcher).Fetch(ctx, cardURL)
}

// Fetch reads the card at cardURL (see [Location] for the reserved
// location of an endpoint's card), asking for its media type, and checks
// it with [Card.Validate]. Failures are typed: *StatusError (ErrNoCard for
// 404), *MediaTypeError, *TooLargeError, *InsecureURLError, *InvalidError.
// Each call returns a card of its own; changing it changes nothing else.
func (f *Fetcher) Fetch(ctx context.Context, cardURL string) (*Card, error) {
	if err := f.checkURL(cardURL); err != nil {
		return nil, err
	}
	now := time.Now
	if f.now != nil {
		now = f.now
	}
	f.mu.Lock()
	prev := f.cache[cardURL]
	f.mu.Unlock()
	if prev != nil && now().Before(prev.fresh) {
		return decode(cardURL, prev.body)
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL, nil)
	if err != nil {
		return nil, fmt.Errorf("servercard: %w", err)
	}
	req.Header.Set("Accept", MediaType+", application/json;q=0.9")
	if prev != nil && prev.etag != "" {
		req.Header.Set("If-None-Match", prev.etag)
	}
	resp, err := f.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("servercard: GET %s: %w", cardURL, err)
	}
	defer resp.Body.Close()

	var body []byte
	switch {
	case resp.StatusCode == http.StatusNotModified && prev != nil:
		body = prev.body
	case resp.StatusCode != http.StatusOK:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return nil, &StatusError{URL: cardURL, StatusCode: resp.StatusCode}
	default:
		if ct := resp.Header.Get("Content-Type"); !cardMediaType(ct) {
			return nil, &MediaTypeError{URL: cardURL, ContentType: ct}
		}
		limit := f.MaxSize
		if limit <= 0 {
			limit = DefaultMaxSize
		}
		body, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
		if err != nil {
			return nil, fmt.Errorf("servercard: reading %s: %w", cardURL, err)
		}
		if int64(len(body)) > limit {
			return nil, &TooLargeError{URL: cardURL, Limit: limit}
		}
	}
	card, err := decode(cardURL, body)
	if err != nil {
		return nil, err
	}
	f.remember(cardURL, body, resp.Header, now())
	return card, nil
}

func decode(cardURL string, body []byte) (*Card, error) {
	var c Card
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, fmt.Errorf("servercard: the card at %s: %w", cardURL, &InvalidError{Field: "(document)", Reason: err.Error()})
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("servercard: the card at %s: %w", cardURL, err)
	}
	return &c, nil
}

// remember keeps body for as long as the answer's headers allow.
func (f *Fetcher) remember(cardURL string, body []byte, h http.Header, now time.Time) {
	maxAge, store := freshness(h.Values("Cache-Control"))
	etag := h.Get("ETag")
	f.mu.Lock()
	defer f.mu.Unlock()
	if !store || maxAge == 0 && etag == "" {
		delete(f.cache, cardURL)
		return
	}
	if f.cache == nil {
		f.cache = map[string]*cached{}
	}
	if _, ok := f.cache[cardURL]; !ok && len(f.cache) >= maxCached {
		for k := range f.cache { // any one: the bound matters, not the choice
			delete(f.cache, k)
			break
		}
	}
	f.cache[cardURL] = &cached{body: body, etag: etag, fresh: now.Add(maxAge)}
}

// freshness reads Cache-Control: how long the answer is fresh, and whether
// it may be kept at all (no-store says no; no-cache means fresh for 0).
func freshness(values []string) (maxAge time.Duration, store bool) {
	store = true
	for _, v := range values {
		for d := range strings.SplitSeq(v, ",") {
			name, arg, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch strings.ToLower(name) {
			case "no-store":
				store = false
			case "no-cache":
				return 0, store
			case "max-age":
				if n, err := strconv.ParseInt(strings.Trim(arg, `"`), 10, 64); err == nil && n > 0 {
					maxAge = time.Duration(min(n, int64(24*time.Hour/time.Second))) * time.Second
				}
			}
		}
	}
	return maxAge, store
}

// cardMediaType accepts the card's media type and plain JSON (a server
// that does not know the newer type); anything else, HTML above all, is
// not a card.
func cardMediaType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == MediaType || mt == "application/json")
}

func (f *Fetcher) client() *http.Client {
	base := f.HTTPClient
	if base == nil {
		base = &http.Client{Timeout: 30 * time.Second}
	}
	c := *base
	next := base.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := f.checkURL(req.URL.String()); err != nil {
			return err
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("servercard: stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

func (f *Fetcher) checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("servercard: %w", err)
	}
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme != "http":
		return fmt.Errorf("servercard: %q is not an http(s) URL", raw)
	case f.AllowInsecure || isLoopback(u.Hostname()):
		return nil
	}
	return &InsecureURLError{URL: raw}
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// Mismatch is a claim of a card the live server contradicts.
type Mismatch struct {
	Field string // the card's member: "version", "remotes[0].supportedProtocolVersions"
	Card  string // what the card says
	Live  string // what the server says
}

// Compare checks c against what a connected server says of itself (its
// serverInfo, and the versions server/discover lists) and returns every
// contradiction. The proposal asks clients to prefer the live values and
// never to base a security decision on a card: a card that claims
// versions the server does not serve, or hides ones it does, can steer a
// client to a weaker choice before it connects. Fields the server leaves
// empty are not compared; the card's name is not, since serverInfo's name
// is free-form.
func (c *Card) Compare(info *mcp.Implementation, versions []mcp.ProtocolVersion) []Mismatch {
	var out []Mismatch
	if info != nil {
		for _, f := range [...]struct{ field, card, live string }{
			{"version", c.Version, info.Version},
			{"title", c.Title, info.Title},
			{"description", c.Description, info.Description},
		} {
			if f.live != "" && f.card != f.live {
				out = append(out, Mismatch{Field: f.field, Card: f.card, Live: f.live})
			}
		}
	}
	if len(versions) == 0 {
		return out
	}
	live := make([]string, len(versions))
	for i, v := range versions {
		live[i] = string(v)
	}
	slices.Sort(live)
	for i, r := range c.Remotes {
		if r.Type != TransportStreamableHTTP || len(r.SupportedProtocolVersions) == 0 {
			continue
		}
		claimed := slices.Clone(r.SupportedProtocolVersions)
		slices.Sort(claimed)
		claimed = slices.Compact(claimed)
		if !slices.Equal(claimed, slices.Compact(live)) {
			out = append(out, Mismatch{
				Field: fmt.Sprintf("remotes[%d].supportedProtocolVersions", i),
				Card:  strings.Join(claimed, ", "),
				Live:  strings.Join(live, ", "),
			})
		}
	}
	return out
}
