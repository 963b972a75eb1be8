package requeststate_test

import "testing"

// TestStateBoundToEveryTarget: the request binding covers the target of
// every carrier, not only a tool's name: a state sealed for prompt A is
// refused on prompt B with the same arguments, and one sealed for
// resource URI A on URI B; each still works where it was sealed.
func TestStateBoundToEveryTarget(t *testing.T) {
	f := newFixture(t, "svc", true, nil)
	args := map[string]string{"topic": "x"}
	for _, c := range []struct {
		name       string
		home, away call
	}{
		{"prompt", prompt("summary", args).as("alice"), prompt("details", args).as("alice")},
		{"resource", resource("notes:///a").as("alice"), resource("notes:///b").as("alice")},
	} {
		st := f.begin(c.home)
		if got := f.raw(c.away.with(st, "confirm")); got != wantRejected {
			t.Errorf("%s: a state sealed for another target: got %s", c.name, got)
		}
		if got := f.do(c.home.with(st, "confirm")).text(); got == "" {
			t.Errorf("%s: refused where it was sealed", c.name)
		}
	}
}
