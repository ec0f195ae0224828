package kvcache

import "testing"

// BenchmarkComputedBlocks: prefix lookup of a 1024-token prompt whose
// first 1008 tokens are cached (63 blocks hashed, verified and hit).
func BenchmarkComputedBlocks(b *testing.B) {
	m := newTestManager(b, 256, 16, true)
	toks := seq(0, 1024)
	m.AllocateSlots("a", 0, len(toks), m.ComputedBlocks("a", toks, false))
	cacheComputed(m, "a", toks, len(toks))
	m.Free("a")
	b.ReportAllocs()
	for b.Loop() {
		if p := m.ComputedBlocks("b", toks, false); p.NumTokens != 1008 {
			b.Fatal(p.NumTokens)
		}
		m.Free("b")
	}
}

// BenchmarkAllocateFree: a 256-token request allocated, decoded 16 tokens
// and freed.
func BenchmarkAllocateFree(b *testing.B) {
	m := newTestManager(b, 1024, 16, false)
	b.ReportAllocs()
	for b.Loop() {
		m.AllocateSlots("a", 0, 256, Prefix{})
		for i := range 16 {
			m.AllocateSlots("a", 256+i, 1, Prefix{})
		}
		m.Free("a")
	}
}
