package sampling

import (
	"math"
	"testing"
)

func TestApplyMask(t *testing.T) {
	tests := []struct {
		name  string
		vocab int
		mask  []uint64
		allow []int
	}{
		{"one token", 70, []uint64{0, 1 << 3}, []int{67}},
		{"a full word and a bit", 130, []uint64{^uint64(0), 0, 1}, append(seq(64), 128)},
		{"nothing", 10, []uint64{0}, nil},
		{"mask shorter than the vocabulary", 100, []uint64{1}, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logits := make([]float32, tt.vocab)
			for i := range logits {
				logits[i] = float32(i)
			}
			any := ApplyMask(logits, tt.mask)
			allowed := map[int]bool{}
			for _, a := range tt.allow {
				allowed[a] = true
			}
			for i, l := range logits {
				if allowed[i] != !math.IsInf(float64(l), -1) || allowed[i] && l != float32(i) {
					t.Fatalf("logit %d = %v, allowed %v", i, l, allowed[i])
				}
			}
			if any != (len(tt.allow) > 0) {
				t.Fatalf("any = %v", any)
			}
		})
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
