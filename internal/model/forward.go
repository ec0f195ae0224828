package model

import (
	"errors"
	"fmt"
	"time"

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
	ropeScratch    [][]float32 // per chunk: cos/sin past the RoPE table
	kvK, kvV       [][]float32 // per chunk: one KV head's decoded K, V (kvread.go)
	kvIdent        []int32     // 0, 1, 2, …: the block table of decoded rows
	cfg            Config

	// Jobs for pool.ParallelFor, with their functions bound once so
	// Forward allocates no closures.
	attnFn, rowsFn func(lo, hi int)
	job            attnJob
	rows           rowJob

	// Attention plan of the current batch (see planAttention).
	units      []attnUnit
	unitCost   []int64
	chunkStart []int

	moe moeBuffers

	// Phases, when non-nil, accumulates the wall time of Forward's phases.
	Phases *Phases
}

// Phases splits Forward's wall time (summed over calls) by phase. Set
// Workspace.Phases to collect it; the cost is one clock read per phase,
// nine per layer (tens of nanoseconds each).
type Phases struct {
	MatMul    time.Duration // the layers' weight matrix products
	Attention time.Duration // scores, softmax, weighted values
	Rows      time.Duration // norms, residual adds, RoPE and KV writes, SwiGLU
	Logits    time.Duration // final norm and the vocabulary projection
	Other     time.Duration // checks, bookkeeping, embedding, attention plan
}

// Total is the sum of the phases.
func (p *Phases) Total() time.Duration {
	return p.MatMul + p.Attention + p.Rows + p.Logits + p.Other
}

// lap adds the time since *t to *d and restarts *t, when timing is on.
func (ws *Workspace) lap(d *time.Duration, t *time.Time) {
	if ws.Phases != nil {
		now := time.Now()
		*d += now.Sub(*t)
		*t = now
	}
}

type attnJob struct {
	m  *Model
	b  *Batch
	kv *KVCache
	l  int
}

// NewWorkspace returns a Workspace sized for batches of up to maxTokens tokens.
func (m *Model) NewWorkspace(maxTokens int) *Workspace {
	ws := &Workspace{cfg: m.Config}
	ws.ensure(max(maxTokens, 1), 1)
	ws.attnFn = ws.runAttention
	ws.rowsFn = ws.runRows
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

func (ws *Workspace) ensureRopeScratch(chunks int) {
	for len(ws.ropeScratch) < chunks {
		ws.ropeScratch = append(ws.ropeScratch, make([]float32, ws.cfg.HeadDim))
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
	if err := m.checkKV(kv); err != nil {
		return 0, 0, err
	}
	total := 0
	for s := range b.Seqs {
		seq := &b.Seqs[s]
		if seq.NumTokens < 0 || seq.Start < 0 {
			return 0, 0, batchErr("seq %d: NumTokens %d, Start %d", s, seq.NumTokens, seq.Start)
		}
		if seq.NeedLogits {
			if seq.logitRows() > seq.NumTokens {
				return 0, 0, batchErr("seq %d wants logits of %d tokens but has %d", s, seq.logitRows(), seq.NumTokens)
			}
			k += seq.logitRows()
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
// NeedLogits (its last NumLogits tokens) into logits ([k × VocabSize],
// Seq order, then token order). pool may be nil.
func (m *Model) Forward(ws *Workspace, pool *tensor.Pool, b *Batch, kv *KVCache, logits []float32) error {
	k, maxPos, err := m.checkBatch(b, kv, len(logits))
	if err != nil {
		return err
	}
	if err := m.checkHidden(b); err != nil {
		return err
	}
	if ws == nil || ws.cfg.Dim != m.Config.Dim || ws.cfg.HiddenDim != m.Config.HiddenDim ||
		ws.cfg.QDim() != m.Config.QDim() || ws.cfg.KVDim() != m.Config.KVDim() || ws.cfg.HeadDim != m.Config.HeadDim ||
		ws.cfg.NumExperts != m.Config.NumExperts || ws.cfg.NumExpertsUsed != m.Config.NumExpertsUsed ||
		ws.cfg.SharedExpertDim != m.Config.SharedExpertDim {
		return batchErr("workspace was made for another model")
	}
	n := len(b.Tokens)
	if n == 0 {
		return nil
	}
	var t time.Time
	ph := ws.Phases
	if ph == nil {
		ph = &Phases{} // lap writes nothing while ws.Phases is nil
	} else {
		t = time.Now()
	}
	c := &m.Config
	dim := c.Dim
	ws.ensure(n, k)
	ws.ensureMoE(n)

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
		if c.EmbedScale != 0 {
			tensor.Scale(x[i*dim:(i+1)*dim], c.EmbedScale)
		}
	}
	chunks := 1
	if n*dim >= rowsParMin {
		chunks = min(pool.Threads(), n)
	}
	ws.ensureRopeScratch(chunks)
	ws.planAttention(m, b, pool)
	ws.rows = rowJob{m: m, kv: kv, n: n, chunks: chunks}
	ws.lap(&ph.Other, &t)
	for l := range m.Layers {
		m.layer(ws, pool, b, kv, l, maxPos, &t)
	}
	ws.rows = rowJob{}
	m.hidden(ws, b)
	if k == 0 {
		return nil
	}
	m.logits(ws, pool, b, logits, k)
	ws.lap(&ph.Logits, &t)
	return nil
}

// layer runs transformer block l on the n rows of ws.x; it leaves the
// block's last sub-layer output in ws.xo, added to ws.x by the next block's
// first phase (or by logits).
func (m *Model) layer(ws *Workspace, pool *tensor.Pool, b *Batch, kv *KVCache, l, maxPos int, t *time.Time) {
	ph := ws.Phases
	if ph == nil {
		ph = &Phases{} // lap writes nothing while ws.Phases is nil
	}
	c := &m.Config
	n, qd := ws.rows.n, c.QDim()
	L := &m.Layers[l]
	xb, xo := ws.xb[:n*c.Dim], ws.xo[:n*c.Dim]
	if l == 0 {
		ws.phase(pool, phaseNorm, l, L.AttnNorm, nil) // xb = norm(x)
	} else {
		// x += post(xo) (previous FFN); xb = norm(x)
		ws.phase(pool, phaseAddNorm, l, L.AttnNorm, m.Layers[l-1].PostFFNNorm)
	}
	ws.lap(&ph.Rows, t)
	matMul(pool, ws.qkv[:n*(qd+2*c.KVDim())], xb, n, &L.Wqkv)
	ws.lap(&ph.MatMul, t)
	ws.phase(pool, phaseRope, l, nil, nil) // biases, q/k norms, RoPE on q, k; k, v to the cache
	ws.lap(&ph.Rows, t)
	m.attention(ws, pool, b, kv, l, maxPos)
	ws.lap(&ph.Attention, t)
	matMul(pool, xo, ws.att[:n*qd], n, &L.Wo)
	ws.lap(&ph.MatMul, t)
	ws.phase(pool, phaseAddNorm, l, L.FFNNorm, L.PostAttnNorm) // x += post(attention); xb = norm(x)
	ws.lap(&ph.Rows, t)
	if len(L.Experts) > 0 {
		m.moe(ws, pool, L, n) // xo = Σ weight·expert(xb)
		ws.lap(&ph.MatMul, t)
		return
	}
	hid := c.HiddenDim
	matMul(pool, ws.h13[:n*2*hid], xb, n, &L.W13)
	ws.lap(&ph.MatMul, t)
	ws.phase(pool, phaseGLU, l, nil, nil) // hb = act(gate)·up
	ws.lap(&ph.Rows, t)
	matMul(pool, xo, ws.hb[:n*hid], n, &L.W2)
	ws.lap(&ph.MatMul, t)
}

// phase runs one per-row phase over the rows of ws.rows, split over the
// pool when the batch is big enough.
func (ws *Workspace) phase(pool *tensor.Pool, phase rowPhase, l int, norm, post []float32) {
	ws.rows.phase, ws.rows.l, ws.rows.norm, ws.rows.post = phase, l, norm, post
	if ws.rows.chunks == 1 {
		ws.runRows(0, 1)
	} else {
		pool.ParallelFor(ws.rows.chunks, ws.rowsFn)
	}
}

// logits computes the k logit rows: only the rows that want logits take the
// last residual add and the final norm, then the output head (and the final
// soft-cap).
func (m *Model) logits(ws *Workspace, pool *tensor.Pool, b *Batch, logits []float32, k int) {
	c := &m.Config
	dim := c.Dim
	x, xo := ws.x, ws.xo
	post := m.Layers[len(m.Layers)-1].PostFFNNorm
	lx := ws.lx[:k*dim]
	r, row := 0, 0
	for s := range b.Seqs {
		seq := &b.Seqs[s]
		row += seq.NumTokens
		for last := row - seq.logitRows(); last < row; last++ {
			xl, ol := x[last*dim:(last+1)*dim], xo[last*dim:(last+1)*dim]
			if post != nil {
				tensor.RMSNorm(ol, ol, post, c.RMSNormEps)
			}
			tensor.Axpy(xl, 1, ol)
			tensor.RMSNorm(lx[r*dim:(r+1)*dim], xl, m.Norm, c.RMSNormEps)
			r++
		}
	}
	m.Project(pool, logits[:k*c.VocabSize], lx, k)
}

// Project computes the logits of n final hidden-state rows (the output
// head, then the final soft-cap when the model has one) into out
// ([n × VocabSize]). pool may be nil.
func (m *Model) Project(pool *tensor.Pool, out, hidden []float32, n int) {
	c := &m.Config
	matMul(pool, out[:n*c.VocabSize], hidden[:n*c.Dim], n, &m.Output)
	if c.FinalSoftcap != 0 {
		tensor.Softcap(out[:n*c.VocabSize], c.FinalSoftcap)
	}
}

// mmBlockBytes bounds the activations one MatMul call works through: about
// half a core's L2 cache (2 MB here). The GEMM sweeps all its x rows once
// per panel of W rows, so x rows that stay in L2 are read from there; a
// 2,048-token prefill (8 MB of x per 2048-wide matrix) otherwise reads them
// from L3 for every panel and runs at about half the speed of a 64-row
// decode step (tinyllama shapes, 1 thread, GFLOP per CPU-second: 5632×2048
// n=2048 51 → 93 in blocks of 128 rows; 2048×5632 36 → 66 in blocks of 64).
const mmBlockBytes = 1 << 20

// mmMinRows is the smallest block: below it W's own streaming from memory
// (once per block) would cost more than the L2 hits save.
const mmMinRows = 64

// mmMinRowsF32 is the smallest block of an F32 MatMul: the F32 GEMMs
// block the columns themselves (tensor/gemm.go for matrices in rows,
// tensor/f32pack.go for packed ones, the model's) and keep only one column
// block of x in L2; smaller blocks would only read W again (TinyLlama's
// 2048×5632 W2 took two calls of 64 rows).
const mmMinRowsF32 = 128

// matMul is pool.MatMul over blocks of rows that fit mmBlockBytes. Every
// output row is computed on its own (see tensor's batch invariance), so the
// blocks change no bits.
func matMul(pool *tensor.Pool, out, x []float32, n int, w *tensor.Mat) {
	minRows := mmMinRows
	if w.Type == tensor.F32 {
		minRows = mmMinRowsF32
	}
	blk := max(mmBlockBytes/(4*w.Cols)&^15, minRows)
	for r := 0; r < n; r += blk {
		e := min(r+blk, n)
		pool.MatMul(out[r*w.Rows:e*w.Rows], x[r*w.Cols:e*w.Cols], e-r, w)
	}
}

// rowsParMin is the element count (rows × Dim) from which the per-row
// phases (norms, RoPE, SwiGLU) are split over the pool.
const rowsParMin = 1 << 14

type rowPhase uint8

const (
	phaseNorm    rowPhase = iota // xb = norm(x)
	phaseAddNorm                 // x += xo; xb = norm(x)
	phaseRope                    // RoPE on q and k of qkv; k, v into the cache
	phaseGLU                     // hb = act(gate)·up from h13
)

// rowJob is the per-row work of one phase, run by runRows.
type rowJob struct {
	m         *Model
	kv        *KVCache
	n, chunks int
	phase     rowPhase
	l         int
	norm      []float32
	post      []float32 // phaseAddNorm: RMSNorm weight applied to xo before the add (nil: none)
}

// runRows runs ws.rows.phase on the rows of chunks [lo, hi).
func (ws *Workspace) runRows(lo, hi int) {
	j := &ws.rows
	c := &j.m.Config
	dim, hid, eps := c.Dim, c.HiddenDim, c.RMSNormEps
	for ch := lo; ch < hi; ch++ {
		r0, r1 := j.n*ch/j.chunks, j.n*(ch+1)/j.chunks
		switch j.phase {
		case phaseNorm, phaseAddNorm:
			for i := r0; i < r1; i++ {
				xi := ws.x[i*dim : (i+1)*dim]
				if j.phase == phaseAddNorm {
					oi := ws.xo[i*dim : (i+1)*dim]
					if j.post != nil {
						tensor.RMSNorm(oi, oi, j.post, eps)
					}
					tensor.Axpy(xi, 1, oi)
				}
				tensor.RMSNorm(ws.xb[i*dim:(i+1)*dim], xi, j.norm, eps)
			}
		case phaseRope:
			ws.ropeRows(r0, r1, ch)
		case phaseGLU:
			for i := r0; i < r1; i++ {
				g := ws.h13[i*2*hid : i*2*hid+hid]
				glu(c.Act, g, ws.h13[i*2*hid+hid:(i+1)*2*hid])
				copy(ws.hb[i*hid:(i+1)*hid], g)
			}
		}
	}
}

// ropeRows prepares rows [r0, r1) of ws.qkv for attention: the q|k|v
// biases, the per-head q/k norms, RoPE on q and k (the layer's table), then
// k and v into the cache.
func (ws *Workspace) ropeRows(r0, r1, ch int) {
	j := &ws.rows
	m := j.m
	c := &m.Config
	L := &m.Layers[j.l]
	hd, qd, kvd := c.HeadDim, c.QDim(), c.KVDim()
	qkvW := qd + 2*kvd
	rope := &m.rope
	if c.IsLocal(j.l) && m.ropeLocal.half > 0 {
		rope = &m.ropeLocal
	}
	for i := r0; i < r1; i++ {
		row := ws.qkv[i*qkvW : (i+1)*qkvW]
		if L.Bqkv != nil {
			tensor.Axpy(row, 1, L.Bqkv)
		}
		if L.QNorm != nil {
			for o := 0; o < qd; o += hd {
				tensor.RMSNorm(row[o:o+hd], row[o:o+hd], L.QNorm, c.RMSNormEps)
			}
			for o := qd; o < qd+kvd; o += hd {
				tensor.RMSNorm(row[o:o+hd], row[o:o+hd], L.KNorm, c.RMSNormEps)
			}
		}
		rope.apply(row[:qd+kvd], ws.pos[i], ws.ropeScratch[ch])
		j.kv.store(j.l, ws.slot[i], row[qd:qd+kvd], row[qd+kvd:])
	}
}

// embedRow writes the embedding of tok to dst.
func (m *Model) embedRow(dst []float32, tok int32) {
	tensor.DequantizeRow(dst[:m.Config.Dim], &m.Embed, int(tok))
}
