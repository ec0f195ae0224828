package tensor

import (
	"fmt"
	"testing"
)

// TestMatMulF32NoColumns: with zero columns every output is zero, through
// the matvec (n < 4) and the GEMM path alike.
func TestMatMulF32NoColumns(t *testing.T) {
	w := &Mat{Rows: 13, Cols: 0, Type: F32}
	eachImpl(t, func(t *testing.T) {
		for _, n := range []int{1, 5, 9} {
			t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
				out := make([]float32, n*w.Rows)
				for i := range out {
					out[i] = 7
				}
				(*Pool)(nil).MatMul(out, nil, n, w)
				for i, v := range out {
					if v != 0 {
						t.Fatalf("out[%d] = %v, want 0", i, v)
					}
				}
			})
		}
	})
}

// TestMatMulF32BlockedGroups runs the batch-invariance check with W row
// groups of one chunk and of several, under column and row blocks small
// enough to cut the shapes into many of each (the groups change which
// panel's accumulators are parked where, never an output's bits).
func TestMatMulF32BlockedGroups(t *testing.T) {
	for _, nc := range []int{1, 24, 72} {
		t.Run(fmt.Sprintf("nc=%d", nc), func(t *testing.T) {
			kc, mc, xb, gnc := gemmKC, gemmMC, gemmXBytes, gemmNC
			gemmKC, gemmMC, gemmXBytes, gemmNC = 32, 8, 1<<30, nc
			defer func() { gemmKC, gemmMC, gemmXBytes, gemmNC = kc, mc, xb, gnc }()
			testMatMulF32BatchInvariant(t)
		})
	}
}
