//go:build race

package tasks_test

// raceEnabled is true in -race builds, where allocation counts are not
// meaningful.
const raceEnabled = true
