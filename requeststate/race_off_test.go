//go:build !race

package requeststate

const raceEnabled = false
