package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestArrivalDelays checks the arrival schedule against vLLM's get_request:
// with burstiness inf every gap is 1/rate; a ramp-up's rate at request i of
// n is start + (end−start)·i/(n−1) (linear) or start·(end/start)^(i/(n−1))
// (exponential); a constant rate's gamma schedule is rescaled so the last
// arrival is at n/rate.
func TestArrivalDelays(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name string
		cfg  Config
		n    int
		want []float64 // seconds; nil = check only the last
		last float64
	}{
		{"constant, uniform", Config{RequestRate: 4, Burstiness: inf}, 8, []float64{0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2}, 2},
		{"linear ramp", Config{RequestRate: inf, Burstiness: inf, RampUpStrategy: "linear", RampUpStartRPS: 1, RampUpEndRPS: 4}, 4,
			[]float64{1, 1.5, 1.5 + 1.0/3, 1.5 + 1.0/3 + 0.25}, 1.5 + 1.0/3 + 0.25},
		{"exponential ramp", Config{RequestRate: inf, Burstiness: inf, RampUpStrategy: "exponential", RampUpStartRPS: 1, RampUpEndRPS: 16}, 5,
			[]float64{1, 1.5, 1.75, 1.875, 1.9375}, 1.9375},
		{"all at once", Config{RequestRate: inf, Burstiness: 1}, 3, []float64{0, 0, 0}, 0},
		{"poisson, rescaled", Config{RequestRate: 10, Burstiness: 1, Seed: 3}, 50, nil, 5},
		{"bursty, rescaled", Config{RequestRate: 2, Burstiness: 0.3, Seed: 9}, 20, nil, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := arrivalDelays(&tc.cfg, tc.n)
			near := func(d time.Duration, want float64) bool { return math.Abs(d.Seconds()-want) < 1e-6 }
			if !near(got[tc.n-1], tc.last) {
				t.Errorf("last arrival %v, want %gs", got[tc.n-1], tc.last)
			}
			for i, w := range tc.want {
				if !near(got[i], w) {
					t.Errorf("arrival %d at %v, want %gs", i, got[i], w)
				}
			}
			for i := 1; i < tc.n; i++ {
				if got[i] < got[i-1] {
					t.Fatalf("arrivals go back in time at %d: %v", i, got)
				}
			}
		})
	}
}

// TestGoodput counts, as vLLM's calculate_metrics, the requests whose TTFT,
// TPOT (0 for a one-token output) and E2EL all meet their objectives.
func TestGoodput(t *testing.T) {
	ms := time.Millisecond
	var s series
	for _, r := range []requestResult{
		{TTFT: 100 * ms, Latency: 500 * ms, OutputTokens: 5},  // TPOT 100 ms
		{TTFT: 300 * ms, Latency: 400 * ms, OutputTokens: 2},  // TTFT too slow for 200
		{TTFT: 50 * ms, Latency: 1050 * ms, OutputTokens: 3},  // TPOT 500 ms
		{TTFT: 150 * ms, Latency: 2000 * ms, OutputTokens: 1}, // TPOT counts as 0
	} {
		s.add(&r)
	}
	for _, tc := range []struct {
		slo  map[string]float64
		want int
	}{
		{map[string]float64{"ttft": 200}, 3},
		{map[string]float64{"tpot": 100}, 3},
		{map[string]float64{"ttft": 200, "tpot": 100}, 2},
		{map[string]float64{"ttft": 200, "tpot": 100, "e2el": 1000}, 1},
		{map[string]float64{"e2el": 400}, 1},
	} {
		if got := s.good(tc.slo); got != tc.want {
			t.Errorf("goodput under %v: %d good requests, want %d", tc.slo, got, tc.want)
		}
	}
}

// TestValidSequence is vLLM's is_valid_sequence with its defaults
// (min_len 4, max_prompt_len 1024, max_total_len 2048).
func TestValidSequence(t *testing.T) {
	for _, tc := range []struct {
		prompt, output int
		fixed, want    bool
	}{
		{4, 4, false, true}, {3, 100, false, false}, {100, 3, false, false}, {100, 3, true, true},
		{1024, 1024, false, true}, {1025, 10, false, false}, {1024, 1025, false, false},
	} {
		if got := validSequence(tc.prompt, tc.output, tc.fixed); got != tc.want {
			t.Errorf("validSequence(%d, %d, fixed %v) = %v, want %v", tc.prompt, tc.output, tc.fixed, got, tc.want)
		}
	}
}

// TestPrefixRepetitionDataset checks the dataset's shape as vLLM's
// PrefixRepetitionRandomDataset defines it: NumPrompts/NumPrefixes prompts
// on each of NumPrefixes prefixes (the remainder dropped), each of exactly
// PrefixLen+SuffixLen tokens whose first PrefixLen are its prefix's, with
// the warm-ups first and BOS only at the start.
func TestPrefixRepetitionDataset(t *testing.T) {
	const bos = -1
	words := map[string]int32{}
	tok := func(_ context.Context, text string, special bool) ([]int32, error) {
		var ids []int32
		if special {
			ids = append(ids, bos)
		}
		for _, w := range strings.Fields(text) {
			if _, ok := words[w]; !ok {
				words[w] = int32(len(words))
			}
			ids = append(ids, words[w])
		}
		return ids, nil
	}
	cfg := Config{DatasetName: "prefix_repetition", Endpoint: "/v1/completions", Tokenize: true, NumPrompts: 11, Warmup: 2,
		PrefixLen: 6, SuffixLen: 3, NumPrefixes: 3, OutputLen: 5, Seed: 4}
	prompts, err := makeDataset(context.Background(), &cfg, tok)
	if err != nil {
		t.Fatal(err)
	}
	if len(prompts) != 2+9 {
		t.Fatalf("%d prompts, want 2 warm-ups + 3 prefixes × 3", len(prompts))
	}
	perPrefix := map[string]int{}
	for i, p := range prompts {
		if len(p.TokenIDs) != 9 || p.InputLen != 9 || p.OutputLen != 5 || p.TokenIDs[0] != bos || slices.Contains(p.TokenIDs[1:], bos) {
			t.Fatalf("prompt %d: %v (input %d, output %d)", i, p.TokenIDs, p.InputLen, p.OutputLen)
		}
		if i >= 2 {
			perPrefix[fmt.Sprint(p.TokenIDs[:6])]++
		}
	}
	if len(perPrefix) != 3 {
		t.Fatalf("%d distinct prefixes among the measured prompts, want 3: %v", len(perPrefix), perPrefix)
	}
	for k, n := range perPrefix {
		if n != 3 {
			t.Errorf("prefix %s has %d prompts, want 3", k, n)
		}
	}
}
