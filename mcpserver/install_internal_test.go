package mcpserver

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

// A registration returns only once its kind's handlers are installed,
// even when another registration of the same kind is installing them at
// that moment: otherwise the registered tool could answer -32601 and the
// capability be undeclared right after AddTool returned.
func TestInstallOnceWaitsForTheInstaller(t *testing.T) {
	s := MustNew(mcp.Implementation{Name: "install", Version: "1"}, nil)
	started, release := make(chan struct{}), make(chan struct{})
	var installed atomic.Bool
	first := make(chan struct{})
	go func() {
		defer close(first)
		s.installOnce("slot", func() {
			close(started)
			<-release
			installed.Store(true)
		})
	}()
	<-started
	go func() {
		// Let the second registration reach installOnce first, most of
		// the time; the assertion below never fails when it does not.
		for range 10 {
			runtime.Gosched()
		}
		close(release)
	}()
	s.installOnce("slot", func() { t.Error("a slot was installed twice") })
	if !installed.Load() {
		t.Error("installOnce returned while another caller was still installing the slot")
	}
	<-first
}
