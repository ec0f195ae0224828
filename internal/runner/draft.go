package runner

import (
	"fmt"

	"govllm/internal/model"
	"govllm/internal/sched"
	"govllm/internal/tensor"
)

// DraftConfig sizes a draft model's own KV cache.
type DraftConfig struct {
	// NumBlocks and BlockSize size the draft model's paged KV cache (its
	// tokens; the draft's KV per token is its own model's).
	NumBlocks, BlockSize int
	// Chunk bounds the tokens of one forward pass (the catch-up of a new
	// sequence's prompt runs in chunks of this size).
	Chunk int
	// KVCacheDType is the draft cache's format (the target's
	// --kv-cache-dtype; nil: float32).
	KVCacheDType *tensor.KVCodec
}

// DraftModel is speculative decoding's draft model (vLLM's draft_model
// method): a small model with the target's vocabulary proposes k tokens
// by greedy decoding. It keeps, for each request, the tokens whose KV it
// holds in its own cache; a proposal first feeds the tokens after the
// longest prefix it still holds (the prompt, or the target's tokens since
// its last proposal), then k-1 of its own drafts, one forward pass each.
// When its cache is full it drops the least recently used requests'
// state. It implements sched.Drafter and runs on the scheduler's
// goroutine, on the target's thread pool.
type DraftModel struct {
	m      *model.Model
	pool   *tensor.Pool
	cfg    DraftConfig
	kv     *model.KVCache
	ws     *model.Workspace
	free   []int32
	seqs   map[sched.RequestID]*draftSeq
	clock  uint64
	batch  model.Batch
	logits []float32
}

// draftSeq is one request's state in the draft model's cache.
type draftSeq struct {
	tokens []int32 // the tokens whose KV the cache holds, from position 0
	blocks []int32
	used   uint64 // clock of its last proposal
}

// NewDraftModel builds the drafter over m.
func NewDraftModel(m *model.Model, pool *tensor.Pool, cfg DraftConfig) (*DraftModel, error) {
	if m == nil || cfg.NumBlocks < 1 || cfg.BlockSize < 1 || cfg.Chunk < 1 {
		return nil, fmt.Errorf("%w: draft model: nil model or sizes %+v", ErrInvalidConfig, cfg)
	}
	if err := m.Config.CheckKVCacheDType(cfg.KVCacheDType); err != nil {
		return nil, fmt.Errorf("%w: draft model: %v", ErrInvalidConfig, err)
	}
	d := &DraftModel{
		m: m, pool: pool, cfg: cfg,
		kv:     model.NewKVCacheOf(cfg.KVCacheDType, m.Config, cfg.NumBlocks, cfg.BlockSize),
		ws:     m.NewWorkspace(cfg.Chunk),
		seqs:   map[sched.RequestID]*draftSeq{},
		logits: make([]float32, m.Config.VocabSize),
	}
	for b := cfg.NumBlocks - 1; b >= 0; b-- {
		d.free = append(d.free, int32(b))
	}
	return d, nil
}

// Propose implements sched.Drafter: up to k greedy tokens of the draft
// model after tokens (none when its cache cannot hold the sequence or the
// sequence is longer than the draft model's context).
func (d *DraftModel) Propose(id sched.RequestID, dst, tokens []int32, k int) []int32 {
	dst = dst[:0]
	n := len(tokens)
	if k <= 0 || n == 0 || (d.m.Config.MaxSeqLen > 0 && n+k-1 > d.m.Config.MaxSeqLen) {
		return dst
	}
	s := d.seqs[id]
	if s == nil {
		s = &draftSeq{}
		d.seqs[id] = s
	}
	d.clock++
	s.used = d.clock
	if !d.reserve(id, s, n+k-1) {
		d.Forget(id)
		return dst
	}
	c := min(commonPrefix(s.tokens, tokens), n-1) // feed at least the last token
	s.tokens = append(s.tokens[:c], tokens[c:]...)
	tok, err := d.feed(s, c, tokens[c:])
	for err == nil {
		dst = append(dst, tok)
		if len(dst) == k {
			return dst
		}
		s.tokens = append(s.tokens, tok)
		tok, err = d.feed(s, len(s.tokens)-1, s.tokens[len(s.tokens)-1:])
	}
	d.Forget(id) // a failed forward pass leaves the cache unknown
	return dst[:0]
}

// Forget implements sched.Drafter: it frees the request's blocks.
func (d *DraftModel) Forget(id sched.RequestID) {
	s := d.seqs[id]
	if s == nil {
		return
	}
	d.free = append(d.free, s.blocks...)
	delete(d.seqs, id)
}

// reserve gives s blocks for n positions, evicting the least recently
// used other sequences when the free list runs short.
func (d *DraftModel) reserve(id sched.RequestID, s *draftSeq, n int) bool {
	need := (n+d.cfg.BlockSize-1)/d.cfg.BlockSize - len(s.blocks)
	for need > len(d.free) {
		var victim sched.RequestID
		oldest := d.clock + 1
		for vid, v := range d.seqs {
			if vid != id && v.used < oldest {
				victim, oldest = vid, v.used
			}
		}
		if oldest > d.clock {
			return false
		}
		d.Forget(victim)
	}
	for range max(need, 0) {
		s.blocks = append(s.blocks, d.free[len(d.free)-1])
		d.free = d.free[:len(d.free)-1]
	}
	return true
}

// feed runs toks at positions start… through the draft model in chunks
// and returns its greedy token after the last one.
func (d *DraftModel) feed(s *draftSeq, start int, toks []int32) (int32, error) {
	for len(toks) > 0 {
		n := min(len(toks), d.cfg.Chunk)
		last := n == len(toks)
		d.batch.Tokens = append(d.batch.Tokens[:0], toks[:n]...)
		d.batch.Seqs = append(d.batch.Seqs[:0], model.Seq{NumTokens: n, Start: start, BlockTable: s.blocks, NeedLogits: last})
		logits := d.logits[:0]
		if last {
			logits = d.logits
		}
		if err := d.m.Forward(d.ws, d.pool, &d.batch, d.kv, logits); err != nil {
			return 0, err
		}
		start += n
		toks = toks[n:]
	}
	return argmax(d.logits), nil
}

// argmax is the first index of the largest logit (greedy sampling's pick).
func argmax(x []float32) int32 {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return int32(best)
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []int32) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
