//go:build !race

package constraint

// raceEnabled: see race_on_test.go.
const raceEnabled = false
