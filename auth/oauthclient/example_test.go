package oauthclient_test

import (
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/parley-mcp/parley/auth/oauthclient"
)

// Example shows the transport against a minimal authorization server and
// MCP server: the first request is refused with 401, and the transport
// discovers, registers, authorizes and retries on its own.
func Example() {
	var as, rs *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":"%[1]s/authorize","token_endpoint":"%[1]s/token",
			"registration_endpoint":"%[1]s/register","code_challenge_methods_supported":["S256"],
			"token_endpoint_auth_methods_supported":["none"]}`, as.URL)
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"client_id":"client-1"}`)
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		// This server approves at once; a real one shows a login and
		// consent page first.
		q := r.URL.Query()
		red, _ := url.Parse(q.Get("redirect_uri"))
		red.RawQuery = url.Values{"code": {"c"}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, red.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"secret-token","token_type":"Bearer","expires_in":3600}`)
	})
	as = httptest.NewServer(mux)
	defer as.Close()

	rs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			fmt.Fprintf(w, `{"resource":"%s/mcp","authorization_servers":[%q]}`, rs.URL, as.URL)
			return
		}
		if r.Header.Get("Authorization") != "Bearer secret-token" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+rs.URL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "hello, authorized client")
	}))
	defer rs.Close()

	// A desktop application would use NewLoopbackAuthorizer instead.
	oc, err := oauthclient.New(&oauthclient.Config{Authorizer: &oauthclient.HeadlessAuthorizer{}})
	if err != nil {
		log.Fatal(err)
	}
	// With Parley's client, pass oc.Client() as
	// streamhttp.ClientOptions.HTTPClient instead of calling it directly.
	resp, err := oc.Client().Post(rs.URL+"/mcp", "application/json", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	fmt.Println(resp.Status)
	// Output: 200 OK
}

// ExampleIssuerMismatchError shows how a caller tells a refusal apart.
func ExampleIssuerMismatchError() {
	err := fmt.Errorf("connect: %w", &oauthclient.IssuerMismatchError{
		Where: "authorization response", Expected: "https://as.example", Got: "https://evil.example",
	})
	var ie *oauthclient.IssuerMismatchError
	if errors.As(err, &ie) {
		fmt.Println("refused an authorization response from", ie.Got)
	}
	fmt.Println(errors.Is(err, oauthclient.ErrIssuerMismatch))
	// Output:
	// refused an authorization response from https://evil.example
	// true
}
