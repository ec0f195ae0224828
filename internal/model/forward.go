package model

import (
	"errors"
	"fmt"
	"math"

	"govllm/internal/tensor"
)

// ErrBatch marks a Batch (or KV cache, or logits buffer) that does not fit
// the model (errors.Is).
var ErrBatch = errors.New("model: invalid batch")

// Workspace holds the activations of one Forward call. Reuse it across calls
// so the hot path allocates nothing; it grows when a batch is larger than
// any before. A Workspace belongs to one caller at a time.
type Workspace struct {
	cap, capLogits int
	x, xb, xo      []float32 // n × Dim: residual stream, normed input, projection output
	qkv            []float32 // n × (QDim + 2·KVDim)
	att            []float32 // n × QDim
	h13            []float32 // n × 2·HiddenDim
	hb             []float32 // n × HiddenDim
	lx             []float32 // k × Dim: normed rows that need logits
	pos, slot      []int     // per row
	seqOf          []int32   // per row: index into Batch.Seqs
	scores         [][]float32
	ropeScratch    []float32
	cfg            Config

	// Attention job for pool.ParallelFor, built once so Forward does not
	// allocate a closure per layer.
	attnFn func(lo, hi int)
	job    attnJob
}

type attnJob struct {
	m            *Model
	b            *Batch
	kv           *KVCache
	l, n, chunks int
}

// NewWorkspace returns a Workspace sized for batches of up to maxTokens tokens.
func (m *Model) NewWorkspace(maxTokens int) *Workspace {
	ws := &Workspace{cfg: m.Config, ropeScratch: make([]float32, m.Config.HeadDim)}
	ws.ensure(max(maxTokens, 1), 1)
	ws.attnFn = ws.runAttention
	return ws
}

func (ws *Workspace) ensure(n, k int) {
	c := &ws.cfg
	if n > ws.cap {
		ws.cap = n
		ws.x = make([]float32, n*c.Dim)
		ws.xb = make([]float32, n*c.Dim)
		ws.xo = make([]float32, n*c.Dim)
		ws.qkv = make([]float32, n*(c.QDim()+2*c.KVDim()))
		ws.att = make([]float32, n*c.QDim())
		ws.h13 = make([]float32, n*2*c.HiddenDim)
		ws.hb = make([]float32, n*c.HiddenDim)
		ws.pos = make([]int, n)
		ws.slot = make([]int, n)
		ws.seqOf = make([]int32, n)
	}
	if k > ws.capLogits {
		ws.capLogits = max(k, n)
		ws.lx = make([]float32, ws.capLogits*c.Dim)
	}
}

func (ws *Workspace) ensureScores(chunks, ctx int) {
	if len(ws.scores) < chunks {
		ws.scores = append(ws.scores, make([][]float32, chunks-len(ws.scores))...)
	}
	for c := 0; c < chunks; c++ {
		if len(ws.scores[c]) < ctx {
			ws.scores[c] = make([]float32, max(ctx, 2*len(ws.scores[c])))
		}
	}
}

func batchErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrBatch, fmt.Sprintf(format, a...))
}

// checkBatch validates b against the model and the cache and returns the
// number of logit rows and the largest position.
func (m *Model) checkBatch(b *Batch, kv *KVCache, nLogits int) (k, maxPos int, err error) {
	c := &m.Config
	if kv == nil || len(kv.K) != c.NumLayers || len(kv.V) != c.NumLayers || kv.BlockSize <= 0 || kv.NumBlocks <= 0 {
		return 0, 0, batchErr("KV cache does not match the model (%d layers)", c.NumLayers)
	}
	want := kv.NumBlocks * kv.BlockSize * c.KVDim()
	for l := range kv.K {
		if len(kv.K[l]) != want || len(kv.V[l]) != want {
			return 0, 0, batchErr("KV cache layer %d holds %d/%d floats, want %d", l, len(kv.K[l]), len(kv.V[l]), want)
		}
	}
	total := 0
	for s := range b.Seqs {
		seq := &b.Seqs[s]
		if seq.NumTokens < 0 || seq.Start < 0 {
			return 0, 0, batchErr("seq %d: NumTokens %d, Start %d", s, seq.NumTokens, seq.Start)
		}
		if seq.NeedLogits {
			if seq.NumTokens == 0 {
				return 0, 0, batchErr("seq %d wants logits but has no tokens", s)
			}
			k++
		}
		end := seq.Start + seq.NumTokens
		if end > len(seq.BlockTable)*kv.BlockSize {
			return 0, 0, batchErr("seq %d: positions up to %d need %d blocks, block table has %d", s, end, (end+kv.BlockSize-1)/kv.BlockSize, len(seq.BlockTable))
		}
		for _, id := range seq.BlockTable[:(end+kv.BlockSize-1)/kv.BlockSize] {
			if id < 0 || int(id) >= kv.NumBlocks {
				return 0, 0, batchErr("seq %d: block id %d out of range [0,%d)", s, id, kv.NumBlocks)
			}
		}
		total += seq.NumTokens
		if seq.NumTokens > 0 {
			maxPos = max(maxPos, end-1)
		}
	}
	if total != len(b.Tokens) {
		return 0, 0, batchErr("seqs hold %d tokens, batch has %d", total, len(b.Tokens))
	}
	for i, t := range b.Tokens {
		if t < 0 || int(t) >= c.VocabSize {
			return 0, 0, batchErr("token %d at row %d out of range [0,%d)", t, i, c.VocabSize)
		}
	}
	if nLogits < k*c.VocabSize {
		return 0, 0, batchErr("logits buffer holds %d floats, need %d×%d", nLogits, k, c.VocabSize)
	}
	return k, maxPos, nil
}

// Forward runs one flattened batch: it writes every token's K/V into kv at
// its paged slot, and the logits of the last token of each Seq with
// NeedLogits into logits ([k × VocabSize], Seq order). pool may be nil.
func (m *Model) Forward(ws *Workspace, pool *tensor.Pool, b *Batch, kv *KVCache, logits []float32) error {
	k, maxPos, err := m.checkBatch(b, kv, len(logits))
	if err != nil {
		return err
	}
	n := len(b.Tokens)
	if n == 0 {
		return nil
	}
	c := &m.Config
	dim, qd, kvd, hid := c.Dim, c.QDim(), c.KVDim(), c.HiddenDim
	qkvW := qd + 2*kvd
	ws.ensure(n, k)

	// Row bookkeeping: position, KV slot and sequence of every token.
	i := 0
	for s := range b.Seqs {
		seq := &b.Seqs[s]
		for t := 0; t < seq.NumTokens; t++ {
			pos := seq.Start + t
			ws.pos[i] = pos
			ws.slot[i] = int(seq.BlockTable[pos/kv.BlockSize])*kv.BlockSize + pos%kv.BlockSize
			ws.seqOf[i] = int32(s)
			i++
		}
	}

	x := ws.x[:n*dim]
	for i, tok := range b.Tokens {
		m.embedRow(x[i*dim:(i+1)*dim], tok)
	}
	eps := c.RMSNormEps
	for l := range m.Layers {
		L := &m.Layers[l]
		xb := ws.xb[:n*dim]
		for i := 0; i < n; i++ {
			tensor.RMSNorm(xb[i*dim:(i+1)*dim], x[i*dim:(i+1)*dim], L.AttnNorm, eps)
		}
		qkv := ws.qkv[:n*qkvW]
		pool.MatMul(qkv, xb, n, &L.Wqkv)
		kc, vc := kv.K[l], kv.V[l]
		for i := 0; i < n; i++ {
			row := qkv[i*qkvW : (i+1)*qkvW]
			m.rope.apply(row[:qd+kvd], ws.pos[i], ws.ropeScratch)
			s := ws.slot[i] * kvd
			copy(kc[s:s+kvd], row[qd:qd+kvd])
			copy(vc[s:s+kvd], row[qd+kvd:])
		}
		m.attention(ws, pool, b, kv, l, n, maxPos)
		xo := ws.xo[:n*dim]
		pool.MatMul(xo, ws.att[:n*qd], n, &L.Wo)
		tensor.Axpy(x, 1, xo)

		for i := 0; i < n; i++ {
			tensor.RMSNorm(xb[i*dim:(i+1)*dim], x[i*dim:(i+1)*dim], L.FFNNorm, eps)
		}
		h13 := ws.h13[:n*2*hid]
		pool.MatMul(h13, xb, n, &L.W13)
		hb := ws.hb[:n*hid]
		for i := 0; i < n; i++ {
			g := h13[i*2*hid : i*2*hid+hid]
			tensor.SwiGLU(g, h13[i*2*hid+hid:(i+1)*2*hid])
			copy(hb[i*hid:(i+1)*hid], g)
		}
		pool.MatMul(xo, hb, n, &L.W2)
		tensor.Axpy(x, 1, xo)
	}

	if k == 0 {
		return nil
	}
	lx := ws.lx[:k*dim]
	r, row := 0, 0
	for s := range b.Seqs {
		seq := &b.Seqs[s]
		row += seq.NumTokens
		if seq.NeedLogits {
			last := row - 1
			tensor.RMSNorm(lx[r*dim:(r+1)*dim], x[last*dim:(last+1)*dim], m.Norm, eps)
			r++
		}
	}
	pool.MatMul(logits[:k*c.VocabSize], lx, k, &m.Output)
	return nil
}

// embedRow writes the embedding of tok to dst.
func (m *Model) embedRow(dst []float32, tok int32) {
	d := m.Config.Dim
	switch m.Embed.Type {
	case tensor.Q8_0:
		rb := d / tensor.Q8BlockSize * tensor.Q8BlockBytes
		tensor.DequantizeQ8_0(dst, m.Embed.Q[int(tok)*rb:(int(tok)+1)*rb])
	default:
		copy(dst, m.Embed.F32[int(tok)*d:(int(tok)+1)*d])
	}
}

// attnParMin is the multiply-add count of one layer's attention below which
// it runs on the caller alone (the hand-off would cost more).
const attnParMin = 1 << 15

// attention computes ws.att (n × QDim) for layer l: each row's query heads
// attend to positions 0..pos of the row's sequence. Work units are (head,
// row) pairs, head-major, so every thread gets an equal share of the causal
// triangle of a prefill.
func (m *Model) attention(ws *Workspace, pool *tensor.Pool, b *Batch, kv *KVCache, l, n, maxPos int) {
	c := &m.Config
	units := c.NumHeads * n
	work := 0
	for i := 0; i < n; i++ {
		work += ws.pos[i] + 1
	}
	work *= c.NumHeads * c.HeadDim * 2
	chunks := 1
	if work >= attnParMin {
		chunks = min(pool.Threads(), units)
	}
	ws.ensureScores(chunks, maxPos+1)
	ws.job = attnJob{m: m, b: b, kv: kv, l: l, n: n, chunks: chunks}
	if chunks == 1 {
		ws.runAttention(0, 1)
	} else {
		pool.ParallelFor(chunks, ws.attnFn)
	}
	ws.job = attnJob{}
}

// runAttention computes the (head, row) units of chunks [lo, hi) of ws.job.
func (ws *Workspace) runAttention(lo, hi int) {
	j := &ws.job
	units := j.m.Config.NumHeads * j.n
	for ch := lo; ch < hi; ch++ {
		sc := ws.scores[ch]
		for u := units * ch / j.chunks; u < units*(ch+1)/j.chunks; u++ {
			j.m.attendOne(ws, j.b, j.kv, j.l, u/j.n, u%j.n, sc)
		}
	}
}

// attendOne computes head h of row i.
func (m *Model) attendOne(ws *Workspace, b *Batch, kv *KVCache, l, h, i int, sc []float32) {
	c := &m.Config
	hd, qd, kvd := c.HeadDim, c.QDim(), c.KVDim()
	qkvW := qd + 2*kvd
	q := ws.qkv[i*qkvW+h*hd : i*qkvW+(h+1)*hd]
	out := ws.att[i*qd+h*hd : i*qd+(h+1)*hd]
	kvOff := (h / (c.NumHeads / c.NumKVHeads)) * hd
	pos := ws.pos[i]
	bt := b.Seqs[ws.seqOf[i]].BlockTable
	bs := kv.BlockSize
	kc, vc := kv.K[l], kv.V[l]
	scale := float32(1 / math.Sqrt(float64(hd)))
	sc = sc[:pos+1]
	for blk, p := 0, 0; p <= pos; blk++ {
		base := int(bt[blk]) * bs
		for j := 0; j < bs && p <= pos; j, p = j+1, p+1 {
			o := (base+j)*kvd + kvOff
			sc[p] = tensor.Dot(q, kc[o:o+hd]) * scale
		}
	}
	tensor.Softmax(sc)
	clear(out)
	for blk, p := 0, 0; p <= pos; blk++ {
		base := int(bt[blk]) * bs
		for j := 0; j < bs && p <= pos; j, p = j+1, p+1 {
			o := (base+j)*kvd + kvOff
			tensor.Axpy(out, sc[p], vc[o:o+hd])
		}
	}
}
