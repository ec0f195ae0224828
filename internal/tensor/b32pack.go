package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Packed layout of the 32-element block formats Q4_1, Q5_0, Q5_1 and
// IQ4_NL (Mat.P, made by PackBlocks at a level with their kernels:
// kernels.b32p).
//
// W rows in groups of 16 (the last padded with zero rows), as packed Q4_0
// (q4pack.go). All weights first: per group g and block b a record of
// wrec bytes at P[(g·nb+b)·wrec:]:
//
//	[0, 256)    the nibbles: byte 64·k4 + 4r + t (k4 < 4) is GGML byte
//	            qs[4·k4+t] of row 16g+r: low nibble column 32b+4·k4+t,
//	            high nibble column 32b+16+4·k4+t
//	[256, 320)  Q5_0, Q5_1: the fifth bits, one 64-bit byte mask per k4
//	            and half h at 256 + 8·(2·k4+h): bit 4r+t is the fifth bit
//	            of column 32b+16h+4·k4+t of row 16g+r
//
// then all scales: per group and block srec bytes, the 16 rows' float16 d
// and (Q4_1, Q5_1) their float16 m. With Rows a multiple of 16 that is
// the size of the GGML blocks. One zmm load gives the unsigned operands of
// VPDPBUSD for 16 rows (low nibbles masked, high nibbles moved down, Q5's
// fifth bits added as 16 under the byte mask, IQ4_NL's nibbles looked up in
// the table +128 with VPSHUFB) against four broadcast activation bytes.
//
// Order: blockRows' (blockmm.go), bit for bit: per block the exact int32
// I = Σ x·q (computed with the weights made unsigned: Q5_0's q+16 and
// IQ4_NL's table+128, the sums started at −16·Σx or −128·Σx), then
// acc += float32(I)·(d·dx) [+ m·s for Q4_1 and Q5_1, the two products
// added first], each operation rounded.
type b32Layout struct {
	wrec, srec int
	corr       int32 // Q5_0: 16, IQ4_NL: 128 (the unsigned weights' offset)
	fifth      bool  // Q5: fifth bits at [256, 320)
	min        bool  // Q4_1, Q5_1: m (and Q8_1 activations)
	qs         int   // offset of qs in the GGML block
}

var b32Layouts = map[DType]b32Layout{
	Q4_1:   {wrec: 256, srec: 64, min: true, qs: 4},
	Q5_0:   {wrec: 320, srec: 32, corr: 16, fifth: true, qs: 6},
	Q5_1:   {wrec: 320, srec: 64, min: true, fifth: true, qs: 8},
	IQ4_NL: {wrec: 256, srec: 32, corr: 128, qs: 2},
}

// b32pFunc is a packed kernel: G groups (weights w[g], scales s[g]) × R
// activation rows (bytes at x + i·ldx, xa pairs at xa + i·lds bytes), nb
// ≥ 1 blocks, out[i·ldo + 16g + r] written where mask bit 16g+r is set.
type b32pFunc func(out *float32, ldo int, x *int8, ldx int, xa *uint32, lds int, w, s *[4]*byte, nb int, mask uint64)

// b32Args is one packed product: n activation rows (xq; xa per block the
// pair float32 bits of dx, then s (Q8_1) or −corr·Σx) against w.
type b32Args struct {
	out    []float32
	ldo    int
	xq     []int8
	xa     []uint32
	n      int
	rows   int
	cols   int
	nb, ng int
	w, s   []byte // the weight and scale regions
	l      b32Layout
}

// packedBytes is the size of the packed form of a rows×cols matrix.
func (l b32Layout) packedBytes(rows, cols int) int {
	return (rows + q8Group - 1) / q8Group * (cols / 32) * (l.wrec + l.srec)
}

// packB32 is PackBlocks for the 32-element formats: it packs w and
// reports true when the level has their kernels.
func packB32(w *Mat) bool {
	if w.Type == IQ4_XS && w.P == nil && impl.iq4xs != nil {
		if err := CodecOf(IQ4_XS).Check(w.Q, w.Rows, w.Cols); err != nil {
			panic("tensor: PackBlocks: " + err.Error())
		}
		w.P = packIQ4XS(w.Q, w.Rows, w.Cols)
		w.Q = nil
		return true
	}
	if w.Type == Q2_K && w.P == nil && impl.q2k != nil {
		if err := CodecOf(Q2_K).Check(w.Q, w.Rows, w.Cols); err != nil {
			panic("tensor: PackBlocks: " + err.Error())
		}
		w.P = packQ2K(w.Q, w.Rows, w.Cols)
		w.Q = nil
		return true
	}
	l, ok := b32Layouts[w.Type]
	if !ok || w.P != nil || impl.b32p == nil {
		return false
	}
	c := CodecOf(w.Type)
	if err := c.Check(w.Q, w.Rows, w.Cols); err != nil {
		panic("tensor: PackBlocks: " + err.Error())
	}
	w.P = l.pack(w.Q, c.BlockBytes, w.Rows, w.Cols)
	w.Q = nil
	return true
}

// pack returns the packed form of GGML rows q (blocks of bb bytes).
func (l b32Layout) pack(q []byte, bb, rows, cols int) []byte {
	nb, ng := cols/32, (rows+q8Group-1)/q8Group
	p := alignedBytes(l.packedBytes(rows, cols), 64)
	ws, ss := p[:ng*nb*l.wrec], p[ng*nb*l.wrec:]
	for row := 0; row < rows; row++ {
		g, r := row/q8Group, row%q8Group
		for b := 0; b < nb; b++ {
			blk := q[(row*nb+b)*bb : (row*nb+b+1)*bb]
			wr, sr := ws[(g*nb+b)*l.wrec:], ss[(g*nb+b)*l.srec:]
			for k4 := 0; k4 < 4; k4++ {
				copy(wr[64*k4+4*r:64*k4+4*r+4], blk[l.qs+4*k4:])
			}
			copy(sr[2*r:2*r+2], blk[0:2])
			if l.min {
				copy(sr[32+2*r:32+2*r+2], blk[2:4])
			}
			if l.fifth {
				qh := binary.LittleEndian.Uint32(blk[l.qs-4:])
				for j := 0; j < 32; j++ {
					h, k4, t := j/16, j%16/4, j%4
					wr[256+8*(2*k4+h)+(4*r+t)/8] |= byte(qh>>j&1) << ((4*r + t) % 8)
				}
			}
		}
	}
	return p
}

// unpack returns the GGML rows (blocks of bb bytes) of a packed matrix:
// the inverse of pack.
func (l b32Layout) unpack(p []byte, bb, rows, cols int) []byte {
	nb, ng := cols/32, (rows+q8Group-1)/q8Group
	ws, ss := p[:ng*nb*l.wrec], p[ng*nb*l.wrec:]
	q := make([]byte, rows*nb*bb)
	for row := 0; row < rows; row++ {
		g, r := row/q8Group, row%q8Group
		for b := 0; b < nb; b++ {
			blk := q[(row*nb+b)*bb : (row*nb+b+1)*bb]
			wr, sr := ws[(g*nb+b)*l.wrec:], ss[(g*nb+b)*l.srec:]
			for k4 := 0; k4 < 4; k4++ {
				copy(blk[l.qs+4*k4:l.qs+4*k4+4], wr[64*k4+4*r:])
			}
			copy(blk[0:2], sr[2*r:])
			if l.min {
				copy(blk[2:4], sr[32+2*r:])
			}
			if l.fifth {
				var qh uint32
				for j := 0; j < 32; j++ {
					h, k4, t := j/16, j%16/4, j%4
					qh |= uint32(wr[256+8*(2*k4+h)+(4*r+t)/8]>>((4*r+t)%8)&1) << j
				}
				binary.LittleEndian.PutUint32(blk[l.qs-4:], qh)
			}
		}
	}
	return q
}

// matMulB32P is MatMul for a packed Q4_1, Q5_0, Q5_1 or IQ4_NL matrix:
// the activations quantized as for the GGML blocks (quantizeAct), the
// groups split over the pool's threads. At a level without the kernels
// (a matrix packed at another) it runs the GGML blocks unpacked again.
func (p *Pool) matMulB32P(out, x []float32, n int, w *Mat) {
	l, c := b32Layouts[w.Type], CodecOf(w.Type)
	if w.Cols%32 != 0 || len(w.P) < l.packedBytes(w.Rows, w.Cols) {
		panic(fmt.Sprintf("tensor: MatMul: packed %s weights of %d bytes do not fit %d×%d", c.Name, len(w.P), w.Rows, w.Cols))
	}
	if impl.b32p == nil {
		u := &Mat{Rows: w.Rows, Cols: w.Cols, Type: w.Type, Q: l.unpack(w.P, c.BlockBytes, w.Rows, w.Cols)}
		p.matMulBlocks(out, x, n, u, c)
		return
	}
	nb, ng := w.Cols/32, (w.Rows+q8Group-1)/q8Group
	if nb == 0 {
		for i := 0; i < n; i++ {
			clear(out[i*w.Rows : (i+1)*w.Rows])
		}
		return
	}
	a := p.quantizeAct(c, x, n, w.Cols)
	xa := make([]uint32, 2*len(a.d))
	for b, d := range a.d {
		xa[2*b] = math.Float32bits(d)
		if l.min {
			xa[2*b+1] = math.Float32bits(a.s[b])
			continue
		}
		var sum int32
		for _, v := range a.q[32*b : 32*b+32] {
			sum += int32(v)
		}
		xa[2*b+1] = uint32(-l.corr * sum)
	}
	args := &b32Args{out: out, ldo: w.Rows, xq: a.q, xa: xa, n: n, rows: w.Rows, cols: w.Cols, nb: nb, ng: ng,
		w: w.P[:ng*nb*l.wrec], s: w.P[ng*nb*l.wrec : ng*nb*(l.wrec+l.srec)], l: l}
	fn := func(lo, hi int) { impl.b32p(args, w.Type, lo, hi) }
	p.run(n*w.Rows*w.Cols, ng, fn, fn)
}

// groupMask returns the valid-row bits of group g.
func (a *b32Args) groupMask(g int) uint64 {
	return uint64(1)<<min(q8Group, a.rows-g*q8Group) - 1
}
