package docscheck

import (
	"os/exec"
	"regexp"
	"testing"
)

// TestStaticcheckBuiltOnce: make vet and make otel run staticcheck from
// one binary, built once into a cache folder (docs/testing.md), for the
// root, bench, interop and otel modules: go run built it again (or at
// least linked and checked it) for every module, a minute of make test on
// a loaded machine.
func TestStaticcheckBuiltOnce(t *testing.T) {
	out, err := exec.Command("make", "-n", "-C", root, "vet", "otel").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n vet otel: %v\n%s", err, out)
	}
	script := string(out)
	if regexp.MustCompile(`go run \S*staticcheck`).MatchString(script) {
		t.Errorf("staticcheck is run with go run:\n%s", script)
	}
	runs := regexp.MustCompile(`(?m)(^|&& )(\S*/staticcheck-v[^ /]+) \./\.\.\.`).FindAllStringSubmatch(script, -1)
	if len(runs) < 4 {
		t.Fatalf("staticcheck runs %d times from a built binary, want the root, bench, interop and otel modules:\n%s", len(runs), script)
	}
	for _, r := range runs[1:] {
		if r[2] != runs[0][2] {
			t.Errorf("two staticcheck binaries: %s and %s", runs[0][2], r[2])
		}
	}
}
