//go:build amd64 && !purego

package tensor

//go:generate go run f32pack_gen.go

// f32pAVX512 is the avx512 level's f32p: the generated kernel for the
// shape (f32pack_amd64.s), after the bounds checks its raw pointers skip.
func f32pAVX512(out []float32, ldo int, xp []float32, mr int, w []float32, ps, nz, k, flags, valid int, pf []float32, pfs int) {
	if nz < 2 || nz > 16 || nz%2 != 0 || mr < 1 || mr > f32pMR {
		panic("tensor: f32p: no kernel for this shape")
	}
	f := f32pAsm[nz/2-1][mr]
	switch {
	case f == nil:
		panic("tensor: f32p: no kernel for this shape")
	case k <= 0 || valid <= 0 || valid > 16*nz:
		panic("tensor: f32p: no columns or outputs")
	case nz > 2 && valid != 16*nz:
		panic("tensor: f32p: a wide kernel needs every output valid")
	case ldo < 0 || ps < 0:
		// The checks below bound the last row and panel only.
		panic("tensor: f32p: negative stride")
	}
	_, _, _ = out[(mr-1)*ldo+valid-1], xp[mr*k-1], w[(nz/2-1)*ps+f32pNR*k-1]
	mask := -1
	if nz == 2 {
		mask = 1<<valid - 1
	}
	f(&out[0], ldo, &xp[0], &w[0], ps, k, flags, mask, &pf[0], pfs)
}

// f32pPackX is the avx512 level's f32pPack.
func f32pPackX(dst, x []float32, ldx, mr, kb, ldd int) {
	if mr <= 0 || kb <= 0 {
		return
	}
	if ldx < 0 || mr > 16 || ldd < mr {
		panic("tensor: f32pPack: negative stride, more than 16 rows or ldd < mr") // the checks below bound the last row and column only
	}
	_, _ = dst[(kb-1)*ldd+mr-1], x[(mr-1)*ldx+kb-1]
	f32pPackAVX512(&dst[0], &x[0], ldx, mr, kb, ldd)
}
