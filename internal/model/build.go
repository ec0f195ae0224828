package model

import (
	"encoding/binary"
	"fmt"
	"math"

	"govllm/internal/tensor"
)

// rawLayer is one layer's weights as read, before fusion.
type rawLayer struct {
	attnNorm, ffnNorm []float32
	wq, wk, wv, wo    tensor.Mat
	wGate, wUp, wDown tensor.Mat

	bqkv                      []float32 // q|k|v biases, nil when none
	qNorm, kNorm              []float32
	postAttnNorm, postFFNNorm []float32
	router                    tensor.Mat   // MoE router (then wGate, wUp, wDown are unused)
	exGate, exUp, exDown      []tensor.Mat // MoE experts
	shGate, shUp, shDown      tensor.Mat   // the shared expert
	shGateInp                 []float32    // its gate
	fusedQKV                  bool         // the file held one attn_qkv tensor
}

// rawModel is a model as read from a file, before fusion and checks.
type rawModel struct {
	cfg         Config
	embed       tensor.Mat
	output      *tensor.Mat // nil when tied
	norm        []float32
	layers      []rawLayer
	ropeFactors []float32
}

// maxRopeTable caps the precomputed RoPE positions, and maxRopeFloats the
// table's size; later positions are computed on the fly.
const (
	maxRopeTable  = 1 << 16
	maxRopeFloats = 1 << 22
)

// ropePositions is how many positions of c get a precomputed RoPE entry.
func ropePositions(c *Config) int {
	return min(c.MaxSeqLen, maxRopeTable, maxRopeFloats/max(c.HeadDim/2, 1))
}

// build checks shapes, fuses Q/K/V and gate/up, applies quantization and
// returns the Model. source names the origin in errors.
func build(source string, r *rawModel, quantize string) (*Model, error) {
	c := r.cfg
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("model: %s: %w", source, err)
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("model: %s: %w", source, fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, a...)))
	}
	shape := func(name string, m *tensor.Mat, rows, cols int) error {
		if m.Rows != rows || m.Cols != cols {
			return bad("%s is %d×%d, want %d×%d", name, m.Rows, m.Cols, rows, cols)
		}
		if m.Type == tensor.F32 && len(m.F32) != rows*cols {
			return bad("%s holds %d floats, want %d", name, len(m.F32), rows*cols)
		}
		if c := tensor.CodecOf(m.Type); c != nil {
			if err := c.Check(m.Q, rows, cols); err != nil {
				return bad("%s: %v", name, err)
			}
		}
		return nil
	}
	vec := func(name string, v []float32, n int) error {
		if len(v) != n {
			return bad("%s has %d values, want %d", name, len(v), n)
		}
		return nil
	}
	if len(r.layers) != c.NumLayers {
		return nil, bad("%d layers of weights, config says %d", len(r.layers), c.NumLayers)
	}
	if err := shape("token embeddings", &r.embed, c.VocabSize, c.Dim); err != nil {
		return nil, err
	}
	if err := vec("final norm", r.norm, c.Dim); err != nil {
		return nil, err
	}
	if r.output != nil {
		if err := shape("output", r.output, c.VocabSize, c.Dim); err != nil {
			return nil, err
		}
	}
	if r.ropeFactors != nil && len(r.ropeFactors) != c.RotaryDims()/2 {
		return nil, bad("rope frequency factors: %d values, want %d", len(r.ropeFactors), c.RotaryDims()/2)
	}
	m := &Model{Config: c, Embed: r.embed, Norm: r.norm, Layers: make([]Layer, c.NumLayers), ropeFactors: r.ropeFactors}
	fusedQKV := make([]bool, len(r.layers))
	for i := range r.layers {
		fusedQKV[i] = r.layers[i].fusedQKV
		if err := buildLayer(&m.Layers[i], &r.layers[i], &c, i, shape, vec); err != nil {
			return nil, err
		}
		r.layers[i] = rawLayer{} // let the unfused copies go
	}
	if r.output != nil {
		m.Output = *r.output
	} else {
		m.Output = m.Embed
	}
	mix, err := lookupMix(quantize)
	if err != nil {
		return nil, fmt.Errorf("model: %s: %w", source, err)
	}
	if mix != nil {
		for i := range m.Layers {
			mix.quantizeLayer(&m.Layers[i], i, &c, fusedQKV[i])
		}
		mix.quantizeHead(m, r.output == nil)
	}
	packWeights(m, r.output == nil)
	m.initRope()
	return m, nil
}

// initRope precomputes the RoPE tables: the global one and, when the
// local layers have their own base, theirs (without the global scaling,
// as Gemma 3's local layers in llama.cpp; the attention factor applies to
// every layer there).
func (m *Model) initRope() {
	c := m.Config
	m.rope = newRopeTable(&c, m.ropeFactors, ropePositions(&c))
	if t := c.RopeThetaLocal; t != 0 && t != c.RopeTheta {
		c.RopeTheta, c.RopeScaling, c.RopeLinear, c.RopeYaRN = t, nil, 0, nil
		m.ropeLocal = newRopeTable(&c, m.ropeFactors, ropePositions(&c))
	}
}

// buildLayer checks one layer's raw weights against c and fuses them into
// L: Wq|Wk|Wv, the q|k|v biases, and gate|up (of the layer, or of every
// expert).
func buildLayer(L *Layer, rl *rawLayer, c *Config, i int, shape func(string, *tensor.Mat, int, int) error, vec func(string, []float32, int) error) error {
	name := func(s string) string { return fmt.Sprintf("layer %d %s", i, s) }
	qd, kvd := c.QDim(), c.KVDim()
	opt := func(what string, v []float32, n int) error {
		if v == nil {
			return nil
		}
		return vec(name(what), v, n)
	}
	checks := []error{
		vec(name("attention norm"), rl.attnNorm, c.Dim),
		vec(name("ffn norm"), rl.ffnNorm, c.Dim),
		shape(name("wq"), &rl.wq, qd, c.Dim),
		shape(name("wk"), &rl.wk, kvd, c.Dim),
		shape(name("wv"), &rl.wv, kvd, c.Dim),
		shape(name("wo"), &rl.wo, c.Dim, qd),
		opt("q|k|v bias", rl.bqkv, qd+2*kvd),
		opt("q norm", rl.qNorm, c.HeadDim),
		opt("k norm", rl.kNorm, c.HeadDim),
		opt("post-attention norm", rl.postAttnNorm, c.Dim),
		opt("post-ffn norm", rl.postFFNNorm, c.Dim),
	}
	if (rl.qNorm == nil) != (rl.kNorm == nil) {
		checks = append(checks, fmt.Errorf("model: %w: %s", ErrConfig, name("has only one of the q and k norms")))
	}
	if c.NumExperts == 0 {
		checks = append(checks,
			shape(name("gate (w1)"), &rl.wGate, c.HiddenDim, c.Dim),
			shape(name("up (w3)"), &rl.wUp, c.HiddenDim, c.Dim),
			shape(name("down (w2)"), &rl.wDown, c.Dim, c.HiddenDim))
	} else {
		checks = append(checks, shape(name("router"), &rl.router, c.NumExperts, c.Dim))
		if len(rl.exGate) != c.NumExperts || len(rl.exUp) != c.NumExperts || len(rl.exDown) != c.NumExperts {
			checks = append(checks, fmt.Errorf("model: %w: %s", ErrConfig, name(fmt.Sprintf("has %d/%d/%d experts, want %d", len(rl.exGate), len(rl.exUp), len(rl.exDown), c.NumExperts))))
		}
	}
	if err := firstErr(checks...); err != nil {
		return err
	}
	*L = Layer{
		AttnNorm: rl.attnNorm, FFNNorm: rl.ffnNorm,
		Wqkv: concatRows(rl.wq, rl.wk, rl.wv),
		Wo:   rl.wo,
		Bqkv: rl.bqkv, QNorm: rl.qNorm, KNorm: rl.kNorm,
		PostAttnNorm: rl.postAttnNorm, PostFFNNorm: rl.postFFNNorm,
	}
	if c.NumExperts == 0 {
		L.W13, L.W2 = concatRows(rl.wGate, rl.wUp), rl.wDown
		return nil
	}
	return buildExperts(L, rl, c, name, shape, vec)
}

// buildExperts checks and fuses a MoE layer's router, experts and shared
// expert.
func buildExperts(L *Layer, rl *rawLayer, c *Config, name func(string) string, shape func(string, *tensor.Mat, int, int) error, vec func(string, []float32, int) error) error {
	L.Router = toF32(rl.router)
	L.Experts = make([]Expert, c.NumExperts)
	for e := range L.Experts {
		en := func(s string) string { return name(fmt.Sprintf("expert %d %s", e, s)) }
		if err := firstErr(
			shape(en("gate"), &rl.exGate[e], c.HiddenDim, c.Dim),
			shape(en("up"), &rl.exUp[e], c.HiddenDim, c.Dim),
			shape(en("down"), &rl.exDown[e], c.Dim, c.HiddenDim),
		); err != nil {
			return err
		}
		L.Experts[e] = Expert{W13: concatRows(rl.exGate[e], rl.exUp[e]), W2: rl.exDown[e]}
	}
	if sd := c.SharedExpertDim; sd > 0 {
		if err := firstErr(
			vec(name("shared expert gate"), rl.shGateInp, c.Dim),
			shape(name("shared expert gate proj"), &rl.shGate, sd, c.Dim),
			shape(name("shared expert up"), &rl.shUp, sd, c.Dim),
			shape(name("shared expert down"), &rl.shDown, c.Dim, sd),
		); err != nil {
			return err
		}
		L.Shared, L.SharedGate = Expert{W13: concatRows(rl.shGate, rl.shUp), W2: rl.shDown}, rl.shGateInp
	}
	return nil
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// matrices lists the layer's weight matrices that go through MatMul (the
// router stays F32, as llama.cpp keeps it).
func (L *Layer) matrices() []*tensor.Mat {
	ms := []*tensor.Mat{&L.Wqkv, &L.Wo}
	if len(L.Experts) == 0 {
		return append(ms, &L.W13, &L.W2)
	}
	for e := range L.Experts {
		ms = append(ms, &L.Experts[e].W13, &L.Experts[e].W2)
	}
	if L.SharedGate != nil {
		ms = append(ms, &L.Shared.W13, &L.Shared.W2)
	}
	return ms
}

// packWeights repacks the matmul weights into the layouts of the fast
// kernels (tensor.PackQ4, tensor.PackQ8, tensor.PackF32). Embed keeps its
// rows or GGML blocks for row lookups; a tied head gets its own packed
// copy, unless the row lookups can read the packed head (Q8_0, Q6_K:
// tensor.RowReadable), which Embed then shares.
func packWeights(m *Model, tied bool) {
	tiedQ4 := tied && m.Output.Type == tensor.Q4_0
	packMatrices(m)
	switch {
	case tiedQ4 && m.Output.Type == tensor.Q8_0 && m.Output.P == nil:
		// PackQ4 expanded the tied head and PackQ8 left it in GGML blocks
		// (avx2): the row lookups read that exact expansion too, rather
		// than keep the Q4_0 blocks beside it.
		m.Embed = m.Output
	case tied && m.Output.P != nil && tensor.RowReadable(&m.Output):
		m.Embed = m.Output
	}
}

// packMatrices packs every matmul weight (packWeights).
func packMatrices(m *Model) {
	for i := range m.Layers {
		for _, w := range m.Layers[i].matrices() {
			packMat(w)
		}
	}
	if tied := len(m.Output.F32) > 0 && len(m.Embed.F32) > 0 && &m.Output.F32[0] == &m.Embed.F32[0]; tied {
		tensor.PackF32(&m.Output) // into new memory: Embed keeps its rows
	} else {
		packMat(&m.Output)
	}
}

// packMat packs one matmul weight (each part of a Stacked one) in place.
func packMat(w *tensor.Mat) {
	for i := range w.Parts {
		packMat(&w.Parts[i])
	}
	tensor.PackQ4(w)
	tensor.PackQ8(w)
	tensor.PackBlocks(w)
	tensor.PackF32InPlace(w)
}

// quantizeMat converts an F32 matrix whose rows are whole blocks of dt to
// dt with GGML's reference quantizer (dt F32, or rows that are not whole
// blocks, change nothing), in parallel over row chunks (the blocks are
// independent: the bytes do not depend on the number of CPUs).
func quantizeMat(w *tensor.Mat, dt tensor.DType) {
	c := tensor.CodecOf(dt)
	if w.Type != tensor.F32 || c == nil || w.Cols%c.BlockSize != 0 {
		return
	}
	rows, cols := w.Rows, w.Cols
	rb := c.RowBytes(cols)
	q, f := make([]byte, rows*rb), w.F32
	step := max(1, 1<<16/cols) // rows per job: about 64K values
	parallel((rows+step-1)/step, func(k int) {
		r0, r1 := k*step, min((k+1)*step, rows)
		c.Quantize(q[r0*rb:r1*rb], f[r0*cols:r1*cols])
	})
	*w = tensor.Mat{Rows: rows, Cols: cols, Type: dt, Q: q}
}

// toF32 returns m as an F32 matrix (dequantizing a block format).
func toF32(m tensor.Mat) tensor.Mat {
	if m.Type == tensor.F32 {
		return m
	}
	f := make([]float32, 0, m.Rows*m.Cols)
	if m.Type == tensor.Stacked {
		for _, p := range m.Parts {
			f = append(f, toF32(p).F32...)
		}
	} else {
		f = f[:m.Rows*m.Cols]
		tensor.CodecOf(m.Type).Dequantize(f, m.Q)
	}
	return tensor.Mat{Rows: m.Rows, Cols: m.Cols, Type: tensor.F32, F32: f}
}

// concatRows stacks matrices of equal Cols: matrices of one block format
// give that format; Q8_0 mixed with Q4_0 gives Q8_0 (the Q4_0 parts
// expanded exactly); other mixes of block formats give a Stacked matrix
// (each part keeps its format); a mix with F32 gives F32.
func concatRows(ms ...tensor.Mat) tensor.Mat {
	typ := ms[0].Type
	rows := 0
	for _, m := range ms {
		rows += m.Rows
		if m.Type == typ {
			continue
		}
		switch q80 := func(t tensor.DType) bool { return t == tensor.Q8_0 || t == tensor.Q4_0 }; {
		case typ == tensor.F32 || m.Type == tensor.F32:
			typ = tensor.F32
		case q80(typ) && q80(m.Type):
			typ = tensor.Q8_0
		default:
			typ = tensor.Stacked
		}
	}
	out := tensor.Mat{Rows: rows, Cols: ms[0].Cols, Type: typ}
	switch typ {
	case tensor.F32:
		out.F32 = make([]float32, 0, rows*out.Cols)
	case tensor.Stacked:
		out.Parts = ms
		return out
	default:
		out.Q = make([]byte, 0, rows*tensor.CodecOf(typ).RowBytes(out.Cols))
	}
	for _, m := range ms {
		switch {
		case typ == tensor.F32:
			out.F32 = append(out.F32, toF32(m).F32...)
		case m.Type != typ: // Q4_0 into Q8_0
			tensor.ExpandQ4(&m)
			out.Q = append(out.Q, m.Q...)
		default:
			out.Q = append(out.Q, m.Q...)
		}
	}
	return out
}

// f32Mat wraps float data as a rows×cols F32 matrix.
func f32Mat(rows, cols int, data []float32) tensor.Mat {
	return tensor.Mat{Rows: rows, Cols: cols, Type: tensor.F32, F32: data}
}

// decodeF32 converts little-endian float32 bytes.
func decodeF32(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// decodeF16 converts little-endian IEEE half bytes.
func decodeF16(b []byte) []float32 {
	out := make([]float32, len(b)/2)
	for i := range out {
		out[i] = tensor.F16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return out
}

// decodeBF16 converts little-endian bfloat16 bytes.
func decodeBF16(b []byte) []float32 {
	out := make([]float32, len(b)/2)
	for i := range out {
		out[i] = tensor.BF16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return out
}
