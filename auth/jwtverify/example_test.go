package jwtverify_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/parley-mcp/parley/auth/authtest"
	"github.com/parley-mcp/parley/auth/jwtverify"
	"github.com/parley-mcp/parley/auth/resourceserver"
)

// A verifier for tokens of one issuer, for one resource. The key set is
// found through the issuer's metadata.
func ExampleNew() {
	as := authtest.NewServer(nil) // stands for the real authorization server
	defer as.Close()
	const resource = "https://mcp.example.com/mcp"

	v, err := jwtverify.New(&jwtverify.Options{Issuer: as.Issuer(), Audience: resource})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	good := as.Issue(authtest.Grant{Subject: "ada", ClientID: "notes-app", Resource: resource, Scopes: []string{"notes"}})
	info, err := v.Verify(ctx, good)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Subject, info.ClientID, info.Scopes)

	// The same issuer's token for another server is not good here.
	elsewhere := as.Issue(authtest.Grant{Subject: "ada", ClientID: "notes-app", Resource: "https://other.example.com/mcp"})
	_, err = v.Verify(ctx, elsewhere)
	fmt.Println(errors.Is(err, resourceserver.ErrInvalidToken))

	// Nor is an expired one.
	old := as.Issue(authtest.Grant{Subject: "ada", ClientID: "notes-app", Resource: resource,
		Claims: map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}})
	_, err = v.Verify(ctx, old)
	fmt.Println(errors.Is(err, resourceserver.ErrInvalidToken))
	// Output:
	// ada notes-app [notes]
	// true
	// true
}
