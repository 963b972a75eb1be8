//go:build !race

package jsontext

const raceEnabled = false
