package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"
)

// Packed Q8_0 layout (Mat.P, made by PackQ8).
//
// W rows are taken in groups of q8Group = 16 (the last group padded with
// zero rows). For group g and block b (32 columns), the record at
// P[(g·nb+b)·512:] holds the 16 rows' 32 weights as unsigned bytes w+128,
// interleaved so that 64 bytes hold four consecutive columns of every row:
// byte k4·64 + 4r + t is row 16g+r, column 32b+4·k4+t. One zmm load then
// feeds one VPDPBUSD for all 16 rows. The block scales follow all the
// weights: at P[G·nb·512 + (g·nb+b)·32:] the 16 rows' float16 scales
// (0 for padding rows). The packed matrix takes G·nb·544 bytes: the size of
// the GGML blocks when Rows is a multiple of 16.
//
// Canonical order, every level: GGML's (q8lanes.go): per block and
// four-column step k4 the exact int32 I_b,k4 = Σ_t x_t·w_t (computed as
// Σ_t x_t·(w_t+128) − 128·Σ_t x_t), fused into the step's accumulator with
// the float32 product dw_b·xd_b; the eight accumulators reduced at the
// end. Nothing depends on n, the tile or the thread. (Packed Q4_0, whose
// layout this is with nibbles, keeps one accumulator per output:
// q4pack.go.)
const (
	q8Group      = 16
	q8GroupBlock = q8Group * Q8BlockSize // weight bytes per group and block
	q8GroupScale = q8Group * 2           // scale bytes per group and block
)

// q8PackedBytes is the size of the packed form of a rows×cols Q8_0 matrix.
func q8PackedBytes(rows, cols int) int {
	return (rows + q8Group - 1) / q8Group * (cols / Q8BlockSize) * (q8GroupBlock + q8GroupScale)
}

// PackQ8 repacks a Q8_0 matrix in place into the row-interleaved layout
// MatMul's fastest Q8_0 kernels read: w.P gets it and w.Q is released (the
// GGML blocks are no longer needed for MatMul; keep another Mat sharing Q
// for row lookups such as token embeddings). It does nothing to F32 or
// already packed matrices, or when the kernel level in use runs the GGML
// layout faster (avx2). Results stay within the Q8_0 tolerance of the
// unpacked MatMul but are not bit-identical to it.
func PackQ8(w *Mat) {
	if w.Type != Q8_0 || w.P != nil || impl.q8p == nil {
		return
	}
	if w.Cols%Q8BlockSize != 0 || len(w.Q) < w.Rows*Q8RowBytes(w.Cols) {
		panic("tensor: PackQ8: Q8_0 weights need Cols%32 == 0 and Rows×Cols/32 blocks")
	}
	w.P = packQ8(w.Q, w.Rows, w.Cols)
	w.Q = nil
}

// UnpackQ8 converts a packed Q8_0 matrix back to GGML blocks in place
// (w.Q gets them, w.P is released); it does nothing to other matrices.
func UnpackQ8(w *Mat) {
	if w.Type != Q8_0 || w.P == nil {
		return
	}
	checkPacked(w)
	w.Q = unpackQ8(w.P, w.Rows, w.Cols)
	w.P = nil
}

// packQ8 returns the packed form of the GGML Q8_0 rows q (rows×cols).
func packQ8(q []byte, rows, cols int) []byte {
	nb := cols / Q8BlockSize
	ng := (rows + q8Group - 1) / q8Group
	p := alignedBytes(q8PackedBytes(rows, cols), 64)
	scales := p[ng*nb*q8GroupBlock:]
	rb := Q8RowBytes(cols)
	for g := 0; g < ng; g++ {
		gw := p[g*nb*q8GroupBlock : (g+1)*nb*q8GroupBlock]
		gs := scales[g*nb*q8GroupScale : (g+1)*nb*q8GroupScale]
		for r := 0; r < q8Group; r++ {
			row := g*q8Group + r
			if row >= rows {
				for b := 0; b < nb; b++ {
					for k4 := 0; k4 < 8; k4++ {
						binary.LittleEndian.PutUint32(gw[b*q8GroupBlock+k4*64+4*r:], 0x80808080)
					}
				}
				continue
			}
			src := q[row*rb : (row+1)*rb]
			for b := 0; b < nb; b++ {
				blk := src[b*Q8BlockBytes : (b+1)*Q8BlockBytes : (b+1)*Q8BlockBytes]
				gs[b*q8GroupScale+2*r], gs[b*q8GroupScale+2*r+1] = blk[0], blk[1]
				dst := gw[b*q8GroupBlock+4*r : b*q8GroupBlock+7*64+4*r+4]
				for j := 0; j < 4; j++ {
					v := binary.LittleEndian.Uint64(blk[2+8*j:]) ^ 0x8080808080808080
					binary.LittleEndian.PutUint32(dst[2*j*64:], uint32(v))
					binary.LittleEndian.PutUint32(dst[(2*j+1)*64:], uint32(v>>32))
				}
			}
		}
	}
	return p
}

// unpackQ8 returns the GGML Q8_0 rows of a packed matrix (the inverse of
// packQ8).
func unpackQ8(p []byte, rows, cols int) []byte {
	rb := Q8RowBytes(cols)
	q := make([]byte, rows*rb)
	for row := 0; row < rows; row++ {
		unpackQ8Row(q[row*rb:(row+1)*rb], p, rows, cols, row)
	}
	return q
}

// unpackQ8Row writes the GGML Q8_0 blocks of one row of a packed matrix
// into dst.
func unpackQ8Row(dst, p []byte, rows, cols, row int) {
	nb := cols / Q8BlockSize
	ng := (rows + q8Group - 1) / q8Group
	scales := p[ng*nb*q8GroupBlock:]
	g, r := row/q8Group, row%q8Group
	for b := 0; b < nb; b++ {
		src := p[(g*nb+b)*q8GroupBlock:]
		blk := dst[b*Q8BlockBytes : (b+1)*Q8BlockBytes]
		blk[0], blk[1] = scales[(g*nb+b)*q8GroupScale+2*r], scales[(g*nb+b)*q8GroupScale+2*r+1]
		for k := 0; k < Q8BlockSize; k++ {
			blk[2+k] = src[k/4*64+4*r+k%4] ^ 0x80
		}
	}
}

// alignedBytes returns n zeroed bytes whose first one is align-aligned.
func alignedBytes(n, align int) []byte {
	b := make([]byte, n+align-1)
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) & uintptr(align-1))
	if off != 0 {
		off = align - off
	}
	return b[off : off+n : off+n]
}

// q8pArgs is a packed Q8_0 (or, with q4, packed Q4_0) product: the
// quantized activations (xq: n rows of cols int8; xs: per row and block
// the pair (float32 bits of the scale, −128·Σ of the block's values as
// int32; −8·Σ for Q4_0)) against w.P.
type q8pArgs struct {
	q4     bool // w holds the packed Q4_0 layout (q4pack.go)
	out    []float32
	ldo    int // = rows
	xq     []int8
	xs     []uint32
	xc     []int32 // Q8_0: per four values, −128·Σ (q8lanes.go)
	n      int
	rows   int
	cols   int
	nb, ng int
	w      []byte // group weights
	s      []byte // group scales

	// q4 tiles (q4pUnpackMin): one scratch buffer per thread for three
	// groups' weights unpacked, handed out by unpNext.
	unp     [][]byte
	unpNext atomic.Int32
}

// q8pScales computes the xs pairs of activation blocks from their
// quantized values and scales.
func q8pScales(xs []uint32, xq []int8, xd []float32) {
	q := int8AsBytes(xq)
	for b := range xd {
		// Σ of 32 int8 = Σ of the bytes x^0x80 (x+128) − 32·128, the bytes
		// summed in 16-bit lanes of a word (each lane ≤ 4·2·255).
		var acc uint64
		for _, v := range [4]uint64{
			binary.LittleEndian.Uint64(q[b*Q8BlockSize:]), binary.LittleEndian.Uint64(q[b*Q8BlockSize+8:]),
			binary.LittleEndian.Uint64(q[b*Q8BlockSize+16:]), binary.LittleEndian.Uint64(q[b*Q8BlockSize+24:]),
		} {
			v ^= 0x8080808080808080
			acc += v&0x00ff00ff00ff00ff + v>>8&0x00ff00ff00ff00ff
		}
		s := int32(acc*0x0001000100010001>>48) - Q8BlockSize*128
		xs[2*b] = math.Float32bits(xd[b])
		xs[2*b+1] = uint32(-128 * s)
	}
}

// groupMask returns the valid-row bits of group g (16 rows, fewer in the
// last group).
func (a *q8pArgs) groupMask(g int) uint64 {
	v := min(q8Group, a.rows-g*q8Group)
	if v <= 0 {
		return 0
	}
	return 1<<v - 1
}

// q8pRowsGo computes outputs of groups [g0,g1) for all n activation rows
// in the go level's canonical order: GGML's lanes for Q8_0 (q8lanes.go),
// and for Q4_0 per block acc += float32(I_b)·(dw·xd), the product rounded
// before it is added.
func q8pRowsGo(a *q8pArgs, g0, g1 int) {
	nb, cols := a.nb, a.cols
	for g := g0; g < g1; g++ {
		valid := min(q8Group, a.rows-g*q8Group)
		for i := 0; i < a.n; i++ {
			var acc [q8Group][8]float32 // Q4_0: lane 0 only
			xi := a.xq[i*cols : (i+1)*cols]
			si := a.xs[i*2*nb : (i+1)*2*nb]
			for b := 0; b < nb; b++ {
				sb := a.s[(g*nb+b)*q8GroupScale : (g*nb+b+1)*q8GroupScale]
				xb := xi[b*Q8BlockSize : (b+1)*Q8BlockSize]
				var d [q8Group]float32
				for r := range d {
					d[r] = F16ToF32(uint16(sb[2*r])|uint16(sb[2*r+1])<<8) * math.Float32frombits(si[2*b])
				}
				if a.q4 {
					var is [q8Group]int32
					q4pBlockGo(&is, a.w[(g*nb+b)*q4GroupBlock:(g*nb+b+1)*q4GroupBlock], xb)
					for r := range is {
						acc[r][0] += float32(float32(is[r]+int32(si[2*b+1])) * d[r])
					}
					continue
				}
				q8lBlockGo(&acc, a.w[(g*nb+b)*q8GroupBlock:(g*nb+b+1)*q8GroupBlock], xb, &d)
			}
			for r := 0; r < valid; r++ {
				v := acc[r][0]
				if !a.q4 {
					v = q8lReduce(&acc[r])
				}
				a.out[i*a.ldo+g*q8Group+r] = v
			}
		}
	}
}

// q8pPanel is the number of groups the kernels work through at a time:
// each tile of activation rows runs over the panel's groups before the next
// tile (the panel's weights, 12·16 rows, stay in L2 meanwhile).
const q8pPanel = 12

// matMulQ8P is MatMul for a packed Q8_0 or Q4_0 matrix.
func (p *Pool) matMulQ8P(out, x []float32, n int, w *Mat) {
	j := p.q8Quantize(out, x, n, w, true)
	ng := (j.rows + q8Group - 1) / q8Group
	q4 := w.Type == Q4_0
	gb := q8GroupBlock
	if q4 {
		gb = q4GroupBlock
	}
	j.pk = q8pArgs{
		q4:  q4,
		out: out, ldo: j.rows, xq: j.xq, xs: j.xs, xc: j.xc, n: n, rows: j.rows, cols: j.cols,
		nb: j.nb, ng: ng, w: w.P[:ng*j.nb*gb], s: w.P[ng*j.nb*gb : ng*j.nb*(gb+q8GroupScale)],
	}
	if j.nb == 0 {
		for i := 0; i < n; i++ {
			clear(out[i*j.rows : (i+1)*j.rows])
		}
		p.doneJob()
		return
	}
	if q4 && j.k.q4p && n >= q4pUnpackMin {
		j.pk.unp = p.q4Scratch(3 * j.nb * q8GroupBlock)
	}
	// The threads split the groups (Pool.ParallelFor: contiguous ranges);
	// each range is worked through in panels of q8pPanel groups.
	p.run(n*j.rows*j.cols, ng, p.q8Func(), j.q8Panels)
	p.doneJob()
}

// q8pPanels computes the outputs of packed groups [lo,hi).
func (j *mmJob) q8pPanels(lo, hi int) {
	f := j.k.q8p
	if f == nil || j.pk.q4 && !j.k.q4p {
		f = q8pRowsGo
	}
	f(&j.pk, lo, hi)
}

// q4Scratch returns one 64-byte aligned buffer of n bytes per thread for
// unpacked Q4_0 weights, reused across calls.
func (p *Pool) q4Scratch(n int) [][]byte {
	if p == nil {
		return [][]byte{alignedBytes(n, 64)}
	}
	if len(p.q4w) < p.Threads() {
		p.q4w = make([][]byte, p.Threads())
	}
	for i, b := range p.q4w {
		if len(b) < n {
			p.q4w[i] = alignedBytes(n, 64)
		}
	}
	return p.q4w
}

// q8pScratch returns the buffer for the activations' scale pairs.
func (p *Pool) q8pScratch(n int) []uint32 {
	if p == nil {
		return make([]uint32, n)
	}
	return grow(&p.xs, n)
}

// checkPacked panics unless w.P holds a packed rows×cols matrix of its
// type (Q8_0 or Q4_0).
func checkPacked(w *Mat) {
	size, name := q8PackedBytes, "Q8_0"
	if w.Type == Q4_0 {
		size, name = q4PackedBytes, "Q4_0"
	}
	if w.Cols%Q8BlockSize != 0 || len(w.P) < size(w.Rows, w.Cols) {
		panic(fmt.Sprintf("tensor: MatMul: packed %s weights of %d bytes do not fit %d×%d", name, len(w.P), w.Rows, w.Cols))
	}
}
