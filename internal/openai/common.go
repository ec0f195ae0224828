package openai

import (
	"bytes"
	"encoding/json"
	"govllm/internal/apierr"
)

// Usage counts tokens for one request: completion tokens summed over every
// choice, prompt tokens counted once per prompt (as vLLM does).
type Usage struct {
	PromptTokens        int                  `json:"prompt_tokens"`
	CompletionTokens    int                  `json:"completion_tokens"`
	TotalTokens         int                  `json:"total_tokens"`
	PromptTokensDetails *PromptTokensDetails `json:"prompt_tokens_details,omitempty"`
}

// PromptTokensDetails reports prefix-cache hits.
type PromptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// NewUsage fills TotalTokens; cached > 0 adds prompt_tokens_details.
func NewUsage(prompt, completion, cached int) *Usage {
	u := &Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	if cached > 0 {
		u.PromptTokensDetails = &PromptTokensDetails{CachedTokens: cached}
	}
	return u
}

// StreamOptions is the "stream_options" object.
type StreamOptions struct {
	IncludeUsage         bool `json:"include_usage"`
	ContinuousUsageStats bool `json:"continuous_usage_stats"`
}

// Stop is "stop": null, a string, or an array of strings.
type Stop []string

// UnmarshalJSON accepts a string or an array of strings.
func (s *Stop) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*s = nil
		return nil
	case len(b) > 0 && b[0] == '"':
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return apierr.New("stop", "expected a string or an array of strings")
		}
		*s = Stop{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return apierr.New("stop", "expected a string or an array of strings")
	}
	*s = many
	return nil
}

// MaxPrompts caps the prompts of one completions request. Each prompt is
// its own engine request (with n sequences), so the cap bounds what one
// HTTP request can queue; 256 is vLLM's default max_num_seqs, so the
// prompts of a request at the cap can all run in one engine step there.
// vLLM itself has no cap.
const MaxPrompts = 256

// PromptInput is one prompt: text, or token ids when IsTokens.
type PromptInput struct {
	Text     string
	TokenIDs []int32
	IsTokens bool
}

// Prompt is the completions "prompt": a string, an array of strings, an
// array of token ids, or an array of arrays of token ids (OpenAI's and
// vLLM's shapes). The array-of-strings and array-of-arrays forms carry
// several prompts: each element is one prompt, served as its own engine
// request. A null or absent prompt decodes to an empty Prompt.
type Prompt []PromptInput

// UnmarshalJSON implements the accepted shapes.
func (p *Prompt) UnmarshalJSON(b []byte) error {
	*p = nil
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	bad := apierr.New("prompt", "expected a string, an array of strings, an array of token ids, or an array of arrays of token ids")
	if len(b) > 0 && b[0] == '"' {
		var text string
		if err := json.Unmarshal(b, &text); err != nil {
			return bad
		}
		*p = Prompt{{Text: text}}
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return bad
	}
	if len(items) == 0 {
		return apierr.New("prompt", "must not be empty")
	}
	first := bytes.TrimSpace(items[0])
	switch {
	case len(first) > 0 && first[0] == '"':
		var texts []string
		if err := json.Unmarshal(b, &texts); err != nil {
			return bad
		}
		*p = make(Prompt, len(texts))
		for i, t := range texts {
			(*p)[i] = PromptInput{Text: t}
		}
	case len(first) > 0 && first[0] == '[':
		var lists [][]int32
		if err := json.Unmarshal(b, &lists); err != nil {
			return apierr.New("prompt", "token ids must be integers in int32 range")
		}
		*p = make(Prompt, len(lists))
		for i, ids := range lists {
			(*p)[i] = PromptInput{TokenIDs: ids, IsTokens: true}
		}
	default:
		var ids []int32
		if err := json.Unmarshal(b, &ids); err != nil {
			return apierr.New("prompt", "token ids must be integers in int32 range")
		}
		*p = Prompt{{TokenIDs: ids, IsTokens: true}}
	}
	return nil
}

// Validate checks that there are 1 to MaxPrompts prompts and that each is
// non-empty with non-negative token ids. An error about one prompt of
// several names it (see InPrompt).
func (p Prompt) Validate() error { return p.validate(MaxPrompts) }

// validate is Validate with a cap of maxPrompts.
func (p Prompt) validate(maxPrompts int) error {
	switch {
	case len(p) == 0:
		return apierr.New("prompt", "is required")
	case len(p) > maxPrompts:
		return apierr.New("prompt", "got %d prompts; at most %d are accepted per request", len(p), maxPrompts)
	}
	for i, in := range p {
		if in.IsTokens && len(in.TokenIDs) == 0 || !in.IsTokens && in.Text == "" {
			return apierr.InPrompt(apierr.New("prompt", "must not be empty"), i, len(p))
		}
		for _, id := range in.TokenIDs {
			if id < 0 {
				return apierr.InPrompt(apierr.New("prompt", "token ids must be non-negative, got %d", id), i, len(p))
			}
		}
	}
	return nil
}
