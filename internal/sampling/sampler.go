package sampling

import (
	"math"
	"slices"
)

// samplingEps is vLLM's _SAMPLING_EPS: a temperature below it means greedy.
const samplingEps = 1e-5

// Sampler turns one row of logits into a token (vLLM's Sampler for one
// request). It holds scratch buffers sized to the vocabulary and reuses them,
// so sampling allocates nothing in steady state (only the returned *Logprobs
// when a request asks for logprobs). A Sampler is not safe for concurrent
// use; the zero value is ready to use.
type Sampler struct {
	raw   []float32 // copy of the raw logits, when logprobs are requested
	w     []float32 // unnormalised probabilities of the unfiltered path
	cands []cand    // candidates of the filtered path
	bnd   []cand    // top_p boundary bucket
	hist  [histBuckets]float64
	count []int32  // output token counts; all zero between calls
	seen  []uint32 // repetition-penalty stamps; seen[t] == gen marks t done
	gen   uint32
	touch []int32   // ids with count[t] != 0 during a call
	keep  []float32 // the logits of AllowedTokenIDs while the rest is masked
}

// cand is one candidate token: its id, its temperature-scaled logit shifted
// so the maximum is 0, and exp of that.
type cand struct {
	id int32
	z  float32
	w  float32
}

// before is the candidate order: higher logit first, ties to the lower id.
// It is a strict total order, so every selection and sort is deterministic.
func before(a, b *cand) bool {
	return a.z > b.z || (a.z == b.z && a.id < b.id)
}

func candCmp(a, b cand) int {
	switch {
	case before(&a, &b):
		return -1
	case before(&b, &a):
		return 1
	}
	return 0
}

// Sample picks the next token of one sequence from logits, the model's
// scores over the vocabulary for the position after the last token.
//
// p holds the request's parameters; prompt and output are its prompt and
// generated tokens so far (they feed the penalties and min_tokens); eos is
// the model's end-of-sequence id (-1 when none), masked together with
// p.StopTokenIDs while len(output) < p.MinTokens unless p.IgnoreEOS. rng
// supplies the one uniform number a random draw consumes (greedy requests do
// not touch it): pass SeededRNG(*p.Seed, len(output)) for a seeded request,
// or a long-lived generator otherwise.
//
// Sample overwrites logits (penalties, masking). It returns the token and,
// when p.Logprobs is non-nil, the logprobs of the position (see Logprobs and
// the package documentation for their definition).
func (s *Sampler) Sample(logits []float32, p *Params, prompt, output []int32, eos int32, rng *RNG) (int32, *Logprobs) {
	var raw []float32
	if p.Logprobs != nil {
		s.raw = grow(s.raw, len(logits))
		raw = s.raw[:len(logits)]
		copy(raw, logits)
	}
	s.constrain(logits, p, output)
	s.applyPenalties(logits, p, prompt, output)
	if len(output) < p.MinTokens {
		maskStops(logits, p, eos)
	}
	var tok int32
	if p.Temperature < samplingEps {
		tok = Argmax(logits)
	} else {
		tok = s.sampleRandom(logits, p, rng)
	}
	if raw == nil {
		return tok, nil
	}
	return tok, s.computeLogprobs(raw, tok, *p.Logprobs)
}

// Argmax returns the index of the largest value, the lowest index among
// ties; NaN never wins. It returns 0 when nothing is larger than -Inf.
func Argmax(x []float32) int32 {
	// The maximum first (vectorised where the platform allows), then its
	// first index: the same answer as one pass keeping the first strict
	// improvement, since == equates ±0 as > does.
	m := maxOf(x)
	if !(m > float32(math.Inf(-1))) {
		return 0
	}
	for i, v := range x {
		if v == m {
			return int32(i)
		}
	}
	return 0
}

// applyPenalties applies, in vLLM's order, the repetition penalty over the
// distinct tokens of prompt and output (positive logits divided by it,
// others multiplied), then the frequency penalty (times the token's count in
// output) and the presence penalty (once per token present in output).
func (s *Sampler) applyPenalties(logits []float32, p *Params, prompt, output []int32) {
	v := int32(len(logits))
	if rp := p.RepetitionPenalty; rp != 1 && rp > 0 {
		s.seen = grow(s.seen, len(logits))
		s.gen++
		if s.gen == 0 { // wrapped: old stamps could collide
			clear(s.seen)
			s.gen = 1
		}
		for _, ids := range [2][]int32{prompt, output} {
			for _, t := range ids {
				if t < 0 || t >= v || s.seen[t] == s.gen {
					continue
				}
				s.seen[t] = s.gen
				if l := logits[t]; l > 0 {
					logits[t] = l / rp
				} else {
					logits[t] = l * rp
				}
			}
		}
	}
	fp, pp := p.FrequencyPenalty, p.PresencePenalty
	if fp == 0 && pp == 0 {
		return
	}
	s.count = grow(s.count, len(logits))
	for _, t := range output {
		if t < 0 || t >= v {
			continue
		}
		if s.count[t] == 0 {
			s.touch = append(s.touch, t)
		}
		s.count[t]++
	}
	for _, t := range s.touch {
		logits[t] -= fp * float32(s.count[t])
		logits[t] -= pp
		s.count[t] = 0
	}
	s.touch = s.touch[:0]
}

// constrain applies, in vLLM v1's order, allowed_token_ids (every other
// token masked), bad_words (a word's last token masked when the output
// ends with its other tokens) and logit_bias (added). Ids outside the
// vocabulary are skipped (the front end refuses them).
func (s *Sampler) constrain(logits []float32, p *Params, output []int32) {
	ninf := float32(math.Inf(-1))
	v := int32(len(logits))
	if len(p.AllowedTokenIDs) > 0 {
		s.keep = grow(s.keep, len(p.AllowedTokenIDs))
		keep := s.keep[:len(p.AllowedTokenIDs)]
		for i, t := range p.AllowedTokenIDs {
			keep[i] = ninf
			if t >= 0 && t < v {
				keep[i] = logits[t]
			}
		}
		for i := range logits {
			logits[i] = ninf
		}
		for i, t := range p.AllowedTokenIDs {
			if t >= 0 && t < v {
				logits[t] = keep[i]
			}
		}
	}
	for _, w := range p.BadWordsTokenIDs {
		last := len(w) - 1
		if last < 0 || last > len(output) || w[last] < 0 || w[last] >= v {
			continue
		}
		if slices.Equal(w[:last], output[len(output)-last:]) {
			logits[w[last]] = ninf
		}
	}
	for t, b := range p.LogitBias {
		if t >= 0 && t < v {
			logits[t] += b
		}
	}
}

// maskStops sets the logits of the stop token ids, and of eos unless the
// request ignores it, to -Inf (vLLM's min_tokens logits processor).
func maskStops(logits []float32, p *Params, eos int32) {
	ninf := float32(math.Inf(-1))
	v := int32(len(logits))
	for _, t := range p.StopTokenIDs {
		if t >= 0 && t < v {
			logits[t] = ninf
		}
	}
	if eos >= 0 && eos < v && !p.IgnoreEOS {
		logits[eos] = ninf
	}
}

// sampleRandom draws from softmax(logits/T) restricted, in vLLM v1's order,
// by min_p, then top_k, then top_p (each renormalising what it keeps).
func (s *Sampler) sampleRandom(logits []float32, p *Params, rng *RNG) int32 {
	m := maxOf(logits)
	if math.IsInf(float64(m), -1) {
		return 0 // everything masked
	}
	if _, _, filtered := filters(p, len(logits)); !filtered {
		// Unfiltered: one pass of exp, then an inverse-CDF draw in id order.
		s.w = grow(s.w, len(logits))
		w := s.w[:len(logits)]
		total := expShift(w, logits, m, 1/p.Temperature, float32(math.Inf(-1)))
		u := rng.Float64() * total
		var acc float64
		last := int32(0)
		for i, e := range w {
			if e == 0 {
				continue
			}
			acc += float64(e)
			last = int32(i)
			if u < acc {
				return last
			}
		}
		return last
	}
	c, total := s.filter(logits, m, p)
	u := rng.Float64() * total
	var acc float64
	for i := range c {
		acc += float64(c[i].w)
		if u < acc {
			return c[i].id
		}
	}
	return c[len(c)-1].id
}

// filters normalises the filter parameters for a vocabulary of n tokens:
// topK 0 and topP 1 mean off; filtered reports whether any filter is on.
func filters(p *Params, n int) (topK int, topP float32, filtered bool) {
	topK, topP = p.TopK, p.TopP
	if topK <= 0 || topK >= n {
		topK = 0
	}
	if topP <= 0 || topP >= 1 {
		topP = 1
	}
	return topK, topP, p.MinP > 0 || topK > 0 || topP < 1
}

// filter returns the candidates that survive min_p, top_k and top_p, with
// their weights exp((l-m)/T) and the total weight; m is the maximum logit.
// The result aliases the Sampler's scratch; its order is deterministic but
// unspecified.
func (s *Sampler) filter(logits []float32, m float32, p *Params) ([]cand, float64) {
	topK, topP, _ := filters(p, len(logits))
	invT := 1 / p.Temperature
	// min_p keeps z ≥ log(min_p), i.e. prob ≥ min_p·max prob.
	cut := float32(math.Inf(-1))
	if p.MinP > 0 {
		cut = float32(math.Log(float64(p.MinP)))
	}
	s.cands = grow(s.cands, len(logits))
	if topK == 0 && topP < 1 {
		return s.nucleusFull(logits, m, invT, cut, float64(topP))
	}
	var c []cand
	if topK > 0 {
		c = topKHeap(s.cands[:0:topK], logits, m, invT, cut)
	} else {
		c = s.cands[:0]
		for i, l := range logits {
			if z := (l - m) * invT; z >= cut && z > minZ {
				c = append(c, cand{id: int32(i), z: z})
			}
		}
	}
	var total float64
	for i := range c {
		c[i].w = expf(c[i].z)
		total += float64(c[i].w)
	}
	if topP < 1 {
		c = c[:nucleus(c, 0, float64(topP)*total)]
		total = 0
		for i := range c {
			total += float64(c[i].w)
		}
	}
	return c, total
}

// nucleusFull is top_p (after min_p) over the whole vocabulary without a
// full sort. One pass computes every weight and the total Z. A second pass
// adds each weight to a histogram keyed by the float bits of |z| (16
// buckets per octave; bucket order is candidate order up to ties inside a
// bucket), which locates the bucket where the running mass reaches
// topP·Z: the buckets before it are kept whole, unsorted, and only the
// boundary bucket goes through the selection.
func (s *Sampler) nucleusFull(logits []float32, m, invT, cut float32, topP float64) ([]cand, float64) {
	n := len(logits)
	s.w = grow(s.w, n)
	w := s.w[:n]
	total := expShift(w, logits, m, invT, cut)
	target := topP * total
	hist := &s.hist
	clear(hist[:])
	for i, e := range w {
		if e > 0 {
			hist[zKey((logits[i]-m)*invT)] += float64(e)
		}
	}
	var acc float64 // mass of the buckets before kb
	kb := -1
	for k := range hist {
		if acc+hist[k] >= target {
			kb = k
			break
		}
		acc += hist[k]
	}
	c := s.cands[:0]
	if kb < 0 { // rounding left the target out of reach: select among all
		for i, e := range w {
			if e > 0 {
				c = append(c, cand{id: int32(i), z: (logits[i] - m) * invT, w: e})
			}
		}
		c = c[:nucleus(c, 0, target)]
		return c, sumW(c)
	}
	bnd := s.bnd[:0]
	for i, e := range w {
		if e == 0 {
			continue
		}
		z := (logits[i] - m) * invT
		switch k := zKey(z); {
		case k < kb:
			c = append(c, cand{id: int32(i), z: z, w: e})
		case k == kb:
			bnd = append(bnd, cand{id: int32(i), z: z, w: e})
		}
	}
	s.bnd = bnd
	kept := len(c)
	c = append(c, bnd...)
	c = c[:kept+nucleus(c[kept:], acc, target)]
	return c, sumW(c)
}

// histBuckets covers zKey of every |z| up to 87.34 (below that, exp is 0).
const histBuckets = 2176

// zKey is the histogram bucket of z ≤ 0: the top bits of |z| (sign
// dropped, so -0 and +0 agree), 16 buckets per octave; larger z, smaller key.
func zKey(z float32) int {
	return min(int(math.Float32bits(z)&^(1<<31)>>19), histBuckets-1)
}

func sumW(c []cand) float64 {
	var t float64
	for i := range c {
		t += float64(c[i].w)
	}
	return t
}

// minZ excludes masked (-Inf) logits; anything this far below the maximum
// has weight 0 anyway.
const minZ = -1e30

// topKHeap returns the first cap(h) candidates in candidate order among the
// logits whose z = (l-m)·invT is ≥ cut, unordered. h is a heap whose root is
// its last candidate in candidate order, so most logits are rejected by one
// comparison with the root.
func topKHeap(h []cand, logits []float32, m, invT, cut float32) []cand {
	k := cap(h)
	rootZ := float32(math.Inf(-1))
	for i, l := range logits {
		z := (l - m) * invT
		if z < cut || z <= minZ {
			continue
		}
		if len(h) < k {
			h = append(h, cand{id: int32(i), z: z})
			for j := len(h) - 1; j > 0; { // sift up: parents are later in order
				parent := (j - 1) / 2
				if !before(&h[parent], &h[j]) {
					break
				}
				h[parent], h[j] = h[j], h[parent]
				j = parent
			}
			if len(h) == k {
				rootZ = h[0].z
			}
			continue
		}
		// Ids increase along the scan, so an equal z loses the tie.
		if z <= rootZ {
			continue
		}
		h[0] = cand{id: int32(i), z: z}
		for j := 0; ; { // sift down
			worst, l, r := j, 2*j+1, 2*j+2
			if l < k && before(&h[worst], &h[l]) {
				worst = l
			}
			if r < k && before(&h[worst], &h[r]) {
				worst = r
			}
			if worst == j {
				break
			}
			h[j], h[worst] = h[worst], h[j]
			j = worst
		}
		rootZ = h[0].z
	}
	return h
}

// nucleus reorders c so that c[:k] is the top_p nucleus and returns k: in
// candidate order, a candidate is kept while the weight before it (acc,
// the weight kept ahead of c, plus what precedes it in c) is below target
// (vLLM's rule), and at least one is kept. It selects by partitioning
// around pivots (expected linear time) and sorts only a small final range.
func nucleus(c []cand, acc, target float64) int {
	lo, hi := 0, len(c)
	// acc is the weight kept so far: ahead of c, plus c[:lo], all before c[lo:].
	for budget := 64; hi-lo > 32 && budget > 0; budget-- {
		pv := pivot(c, lo, hi)
		store := lo
		var upper float64
		for i := lo; i < hi-1; i++ {
			if before(&c[i], &pv) {
				upper += float64(c[i].w)
				c[i], c[store] = c[store], c[i]
				store++
			}
		}
		c[store], c[hi-1] = c[hi-1], c[store]
		if acc+upper >= target && store > 0 {
			hi = store // the pivot and what follows it are out
			continue
		}
		acc += upper + float64(c[store].w)
		lo = store + 1
		if acc >= target {
			return lo
		}
	}
	slices.SortFunc(c[lo:hi], candCmp)
	for j := lo; j < hi; j++ {
		if j > 0 && acc >= target {
			return j
		}
		acc += float64(c[j].w)
	}
	return hi
}

// pivot moves the median of c[lo], c[mid], c[hi-1] (in candidate order) to
// c[hi-1] and returns it.
func pivot(c []cand, lo, hi int) cand {
	mid := lo + (hi-lo)/2
	if before(&c[mid], &c[lo]) {
		c[mid], c[lo] = c[lo], c[mid]
	}
	if before(&c[hi-1], &c[lo]) {
		c[hi-1], c[lo] = c[lo], c[hi-1]
	}
	if before(&c[mid], &c[hi-1]) {
		c[mid], c[hi-1] = c[hi-1], c[mid]
	}
	return c[hi-1]
}

// expf returns e^x in float32 (Cephes expf: range reduction by ln 2 and a
// degree-6 polynomial, within 2 ulp), 0 below -87.3 and for -Inf. It is
// several times faster than math.Exp and the same on every platform.
func expf(x float32) float32 {
	if !(x >= -87.33654) { // also -Inf and NaN
		if x != x {
			return x
		}
		return 0
	}
	if x > 88 {
		return float32(math.Exp(float64(x)))
	}
	// Every product is rounded by an explicit conversion before it is
	// added, so that no compiler fuses a multiply-add (as on arm64 or with
	// GOAMD64=v3): the result is the same everywhere and equal to the
	// vector kernel's, which multiplies and adds separately.
	fx := float32(x*1.44269504088896341) + 0.5
	n := int32(fx)
	if float32(n) > fx {
		n-- // floor
	}
	fn := float32(n)
	x = x - float32(fn*0.693359375) - float32(fn*-2.12194440e-4)
	z := x * x
	y := float32(1.9875691500e-4*x) + 1.3981999507e-3
	y = float32(y*x) + 8.3334519073e-3
	y = float32(y*x) + 4.1665795894e-2
	y = float32(y*x) + 1.6666665459e-1
	y = float32(y*x) + 5.0000001201e-1
	y = float32(y*z) + x + 1
	return y * math.Float32frombits(uint32(n+127)<<23)
}

// Logprobs returns the logprobs of token tok at a position with the given
// raw logits (not changed), with the top n tokens: what Sample returns for
// a sampled token, used for prompt tokens (prompt logprobs).
func (s *Sampler) Logprobs(raw []float32, tok int32, n int) *Logprobs {
	return s.computeLogprobs(raw, tok, n)
}

// computeLogprobs returns the logprobs of a position from its raw logits:
// log_softmax over the whole vocabulary, the sampled token's value and rank,
// and the top n tokens (ties to the lower id).
func (s *Sampler) computeLogprobs(raw []float32, tok int32, n int) *Logprobs {
	m := maxOf(raw)
	s.w = grow(s.w, len(raw))
	sum := expShift(s.w[:len(raw)], raw, m, 1, float32(math.Inf(-1)))
	lse := float64(m) + math.Log(sum)
	lp := &Logprobs{Top: make([]TokenLogprob, 0, n)}
	st := raw[tok]
	lp.Sampled = TokenLogprob{Token: tok, Logprob: float32(float64(st) - lse)}
	// Rank as vLLM computes it: the number of tokens scoring ≥ the sampled one.
	for _, l := range raw {
		if l >= st {
			lp.Rank++
		}
	}
	if n == 0 {
		return lp
	}
	top := lp.Top[:0]
	if n > insertionTopMax {
		top = sortedTop(top, raw, min(n, len(raw)))
	} else {
		top = insertionTop(top, raw, n)
	}
	for i := range top {
		top[i].Logprob = float32(float64(top[i].Logprob) - lse)
	}
	lp.Top = top
	return lp
}

// insertionTopMax is the largest top-n kept by insertion (O(V·n)); a
// larger n (up to the whole vocabulary: logprobs -1) sorts (O(V log V)).
const insertionTopMax = 64

// insertionTop appends to top the n largest raw logits in descending
// order, ties to the lower id: insertion into the sorted best n so far.
func insertionTop(top []TokenLogprob, raw []float32, n int) []TokenLogprob {
	for i, l := range raw {
		if len(top) == n && !(l > top[n-1].Logprob) {
			continue // ties keep the lower id already held
		}
		j := len(top)
		if j < n {
			top = append(top, TokenLogprob{})
		} else {
			j = n - 1
		}
		for j > 0 && l > top[j-1].Logprob {
			top[j] = top[j-1]
			j--
		}
		top[j] = TokenLogprob{Token: int32(i), Logprob: l}
	}
	return top
}

// sortedTop is insertionTop by sorting every token: the same order (NaN
// last, as insertion never takes it ahead of a number).
func sortedTop(top []TokenLogprob, raw []float32, n int) []TokenLogprob {
	all := make([]TokenLogprob, len(raw))
	for i, l := range raw {
		all[i] = TokenLogprob{Token: int32(i), Logprob: l}
	}
	slices.SortStableFunc(all, func(a, b TokenLogprob) int {
		an, bn := a.Logprob != a.Logprob, b.Logprob != b.Logprob
		switch {
		case an || bn:
			return cmpBool(an, bn)
		case a.Logprob > b.Logprob:
			return -1
		case a.Logprob < b.Logprob:
			return 1
		}
		return 0
	})
	return append(top, all[:n]...)
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// maxOf returns the largest value of x (-Inf when empty or all -Inf; NaN
// is skipped). Which zero it returns when the largest value is ±0 may
// depend on the platform; every caller only subtracts it, where they agree.
func maxOf(x []float32) float32 {
	mv, i := maxVec(x)
	m0, m1 := mv, float32(math.Inf(-1))
	for ; i+1 < len(x); i += 2 {
		if x[i] > m0 {
			m0 = x[i]
		}
		if x[i+1] > m1 {
			m1 = x[i+1]
		}
	}
	if i < len(x) && x[i] > m0 {
		m0 = x[i]
	}
	if m1 > m0 {
		return m1
	}
	return m0
}

// expShift writes w[i] = exp((l[i]-m)·invT), or 0 where that exponent is
// below cut (or NaN, or -Inf), and returns Σw in float64. It is expf
// inlined for m ≥ every l (exponents ≤ 0): the hot loop of sampling. Where
// a vector kernel exists (expShiftVec) it computes the same bits sixteen
// lanes at a time; the sum is always taken in the same order (even and odd
// indices in two running sums), so the result does not depend on which
// code computed the weights.
func expShift(w, l []float32, m, invT, cut float32) float64 {
	w = w[:len(l)]
	for i := expShiftVec(w, l, m, invT, cut); i < len(l); i++ {
		x := (l[i] - m) * invT
		var e float32
		if x >= cut && x >= -87.33654 {
			fx := x*1.44269504088896341 + 0.5
			n := int32(fx)
			if float32(n) > fx {
				n--
			}
			fn := float32(n)
			x = x - fn*0.693359375 - fn*-2.12194440e-4
			z := x * x
			y := ((((1.9875691500e-4*x+1.3981999507e-3)*x+8.3334519073e-3)*x+4.1665795894e-2)*x+1.6666665459e-1)*x + 5.0000001201e-1
			y = y*z + x + 1
			e = y * math.Float32frombits(uint32(n+127)<<23)
		}
		w[i] = e
	}
	var t0, t1 float64
	i := 0
	for ; i+1 < len(w); i += 2 {
		t0 += float64(w[i])
		t1 += float64(w[i+1])
	}
	if i < len(w) {
		t0 += float64(w[i])
	}
	return t0 + t1
}

// grow returns b with length ≥ n, reallocating only when too short.
func grow[T any](b []T, n int) []T {
	if len(b) >= n {
		return b
	}
	return make([]T, n)
}
