package tensor

import (
	"encoding/binary"
	"fmt"
)

// The block formats beyond Q8_0 and Q4_0: GGML's K-quants (super-blocks of
// 256 weights) and the other block types, kept in memory in their GGML
// blocks (Mat.Q) and multiplied on the blocks as GGML does.
const (
	Q4_1    DType = iota + 3 // blocks of 32: f16 d, f16 m, 16 bytes of nibbles; w = d·q + m
	Q5_0                     // blocks of 32: f16 d, 32 high bits, nibbles; w = d·(q−16)
	Q5_1                     // blocks of 32: f16 d, f16 m, 32 high bits, nibbles; w = d·q + m
	IQ4_NL                   // blocks of 32: f16 d, nibbles indexing a non-linear table
	Q2_K                     // super-blocks of 256: 2-bit weights, 4-bit scales and mins
	Q3_K                     // super-blocks of 256: 3-bit weights, 6-bit scales
	Q4_K                     // super-blocks of 256: 4-bit weights, 6-bit scales and mins
	Q5_K                     // super-blocks of 256: 5-bit weights, 6-bit scales and mins
	Q6_K                     // super-blocks of 256: 6-bit weights, int8 scales
	IQ4_XS                   // super-blocks of 256: table nibbles, 6-bit scales
	Stacked                  // rows of Parts stacked (each part its own format)
)

// Activation block types (GGML's vec_dot_type): the format the activation
// rows are quantized to before a dot product with a weight format.
const (
	actQ8_0 = iota // blocks of 32: scale max/127 (float16), int8
	actQ8_1        // Q8_0 plus s = d·Σq (float16)
	actQ8_K        // blocks of 256: float32 scale, int8, 16 sums of 16
)

// Codec is one GGML block format: its layout, its dequantization (GGML's
// dequantize_row_*), the activation quantization GGML pairs it with and
// the integer unpacking its dot product runs on. The loader, the model
// and --quantization ask the codec and never switch on the format.
type Codec struct {
	Name       string // GGML's type name, e.g. "Q4_K"
	Type       DType
	GGML       uint32 // GGML's type id (ggml.h enum ggml_type)
	BlockSize  int    // weights per block
	BlockBytes int    // bytes per block
	act        int    // actQ8_0, actQ8_1 or actQ8_K

	// unpack decodes one block into the integer form of the dot product:
	// the weight of element e is d·sc[e/16]·q[e] − dmin·mn[e/16] (K
	// formats, 16-element groups) or d·q[e] + m (32-blocks: sc, mn unused,
	// dmin holds m). nil for Q8_0 and Q4_0, which have their own kernels.
	unpack func(u *unpacked, blk []byte)
	// step adds one super-block's product to an output's state (K
	// formats, Q8_K activations), in GGML's x86 order (blockmm.go).
	step func(a *dotAcc, u *unpacked, xq []int8, bsum []int32, dx float32)
	// sum is an output's result from its state (the 32-blocks: s).
	sum func(a *dotAcc) float32
	// dequant writes one block's weights as GGML's dequantize_row_*.
	dequant func(dst []float32, blk []byte)
	// quant writes one block of values as GGML's reference quantizer
	// (quantize_k.go, quantize_b.go).
	quant func(dst []byte, src []float32)
	// quantRows says quant takes any number of whole blocks at once
	// (Q8_0, Q4_0: their quantizers have SIMD loops over rows).
	quantRows bool
}

// unpacked is one block in integer form (see Codec.unpack).
type unpacked struct {
	q       [256]int8
	sc, mn  [16]int32
	d, dmin float32
}

var codecs = map[DType]*Codec{}

func register(c *Codec) { codecs[c.Type] = c }

// CodecOf returns the codec of a quantized DType, nil for F32 and Stacked.
func CodecOf(t DType) *Codec { return codecs[t] }

// CodecByGGML returns the codec of GGML type id t, nil when the format is
// not implemented.
func CodecByGGML(t uint32) *Codec {
	for _, c := range codecs {
		if c.GGML == t {
			return c
		}
	}
	return nil
}

// RowBytes is the size of one row of cols weights (cols a multiple of
// BlockSize).
func (c *Codec) RowBytes(cols int) int { return cols / c.BlockSize * c.BlockBytes }

// Check returns an error unless q holds rows×cols weights of the format.
func (c *Codec) Check(q []byte, rows, cols int) error {
	if cols%c.BlockSize != 0 {
		return fmt.Errorf("%s rows of %d weights are not whole blocks of %d", c.Name, cols, c.BlockSize)
	}
	if len(q) != rows*c.RowBytes(cols) {
		return fmt.Errorf("%s data of %d bytes does not fit %d×%d", c.Name, len(q), rows, cols)
	}
	return nil
}

// Dequantize expands whole blocks of src into dst (len(dst) a multiple of
// BlockSize), with GGML's float arithmetic.
func (c *Codec) Dequantize(dst []float32, src []byte) {
	if len(dst)%c.BlockSize != 0 {
		panic(fmt.Sprintf("tensor: %s Dequantize: %d values are not whole blocks", c.Name, len(dst)))
	}
	nb := len(dst) / c.BlockSize
	_ = src[nb*c.BlockBytes-1]
	for b := 0; b < nb; b++ {
		c.dequant(dst[b*c.BlockSize:(b+1)*c.BlockSize], src[b*c.BlockBytes:(b+1)*c.BlockBytes])
	}
}

// Quantize writes src (whole blocks) as blocks of the format to dst, with
// GGML's reference quantizer (what llama-quantize writes without an
// importance matrix). len(dst) must be at least the blocks' bytes.
func (c *Codec) Quantize(dst []byte, src []float32) {
	if len(src)%c.BlockSize != 0 {
		panic(fmt.Sprintf("tensor: %s Quantize: %d values are not whole blocks", c.Name, len(src)))
	}
	nb := len(src) / c.BlockSize
	if nb == 0 {
		return
	}
	_ = dst[nb*c.BlockBytes-1]
	if c.quantRows {
		c.quant(dst[:nb*c.BlockBytes], src)
		return
	}
	for b := 0; b < nb; b++ {
		c.quant(dst[b*c.BlockBytes:(b+1)*c.BlockBytes], src[b*c.BlockSize:(b+1)*c.BlockSize])
	}
}

// f16At reads the little-endian float16 at b[i:].
func f16At(b []byte, i int) float32 { return F16ToF32(binary.LittleEndian.Uint16(b[i:])) }

// dequantUnpacked is the dequantization of the K formats from their
// unpacked form: (d·sc)·q − dmin·mn, each product rounded (GGML's
// dequantize_row_q{2..6}_K and iq4_xs compute the same products).
func dequantUnpacked(c *Codec) func(dst []float32, blk []byte) {
	return func(dst []float32, blk []byte) {
		var u unpacked
		c.unpack(&u, blk)
		for g := 0; g < len(dst)/16; g++ {
			dl, ml := u.d*float32(u.sc[g]), u.dmin*float32(u.mn[g])
			for e := 16 * g; e < 16*g+16; e++ {
				dst[e] = float32(dl*float32(u.q[e])) - ml
			}
		}
	}
}

// dequantLegacy is the dequantization of the 32-blocks from their
// unpacked form: q·d + m (GGML: x*d + m; m = 0 for the symmetric ones).
func dequantLegacy(c *Codec) func(dst []float32, blk []byte) {
	return func(dst []float32, blk []byte) {
		var u unpacked
		c.unpack(&u, blk)
		for e := range dst {
			if c.act == actQ8_1 {
				dst[e] = float32(float32(u.q[e])*u.d) + u.dmin
			} else {
				dst[e] = float32(u.q[e]) * u.d
			}
		}
	}
}

func init() {
	for _, c := range []*Codec{
		{Name: "Q4_1", Type: Q4_1, GGML: 3, BlockSize: 32, BlockBytes: 20, act: actQ8_1, unpack: unpackQ4_1, quant: quantizeQ4_1},
		{Name: "Q5_0", Type: Q5_0, GGML: 6, BlockSize: 32, BlockBytes: 22, act: actQ8_0, unpack: unpackQ5_0, quant: quantizeQ5_0},
		{Name: "Q5_1", Type: Q5_1, GGML: 7, BlockSize: 32, BlockBytes: 24, act: actQ8_1, unpack: unpackQ5_1, quant: quantizeQ5_1},
		{Name: "IQ4_NL", Type: IQ4_NL, GGML: 20, BlockSize: 32, BlockBytes: 18, act: actQ8_0, unpack: unpackIQ4NL, quant: quantizeIQ4NL},
		{Name: "Q2_K", Type: Q2_K, GGML: 10, BlockSize: 256, BlockBytes: 84, act: actQ8_K, unpack: unpackQ2K, step: stepQ2K, quant: quantizeQ2K},
		{Name: "Q3_K", Type: Q3_K, GGML: 11, BlockSize: 256, BlockBytes: 110, act: actQ8_K, unpack: unpackQ3K, step: stepLanes, quant: quantizeQ3K},
		{Name: "Q4_K", Type: Q4_K, GGML: 12, BlockSize: 256, BlockBytes: 144, act: actQ8_K, unpack: unpackQ4K, step: stepQ4K, quant: quantizeQ4K},
		{Name: "Q5_K", Type: Q5_K, GGML: 13, BlockSize: 256, BlockBytes: 176, act: actQ8_K, unpack: unpackQ5K, step: stepQ5K, quant: quantizeQ5K},
		{Name: "Q6_K", Type: Q6_K, GGML: 14, BlockSize: 256, BlockBytes: 210, act: actQ8_K, unpack: unpackQ6K, step: stepLanes, quant: quantizeQ6K},
		{Name: "IQ4_XS", Type: IQ4_XS, GGML: 23, BlockSize: 256, BlockBytes: 136, act: actQ8_K, unpack: unpackIQ4XS, step: stepLanes, quant: quantizeIQ4XS},
	} {
		c.dequant, c.sum = dequantUnpacked(c), sumLanes
		if c.BlockSize == 32 {
			c.dequant = dequantLegacy(c)
		}
		if c.Type == Q4_K {
			c.sum = sumQ4K
		}
		register(c)
	}
	register(&Codec{Name: "Q8_0", Type: Q8_0, GGML: 8, BlockSize: 32, BlockBytes: Q8BlockBytes, act: actQ8_0, dequant: DequantizeQ8_0, quant: QuantizeQ8_0, quantRows: true})
	register(&Codec{Name: "Q4_0", Type: Q4_0, GGML: 2, BlockSize: 32, BlockBytes: Q4BlockBytes, act: actQ8_0, dequant: DequantizeQ4_0, quant: QuantizeQ4_0, quantRows: true})
}
