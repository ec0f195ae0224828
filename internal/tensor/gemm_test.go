package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
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
// panel's accumulators are parked where, never an output's bits). A
// gemmXBytes that every x fits makes every group one chunk whatever nc;
// a tiny one keeps the groups of nc rows (and row blocks of 4).
func TestMatMulF32BlockedGroups(t *testing.T) {
	for _, xbytes := range []int{1 << 30, 64} {
		for _, nc := range []int{1, 24, 72} {
			t.Run(fmt.Sprintf("xbytes=%d/nc=%d", xbytes, nc), func(t *testing.T) {
				kc, mc, xb, gnc, gncw := gemmKC, gemmMC, gemmXBytes, gemmNC, gemmNCWide
				gemmKC, gemmMC, gemmXBytes, gemmNC, gemmNCWide = 32, 8, xbytes, nc, nc
				defer func() { gemmKC, gemmMC, gemmXBytes, gemmNC, gemmNCWide = kc, mc, xb, gnc, gncw }()
				testMatMulF32BatchInvariant(t)
			})
		}
	}
}

// TestPackX: a level's packX gives packX's layout (zero-padded tails
// included) for any column count and tile count.
func TestPackX(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	for _, k := range allImpls() {
		if k.packX == nil {
			continue
		}
		for _, kb := range []int{1, 7, 16, 17, 100, 1024} {
			for _, tiles := range []int{1, 3} {
				ldx := kb + 5
				x := randVec(rng, 4*tiles*ldx)
				n := tiles * ((kb + 15) / 16) * 64
				want, got := make([]float32, n), make([]float32, n)
				for i := range got {
					got[i] = float32(i) // garbage that the padding must overwrite
				}
				packX(want, x, ldx, tiles, kb)
				k.packX(got, x, ldx, tiles, kb)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s kb=%d tiles=%d: [%d] = %v, want %v", k.name, kb, tiles, i, got[i], want[i])
					}
				}
			}
		}
	}
}
