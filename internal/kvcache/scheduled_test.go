package kvcache

import "testing"

// TestScheduledBlocks: blocks registered when their step is planned are
// hit at once by another request; they survive the writer's Free only
// once the step is committed, and DropScheduled takes them all back (the
// writer registers them again the next time).
func TestScheduledBlocks(t *testing.T) {
	toks := seq(100, 10) // block size 4: 2 full blocks + 2
	tests := []struct {
		name string
		// end runs after a is scheduled (and b hit its blocks, when hitB).
		end       func(m *Manager)
		hitB      bool
		wantCache int // cached blocks afterwards
		wantHit   int // tokens a third request then finds
	}{
		{name: "committed, writer freed", end: func(m *Manager) { m.CommitScheduled(); m.Free("a") }, wantCache: 2, wantHit: 8},
		{name: "writer freed before the step ran", end: func(m *Manager) { m.Free("a") }, wantCache: 0, wantHit: 0},
		{name: "writer freed, reader holds them", hitB: true, end: func(m *Manager) { m.Free("a") }, wantCache: 2, wantHit: 8},
		{name: "dropped", hitB: true, end: func(m *Manager) { m.Free("b"); m.DropScheduled() }, wantCache: 0, wantHit: 0},
		{name: "dropped, then scheduled again", end: func(m *Manager) {
			m.DropScheduled()
			m.CacheScheduledBlocks("a", toks, 10)
			m.CommitScheduled()
		}, wantCache: 2, wantHit: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestManager(t, 8, 4, true)
			if _, ok := m.AllocateSlots("a", 0, 10, m.ComputedBlocks("a", toks, false)); !ok {
				t.Fatal("allocate a")
			}
			m.CacheScheduledBlocks("a", toks, 10)
			if m.PendingBefore("a", 0) || !m.PendingBefore("a", 1) {
				t.Fatal("PendingBefore: a's first block is pending, and no block precedes token 0")
			}
			if tt.hitB {
				p := m.ComputedBlocks("b", toks, false)
				if p.NumTokens != 8 {
					t.Fatalf("b hits %d tokens before the step ran, want 8", p.NumTokens)
				}
				if _, ok := m.AllocateSlots("b", 8, 2, p); !ok || !m.PendingBefore("b", 8) {
					t.Fatalf("allocate b: %v; its prefix is pending", ok)
				}
			}
			check(t, m)
			tt.end(m)
			check(t, m)
			if got := m.NumCachedBlocks(); got != tt.wantCache {
				t.Errorf("%d cached blocks, want %d", got, tt.wantCache)
			}
			if got := m.ComputedBlocks("c", toks, false).NumTokens; got != tt.wantHit {
				t.Errorf("a third request hits %d tokens, want %d", got, tt.wantHit)
			}
		})
	}
}
