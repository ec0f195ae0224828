package kvcache

// pool holds per-block state in flat slices indexed by block id, and the
// free queue as an intrusive doubly-linked list over those indices with a
// sentinel at index n.
type pool struct {
	n         int32
	blockSize int

	refCnt     []int32
	prev, next []int32 // free-queue links; -1 when not in the queue
	numFree    int

	// Prefix cache: registered blocks.
	cached []bool
	// pending marks registered blocks whose KV the step being planned is to
	// write (registered at allocation, not yet committed).
	pending []bool
	keys    []blockKey
	parents []blockKey // the parent key each registered block was hashed with
	tokens  []int32    // n*blockSize: the tokens of registered blocks
	table   map[blockKey]BlockID
}

func newPool(n, blockSize int) *pool {
	p := &pool{
		n:         int32(n),
		blockSize: blockSize,
		refCnt:    make([]int32, n),
		prev:      make([]int32, n+1),
		next:      make([]int32, n+1),
		cached:    make([]bool, n),
		pending:   make([]bool, n),
		keys:      make([]blockKey, n),
		parents:   make([]blockKey, n),
		table:     make(map[blockKey]BlockID),
	}
	s := p.n
	p.next[s], p.prev[s] = s, s
	for b := range p.n {
		p.pushTail(b)
	}
	return p
}

func (p *pool) inFree(b int32) bool { return p.next[b] >= 0 }

func (p *pool) pushTail(b int32) {
	s := p.n
	t := p.prev[s]
	p.next[t] = b
	p.prev[b] = t
	p.next[b] = s
	p.prev[s] = b
	p.numFree++
}

func (p *pool) remove(b int32) {
	pr, nx := p.prev[b], p.next[b]
	p.next[pr] = nx
	p.prev[nx] = pr
	p.prev[b], p.next[b] = -1, -1
	p.numFree--
}

// popHead takes the least recently freed block, evicting it from the prefix
// cache if it was registered. The queue must not be empty.
func (p *pool) popHead() int32 {
	b := p.next[p.n]
	p.remove(b)
	p.evict(b)
	return b
}

func (p *pool) blockTokens(b int32) []int32 {
	if p.tokens == nil {
		return nil
	}
	off := int(b) * p.blockSize
	return p.tokens[off : off+p.blockSize : off+p.blockSize]
}

// register puts full block b into the prefix cache under key.
func (p *pool) register(b int32, parent, key blockKey, toks []int32) {
	if p.tokens == nil {
		p.tokens = make([]int32, int(p.n)*p.blockSize)
	}
	p.cached[b] = true
	p.keys[b] = key
	p.parents[b] = parent
	copy(p.blockTokens(b), toks)
	p.table[key] = BlockID(b)
}

func (p *pool) evict(b int32) {
	if !p.cached[b] {
		return
	}
	delete(p.table, p.keys[b])
	p.cached[b] = false
	p.pending[b] = false
	p.keys[b] = blockKey{}
	p.parents[b] = blockKey{}
}
