package openai

import (
	"govllm/internal/apierr"
	"govllm/internal/sampling"
)

// CompletionRequest is the body of POST /v1/completions.
type CompletionRequest struct {
	Model         string         `json:"model"`
	Prompt        Prompt         `json:"prompt"`
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
	Logprobs      *int           `json:"logprobs,omitempty"`
	Echo          bool           `json:"echo,omitempty"`
	Suffix        *string        `json:"suffix,omitempty"`
	// AddSpecialTokens adds the tokenizer's special tokens (BOS) to text
	// prompts; default true (vLLM).
	AddSpecialTokens *bool `json:"add_special_tokens,omitempty"`
	StructuredFields
	SamplingFields
}

// SpecialTokens reports whether text prompts get the tokenizer's special
// tokens (add_special_tokens, default true).
func (r *CompletionRequest) SpecialTokens() bool {
	return r.AddSpecialTokens == nil || *r.AddSpecialTokens
}

// DefaultCompletionMaxTokens is the max_tokens of a completion request that
// omits it (OpenAI's and vLLM's default for the legacy endpoint).
const DefaultCompletionMaxTokens = 16

// SamplingParams converts the request over the server defaults base.
// MaxTokens defaults to 16; the engine (llm.Preparer) finishes them once the prompt length is known.
func (r *CompletionRequest) SamplingParams(base sampling.Params) (sampling.Params, error) {
	if err := r.check(); err != nil {
		return base, err
	}
	mt := r.MaxTokens
	if mt == nil {
		d := DefaultCompletionMaxTokens
		mt = &d
	}
	p, err := r.toParams(base, mt, r.Logprobs)
	if err != nil {
		return p, err
	}
	p.Structured, err = r.structured()
	return p, err
}

func (r *CompletionRequest) check() error {
	if err := r.Prompt.Validate(); err != nil {
		return err
	}
	switch {
	case r.Echo && r.Logprobs != nil:
		return apierr.New("echo", "echo together with logprobs is not supported (prompt logprobs are not computed)")
	case r.Suffix != nil && *r.Suffix != "":
		return apierr.New("suffix", "suffix is not supported")
	case r.StreamOptions != nil && !r.Stream:
		return apierr.New("stream_options", "stream_options is only allowed when stream is true")
	}
	return nil
}

// CompletionResponse is a non-streaming completion, and (with Object
// "text_completion" too, as OpenAI does) one SSE chunk of a streaming one.
type CompletionResponse struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []CompletionChoice `json:"choices"`
	Usage   *Usage             `json:"usage,omitempty"`
	// Timings, with --enable-response-timings (see Timings).
	Timings any `json:"timings,omitempty"`
	// SystemFingerprint names the server build that answered (OpenAI's
	// backend configuration fingerprint).
	SystemFingerprint string `json:"system_fingerprint"`
}

// CompletionChoice is one of the n completions. FinishReason is null until
// the choice finished; StopReason is the matched stop string or token id.
type CompletionChoice struct {
	Index        int                 `json:"index"`
	Text         string              `json:"text"`
	Logprobs     *CompletionLogprobs `json:"logprobs"`
	FinishReason *string             `json:"finish_reason"`
	StopReason   any                 `json:"stop_reason"` // null when none
	// With return_token_ids: the prompt's ids (on a stream, in the
	// choice's first chunk) and the choice's generated ids.
	PromptTokenIDs []int32 `json:"prompt_token_ids,omitempty"`
	TokenIDs       []int32 `json:"token_ids,omitempty"`
}

// CompletionLogprobs is the legacy logprobs format: parallel arrays.
type CompletionLogprobs struct {
	Tokens        []string      `json:"tokens"`
	TokenLogprobs []float64     `json:"token_logprobs"`
	TopLogprobs   []TopLogprobs `json:"top_logprobs"`
	TextOffset    []int         `json:"text_offset"`
}
