package tensor

import (
	"fmt"
	"sync/atomic"
)

// A packed K-format MatMul (Q3_K, Q4_K, Q5_K, Q6_K at the avx512 level) as
// one job: the activations quantized to Q8_K once (into the pool's
// scratch: no allocation), then the matrix's 16-row groups claimed by the
// pool's threads from one atomic counter in guided chunks (each claim a
// 1/(2·threads) share of the groups left, at least kpMinChunk), not cut
// into one fixed half per thread: on a shared host a thread that loses its
// core for a while leaves the rest to the other one instead of holding up
// the whole product, no part of the matrix waits on the slower of two
// memory streams, and the claims are few (about twenty for a TinyLlama FFN
// matrix on two threads) and end in small chunks. A Stacked matrix whose
// parts are all packed K formats (a Q4_K_M layer's Q/K in Q4_K and V in
// Q6_K) runs as one such job over its parts' groups, writing each part's
// rows in place. Every output is computed by one kernel call on its own
// group whichever thread claims it, so the bits do not depend on the
// thread count or the order of the claims.

// kpMinChunk is the fewest groups a claim takes (but for a part's last
// group): even, so that the two-group kernels pair the same groups as over
// the whole matrix.
const kpMinChunk = 2

// kpPart is one packed matrix of a kpJob: its kernel and product, its
// groups of 16 rows, and the job's index of its first group.
type kpPart struct {
	f      func(a *kpArgs, g0, g1 int)
	a      kpArgs
	groups int
	g0     int
}

// kpAux names the activation corrections the K kernels take: the sums of
// each 32 (Q4_K, Q5_K), per four values −4·Σ (Q3_K) or −32·Σ (Q6_K).
type kpAux uint8

const (
	auxSums32 kpAux = iota
	auxQ3
	auxQ6
	kpAuxKinds
)

// kpJob is one packed K-format MatMul. A Pool keeps one (its work method
// bound once as kpFn) with its scratch; a nil Pool makes one per call.
type kpJob struct {
	parts   []kpPart
	groups  int // of all parts
	threads int
	n, cols int

	// Q8_K activations: values, scales per super-block, sums of each 16,
	// and the corrections of each kpAux (made on first use in a job).
	xq    []int8
	xd    []float32
	bsum  []int32
	aux   [kpAuxKinds][]int32
	auxOK [kpAuxKinds]bool

	_    [64]byte
	next atomic.Int64 // the first group not yet claimed
	_    [56]byte
}

// kpJobFor returns the Pool's K job (reset) or, for a nil Pool, a new one.
func (p *Pool) kpJobFor() *kpJob {
	if p == nil {
		return new(kpJob)
	}
	j := &p.kp
	j.parts, j.groups = j.parts[:0], 0
	j.next.Store(0)
	return j
}

// quantize quantizes the n rows of x (cols each, cols%256 == 0) to Q8_K.
func (j *kpJob) quantize(x []float32, n, cols int) {
	j.n, j.cols = n, cols
	j.xq = grow(&j.xq, n*cols)
	j.xd = grow(&j.xd, n*cols/256)
	j.bsum = grow(&j.bsum, n*cols/16)
	quantizeQ8KRows(j.xq, j.xd, j.bsum, x)
	j.auxOK = [kpAuxKinds]bool{}
}

// auxOf returns the corrections of kind k of the quantized activations.
func (j *kpJob) auxOf(k kpAux) []int32 {
	if j.auxOK[k] {
		return j.aux[k]
	}
	j.auxOK[k] = true
	if k == auxSums32 {
		a := grow(&j.aux[k], len(j.bsum)/2)
		for i := range a {
			a[i] = j.bsum[2*i] + j.bsum[2*i+1]
		}
		return a
	}
	mul := int32(-4)
	if k == auxQ6 {
		mul = -32
	}
	a := grow(&j.aux[k], j.n*j.cols/4)
	for i := range a {
		q := j.xq[4*i : 4*i+4 : 4*i+4]
		a[i] = mul * (int32(q[0]) + int32(q[1]) + int32(q[2]) + int32(q[3]))
	}
	return a
}

// add adds packed matrix w (Cols == the activations' cols) to the job:
// its outputs of activation row i go to out[i·ldo+r].
func (j *kpJob) add(out []float32, ldo int, w *Mat) {
	nb, rec := w.Cols/256, kpRecord[w.Type]
	groups := (w.Rows + q8Group - 1) / q8Group
	if w.Cols != j.cols || w.Cols%256 != 0 || len(w.P) < groups*nb*rec {
		panic(fmt.Sprintf("tensor: MatMul: packed %s weights of %d bytes do not fit %d×%d (activations of %d columns)",
			CodecOf(w.Type).Name, len(w.P), w.Rows, w.Cols, j.cols))
	}
	var f func(a *kpArgs, g0, g1 int)
	var aux []int32
	switch w.Type {
	case Q3_K:
		f, aux = impl.q3k, j.auxOf(auxQ3)
	case Q6_K:
		f, aux = impl.q6k, j.auxOf(auxQ6)
	case Q5_K:
		f, aux = impl.q5k, j.auxOf(auxSums32)
	default:
		f, aux = impl.q4k, j.auxOf(auxSums32)
	}
	j.parts = append(j.parts, kpPart{f: f, groups: groups, g0: j.groups,
		a: kpArgs{out: out, ldo: ldo, xq: j.xq, xd: j.xd, aux: aux, n: j.n, rows: w.Rows, nb: nb, w: w.P}})
	j.groups += groups
}

// work claims groups until none is left; every thread of the pool runs it
// once (the range is the pool's split of its threads, unused).
func (j *kpJob) work(_, _ int) {
	for {
		g := int(j.next.Load())
		if g >= j.groups {
			return
		}
		k := len(j.parts) - 1
		for j.parts[k].g0 > g {
			k--
		}
		pt := &j.parts[k]
		end := pt.g0 + pt.groups
		if j.threads > 1 {
			end = min(end, g+max(kpMinChunk, ((j.groups-g)/(2*j.threads)+1)&^1))
		}
		if j.next.CompareAndSwap(int64(g), int64(end)) {
			pt.f(&pt.a, g-pt.g0, end-pt.g0)
		}
	}
}

// runKP runs job j (work multiply-adds in all) on the pool.
func (p *Pool) runKP(j *kpJob, work int) {
	if p == nil || work < parMinWork || p.Threads() == 1 {
		j.threads = 1
		j.work(0, 1)
		return
	}
	j.threads = p.Threads()
	p.ParallelFor(j.threads, p.kpFn)
}

// isKPacked reports whether w is a packed Q3_K, Q4_K, Q5_K or Q6_K matrix.
func isKPacked(w *Mat) bool {
	_, ok := kpRecord[w.Type]
	return ok && w.P != nil
}

// allKPacked reports whether there are parts and all are isKPacked.
func allKPacked(parts []Mat) bool {
	for i := range parts {
		if !isKPacked(&parts[i]) {
			return false
		}
	}
	return len(parts) > 0
}

// matMulKPacked is MatMul for a packed Q3_K, Q4_K, Q5_K or Q6_K matrix.
func (p *Pool) matMulKPacked(out, x []float32, n int, w *Mat) {
	if w.Cols%256 != 0 {
		panic(fmt.Sprintf("tensor: MatMul: packed %s weights of %d columns (not whole super-blocks)", CodecOf(w.Type).Name, w.Cols))
	}
	j := p.kpJobFor()
	j.quantize(x, n, w.Cols)
	j.add(out, w.Rows, w)
	p.runKP(j, n*w.Rows*w.Cols)
}

// matMulKStacked is MatMul for a Stacked matrix whose parts are all packed
// K formats (isKPacked): one quantization, one job over every part.
func (p *Pool) matMulKStacked(out, x []float32, n int, w *Mat) {
	if w.Cols%256 != 0 {
		panic(fmt.Sprintf("tensor: MatMul: stacked K-format parts of %d columns (not whole super-blocks)", w.Cols))
	}
	j := p.kpJobFor()
	j.quantize(x, n, w.Cols)
	r0 := 0
	for k := range w.Parts {
		pt := &w.Parts[k]
		if r0+pt.Rows > w.Rows {
			break // reported below
		}
		j.add(out[r0:], w.Rows, pt)
		r0 += pt.Rows
	}
	if r0 != w.Rows || len(w.Parts) != len(j.parts) {
		panic(fmt.Sprintf("tensor: MatMul: stacked parts do not hold the %d rows of the matrix", w.Rows))
	}
	p.runKP(j, n*w.Rows*w.Cols)
}
