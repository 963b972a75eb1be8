package spectest

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// fatalRecorder stands in for a test: it records what Fatalf says and ends
// the goroutine as FailNow would, without failing the real test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *fatalRecorder) Skipf(format string, args ...any) {
	r.msg = "skipped: " + fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// withoutFixtures points the package at an empty folder for the duration of
// the test.
func withoutFixtures(t *testing.T) string {
	empty := t.TempDir()
	saved := sourceDir
	sourceDir = empty
	t.Cleanup(func() { sourceDir = saved })
	return empty
}

// TestMissingFixturesFail holds that a clone without the fixtures fails
// loudly: Dir and Examples end the test with a message naming the folder,
// never a skip, and the error-returning checks match ErrFixturesMissing.
func TestMissingFixturesFail(t *testing.T) {
	empty := withoutFixtures(t)
	for name, call := range map[string]func(testing.TB){
		"Dir":      func(tb testing.TB) { Dir(tb) },
		"Examples": func(tb testing.TB) { Examples(tb, Version20260728) },
	} {
		rec := &fatalRecorder{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			call(rec)
			rec.msg = "returned"
		}()
		<-done
		if !strings.HasPrefix(rec.msg, "spectest: ") || !strings.Contains(rec.msg, empty) {
			t.Errorf("%s without fixtures: %q, want a fatal error naming %s", name, rec.msg, empty)
		}
	}
	if _, err := specDir(); !errors.Is(err, ErrFixturesMissing) {
		t.Errorf("specDir without fixtures: %v, want ErrFixturesMissing", err)
	}
}

// TestFixturesInRepository holds that the fixtures are found in the
// repository, with no folder beside it.
func TestFixturesInRepository(t *testing.T) {
	dir, err := specDir()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(dir, "internal/spectest/testdata/spec") {
		t.Errorf("fixtures found in %s, want the repository's internal/spectest/testdata/spec", dir)
	}
}
