package model

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"govllm/internal/gguf"
	"govllm/internal/tensor"
)

// LoadOptions tune Load.
type LoadOptions struct {
	// Quantize converts F32 weight matrices at load as llama-quantize's
	// file type of that name (one of QuantizationNames; "" or "none":
	// none; quantmix.go). Matrices already quantized stay as they are.
	Quantize string
}

// ErrFormat marks a model file that cannot be read as a model (errors.Is).
var ErrFormat = errors.New("model: unsupported or malformed model file")

// Format names the detected format of a model path.
type Format string

// Detected formats.
const (
	FormatGGUF     Format = "gguf"
	FormatHF       Format = "hf-safetensors"
	FormatLlama2C  Format = "llama2c"
	FormatNotFound Format = ""
)

// DetectFormat reports how Load would read path.
func DetectFormat(path string) (Format, error) {
	st, err := os.Stat(path)
	if err != nil {
		return FormatNotFound, fmt.Errorf("model: %w", err)
	}
	if st.IsDir() {
		if _, err := os.Stat(filepath.Join(path, "config.json")); err != nil {
			return FormatNotFound, fmt.Errorf("%w: %s: directory without config.json", ErrFormat, path)
		}
		return FormatHF, nil
	}
	fd, err := os.Open(path)
	if err != nil {
		return FormatNotFound, fmt.Errorf("model: %w", err)
	}
	defer fd.Close()
	var magic [4]byte
	if _, err := io.ReadFull(fd, magic[:]); err != nil {
		return FormatNotFound, fmt.Errorf("%w: %s: too short (%v)", ErrFormat, path, err)
	}
	if string(magic[:]) == "GGUF" {
		return FormatGGUF, nil
	}
	return FormatLlama2C, nil
}

// Load reads a model: a GGUF file, a llama2.c checkpoint, or a Hugging Face
// directory (config.json + safetensors).
func Load(path string, opts LoadOptions) (*Model, error) {
	f, err := DetectFormat(path)
	if err != nil {
		return nil, err
	}
	var r *rawModel
	switch f {
	case FormatGGUF:
		r, err = readGGUF(path)
	case FormatHF:
		r, err = readHF(path)
	case FormatLlama2C:
		r, err = readLlama2C(path)
	}
	if err != nil {
		return nil, err
	}
	return build(path, r, opts.Quantize)
}

// ---- GGUF ----

func readGGUF(path string) (*rawModel, error) {
	f, err := gguf.ReadFile(path)
	if err != nil {
		return nil, err
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrFormat, path, fmt.Sprintf(format, a...))
	}
	c, spec, err := ggufHeader(f, bad)
	if err != nil {
		return nil, err
	}
	ropeNames, pick, err := ggufRopeFactors(f, &spec, &c, bad)
	if err != nil {
		return nil, err
	}
	g, used := newGGUFTensors(f, bad)
	r, err := g.readModel(&c, &spec, ropeNames, pick)
	if err != nil {
		return nil, err
	}
	for _, t := range f.Tensors {
		if !used[t.Name] {
			return nil, bad("tensor %s is not used by architecture %s (not supported)", t.Name, spec.name)
		}
	}
	return r, nil
}

// newGGUFTensors returns the readers of f's tensors (converted or kept
// quantized) and the set of tensor names they have been asked for.
func newGGUFTensors(f *gguf.File, bad func(string, ...any) error) (*ggufTensors, map[string]bool) {
	used := map[string]bool{}
	tensorInfo := func(name string) *gguf.TensorInfo {
		used[name] = true
		return f.Tensor(name)
	}
	// mat reads a rows × cols matrix, or (n > 0) n of them stacked, ggml
	// shape [cols rows n], as one matrix of n·rows rows.
	mat := func(name string, rows, cols, n int) (tensor.Mat, error) {
		t := tensorInfo(name)
		if t == nil {
			return tensor.Mat{}, bad("missing tensor %s", name)
		}
		want := []uint64{uint64(cols), uint64(rows)}
		if n > 0 {
			want = append(want, uint64(n))
			rows *= n
		}
		if !slices.Equal(t.Dims, want) {
			return tensor.Mat{}, bad("tensor %s has dims %v, want %v", name, t.Dims, want)
		}
		data, err := f.ReadTensor(t) // its own slice, read from the file
		if err != nil {
			return tensor.Mat{}, err
		}
		if c := tensor.CodecByGGML(uint32(t.Type)); c != nil {
			// Kept in its own block format; build checks the shape.
			return tensor.Mat{Rows: rows, Cols: cols, Type: c.Type, Q: data}, nil
		}
		v, err := ggmlToF32(t, data)
		if err != nil {
			return tensor.Mat{}, bad("%v", err)
		}
		return f32Mat(rows, cols, v), nil
	}
	vec := func(name string, n int) ([]float32, error) {
		t := tensorInfo(name)
		if t == nil {
			return nil, bad("missing tensor %s", name)
		}
		if t.NumElements() != uint64(n) {
			return nil, bad("tensor %s has dims %v, want %d values", name, t.Dims, n)
		}
		data, err := f.TensorData(t)
		if err != nil {
			return nil, err
		}
		v, err := ggmlToF32(t, data)
		if err != nil {
			return nil, bad("%v", err)
		}
		return v, nil
	}
	has := func(name string) bool { return f.Tensor(name) != nil }
	return &ggufTensors{mat: mat, vec: vec, has: has, bad: bad}, used
}

// ggmlToF32 converts a tensor of a float or quantized type to F32.
func ggmlToF32(t *gguf.TensorInfo, data []byte) ([]float32, error) {
	switch t.Type {
	case gguf.GGMLTypeF32:
		return decodeF32(data), nil
	case gguf.GGMLTypeF16:
		return decodeF16(data), nil
	case gguf.GGMLTypeBF16:
		return decodeBF16(data), nil
	}
	c := tensor.CodecByGGML(uint32(t.Type))
	if c == nil {
		return nil, fmt.Errorf("tensor %s: type %v is not supported (F32, F16, BF16 and the block formats of tensor.CodecByGGML are)", t.Name, t.Type)
	}
	n := int(t.NumElements())
	if n%c.BlockSize != 0 || len(data) != n/c.BlockSize*c.BlockBytes {
		return nil, fmt.Errorf("tensor %s: %d %s values in %d bytes are not whole blocks", t.Name, n, c.Name, len(data))
	}
	out := make([]float32, n)
	c.Dequantize(out, data)
	return out, nil
}

// ---- llama2.c ----

// readLlama2C reads a llama2.c checkpoint: the legacy (v0) header of seven
// int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size,
// seq_len; negative vocab_size = untied classifier) then float32 weights,
// or the version 1 "ak42" header (256 bytes) with F32 weights.
func readLlama2C(path string) (*rawModel, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: llama2.c checkpoint: %s", ErrFormat, path, fmt.Sprintf(format, a...))
	}
	hdr, body, v1, err := llama2CHeader(b, bad)
	if err != nil {
		return nil, err
	}
	tied := hdr[5] > 0
	vocab := hdr[5]
	if vocab < 0 {
		vocab = -vocab
	}
	c := Config{
		Dim: int(hdr[0]), HiddenDim: int(hdr[1]), NumLayers: int(hdr[2]), NumHeads: int(hdr[3]),
		NumKVHeads: int(hdr[4]), VocabSize: int(vocab), MaxSeqLen: int(hdr[6]),
		RMSNormEps: 1e-5, RopeTheta: 10000, TiedEmbeddings: tied,
	}
	if c.NumHeads > 0 {
		c.HeadDim = c.Dim / c.NumHeads
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("model: %s: %w", path, err)
	}
	if c.Dim%c.NumHeads != 0 {
		return nil, bad("dim %d is not a multiple of n_heads %d", c.Dim, c.NumHeads)
	}
	d, h, L, kvd := int64(c.Dim), int64(c.HiddenDim), int64(c.NumLayers), int64(c.KVDim())
	v := int64(c.VocabSize)
	need := v*d + L*(2*d+d*d+2*d*kvd+d*d+3*d*h) + d
	if !v1 {
		need += int64(c.MaxSeqLen) * int64(c.HeadDim) // freq_cis_real + imag: seq_len × head_size/2 each
	}
	if !tied {
		need += v * d
	}
	if need*4 > int64(len(body)) {
		return nil, bad("header %v needs %d bytes of weights, file has %d", hdr, need*4, len(body))
	}
	return llama2CWeights(c, body, v1), nil
}

// llama2CHeader reads the legacy v0 header (7 int32) or the "ak42" v1
// header (256 bytes; a shared-classifier flag byte), returning the header
// with a negative vocabulary size for an untied head, the weights, and
// whether it is v1.
func llama2CHeader(b []byte, bad func(string, ...any) error) (hdr [7]int32, body []byte, v1 bool, err error) {
	le := func(off int) int32 { return int32(binary.LittleEndian.Uint32(b[off:])) }
	if len(b) >= 8 && binary.LittleEndian.Uint32(b) == 0x616b3432 {
		if len(b) < 256 {
			return hdr, nil, false, bad("truncated header")
		}
		if v := le(4); v != 1 {
			return hdr, nil, false, bad("version %d is not supported (v0 legacy and v1 F32 are)", v)
		}
		for i := range hdr {
			hdr[i] = le(8 + 4*i)
		}
		if b[36] == 0 {
			hdr[5] = -hdr[5]
		}
		return hdr, b[256:], true, nil
	}
	if len(b) < 28 {
		return hdr, nil, false, bad("file of %d bytes is too short", len(b))
	}
	for i := range hdr {
		hdr[i] = le(4 * i)
	}
	return hdr, b[28:], false, nil
}

// llama2CWeights slices body (checked to be long enough) into c's weights,
// in llama2.c's order for v0 or v1.
func llama2CWeights(c Config, body []byte, v1 bool) *rawModel {
	d, h, L, kvd := int64(c.Dim), int64(c.HiddenDim), int64(c.NumLayers), int64(c.KVDim())
	v := int64(c.VocabSize)
	off := int64(0)
	take := func(n int64) []float32 {
		s := decodeF32(body[off*4 : (off+n)*4])
		off += n
		return s
	}
	r := &rawModel{cfg: c, layers: make([]rawLayer, c.NumLayers)}
	perLayer := func(n int64, set func(l *rawLayer, w []float32)) {
		all := take(L * n)
		for i := range r.layers {
			set(&r.layers[i], all[int64(i)*n:int64(i+1)*n:int64(i+1)*n])
		}
	}
	di, hi, kvi := c.Dim, c.HiddenDim, c.KVDim()
	rmsAtt := func(l *rawLayer, w []float32) { l.attnNorm = w }
	rmsFFN := func(l *rawLayer, w []float32) { l.ffnNorm = w }
	if v1 {
		perLayer(d, rmsAtt)
		perLayer(d, rmsFFN)
		r.norm = take(d)
		r.embed = f32Mat(c.VocabSize, di, take(v*d))
	} else {
		r.embed = f32Mat(c.VocabSize, di, take(v*d))
		perLayer(d, rmsAtt)
	}
	perLayer(d*d, func(l *rawLayer, w []float32) { l.wq = f32Mat(di, di, w) })
	perLayer(kvd*d, func(l *rawLayer, w []float32) { l.wk = f32Mat(kvi, di, w) })
	perLayer(kvd*d, func(l *rawLayer, w []float32) { l.wv = f32Mat(kvi, di, w) })
	perLayer(d*d, func(l *rawLayer, w []float32) { l.wo = f32Mat(di, di, w) })
	if !v1 {
		perLayer(d, rmsFFN)
	}
	perLayer(h*d, func(l *rawLayer, w []float32) { l.wGate = f32Mat(hi, di, w) })
	perLayer(d*h, func(l *rawLayer, w []float32) { l.wDown = f32Mat(di, hi, w) })
	perLayer(h*d, func(l *rawLayer, w []float32) { l.wUp = f32Mat(hi, di, w) })
	if !v1 {
		r.norm = take(d)
		off += int64(c.MaxSeqLen) * int64(c.HeadDim) // freq_cis_real, freq_cis_imag (unused)
	}
	if !c.TiedEmbeddings {
		o := f32Mat(c.VocabSize, di, take(v*d))
		r.output = &o
	}
	return r
}
