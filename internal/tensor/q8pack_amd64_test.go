//go:build amd64 && !purego

package tensor

import (
	"fmt"
	"govllm/internal/cputime"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// BenchmarkQ8pKernel runs q8pGemm3x4VNNI alone on one tile (three groups ×
// four activation rows over nb blocks), the same data every call, like
// BenchmarkGemmKernel for F32: its ceiling with the weights in L1 (nb=8 and
// 16: 12 and 24 KB; the shortest calls pay more for the call itself), in L2
// (nb=64 and 176: K=2048 and 5632, 96 and 270 KB), and (rows=768, 5632)
// the same tile against the weights of a whole matrix read in turn, from
// L2 or L3, with every weight tile used by one activation tile only. For
// L3 and DRAM with the weights reused by n rows, see
// BenchmarkMatMulQ8Packed and BenchmarkMatMulQ8PackedDRAM. GOPS/cpu-s
// counts a multiply and an add per weight and row.
// Run: go test -run '^$' -bench Q8pKernel ./internal/tensor
func BenchmarkQ8pKernel(b *testing.B) {
	if impl.q8p == nil {
		b.Skip("no packed Q8_0 kernels at this level")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for _, s := range []struct{ rows, nb int }{{48, 8}, {48, 16}, {48, 64}, {48, 176}, {768, 64}, {5632, 64}} {
		cols := s.nb * Q8BlockSize
		w := packedMat(quantizeMat(s.rows, cols, randVec(rng, s.rows*cols)))
		ng := s.rows / q8Group
		wb, sb := s.nb*q8GroupBlock, s.nb*q8GroupScale
		ws, ss := w.P[:ng*wb], w.P[ng*wb:]
		xq := make([]int8, 4*cols)
		for i := range xq {
			xq[i] = int8(rng.IntN(256) - 128)
		}
		xs := make([]uint32, 4*2*s.nb)
		q8pScales(xs, xq, randVec(rng, 4*s.nb))
		out := make([]float32, 4*48)
		b.Run(fmt.Sprintf("rows=%d/k=%d", s.rows, cols), func(b *testing.B) {
			cpu0 := cputime.Process()
			g := 0
			for b.Loop() {
				q8pGemm3x4VNNI(&out[0], 48, &xq[0], cols, &xs[0], 8*s.nb,
					&ws[g*wb], &ws[(g+1)*wb], &ws[(g+2)*wb], &ss[g*sb], &ss[(g+1)*sb], &ss[(g+2)*sb], s.nb, 1<<48-1, nil, 0, 0)
				if g += 3; g+3 > ng {
					g = 0
				}
			}
			ops := 2 * float64(4*48*cols) * float64(b.N)
			b.ReportMetric(ops/b.Elapsed().Seconds()/1e9, "GOPS")
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(ops/cpu.Seconds()/1e9, "GOPS/cpu-s")
			}
		})
	}
}

// TestQ8pPrefetch: the tiles of three groups together prefetch every cache
// line of the next groups' weights, whatever the tile count and the
// groups left (the scales too when a tile is left without a weight share).
func TestQ8pPrefetch(t *testing.T) {
	for _, nb := range []int{1, 3, 64, 176} {
		gb, sb := nb*q8GroupBlock, nb*q8GroupScale
		buf := make([]byte, 3*gb+3*sb)
		for _, groups := range []int{1, 2, 3} {
			nw, ns := buf[:groups*gb], buf[3*gb:3*gb+groups*sb]
			for _, T := range []int{1, 2, 3, 4, 5, 8, 12, 16, 32, 512} {
				seen := map[int]bool{} // offsets in buf
				free := false
				for tile := 0; tile < T; tile++ {
					pf, pfs, pfk := q8pPrefetch(nw, ns, tile, T, nb)
					if pf == nil {
						continue
					}
					if pfk < 1 {
						t.Fatalf("nb=%d groups=%d T=%d tile %d: pfk=%d", nb, groups, T, tile, pfk)
					}
					base := int(uintptr(unsafe.Pointer(pf)) - uintptr(unsafe.Pointer(&buf[0])))
					if base >= 3*gb {
						free = true
					}
					for k := 0; k < pfk; k++ {
						for l := 0; l < nb; l++ {
							seen[(base+k*pfs+64*l)/64*64] = true
						}
					}
				}
				for o := 0; o < len(nw); o += 64 {
					if !seen[o] {
						t.Fatalf("nb=%d groups=%d T=%d: weight line at %d not prefetched", nb, groups, T, o)
					}
				}
				for o := 3 * gb; free && o < 3*gb+len(ns); o += 64 {
					if !seen[o/64*64] {
						t.Fatalf("nb=%d groups=%d T=%d: scale line at %d not prefetched", nb, groups, T, o)
					}
				}
			}
		}
	}
}
