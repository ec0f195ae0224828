//go:build race

package constraint

// raceEnabled: the race detector slows the whole-mask checks about tenfold,
// so they check fewer tokens under it.
const raceEnabled = true
