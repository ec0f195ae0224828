package kvcache

import (
	"fmt"
	"slices"

	"govllm/internal/stats"
)

// Prefix is the cached prefix ComputedBlocks found for a request. Pass it
// unchanged to the AllocateSlots call that follows; Blocks aliases a
// Manager buffer that the next ComputedBlocks call overwrites.
type Prefix struct {
	Blocks    []BlockID
	NumTokens int // len(Blocks) * BlockSize

	// The lookup, recorded in the prefix-cache stats by a successful
	// AllocateSlots.
	looked     bool
	numQueried int
	preempted  bool
}

// reqBlocks is one request's block table and hash chain.
type reqBlocks struct {
	blocks []BlockID
	// keys[i] is the prefix-cache key of the request's full block i, computed
	// lazily from its tokens (tokens only ever append, so keys stay valid).
	keys []blockKey
	// numCached blocks at the head of blocks have gone through
	// CacheScheduledBlocks (registered, or left private because an identical block
	// was already cached).
	numCached int
}

// Manager is the KV-cache manager (vLLM KVCacheManager + BlockPool). Request
// ids are strings so that this package needs no scheduler types.
// Not safe for concurrent use.
type Manager struct {
	cfg     Config
	p       *pool
	reqs    map[string]*reqBlocks
	spare   []*reqBlocks // recycled request states
	scratch []BlockID    // Prefix.Blocks buffer
	stats   stats.PrefixCacheStats
	// pending lists the blocks CacheScheduledBlocks registered since the
	// last CommitScheduled or DropScheduled (some may have been evicted
	// since: pool.pending tells).
	pending []int32
}

// NewManager builds a Manager with every block free.
func NewManager(cfg Config) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Manager{
		cfg:  cfg,
		p:    newPool(cfg.NumBlocks, cfg.BlockSize),
		reqs: make(map[string]*reqBlocks),
	}, nil
}

// Config returns the configuration the Manager was built with.
func (m *Manager) Config() Config { return m.cfg }

// BlockSize is the number of tokens per block.
func (m *Manager) BlockSize() int { return m.cfg.BlockSize }

// NumBlocks is the total number of blocks.
func (m *Manager) NumBlocks() int { return m.cfg.NumBlocks }

// NumFreeBlocks is the number of blocks with refcount 0 (cached or not).
func (m *Manager) NumFreeBlocks() int { return m.p.numFree }

// NumCachedBlocks is the number of blocks registered in the prefix cache.
func (m *Manager) NumCachedBlocks() int { return len(m.p.table) }

// Usage is the fraction of blocks in use: 1 − free/NumBlocks (no null block).
func (m *Manager) Usage() float64 {
	return 1 - float64(m.p.numFree)/float64(m.cfg.NumBlocks)
}

// BlocksFor is the number of blocks needed to hold numTokens tokens.
func (m *Manager) BlocksFor(numTokens int) int {
	return (numTokens + m.cfg.BlockSize - 1) / m.cfg.BlockSize
}

// BlockTable returns the request's blocks in logical order. The slice is
// owned by the Manager and valid until the request's next AllocateSlots or
// Free.
func (m *Manager) BlockTable(reqID string) []BlockID {
	if rb := m.reqs[reqID]; rb != nil {
		return rb.blocks
	}
	return nil
}

// TakePrefixCacheStats returns the lookups recorded since the previous call
// and resets them (per-step deltas).
func (m *Manager) TakePrefixCacheStats() stats.PrefixCacheStats {
	s := m.stats
	m.stats = stats.PrefixCacheStats{}
	return s
}

func (m *Manager) state(reqID string) *reqBlocks {
	rb := m.reqs[reqID]
	if rb == nil {
		if n := len(m.spare); n > 0 {
			rb = m.spare[n-1]
			m.spare = m.spare[:n-1]
		} else {
			rb = &reqBlocks{}
		}
		m.reqs[reqID] = rb
	}
	return rb
}

// key returns the key of the request's full block i, extending the hash
// chain from tokens as needed.
func (m *Manager) key(rb *reqBlocks, i int, tokens []int32) blockKey {
	bs := m.cfg.BlockSize
	for len(rb.keys) <= i {
		j := len(rb.keys)
		var parent blockKey
		if j > 0 {
			parent = rb.keys[j-1]
		}
		rb.keys = append(rb.keys, hashBlock(parent, tokens[j*bs:(j+1)*bs]))
	}
	return rb.keys[i]
}

// ComputedBlocks finds the longest cached prefix of tokens (the request's
// prompt plus any generated tokens) in whole blocks, capped at len(tokens)−1
// tokens so that the last token is always computed. The lookup (len(tokens)
// queried, NumTokens hit, counted as a preempted request's when preempted)
// is recorded in the prefix-cache stats when the AllocateSlots that takes
// the Prefix succeeds, so a request that waits for blocks over several steps
// counts once (vLLM records every attempt). The request must hold no
// blocks. With prefix caching off it returns an empty Prefix and nothing is
// recorded.
func (m *Manager) ComputedBlocks(reqID string, tokens []int32, preempted bool) Prefix {
	if !m.cfg.EnablePrefixCaching || len(tokens) == 0 {
		return Prefix{}
	}
	rb := m.state(reqID)
	if len(rb.blocks) != 0 {
		panic(fmt.Sprintf("kvcache: ComputedBlocks(%q) for a request that holds %d blocks", reqID, len(rb.blocks)))
	}
	bs := m.cfg.BlockSize
	maxBlocks := (len(tokens) - 1) / bs
	hit := m.scratch[:0]
	for i := range maxBlocks {
		k := m.key(rb, i, tokens)
		b, ok := m.p.table[k]
		if !ok || !slices.Equal(m.p.blockTokens(int32(b)), tokens[i*bs:(i+1)*bs]) {
			break
		}
		hit = append(hit, b)
	}
	m.scratch = hit
	return Prefix{Blocks: hit, NumTokens: len(hit) * bs, looked: true, numQueried: len(tokens), preempted: preempted}
}

// AllocateSlots makes the request's blocks cover numComputedTokens +
// numNewTokens tokens, first taking the cached prefix blocks (which must be
// the Prefix just returned by ComputedBlocks for this request, or empty).
// numComputedTokens includes prefix.NumTokens. It is all-or-nothing: when
// the free blocks do not suffice it changes nothing and returns false.
// The returned block table is the one BlockTable returns.
func (m *Manager) AllocateSlots(reqID string, numComputedTokens, numNewTokens int, prefix Prefix) ([]BlockID, bool) {
	rb := m.state(reqID)
	if len(prefix.Blocks) > 0 && len(rb.blocks) > 0 {
		panic(fmt.Sprintf("kvcache: AllocateSlots(%q) with a prefix for a request that holds blocks", reqID))
	}
	need := m.BlocksFor(numComputedTokens+numNewTokens) - len(rb.blocks) - len(prefix.Blocks)
	need = max(need, 0)
	takenFromFree := 0
	for _, b := range prefix.Blocks {
		if m.p.refCnt[b] == 0 {
			takenFromFree++
		}
	}
	if need+takenFromFree > m.p.numFree {
		if len(rb.blocks) == 0 && len(rb.keys) == 0 {
			m.release(reqID, rb)
		}
		return nil, false
	}
	for _, b := range prefix.Blocks {
		if m.p.refCnt[b] == 0 {
			m.p.remove(int32(b))
		}
		m.p.refCnt[b]++
		rb.blocks = append(rb.blocks, b)
	}
	if len(prefix.Blocks) > 0 {
		rb.numCached = len(prefix.Blocks)
	}
	if prefix.looked {
		m.stats.Record(prefix.numQueried, prefix.NumTokens, prefix.preempted)
	}
	for range need {
		b := m.p.popHead()
		m.p.refCnt[b] = 1
		rb.blocks = append(rb.blocks, BlockID(b))
	}
	m.assertInvariants()
	return rb.blocks, true
}

// CacheScheduledBlocks registers the request's full blocks among the first
// numTokens tokens, which are computed or scheduled in the step being
// planned, as vLLM's allocate_slots does: a request admitted later in the
// same step then hits them. When an identical block is already cached, the
// request's copy stays private. Such a hit is safe because the forward pass
// writes every token's K/V of a layer before any token of the batch
// attends in that layer, and the request that computes the block comes
// first in the batch. The blocks it registers are pending until
// CommitScheduled (the step ran) or DropScheduled (it did not); a pending
// block whose last holder frees it is evicted, since its KV was never
// written.
func (m *Manager) CacheScheduledBlocks(reqID string, tokens []int32, numTokens int) {
	if !m.cfg.EnablePrefixCaching {
		return
	}
	rb := m.reqs[reqID]
	if rb == nil {
		return
	}
	bs := m.cfg.BlockSize
	full := min(numTokens/bs, len(rb.blocks))
	if full <= rb.numCached {
		return
	}
	for i := rb.numCached; i < full; i++ {
		k := m.key(rb, i, tokens)
		b := int32(rb.blocks[i])
		if m.p.cached[b] {
			continue
		}
		if _, dup := m.p.table[k]; dup {
			continue
		}
		var parent blockKey
		if i > 0 {
			parent = rb.keys[i-1]
		}
		m.p.register(b, parent, k, tokens[i*bs:(i+1)*bs])
		m.p.pending[b] = true
		m.pending = append(m.pending, b)
	}
	rb.numCached = full
	m.assertInvariants()
}

// CommitScheduled marks the blocks registered by CacheScheduledBlocks as
// computed: call it once the step's forward pass ran.
func (m *Manager) CommitScheduled() {
	for _, b := range m.pending {
		m.p.pending[b] = false
	}
	m.pending = m.pending[:0]
}

// DropScheduled undoes CacheScheduledBlocks for a step that did not run:
// its pending blocks leave the prefix cache (their holders keep them), and
// each request registers them again when it next schedules their tokens.
// A request that hit a pending block (PendingBefore) must be freed by the
// caller, before or after: nothing computed its prefix.
func (m *Manager) DropScheduled() {
	for _, rb := range m.reqs {
		for i := range rb.numCached {
			if m.p.pending[rb.blocks[i]] {
				rb.numCached = i
				break
			}
		}
	}
	for _, b := range m.pending {
		m.p.evict(b) // no-op for a block evicted since
	}
	m.pending = m.pending[:0]
	m.assertInvariants()
}

// PendingBefore reports whether one of the request's blocks that hold its
// first numTokens tokens is pending: registered in the step being planned,
// its KV not yet written.
func (m *Manager) PendingBefore(reqID string, numTokens int) bool {
	rb := m.reqs[reqID]
	if rb == nil || len(m.pending) == 0 {
		return false
	}
	for _, b := range rb.blocks[:min(m.BlocksFor(numTokens), len(rb.blocks))] {
		if m.p.pending[b] {
			return true
		}
	}
	return false
}

// Free releases the request's blocks, last block first, so that its tail
// blocks are evicted before its head blocks, and forgets the request.
func (m *Manager) Free(reqID string) {
	rb := m.reqs[reqID]
	if rb == nil {
		return
	}
	for i := len(rb.blocks) - 1; i >= 0; i-- {
		b := int32(rb.blocks[i])
		m.p.refCnt[b]--
		if m.p.refCnt[b] == 0 {
			if m.p.pending[b] {
				m.p.evict(b) // registered for a step that will not write it
			}
			m.p.pushTail(b)
		}
	}
	m.release(reqID, rb)
	m.assertInvariants()
}

// Trim frees the request's blocks past the first numTokens tokens (a
// speculative step's blocks of rejected drafts), last first, and returns
// its block table. Such blocks hold no known token, so none is in the
// prefix cache.
func (m *Manager) Trim(reqID string, numTokens int) []BlockID {
	rb := m.reqs[reqID]
	if rb == nil {
		return nil
	}
	keep := max(m.BlocksFor(numTokens), rb.numCached)
	for i := len(rb.blocks) - 1; i >= keep; i-- {
		b := int32(rb.blocks[i])
		m.p.refCnt[b]--
		if m.p.refCnt[b] == 0 {
			m.p.pushTail(b)
		}
	}
	if keep < len(rb.blocks) {
		rb.blocks = rb.blocks[:keep]
		rb.keys = rb.keys[:min(len(rb.keys), keep)]
		m.assertInvariants()
	}
	return rb.blocks
}

func (m *Manager) release(reqID string, rb *reqBlocks) {
	delete(m.reqs, reqID)
	rb.blocks = rb.blocks[:0]
	rb.keys = rb.keys[:0]
	rb.numCached = 0
	m.spare = append(m.spare, rb)
}

// ResetPrefixCache drops every cached block. It succeeds only when no block
// is in use (vLLM reset_prefix_cache), and marks the pending stats as reset.
func (m *Manager) ResetPrefixCache() bool {
	if m.p.numFree != m.cfg.NumBlocks {
		return false
	}
	for b := range m.p.n {
		m.p.evict(b)
	}
	m.stats.Reset = true
	m.assertInvariants()
	return true
}

func (m *Manager) assertInvariants() {
	if invariantsEnabled {
		if err := m.CheckInvariants(); err != nil {
			panic(err)
		}
	}
}
