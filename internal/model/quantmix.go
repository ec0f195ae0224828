package model

import (
	"fmt"
	"slices"
	"strings"

	"govllm/internal/tensor"
)

// --quantization: the file types of llama.cpp's llama-quantize, applied to
// the F32 matrices of a model at load (an F32/F16 file, or the dummy
// model). Each name has a base format and llama.cpp's per-tensor choices
// (src/llama-quant.cpp, llama_tensor_get_type_impl, without an importance
// matrix), implemented in mixType:
//
//   - output (and tied token embeddings): Q6_K, or Q8_0 for q8_0 and when
//     the rows are not whole blocks of the base format;
//   - attn_v (and a file's fused attn_qkv): q2_k Q3_K (Q4_K from 4 query
//     heads per KV head); q3_k_m Q5_K in the first two layers, then Q4_K;
//     iq4_nl, iq4_xs Q5_K from 4 query heads per KV head; q4_k_m, q5_k_m
//     Q6_K in the layers of use_more_bits (the first and last eighth, and
//     every third in between); Q8_0 with 8 experts;
//   - attn_k: Q8_0 with 8 experts;
//   - ffn_down (each expert's, and the shared expert's): q2_k Q3_K; q3_k_m
//     Q5_K in the first sixteenth of the layers, then Q4_K; q4_k_m, q5_k_m
//     Q6_K in the layers of use_more_bits; iq4_nl, iq4_xs Q5_K in the
//     first eighth;
//   - attn_output: q2_k Q3_K, q3_k_m Q4_K; with 8 experts Q5_K for q2_k,
//     q3_k_m, q4_k_m, iq4_nl and iq4_xs;
//   - every other matrix (attn_q, attn_k, ffn_gate, ffn_up, untied token
//     embeddings): the base format;
//   - then llama.cpp's fallback for rows that are not whole blocks: Q2_K,
//     Q3_K → Q4_0, Q4_K → Q5_0, Q5_K → Q5_1, Q6_K → Q8_0, IQ4_XS → IQ4_NL
//     (and F32, where llama.cpp writes F16, if those do not fit either).
//
// Not implemented: the 70B-type rule (attn_v Q3_K/Q4_K → Q5_K on models
// llama.cpp classifies as 70B) and Falcon's rules. The routers and norms
// stay F32, as llama.cpp leaves them. q8_0 and q4_0 keep govllm's earlier
// meaning: every matmul weight in that format, the token embeddings as
// they are (F32 rows).
type quantMix struct {
	name string
	base tensor.DType
	pure bool // q8_0, q4_0
}

var quantMixes = []quantMix{
	{"q8_0", tensor.Q8_0, true}, {"q4_0", tensor.Q4_0, true},
	{"q4_k_m", tensor.Q4_K, false}, {"q5_k_m", tensor.Q5_K, false}, {"q6_k", tensor.Q6_K, false},
	{"q3_k_m", tensor.Q3_K, false}, {"q2_k", tensor.Q2_K, false},
	{"q4_1", tensor.Q4_1, false}, {"q5_0", tensor.Q5_0, false}, {"q5_1", tensor.Q5_1, false},
	{"iq4_nl", tensor.IQ4_NL, false}, {"iq4_xs", tensor.IQ4_XS, false},
}

// QuantizationNames lists the --quantization values (LoadOptions.Quantize).
func QuantizationNames() []string {
	names := make([]string, len(quantMixes))
	for i, q := range quantMixes {
		names[i] = q.name
	}
	return names
}

// lookupMix returns the named mix; "" and "none" give nil (no
// quantization).
func lookupMix(name string) (*quantMix, error) {
	if name == "" || name == "none" {
		return nil, nil
	}
	for i := range quantMixes {
		if quantMixes[i].name == name {
			return &quantMixes[i], nil
		}
	}
	return nil, fmt.Errorf("%w: unsupported quantization %q (want one of %s)", ErrConfig, name, strings.Join(QuantizationNames(), ", "))
}

// CheckQuantization returns an error naming the accepted values unless
// name is one of them, "" or "none".
func CheckQuantization(name string) error {
	_, err := lookupMix(name)
	return err
}

// role is a matrix's category in llama.cpp's quantization rules.
type role int

const (
	roleOther role = iota
	roleEmbed
	roleOutput
	roleAttnQ
	roleAttnK
	roleAttnV   // also a file's fused attn_qkv
	roleAttnOut // attn_output
	roleFFNDown
)

// useMoreBits is llama.cpp's use_more_bits.
func useMoreBits(i, n int) bool {
	return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
}

// mixType is the format of a matrix of role r in layer i (of
// c.NumLayers) with cols columns.
func (q *quantMix) mixType(r role, i int, c *Config, cols int) tensor.DType {
	if q.pure {
		return q.base
	}
	t := q.ruleType(r, i, c)
	if r == roleOutput && cols%tensor.CodecOf(q.base).BlockSize != 0 {
		t = tensor.Q8_0
	}
	return fallbackType(t, cols)
}

// ruleType is llama_tensor_get_type_impl for the mixes govllm offers.
func (q *quantMix) ruleType(r role, i int, c *Config) tensor.DType {
	n, gqa4, moe8 := c.NumLayers, c.NumHeads >= 4*c.NumKVHeads, c.NumExperts == 8
	is := func(names ...string) bool { return slices.Contains(names, q.name) }
	switch r {
	case roleOutput:
		return tensor.Q6_K
	case roleAttnV:
		t := q.base
		switch {
		case is("q2_k") && gqa4:
			t = tensor.Q4_K
		case is("q2_k"):
			t = tensor.Q3_K
		case is("q3_k_m") && i < 2:
			t = tensor.Q5_K
		case is("q3_k_m"):
			t = tensor.Q4_K
		case is("iq4_nl", "iq4_xs") && gqa4:
			t = tensor.Q5_K
		case is("q4_k_m", "q5_k_m") && useMoreBits(i, n):
			t = tensor.Q6_K
		}
		if moe8 {
			t = tensor.Q8_0
		}
		return t
	case roleAttnK:
		if moe8 {
			return tensor.Q8_0
		}
	case roleFFNDown:
		switch {
		case is("q2_k"):
			return tensor.Q3_K
		case is("q3_k_m") && i < n/16:
			return tensor.Q5_K
		case is("q3_k_m"):
			return tensor.Q4_K
		case is("q4_k_m", "q5_k_m") && useMoreBits(i, n):
			return tensor.Q6_K
		case is("iq4_nl", "iq4_xs") && i < n/8:
			return tensor.Q5_K
		}
	case roleAttnOut:
		switch {
		case moe8 && is("q2_k", "q3_k_m", "q4_k_m", "iq4_nl", "iq4_xs"):
			return tensor.Q5_K
		case moe8:
		case is("q2_k"):
			return tensor.Q3_K
		case is("q3_k_m"):
			return tensor.Q4_K
		}
	}
	return q.base
}

// fallbackType is llama.cpp's tensor_type_fallback: a format whose blocks
// do not divide cols gives way to one of 32 (F32 if that does not fit
// either).
func fallbackType(t tensor.DType, cols int) tensor.DType {
	if cols%tensor.CodecOf(t).BlockSize == 0 {
		return t
	}
	switch t {
	case tensor.Q2_K, tensor.Q3_K:
		t = tensor.Q4_0
	case tensor.Q4_K:
		t = tensor.Q5_0
	case tensor.Q5_K:
		t = tensor.Q5_1
	case tensor.Q6_K:
		t = tensor.Q8_0
	case tensor.IQ4_XS:
		t = tensor.IQ4_NL
	}
	if cols%tensor.CodecOf(t).BlockSize != 0 {
		return tensor.F32
	}
	return t
}

// part is a block of rows of a fused matrix and its role.
type part struct {
	rows int
	role role
}

// quantizeParts converts an F32 matrix made of parts (q|k|v rows, gate|up
// rows) to the mix's format of each part: one format, or a Stacked matrix
// when the parts' formats differ. Other matrices, and a matrix given no
// parts, stay as they are.
func (q *quantMix) quantizeParts(w *tensor.Mat, i int, c *Config, parts ...part) {
	if q == nil || w.Type != tensor.F32 || len(parts) == 0 {
		return
	}
	ms := make([]tensor.Mat, 0, len(parts))
	r0 := 0
	for _, p := range parts {
		m := tensor.Mat{Rows: p.rows, Cols: w.Cols, Type: tensor.F32, F32: w.F32[r0*w.Cols : (r0+p.rows)*w.Cols]}
		quantizeMat(&m, q.mixType(p.role, i, c, w.Cols))
		ms = append(ms, m)
		r0 += p.rows
	}
	if len(ms) == 1 {
		*w = ms[0]
		return
	}
	*w = concatRows(ms...)
}

// quantizeLayer converts the layer's F32 matmul weights per the mix;
// fusedQKV says the file held one attn_qkv tensor (one role for all).
func (q *quantMix) quantizeLayer(L *Layer, i int, c *Config, fusedQKV bool) {
	qd, kvd := c.QDim(), c.KVDim()
	if fusedQKV {
		q.quantizeParts(&L.Wqkv, i, c, part{qd + 2*kvd, roleAttnV})
	} else {
		q.quantizeParts(&L.Wqkv, i, c, part{qd, roleAttnQ}, part{kvd, roleAttnK}, part{kvd, roleAttnV})
	}
	q.quantizeParts(&L.Wo, i, c, part{L.Wo.Rows, roleAttnOut})
	ffn := func(e *Expert) {
		q.quantizeParts(&e.W13, i, c, part{e.W13.Rows, roleOther})
		q.quantizeParts(&e.W2, i, c, part{e.W2.Rows, roleFFNDown})
	}
	if len(L.Experts) == 0 {
		e := Expert{W13: L.W13, W2: L.W2}
		ffn(&e)
		L.W13, L.W2 = e.W13, e.W2
		return
	}
	for e := range L.Experts {
		ffn(&L.Experts[e])
	}
	if L.SharedGate != nil {
		ffn(&L.Shared)
	}
}

// quantizeHead converts the token embeddings and the output matrix per the
// mix: tied, the embeddings take the output's format and the head shares
// them (as in a llama-quantize file); the pure mixes quantize the head
// only (a tied head its own copy) and keep the embeddings.
func (q *quantMix) quantizeHead(m *Model, tied bool) {
	c := &m.Config
	if q.pure {
		quantizeMat(&m.Output, q.base)
		return
	}
	if tied {
		q.quantizeParts(&m.Embed, 0, c, part{m.Embed.Rows, roleOutput})
		m.Output = m.Embed
		return
	}
	q.quantizeParts(&m.Embed, 0, c, part{m.Embed.Rows, roleEmbed})
	q.quantizeParts(&m.Output, 0, c, part{m.Output.Rows, roleOutput})
}
