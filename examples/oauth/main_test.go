package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The example runs to completion and tells the story its comment tells:
// a full authorization on the first 401, a declined question that ends in
// a tool error, a refresh (not a new authorization) after the token
// expired, and a refused consent told apart by its type.
func TestOAuthExample(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	chapters := strings.Split(got, "\n\n")
	find := func(prefix string) string {
		for _, c := range chapters {
			if strings.HasPrefix(c, prefix) {
				return c
			}
		}
		t.Fatalf("no chapter %q in:\n%s", prefix, got)
		return ""
	}
	steps := []struct {
		chapter string
		want    []string
		not     []string
	}{
		{"Ada connects:", []string{"401 Unauthorized", "POST /register: 201", "GET /authorize: 302", "POST /token: 200", "connected, protocol 2026-07-28"}, nil},
		{"Ada provisions 'orders'", []string{"Provisioned 'orders' in eu-west-1 for ada."}, []string{"/token", "401"}},
		{"Ada provisions 'scratch'", []string{"the user declines", "the tool stopped:"}, []string{"Provisioned"}},
		{"90 minutes later", []string{"401 Unauthorized (Bearer error=\"invalid_token\"", "POST /token: 200", "Provisioned 'billing' in eu-west-1 for ada."}, []string{"/authorize", "/register"}},
		{"Carol connects", []string{"she refused consent (access_denied)"}, nil},
	}
	for _, s := range steps {
		c := find(s.chapter)
		for _, w := range s.want {
			if !strings.Contains(c, w) {
				t.Errorf("%q lacks %q:\n%s", s.chapter, w, c)
			}
		}
		for _, n := range s.not {
			if strings.Contains(c, n) {
				t.Errorf("%q has %q:\n%s", s.chapter, n, c)
			}
		}
	}
}
