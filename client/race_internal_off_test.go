//go:build !race

package client

const raceEnabledInternal = false
