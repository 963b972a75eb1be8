package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// childEnv makes the test binary process 2, resuming from the file it
// names, as -resume makes the command.
const childEnv = "RESUME_TEST_PENDING"

func TestMain(m *testing.M) {
	if err := ensureKeys(); err != nil { // process 2 inherits them
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if path := os.Getenv(childEnv); path != "" {
		if err := resume(context.Background(), os.Stdout, path); err != nil {
			fmt.Fprintln(os.Stderr, "resume:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testBinaryResuming(path string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+path, "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	return cmd, nil
}

func TestResume(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := begin(context.Background(), &stdout, &stderr, testBinaryResuming); code != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, &stdout, &stderr)
	}
	lines := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; last != "Provisioned 'orders' in eu-west-1." {
		t.Errorf("last line %q\n%s", last, &stdout)
	}
	// Two processes spoke: the one that asked and the one that answered.
	pids := map[string]bool{}
	for _, l := range lines[:len(lines)-1] {
		if pid, _, ok := strings.Cut(l, "]"); ok {
			pids[pid] = true
		}
	}
	if len(pids) != 2 {
		t.Errorf("output from %d processes, want 2:\n%s", len(pids), &stdout)
	}
	if !strings.Contains(stdout.String(), fmt.Sprintf("[pid %d] round 1: the server asks \"Which region should orders live in?\"", os.Getpid())) {
		t.Errorf("the first process did not report the round:\n%s", &stdout)
	}
}

// A second process without the first one's keys cannot take the round:
// its server refuses the state with the fixed error.
func TestResumeWithoutTheKeysIsRefused(t *testing.T) {
	var stdout, stderr bytes.Buffer
	otherKeys := func(path string) (*exec.Cmd, error) {
		cmd, err := testBinaryResuming(path)
		if err == nil {
			cmd.Env = append(cmd.Env, keysEnv+"="+base64.StdEncoding.EncodeToString([]byte("another process's key: 0123456789")))
		}
		return cmd, err
	}
	if code := begin(context.Background(), &stdout, &stderr, otherKeys); code != 1 {
		t.Fatalf("exit status %d, want 1\nstdout:\n%s\nstderr:\n%s", code, &stdout, &stderr)
	}
	if !strings.Contains(stderr.String(), "Invalid or expired requestState") {
		t.Errorf("stderr does not show the fixed rejection:\n%s", &stderr)
	}
}

// Process 2's failure is process 1's exit status.
func TestResumeFailurePropagates(t *testing.T) {
	var stdout, stderr bytes.Buffer
	failing := func(string) (*exec.Cmd, error) { return testBinaryResuming("/nonexistent/pending.json") }
	if code := begin(context.Background(), &stdout, &stderr, failing); code != 1 {
		t.Errorf("exit status %d, want 1\n%s", code, &stderr)
	}
}
