package model

import (
	"math"

	"govllm/internal/tensor"
)

// moeBuffers are the Workspace's mixture-of-experts activations.
type moeBuffers struct {
	cap    int
	probs  []float32 // n × NumExperts: router logits, then probabilities
	sel    []int32   // n × NumExpertsUsed: the chosen experts, best first
	weight []float32 // n × NumExpertsUsed: their renormalized weights
	idx    []int32   // rows of one expert's batch: index into sel
	x      []float32 // one expert's gathered input rows
	h13    []float32 // its gate|up outputs
	hb     []float32 // act(gate)·up
	out    []float32 // its down-projection outputs
	y      []float32 // n × NumExpertsUsed × Dim: each slot's weighted output
	sh13   []float32 // n × 2·SharedExpertDim: the shared expert's gate|up
	shb    []float32 // n × SharedExpertDim
}

// ensureMoE sizes the MoE buffers for n rows (nothing for a dense model).
func (ws *Workspace) ensureMoE(n int) {
	c := &ws.cfg
	b := &ws.moe
	if c.NumExperts == 0 || n <= b.cap {
		return
	}
	nk := n * c.NumExpertsUsed
	*b = moeBuffers{
		cap: n, probs: make([]float32, n*c.NumExperts), sel: make([]int32, nk), weight: make([]float32, nk),
		idx: make([]int32, nk), x: make([]float32, n*c.Dim), h13: make([]float32, n*2*c.HiddenDim),
		hb: make([]float32, n*c.HiddenDim), out: make([]float32, n*c.Dim), y: make([]float32, nk*c.Dim),
		sh13: make([]float32, n*2*c.SharedExpertDim), shb: make([]float32, n*c.SharedExpertDim),
	}
}

// moe computes ws.xo = Σ_k weight_k · expert_{sel_k}(ws.xb) for the n
// rows, as llama.cpp's build_moe_ffn with a softmax router: the router's
// probabilities over the experts, the NumExpertsUsed most probable (ties to
// the lower id), their probabilities renormalized to sum 1 (unless
// NoExpertRenorm); the weighted expert outputs summed best first; then the
// shared expert's output, if any, added. Only the routed experts run, each
// once on the batch of the rows routed to it; every row's result is
// computed on its own (MatMul rows are independent), so it does not depend
// on the batch.
func (m *Model) moe(ws *Workspace, pool *tensor.Pool, L *Layer, n int) {
	c := &m.Config
	ne, k, dim := c.NumExperts, c.NumExpertsUsed, c.Dim
	b := &ws.moe
	matMul(pool, b.probs[:n*ne], ws.xb[:n*dim], n, &L.Router)
	for i := 0; i < n; i++ {
		route(b.probs[i*ne:(i+1)*ne], b.sel[i*k:(i+1)*k], b.weight[i*k:(i+1)*k], !c.NoExpertRenorm)
	}
	m.routedExperts(ws, pool, L, n)
	for i := 0; i < n; i++ {
		xo := ws.xo[i*dim : (i+1)*dim]
		copy(xo, b.y[i*k*dim:(i*k+1)*dim])
		for s := 1; s < k; s++ {
			tensor.Axpy(xo, 1, b.y[(i*k+s)*dim:(i*k+s+1)*dim])
		}
	}
	if L.SharedGate != nil {
		m.sharedExpert(ws, pool, L, n)
	}
}

// routedExperts runs every expert on the rows routed to it and leaves each
// (row, slot)'s weighted output in ws.moe.y.
func (m *Model) routedExperts(ws *Workspace, pool *tensor.Pool, L *Layer, n int) {
	c := &m.Config
	k, dim, hid := c.NumExpertsUsed, c.Dim, c.HiddenDim
	b := &ws.moe
	for e := range L.Experts {
		cnt := 0
		for s, sel := range b.sel[:n*k] {
			if int(sel) == e {
				r := s / k
				copy(b.x[cnt*dim:(cnt+1)*dim], ws.xb[r*dim:(r+1)*dim])
				b.idx[cnt] = int32(s)
				cnt++
			}
		}
		if cnt == 0 {
			continue
		}
		ex := &L.Experts[e]
		matMul(pool, b.h13[:cnt*2*hid], b.x[:cnt*dim], cnt, &ex.W13)
		for r := 0; r < cnt; r++ {
			g, u := b.h13[r*2*hid:r*2*hid+hid], b.h13[r*2*hid+hid:(r+1)*2*hid]
			glu(c.Act, g, u)
			copy(b.hb[r*hid:(r+1)*hid], g)
		}
		matMul(pool, b.out[:cnt*dim], b.hb[:cnt*hid], cnt, &ex.W2)
		for r := 0; r < cnt; r++ {
			s := int(b.idx[r])
			y := b.y[s*dim : (s+1)*dim]
			copy(y, b.out[r*dim:(r+1)*dim])
			tensor.Scale(y, b.weight[s])
		}
	}
}

// sharedExpert adds sigmoid(SharedGate·x) · shared(x) to ws.xo for the n
// rows (Qwen2-MoE's shared expert, on every row).
func (m *Model) sharedExpert(ws *Workspace, pool *tensor.Pool, L *Layer, n int) {
	c := &m.Config
	dim, sd := c.Dim, c.SharedExpertDim
	b := &ws.moe
	xb := ws.xb[:n*dim]
	matMul(pool, b.sh13[:n*2*sd], xb, n, &L.Shared.W13)
	for r := 0; r < n; r++ {
		g := b.sh13[r*2*sd : r*2*sd+sd]
		glu(c.Act, g, b.sh13[r*2*sd+sd:(r+1)*2*sd])
		copy(b.shb[r*sd:(r+1)*sd], g)
	}
	matMul(pool, b.out[:n*dim], b.shb[:n*sd], n, &L.Shared.W2)
	for r := 0; r < n; r++ {
		gate := float32(1 / (1 + math.Exp(-float64(tensor.Dot(L.SharedGate, xb[r*dim:(r+1)*dim])))))
		tensor.Axpy(ws.xo[r*dim:(r+1)*dim], gate, b.out[r*dim:(r+1)*dim])
	}
}

// route turns one row's router logits p into probabilities (in place) and
// writes the len(sel) most probable experts, best first (ties to the lower
// id), with their probabilities, renormalized to sum 1 if renorm.
func route(p []float32, sel []int32, w []float32, renorm bool) {
	tensor.Softmax(p)
	var sum float32
	for k := range sel {
		best := -1
		for e, v := range p {
			if taken(sel[:k], e) {
				continue
			}
			if best < 0 || v > p[best] {
				best = e
			}
		}
		sel[k], w[k] = int32(best), p[best]
		sum += p[best]
	}
	for k := range w {
		if renorm {
			w[k] /= sum
		}
	}
}

func taken(sel []int32, e int) bool {
	for _, s := range sel {
		if int(s) == e {
			return true
		}
	}
	return false
}

// glu computes gate = act(gate)·up in place.
func glu(act Activation, gate, up []float32) {
	if act == ActGELUTanh {
		tensor.GeGLU(gate, up)
	} else {
		tensor.SwiGLU(gate, up)
	}
}
