//go:build amd64 && !purego

package tensor

// kTileFunc is a generated tile of a packed K format (ktile_gen.go): one
// group of 16 W rows (w, nb super-blocks) against R activation rows, row
// i's Q8_K bytes at x + i·ldx, its aux values at xc + i·ldc bytes, its
// super-block scales at xd + i·ldd bytes; row i's outputs at out + i·ldo
// floats, those whose bit of mask is set.
type kTileFunc func(out *float32, ldo int, x *int8, ldx int, xc *int32, ldc int, xd *float32, ldd int, w *byte, nb int, mask uint64)

// kTilePanel bounds the activation bytes of a panel of rows: each group's
// weights are loaded once per panel, for all its rows in tiles of four,
// while the panel's activations stay in L2 (at least four rows; a
// variable for the tests).
var kTilePanel = 256 << 10

// q4kTiledAVX512, q6kTiledAVX512, q5kTiledAVX512 and q3kTiledAVX512
// compute packed Q4_K, Q6_K, Q5_K and Q3_K outputs of groups [g0,g1): one
// activation row with the one-row kernels (decode, streaming the
// weights), more in tiles (kpTiled).
func q4kTiledAVX512(a *kpArgs, g0, g1 int) { kpTiled(a, g0, g1, Q4_K, q4kRecord, 8, q4kRowsAVX512) }
func q6kTiledAVX512(a *kpArgs, g0, g1 int) { kpTiled(a, g0, g1, Q6_K, q6kRecord, 64, q6kRowsAVX512) }
func q5kTiledAVX512(a *kpArgs, g0, g1 int) { kpTiled(a, g0, g1, Q5_K, q5kRecord, 8, q5kRowsAVX512) }
func q3kTiledAVX512(a *kpArgs, g0, g1 int) { kpTiled(a, g0, g1, Q3_K, q3kRecord, 64, q3kRowsAVX512) }

// kpTiled runs format t's tiles (records of rec bytes, aux values per
// super-block) over groups [g0,g1) and every activation row: per panel of
// rows, each group against the panel's rows in the fewest tiles of at
// most four, their heights as even as can be (five rows: 3 + 2, not
// 4 + 1). A single row goes to one instead. Every output has the one-row
// kernel's bits.
func kpTiled(a *kpArgs, g0, g1 int, t DType, rec, aux int, one func(a *kpArgs, g0, g1 int)) {
	if a.n < 2 {
		one(a, g0, g1)
		return
	}
	nb, ldo := a.nb, a.ldo
	if nb == 0 || g0 >= g1 {
		return
	}
	tiles, cols := kTileAsm[t], nb*256
	_ = a.w[g1*nb*rec-1]
	_, _, _ = a.xq[a.n*cols-1], a.xd[a.n*nb-1], a.aux[a.n*nb*aux-1]
	_ = a.out[(a.n-1)*ldo+a.rows-1]
	panel := max(4, kTilePanel/cols/4*4)
	for i0 := 0; i0 < a.n; i0 += panel {
		i1 := min(i0+panel, a.n)
		for g := g0; g < g1; g++ {
			mask, w := a.groupMask(g), &a.w[g*nb*rec]
			m := i1 - i0
			nt := (m + 3) / 4
			for i, k := i0, 0; k < nt; k++ {
				h := m / nt
				if k < m%nt {
					h++
				}
				tiles[h-1](&a.out[i*ldo+g*q8Group], ldo, &a.xq[i*cols], cols,
					&a.aux[i*nb*aux], 4*nb*aux, &a.xd[i*nb], 4*nb, w, nb, mask)
				i += h
			}
		}
	}
}
