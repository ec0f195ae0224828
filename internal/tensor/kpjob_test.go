package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestKPackedChunks: packed K matrices, alone and Stacked (a Q4_K_M
// layer's Q/K in Q4_K with V in Q6_K, and Q3_K over Q5_K), big enough for
// the pool's threads to claim many chunks (odd group counts, a partial last
// group), give the bits of their GGML blocks under the go level's Go code
// (GGML's x86 vec_dot order, blockmm.go), part by part, on one and two
// threads and for several activation rows.
func TestKPackedChunks(t *testing.T) {
	if impl.q4k == nil || impl.q6k == nil || impl.q3k == nil || impl.q5k == nil {
		t.Skipf("level %s has no packed K kernels", Level())
	}
	rng := rand.New(rand.NewPCG(23, 24))
	type part struct {
		typ  DType
		rows int
	}
	for _, tc := range []struct {
		name  string
		cols  int
		parts []part
	}{
		{"q4_k", 512, []part{{Q4_K, 1000}}},
		{"q6_k", 768, []part{{Q6_K, 777}}},
		{"q4_k+q4_k+q6_k", 512, []part{{Q4_K, 512}, {Q4_K, 129}, {Q6_K, 240}}},
		{"q3_k+q5_k", 256, []part{{Q3_K, 401}, {Q5_K, 300}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ref, packed []Mat
			rows := 0
			for _, pt := range tc.parts {
				c := CodecOf(pt.typ)
				q := randBlocks(rng, c, pt.rows*tc.cols/256)
				ref = append(ref, Mat{Rows: pt.rows, Cols: tc.cols, Type: pt.typ, Q: q})
				w := Mat{Rows: pt.rows, Cols: tc.cols, Type: pt.typ, Q: append([]byte(nil), q...)}
				if PackBlocks(&w); w.P == nil {
					t.Fatalf("PackBlocks left %s unpacked", c.Name)
				}
				packed = append(packed, w)
				rows += pt.rows
			}
			w := &packed[0]
			if len(packed) > 1 {
				w = &Mat{Rows: rows, Cols: tc.cols, Type: Stacked, Parts: packed}
			}
			for _, n := range []int{1, 2, 5} {
				x := randVec(rng, n*tc.cols)
				want := kRef(ref, x, n, rows)
				for _, threads := range []int{1, 2} {
					p := NewPool(threads)
					got := make([]float32, n*rows+1)
					got[n*rows] = 7
					p.MatMul(got, x, n, w)
					p.Close()
					if got[n*rows] != 7 {
						t.Fatalf("n=%d threads=%d: wrote past the outputs", n, threads)
					}
					for k := range want {
						if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
							t.Fatalf("n=%d threads=%d: out[%d][%d] = %v, reference %v", n, threads, k/rows, k%rows, got[k], want[k])
						}
					}
				}
			}
		})
	}
}

// kRef is the go level's product of the GGML-block parts (stacked), x of n
// rows.
func kRef(parts []Mat, x []float32, n, rows int) []float32 {
	saved := impl
	impl = goKernels
	defer func() { impl = saved }()
	want := make([]float32, n*rows)
	r0 := 0
	for k := range parts {
		pt := &parts[k]
		tmp := make([]float32, n*pt.Rows)
		(*Pool)(nil).MatMul(tmp, x, n, pt)
		for i := 0; i < n; i++ {
			copy(want[i*rows+r0:], tmp[i*pt.Rows:(i+1)*pt.Rows])
		}
		r0 += pt.Rows
	}
	return want
}

// TestKPackedAllocs: a packed K MatMul (and a Stacked one of packed K
// parts) allocates nothing once the pool's scratch has grown.
func TestKPackedAllocs(t *testing.T) {
	if impl.q4k == nil || impl.q6k == nil {
		t.Skipf("level %s has no packed K kernels", Level())
	}
	rng := rand.New(rand.NewPCG(25, 26))
	const cols = 512
	mat := func(typ DType, rows int) Mat {
		w := Mat{Rows: rows, Cols: cols, Type: typ, Q: randBlocks(rng, CodecOf(typ), rows*cols/256)}
		PackBlocks(&w)
		return w
	}
	q4 := mat(Q4_K, 300)
	st := &Mat{Rows: 400, Cols: cols, Type: Stacked, Parts: []Mat{mat(Q4_K, 300), mat(Q6_K, 100)}}
	for _, threads := range []int{1, 2} {
		p := NewPool(threads)
		for _, w := range []*Mat{&q4, st} {
			for _, n := range []int{1, 3} {
				x := randVec(rng, n*cols)
				out := make([]float32, n*w.Rows)
				p.MatMul(out, x, n, w)
				if a := testing.AllocsPerRun(20, func() { p.MatMul(out, x, n, w) }); a != 0 {
					t.Errorf("threads=%d rows=%d n=%d: %v allocations per MatMul", threads, w.Rows, n, a)
				}
			}
		}
		p.Close()
	}
}

// TestKPackedBadShape: a Stacked matrix of packed K parts whose rows or
// columns do not add up is refused, not read past.
func TestKPackedBadShape(t *testing.T) {
	if impl.q4k == nil {
		t.Skipf("level %s has no packed Q4_K kernel", Level())
	}
	rng := rand.New(rand.NewPCG(27, 28))
	mat := func(rows, cols int) Mat {
		w := Mat{Rows: rows, Cols: cols, Type: Q4_K, Q: randBlocks(rng, CodecOf(Q4_K), rows*cols/256)}
		PackBlocks(&w)
		return w
	}
	for _, tc := range []struct {
		name string
		w    *Mat
	}{
		{"too few rows", &Mat{Rows: 64, Cols: 256, Type: Stacked, Parts: []Mat{mat(16, 256), mat(16, 256)}}},
		{"too many rows", &Mat{Rows: 20, Cols: 256, Type: Stacked, Parts: []Mat{mat(16, 256), mat(16, 256)}}},
		{"columns", &Mat{Rows: 32, Cols: 256, Type: Stacked, Parts: []Mat{mat(16, 256), mat(16, 512)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("MatMul did not panic")
				}
			}()
			out := make([]float32, 2*tc.w.Rows)
			(*Pool)(nil).MatMul(out, make([]float32, 2*tc.w.Cols), 2, tc.w)
		})
	}
}
