package cputime

import (
	"runtime"
	"testing"
)

// TestMonotonic: CPU time never goes back, and spinning adds to it where
// it can be read.
func TestMonotonic(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p0 := Process()
	t0, ok := Thread()
	x := 0
	for i := range 50_000_000 {
		x += i ^ x
	}
	_ = x
	if p1 := Process(); p1 < p0 || runtime.GOOS == "linux" && p1 == p0 {
		t.Fatalf("Process %v then %v", p0, p1)
	}
	if t1, ok1 := Thread(); ok != ok1 || ok && t1 <= t0 {
		t.Fatalf("Thread %v (%v) then %v (%v)", t0, ok, t1, ok1)
	}
}
