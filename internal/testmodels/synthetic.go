package testmodels

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// SyntheticCase is one prompt of a synthetic conformance model's golden
// (shared/models/synthetic/<arch>/golden-<quant>.json): what llama.cpp
// generated greedily from it, with the margins that say how fragile each
// step was. The README beside the files defines the fields and the
// tolerance CheckSynthetic applies.
type SyntheticCase struct {
	Model             string       `json:"model"`
	PromptIDs         []int32      `json:"prompt_ids"`
	GreedyIDs         []int32      `json:"greedy_ids"`
	FirstLogprobsTop  [][2]float64 `json:"first_logprobs_top20"`
	FirstLogitsTop    [][2]float64 `json:"first_logits_top20"`
	GreedyMargins     []float64    `json:"greedy_margins"`
	GreedyRunnerUp    []int32      `json:"greedy_runner_up"`
	LastPromptLogitL2 float64      `json:"last_prompt_logits_l2"`
}

// SyntheticModel is one file of the synthetic set and its golden.
type SyntheticModel struct {
	Arch, Quant string
	Path        string // the .gguf file
	Cases       []SyntheticCase
}

// SyntheticModels lists every (arch, quant) GGUF file that has a golden in
// shared/models/synthetic, sorted (skipping the test loudly when the shared
// models are absent). A golden that cannot be read fails the test.
func SyntheticModels(tb testing.TB) []SyntheticModel {
	tb.Helper()
	root := Dir(tb, "synthetic")
	goldens, err := filepath.Glob(filepath.Join(root, "*", "golden-*.json"))
	if err != nil {
		tb.Fatal(err)
	}
	sort.Strings(goldens)
	var out []SyntheticModel
	for _, g := range goldens {
		arch := filepath.Base(filepath.Dir(g))
		quant := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(g), "golden-"), ".json")
		b, err := os.ReadFile(g)
		if err != nil {
			tb.Fatal(err)
		}
		m := SyntheticModel{Arch: arch, Quant: quant, Path: filepath.Join(filepath.Dir(g), arch+"-"+quant+".gguf")}
		if err := json.Unmarshal(b, &m.Cases); err != nil {
			tb.Fatalf("%s: %v", g, err)
		}
		for i, c := range m.Cases {
			if len(c.GreedyMargins) != len(c.GreedyIDs) || len(c.GreedyRunnerUp) != len(c.GreedyIDs) || len(c.PromptIDs) == 0 {
				tb.Fatalf("%s: case %d is malformed", g, i)
			}
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		tb.Fatalf("no goldens under %s", root)
	}
	return out
}

// Tolerances of the synthetic README: a divergence from llama.cpp's greedy
// ids is accepted only at a near-tie (golden margin below MarginTol, our
// token the golden runner-up); first-step logprobs agree within LogprobTol.
type Tolerance struct {
	MarginTol, LogprobTol float64
	// AnyAtNearTie accepts a divergence at a near-tie whatever token was
	// chosen (for arithmetic in another float order than the reference's,
	// where a three-way near-tie can fall to the third).
	AnyAtNearTie bool
}

// SyntheticTolerance returns the README's tolerance for a quantization:
// 0.01 / 1e-4 for F32 and F16, 0.05 / 0.05 for quantized files, where
// llama.cpp quantizes the activations inside each matmul. (The README
// expects logprobs within ~1e-5 for F32 and ~1e-6 for exact Q8_0 — those are
// what llama.cpp's own arithmetic order gives; 1e-4 allows a different but
// exact F32 summation order. Q8_0 takes the 0.05 of the quantized files
// only in its margin; its logprobs must be within 1e-3.)
func SyntheticTolerance(quant string) Tolerance {
	switch quant {
	case "F32", "F16", "BF16":
		return Tolerance{MarginTol: 0.01, LogprobTol: 1e-4}
	case "Q8_0":
		return Tolerance{MarginTol: 0.05, LogprobTol: 1e-3}
	}
	return Tolerance{MarginTol: 0.05, LogprobTol: 0.05}
}

// CheckSynthetic compares a greedy run with the golden case: firstLogits
// are the raw logits at the last prompt position, generated the greedy ids
// that followed (at least len(c.GreedyIDs) of them unless the run stopped
// at an accepted divergence). It returns "" when the run matches within
// tol, else what differs.
func CheckSynthetic(c *SyntheticCase, tol Tolerance, firstLogits []float32, generated []int32) string {
	var msgs []string
	lse := logSumExp(firstLogits)
	for _, e := range c.FirstLogprobsTop {
		id := int(e[0])
		if id >= len(firstLogits) {
			return fmt.Sprintf("golden id %d outside the vocabulary of %d", id, len(firstLogits))
		}
		got := float64(firstLogits[id]) - lse
		if d := math.Abs(got - e[1]); d > tol.LogprobTol {
			msgs = append(msgs, fmt.Sprintf("first-step logprob of %d: %.6f, golden %.6f (|Δ| %.2g > %.2g)", id, got, e[1], d, tol.LogprobTol))
			break
		}
	}
	for k, want := range c.GreedyIDs {
		if k >= len(generated) {
			msgs = append(msgs, fmt.Sprintf("only %d tokens generated, golden has %d", len(generated), len(c.GreedyIDs)))
			break
		}
		got := generated[k]
		if got == want {
			continue
		}
		if c.GreedyMargins[k] < tol.MarginTol && (got == c.GreedyRunnerUp[k] || tol.AnyAtNearTie) {
			break // an accepted near-tie: the runs part here
		}
		msgs = append(msgs, fmt.Sprintf("step %d: token %d, golden %d (margin %.4g, runner-up %d); golden %v, got %v",
			k, got, want, c.GreedyMargins[k], c.GreedyRunnerUp[k], c.GreedyIDs, generated))
		break
	}
	return strings.Join(msgs, "; ")
}

func logSumExp(x []float32) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(v))
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(float64(v) - m)
	}
	return m + math.Log(s)
}
