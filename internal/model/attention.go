package model

import (
	"math"

	"govllm/internal/tensor"
)

// attnParMin is the multiply-add count of one layer's attention below which
// it runs on the caller alone (the hand-off would cost more).
const attnParMin = 1 << 15

// attnUnit is one piece of attention work: KV head g for rows [r0, r1),
// consecutive positions of one sequence.
//
// Every row's result is computed in a fixed order that depends only on its
// query, position and cache, never on which other rows share the batch or
// the unit, so outputs are batch-invariant. A unit of several rows (a
// prefill's, with one query head per KV head) computes their scores
// against each block of keys as one small matrix product
// (tensor.ScoresBlocks): each score is the same dot product, in the same
// canonical order, as DotStrided gives one row, so the bits are the same,
// and each key is loaded once per unit instead of once per row.
type attnUnit struct {
	g, r0, r1 int32
}

// attnTile is the most rows of a unit.
const attnTile = 8

// planAttention splits the batch's attention into units, KV-head-major (so
// a static split gives every thread an equal share of a prefill's causal
// triangle), and the units into chunks of about equal cost. The plan is the
// same for every layer.
func (ws *Workspace) planAttention(m *Model, b *Batch, pool *tensor.Pool) {
	c := &m.Config
	grp := c.NumHeads / c.NumKVHeads
	ws.units = ws.units[:0]
	ws.unitCost = ws.unitCost[:0]
	var total int64
	tile := 1
	if grp == 1 && c.HeadDim >= 32 {
		tile = attnTile
	}
	for g := 0; g < c.NumKVHeads; g++ {
		row := 0
		for s := range b.Seqs {
			nt := b.Seqs[s].NumTokens
			for r := row; r < row+nt; r += tile {
				r1 := min(r+tile, row+nt)
				ws.units = append(ws.units, attnUnit{g: int32(g), r0: int32(r), r1: int32(r1)})
				for i := r; i < r1; i++ {
					total += int64(ws.pos[i]+1) * int64(grp*c.HeadDim) * 2
				}
				ws.unitCost = append(ws.unitCost, total)
			}
			row += nt
		}
	}
	chunks := 1
	if total >= attnParMin {
		chunks = min(pool.Threads(), len(ws.units))
	}
	// chunkStart[ch] is the first unit of chunk ch: the first whose
	// cumulative cost passes ch/chunks of the total.
	ws.chunkStart = ws.chunkStart[:0]
	u := 0
	for ch := 0; ch < chunks; ch++ {
		for u < len(ws.units) && ws.unitCost[u]*int64(chunks) <= total*int64(ch) {
			u++
		}
		ws.chunkStart = append(ws.chunkStart, u)
	}
	ws.chunkStart = append(ws.chunkStart, len(ws.units))
}

// attention computes ws.att (rows × QDim) for layer l per the plan: each
// row's query heads attend to positions 0..pos of the row's sequence. The
// query heads sharing a KV head (GQA) are done together, so each K and V
// row is read once per group.
func (m *Model) attention(ws *Workspace, pool *tensor.Pool, b *Batch, kv *KVCache, l, maxPos int) {
	c := &m.Config
	chunks := len(ws.chunkStart) - 1
	grp := c.NumHeads / c.NumKVHeads
	ws.ensureScores(chunks, (maxPos+1)*max(grp, attnTile))
	ws.ensureKVScratch(kv, chunks, maxPos)
	ws.job = attnJob{m: m, b: b, kv: kv, l: l}
	if chunks == 1 {
		ws.runAttention(0, 1)
	} else {
		pool.ParallelFor(chunks, ws.attnFn)
	}
	ws.job = attnJob{}
}

// runAttention computes the units of chunks [lo, hi) of ws.job.
func (ws *Workspace) runAttention(lo, hi int) {
	j := &ws.job
	for ch := lo; ch < hi; ch++ {
		for _, u := range ws.units[ws.chunkStart[ch]:ws.chunkStart[ch+1]] {
			if u.r1-u.r0 > 1 {
				j.m.attendTile(ws, j.b, j.kv, j.l, int(u.g), int(u.r0), int(u.r1), ch)
				continue
			}
			j.m.attendGroup(ws, j.b, j.kv, j.l, int(u.g), int(u.r0), ch)
		}
	}
}

// attendGroup computes the query heads of KV head g for row i, with chunk
// ch's scratch (scores: group·(pos+1) floats).
func (m *Model) attendGroup(ws *Workspace, b *Batch, kv *KVCache, l, g, i, ch int) {
	c := &m.Config
	hd, qd, kvd := c.HeadDim, c.QDim(), c.KVDim()
	sc := ws.scores[ch]
	grp := c.NumHeads / c.NumKVHeads
	qkvW := qd + 2*kvd
	q := ws.qkv[i*qkvW+g*grp*hd : i*qkvW+(g+1)*grp*hd]
	out := ws.att[i*qd+g*grp*hd : i*qd+(g+1)*grp*hd]
	pos := ws.pos[i]
	np := pos + 1
	bt := b.Seqs[ws.seqOf[i]].BlockTable
	bs := kv.BlockSize
	scale := m.attnScale()
	lo := m.windowStart(l, pos)
	if fb := lo / bs; fb > 0 {
		// A sliding window: the blocks wholly before it are skipped (their
		// weights would be 0, adding nothing), the positions counted from
		// the first block kept, so the bits are those of the whole range.
		bt, np, lo = bt[fb:], np-fb*bs, lo-fb*bs
	}
	sc = sc[:grp*np]
	view := ws.kvView(kv, l, g, bt, np, ch)
	kc, vc, bt, kvd, kvOff := view.k, view.v, view.bt, view.stride, view.off
	if hd < 32 {
		m.attendSmall(q, out, sc, bt, bs, kc, vc, kvd, kvOff, grp, hd, np, lo, scale)
		return
	}
	// Block by block: a block's slots are consecutive, KVDim floats apart,
	// so one strided kernel call covers up to BlockSize positions. How the
	// positions are grouped depends only on this row's position, never on
	// the rest of the batch.
	if grp == 1 {
		for blk, p := 0, 0; p < np; blk++ {
			cnt := min(bs, np-p)
			tensor.DotStrided(sc[p:p+cnt], q, kc[int(bt[blk])*bs*kvd+kvOff:], kvd)
			p += cnt
		}
		tensor.Scale(sc, scale)
	} else {
		// The group's queries against each block's keys as one small
		// product: the same summation order as DotStrided per head, so
		// the same bits, with each key loaded once per group.
		tensor.ScoresBlocks(sc, np, q, hd, grp, kc[kvOff:], bt, bs*kvd, kvd, bs, np, hd, scale)
	}
	for h := 0; h < grp; h++ {
		m.softmax(sc[h*np:(h+1)*np], lo)
	}
	clear(out)
	// Four heads at a time share the value rows: the whole blocks in one
	// AxpyBlocks call, then the partial last block (the bits of one
	// AxpyStrided4 call per block); the other heads block by block.
	nf := np / bs
	h := grp &^ 3
	tensor.AxpyBlocks(out, hd, sc, np, h, vc[kvOff:], bt[:nf], bs*kvd, kvd, bs, hd)
	if p := nf * bs; p < np {
		for hh := 0; hh < h; hh += 4 {
			tensor.AxpyStrided4(out[hh*hd:], hd, sc[hh*np+p:], np, vc[int(bt[nf])*bs*kvd+kvOff:], kvd, np-p, hd)
		}
	}
	for blk, p := 0, 0; h < grp && p < np; blk++ {
		cnt := min(bs, np-p)
		v := vc[int(bt[blk])*bs*kvd+kvOff:]
		for hh := h; hh < grp; hh++ {
			tensor.AxpyStrided(out[hh*hd:(hh+1)*hd], sc[hh*np+p:hh*np+p+cnt], v, kvd)
		}
		p += cnt
	}
}

// attendTile is attendGroup for rows [r0, r1) of one sequence at
// consecutive positions, one query head per KV head (grp = 1, HeadDim ≥
// 32), with the same bits. Chunk ch's scores hold (r1-r0)·(pos+1) floats,
// pos the last row's. The rows' scores against each block of keys are one
// kernel call of ScoresBlocks (the order of DotStrided per row, scaled as
// Scale would); the keys past a row's own position that the block's
// product also covers are computed and ignored. Softmax is per row; the weighted sum of values
// goes to one AxpyBlocks call, four rows at a time, for the blocks every
// row sees whole (AxpyStrided4's bits per block), row by row for the
// rest, each row in attendGroup's order.
func (m *Model) attendTile(ws *Workspace, b *Batch, kv *KVCache, l, g, r0, r1, ch int) {
	c := &m.Config
	hd, qd := c.HeadDim, c.QDim()
	qkvW := qd + 2*c.KVDim()
	rows := r1 - r0
	np := ws.pos[r1-1] + 1
	bs := kv.BlockSize
	view := ws.kvView(kv, l, g, b.Seqs[ws.seqOf[r0]].BlockTable, np, ch)
	kc, vc, bt, kvd, kvOff := view.k, view.v, view.bt, view.stride, view.off
	sc := ws.scores[ch]
	scale := m.attnScale()
	sc = sc[:rows*np]
	q := ws.qkv[r0*qkvW+g*hd:]
	tensor.ScoresBlocks(sc, np, q, qkvW, rows, kc[kvOff:], bt, bs*kvd, kvd, bs, np, hd, scale)
	for t := range rows {
		i := r0 + t
		m.softmax(sc[t*np:t*np+ws.pos[i]+1], m.windowStart(l, ws.pos[i]))
		clear(ws.att[i*qd+g*hd : i*qd+(g+1)*hd])
	}
	// The weighted values in each row's order: the blocks every row sees
	// whole go four rows at a time to one AxpyBlocks call (each block's
	// value rows loaded once for four rows, and in L1 for the next four),
	// the rest (the rows past a multiple of four, the blocks past the
	// first row's position) row by row.
	n0 := ws.pos[r0] + 1 // the first row's count, the smallest
	nf := n0 / bs        // blocks every row sees whole
	t4 := 0              // rows done four at a time over blocks [0, nf)
	if nf > 0 {
		t4 = rows &^ 3
		tensor.AxpyBlocks(ws.att[r0*qd+g*hd:], qd, sc, np, t4, vc[kvOff:], bt[:nf], bs*kvd, kvd, bs, hd)
	}
	for blk, p := 0, 0; p < np; blk++ {
		cnt := min(bs, np-p)
		v := vc[int(bt[blk])*bs*kvd+kvOff:]
		t := 0
		if blk < nf {
			t = t4
		}
		for ; t < rows; t++ {
			i := r0 + t
			if c := min(cnt, ws.pos[i]+1-p); c > 0 {
				tensor.AxpyStrided(ws.att[i*qd+g*hd:i*qd+(g+1)*hd], sc[t*np+p:t*np+p+c], v, kvd)
			}
		}
		p += cnt
	}
}

// attendSmall is attendGroup for heads narrower than 32: inline loops beat
// kernel calls on such short rows.
func (m *Model) attendSmall(q, out, sc []float32, bt []int32, bs int, kc, vc []float32, kvd, kvOff, grp, hd, np, lo int, scale float32) {
	for blk, p := 0, 0; p < np; blk++ {
		base := int(bt[blk]) * bs
		for j := 0; j < bs && p < np; j, p = j+1, p+1 {
			o := (base+j)*kvd + kvOff
			k := kc[o : o+hd : o+hd]
			for h := 0; h < grp; h++ {
				qh := q[h*hd : (h+1)*hd : (h+1)*hd][:len(k)]
				var d float32
				for t, kv := range k {
					d += qh[t] * kv
				}
				sc[h*np+p] = d * scale
			}
		}
	}
	for h := 0; h < grp; h++ {
		m.softmax(sc[h*np:(h+1)*np], lo)
	}
	clear(out)
	for blk, p := 0, 0; p < np; blk++ {
		base := int(bt[blk]) * bs
		for j := 0; j < bs && p < np; j, p = j+1, p+1 {
			o := (base+j)*kvd + kvOff
			v := vc[o : o+hd : o+hd]
			for h := 0; h < grp; h++ {
				a := sc[h*np+p]
				oh := out[h*hd : (h+1)*hd : (h+1)*hd][:len(v)]
				for t, vv := range v {
					oh[t] += a * vv
				}
			}
		}
	}
}

// attnScale is the factor applied to q·k (Config.AttnScale, else
// 1/√HeadDim).
func (m *Model) attnScale() float32 {
	if s := m.Config.AttnScale; s != 0 {
		return s
	}
	return float32(1 / math.Sqrt(float64(m.Config.HeadDim)))
}

// windowStart is the first key position a query at pos sees in layer l:
// 0, or in a sliding-window layer the oldest of the window's positions
// (pos − p' < SlidingWindow).
func (m *Model) windowStart(l, pos int) int {
	if !m.Config.IsLocal(l) {
		return 0
	}
	return max(0, pos-m.Config.SlidingWindow+1)
}

// softmax turns one query head's scaled scores s (keys 0..pos) into
// attention weights: scores before lo (outside the sliding window) get
// weight 0, the others are soft-capped (Config.AttnSoftcap) and
// normalized. Zero weights add nothing to the weighted sum of values, so
// masking by position is exact whatever the block layout or the chunking
// of a prefill.
func (m *Model) softmax(s []float32, lo int) {
	clear(s[:lo])
	if c := m.Config.AttnSoftcap; c != 0 {
		tensor.Softcap(s[lo:], c)
	}
	tensor.Softmax(s[lo:])
}
