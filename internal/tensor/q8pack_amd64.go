//go:build amd64 && !purego

package tensor

//go:noescape
func q8pGemm3x4VNNI(out *float32, ldo int, x *int8, ldx int, xs *uint32, lds int, w0, w1, w2, s0, s1, s2 *byte, nb int, mask uint64, pf *byte, pfs, pfk int)

//go:noescape
func q8pScalesAVX512(xs *uint32, xq *int8, xd *float32, nb int)

//go:noescape
func q4pGemm3x4VNNI(out *float32, ldo int, x *int8, ldx int, xs *uint32, lds int, w0, w1, w2, s0, s1, s2 *byte, nb int, mask uint64, pf *byte, pfs, pfk int)

//go:noescape
func q4pGemv4x1PF(out *float32, x *int8, xs *uint32, w0, w1, w2, w3, s0, s1, s2, s3 *byte, nb int, mask uint64)

//go:noescape
func q4pUnpack(dst, src *byte, nblk int)

//go:noescape
func q4pGemv8x1PF(out *float32, x *int8, xs *uint32, w, s *byte, nb int)

// q8pPrefetch returns what tile t of the T activation tiles that run
// against three groups prefetches of the next three groups' weights nw and
// scales ns: the kernel's pf, pfs and pfk. Each prefetch that misses holds
// one of the core's line fill buffers for a whole DRAM latency, which caps
// a single prefetch stream at about 8 GB/s here; the L2 streamer, which
// fetches ahead of sequential streams on its own, lifts that cap when it
// has several streams to follow (the one-row kernels, with eight, read
// ~15 GB/s). So the weights are split into as many streams as there are
// cache lines to fetch per block and tile (six for four tiles: 16
// activation rows, which need the weights at ~15 GB/s), and every tile
// takes an equal share of each stream, rather than a burst in the first
// tiles that would hold the fill buffers while the tiles' own loads wait.
// The first tile left without a share prefetches the scales.
func q8pPrefetch(nw, ns []byte, t, T, nb int) (pf *byte, pfs, pfk int) {
	if len(nw) == 0 {
		return nil, 0, 0
	}
	if pf, pfs, pfk = q8pStreams(nw, t, T, nb); pf != nil {
		return pf, pfs, pfk
	}
	if _, sl, _ := q8pStreams(nw, 0, T, nb); t == (sl/64+nb-1)/nb {
		return q8pStreams(ns, 0, 1, nb)
	}
	return nil, 0, 0
}

// q8pStreams returns tile t's share (nil if none) when T tiles of nb blocks
// prefetch r as pfk streams of pfs bytes, one line from each per block.
func q8pStreams(r []byte, t, T, nb int) (pf *byte, pfs, pfk int) {
	if len(r) == 0 {
		return nil, 0, 0
	}
	lines := (len(r) + 63) / 64
	pfk = (lines + nb*T - 1) / (nb * T)
	sl := (lines + pfk - 1) / pfk // lines a stream
	if t*nb >= sl {
		return nil, sl * 64, pfk
	}
	return &r[t*nb*64], sl * 64, pfk
}

// q8pRowsAVX512 is q8p for the avx512 level: packed Q8_0 in GGML's order
// (q8lRowsAVX512), and packed Q4_0: per panel of q8pPanel groups, tiles of
// three groups × four activation rows (q4pGemm3x4VNNI), then the
// activation rows left over one at a time against four groups
// (q4pGemv4x1PF; the panel's weights are in L2 by then). When there are
// fewer than four rows the weights come cold from L3 or DRAM, and the rows
// take eight groups at a time (q4pGemv8x1PF) while eight full groups
// remain, then four; a single row takes its whole group range as one
// panel. All these kernels give the same bits. Groups a tile lacks (at the
// end of the range) are computed from a duplicate of its first group and
// not written. From q4pUnpackMin activation rows the tiles run the Q8_0
// tile kernel (q8pGemm3x4VNNI) on the three groups' weights unpacked once
// into a.unp (the same sums: see q4pUnpack), rather than unpack the
// nibbles again in every tile.
func q8pRowsAVX512(a *q8pArgs, g0, g1 int) {
	if !a.q4 {
		q8lRowsAVX512(a, g0, g1)
		return
	}
	nb := a.nb
	if nb == 0 || g0 >= g1 || a.n == 0 {
		return
	}
	wb, sb := nb*q4GroupBlock, nb*q8GroupScale
	gemm, gemvPF, gemvL2, wide, gemv8 := q4pGemm3x4VNNI, q4pGemv4x1PF, q4pGemv4x1PF, true, q4pGemv8x1PF
	var unp []byte // the three groups' weights unpacked for the tiles
	if a.unp != nil {
		unp = a.unp[a.unpNext.Add(1)-1]
		_ = unp[3*nb*q8GroupBlock-1]
		gemm = q8pGemm3x4VNNI
	}
	cols, ldo := a.cols, a.ldo
	n4 := a.n &^ 3
	_, _ = a.w[g1*wb-1], a.s[g1*sb-1]
	_, _ = a.xq[a.n*cols-1], a.xs[a.n*2*nb-1]
	_ = a.out[(a.n-1)*ldo+a.rows-1]
	var w [4]*byte
	var s [4]*byte
	// tile sets w and s to groups q.. (q again past ge) and returns their
	// output mask.
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
	panel := q8pPanel
	if a.n == 1 {
		panel = g1 - g0 // one row: no weights to keep in L2 for the next
	}
	for g := g0; g < g1; g += panel {
		ge := min(g+panel, g1)
		if n4 > 0 {
			for q := g; q < ge; q += 3 {
				mask := tile(q, ge, 3)
				if unp != nil {
					for t := range 3 {
						q4pUnpack(&unp[t*nb*q8GroupBlock], w[t], nb)
						w[t] = &unp[t*nb*q8GroupBlock]
					}
				}
				var nw, ns []byte // the next three groups (q8pPrefetch)
				if q+3 < g1 {
					e := min(q+6, g1)
					nw, ns = a.w[(q+3)*wb:e*wb], a.s[(q+3)*sb:e*sb]
				}
				for i := 0; i < n4; i += 4 {
					pf, pfs, pfk := q8pPrefetch(nw, ns, i/4, n4/4, nb)
					gemm(&a.out[i*ldo+q*q8Group], ldo, &a.xq[i*cols], cols, &a.xs[i*2*nb], 8*nb,
						w[0], w[1], w[2], s[0], s[1], s[2], nb, mask, pf, pfs, pfk)
				}
			}
		}
		if n4 == a.n {
			continue
		}
		// Rows left over after the tiles find the panel's weights in L2:
		// they take the kernel without prefetch.
		gemv := gemvPF
		if n4 > 0 {
			gemv, wide = gemvL2, false
		}
		for q := g; q < ge; {
			if wide && q+8 <= ge && (q+8)*q8Group <= a.rows {
				for i := n4; i < a.n; i++ {
					gemv8(&a.out[i*ldo+q*q8Group], &a.xq[i*cols], &a.xs[i*2*nb], &a.w[q*wb], &a.s[q*sb], nb)
				}
				q += 8
				continue
			}
			mask := tile(q, ge, 4)
			for i := n4; i < a.n; i++ {
				gemv(&a.out[i*ldo+q*q8Group], &a.xq[i*cols], &a.xs[i*2*nb],
					w[0], w[1], w[2], w[3], s[0], s[1], s[2], s[3], nb, mask)
			}
			q += 4
		}
	}
}

//go:noescape
func q8lGemv2x1(out *float32, x *int8, xc *int32, xs *uint32, w0, w1, s0, s1 *byte, nb int, mask uint64)

//go:noescape
func q8lGemm1x3(out *float32, ldo int, x *int8, ldx int, xc *int32, xs *uint32, lds int, w, s *byte, nb int, mask uint64)

// q8lRowsAVX512 is packed Q8_0 (q8pRowsGo's order) at the avx512 level,
// over pairs of groups (the pair past an odd last group a duplicate of
// it, not written): tiles of three activation rows against one group at a
// time (q8lGemm1x3: each weight load serves three rows, and the group's
// weights stay in L1 or L2 for the next tiles), then the rows left over
// one at a time against both groups (q8lGemv2x1, which also takes decode's
// one or two rows, streaming the weights with prefetch). Masked stores:
// the outputs of invalid rows are not touched.
func q8lRowsAVX512(a *q8pArgs, g0, g1 int) {
	nb := a.nb
	if nb == 0 || g0 >= g1 || a.n == 0 {
		return
	}
	wb, sb, cols, ldo := nb*q8GroupBlock, nb*q8GroupScale, a.cols, a.ldo
	_, _ = a.w[g1*wb-1], a.s[g1*sb-1]
	_, _ = a.xq[a.n*cols-1], a.xc[a.n*cols/4-1]
	_ = a.xs[a.n*2*nb-1]
	_ = a.out[(a.n-1)*ldo+a.rows-1]
	n3 := a.n - a.n%3
	groupPairs(g0, g1, a.groupMask, func(g, h int, mask uint64) {
		for q := g; q <= h; q++ {
			m := a.groupMask(q)
			for i := 0; i < n3; i += 3 {
				q8lGemm1x3(&a.out[i*ldo+q*q8Group], ldo, &a.xq[i*cols], cols, &a.xc[i*cols/4], &a.xs[2*i*nb], 8*nb,
					&a.w[q*wb], &a.s[q*sb], nb, m)
			}
		}
		for i := n3; i < a.n; i++ {
			q8lGemv2x1(&a.out[i*ldo+g*q8Group], &a.xq[i*cols], &a.xc[i*cols/4], &a.xs[2*i*nb],
				&a.w[g*wb], &a.w[h*wb], &a.s[g*sb], &a.s[h*sb], nb, mask)
		}
	})
}

//go:noescape
func q4kGemv2x1(out *float32, x *int8, xd *float32, bs *int32, w0, w1 *byte, nb int, mask uint64)

// q4kRowsAVX512 computes packed Q4_K outputs of groups [g0,g1): pairs of
// groups against one activation row at a time (q4kGemv2x1), the pair past
// an odd last group a duplicate of it, not written.
func q4kRowsAVX512(a *kpArgs, g0, g1 int) {
	nb := a.nb
	if nb == 0 || g0 >= g1 || a.n == 0 {
		return
	}
	_ = a.w[g1*nb*q4kRecord-1]
	_, _, _ = a.xq[a.n*nb*256-1], a.xd[a.n*nb-1], a.aux[a.n*nb*8-1]
	_ = a.out[(a.n-1)*a.ldo+a.rows-1]
	groupPairs(g0, g1, a.groupMask, func(g, h int, mask uint64) {
		for i := 0; i < a.n; i++ {
			q4kGemv2x1(&a.out[i*a.ldo+g*q8Group], &a.xq[i*nb*256], &a.xd[i*nb], &a.aux[i*nb*8],
				&a.w[g*nb*q4kRecord], &a.w[h*nb*q4kRecord], nb, mask)
		}
	})
}

// groupPairs calls f for the pairs of groups (g, h) in [g0,g1), h = g+1
// or, past an odd last group, g again, with the mask of their valid
// outputs (16 bits per group; the duplicate's none).
func groupPairs(g0, g1 int, groupMask func(g int) uint64, f func(g, h int, mask uint64)) {
	for g := g0; g < g1; g += 2 {
		h := min(g+1, g1-1)
		mask := groupMask(g)
		if h != g {
			mask |= groupMask(h) << 16
		}
		f(g, h, mask)
	}
}

//go:noescape
func q6kGemv1x1(out *float32, x *int8, xd *float32, xc *int32, w *byte, nb int, mask uint64)

//go:noescape
func q3kGemv1x1(out *float32, x *int8, xd *float32, xc *int32, w *byte, nb int, mask uint64)

//go:noescape
func q5kGemv1x1(out *float32, x *int8, xd *float32, bs *int32, w *byte, nb int, mask uint64)

// q6kRowsAVX512, q5kRowsAVX512 and q3kRowsAVX512 compute packed Q6_K,
// Q5_K and Q3_K outputs of groups [g0,g1), one group against one
// activation row at a time.
func q6kRowsAVX512(a *kpArgs, g0, g1 int) { kpRows1(a, g0, g1, q6kRecord, 64, q6kGemv1x1) }
func q3kRowsAVX512(a *kpArgs, g0, g1 int) { kpRows1(a, g0, g1, q3kRecord, 64, q3kGemv1x1) }
func q5kRowsAVX512(a *kpArgs, g0, g1 int) { kpRows1(a, g0, g1, q5kRecord, 8, q5kGemv1x1) }

// kpRows1 runs a one-group K kernel (records of rec bytes, aux values per
// super-block) over groups [g0,g1) and every activation row.
func kpRows1(a *kpArgs, g0, g1, rec, aux int, k func(out *float32, x *int8, xd *float32, aux *int32, w *byte, nb int, mask uint64)) {
	nb := a.nb
	if nb == 0 || g0 >= g1 || a.n == 0 {
		return
	}
	_ = a.w[g1*nb*rec-1]
	_, _, _ = a.xq[a.n*nb*256-1], a.xd[a.n*nb-1], a.aux[a.n*nb*aux-1]
	_ = a.out[(a.n-1)*a.ldo+a.rows-1]
	for g := g0; g < g1; g++ {
		mask := a.groupMask(g)
		for i := 0; i < a.n; i++ {
			k(&a.out[i*a.ldo+g*q8Group], &a.xq[i*nb*256], &a.xd[i*nb], &a.aux[i*nb*aux], &a.w[g*nb*rec], nb, mask)
		}
	}
}
