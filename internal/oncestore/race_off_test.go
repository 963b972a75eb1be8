//go:build !race

package oncestore

const raceEnabled = false
