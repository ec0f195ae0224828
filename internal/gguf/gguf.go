package gguf

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
)

// Magic is "GGUF" read as a little-endian uint32.
const Magic = 0x46554747

// DefaultAlignment is the tensor data alignment when general.alignment is absent.
const DefaultAlignment = 32

// ValueType is the type tag of a metadata value.
type ValueType uint32

// Metadata value types.
const (
	TypeUint8 ValueType = iota
	TypeInt8
	TypeUint16
	TypeInt16
	TypeUint32
	TypeInt32
	TypeFloat32
	TypeBool
	TypeString
	TypeArray
	TypeUint64
	TypeInt64
	TypeFloat64
)

var valueTypeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// size is the encoded size of a scalar of type t (strings: the minimum, 8).
func (t ValueType) size() int64 {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64, TypeString:
		return 8
	case TypeArray:
		return 12
	}
	return 0
}

// Value is one metadata value. Scalars are held as uint64 (unsigned types and
// bool), int64 (signed), float64 (floats) or string; arrays as a typed slice
// ([]uint8, []int8, []uint16, []int16, []uint32, []int32, []float32, []bool,
// []string, []uint64, []int64, []float64, or []Value for nested arrays).
type Value struct {
	Type     ValueType
	ElemType ValueType // element type when Type is TypeArray
	v        any
}

// Any returns the held Go value (see Value for the representation).
func (v Value) Any() any { return v.v }

// Len is the element count of an array (0 for scalars).
func (v Value) Len() int {
	switch a := v.v.(type) {
	case []uint8:
		return len(a)
	case []int8:
		return len(a)
	case []uint16:
		return len(a)
	case []int16:
		return len(a)
	case []uint32:
		return len(a)
	case []int32:
		return len(a)
	case []float32:
		return len(a)
	case []bool:
		return len(a)
	case []string:
		return len(a)
	case []uint64:
		return len(a)
	case []int64:
		return len(a)
	case []float64:
		return len(a)
	case []Value:
		return len(a)
	}
	return 0
}

// TypeName describes the value's type, e.g. "uint32" or "array[string]".
func (v Value) TypeName() string {
	if v.Type == TypeArray {
		return "array[" + v.ElemType.String() + "]"
	}
	return v.Type.String()
}

// GGMLType is a tensor's storage type.
type GGMLType uint32

// Tensor types (ggml.h numbering).
const (
	GGMLTypeF32  GGMLType = 0
	GGMLTypeF16  GGMLType = 1
	GGMLTypeQ4_0 GGMLType = 2
	GGMLTypeQ4_1 GGMLType = 3
	GGMLTypeQ5_0 GGMLType = 6
	GGMLTypeQ5_1 GGMLType = 7
	GGMLTypeQ8_0 GGMLType = 8
	GGMLTypeQ8_1 GGMLType = 9
	GGMLTypeQ2_K GGMLType = 10
	GGMLTypeQ3_K GGMLType = 11
	GGMLTypeQ4_K GGMLType = 12
	GGMLTypeQ5_K GGMLType = 13
	GGMLTypeQ6_K GGMLType = 14
	GGMLTypeQ8_K GGMLType = 15
	GGMLTypeIQ4N GGMLType = 20 // IQ4_NL
	GGMLTypeIQ4X GGMLType = 23 // IQ4_XS
	GGMLTypeI8   GGMLType = 24
	GGMLTypeI16  GGMLType = 25
	GGMLTypeI32  GGMLType = 26
	GGMLTypeI64  GGMLType = 27
	GGMLTypeF64  GGMLType = 28
	GGMLTypeBF16 GGMLType = 30
)

type typeTraits struct {
	name       string
	blockSize  int64 // elements per block
	blockBytes int64
}

var ggmlTraits = map[GGMLType]typeTraits{
	GGMLTypeF32:  {"F32", 1, 4},
	GGMLTypeF16:  {"F16", 1, 2},
	GGMLTypeQ4_0: {"Q4_0", 32, 18},
	GGMLTypeQ4_1: {"Q4_1", 32, 20},
	GGMLTypeQ5_0: {"Q5_0", 32, 22},
	GGMLTypeQ5_1: {"Q5_1", 32, 24},
	GGMLTypeQ8_0: {"Q8_0", 32, 34},
	GGMLTypeQ8_1: {"Q8_1", 32, 36},
	GGMLTypeQ2_K: {"Q2_K", 256, 84},
	GGMLTypeQ3_K: {"Q3_K", 256, 110},
	GGMLTypeQ4_K: {"Q4_K", 256, 144},
	GGMLTypeQ5_K: {"Q5_K", 256, 176},
	GGMLTypeQ6_K: {"Q6_K", 256, 210},
	GGMLTypeQ8_K: {"Q8_K", 256, 292},
	GGMLTypeIQ4N: {"IQ4_NL", 32, 18},
	GGMLTypeIQ4X: {"IQ4_XS", 256, 136},
	GGMLTypeI8:   {"I8", 1, 1},
	GGMLTypeI16:  {"I16", 1, 2},
	GGMLTypeI32:  {"I32", 1, 4},
	GGMLTypeI64:  {"I64", 1, 8},
	GGMLTypeF64:  {"F64", 1, 8},
	GGMLTypeBF16: {"BF16", 1, 2},
}

func (t GGMLType) String() string {
	if tr, ok := ggmlTraits[t]; ok {
		return tr.name
	}
	return fmt.Sprintf("ggml_type(%d)", uint32(t))
}

// BlockSize is the number of elements in one storage block (1 for plain types,
// 0 for an unknown type).
func (t GGMLType) BlockSize() int { return int(ggmlTraits[t].blockSize) }

// BlockBytes is the byte size of one storage block (0 for an unknown type).
func (t GGMLType) BlockBytes() int { return int(ggmlTraits[t].blockBytes) }

// MaxDims is GGML_MAX_DIMS.
const MaxDims = 4

// TensorInfo describes one tensor. Dims are in ggml order: Dims[0] is the
// innermost (contiguous) dimension, so a PyTorch [out, in] weight has
// Dims = [in, out].
type TensorInfo struct {
	Name   string
	Dims   []uint64
	Type   GGMLType
	Offset uint64 // relative to the start of the data section
	Size   uint64 // bytes
}

// NumElements is the product of Dims.
func (t *TensorInfo) NumElements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// File is a parsed GGUF file.
type File struct {
	Path       string
	Version    uint32
	Alignment  uint64
	Keys       []string // metadata keys in file order
	Metadata   map[string]Value
	Tensors    []TensorInfo
	DataOffset int64 // absolute file offset of the data section
	DataSize   int64 // bytes from DataOffset to the end of the file

	data   []byte // data section, once read
	byName map[string]int
}

// Errors callers may branch on.
var (
	ErrKeyNotFound    = errors.New("gguf: key not found")
	ErrTensorNotFound = errors.New("gguf: tensor not found")
	ErrFormat         = errors.New("gguf: malformed file")
)

// FormatError reports malformed, truncated or unsupported input. It wraps
// ErrFormat.
type FormatError struct {
	Path   string
	Offset int64
	Msg    string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("gguf: %s: at byte %d: %s", e.Path, e.Offset, e.Msg)
}

func (e *FormatError) Unwrap() error { return ErrFormat }

// TypeError reports a metadata key whose value has another type than asked.
type TypeError struct {
	Path, Key string
	Got       string
	Want      string
}

func (e *TypeError) Error() string {
	return fmt.Sprintf("gguf: %s: key %q is %s, want %s", e.Path, e.Key, e.Got, e.Want)
}

// ReadFile parses the header, metadata and tensor infos of the GGUF file at
// path. Tensor data is not read; call ReadTensorData for that.
func ReadFile(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	return parse(path, bufio.NewReaderSize(fd, 1<<20), st.Size())
}

// Parse parses a whole GGUF file held in memory, tensor data included. name
// is used in error messages.
func Parse(name string, b []byte) (*File, error) {
	f, err := parse(name, bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	f.data = b[f.DataOffset:]
	return f, nil
}

// ReadTensorData reads the data section of the file at f.Path into memory.
// It is a no-op when the data is already held.
func (f *File) ReadTensorData() error {
	if f.data != nil {
		return nil
	}
	fd, err := os.Open(f.Path)
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	if st.Size() != f.DataOffset+f.DataSize {
		return &FormatError{Path: f.Path, Offset: st.Size(), Msg: fmt.Sprintf("file size changed since parsing (%d, was %d)", st.Size(), f.DataOffset+f.DataSize)}
	}
	buf := make([]byte, f.DataSize)
	if _, err := fd.ReadAt(buf, f.DataOffset); err != nil {
		return fmt.Errorf("gguf: %s: reading tensor data: %w", f.Path, err)
	}
	f.data = buf
	return nil
}

// Tensor returns the info of the named tensor, or nil.
func (f *File) Tensor(name string) *TensorInfo {
	i, ok := f.byName[name]
	if !ok {
		return nil
	}
	return &f.Tensors[i]
}

// TensorData returns the bytes of t (which must come from f): a slice of
// the data section once ReadTensorData has run (or the file came from
// Parse), else the tensor alone, read from the file into a new slice (so
// a loader holds at most the tensors it keeps, never the whole file).
func (f *File) TensorData(t *TensorInfo) ([]byte, error) {
	if t == nil {
		return nil, ErrTensorNotFound
	}
	if f.data == nil {
		return readRange(f.Path, f.DataOffset+int64(t.Offset), int64(t.Size))
	}
	// parse checked Offset+Size ≤ DataSize.
	return f.data[t.Offset : t.Offset+t.Size : t.Offset+t.Size], nil
}

// ReadTensor returns the bytes of t in a slice of their own: read from
// the file, or copied when the data section is held.
func (f *File) ReadTensor(t *TensorInfo) ([]byte, error) {
	b, err := f.TensorData(t)
	if err == nil && f.data != nil {
		b = bytes.Clone(b)
	}
	return b, err
}

// readRange reads n bytes at off of the file at path.
func readRange(path string, off, n int64) ([]byte, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer fd.Close()
	b := make([]byte, n)
	if _, err := fd.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("gguf: %s: reading tensor data at byte %d: %w", path, off, err)
	}
	return b, nil
}

// decoder reads little-endian values from r, never past size bytes.
type decoder struct {
	path string
	r    io.Reader
	off  int64
	size int64
	buf  [8]byte
	err  error
}

func (d *decoder) fail(format string, a ...any) {
	if d.err == nil {
		d.err = &FormatError{Path: d.path, Offset: d.off, Msg: fmt.Sprintf(format, a...)}
	}
}

func (d *decoder) remaining() int64 { return d.size - d.off }

func (d *decoder) read(n int) []byte {
	if d.err != nil {
		return d.buf[:n]
	}
	if int64(n) > d.remaining() {
		d.fail("truncated: need %d bytes, %d left", n, d.remaining())
		return d.buf[:n]
	}
	if _, err := io.ReadFull(d.r, d.buf[:n]); err != nil {
		d.fail("read: %v", err)
		return d.buf[:n]
	}
	d.off += int64(n)
	return d.buf[:n]
}

func (d *decoder) u8() uint8   { return d.read(1)[0] }
func (d *decoder) u16() uint16 { return binary.LittleEndian.Uint16(d.read(2)) }
func (d *decoder) u32() uint32 { return binary.LittleEndian.Uint32(d.read(4)) }
func (d *decoder) u64() uint64 { return binary.LittleEndian.Uint64(d.read(8)) }

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(d.remaining()) {
		d.fail("length %d exceeds the %d bytes left", n, d.remaining())
		return nil
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.fail("read: %v", err)
		return nil
	}
	d.off += int64(n)
	return b
}

func (d *decoder) str() string {
	n := d.u64()
	return string(d.bytes(n))
}

// count reads an element count and checks that n elements of at least
// minSize bytes each fit in what is left.
func (d *decoder) count(what string, minSize int64) uint64 {
	n := d.u64()
	if d.err != nil {
		return 0
	}
	if minSize > 0 && n > uint64(d.remaining()/minSize) {
		d.fail("%s count %d cannot fit in the %d bytes left", what, n, d.remaining())
		return 0
	}
	return n
}

const maxArrayDepth = 8

func (d *decoder) value(t ValueType, depth int) Value {
	v := Value{Type: t}
	switch t {
	case TypeUint8:
		v.v = uint64(d.u8())
	case TypeInt8:
		v.v = int64(int8(d.u8()))
	case TypeUint16:
		v.v = uint64(d.u16())
	case TypeInt16:
		v.v = int64(int16(d.u16()))
	case TypeUint32:
		v.v = uint64(d.u32())
	case TypeInt32:
		v.v = int64(int32(d.u32()))
	case TypeFloat32:
		v.v = float64(math.Float32frombits(d.u32()))
	case TypeBool:
		b := d.u8()
		if b > 1 {
			d.fail("bool value %d", b)
		}
		v.v = uint64(b)
	case TypeString:
		v.v = d.str()
	case TypeUint64:
		v.v = d.u64()
	case TypeInt64:
		v.v = int64(d.u64())
	case TypeFloat64:
		v.v = math.Float64frombits(d.u64())
	case TypeArray:
		if depth >= maxArrayDepth {
			d.fail("arrays nested deeper than %d", maxArrayDepth)
			return v
		}
		et := ValueType(d.u32())
		if d.err == nil && et.size() == 0 {
			d.fail("unknown array element type %d", uint32(et))
			return v
		}
		n := d.count("array element", et.size())
		v.ElemType = et
		v.v = d.array(et, int(n), depth)
	default:
		d.fail("unknown value type %d", uint32(t))
	}
	return v
}

func readN[T any](d *decoder, n int, f func() T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = f()
		if d.err != nil {
			return nil
		}
	}
	return s
}

func (d *decoder) array(et ValueType, n int, depth int) any {
	if d.err != nil {
		return nil
	}
	switch et {
	case TypeUint8:
		return d.bytes(uint64(n))
	case TypeInt8:
		return readN(d, n, func() int8 { return int8(d.u8()) })
	case TypeUint16:
		return readN(d, n, d.u16)
	case TypeInt16:
		return readN(d, n, func() int16 { return int16(d.u16()) })
	case TypeUint32:
		return readN(d, n, d.u32)
	case TypeInt32:
		return readN(d, n, func() int32 { return int32(d.u32()) })
	case TypeFloat32:
		return readN(d, n, func() float32 { return math.Float32frombits(d.u32()) })
	case TypeBool:
		return readN(d, n, func() bool {
			b := d.u8()
			if b > 1 {
				d.fail("bool value %d", b)
			}
			return b == 1
		})
	case TypeString:
		return readN(d, n, d.str)
	case TypeUint64:
		return readN(d, n, d.u64)
	case TypeInt64:
		return readN(d, n, func() int64 { return int64(d.u64()) })
	case TypeFloat64:
		return readN(d, n, func() float64 { return math.Float64frombits(d.u64()) })
	case TypeArray:
		return readN(d, n, func() Value { return d.value(TypeArray, depth+1) })
	}
	return nil
}

// parse reads the header, the metadata and the tensor infos, and checks the
// tensors' layout against the file size.
func parse(path string, r io.Reader, size int64) (*File, error) {
	d := &decoder{path: path, r: r, size: size}
	if magic := d.u32(); d.err == nil && magic != Magic {
		d.fail("not a GGUF file (magic %#08x)", magic)
	}
	f := &File{Path: path, Version: d.u32(), Metadata: map[string]Value{}, Alignment: DefaultAlignment}
	if d.err == nil && f.Version != 2 && f.Version != 3 {
		d.fail("unsupported GGUF version %d (want 2 or 3)", f.Version)
	}
	nTensors := d.count("tensor", 24)
	nKV := d.count("metadata", 13)
	d.metadata(f, nKV)
	if d.err != nil {
		return nil, d.err
	}
	f.byName = make(map[string]int, nTensors)
	for i := uint64(0); i < nTensors && d.err == nil; i++ {
		t, ok := d.tensorInfo(f)
		if !ok {
			break
		}
		f.byName[t.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
	}
	if d.err != nil {
		return nil, d.err
	}
	f.DataOffset = (d.off + int64(f.Alignment) - 1) / int64(f.Alignment) * int64(f.Alignment)
	if len(f.Tensors) > 0 && f.DataOffset > size {
		d.fail("data section starts at %d, past the end of the file (%d bytes)", f.DataOffset, size)
		return nil, d.err
	}
	f.DataOffset = min(f.DataOffset, size) // no tensors: nothing follows
	f.DataSize = size - f.DataOffset
	if err := f.checkLayout(); err != nil {
		return nil, err
	}
	return f, nil
}

// metadata reads n key/value pairs into f, then general.alignment.
func (d *decoder) metadata(f *File, n uint64) {
	for i := uint64(0); i < n && d.err == nil; i++ {
		key := d.str()
		if d.err != nil {
			return
		}
		if _, dup := f.Metadata[key]; dup {
			d.fail("duplicate metadata key %q", key)
			return
		}
		v := d.value(ValueType(d.u32()), 0)
		if d.err != nil {
			return
		}
		f.Keys = append(f.Keys, key)
		f.Metadata[key] = v
	}
	if v, ok := f.Metadata["general.alignment"]; ok {
		a, isUint := v.v.(uint64)
		if !isUint || v.Type == TypeBool || a == 0 || a&(a-1) != 0 || a > 1<<30 {
			d.fail("general.alignment must be a power-of-two integer, got %s %v", v.TypeName(), v.v)
			return
		}
		f.Alignment = a
	}
}

// tensorInfo reads and checks one tensor info; ok is false after a failure
// (d.err says why).
func (d *decoder) tensorInfo(f *File) (t TensorInfo, ok bool) {
	t.Name = d.str()
	nd := d.u32()
	if d.err == nil && (nd == 0 || nd > MaxDims) {
		d.fail("tensor %q has %d dims (want 1..%d)", t.Name, nd, MaxDims)
	}
	if d.err != nil {
		return t, false
	}
	t.Dims = make([]uint64, nd)
	for j := range t.Dims {
		t.Dims[j] = d.u64()
	}
	t.Type = GGMLType(d.u32())
	t.Offset = d.u64()
	if d.err != nil {
		return t, false
	}
	if _, dup := f.byName[t.Name]; dup {
		d.fail("duplicate tensor %q", t.Name)
		return t, false
	}
	tr, known := ggmlTraits[t.Type]
	if !known {
		d.fail("tensor %q has unknown type %d", t.Name, uint32(t.Type))
		return t, false
	}
	n := uint64(1)
	for _, dim := range t.Dims {
		if dim == 0 || n > (1<<62)/dim {
			d.fail("tensor %q has bad dims %v", t.Name, t.Dims)
			return t, false
		}
		n *= dim
	}
	if t.Dims[0]%uint64(tr.blockSize) != 0 {
		d.fail("tensor %q: first dim %d is not a multiple of the %s block size %d", t.Name, t.Dims[0], tr.name, tr.blockSize)
		return t, false
	}
	t.Size = n / uint64(tr.blockSize) * uint64(tr.blockBytes)
	if t.Offset%f.Alignment != 0 {
		d.fail("tensor %q offset %d is not aligned to %d", t.Name, t.Offset, f.Alignment)
		return t, false
	}
	return t, true
}

// checkLayout checks that every tensor lies inside the data section and
// that no two overlap.
func (f *File) checkLayout() error {
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if t.Offset > uint64(f.DataSize) || t.Size > uint64(f.DataSize)-t.Offset {
			return &FormatError{Path: f.Path, Offset: f.DataOffset, Msg: fmt.Sprintf("tensor %q (offset %d, %d bytes) runs past the end of the data section (%d bytes)", t.Name, t.Offset, t.Size, f.DataSize)}
		}
	}
	idx := make([]int, len(f.Tensors))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return f.Tensors[idx[a]].Offset < f.Tensors[idx[b]].Offset })
	for k := 1; k < len(idx); k++ {
		p, q := &f.Tensors[idx[k-1]], &f.Tensors[idx[k]]
		if p.Offset+p.Size > q.Offset {
			return &FormatError{Path: f.Path, Offset: f.DataOffset, Msg: fmt.Sprintf("tensors %q and %q overlap", p.Name, q.Name)}
		}
	}
	return nil
}
