package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// KV is one metadata entry to write. Value is a Go value: uint8, int8,
// uint16, int16, uint32, int32, float32, bool, string, uint64, int64,
// float64, a slice of one of those, or a Value (as read from a File).
type KV struct {
	Key   string
	Value any
}

// TensorData is one tensor to write: ggml-order dims, type and raw bytes.
type TensorData struct {
	Name string
	Dims []uint64
	Type GGMLType
	Data []byte
}

// Encode writes a GGUF v3 file. The alignment is general.alignment when kvs
// holds it (as uint32), else DefaultAlignment.
func Encode(w io.Writer, kvs []KV, tensors []TensorData) error {
	align := uint64(DefaultAlignment)
	for _, kv := range kvs {
		if kv.Key == "general.alignment" {
			a, ok := kv.Value.(uint32)
			if !ok || a == 0 || a&(a-1) != 0 {
				return fmt.Errorf("gguf: encode: general.alignment must be a power-of-two uint32")
			}
			align = uint64(a)
		}
	}
	e := &encoder{w: bufio.NewWriter(w)}
	e.u32(Magic)
	e.u32(3)
	e.u64(uint64(len(tensors)))
	e.u64(uint64(len(kvs)))
	for _, kv := range kvs {
		e.str(kv.Key)
		if err := e.value(kv.Value, true); err != nil {
			return fmt.Errorf("gguf: encode %q: %w", kv.Key, err)
		}
	}
	var off uint64
	offsets := make([]uint64, len(tensors))
	for i, t := range tensors {
		tr, ok := ggmlTraits[t.Type]
		if !ok || len(t.Dims) == 0 || len(t.Dims) > MaxDims {
			return fmt.Errorf("gguf: encode tensor %q: bad type or dims", t.Name)
		}
		n := uint64(1)
		for _, d := range t.Dims {
			n *= d
		}
		if t.Dims[0]%uint64(tr.blockSize) != 0 || uint64(len(t.Data)) != n/uint64(tr.blockSize)*uint64(tr.blockBytes) {
			return fmt.Errorf("gguf: encode tensor %q: %d bytes do not match %s dims %v", t.Name, len(t.Data), tr.name, t.Dims)
		}
		e.str(t.Name)
		e.u32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			e.u64(d)
		}
		e.u32(uint32(t.Type))
		e.u64(off)
		offsets[i] = off
		off = (off + uint64(len(t.Data)) + align - 1) / align * align
	}
	e.pad(align)
	base := e.n
	for i, t := range tensors {
		for e.n-base < offsets[i] {
			e.bytes([]byte{0})
		}
		e.bytes(t.Data)
	}
	if e.err != nil {
		return e.err
	}
	return e.w.Flush()
}

type encoder struct {
	w   *bufio.Writer
	n   uint64
	err error
	buf [8]byte
}

func (e *encoder) bytes(b []byte) {
	if e.err != nil {
		return
	}
	_, e.err = e.w.Write(b)
	e.n += uint64(len(b))
}

func (e *encoder) u8(x uint8) { e.bytes([]byte{x}) }
func (e *encoder) u16(x uint16) {
	binary.LittleEndian.PutUint16(e.buf[:], x)
	e.bytes(e.buf[:2])
}
func (e *encoder) u32(x uint32) {
	binary.LittleEndian.PutUint32(e.buf[:], x)
	e.bytes(e.buf[:4])
}
func (e *encoder) u64(x uint64) {
	binary.LittleEndian.PutUint64(e.buf[:], x)
	e.bytes(e.buf[:8])
}
func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	e.bytes([]byte(s))
}
func (e *encoder) pad(align uint64) {
	for e.n%align != 0 {
		e.u8(0)
	}
}

func writeArr[T any](e *encoder, tag bool, t ValueType, s []T, put func(T)) {
	if tag {
		e.u32(uint32(TypeArray))
	}
	e.u32(uint32(t))
	e.u64(uint64(len(s)))
	for _, x := range s {
		put(x)
	}
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// value writes the type tag (when tag) and the value.
func (e *encoder) value(v any, tag bool) error {
	t := func(vt ValueType) {
		if tag {
			e.u32(uint32(vt))
		}
	}
	switch x := v.(type) {
	case uint8:
		t(TypeUint8)
		e.u8(x)
	case int8:
		t(TypeInt8)
		e.u8(uint8(x))
	case uint16:
		t(TypeUint16)
		e.u16(x)
	case int16:
		t(TypeInt16)
		e.u16(uint16(x))
	case uint32:
		t(TypeUint32)
		e.u32(x)
	case int32:
		t(TypeInt32)
		e.u32(uint32(x))
	case float32:
		t(TypeFloat32)
		e.u32(math.Float32bits(x))
	case bool:
		t(TypeBool)
		e.u8(b2u(x))
	case string:
		t(TypeString)
		e.str(x)
	case uint64:
		t(TypeUint64)
		e.u64(x)
	case int64:
		t(TypeInt64)
		e.u64(uint64(x))
	case float64:
		t(TypeFloat64)
		e.u64(math.Float64bits(x))
	case []uint8:
		writeArr(e, tag, TypeUint8, x, e.u8)
	case []int8:
		writeArr(e, tag, TypeInt8, x, func(y int8) { e.u8(uint8(y)) })
	case []uint16:
		writeArr(e, tag, TypeUint16, x, e.u16)
	case []int16:
		writeArr(e, tag, TypeInt16, x, func(y int16) { e.u16(uint16(y)) })
	case []uint32:
		writeArr(e, tag, TypeUint32, x, e.u32)
	case []int32:
		writeArr(e, tag, TypeInt32, x, func(y int32) { e.u32(uint32(y)) })
	case []float32:
		writeArr(e, tag, TypeFloat32, x, func(y float32) { e.u32(math.Float32bits(y)) })
	case []bool:
		writeArr(e, tag, TypeBool, x, func(y bool) { e.u8(b2u(y)) })
	case []string:
		writeArr(e, tag, TypeString, x, e.str)
	case []uint64:
		writeArr(e, tag, TypeUint64, x, e.u64)
	case []int64:
		writeArr(e, tag, TypeInt64, x, func(y int64) { e.u64(uint64(y)) })
	case []float64:
		writeArr(e, tag, TypeFloat64, x, func(y float64) { e.u64(math.Float64bits(y)) })
	case Value:
		if x.Type == TypeArray {
			if _, nested := x.v.([]Value); !nested {
				return e.value(x.v, tag)
			}
		}
		return e.fromValue(x, tag)
	default:
		return fmt.Errorf("unsupported value type %T", v)
	}
	return nil
}

// fromValue writes a Value read from a File back in its original types.
func (e *encoder) fromValue(v Value, tag bool) error {
	if tag {
		e.u32(uint32(v.Type))
	}
	switch v.Type {
	case TypeUint8, TypeBool:
		e.u8(uint8(v.v.(uint64)))
	case TypeInt8:
		e.u8(uint8(v.v.(int64)))
	case TypeUint16:
		e.u16(uint16(v.v.(uint64)))
	case TypeInt16:
		e.u16(uint16(v.v.(int64)))
	case TypeUint32:
		e.u32(uint32(v.v.(uint64)))
	case TypeInt32:
		e.u32(uint32(v.v.(int64)))
	case TypeFloat32:
		e.u32(math.Float32bits(float32(v.v.(float64))))
	case TypeString:
		e.str(v.v.(string))
	case TypeUint64:
		e.u64(v.v.(uint64))
	case TypeInt64:
		e.u64(uint64(v.v.(int64)))
	case TypeFloat64:
		e.u64(math.Float64bits(v.v.(float64)))
	case TypeArray:
		nested, ok := v.v.([]Value)
		if !ok {
			return e.value(v.v, false)
		}
		e.u32(uint32(TypeArray))
		e.u64(uint64(len(nested)))
		for _, x := range nested {
			if err := e.fromValue(x, false); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unsupported value type %v", v.Type)
	}
	return nil
}
