//go:build amd64 && !purego

package tensor

//go:generate go run b32pack_gen.go ktile_gen.go

// b32pPanel is the number of groups the tiles work through at a time:
// every tile of four activation rows runs over the panel's groups (their
// weights stay in L2 meanwhile) before the next panel.
const b32pPanel = 12

// b32pRowsAVX512 computes the packed outputs of groups [g0,g1) of a
// Q4_1, Q5_0, Q5_1 or IQ4_NL matrix (b32pack.go) for all activation rows:
// per panel, tiles of two groups × four rows, then the rows left over one
// at a time against four groups (one or two rows: the whole range is one
// panel). Every kernel gives blockRows' bits. Groups a tile lacks past the
// end of the range are a duplicate of its first one, not written.
func b32pRowsAVX512(a *b32Args, t DType, g0, g1 int) {
	k, ok := b32pAsm[t]
	if !ok || a.nb == 0 || g0 >= g1 || a.n == 0 {
		return
	}
	nb, cols, ldo := a.nb, a.cols, a.ldo
	wb, sb := nb*a.l.wrec, nb*a.l.srec
	_, _ = a.w[g1*wb-1], a.s[g1*sb-1]
	_, _ = a.xq[a.n*cols-1], a.xa[a.n*2*nb-1]
	_ = a.out[(a.n-1)*ldo+a.rows-1]
	var w, s [4]*byte
	// tile points w and s at groups q.. (q again past ge) and returns
	// their output mask.
	tile := func(q, ge, m int) uint64 {
		var mask uint64
		for t := 0; t < m; t++ {
			g := q
			if q+t < ge {
				g = q + t
				mask |= a.groupMask(g) << (16 * t)
			}
			w[t], s[t] = &a.w[g*wb], &a.s[g*sb]
		}
		return mask
	}
	n4 := a.n &^ 3
	panel := b32pPanel
	if n4 == 0 {
		panel = g1 - g0
	}
	for g := g0; g < g1; g += panel {
		ge := min(g+panel, g1)
		for i := 0; i < n4; i += 4 {
			for q := g; q < ge; q += 2 {
				mask := tile(q, ge, 2)
				k[0](&a.out[i*ldo+q*q8Group], ldo, &a.xq[i*cols], cols, &a.xa[2*i*nb], 8*nb, &w, &s, nb, mask)
			}
		}
		for q := g; q < ge; q += 4 {
			mask := tile(q, ge, 4)
			for i := n4; i < a.n; i++ {
				k[1](&a.out[i*ldo+q*q8Group], ldo, &a.xq[i*cols], cols, &a.xa[2*i*nb], 8*nb, &w, &s, nb, mask)
			}
		}
	}
}

// iq4xsRowsAVX512 computes packed IQ4_XS outputs of groups [g0,g1): per
// 16 activation rows, each group against pairs of rows (iq4xsGemv2), the
// last odd row alone (iq4xsGemv1).
func iq4xsRowsAVX512(a *xsArgs, g0, g1 int) {
	nb, ldo := a.nb, a.ldo
	if nb == 0 || g0 >= g1 || a.n == 0 {
		return
	}
	cols := nb * 256
	_ = a.w[g1*nb*iq4xsRecord-1]
	_, _, _ = a.xq[a.n*cols-1], a.xd[a.n*nb-1], a.xc[a.n*cols/4-1]
	_ = a.out[(a.n-1)*ldo+a.rows-1]
	for i0 := 0; i0 < a.n; i0 += 16 {
		i1 := min(i0+16, a.n)
		for g := g0; g < g1; g++ {
			mask, w := a.groupMask(g), &a.w[g*nb*iq4xsRecord]
			for i := i0; i < i1; i += 2 {
				f := iq4xsGemv2
				if i+1 == i1 {
					f = iq4xsGemv1
				}
				f(&a.out[i*ldo+g*q8Group], ldo, &a.xq[i*cols], cols, &a.xc[i*cols/4], cols, &a.xd[i*nb], 4*nb, w, nb, mask)
			}
		}
	}
}

// q2kRowsAVX512 computes packed Q2_K outputs of groups [g0,g1), as
// iq4xsRowsAVX512 (q2kGemv2, q2kGemv1).
func q2kRowsAVX512(a *q2kArgs, g0, g1 int) {
	nb, ldo := a.nb, a.ldo
	if nb == 0 || g0 >= g1 || a.n == 0 {
		return
	}
	cols := nb * 256
	_ = a.w[g1*nb*q2kRecord-1]
	_, _, _ = a.xq[a.n*cols-1], a.xd[a.n*nb-1], a.bs[a.n*nb*8-1]
	_ = a.out[(a.n-1)*ldo+a.rows-1]
	for i0 := 0; i0 < a.n; i0 += 16 {
		i1 := min(i0+16, a.n)
		for g := g0; g < g1; g++ {
			mask, w := a.groupMask(g), &a.w[g*nb*q2kRecord]
			for i := i0; i < i1; i += 2 {
				f := q2kGemv2
				if i+1 == i1 {
					f = q2kGemv1
				}
				f(&a.out[i*ldo+g*q8Group], ldo, &a.xq[i*cols], cols, &a.bs[i*nb*8], 32*nb, &a.xd[i*nb], 4*nb, w, nb, mask)
			}
		}
	}
}
