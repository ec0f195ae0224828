package tensor

// Packed Q8_0 in GGML's float order.
//
// llama.cpp's Q8_0 kernels on x86 (vec_dot_q8_0_q8_0 for one activation
// row, tinyBLAS for more: the same order) sum each block's 32 products in
// eight int32 lanes of four columns, and fuse each lane into its own float
// accumulator, per block:
//
//	for b ascending, k4 < 8: acc[k4] = fma(dw_b·dx_b, float32(I_b,k4), acc[k4])
//	out = ((acc0+acc4) + (acc2+acc6)) + ((acc1+acc5) + (acc3+acc7))
//
// where I_b,k4 = Σ_{t<4} x·w over columns 32b+4k4+t is exact and dw_b·dx_b
// is rounded to float32. govllm's packed Q8_0 (every level) computes every
// output so: bit for bit llama.cpp's, which its goldens need (a last-bit
// difference in any matmul moves a 200-token prompt's logprobs by up to
// 0.07 through the activation quantization). The packed layout's
// four-column steps (q8pack.go) are these lanes: at the avx512 level one
// VPDPBUSD gives a step's I for 16 rows, from the step's correction
// −128·Σ of its four activation values (xc) for the weights' +128.

// q8lCorr writes, per four activation values, −128·Σ of them.
func q8lCorr(xc []int32, xq []int8) {
	for k := range xc {
		q := xq[4*k : 4*k+4 : 4*k+4]
		xc[k] = -128 * (int32(q[0]) + int32(q[1]) + int32(q[2]) + int32(q[3]))
	}
}

// q8lScratch returns the buffer for the activations' step corrections.
func (p *Pool) q8lScratch(n int) []int32 {
	if p == nil {
		return make([]int32, n)
	}
	return grow(&p.xc, n)
}

// q8lReduce is the final reduction of the eight lane accumulators.
func q8lReduce(l *[8]float32) float32 {
	return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
}

// q8lBlockGo adds one packed Q8_0 group block wb against the activation
// block xb to the 16 rows' lane accumulators, d the rows' dw·dx.
func q8lBlockGo(acc *[q8Group][8]float32, wb []byte, xb []int8, d *[q8Group]float32) {
	for r := range acc {
		for k4 := 0; k4 < 8; k4++ {
			w4, x4 := wb[k4*64+4*r:k4*64+4*r+4:k4*64+4*r+4], xb[4*k4:4*k4+4:4*k4+4]
			var s int32
			for t := range w4 {
				s += int32(int8(w4[t]^0x80)) * int32(x4[t])
			}
			acc[r][k4] = fma32(d[r], float32(s), acc[r][k4])
		}
	}
}
