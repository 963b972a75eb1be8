// Package fairshare is the rule by which every pool that Parley's callers
// share (legacy sessions, listen streams, single-use states) keeps room
// for callers who hold little of it (design record 039).
//
// A share per caller bounds what one caller takes, but not what many take
// together: callers each at their share fill a pool of size N with N /
// share of them, and the next caller, honest or not, is refused. So the
// last eighth of a pool is kept for callers holding less than a
// sixty-fourth of their share (at least one): a caller already holding
// that much is refused there, however far it is from its share. Filling
// the pool then takes (7/8 of it) / share callers and one more caller for
// every reserve share in the last eighth: with one unit a caller, as many
// callers as the last eighth has units. A pool under eight units keeps no
// reserve: there is no room to keep.
package fairshare

// Divisors of the rule: a pool keeps its last 1/ReserveDivisor for callers
// holding less than their share / ReserveShareDivisor (at least one).
const (
	ReserveDivisor      = 8
	ReserveShareDivisor = 64
)

// ReserveShare is what a caller whose share is share may hold and still
// take from a pool's reserve: share / ReserveShareDivisor, at least one.
func ReserveShare(share int) int {
	return max(1, share/ReserveShareDivisor)
}

// Reserve is the room at the end of a pool of size units that is kept
// for callers under their reserve share: size / ReserveDivisor.
func Reserve(size int) int {
	return size / ReserveDivisor
}

// Refused reports whether a caller holding held units, whose share is
// share, may not take one more unit of a pool of size units of which total
// are taken, because what is left is the reserve and the caller holds its
// reserve share. share <= 0 means the caller has no share (not bounded
// per caller, or unknown), and the reserve does not apply to it either;
// size <= 0 means a pool without a bound. That the pool is full, or the
// caller at its share, is for the caller of Refused to check.
func Refused(held, share, total, size int) bool {
	if share <= 0 || size <= 0 {
		return false
	}
	reserve := Reserve(size)
	return reserve > 0 && total >= size-reserve && held >= ReserveShare(share)
}
