//go:build amd64 && !purego

package tensor

//go:noescape
func q8pGemm2x4VNNI(out *float32, ldo int, x *int8, ldx int, xs *uint32, lds int, w0, w1, s0, s1 *byte, nb int, mask uint64)

//go:noescape
func q8pGemv4x1VNNI(out *float32, x *int8, xs *uint32, w0, w1, w2, w3, s0, s1, s2, s3 *byte, nb int, mask uint64)

// q8pRowsAVX512 is q8p for the avx512 level: tiles of two groups × four
// activation rows, then the activation rows left over one at a time
// against four groups. Groups a tile lacks (at the end of the range) are
// computed from a duplicate of its first group and not written.
func q8pRowsAVX512(a *q8pArgs, g0, g1 int) {
	nb := a.nb
	if nb == 0 || g0 >= g1 {
		return
	}
	wb, sb := nb*q8GroupBlock, nb*q8GroupScale
	cols, ldo := a.cols, a.ldo
	n4 := a.n &^ 3
	_ = a.w[g1*wb-1]
	_ = a.s[g1*sb-1]
	if a.n > 0 {
		_, _ = a.xq[a.n*cols-1], a.xs[a.n*2*nb-1]
		_ = a.out[(a.n-1)*ldo+a.rows-1]
	}
	for g := g0; g < g1; g += q8pPanel {
		ge := min(g+q8pPanel, g1)
		for p := g; p < ge; p += 2 {
			p1 := p
			mask := a.groupMask(p)
			if p+1 < ge {
				p1 = p + 1
				mask |= a.groupMask(p1) << 16
			}
			w0, w1, s0, s1 := &a.w[p*wb], &a.w[p1*wb], &a.s[p*sb], &a.s[p1*sb]
			for i := 0; i < n4; i += 4 {
				q8pGemm2x4VNNI(&a.out[i*ldo+p*q8Group], ldo, &a.xq[i*cols], cols, &a.xs[i*2*nb], 8*nb, w0, w1, s0, s1, nb, mask)
			}
		}
		if n4 == a.n {
			continue
		}
		var gs [4]int
		var mask uint64
		for t := range gs {
			gs[t] = g
			if g+t < ge {
				gs[t] = g + t
				mask |= a.groupMask(g+t) << (16 * t)
			}
		}
		for i := n4; i < a.n; i++ {
			q8pGemv4x1VNNI(&a.out[i*ldo+g*q8Group], &a.xq[i*cols], &a.xs[i*2*nb],
				&a.w[gs[0]*wb], &a.w[gs[1]*wb], &a.w[gs[2]*wb], &a.w[gs[3]*wb],
				&a.s[gs[0]*sb], &a.s[gs[1]*sb], &a.s[gs[2]*sb], &a.s[gs[3]*sb], nb, mask)
		}
	}
}
