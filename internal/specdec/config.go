package specdec

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrConfig is wrapped by every ParseConfig error.
var ErrConfig = errors.New("speculative config")

// Config is the part of vLLM's SpeculativeConfig govllm implements.
type Config struct {
	// Method is "ngram" (prompt lookup) or "draft_model" (Model proposes).
	Method string `json:"method"`
	// Model is the draft model's path (method draft_model).
	Model string `json:"model,omitempty"`
	// NumSpeculativeTokens is k, the most tokens drafted per step.
	NumSpeculativeTokens int `json:"num_speculative_tokens"`
	// PromptLookupMin and PromptLookupMax bound the n-gram length matched.
	PromptLookupMin int `json:"prompt_lookup_min,omitempty"`
	PromptLookupMax int `json:"prompt_lookup_max,omitempty"`
}

// maxSpecTokens bounds k: a step verifies k+1 tokens per sequence.
const maxSpecTokens = 32

// ParseConfig reads vLLM's --speculative-config JSON. Unknown keys, and
// known vLLM keys with a value govllm does not implement (a draft model,
// EAGLE, MTP, …), are refused naming them. With neither lookup bound set
// both are 5, and one bound set stands for the other, as vLLM does.
func ParseConfig(s string) (Config, error) {
	var raw struct {
		Method         string  `json:"method"`
		NumSpecTokens  *int    `json:"num_speculative_tokens"`
		LookupMin      *int    `json:"prompt_lookup_min"`
		LookupMax      *int    `json:"prompt_lookup_max"`
		Model          *string `json:"model"`
		DraftTPSize    *int    `json:"draft_tensor_parallel_size"`
		DisableByBatch *int    `json:"disable_by_batch_size"`
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Config{}, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if dec.More() {
		return Config{}, fmt.Errorf("%w: trailing data after the JSON object", ErrConfig)
	}
	bad := func(format string, a ...any) (Config, error) {
		return Config{}, fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, a...))
	}
	if raw.Model != nil && (raw.Method == "" || raw.Method == "draft_model") {
		raw.Method = "draft_model" // vLLM infers the method from a model that is not EAGLE/MTP
	}
	switch {
	case raw.Method == "":
		return bad("\"method\" is required (\"ngram\") or \"model\" (a draft model)")
	case raw.Method != "ngram" && raw.Method != "draft_model":
		return bad("method %q is not implemented (\"ngram\" or a draft \"model\")", raw.Method)
	case raw.Method == "draft_model" && (raw.Model == nil || *raw.Model == ""):
		return bad("method \"draft_model\" needs \"model\"")
	case raw.Method == "ngram" && raw.Model != nil:
		return bad("\"model\" is not used by method \"ngram\"")
	case raw.Method == "draft_model" && (raw.LookupMin != nil || raw.LookupMax != nil):
		return bad("\"prompt_lookup_min\"/\"prompt_lookup_max\" are not used by a draft model")
	case raw.NumSpecTokens == nil:
		return bad("\"num_speculative_tokens\" is required")
	case *raw.NumSpecTokens < 1 || *raw.NumSpecTokens > maxSpecTokens:
		return bad("\"num_speculative_tokens\" must be 1…%d, got %d", maxSpecTokens, *raw.NumSpecTokens)
	case raw.DraftTPSize != nil && *raw.DraftTPSize != 1:
		return bad("\"draft_tensor_parallel_size\" must be 1 here, got %d", *raw.DraftTPSize)
	case raw.DisableByBatch != nil:
		return bad("\"disable_by_batch_size\" is not implemented")
	}
	if raw.Method == "draft_model" {
		return Config{Method: raw.Method, Model: *raw.Model, NumSpeculativeTokens: *raw.NumSpecTokens}, nil
	}
	c := Config{Method: raw.Method, NumSpeculativeTokens: *raw.NumSpecTokens, PromptLookupMin: 5, PromptLookupMax: 5}
	switch {
	case raw.LookupMin != nil && raw.LookupMax != nil:
		c.PromptLookupMin, c.PromptLookupMax = *raw.LookupMin, *raw.LookupMax
	case raw.LookupMin != nil:
		c.PromptLookupMin, c.PromptLookupMax = *raw.LookupMin, *raw.LookupMin
	case raw.LookupMax != nil:
		c.PromptLookupMin, c.PromptLookupMax = *raw.LookupMax, *raw.LookupMax
	}
	switch {
	case c.PromptLookupMin < 1:
		return bad("\"prompt_lookup_min\" must be at least 1, got %d", c.PromptLookupMin)
	case c.PromptLookupMax < c.PromptLookupMin:
		return bad("\"prompt_lookup_max\" (%d) is below \"prompt_lookup_min\" (%d)", c.PromptLookupMax, c.PromptLookupMin)
	}
	return c, nil
}

// String renders c as the JSON vLLM would print.
func (c Config) String() string {
	b, _ := json.Marshal(c)
	return string(b)
}
