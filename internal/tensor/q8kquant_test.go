package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestQuantizeQ8KLevels: each level's Q8_K quantizer gives quantizeQ8K's
// bits (GGML's quantize_row_q8_K_ref, codec_test.go) — q, the sums of 16
// and d — on random blocks of several magnitudes and on special ones:
// zeros, ±max float32, subnormals, magnitudes at the fallback's edge,
// ties of the largest magnitude, values whose scaled form is a rounding
// tie, infinities and NaN.
func TestQuantizeQ8KLevels(t *testing.T) {
	rng := rand.New(rand.NewPCG(88, 8))
	type blk struct {
		name string
		x    []float32
	}
	fill := func(f func(i int) float32) []float32 {
		x := make([]float32, 256)
		for i := range x {
			x[i] = f(i)
		}
		return x
	}
	var blocks []blk
	for _, scale := range []float32{1e-30, 1e-3, 1, 1e3, 1e30} {
		for k := 0; k < 8; k++ {
			blocks = append(blocks, blk{"random", fill(func(int) float32 { return float32(rng.NormFloat64()) * scale })})
		}
	}
	sub := math.Float32frombits(1) // the smallest subnormal
	edge := math.Float32frombits(0x03800000)
	blocks = append(blocks,
		blk{"zeros", make([]float32, 256)},
		blk{"+max", fill(func(i int) float32 { return float32(i%7-3) * 1e37 })},
		blk{"max float32", fill(func(i int) float32 {
			if i == 9 {
				return math.MaxFloat32
			}
			return float32(i - 128)
		})},
		blk{"-max float32 first of equals", fill(func(i int) float32 {
			switch i {
			case 40:
				return -math.MaxFloat32
			case 200:
				return math.MaxFloat32
			}
			return float32(rng.NormFloat64())
		})},
		blk{"equal magnitudes, positive first", fill(func(i int) float32 { return float32(1-2*(i%2)) * 2.5 })},
		blk{"equal magnitudes, negative first", fill(func(i int) float32 { return float32(2*(i%2)-1) * 2.5 })},
		blk{"subnormals", fill(func(i int) float32 { return float32(i%5-2) * sub })},
		blk{"subnormals beside normals", fill(func(i int) float32 {
			if i%3 == 0 {
				return float32(i-100) * sub
			}
			return float32(rng.NormFloat64())
		})},
		blk{"just below 2^-120", fill(func(i int) float32 { return float32(i%3-1) * math.Float32frombits(0x037fffff) })},
		blk{"2^-120", fill(func(i int) float32 { return float32(i%3-1) * edge })},
		// m = 254: iscale −0.5, x·iscale = ±k.5 for odd x: ties to even.
		blk{"rounding ties", fill(func(i int) float32 {
			if i == 0 {
				return 254
			}
			return float32(i%64 - 32)
		})},
		blk{"+inf", fill(func(i int) float32 {
			if i == 17 {
				return float32(math.Inf(1))
			}
			return float32(i)
		})},
		blk{"nan", fill(func(i int) float32 {
			if i == 3 {
				return float32(math.NaN())
			}
			return float32(i)
		})},
	)
	for _, k := range allImpls() {
		if k.quantizeQ8K == nil {
			continue
		}
		for _, b := range blocks {
			wq, gq := make([]int8, 256), make([]int8, 256)
			wb, gb := make([]int32, 16), make([]int32, 16)
			wd := quantizeQ8K(wq, wb, b.x)
			gd := k.quantizeQ8K(gq, gb, b.x)
			if math.Float32bits(gd) != math.Float32bits(wd) {
				t.Fatalf("%s %s: d %v, quantizeQ8K %v", k.name, b.name, gd, wd)
			}
			for i := range wq {
				if gq[i] != wq[i] {
					t.Fatalf("%s %s: q[%d] %d, quantizeQ8K %d", k.name, b.name, i, gq[i], wq[i])
				}
			}
			for i := range wb {
				if gb[i] != wb[i] {
					t.Fatalf("%s %s: bsum[%d] %d, quantizeQ8K %d", k.name, b.name, i, gb[i], wb[i])
				}
			}
		}
	}
}

// BenchmarkQuantizeQ8K: quantizing a TinyLlama FFN activation (5632
// values, 22 blocks) to Q8_K, as MatMul does once per call on a K-format
// matrix, with the Go quantizer and each level's.
// Run: go test -run '^$' -bench QuantizeQ8K ./internal/tensor
func BenchmarkQuantizeQ8K(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	x := randVec(rng, 5632)
	q, bsum := make([]int8, len(x)), make([]int32, len(x)/16)
	run := func(b *testing.B, f func(q []int8, bsum []int32, x []float32) float32) {
		for b.Loop() {
			for k := 0; k < len(x)/256; k++ {
				f(q[256*k:256*k+256], bsum[16*k:16*k+16], x[256*k:256*k+256])
			}
		}
	}
	b.Run("go", func(b *testing.B) { run(b, quantizeQ8K) })
	for _, k := range allImpls() {
		if k.quantizeQ8K != nil {
			b.Run(k.name, func(b *testing.B) { run(b, k.quantizeQ8K) })
		}
	}
}
