package openai

import (
	"bytes"
	"encoding/json"
)

// Usage counts tokens for one request (summed over the n choices).
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
			return paramErr("stop", "expected a string or an array of strings")
		}
		*s = Stop{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return paramErr("stop", "expected a string or an array of strings")
	}
	*s = many
	return nil
}

// Prompt is the completions "prompt": a string, an array holding one
// string, an array of token ids, or an array holding one array of token
// ids. More than one prompt per request is rejected (send one request per
// prompt): Batch reports how many were sent so the error can say so.
type Prompt struct {
	Text     string
	TokenIDs []int32
	IsTokens bool
	Batch    int // number of prompts in the request (1 when valid)
}

// UnmarshalJSON implements the accepted shapes.
func (p *Prompt) UnmarshalJSON(b []byte) error {
	*p = Prompt{}
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	bad := paramErr("prompt", "expected a string, an array of strings, or an array of token ids")
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &p.Text); err != nil {
			return bad
		}
		p.Batch = 1
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return bad
	}
	if len(items) == 0 {
		return paramErr("prompt", "must not be empty")
	}
	first := bytes.TrimSpace(items[0])
	switch {
	case len(first) > 0 && first[0] == '"':
		var texts []string
		if err := json.Unmarshal(b, &texts); err != nil {
			return bad
		}
		p.Batch = len(texts)
		p.Text = texts[0]
	case len(first) > 0 && first[0] == '[':
		var lists [][]int32
		if err := json.Unmarshal(b, &lists); err != nil {
			return paramErr("prompt", "token ids must be integers in int32 range")
		}
		p.Batch = len(lists)
		p.TokenIDs, p.IsTokens = lists[0], true
	default:
		var ids []int32
		if err := json.Unmarshal(b, &ids); err != nil {
			return paramErr("prompt", "token ids must be integers in int32 range")
		}
		p.Batch = 1
		p.TokenIDs, p.IsTokens = ids, true
	}
	return nil
}

// Validate checks that exactly one non-empty prompt was given.
func (p *Prompt) Validate() error {
	switch {
	case p.Batch == 0:
		return paramErr("prompt", "is required")
	case p.Batch > 1:
		return paramErr("prompt", "got %d prompts; this server accepts one prompt per request (send one request per prompt)", p.Batch)
	case p.IsTokens && len(p.TokenIDs) == 0, !p.IsTokens && p.Text == "":
		return paramErr("prompt", "must not be empty")
	}
	for _, id := range p.TokenIDs {
		if id < 0 {
			return paramErr("prompt", "token ids must be non-negative, got %d", id)
		}
	}
	return nil
}
