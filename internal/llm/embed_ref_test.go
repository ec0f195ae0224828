package llm

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"govllm/internal/testmodels"
)

// refModel is stories260K read straight from llama2.c's checkpoint
// (stories260K.bin), for a forward pass written from run.c's, in float64:
// an independent computation of the final hidden states, sharing no code
// with internal/model (which serves the GGUF conversion of the same
// weights).
type refModel struct {
	dim, hidden, layers, heads, kvHeads, vocab, seqLen int
	emb                                                []float64
	rmsAtt, wq, wk, wv, wo, rmsFFN, w1, w2, w3         [][]float64 // per layer
	rmsFinal                                           []float64
}

func loadRefModel(t *testing.T) *refModel {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testmodels.Dir(t, "stories260K"), "stories260K.bin"))
	if err != nil {
		t.Fatal(err)
	}
	h := make([]int, 7)
	for i := range h {
		h[i] = int(int32(binary.LittleEndian.Uint32(b[4*i:])))
	}
	m := &refModel{dim: h[0], hidden: h[1], layers: h[2], heads: h[3], kvHeads: h[4], vocab: abs(h[5]), seqLen: h[6]}
	off := 28
	take := func(n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[off+4*i:])))
		}
		off += 4 * n
		return out
	}
	perLayer := func(n int) [][]float64 {
		out := make([][]float64, m.layers)
		for l := range out {
			out[l] = take(n)
		}
		return out
	}
	hs := m.dim / m.heads
	kvDim := m.kvHeads * hs
	m.emb = take(m.vocab * m.dim)
	m.rmsAtt = perLayer(m.dim)
	m.wq, m.wk, m.wv, m.wo = perLayer(m.dim*m.dim), perLayer(kvDim*m.dim), perLayer(kvDim*m.dim), perLayer(m.dim*m.dim)
	m.rmsFFN = perLayer(m.dim)
	m.w1, m.w2, m.w3 = perLayer(m.hidden*m.dim), perLayer(m.dim*m.hidden), perLayer(m.hidden*m.dim)
	m.rmsFinal = take(m.dim)
	return m
}

func abs(x int) int { return max(x, -x) }

func rmsnorm(x, w []float64) []float64 {
	ss := 0.0
	for _, v := range x {
		ss += v * v
	}
	s := 1 / math.Sqrt(ss/float64(len(x))+1e-5)
	out := make([]float64, len(x))
	for i := range x {
		out[i] = w[i] * s * x[i]
	}
	return out
}

// matvec is W (rows × len(x), row-major) · x.
func matvec(w, x []float64) []float64 {
	out := make([]float64, len(w)/len(x))
	for r := range out {
		for c, v := range x {
			out[r] += w[r*len(x)+c] * v
		}
	}
	return out
}

// rope rotates adjacent pairs of vec at pos as run.c does.
func rope(vec []float64, pos, headSize int) {
	for i := 0; i < len(vec); i += 2 {
		freq := 1 / math.Pow(10000, float64(i%headSize)/float64(headSize))
		c, s := math.Cos(float64(pos)*freq), math.Sin(float64(pos)*freq)
		v0, v1 := vec[i], vec[i+1]
		vec[i], vec[i+1] = v0*c-v1*s, v0*s+v1*c
	}
}

// hiddenStates returns the final hidden state (after the final RMSNorm) of
// every position of toks.
func (m *refModel) hiddenStates(toks []int32) [][]float64 {
	hs := m.dim / m.heads
	keys, vals := make([][][]float64, m.layers), make([][][]float64, m.layers)
	var out [][]float64
	for pos, tok := range toks {
		x := append([]float64(nil), m.emb[int(tok)*m.dim:(int(tok)+1)*m.dim]...)
		for l := range m.layers {
			xb := rmsnorm(x, m.rmsAtt[l])
			q, k, v := matvec(m.wq[l], xb), matvec(m.wk[l], xb), matvec(m.wv[l], xb)
			rope(q, pos, hs)
			rope(k, pos, hs)
			keys[l], vals[l] = append(keys[l], k), append(vals[l], v)
			att := m.attend(q, keys[l], vals[l])
			for i, o := range matvec(m.wo[l], att) {
				x[i] += o
			}
			xb = rmsnorm(x, m.rmsFFN[l])
			h1, h3 := matvec(m.w1[l], xb), matvec(m.w3[l], xb)
			for i := range h1 {
				h1[i] = h1[i] / (1 + math.Exp(-h1[i])) * h3[i]
			}
			for i, o := range matvec(m.w2[l], h1) {
				x[i] += o
			}
		}
		out = append(out, rmsnorm(x, m.rmsFinal))
	}
	return out
}

// attend is causal multi-head attention of one query over the keys and
// values so far (grouped-query: kv head h/(heads/kvHeads)).
func (m *refModel) attend(q []float64, keys, vals [][]float64) []float64 {
	hs := m.dim / m.heads
	out := make([]float64, m.dim)
	for h := range m.heads {
		kh := h / (m.heads / m.kvHeads)
		scores := make([]float64, len(keys))
		mx := math.Inf(-1)
		for t, k := range keys {
			for i := range hs {
				scores[t] += q[h*hs+i] * k[kh*hs+i]
			}
			scores[t] /= math.Sqrt(float64(hs))
			mx = max(mx, scores[t])
		}
		sum := 0.0
		for t := range scores {
			scores[t] = math.Exp(scores[t] - mx)
			sum += scores[t]
		}
		for t, v := range vals {
			for i := range hs {
				out[h*hs+i] += scores[t] / sum * v[kh*hs+i]
			}
		}
	}
	return out
}

// refPool pools hidden states as vLLM's poolers do: LAST, MEAN or CLS,
// then L2-normalized when normalize.
func refPool(hidden [][]float64, typ string, normalize bool) []float64 {
	dim := len(hidden[0])
	v := make([]float64, dim)
	switch typ {
	case "LAST":
		copy(v, hidden[len(hidden)-1])
	case "CLS":
		copy(v, hidden[0])
	case "MEAN":
		for _, h := range hidden {
			for i := range v {
				v[i] += h[i] / float64(len(hidden))
			}
		}
	}
	if normalize {
		n := 0.0
		for _, x := range v {
			n += x * x
		}
		for i := range v {
			v[i] /= math.Sqrt(n)
		}
	}
	return v
}
