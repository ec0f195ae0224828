package pooling

import "math"

// Acc pools one prompt's rows as its prefill chunks are computed. Rows
// come in token order; a chunk that starts at position 0 again (the
// request was preempted and is recomputed) starts over. It is owned by
// one engine request and used by one goroutine at a time.
type Acc struct {
	p     Params
	dim   int
	n     int       // rows seen
	sum   []float64 // MEAN: Σ rows, added one row at a time in token order
	pick  []float32 // LAST: the latest row; CLS: the first
	ready bool
}

// NewAcc returns an empty accumulator; the vectors' size comes with the
// first rows.
func NewAcc(p Params) *Acc { return &Acc{p: p} }

// Params returns the request's pooling.
func (a *Acc) Params() Params { return a.p }

// Add takes the hidden states (dim floats each) of the rows
// [start, start+len(rows)/dim) of the prompt. A chunk starting at 0 resets the accumulator. A chunk
// that does not continue where the last one ended may only follow a
// prefix-cache hit, which LAST pooling alone accepts.
func (a *Acc) Add(start int, rows []float32, dim int) {
	if start == 0 || a.dim != dim {
		a.reset()
		a.dim, a.sum = dim, nil
	}
	if dim <= 0 {
		return
	}
	k := len(rows) / a.dim
	if k == 0 {
		return
	}
	switch a.p.Type {
	case Last:
		a.pick = append(a.pick[:0], rows[(k-1)*a.dim:k*a.dim]...)
	case CLS:
		if start == 0 {
			a.pick = append(a.pick[:0], rows[:a.dim]...)
		}
	case Mean:
		if a.sum == nil {
			a.sum = make([]float64, a.dim)
		}
		for r := range k {
			for j, v := range rows[r*a.dim : (r+1)*a.dim] {
				a.sum[j] += float64(v)
			}
		}
	}
	a.n += k
	a.ready = true
}

func (a *Acc) reset() {
	a.n, a.ready = 0, false
	a.pick = a.pick[:0]
	clear(a.sum)
}

// Result returns the pooled vector (normalized when asked), a fresh
// slice; nil before any row.
func (a *Acc) Result() []float32 {
	if !a.ready {
		return nil
	}
	out := make([]float32, a.dim)
	switch a.p.Type {
	case Mean:
		for j, s := range a.sum {
			out[j] = float32(s / float64(a.n))
		}
	default:
		copy(out, a.pick)
	}
	if a.p.Normalize {
		Normalize(out)
	}
	return out
}

// normEps is torch.nn.functional.normalize's eps, which vLLM's pooler
// uses: v / max(‖v‖₂, eps).
const normEps = 1e-12

// Normalize scales v to unit L2 norm in place (the norm is summed in
// float64).
func Normalize(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	n := max(math.Sqrt(ss), normEps)
	for i, x := range v {
		v[i] = float32(float64(x) / n)
	}
}
