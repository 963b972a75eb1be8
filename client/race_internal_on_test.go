//go:build race

package client

const raceEnabledInternal = true
