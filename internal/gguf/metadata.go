package gguf

import (
	"fmt"
	"math"
)

// Has reports whether key is present.
func (f *File) Has(key string) bool {
	_, ok := f.Metadata[key]
	return ok
}

func (f *File) get(key string) (Value, error) {
	v, ok := f.Metadata[key]
	if !ok {
		return Value{}, fmt.Errorf("%w: %s: %q", ErrKeyNotFound, f.Path, key)
	}
	return v, nil
}

func (f *File) typeErr(key string, v Value, want string) error {
	return &TypeError{Path: f.Path, Key: key, Got: v.TypeName(), Want: want}
}

// String returns a string value.
func (f *File) String(key string) (string, error) {
	v, err := f.get(key)
	if err != nil {
		return "", err
	}
	s, ok := v.v.(string)
	if !ok {
		return "", f.typeErr(key, v, "string")
	}
	return s, nil
}

// Uint returns a non-negative integer value of any integer type.
func (f *File) Uint(key string) (uint64, error) {
	v, err := f.get(key)
	if err != nil {
		return 0, err
	}
	if v.Type == TypeBool {
		return 0, f.typeErr(key, v, "unsigned integer")
	}
	switch x := v.v.(type) {
	case uint64:
		return x, nil
	case int64:
		if x >= 0 {
			return uint64(x), nil
		}
		return 0, fmt.Errorf("gguf: %s: key %q is negative (%d), want unsigned integer", f.Path, key, x)
	}
	return 0, f.typeErr(key, v, "unsigned integer")
}

// Int returns an integer value of any integer type that fits in int64.
func (f *File) Int(key string) (int64, error) {
	v, err := f.get(key)
	if err != nil {
		return 0, err
	}
	if v.Type == TypeBool {
		return 0, f.typeErr(key, v, "integer")
	}
	switch x := v.v.(type) {
	case int64:
		return x, nil
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), nil
		}
		return 0, fmt.Errorf("gguf: %s: key %q = %d overflows int64", f.Path, key, x)
	}
	return 0, f.typeErr(key, v, "integer")
}

// Float returns a float32 or float64 value as float64.
func (f *File) Float(key string) (float64, error) {
	v, err := f.get(key)
	if err != nil {
		return 0, err
	}
	x, ok := v.v.(float64)
	if !ok {
		return 0, f.typeErr(key, v, "float")
	}
	return x, nil
}

// Bool returns a bool value.
func (f *File) Bool(key string) (bool, error) {
	v, err := f.get(key)
	if err != nil {
		return false, err
	}
	if v.Type != TypeBool {
		return false, f.typeErr(key, v, "bool")
	}
	return v.v.(uint64) == 1, nil
}

func arrayOf[T any](f *File, key, want string) ([]T, error) {
	v, err := f.get(key)
	if err != nil {
		return nil, err
	}
	s, ok := v.v.([]T)
	if !ok || v.Type != TypeArray {
		return nil, f.typeErr(key, v, want)
	}
	return s, nil
}

// Strings returns an array of strings.
func (f *File) Strings(key string) ([]string, error) {
	return arrayOf[string](f, key, "array[string]")
}

// Float32s returns an array of float32.
func (f *File) Float32s(key string) ([]float32, error) {
	return arrayOf[float32](f, key, "array[float32]")
}

// Int32s returns an array of int32 (token types are stored this way).
func (f *File) Int32s(key string) ([]int32, error) {
	return arrayOf[int32](f, key, "array[int32]")
}

// Uint32s returns an array of uint32.
func (f *File) Uint32s(key string) ([]uint32, error) {
	return arrayOf[uint32](f, key, "array[uint32]")
}

// Ints returns an array of any integer element type as []int64 (a copy).
func (f *File) Ints(key string) ([]int64, error) {
	v, err := f.get(key)
	if err != nil {
		return nil, err
	}
	conv := func(n int, at func(int) int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = at(i)
		}
		return out
	}
	switch a := v.v.(type) {
	case []uint8:
		return conv(len(a), func(i int) int64 { return int64(a[i]) }), nil
	case []int8:
		return conv(len(a), func(i int) int64 { return int64(a[i]) }), nil
	case []uint16:
		return conv(len(a), func(i int) int64 { return int64(a[i]) }), nil
	case []int16:
		return conv(len(a), func(i int) int64 { return int64(a[i]) }), nil
	case []uint32:
		return conv(len(a), func(i int) int64 { return int64(a[i]) }), nil
	case []int32:
		return conv(len(a), func(i int) int64 { return int64(a[i]) }), nil
	case []int64:
		return conv(len(a), func(i int) int64 { return a[i] }), nil
	case []uint64:
		for _, x := range a {
			if x > math.MaxInt64 {
				return nil, fmt.Errorf("gguf: %s: key %q holds %d, overflows int64", f.Path, key, x)
			}
		}
		return conv(len(a), func(i int) int64 { return int64(a[i]) }), nil
	}
	return nil, f.typeErr(key, v, "array of integers")
}
