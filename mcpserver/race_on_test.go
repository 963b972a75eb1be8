//go:build race

package mcpserver_test

// raceEnabled is true in -race builds, where sync.Pool drops items at random
// and allocation counts are not meaningful.
const raceEnabled = true
