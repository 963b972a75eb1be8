//go:build !race

package tasks_test

const raceEnabled = false
