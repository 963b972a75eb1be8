package tasks_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/tasks"
)

// storedTaskBudget is issue 35's bound on what a finished task holds in
// the memory store until its TTL: its record, its result and its place in
// the store's maps (about 1 KiB measured; design record 050). Read from
// runtime.MemStats after collections, without -race (make allocs).
const storedTaskBudget = 4 << 10

// TestStoredTaskAllocBudget: a thousand tasks that finished, each with a
// small result, hold at most storedTaskBudget bytes each in the memory
// store, and no goroutine.
func TestStoredTaskAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("memory figures are meaningless under -race; make test checks the budget in a separate run without it")
	}
	const n = 1000
	store := tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxOpenPerCaller: 2 * n, MaxFinishedPerCaller: 2 * n})
	f := newFixture(t, &tasks.Options{Store: store})
	var done sync.WaitGroup
	finished := make(chan struct{})
	f.bodies["quick"] = func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
		defer done.Done()
		return mcp.TextResult("done"), nil
	}
	held := func() (float64, int) {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapInuse + ms.StackInuse), runtime.NumGoroutine()
	}
	done.Add(1)
	f.start("p", "quick") // warm: the store's maps, the manager
	done.Wait()
	ids := make([]string, 0, n)
	h0, g0 := held()
	done.Add(n)
	for range n {
		ids = append(ids, f.start("p", "quick"))
	}
	go func() { done.Wait(); close(finished) }()
	testwait.Recv(t, finished, "every task's body to return")
	deadline := time.Now().Add(testwait.FailAfter)
	for _, id := range []string{ids[0], ids[n-1]} { // finished and recorded
		for f.mustGet("p", id).Status != mcp.TaskCompleted {
			if time.Now().After(deadline) {
				t.Fatalf("task %s not recorded as completed after %v", id, testwait.FailAfter)
			}
			runtime.Gosched()
		}
	}
	h1, g1 := held()
	per := (h1 - h0) / n
	t.Logf("a finished task in the memory store holds %.0f bytes (budget %d), %d goroutines for %d tasks", per, storedTaskBudget, g1-g0, n)
	if per > storedTaskBudget {
		t.Errorf("a finished task holds %.0f bytes in the memory store, over the budget of %d", per, storedTaskBudget)
	}
	if g1-g0 > n/100 {
		t.Errorf("%d finished tasks hold %d goroutines", n, g1-g0)
	}
	if store.Len() < n {
		t.Errorf("the store holds %d tasks, want %d", store.Len(), n+1)
	}
}
