//go:build race

package requeststate

// raceEnabled is true in -race builds, where sync.Pool drops items at random
// and allocation counts are not meaningful.
const raceEnabled = true
