package tensor

import "fmt"

// Packed Q4_0 layout (Mat.P of a Q4_0 matrix, made by PackQ4).
//
// The packed Q8_0 layout (q8pack.go) with 4-bit weights: W rows in groups
// of 16 (the last padded with rows of nibbles 8, weight 0, and scale 0);
// for group g and block b the record at P[(g·nb+b)·256:] holds the 16
// rows' GGML nibble bytes four at a time: byte k4·64 + 4r + t (k4 < 4) is
// byte 4·k4+t of row 16g+r's block, so its low nibble is column
// 32b+4·k4+t and its high nibble column 32b+16+4·k4+t, both stored +8. One
// zmm load then gives, masked with 0x0F and shifted right by 4 and masked,
// the unsigned operands of two VPDPBUSD: the four-column steps k4 and
// k4+4 of the Q8_0 layout. The scales follow all the weights as in Q8_0:
// at P[G·nb·256 + (g·nb+b)·32:]. The packed matrix takes G·nb·288 bytes,
// 53% of packed Q8_0: the size of the GGML blocks when Rows is a multiple
// of 16.
//
// Canonical order: each output is
//
//	acc = 0; for b ascending: acc += float32(I_b) · (dw_b·xd_b)
//
// with the exact int32 I_b = Σ_t x_t·(q_t−8) computed as Σ_t x_t·q_t −
// 8·Σ_t x_t (the xs pair's second word holds −8·Σx for Q4_0: quantRows
// shifts q8pScales' −128·Σx right by 4, exactly) and dw_b·xd_b rounded to
// float32; the avx512 level fuses the multiply-add (one rounding: the
// order of llama.cpp's repacked Q4_0 on x86), the go level rounds the
// product first. (Packed Q8_0 follows GGML's lanes instead, so the exact
// expansion ExpandQ4 makes, where PackQ4 falls back to it, gives other
// last bits.)
const (
	q4GroupBlock = q8Group * Q8BlockSize / 2 // weight bytes per group and block
)

// q4pUnpackMin is the activation row count from which the avx512 tiles
// run on weights unpacked once per three groups (q8pRowsAVX512), rather
// than unpacking the nibbles in every tile of four rows. Measured, one
// thread (BenchmarkMatMulQ4Packed, 5632×2048 from DRAM; and 768×2048 in
// L2): at 8 rows unpacking costs 25%, at 16–32 rows it costs about what it
// saves (0.97×), at 64 rows it gains 5–8%. A variable for the tests and
// benchmarks.
var q4pUnpackMin = 48

// q4PackedBytes is the size of the packed form of a rows×cols Q4_0 matrix.
func q4PackedBytes(rows, cols int) int {
	return (rows + q8Group - 1) / q8Group * (cols / Q8BlockSize) * (q4GroupBlock + q8GroupScale)
}

// PackQ4 repacks a Q4_0 matrix in place for MatMul. At a level with packed
// Q4_0 kernels (avx512 on a CPU with AVX512_VBMI) w.P gets the packed nibble layout and w.Q is
// released; elsewhere the matrix becomes its exact Q8_0 expansion
// (ExpandQ4), then PackQ8 applies. Either way MatMul gives the bits of the
// expansion packed by PackQ8. It does nothing to other matrices or to
// packed ones.
func PackQ4(w *Mat) {
	if w.Type != Q4_0 || w.P != nil {
		return
	}
	checkQ4(w, "PackQ4")
	if !impl.q4p {
		ExpandQ4(w)
		PackQ8(w)
		return
	}
	w.P = packQ4(w.Q, w.Rows, w.Cols)
	w.Q = nil
}

// KeepsQ4 reports whether PackQ4 keeps Q4_0 matrices 4-bit at this level
// (else they become their Q8_0 expansion, 1.7 times the bytes).
func KeepsQ4() bool { return impl.q4p }

// UnpackQ4 converts a packed Q4_0 matrix back to GGML blocks in place
// (w.Q gets them, w.P is released); it does nothing to other matrices.
func UnpackQ4(w *Mat) {
	if w.Type != Q4_0 || w.P == nil {
		return
	}
	checkPacked(w)
	w.Q = unpackQ4(w.P, w.Rows, w.Cols)
	w.P = nil
}

// ExpandQ4 converts a Q4_0 matrix (GGML blocks or packed) in place to
// Q8_0 GGML blocks holding the same weights exactly: each block keeps its
// float16 scale, and its nibbles q become the int8 values q−8. It does
// nothing to other matrices.
func ExpandQ4(w *Mat) {
	if w.Type != Q4_0 {
		return
	}
	UnpackQ4(w)
	checkQ4(w, "ExpandQ4")
	q := make([]byte, w.Rows*Q8RowBytes(w.Cols))
	expandQ4(q, w.Q[:w.Rows*Q4RowBytes(w.Cols)])
	*w = Mat{Rows: w.Rows, Cols: w.Cols, Type: Q8_0, Q: q}
}

// checkQ4 panics unless w.Q holds rows×cols GGML Q4_0 weights.
func checkQ4(w *Mat, fn string) {
	if w.Cols%Q8BlockSize != 0 || len(w.Q) < w.Rows*Q4RowBytes(w.Cols) {
		panic(fmt.Sprintf("tensor: %s: Q4_0 weights need Cols%%32 == 0 and Rows×Cols/32 blocks (%d bytes for %d×%d)",
			fn, len(w.Q), w.Rows, w.Cols))
	}
}

// packQ4 returns the packed form of the GGML Q4_0 rows q (rows×cols).
func packQ4(q []byte, rows, cols int) []byte {
	nb := cols / Q8BlockSize
	ng := (rows + q8Group - 1) / q8Group
	p := alignedBytes(q4PackedBytes(rows, cols), 64)
	scales := p[ng*nb*q4GroupBlock:]
	rb := Q4RowBytes(cols)
	for g := 0; g < ng; g++ {
		gw := p[g*nb*q4GroupBlock : (g+1)*nb*q4GroupBlock]
		gs := scales[g*nb*q8GroupScale : (g+1)*nb*q8GroupScale]
		for r := 0; r < q8Group; r++ {
			row := g*q8Group + r
			for b := 0; b < nb; b++ {
				dst := gw[b*q4GroupBlock : (b+1)*q4GroupBlock]
				if row >= rows {
					for k4 := 0; k4 < 4; k4++ {
						copy(dst[k4*64+4*r:k4*64+4*r+4], []byte{0x88, 0x88, 0x88, 0x88})
					}
					continue
				}
				blk := q[row*rb+b*Q4BlockBytes : row*rb+(b+1)*Q4BlockBytes]
				gs[b*q8GroupScale+2*r], gs[b*q8GroupScale+2*r+1] = blk[0], blk[1]
				for k4 := 0; k4 < 4; k4++ {
					copy(dst[k4*64+4*r:k4*64+4*r+4], blk[2+4*k4:6+4*k4])
				}
			}
		}
	}
	return p
}

// unpackQ4 returns the GGML Q4_0 rows of a packed matrix (the inverse of
// packQ4).
func unpackQ4(p []byte, rows, cols int) []byte {
	nb := cols / Q8BlockSize
	ng := (rows + q8Group - 1) / q8Group
	scales := p[ng*nb*q4GroupBlock:]
	rb := Q4RowBytes(cols)
	q := make([]byte, rows*rb)
	for row := 0; row < rows; row++ {
		g, r := row/q8Group, row%q8Group
		for b := 0; b < nb; b++ {
			src := p[(g*nb+b)*q4GroupBlock:]
			blk := q[row*rb+b*Q4BlockBytes : row*rb+(b+1)*Q4BlockBytes]
			blk[0], blk[1] = scales[(g*nb+b)*q8GroupScale+2*r], scales[(g*nb+b)*q8GroupScale+2*r+1]
			for k4 := 0; k4 < 4; k4++ {
				copy(blk[2+4*k4:6+4*k4], src[k4*64+4*r:k4*64+4*r+4])
			}
		}
	}
	return q
}

// q4pBlockGo adds to is the 16 sums Σ_t x_t·q_t of a packed Q4_0 group
// block wb (nibbles q) against the activation block xb; with the xs
// pair's −8·Σx added they are the exact I_b.
func q4pBlockGo(is *[q8Group]int32, wb []byte, xb []int8) {
	for k4 := 0; k4 < 4; k4++ {
		lo, hi := xb[4*k4:4*k4+4:4*k4+4], xb[16+4*k4:20+4*k4:20+4*k4]
		wk := wb[k4*64 : k4*64+64]
		for r := 0; r < q8Group; r++ {
			w4 := wk[4*r : 4*r+4 : 4*r+4]
			for t := 0; t < 4; t++ {
				is[r] += int32(w4[t]&15)*int32(lo[t]) + int32(w4[t]>>4)*int32(hi[t])
			}
		}
	}
}

// q4Rows computes outputs [r0,r1) of a Q4_0 matrix in GGML blocks (not
// packed: MatMul's slow path, one output at a time in the go level's
// canonical order) for the job's n quantized activation rows.
func (j *mmJob) q4Rows(r0, r1 int) {
	nb, cols, rows := j.nb, j.cols, j.rows
	rb := Q4RowBytes(cols)
	for r := r0; r < r1; r++ {
		row := j.w.Q[r*rb : (r+1)*rb]
		for i := 0; i < j.n; i++ {
			xq, xd := j.xq[i*cols:(i+1)*cols], j.xd[i*nb:(i+1)*nb]
			var s float32
			for b := 0; b < nb; b++ {
				blk := row[b*Q4BlockBytes : (b+1)*Q4BlockBytes : (b+1)*Q4BlockBytes]
				xb := xq[b*Q8BlockSize : (b+1)*Q8BlockSize : (b+1)*Q8BlockSize]
				var is int32
				for t := 0; t < 16; t++ {
					is += int32(xb[t])*(int32(blk[2+t]&15)-8) + int32(xb[16+t])*(int32(blk[2+t]>>4)-8)
				}
				dw := F16ToF32(uint16(blk[0]) | uint16(blk[1])<<8)
				s += float32(float32(is) * (dw * xd[b]))
			}
			j.out[i*rows+r] = s
		}
	}
}

// Q4Packed reports whether this CPU's kernel level keeps Q4_0 matrices
// packed (PackQ4); elsewhere they are expanded to Q8_0, about 1.7× the
// bytes.
func Q4Packed() bool { return impl.q4p }
