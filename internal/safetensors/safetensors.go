package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// MaxHeaderSize caps the JSON header (as the reference implementation does).
const MaxHeaderSize = 100 << 20

// DType is a tensor element type as spelled in the header.
type DType string

// Element types.
const (
	F64  DType = "F64"
	F32  DType = "F32"
	F16  DType = "F16"
	BF16 DType = "BF16"
	I64  DType = "I64"
	I32  DType = "I32"
	I16  DType = "I16"
	I8   DType = "I8"
	U8   DType = "U8"
	Bool DType = "BOOL"
)

var dtypeSize = map[DType]int64{F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, Bool: 1,
	"U16": 2, "U32": 4, "U64": 8, "F8_E4M3": 1, "F8_E5M2": 1}

// Size is the byte size of one element (0 for an unknown dtype).
func (d DType) Size() int { return int(dtypeSize[d]) }

// ErrFormat marks malformed, truncated or unsupported input (errors.Is).
var ErrFormat = errors.New("safetensors: malformed file")

// FormatError names the file and the problem; it wraps ErrFormat.
type FormatError struct {
	Path string
	Msg  string
}

func (e *FormatError) Error() string { return fmt.Sprintf("safetensors: %s: %s", e.Path, e.Msg) }
func (e *FormatError) Unwrap() error { return ErrFormat }

// TensorInfo is one tensor of the header. Begin and End are byte offsets
// into the data section (after the header).
type TensorInfo struct {
	Name       string
	DType      DType
	Shape      []int64
	Begin, End int64
}

// NumElements is the product of Shape (1 for a scalar).
func (t *TensorInfo) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// File is a parsed safetensors file.
type File struct {
	Path       string
	Metadata   map[string]string
	Names      []string // tensor names, sorted
	DataOffset int64    // 8 + header length
	DataSize   int64

	tensors map[string]*TensorInfo
	data    []byte
}

// Tensor returns the named tensor's info, or nil.
func (f *File) Tensor(name string) *TensorInfo { return f.tensors[name] }

// ReadFile parses the header of the file at path; the data is not read.
func ReadFile(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	var lenBuf [8]byte
	if _, err := io.ReadFull(fd, lenBuf[:]); err != nil {
		return nil, &FormatError{path, fmt.Sprintf("reading header length: %v", err)}
	}
	n, err := headerLen(path, binary.LittleEndian.Uint64(lenBuf[:]), st.Size())
	if err != nil {
		return nil, err
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(fd, hdr); err != nil {
		return nil, &FormatError{path, fmt.Sprintf("reading header: %v", err)}
	}
	return parseHeader(path, hdr, st.Size()-8-n)
}

// Parse parses a whole file held in memory (data included).
func Parse(name string, b []byte) (*File, error) {
	if len(b) < 8 {
		return nil, &FormatError{name, fmt.Sprintf("file of %d bytes is too short", len(b))}
	}
	n, err := headerLen(name, binary.LittleEndian.Uint64(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	f, err := parseHeader(name, b[8:8+n], int64(len(b))-8-n)
	if err != nil {
		return nil, err
	}
	f.data = b[8+n:]
	return f, nil
}

func headerLen(path string, n uint64, size int64) (int64, error) {
	if n > MaxHeaderSize {
		return 0, &FormatError{path, fmt.Sprintf("header length %d exceeds the %d byte cap", n, MaxHeaderSize)}
	}
	if int64(n) > size-8 {
		return 0, &FormatError{path, fmt.Sprintf("header length %d exceeds the file (%d bytes)", n, size)}
	}
	if n < 2 {
		return 0, &FormatError{path, fmt.Sprintf("header length %d is too short", n)}
	}
	return int64(n), nil
}

type rawTensor struct {
	DType       *DType   `json:"dtype"`
	Shape       *[]int64 `json:"shape"`
	DataOffsets *[]int64 `json:"data_offsets"`
}

func parseHeader(path string, hdr []byte, dataSize int64) (*File, error) {
	bad := func(format string, a ...any) error { return &FormatError{path, fmt.Sprintf(format, a...)} }
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &raw); err != nil {
		return nil, bad("header is not a JSON object: %v", err)
	}
	f := &File{Path: path, DataOffset: 8 + int64(len(hdr)), DataSize: dataSize, tensors: make(map[string]*TensorInfo, len(raw))}
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &f.Metadata); err != nil {
				return nil, bad("__metadata__ is not a string map: %v", err)
			}
			continue
		}
		var rt rawTensor
		if err := json.Unmarshal(msg, &rt); err != nil {
			return nil, bad("tensor %q: %v", name, err)
		}
		if rt.DType == nil || rt.Shape == nil || rt.DataOffsets == nil {
			return nil, bad("tensor %q lacks dtype, shape or data_offsets", name)
		}
		t := &TensorInfo{Name: name, DType: *rt.DType, Shape: *rt.Shape}
		size := dtypeSize[t.DType]
		if size == 0 {
			return nil, bad("tensor %q has unknown dtype %q", name, t.DType)
		}
		if len(*rt.DataOffsets) != 2 {
			return nil, bad("tensor %q: data_offsets has %d values, want 2", name, len(*rt.DataOffsets))
		}
		t.Begin, t.End = (*rt.DataOffsets)[0], (*rt.DataOffsets)[1]
		n := int64(1)
		for _, d := range t.Shape {
			if d < 0 || (d > 0 && n > (1<<62)/d) {
				return nil, bad("tensor %q has bad shape %v", name, t.Shape)
			}
			n *= d
		}
		if n > (1<<62)/size {
			return nil, bad("tensor %q has bad shape %v", name, t.Shape)
		}
		if t.Begin < 0 || t.End < t.Begin || t.End > dataSize {
			return nil, bad("tensor %q: data_offsets [%d, %d] outside the %d data bytes", name, t.Begin, t.End, dataSize)
		}
		if t.End-t.Begin != n*size {
			return nil, bad("tensor %q: %d bytes for %s %v, want %d", name, t.End-t.Begin, t.DType, t.Shape, n*size)
		}
		f.tensors[name] = t
		f.Names = append(f.Names, name)
	}
	sort.Strings(f.Names)
	byOff := make([]*TensorInfo, 0, len(f.tensors))
	for _, t := range f.tensors {
		byOff = append(byOff, t)
	}
	sort.Slice(byOff, func(i, j int) bool {
		if byOff[i].Begin != byOff[j].Begin {
			return byOff[i].Begin < byOff[j].Begin
		}
		return byOff[i].Name < byOff[j].Name
	})
	for i := 1; i < len(byOff); i++ {
		if byOff[i].Begin < byOff[i-1].End {
			return nil, bad("tensors %q and %q overlap", byOff[i-1].Name, byOff[i].Name)
		}
	}
	return f, nil
}

// ReadData reads the data section into memory (a no-op once held).
func (f *File) ReadData() error {
	if f.data != nil {
		return nil
	}
	fd, err := os.Open(f.Path)
	if err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	if st.Size() != f.DataOffset+f.DataSize {
		return &FormatError{f.Path, fmt.Sprintf("file size changed since parsing (%d, was %d)", st.Size(), f.DataOffset+f.DataSize)}
	}
	buf := make([]byte, f.DataSize)
	if _, err := fd.ReadAt(buf, f.DataOffset); err != nil {
		return fmt.Errorf("safetensors: %s: reading data: %w", f.Path, err)
	}
	f.data = buf
	return nil
}

// TensorData returns t's bytes: a slice of the data held once ReadData
// has run (or after Parse), else t's bytes alone, read from the file into a
// new slice (so a loader never holds the whole file).
func (f *File) TensorData(t *TensorInfo) ([]byte, error) {
	if t == nil {
		return nil, fmt.Errorf("safetensors: %s: nil tensor", f.Path)
	}
	if f.data == nil {
		fd, err := os.Open(f.Path)
		if err != nil {
			return nil, fmt.Errorf("safetensors: %w", err)
		}
		defer fd.Close()
		b := make([]byte, t.End-t.Begin)
		if _, err := fd.ReadAt(b, f.DataOffset+t.Begin); err != nil {
			return nil, fmt.Errorf("safetensors: %s: reading tensor %q: %w", f.Path, t.Name, err)
		}
		return b, nil
	}
	return f.data[t.Begin:t.End:t.End], nil
}

// Set is the safetensors files of one model directory.
type Set struct {
	Dir   string
	Files []*File
	where map[string]*File
}

// IndexFile is the name of the shard index.
const IndexFile = "model.safetensors.index.json"

// OpenDir parses the headers of dir's safetensors files: the shards named by
// model.safetensors.index.json when it exists, else every *.safetensors.
// A tensor present in two files, or named by the index but absent from its
// shard, is an error.
func OpenDir(dir string) (*Set, error) {
	s := &Set{Dir: dir, where: map[string]*File{}}
	var names []string
	var weightMap map[string]string
	idx, err := os.ReadFile(filepath.Join(dir, IndexFile))
	switch {
	case err == nil:
		var ix struct {
			WeightMap map[string]string `json:"weight_map"`
		}
		if err := json.Unmarshal(idx, &ix); err != nil {
			return nil, &FormatError{filepath.Join(dir, IndexFile), fmt.Sprintf("bad index: %v", err)}
		}
		if len(ix.WeightMap) == 0 {
			return nil, &FormatError{filepath.Join(dir, IndexFile), "empty weight_map"}
		}
		weightMap = ix.WeightMap
		seen := map[string]bool{}
		for _, shard := range ix.WeightMap {
			if shard != filepath.Base(shard) || shard == "" {
				return nil, &FormatError{filepath.Join(dir, IndexFile), fmt.Sprintf("shard name %q is not a plain file name", shard)}
			}
			if !seen[shard] {
				seen[shard] = true
				names = append(names, shard)
			}
		}
		sort.Strings(names)
	case errors.Is(err, os.ErrNotExist):
		m, err := filepath.Glob(filepath.Join(dir, "*.safetensors"))
		if err != nil {
			return nil, fmt.Errorf("safetensors: %w", err)
		}
		for _, p := range m {
			names = append(names, filepath.Base(p))
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("safetensors: %s: no *.safetensors files: %w", dir, os.ErrNotExist)
		}
	default:
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	for _, n := range names {
		f, err := ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		s.Files = append(s.Files, f)
		for _, t := range f.Names {
			if prev, dup := s.where[t]; dup {
				return nil, &FormatError{f.Path, fmt.Sprintf("tensor %q also in %s", t, prev.Path)}
			}
			s.where[t] = f
		}
	}
	for t, shard := range weightMap {
		f := s.where[t]
		if f == nil || filepath.Base(f.Path) != shard {
			return nil, &FormatError{filepath.Join(dir, IndexFile), fmt.Sprintf("tensor %q is not in shard %s", t, shard)}
		}
	}
	return s, nil
}

// Tensor finds a tensor across the files: its file and info, or nil, nil.
func (s *Set) Tensor(name string) (*File, *TensorInfo) {
	f := s.where[name]
	if f == nil {
		return nil, nil
	}
	return f, f.Tensor(name)
}

// ReadData reads every file's data into memory.
func (s *Set) ReadData() error {
	for _, f := range s.Files {
		if err := f.ReadData(); err != nil {
			return err
		}
	}
	return nil
}
