//go:build race

package oncestore

// raceEnabled is true in -race builds, where allocation counts are not
// meaningful.
const raceEnabled = true
