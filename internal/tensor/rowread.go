package tensor

import (
	"fmt"
	"sync"
)

// Rows of packed matrices. A model whose output head is its token
// embedding (tied) reads the embedding rows from the head's packed
// layout, so it keeps one copy of that matrix, not its GGML blocks beside
// the packed ones.

// RowReadable reports whether DequantizeRow can read w's rows: F32 rows,
// GGML blocks, or the packed layouts of Q8_0 and Q6_K (the formats
// llama-quantize gives tied embeddings).
func RowReadable(w *Mat) bool {
	switch {
	case w.Type == F32:
		return w.F32 != nil
	case w.Q != nil:
		return CodecOf(w.Type) != nil
	case w.P != nil:
		return w.Type == Q8_0 || w.Type == Q6_K
	}
	return false
}

// DequantizeRow writes row r of w (w.Cols values) into dst, exactly as
// the GGML blocks of that row dequantize. It panics when RowReadable(w)
// is false.
func DequantizeRow(dst []float32, w *Mat, r int) {
	d := w.Cols
	switch {
	case w.Type == F32 && w.F32 != nil:
		copy(dst[:d], w.F32[r*d:(r+1)*d])
	case w.Q != nil && CodecOf(w.Type) != nil:
		c := CodecOf(w.Type)
		c.Dequantize(dst[:d], w.Q[r*c.RowBytes(d):(r+1)*c.RowBytes(d)])
	case w.P != nil && w.Type == Q8_0:
		blk := make([]byte, Q8RowBytes(d))
		unpackQ8Row(blk, w.P, w.Rows, d, r)
		CodecOf(Q8_0).Dequantize(dst[:d], blk)
	case w.P != nil && w.Type == Q6_K:
		c := CodecOf(Q6_K)
		blk := make([]byte, c.RowBytes(d))
		recordRow(blk, w.P, d, q6kRecord, c.BlockBytes, q6kPositions(), r)
		c.Dequantize(dst[:d], blk)
	default:
		panic("tensor: DequantizeRow: no row reader for this matrix")
	}
}

// recordRow gathers row r's GGML blocks (bb bytes each) from a matrix
// packed by packRecords with records of rec bytes, byte i of the row's
// block at pos[r%16][i] of its record.
func recordRow(dst, p []byte, cols, rec, bb int, pos *[q8Group][]int, r int) {
	nb := cols / 256
	g, at := r/q8Group, pos[r%q8Group]
	for b := 0; b < nb; b++ {
		src := p[(g*nb+b)*rec : (g*nb+b+1)*rec]
		blk := dst[b*bb : (b+1)*bb]
		for i, o := range at {
			blk[i] = src[o]
		}
	}
}

// q6kPositions returns where packQ6K puts each byte of each group row's
// block in a record, found by packing marker blocks (its placement is a
// permutation of bytes).
var q6kPositions = sync.OnceValue(func() *[q8Group][]int {
	return recordPositions(210, q6kRecord, packQ6K)
})

// recordPositions inverts a byte-permuting record packer: it packs one
// group of 16 rows of one super-block whose bytes are all 0xFF but row
// r's byte i, which is i (bb ≤ 255), and finds each.
func recordPositions(bb, rec int, pack func(q []byte, rows, cols int) []byte) *[q8Group][]int {
	var pos [q8Group][]int
	for r := range q8Group {
		q := make([]byte, q8Group*bb)
		for i := range q {
			q[i] = 0xFF
		}
		for i := range bb {
			q[r*bb+i] = byte(i)
		}
		p := pack(q, q8Group, 256)
		pos[r] = make([]int, bb)
		for i := range pos[r] {
			pos[r][i] = -1
		}
		for o, v := range p[:rec] {
			if v != 0xFF && int(v) < bb && pos[r][v] < 0 {
				pos[r][v] = o
			}
		}
		for i, o := range pos[r] {
			if o < 0 {
				panic(fmt.Sprintf("tensor: recordPositions: byte %d of row %d's block is not kept as it is", i, r))
			}
		}
	}
	return &pos
}
