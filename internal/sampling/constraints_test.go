package sampling

import (
	"slices"
	"testing"

	"govllm/internal/apierr"
)

// TestTokenConstraints: logit_bias, allowed_token_ids and bad_words change
// which token is drawn, greedy or random (every random draw obeys them).
func TestTokenConstraints(t *testing.T) {
	logits := []float32{0, 1, 9, 8, 2, 0.5} // token 2 is the best, then 3
	tests := []struct {
		name    string
		p       func(*Params)
		output  []int32
		greedy  int32
		allowed []int32 // the tokens a random draw may give
	}{
		{"no constraint", nil, nil, 2, []int32{0, 1, 2, 3, 4, 5}},
		{"bias up", func(p *Params) { p.LogitBias = map[int32]float32{5: 100} }, nil, 5, []int32{5}},
		{"bias down", func(p *Params) { p.LogitBias = map[int32]float32{2: -100} }, nil, 3, []int32{0, 1, 3, 4, 5}},
		{"allowed", func(p *Params) { p.AllowedTokenIDs = []int32{0, 4} }, nil, 4, []int32{0, 4}},
		{"allowed and biased", func(p *Params) { p.AllowedTokenIDs = []int32{0, 4}; p.LogitBias = map[int32]float32{0: 5} }, nil, 0, []int32{0, 4}},
		{"bad word of one token", func(p *Params) { p.BadWordsTokenIDs = [][]int32{{2}} }, nil, 3, []int32{0, 1, 3, 4, 5}},
		{"bad word after its prefix", func(p *Params) { p.BadWordsTokenIDs = [][]int32{{1, 2}} }, []int32{4, 1}, 3, []int32{0, 1, 3, 4, 5}},
		{"bad word without its prefix", func(p *Params) { p.BadWordsTokenIDs = [][]int32{{1, 2}} }, []int32{1, 4}, 2, []int32{0, 1, 2, 3, 4, 5}},
		{"bad word longer than the output", func(p *Params) { p.BadWordsTokenIDs = [][]int32{{1, 1, 2}} }, []int32{1}, 2, []int32{0, 1, 2, 3, 4, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Sampler
			p := params(tt.p)
			p.Temperature = 0
			if got, _ := s.Sample(slices.Clone(logits), p, nil, tt.output, -1, nil); got != tt.greedy {
				t.Errorf("greedy: got %d, want %d", got, tt.greedy)
			}
			p.Temperature = 5 // flat enough that every token shows up
			rng := NewRNG(3)
			seen := map[int32]bool{}
			for range 2000 {
				got, _ := s.Sample(slices.Clone(logits), p, nil, tt.output, -1, &rng)
				if !slices.Contains(tt.allowed, got) {
					t.Fatalf("random draw %d, allowed %v", got, tt.allowed)
				}
				seen[got] = true
			}
			if len(seen) != len(tt.allowed) {
				t.Errorf("random draws gave %v, want each of %v", seen, tt.allowed)
			}
		})
	}
}

func TestValidateConstraints(t *testing.T) {
	tests := []struct {
		name  string
		p     func(*Params)
		param string
	}{
		{"bias at the bounds", func(p *Params) { p.LogitBias = map[int32]float32{1: -100, 2: 100} }, ""},
		{"bias above 100", func(p *Params) { p.LogitBias = map[int32]float32{1: 100.5} }, "logit_bias"},
		{"bias below -100", func(p *Params) { p.LogitBias = map[int32]float32{1: -101} }, "logit_bias"},
		{"empty allowed_token_ids", func(p *Params) { p.AllowedTokenIDs = []int32{} }, "allowed_token_ids"},
		{"empty bad word", func(p *Params) { p.BadWords = []string{""} }, "bad_words"},
	}
	for _, tt := range tests {
		err := params(tt.p).Validate()
		got := ""
		if e, ok := err.(*apierr.Error); ok {
			got = e.Param
		}
		if got != tt.param || (err == nil) != (tt.param == "") {
			t.Errorf("%s: %v, want param %q", tt.name, err, tt.param)
		}
	}
}
