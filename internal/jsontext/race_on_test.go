//go:build race

package jsontext

// raceEnabled is true in -race builds, where sync.Pool drops items at random
// and allocation counts are not meaningful.
const raceEnabled = true
