package fairshare

import "testing"

func TestReserveShare(t *testing.T) {
	for share, want := range map[int]int{1: 1, 16: 1, 63: 1, 64: 1, 100: 1, 128: 2, 16384: 256} {
		if got := ReserveShare(share); got != want {
			t.Errorf("ReserveShare(%d) = %d, want %d", share, got, want)
		}
	}
}

// TestRefused: the last eighth of a pool (from size - size/8 taken on) is
// refused to a caller holding its reserve share, and to nobody else;
// before it, nobody is refused; without a share or a bound, or in a pool
// too small to keep an eighth, nobody is.
func TestRefused(t *testing.T) {
	for _, c := range []struct {
		held, share, total, size int
		want                     bool
	}{
		{0, 100, 999, 1000, false},  // a new caller takes from the reserve
		{1, 100, 875, 1000, true},   // the reserve begins at 875
		{1, 100, 874, 1000, false},  // the last unit before it
		{1, 128, 900, 1000, false},  // a reserve share of 2
		{2, 128, 900, 1000, true},   // at it
		{99, 100, 874, 1000, false}, // under the share, before the reserve: the share's business
		{5, 0, 999, 1000, false},    // no share: not bounded per caller
		{5, -1, 999, 1000, false},   // negative share: the same
		{5, 16, 999, 0, false},      // no bound on the pool
		{5, 16, 6, 7, false},        // under eight: no reserve
		{1, 16, 7, 8, true},         // eight: a reserve of one
	} {
		if got := Refused(c.held, c.share, c.total, c.size); got != c.want {
			t.Errorf("Refused(held %d, share %d, total %d, size %d) = %v, want %v", c.held, c.share, c.total, c.size, got, c.want)
		}
	}
}
