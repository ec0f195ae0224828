package tensor

import (
	"fmt"
	"govllm/internal/cputime"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"unsafe"
)

// packedCopy returns w packed (whatever the level: avx2 runs it in Go).
func packedCopy(w *Mat) *Mat {
	return &Mat{Rows: w.Rows, Cols: w.Cols, Type: F32, P32: packF32(w.F32, w.Rows, w.Cols)}
}

func TestPackF32RoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, s := range []struct{ rows, cols int }{{1, 1}, {31, 5}, {32, 7}, {33, 64}, {100, 3}} {
		f := randVec(rng, s.rows*s.cols)
		w := packedCopy(&Mat{Rows: s.rows, Cols: s.cols, Type: F32, F32: f})
		if len(w.P32) != f32PackedLen(s.rows, s.cols) || len(w.P32)%(f32pNR*s.cols) != 0 {
			t.Fatalf("%d×%d: packed %d floats", s.rows, s.cols, len(w.P32))
		}
		if uintptrOf(w.P32)%64 != 0 {
			t.Fatalf("%d×%d: packed data not 64-byte aligned", s.rows, s.cols)
		}
		UnpackF32(w)
		if w.P32 != nil || !slices.Equal(w.F32, f) {
			t.Fatalf("%d×%d: unpacked matrix differs", s.rows, s.cols)
		}
	}
}

func TestPackF32Skips(t *testing.T) {
	q := &Mat{Rows: 2, Cols: 32, Type: Q8_0, Q: make([]byte, 2*Q8RowBytes(32))}
	PackF32(q)
	if q.P32 != nil || q.Q == nil {
		t.Fatal("PackF32 changed a Q8_0 matrix")
	}
	eachImpl(t, func(t *testing.T) {
		w := &Mat{Rows: 3, Cols: 4, Type: F32, F32: make([]float32, 12)}
		PackF32(w)
		if packed := w.P32 != nil; packed != (impl.f32p != nil) || packed == (w.F32 != nil) {
			t.Fatalf("level %s: PackF32 left P32 %v, F32 %v", impl.name, w.P32 != nil, w.F32 != nil)
		}
		// Only avx512 has packed kernels; elsewhere packed matrices would
		// run f32pGo, slower than the level's row-major kernels.
		if packed := w.P32 != nil; packed != (impl.name == "avx512") {
			t.Fatalf("level %s: PackF32 packed: %v", impl.name, packed)
		}
		PackF32(w) // already packed (or unpackable): no change
	})
}

// TestMatMulF32PackedBatchInvariant: at every level, out[i][r] of a packed
// MatMul equals the n = 1 result for the same x row bit for bit, whatever
// n (lone tiles with wide kernels, GEMM tiles and their leftover rows),
// the thread count, the column blocks and the row blocks; and the result
// is within float32 rounding of the float64 product. At the go level it
// is the row-major MatMul's result exactly (the same canonical order).
func TestMatMulF32PackedBatchInvariant(t *testing.T) {
	for _, b := range []struct {
		name   string
		kc, xb int
	}{
		{"default", f32pKC, f32pXBytes},
		{"kc=40,xb=1", 40, 1},
		{"kc=64,xb=8K", 64, 8 << 10},
	} {
		t.Run(b.name, func(t *testing.T) {
			kc, xb := f32pKC, f32pXBytes
			f32pKC, f32pXBytes = b.kc, b.xb
			defer func() { f32pKC, f32pXBytes = kc, xb }()
			testMatMulF32PackedBatchInvariant(t)
		})
	}
}

func testMatMulF32PackedBatchInvariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	ns := []int{1, 2, 3, 4, 5, 6, 7, 8, 13, 14, 15, 16, 27, 28, 29, 33, 64}
	pools := []struct {
		name string
		p    *Pool
	}{{"nil", nil}, {"t=1", NewPool(1)}, {"t=2", NewPool(2)}}
	defer func() {
		for _, p := range pools {
			p.p.Close()
		}
	}()
	shapes := []struct{ rows, cols int }{{29, 1}, {32, 7}, {33, 100}, {64, 17}, {97, 130}, {160, 288}, {300, 64}}
	eachImpl(t, func(t *testing.T) {
		for _, s := range shapes {
			t.Run(fmt.Sprintf("%dx%d", s.rows, s.cols), func(t *testing.T) {
				w := &Mat{Rows: s.rows, Cols: s.cols, Type: F32, F32: randVec(rng, s.rows*s.cols)}
				pw := packedCopy(w)
				maxN := ns[len(ns)-1]
				x := randVec(rng, maxN*s.cols)
				ref := make([]float32, maxN*s.rows)
				for i := 0; i < maxN; i++ {
					(*Pool)(nil).MatMul(ref[i*s.rows:(i+1)*s.rows], x[i*s.cols:(i+1)*s.cols], 1, pw)
				}
				checkClose(t, ref, refMatMul64(x, w.F32, maxN, s.rows, s.cols), s.cols, 1)
				if impl == goKernels {
					rowMajor := make([]float32, maxN*s.rows)
					(*Pool)(nil).MatMul(rowMajor, x, maxN, w)
					if !bitsEqual(rowMajor, ref) {
						t.Fatal("go level: packed and row-major results differ")
					}
				}
				for _, pl := range pools {
					for _, n := range ns {
						out := make([]float32, n*s.rows+1)
						out[n*s.rows] = 42 // must stay
						pl.p.MatMul(out[:n*s.rows], x, n, pw)
						for i := 0; i < n; i++ {
							for r := 0; r < s.rows; r++ {
								got, want := out[i*s.rows+r], ref[i*s.rows+r]
								if math.Float32bits(got) != math.Float32bits(want) {
									t.Fatalf("%s n=%d: out[%d][%d] = %v, alone %v", pl.name, n, i, r, got, want)
								}
							}
						}
						if out[n*s.rows] != 42 {
							t.Fatalf("%s n=%d: wrote past the output", pl.name, n)
						}
					}
				}
			})
		}
	})
}

// TestMatMulF32PackedZeroCols: a matrix of no columns gives zeros.
func TestMatMulF32PackedZeroCols(t *testing.T) {
	w := &Mat{Rows: 5, Cols: 0, Type: F32, P32: []float32{}}
	out := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	(*Pool)(nil).MatMul(out, nil, 2, w)
	if slices.ContainsFunc(out, func(v float32) bool { return v != 0 }) {
		t.Fatalf("out = %v, want zeros", out)
	}
}

func bitsEqual(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

func uintptrOf(f []float32) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(f))) }

// BenchmarkMatMulF32Packed compares the packed (outer-product) and the
// row-major F32 MatMul on one thread, on stories110M's and TinyLlama's
// shapes: n = 1 (decode, W from memory), 16 and 128 (prefill).
func BenchmarkMatMulF32Packed(b *testing.B) {
	rng := rand.New(rand.NewPCG(35, 36))
	for _, s := range []struct{ rows, cols int }{{2304, 768}, {4096, 768}, {768, 2048}, {11264, 2048}, {2048, 5632}} {
		w := &Mat{Rows: s.rows, Cols: s.cols, Type: F32, F32: randVec(rng, s.rows*s.cols)}
		pw := packedCopy(w)
		for _, n := range []int{1, 16, 128} {
			x := randVec(rng, n*s.cols)
			out := make([]float32, n*s.rows)
			for _, l := range []struct {
				name string
				w    *Mat
			}{{"rows", w}, {"packed", pw}} {
				b.Run(fmt.Sprintf("%dx%d/n=%d/%s", s.rows, s.cols, n, l.name), func(b *testing.B) {
					p := NewPool(1)
					defer p.Close()
					p.MatMul(out, x, n, l.w)
					c0 := cputime.Process()
					for b.Loop() {
						p.MatMul(out, x, n, l.w)
					}
					if d := cputime.Process() - c0; d > 0 {
						b.ReportMetric(2*float64(n*s.rows*s.cols)*float64(b.N)/d.Seconds()/1e9, "GFLOP/cpu-s")
					}
				})
			}
		}
	}
}

// BenchmarkF32pCeiling reports the packed GEMM's speed (n = 128, one
// thread) beside its micro-kernel's on data in L1/L2 (the 14-row tile
// against one panel, over the GEMM's column block, run back to back) in
// the same run: %kernel is the share the blocking, packing and memory
// traffic leave of the kernel's ceiling.
func BenchmarkF32pCeiling(b *testing.B) {
	rng := rand.New(rand.NewPCG(37, 38))
	for _, s := range []struct{ rows, cols int }{{2304, 768}, {768, 768}, {4096, 768}, {768, 2048}, {11264, 2048}, {2048, 5632}} {
		w := &Mat{Rows: s.rows, Cols: s.cols, Type: F32, F32: randVec(rng, s.rows*s.cols)}
		pw := packedCopy(w)
		const n = 128
		b.Run(fmt.Sprintf("%dx%d/n=%d", s.rows, s.cols, n), func(b *testing.B) {
			kern := impl.f32p
			if kern == nil {
				b.Skip("no packed F32 kernel at level", impl.name)
			}
			x := randVec(rng, n*s.cols)
			out := make([]float32, n*s.rows)
			p := NewPool(1)
			defer p.Close()
			a := f32pArgs{n: n, w: pw}
			a.plan()
			kc := a.kc
			xp := randVec(rng, f32pMR*kc)
			wk := alignedFloats(f32pNR * kc)
			copy(wk, randVec(rng, len(wk)))
			ko := make([]float32, f32pMR*f32pNR)
			benchCeiling(b, 2*float64(n*s.rows*s.cols), 2*float64(f32pMR*f32pNR*kc),
				func() { p.MatMul(out, x, n, pw) },
				func() { kern(ko, f32pNR, xp, f32pMR, wk, len(wk), 2, kc, 0, f32pNR, wk, 0) })
		})
	}
}

// TestPackF32InPlace: packing in place gives the layout packing into new
// memory gives, in the matrix's own memory when its rows fill whole
// panels, and PackF32 leaves the rows it packed from untouched.
func TestPackF32InPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	eachImpl(t, func(t *testing.T) {
		if impl.f32p == nil {
			t.Skip("PackF32 does nothing at this level")
		}
		for _, s := range []struct{ rows, cols int }{{32, 1}, {32, 17}, {64, 100}, {96, 33}, {33, 40}, {5, 16}} {
			f := randVec(rng, s.rows*s.cols)
			want := packF32(f, s.rows, s.cols)
			w := &Mat{Rows: s.rows, Cols: s.cols, Type: F32, F32: slices.Clone(f)}
			own := &w.F32[0]
			PackF32InPlace(w)
			if w.F32 != nil || !bitsEqual(w.P32, want) {
				t.Fatalf("%d×%d: in-place packing differs", s.rows, s.cols)
			}
			if inPlace := &w.P32[0] == own; inPlace != (s.rows%f32pNR == 0) {
				t.Fatalf("%d×%d: packed in place %v", s.rows, s.cols, inPlace)
			}
			shared := slices.Clone(f)
			w = &Mat{Rows: s.rows, Cols: s.cols, Type: F32, F32: shared}
			PackF32(w)
			if !bitsEqual(w.P32, want) || !slices.Equal(shared, f) {
				t.Fatalf("%d×%d: PackF32 changed the rows it packed from", s.rows, s.cols)
			}
		}
	})
}

// TestPackF32Parallel: matrices big enough that packF32Into shares their
// panels out among several goroutines (unevenly: 5 panels, 4 workers),
// in place and into new memory (a last panel of 22 rows), give the panel
// layout by its definition: P[q·32·cols + c·32 + r%32] = W[r][c] for the
// rows r of panel q, zeros below the last row.
func TestPackF32Parallel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	rng := rand.New(rand.NewPCG(43, 44))
	eachImpl(t, func(t *testing.T) {
		for _, s := range []struct{ rows, cols int }{{160, 6656}, {150, 8192}} {
			if w := s.rows * s.cols >> 18; w < 4 {
				t.Fatalf("%d×%d: %d workers, the test wants 4", s.rows, s.cols, w)
			}
			f := randVec(rng, s.rows*s.cols)
			want := make([]float32, f32PackedLen(s.rows, s.cols))
			for r := range s.rows {
				for c := range s.cols {
					want[r/f32pNR*f32pPanelFloats(s.cols)+c*f32pNR+r%f32pNR] = f[r*s.cols+c]
				}
			}
			if got := packF32(f, s.rows, s.cols); !bitsEqual(got, want) {
				t.Fatalf("%d×%d: packF32 differs from the panel layout", s.rows, s.cols)
			}
			if impl.f32p == nil {
				continue // PackF32InPlace does nothing at this level
			}
			w := &Mat{Rows: s.rows, Cols: s.cols, Type: F32, F32: slices.Clone(f)}
			PackF32InPlace(w)
			if !bitsEqual(w.P32, want) {
				t.Fatalf("%d×%d: PackF32InPlace differs from the panel layout", s.rows, s.cols)
			}
		}
	})
}
