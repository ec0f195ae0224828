package kvcache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"govllm/internal/stats"
)

func newTestManager(t testing.TB, numBlocks, blockSize int, prefix bool) *Manager {
	t.Helper()
	m, err := NewManager(Config{NumBlocks: numBlocks, BlockSize: blockSize, EnablePrefixCaching: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func check(t testing.TB, m *Manager) {
	t.Helper()
	if err := m.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// cacheComputed registers the request's full blocks among the first n
// tokens as a step that computed them does: scheduled, then committed.
func cacheComputed(m *Manager, id string, toks []int32, n int) {
	m.CacheScheduledBlocks(id, toks, n)
	m.CommitScheduled()
}

// seq returns n tokens start, start+1, ...
func seq(start, n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(start + i)
	}
	return s
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"default", DefaultConfig(), true},
		{"one block", Config{NumBlocks: 1, BlockSize: 1}, true},
		{"zero blocks", Config{NumBlocks: 0, BlockSize: 16}, false},
		{"zero block size", Config{NumBlocks: 4, BlockSize: 0}, false},
		{"negative", Config{NumBlocks: -1, BlockSize: 16}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (err == nil) != tt.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("error %v does not wrap ErrInvalidConfig", err)
			}
			if _, err := NewManager(tt.cfg); (err == nil) != tt.ok {
				t.Fatalf("NewManager error = %v, want ok=%v", err, tt.ok)
			}
		})
	}
	if d := DefaultConfig(); d.BlockSize != 16 || !d.EnablePrefixCaching {
		t.Fatalf("DefaultConfig() = %+v", d)
	}
}

func TestNumBlocksForMemory(t *testing.T) {
	tests := []struct {
		budget, perToken, blockSize, want int
	}{
		{1 << 20, 64, 16, 1024},
		{1<<20 - 1, 64, 16, 1023},
		{1000, 64, 16, 0},
		{0, 64, 16, 0},
		{1 << 20, 0, 16, 0},
		{1 << 20, 64, 0, 0},
		{-5, 64, 16, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.budget, "/", tt.perToken, "/", tt.blockSize), func(t *testing.T) {
			if got := NumBlocksForMemory(tt.budget, tt.perToken, tt.blockSize); got != tt.want {
				t.Fatalf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestAllocateGrowFree(t *testing.T) {
	m := newTestManager(t, 8, 4, false)
	tbl, ok := m.AllocateSlots("a", 0, 5, Prefix{}) // 2 blocks
	if !ok || len(tbl) != 2 {
		t.Fatalf("AllocateSlots = %v, %v", tbl, ok)
	}
	if got := m.NumFreeBlocks(); got != 6 {
		t.Fatalf("free = %d, want 6", got)
	}
	// Decode within the second block: no new block.
	if tbl, ok = m.AllocateSlots("a", 5, 3, Prefix{}); !ok || len(tbl) != 2 {
		t.Fatalf("grow within block: %v %v", tbl, ok)
	}
	// Crossing into a third block.
	if tbl, ok = m.AllocateSlots("a", 8, 1, Prefix{}); !ok || len(tbl) != 3 {
		t.Fatalf("grow across block: %v %v", tbl, ok)
	}
	if u := m.Usage(); u != 3.0/8 {
		t.Fatalf("Usage = %v, want %v", u, 3.0/8)
	}
	check(t, m)
	// All or nothing: b wants 6 blocks, only 5 are free.
	if tbl, ok := m.AllocateSlots("b", 0, 24, Prefix{}); ok || tbl != nil {
		t.Fatalf("over-allocation succeeded: %v", tbl)
	}
	if m.NumFreeBlocks() != 5 || m.BlockTable("b") != nil {
		t.Fatalf("failed allocation changed state: free=%d table=%v", m.NumFreeBlocks(), m.BlockTable("b"))
	}
	if _, ok := m.AllocateSlots("b", 0, 20, Prefix{}); !ok {
		t.Fatal("exact fit failed")
	}
	if m.NumFreeBlocks() != 0 || m.Usage() != 1 {
		t.Fatalf("free=%d usage=%v", m.NumFreeBlocks(), m.Usage())
	}
	check(t, m)
	m.Free("a")
	m.Free("b")
	m.Free("unknown")
	if m.NumFreeBlocks() != 8 || m.Usage() != 0 {
		t.Fatalf("after free: free=%d usage=%v", m.NumFreeBlocks(), m.Usage())
	}
	check(t, m)
}

// TestFreeQueueLRU: freed blocks go to the tail in reverse table order;
// allocation takes the head.
func TestFreeQueueLRU(t *testing.T) {
	m := newTestManager(t, 6, 1, false)
	a, _ := m.AllocateSlots("a", 0, 3, Prefix{})
	a = slices.Clone(a) // [0 1 2]
	b, _ := m.AllocateSlots("b", 0, 3, Prefix{})
	b = slices.Clone(b) // [3 4 5]
	m.Free("b")         // queue: 5 4 3
	m.Free("a")         // queue: 5 4 3 2 1 0
	got, ok := m.AllocateSlots("c", 0, 6, Prefix{})
	if !ok {
		t.Fatal("alloc failed")
	}
	want := []BlockID{b[2], b[1], b[0], a[2], a[1], a[0]}
	if !slices.Equal(got, want) {
		t.Fatalf("allocation order %v, want %v", got, want)
	}
	m.Free("c")
	check(t, m)
}

func TestPrefixHits(t *testing.T) {
	const bs = 4
	tests := []struct {
		name       string
		first      []int32 // computed and cached by request a
		second     []int32 // looked up by request b
		wantHit    int
		aliveFirst bool // keep a running while b looks up
	}{
		{"identical prompt, last token recomputed", seq(0, 12), seq(0, 12), 8, false},
		{"identical prompt not block aligned", seq(0, 10), seq(0, 10), 8, true},
		{"longer second", seq(0, 12), seq(0, 20), 12, false},
		{"shorter second", seq(0, 12), seq(0, 7), 4, true},
		{"diverge in block 2", seq(0, 12), append(seq(0, 5), seq(100, 7)...), 4, false},
		{"diverge in block 1", seq(0, 12), seq(50, 12), 0, false},
		{"one token", seq(0, 12), seq(0, 1), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestManager(t, 16, bs, true)
			p := m.ComputedBlocks("a", tt.first, false)
			if p.NumTokens != 0 {
				t.Fatalf("cold cache hit %d", p.NumTokens)
			}
			if _, ok := m.AllocateSlots("a", 0, len(tt.first), p); !ok {
				t.Fatal("alloc a")
			}
			cacheComputed(m, "a", tt.first, len(tt.first))
			aTable := slices.Clone(m.BlockTable("a"))
			if !tt.aliveFirst {
				m.Free("a")
			}
			freeBefore := m.NumFreeBlocks()
			p = m.ComputedBlocks("b", tt.second, false)
			if p.NumTokens != tt.wantHit || len(p.Blocks)*bs != tt.wantHit {
				t.Fatalf("hit %d tokens (%d blocks), want %d", p.NumTokens, len(p.Blocks), tt.wantHit)
			}
			if !slices.Equal(p.Blocks, aTable[:len(p.Blocks)]) {
				t.Fatalf("hit blocks %v, a's table %v", p.Blocks, aTable)
			}
			if m.NumFreeBlocks() != freeBefore {
				t.Fatal("ComputedBlocks changed the free count")
			}
			tbl, ok := m.AllocateSlots("b", p.NumTokens, len(tt.second)-p.NumTokens, p)
			if !ok || !slices.Equal(tbl[:len(p.Blocks)], p.Blocks) || len(tbl) != m.BlocksFor(len(tt.second)) {
				t.Fatalf("table %v, ok %v", tbl, ok)
			}
			st := m.TakePrefixCacheStats()
			want := stats.PrefixCacheStats{Requests: 2, Queries: len(tt.first) + len(tt.second), Hits: tt.wantHit}
			if st != want {
				t.Fatalf("stats %+v, want %+v", st, want)
			}
			if st := m.TakePrefixCacheStats(); st != (stats.PrefixCacheStats{}) {
				t.Fatalf("stats not drained: %+v", st)
			}
			check(t, m)
			m.Free("a")
			m.Free("b")
			if m.NumFreeBlocks() != 16 {
				t.Fatalf("free %d", m.NumFreeBlocks())
			}
			check(t, m)
		})
	}
}

func TestSharedBlockRefcount(t *testing.T) {
	m := newTestManager(t, 8, 2, true)
	toks := seq(0, 5)
	p := m.ComputedBlocks("a", toks, false)
	m.AllocateSlots("a", 0, 5, p)
	cacheComputed(m, "a", toks, 5)
	p = m.ComputedBlocks("b", toks, false)
	if p.NumTokens != 4 {
		t.Fatalf("hit %d", p.NumTokens)
	}
	m.AllocateSlots("b", 4, 1, p)
	if m.NumFreeBlocks() != 4 { // a: 3 blocks, b: 2 shared + 1 own
		t.Fatalf("free %d, want 4", m.NumFreeBlocks())
	}
	m.Free("a")
	if m.NumFreeBlocks() != 5 { // only a's private tail block is free
		t.Fatalf("free %d, want 5", m.NumFreeBlocks())
	}
	check(t, m)
	m.Free("b")
	if m.NumFreeBlocks() != 8 || m.NumCachedBlocks() != 2 {
		t.Fatalf("free %d cached %d", m.NumFreeBlocks(), m.NumCachedBlocks())
	}
	check(t, m)
}

// TestEvictionOrder: cached blocks are evicted least-recently-freed first,
// and a request's tail blocks before its head blocks.
func TestEvictionOrder(t *testing.T) {
	m := newTestManager(t, 4, 2, true)
	toks := seq(0, 9) // 4 full blocks... 9 tokens needs 5 blocks; use 8
	toks = toks[:8]
	p := m.ComputedBlocks("a", toks, false)
	m.AllocateSlots("a", 0, 8, p)
	cacheComputed(m, "a", toks, 8)
	m.Free("a")
	if m.NumCachedBlocks() != 4 {
		t.Fatalf("cached %d", m.NumCachedBlocks())
	}
	// One new block evicts a's last block: a's first 3 blocks still hit.
	m.AllocateSlots("x", 0, 1, Prefix{})
	if got := m.ComputedBlocks("y", append(slices.Clone(toks), 99), false).NumTokens; got != 6 {
		t.Fatalf("after one eviction hit %d, want 6", got)
	}
	m.Free("y")
	m.AllocateSlots("z", 0, 4, Prefix{}) // evicts blocks 2 and 1 of a
	if got := m.ComputedBlocks("y", append(slices.Clone(toks), 99), false).NumTokens; got != 2 {
		t.Fatalf("after three evictions hit %d, want 2", got)
	}
	m.Free("y")
	m.Free("x")
	m.Free("z")
	check(t, m)
}

// TestHitRemovedFromFreeQueue: a cached free block that is hit leaves the
// free queue, so allocation cannot evict it while it is in use.
func TestHitRemovedFromFreeQueue(t *testing.T) {
	m := newTestManager(t, 3, 2, true)
	toks := seq(0, 4)
	m.AllocateSlots("a", 0, 4, m.ComputedBlocks("a", toks, false))
	cacheComputed(m, "a", toks, 4)
	m.Free("a")
	p := m.ComputedBlocks("b", append(slices.Clone(toks), 7), false) // 5 tokens: 2 blocks hit
	if p.NumTokens != 4 {
		t.Fatalf("hit %d", p.NumTokens)
	}
	// b needs its 2 hit blocks (from the free queue) plus 1 new one: exactly 3.
	if _, ok := m.AllocateSlots("b", 4, 1, p); !ok {
		t.Fatal("alloc with hits failed")
	}
	if m.NumFreeBlocks() != 0 || m.NumCachedBlocks() != 2 {
		t.Fatalf("free %d cached %d", m.NumFreeBlocks(), m.NumCachedBlocks())
	}
	// Nothing left: an all-or-nothing failure must not touch b's blocks.
	if _, ok := m.AllocateSlots("c", 0, 1, Prefix{}); ok {
		t.Fatal("allocated from an empty pool")
	}
	check(t, m)
	m.Free("b")
	check(t, m)
}

// TestAllocateWithHitsAllOrNothing: hit blocks in the free queue count
// against the free blocks; a failing allocation leaves them cached.
func TestAllocateWithHitsAllOrNothing(t *testing.T) {
	m := newTestManager(t, 3, 2, true)
	toks := seq(0, 4)
	m.AllocateSlots("a", 0, 4, m.ComputedBlocks("a", toks, false))
	cacheComputed(m, "a", toks, 4)
	m.Free("a")
	long := append(slices.Clone(toks), seq(10, 3)...) // 7 tokens: 4 blocks
	p := m.ComputedBlocks("b", long, false)
	if _, ok := m.AllocateSlots("b", p.NumTokens, len(long)-p.NumTokens, p); ok {
		t.Fatal("needs 4 blocks of 3")
	}
	if m.NumFreeBlocks() != 3 || m.NumCachedBlocks() != 2 {
		t.Fatalf("free %d cached %d", m.NumFreeBlocks(), m.NumCachedBlocks())
	}
	m.Free("b")
	check(t, m)
}

func TestPreemptedStatsAndDisabled(t *testing.T) {
	m := newTestManager(t, 8, 2, true)
	toks := seq(0, 6)
	m.AllocateSlots("a", 0, 6, m.ComputedBlocks("a", toks, false))
	cacheComputed(m, "a", toks, 6)
	m.Free("a")
	m.TakePrefixCacheStats()
	// hog leaves two free blocks: a's first two (cached) blocks.
	m.AllocateSlots("hog", 0, 12, Prefix{})
	p := m.ComputedBlocks("a", toks, true)
	if st := m.TakePrefixCacheStats(); st.PreemptedRequests != 0 {
		t.Fatalf("lookup recorded before allocation: %+v", st)
	}
	// A failed allocation records nothing; the successful retry records once.
	if _, ok := m.AllocateSlots("a", p.NumTokens, len(toks)-p.NumTokens, p); ok || p.NumTokens != 4 {
		t.Fatalf("hit %d; allocation of 2 hit + 1 new blocks from 2 free succeeded", p.NumTokens)
	}
	m.Free("hog")
	p = m.ComputedBlocks("a", toks, true)
	if _, ok := m.AllocateSlots("a", p.NumTokens, len(toks)-p.NumTokens, p); !ok {
		t.Fatal("retry failed")
	}
	m.Free("a")
	got := m.TakePrefixCacheStats()
	want := stats.PrefixCacheStats{PreemptedRequests: 1, PreemptedQueries: 6, PreemptedHits: 4}
	if got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}

	off := newTestManager(t, 8, 2, false)
	off.AllocateSlots("a", 0, 6, off.ComputedBlocks("a", toks, false))
	cacheComputed(off, "a", toks, 6)
	off.Free("a")
	if p := off.ComputedBlocks("b", toks, false); p.NumTokens != 0 {
		t.Fatalf("hit with caching off: %d", p.NumTokens)
	}
	if st := off.TakePrefixCacheStats(); st != (stats.PrefixCacheStats{}) || off.NumCachedBlocks() != 0 {
		t.Fatalf("caching off recorded %+v, cached %d", st, off.NumCachedBlocks())
	}
	check(t, off)
}

// TestDuplicateBlocksStayPrivate: two requests computing the same prompt at
// once; the second's identical block is not registered.
func TestDuplicateBlocksStayPrivate(t *testing.T) {
	m := newTestManager(t, 8, 2, true)
	toks := seq(0, 5)
	m.AllocateSlots("a", 0, 5, m.ComputedBlocks("a", toks, false))
	m.AllocateSlots("b", 0, 5, m.ComputedBlocks("b", toks, false))
	cacheComputed(m, "a", toks, 5)
	cacheComputed(m, "b", toks, 5)
	if m.NumCachedBlocks() != 2 {
		t.Fatalf("cached %d, want 2", m.NumCachedBlocks())
	}
	check(t, m)
	m.Free("a")
	m.Free("b")
	check(t, m)
}

// TestCollisionNeverReusesWrongTokens forges a cache entry under the key of
// other tokens (as a hash collision would) and checks that lookup misses.
func TestCollisionNeverReusesWrongTokens(t *testing.T) {
	m := newTestManager(t, 4, 2, true)
	want := seq(0, 2)
	forged := seq(40, 2)
	k := hashBlock(blockKey{}, want)
	m.p.register(0, blockKey{}, k, forged) // block 0 claims want's key with other tokens
	if p := m.ComputedBlocks("a", append(slices.Clone(want), 9), false); p.NumTokens != 0 {
		t.Fatalf("collision reused block with wrong tokens: hit %d", p.NumTokens)
	}
	if err := m.CheckInvariants(); err == nil {
		t.Fatal("CheckInvariants accepts a block whose tokens do not hash to its key")
	}
	m.p.evict(0)
	m.Free("a")
	check(t, m)
}

func TestHashChainDependsOnParent(t *testing.T) {
	blk := seq(7, 16)
	a := hashBlock(blockKey{}, blk)
	b := hashBlock(a, blk)
	c := hashBlock(blockKey{}, seq(8, 16))
	if a == b || a == c || b == c {
		t.Fatalf("keys collide: %x %x %x", a, b, c)
	}
	if hashBlock(blockKey{}, blk) != a {
		t.Fatal("hash not deterministic")
	}
}

func TestResetPrefixCache(t *testing.T) {
	m := newTestManager(t, 4, 2, true)
	toks := seq(0, 4)
	m.AllocateSlots("a", 0, 4, m.ComputedBlocks("a", toks, false))
	cacheComputed(m, "a", toks, 4)
	if m.ResetPrefixCache() {
		t.Fatal("reset with blocks in use")
	}
	m.Free("a")
	m.TakePrefixCacheStats()
	if !m.ResetPrefixCache() || m.NumCachedBlocks() != 0 {
		t.Fatal("reset failed")
	}
	if st := m.TakePrefixCacheStats(); !st.Reset {
		t.Fatal("reset not flagged in stats")
	}
	check(t, m)
}

// TestRandomOps runs random request lifecycles against the invariant check.
func TestRandomOps(t *testing.T) {
	for _, prefix := range []bool{false, true} {
		t.Run(fmt.Sprint("prefix=", prefix), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			m := newTestManager(t, 32, 4, prefix)
			type req struct {
				toks     []int32
				computed int
			}
			live := map[string]*req{}
			for step := range 3000 {
				id := fmt.Sprint("r", rng.IntN(12))
				r := live[id]
				switch {
				case r == nil:
					// New request: a prompt from a few shared prefixes.
					n := 1 + rng.IntN(30)
					base := int32(rng.IntN(3)) * 1000
					toks := make([]int32, n)
					for i := range toks {
						toks[i] = base + int32(i)
						if rng.IntN(10) == 0 {
							toks[i] = int32(rng.IntN(50))
						}
					}
					p := m.ComputedBlocks(id, toks, false)
					if _, ok := m.AllocateSlots(id, p.NumTokens, len(toks)-p.NumTokens, p); ok {
						cacheComputed(m, id, toks, len(toks))
						live[id] = &req{toks: toks, computed: len(toks)}
					} else {
						m.Free(id)
					}
				case rng.IntN(8) == 0:
					m.Free(id)
					delete(live, id)
				default:
					// Decode one token.
					if _, ok := m.AllocateSlots(id, r.computed, 1, Prefix{}); !ok {
						m.Free(id)
						delete(live, id)
						break
					}
					r.toks = append(r.toks, int32(rng.IntN(50)))
					r.computed++
					cacheComputed(m, id, r.toks, r.computed)
				}
				if err := m.CheckInvariants(); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
			}
			for id := range live {
				m.Free(id)
			}
			if m.NumFreeBlocks() != 32 {
				t.Fatalf("free %d after freeing all", m.NumFreeBlocks())
			}
			check(t, m)
		})
	}
}
