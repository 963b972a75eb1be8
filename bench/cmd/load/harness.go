package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"
)

// harness measures servers started from argv (followed by -sdk, -mode and
// -addr).
type harness struct {
	argv     []string
	env      []string
	warmup   time.Duration
	duration time.Duration
	progress io.Writer
}

// run measures every server of sdks at every concurrency of conns in every
// mode, rounds times over, the servers alternating at each concurrency and
// the rounds following each other, so that a burst of other work on a
// shared machine lands on all of them rather than on one; each cell of the
// results is the round of median calls/s, and every ratio a median of
// ratios within rounds. Then, with sessions > 0, it
// measures the memory of that many idle 2025-11-25 sessions on each server
// that keeps them.
func (h harness) run(ctx context.Context, sdks, modes []string, conns []int, rounds, sessions int) *results {
	res := &results{idle: map[string]idle{}, idleErr: map[string]error{}, sessions: sessions, rounds: rounds}
	var all []cell
	defer func() { res.all, res.cells = all, medians(all) }()
	for round := range rounds {
		for _, mode := range modes {
			for _, n := range conns {
				for _, sdk := range sdks {
					if ctx.Err() != nil {
						return res
					}
					fmt.Fprintf(h.progress, "round %d of %d, %s, %d connections: %s\n", round+1, rounds, mode, n, sdk)
					c := h.cell(ctx, sdk, mode, n)
					c.round = round
					if c.err != nil {
						fmt.Fprintf(h.progress, "  %v\n", c.err)
					}
					all = append(all, c)
				}
			}
		}
	}
	if sessions <= 0 {
		return res
	}
	for _, sdk := range sdks {
		if sdk == sdkCeiling || ctx.Err() != nil {
			continue // the ceiling keeps no sessions
		}
		fmt.Fprintf(h.progress, "idle sessions: %s\n", sdk)
		s, err := startServer(ctx, h.argv, h.env, sdk, modeSession)
		if err != nil {
			res.idleErr[sdk] = err
			continue
		}
		id, err := idleSessions(ctx, s, sessions)
		s.stop()
		if err != nil {
			res.idleErr[sdk] = err
			continue
		}
		res.idle[sdk] = id
	}
	return res
}

// cell measures one server, in a fresh process, at one concurrency.
func (h harness) cell(ctx context.Context, sdk, mode string, conns int) cell {
	c := cell{sdk: sdk, mode: mode, conns: conns}
	s, err := startServer(ctx, h.argv, h.env, sdk, mode)
	if err != nil {
		c.err = err
		return c
	}
	defer s.stop()
	pid := s.cmd.Process.Pid
	var marks []usage
	var markErr error
	measure := func() {
		u, err := readUsage(pid)
		markErr = cmp(markErr, err)
		marks = append(marks, u)
	}
	c.load, err = drive(ctx, s.url, mode, conns, timed(h.warmup, h.duration), measure)
	if err = cmp(err, markErr); err != nil {
		c.err = err
		return c
	}
	end, err := readUsage(pid)
	if err != nil {
		c.err = err
		return c
	}
	c.peakRSS = end.peakRSS
	c.cpu = marks[1].cpu - marks[0].cpu
	return c
}

// medians is one cell per server, mode and concurrency, in the order first
// measured: the round with the median calls/s (the lower of the two
// middle ones for an even count), its failures the sum of every round's.
// A cell that could not be measured in some round is the median of the
// others; one never measured keeps its error.
func medians(all []cell) []cell {
	type key struct {
		sdk, mode string
		conns     int
	}
	var order []key
	byKey := map[key][]cell{}
	for _, c := range all {
		k := key{c.sdk, c.mode, c.conns}
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], c)
	}
	out := make([]cell, 0, len(order))
	for _, k := range order {
		var ok []cell
		var failures int64
		var failure string
		for _, c := range byKey[k] {
			if c.err != nil {
				continue
			}
			ok = append(ok, c)
			failures += c.load.failures
			if failure == "" {
				failure = c.load.failure
			}
		}
		if len(ok) == 0 {
			out = append(out, byKey[k][0])
			continue
		}
		slices.SortFunc(ok, func(a, b cell) int { return cmpFloat(a.load.rate(), b.load.rate()) })
		m := ok[(len(ok)-1)/2]
		m.load.failures, m.load.failure = failures, failure
		out = append(out, m)
	}
	return out
}

// cmpFloat orders two floats.
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
