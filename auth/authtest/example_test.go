package authtest_test

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/parley-mcp/parley/auth/authtest"
)

// A test authorization server: its metadata is where any OAuth client
// starts, and a test that only needs a token issues one directly.
func ExampleServer() {
	fixed := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	as := authtest.NewServer(&authtest.Options{Subject: "ada", Now: func() time.Time { return fixed }})
	defer as.Close()

	resp, err := http.Get(as.MetadataURL())
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var md struct {
		Issuer     string   `json:"issuer"`
		PKCE       []string `json:"code_challenge_methods_supported"`
		ISSParam   bool     `json:"authorization_response_iss_parameter_supported"`
		GrantTypes []string `json:"grant_types_supported"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&md); err != nil {
		log.Fatal(err)
	}
	fmt.Println(md.Issuer == as.Issuer(), md.PKCE, md.ISSParam, md.GrantTypes)

	token := as.Issue(authtest.Grant{Subject: "ada", ClientID: "app", Resource: "https://mcp.example.com/mcp", Scopes: []string{"notes"}})
	fmt.Println(len(token) > 0)
	// Output:
	// true [S256] true [authorization_code refresh_token client_credentials urn:ietf:params:oauth:grant-type:jwt-bearer urn:ietf:params:oauth:grant-type:token-exchange]
	// true
}
