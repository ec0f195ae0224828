package tensor

import "fmt"

// KVCodec is one storage format of the KV cache (--kv-cache-dtype): how a
// row of K or V values (one token slot, NumKVHeads·HeadDim floats) is
// kept in bytes and read back. It is not a weight codec: the KV cache is
// written once per token and read by attention, which decodes a block's
// rows into float32 and runs the float32 kernels on them, so attention
// over a coded cache computes exactly what attention over a float32 cache
// holding the decoded values computes.
type KVCodec struct {
	Name string // vLLM's spelling: "auto" (float32), "fp16", "q8_0"
	// Block is how many values a row must be a multiple of (and a head
	// slice aligned to), BlockBytes their bytes.
	Block, BlockBytes int
	enc               func(dst []byte, src []float32)
	dec               func(dst []float32, src []byte)
}

// The KV cache formats.
var (
	// KVF32 keeps the values as float32 (little endian): 4 bytes a value.
	KVF32 = &KVCodec{Name: "auto", Block: 1, BlockBytes: 4, enc: encodeF32, dec: decodeF32}
	// KVF16 keeps IEEE half precision (round to nearest even, overflow
	// to ±Inf): 2 bytes a value. F16C's VCVTPS2PH/VCVTPH2PS where the
	// CPU has them, the same bits in Go otherwise.
	KVF16 = &KVCodec{Name: "fp16", Block: 1, BlockBytes: 2, enc: EncodeF16, dec: DecodeF16}
	// KVQ8_0 keeps GGML Q8_0 blocks (QuantizeQ8_0): 34 bytes per 32
	// values, so a head's values must be whole blocks.
	KVQ8_0 = &KVCodec{Name: "q8_0", Block: Q8BlockSize, BlockBytes: Q8BlockBytes, enc: QuantizeQ8_0, dec: decodeQ8}
)

// RowBytes is the bytes of n values (n a multiple of Block).
func (c *KVCodec) RowBytes(n int) int { return n / c.Block * c.BlockBytes }

// Encode writes src (a multiple of Block values) to dst in the format.
func (c *KVCodec) Encode(dst []byte, src []float32) {
	if len(src)%c.Block != 0 || len(dst) < c.RowBytes(len(src)) {
		panic(fmt.Sprintf("tensor: KV %s encode of %d values into %d bytes", c.Name, len(src), len(dst)))
	}
	c.enc(dst, src)
}

// Decode writes len(dst) values (a multiple of Block) read from src.
func (c *KVCodec) Decode(dst []float32, src []byte) {
	if len(dst)%c.Block != 0 || len(src) < c.RowBytes(len(dst)) {
		panic(fmt.Sprintf("tensor: KV %s decode of %d values from %d bytes", c.Name, len(dst), len(src)))
	}
	c.dec(dst, src)
}

// DecodeRows decodes rows rows of n values (a multiple of Block), row r
// from src[r·stride:], into dst[r·n:(r+1)·n]: Decode row by row, in one
// kernel call where there is one.
func (c *KVCodec) DecodeRows(dst []float32, src []byte, n, rows, stride int) {
	if rows <= 0 {
		return
	}
	rb := c.RowBytes(n)
	if n%c.Block != 0 || len(dst) < rows*n || stride < rb || len(src) < (rows-1)*stride+rb {
		panic(fmt.Sprintf("tensor: KV %s decode of %d rows of %d values, stride %d, from %d bytes into %d", c.Name, rows, n, stride, len(src), len(dst)))
	}
	switch {
	case f16Conv != nil && c == KVF16 && n%8 == 0 && n > 0:
		f16Conv.f16rows(&dst[0], &src[0], n, rows, stride)
	case f16Conv != nil && c == KVQ8_0 && n > 0:
		f16Conv.q8rows(&dst[0], &src[0], n/Q8BlockSize, rows, stride)
	default:
		for r := range rows {
			c.dec(dst[r*n:(r+1)*n], src[r*stride:r*stride+rb])
		}
	}
}

// Round replaces each value of x by its decoded encoding: what a cache
// in the format gives back for x.
func (c *KVCodec) Round(x []float32) {
	b := make([]byte, c.RowBytes(len(x)))
	c.Encode(b, x)
	c.Decode(x, b)
}

func encodeF32(dst []byte, src []float32) { copy(dst, bytesOf(src)) }

func decodeF32(dst []float32, src []byte) { copy(bytesOf(dst), src[:4*len(dst)]) }

// EncodeF16 writes src as little-endian IEEE half-precision values to dst
// (2·len(src) bytes): F32ToF16's rounding (to nearest even; too large to
// ±Inf; NaN stays NaN, quiet).
func EncodeF16(dst []byte, src []float32) {
	_ = dst[2*len(src)-1:]
	n := 0
	if f16Conv != nil {
		n = len(src) &^ 7
		if n > 0 {
			f16Conv.enc(&dst[0], &src[0], n)
		}
	}
	for i := n; i < len(src); i++ {
		h := F32ToF16(src[i])
		dst[2*i], dst[2*i+1] = byte(h), byte(h>>8)
	}
}

// DecodeF16 reads len(dst) little-endian half-precision values from src:
// exact, a NaN quiet (as F16C's VCVTPH2PS gives it).
func DecodeF16(dst []float32, src []byte) {
	_ = src[2*len(dst)-1:]
	n := 0
	if f16Conv != nil {
		n = len(dst) &^ 7
		if n > 0 {
			f16Conv.dec(&dst[0], &src[0], n)
		}
	}
	for i := n; i < len(dst); i++ {
		dst[i] = f16ToF32Quiet(uint16(src[2*i]) | uint16(src[2*i+1])<<8)
	}
}

// f16ToF32Quiet is F16ToF32 with a NaN's quiet bit set.
func f16ToF32Quiet(h uint16) float32 {
	if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
		h |= 0x200
	}
	return F16ToF32(h)
}

// decodeQ8 is DequantizeQ8_0, with AVX2 where the CPU has it (the same
// bits: one float32 product per value).
func decodeQ8(dst []float32, src []byte) {
	nb := len(dst) / Q8BlockSize
	if f16Conv == nil || nb == 0 {
		DequantizeQ8_0(dst, src)
		return
	}
	_ = src[nb*Q8BlockBytes-1]
	f16Conv.q8dec(&dst[0], &src[0], nb)
}

// f16Kernels converts n (a multiple of 8) values at a time; q8dec
// decodes nb Q8_0 blocks.
type f16Kernels struct {
	enc   func(dst *byte, src *float32, n int)
	dec   func(dst *float32, src *byte, n int)
	q8dec func(dst *float32, src *byte, nb int)
	// f16rows and q8rows decode rows of n values (nb blocks) from src
	// rows stride bytes apart into consecutive dst rows.
	f16rows func(dst *float32, src *byte, n, rows, stride int)
	q8rows  func(dst *float32, src *byte, nb, rows, stride int)
}

// f16Conv is the F16C conversion where the CPU has it (and the Go
// fallback is not forced), nil otherwise.
var f16Conv = f16Native()
