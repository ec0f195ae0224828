package kvcache

import "fmt"

// CheckInvariants verifies refcounts against the request block tables, the
// free queue's links and length, and the prefix-cache map against the
// per-block registrations (re-hashing every cached block). It is O(blocks +
// table entries): tests call it; built with the `invariants` tag every
// mutating method calls it.
func (m *Manager) CheckInvariants() error {
	p := m.p
	refs := make([]int32, p.n)
	for id, rb := range m.reqs {
		seen := make(map[BlockID]bool, len(rb.blocks))
		for _, b := range rb.blocks {
			if b < 0 || int32(b) >= p.n {
				return fmt.Errorf("kvcache: request %q holds out-of-range block %d", id, b)
			}
			if seen[b] {
				return fmt.Errorf("kvcache: request %q holds block %d twice", id, b)
			}
			seen[b] = true
			refs[b]++
		}
		if rb.numCached > len(rb.blocks) {
			return fmt.Errorf("kvcache: request %q numCached %d > %d blocks", id, rb.numCached, len(rb.blocks))
		}
	}
	zero := 0
	for b := range p.n {
		if refs[b] != p.refCnt[b] {
			return fmt.Errorf("kvcache: block %d refcount %d, held by %d requests", b, p.refCnt[b], refs[b])
		}
		if p.refCnt[b] == 0 {
			zero++
		}
		if (p.refCnt[b] == 0) != p.inFree(b) {
			return fmt.Errorf("kvcache: block %d refcount %d but inFree=%v", b, p.refCnt[b], p.inFree(b))
		}
	}
	if zero != p.numFree {
		return fmt.Errorf("kvcache: numFree %d but %d blocks have refcount 0", p.numFree, zero)
	}
	// Walk the queue both ways.
	s := p.n
	count := 0
	for b, prev := p.next[s], s; b != s; prev, b = b, p.next[b] {
		if b < 0 || b > s || p.prev[b] != prev {
			return fmt.Errorf("kvcache: free queue broken at block %d", b)
		}
		if count++; count > int(p.n) {
			return fmt.Errorf("kvcache: free queue has a cycle")
		}
	}
	if count != p.numFree {
		return fmt.Errorf("kvcache: free queue holds %d blocks, numFree %d", count, p.numFree)
	}
	back := 0
	for b := p.prev[s]; b != s; b = p.prev[b] {
		if back++; back > int(p.n) {
			return fmt.Errorf("kvcache: free queue has a backward cycle")
		}
	}
	if back != count {
		return fmt.Errorf("kvcache: free queue forward %d, backward %d", count, back)
	}
	return m.checkPrefixCache()
}

// checkPrefixCache verifies the prefix-cache map against the per-block
// registrations (re-hashing every cached block), the pending blocks, and
// the keys of the requests' registered blocks.
func (m *Manager) checkPrefixCache() error {
	p := m.p
	listed := make(map[int32]bool, len(m.pending))
	for _, b := range m.pending {
		listed[b] = true
	}
	numCached := 0
	for b := range p.n {
		if p.pending[b] && (!p.cached[b] || p.refCnt[b] == 0 || !listed[b]) {
			return fmt.Errorf("kvcache: pending block %d: cached %v, refcount %d, listed %v", b, p.cached[b], p.refCnt[b], listed[b])
		}
		if !p.cached[b] {
			continue
		}
		numCached++
		if got, ok := p.table[p.keys[b]]; !ok || got != BlockID(b) {
			return fmt.Errorf("kvcache: cached block %d not in the map under its key", b)
		}
		if k := hashBlock(p.parents[b], p.blockTokens(b)); k != p.keys[b] {
			return fmt.Errorf("kvcache: cached block %d: tokens hash to %x, key %x", b, k, p.keys[b])
		}
	}
	if numCached != len(p.table) {
		return fmt.Errorf("kvcache: %d blocks cached, map holds %d", numCached, len(p.table))
	}
	for id, rb := range m.reqs {
		for i := range min(rb.numCached, len(rb.keys)) {
			b := rb.blocks[i]
			if p.cached[b] && p.keys[b] != rb.keys[i] {
				return fmt.Errorf("kvcache: request %q block %d (%d) cached under another key", id, i, b)
			}
		}
	}
	return nil
}
