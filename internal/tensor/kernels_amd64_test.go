//go:build amd64 && !purego

package tensor

import (
	"slices"
	"testing"
)

func init() {
	// On a CPU with avx512 the tests also run its level as a CPU without
	// AVX512_VBMI gets it.
	if slices.Contains(archImpls(), avx512Kernels) {
		q4TestLevels = append(q4TestLevels, avx512NoVBMIKernels)
	}
}

// TestX86Levels: each level needs every extension its kernels use; the
// packed Q4_0 kernels (VPMULTISHIFTQB) need AVX512_VBMI, which Cascade
// Lake lacks while it has VNNI.
func TestX86Levels(t *testing.T) {
	all := x86Features{avx2: true, fma: true, f16c: true,
		avx512f: true, avx512vl: true, avx512bw: true, avx512dq: true, avx512vnni: true, avx512vbmi: true}
	without := func(f func(*x86Features)) x86Features { c := all; f(&c); return c }
	for _, tc := range []struct {
		name string
		f    x86Features
		want []*kernels
		q4p  bool // the last level's
	}{
		{"all", all, []*kernels{avx2Kernels, avx512Kernels}, true},
		{"no VBMI (Cascade Lake)", without(func(f *x86Features) { f.avx512vbmi = false }), []*kernels{avx2Kernels, avx512NoVBMIKernels}, false},
		{"no DQ", without(func(f *x86Features) { f.avx512dq = false }), []*kernels{avx2Kernels}, false},
		{"no VNNI (Skylake-SP)", without(func(f *x86Features) { f.avx512vnni, f.avx512vbmi = false, false }), []*kernels{avx2Kernels}, false},
		{"no BW", without(func(f *x86Features) { f.avx512bw = false }), []*kernels{avx2Kernels}, false},
		{"no VL", without(func(f *x86Features) { f.avx512vl = false }), []*kernels{avx2Kernels}, false},
		{"no F16C", without(func(f *x86Features) { f.f16c = false }), nil, false},
		{"no FMA", without(func(f *x86Features) { f.fma = false }), nil, false},
		{"none", x86Features{}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := x86Levels(tc.f)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("levels %v, want %v", levelNames(got), levelNames(tc.want))
			}
			if len(got) > 0 && got[len(got)-1].q4p != tc.q4p {
				t.Fatalf("%s: q4p %v, want %v", got[len(got)-1].name, got[len(got)-1].q4p, tc.q4p)
			}
		})
	}
	// The level without VBMI is the avx512 level in all else.
	if k := avx512NoVBMIKernels; k.name != "avx512" || k.q8p == nil || k.q4p {
		t.Fatalf("avx512 without VBMI: name %q, q8p %v, q4p %v", k.name, k.q8p != nil, k.q4p)
	}
}

func levelNames(l []*kernels) []string {
	var s []string
	for _, k := range l {
		s = append(s, k.name+map[bool]string{false: "", true: "+q4p"}[k.q4p])
	}
	return s
}
