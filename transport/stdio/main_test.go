package stdio

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parley-mcp/parley/internal/leakcheck"
)

// childEnv selects a child-process mode: when it is set, the test binary acts
// as a tiny MCP-ish server instead of running tests (see runChild).
const childEnv = "PARLEY_STDIO_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	os.Exit(leakcheck.Main(m))
}

// runChild runs one child mode and returns its exit status. Modes that must
// set something up before the parent may signal them write "ready" first.
func runChild(mode string) int {
	ctx := context.Background()
	conn := ServerConn(nil)
	write := func(s string) {
		if err := conn.Write(ctx, []byte(s)); err != nil {
			fmt.Fprintln(os.Stderr, "child write:", err)
			os.Exit(100)
		}
	}
	// echo copies messages back until stdin reaches EOF.
	echo := func() {
		for {
			msg, err := conn.Read(ctx)
			if err == io.EOF {
				return
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "child read:", err)
				os.Exit(101)
			}
			write(string(msg))
		}
	}
	drainStdin := func() { _, _ = io.Copy(io.Discard, os.Stdin) }
	sleepForever := func() {
		for {
			time.Sleep(time.Hour)
		}
	}

	switch mode {
	case "echo": // the well-behaved server: exits 0 on stdin EOF
		echo()
		return 0
	case "echo-exit2": // exits with status 2 on stdin EOF
		echo()
		return 2
	case "stderr": // logs to stderr, then echoes
		fmt.Fprintln(os.Stderr, "log line from child")
		echo()
		return 0
	case "ignore-eof": // ignores stdin EOF; SIGTERM's default action kills it
		write("ready")
		drainStdin()
		sleepForever()
	case "catch-term": // ignores stdin EOF, exits 0 on SIGTERM
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM)
		write("ready")
		drainStdin()
		<-ch
		return 0
	case "ignore-term": // ignores stdin EOF and SIGTERM: needs SIGKILL
		signal.Ignore(syscall.SIGTERM)
		write("ready")
		drainStdin()
		sleepForever()
	case "crash": // writes one message and dies
		write(`{"last":true}`)
		return 3
	case "flood": // writes far more than a pipe holds, then behaves
		line := `{"pad":"` + strings.Repeat("x", 1000) + `"}`
		for range 2000 {
			write(line)
		}
		drainStdin()
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown child mode", mode)
	return 99
}
