package model

import (
	"fmt"
	"math"
	"testing"

	"govllm/internal/tensor"
)

// TestMatMulBlocksSameBits checks that matMul's row blocks give the bits of
// one pool.MatMul over all rows, for F32 and Q8_0 weights, widths that make
// blocks of 64 and of 128 rows, and row counts around the block edges.
func TestMatMulBlocksSameBits(t *testing.T) {
	for _, cols := range []int{2048, 4160} {
		for _, dt := range []tensor.DType{tensor.F32, tensor.Q8_0} {
			rows := 40
			wf := make([]float32, rows*cols)
			for i := range wf {
				wf[i] = float32((i*7919)%211-105) / 1000
			}
			w := tensor.Mat{Rows: rows, Cols: cols, Type: tensor.F32, F32: wf}
			if dt == tensor.Q8_0 {
				q := make([]byte, rows*tensor.Q8RowBytes(cols))
				tensor.QuantizeQ8_0(q, wf)
				w = tensor.Mat{Rows: rows, Cols: cols, Type: tensor.Q8_0, Q: q}
			}
			for _, threads := range []int{1, 2} {
				pool := tensor.NewPool(threads)
				for _, n := range []int{63, 64, 65, 129, 200} {
					t.Run(fmt.Sprintf("cols=%d/%v/threads=%d/n=%d", cols, dt, threads, n), func(t *testing.T) {
						x := make([]float32, n*cols)
						for i := range x {
							x[i] = float32((i*104729)%199-99) / 100
						}
						want, got := make([]float32, n*rows), make([]float32, n*rows)
						pool.MatMul(want, x, n, &w)
						matMul(pool, got, x, n, &w)
						for i := range want {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("out[%d] = %g, want %g", i, got[i], want[i])
							}
						}
					})
				}
				pool.Close()
			}
		}
	}
}
