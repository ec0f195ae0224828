package pooling

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestAcc: the three pooling types over rows whose results are worked by
// hand: rows (1,2), (3,4), (5,6); LAST (5,6), MEAN (3,4), CLS (1,2);
// normalized, (3,4) is (0.6,0.8).
func TestAcc(t *testing.T) {
	rows := []float32{1, 2, 3, 4, 5, 6}
	tests := []struct {
		p    Params
		want []float32
	}{
		{Params{Type: Last}, []float32{5, 6}},
		{Params{Type: Mean}, []float32{3, 4}},
		{Params{Type: CLS}, []float32{1, 2}},
		{Params{Type: Mean, Normalize: true}, []float32{0.6, 0.8}},
		{Params{Type: Last, Normalize: true}, []float32{5 / 7.810249675906654, 6 / 7.810249675906654}},
	}
	for _, tt := range tests {
		a := NewAcc(tt.p)
		if a.Result() != nil {
			t.Fatal("a result before any row")
		}
		a.Add(0, rows, 2)
		if got := a.Result(); !slices.Equal(got, tt.want) {
			t.Errorf("%+v: %v, want %v", tt.p, got, tt.want)
		}
	}
}

// TestAccChunkInvariance: any cut of the prompt into chunks gives the
// same bits as one chunk, and a restart at position 0 (a preempted
// request computed again) forgets the earlier rows.
func TestAccChunkInvariance(t *testing.T) {
	const dim, n = 16, 37
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([]float32, dim*n)
	for i := range rows {
		rows[i] = rng.Float32()*2 - 1
	}
	for _, typ := range []Type{Last, Mean, CLS} {
		p := Params{Type: typ, Normalize: true}
		whole := NewAcc(p)
		whole.Add(0, rows, dim)
		want := whole.Result()
		for _, cuts := range [][]int{{1}, {5, 6, 30}, {36}, {2, 3, 4, 5, 6, 7}} {
			a := NewAcc(p)
			a.Add(0, rows[:dim*3], dim) // a first attempt, preempted
			start := 0
			for _, c := range append(cuts, n) {
				a.Add(start, rows[start*dim:c*dim], dim)
				start = c
			}
			if got := a.Result(); !slices.Equal(got, want) {
				t.Errorf("%v cut at %v: %v, want %v", typ, cuts, got, want)
			}
		}
	}
}

// TestParseConfig: vLLM's --pooler-config JSON (its PoolerConfig field
// names), over the default LAST + normalize.
func TestParseConfig(t *testing.T) {
	tests := []struct {
		in   string
		want Params
		err  string
	}{
		{`{}`, Default(), ""},
		{`{"pooling_type": "MEAN"}`, Params{Type: Mean, Normalize: true}, ""},
		{`{"pooling_type": "cls", "normalize": false}`, Params{Type: CLS}, ""},
		{`{"normalize": false}`, Params{Type: Last}, ""},
		{`{"pooling_type": "ALL"}`, Default(), "not supported"},
		{`{"pooling_type": "STEP"}`, Default(), "not supported"},
		{`{"dimensions": 8}`, Default(), "unknown field"},
		{`{"softmax": true}`, Default(), "unknown field"},
		{`MEAN`, Default(), "pooler config"},
		{`{} {}`, Default(), "after the JSON object"},
	}
	for _, tt := range tests {
		got, err := ParseConfig(tt.in, Default())
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}
