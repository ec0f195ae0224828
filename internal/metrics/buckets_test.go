package metrics

import (
	"slices"
	"strconv"
	"testing"
)

func TestBuild125Buckets(t *testing.T) {
	base := []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}
	tests := []struct {
		max  int
		want []float64
	}{
		{0, nil},
		{1, []float64{1}},
		{4, []float64{1, 2}},
		{5, []float64{1, 2, 5}},
		{1000, base},
		{1024, base},
		{2048, append(slices.Clone(base), 2000)},
		{4096, append(slices.Clone(base), 2000)},
		{8192, append(slices.Clone(base), 2000, 5000)},
		{32768, append(slices.Clone(base), 2000, 5000, 10000, 20000)},
		{131072, append(slices.Clone(base), 2000, 5000, 10000, 20000, 50000, 100000)},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.max), func(t *testing.T) {
			if got := Build125Buckets(tt.max); !slices.Equal(got, tt.want) {
				t.Errorf("Build125Buckets(%d) = %v, want %v", tt.max, got, tt.want)
			}
		})
	}
	// No overflow near the int range: the series ends at 5e18.
	got := Build125Buckets(int(^uint(0) >> 1))
	if last := got[len(got)-1]; last != 5e18 {
		t.Errorf("Build125Buckets(MaxInt) ends at %g, want 5e18", last)
	}
}
