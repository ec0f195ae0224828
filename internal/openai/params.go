package openai

import (
	"maps"
	"math"
	"slices"
	"strconv"

	"govllm/internal/apierr"
	"govllm/internal/sampling"
)

// SamplingFields are the sampling fields shared by completions and chat:
// OpenAI's plus vLLM's extras. Absent (nil) fields take the server default.
type SamplingFields struct {
	N                      *int               `json:"n,omitempty"`
	MaxTokens              *int               `json:"max_tokens,omitempty"`
	Temperature            *float64           `json:"temperature,omitempty"`
	TopP                   *float64           `json:"top_p,omitempty"`
	TopK                   *int               `json:"top_k,omitempty"`
	MinP                   *float64           `json:"min_p,omitempty"`
	PresencePenalty        *float64           `json:"presence_penalty,omitempty"`
	FrequencyPenalty       *float64           `json:"frequency_penalty,omitempty"`
	RepetitionPenalty      *float64           `json:"repetition_penalty,omitempty"`
	Seed                   *int64             `json:"seed,omitempty"`
	Stop                   Stop               `json:"stop,omitempty"`
	StopTokenIDs           []int32            `json:"stop_token_ids,omitempty"`
	MinTokens              *int               `json:"min_tokens,omitempty"`
	IgnoreEOS              bool               `json:"ignore_eos,omitempty"`
	IncludeStopStrInOutput bool               `json:"include_stop_str_in_output,omitempty"`
	Priority               int                `json:"priority,omitempty"`
	BestOf                 *int               `json:"best_of,omitempty"`
	LogitBias              map[string]float64 `json:"logit_bias,omitempty"` // token id (a string) → bias
	AllowedTokenIDs        []int32            `json:"allowed_token_ids,omitempty"`
	BadWords               []string           `json:"bad_words,omitempty"`
	User                   string             `json:"user,omitempty"`
	// RequestID names the request (vLLM's extension); an X-Request-Id
	// header wins over it.
	RequestID string `json:"request_id,omitempty"`
	// TruncatePromptTokens keeps only the prompt's last k tokens (vLLM).
	TruncatePromptTokens *int `json:"truncate_prompt_tokens,omitempty"`
	// ReturnTokenIDs adds the prompt's and each choice's token ids to the
	// response (vLLM's prompt_token_ids and token_ids).
	ReturnTokenIDs bool `json:"return_token_ids,omitempty"`
	// Detokenization (vLLM; both default true).
	SkipSpecialTokens          *bool `json:"skip_special_tokens,omitempty"`
	SpacesBetweenSpecialTokens *bool `json:"spaces_between_special_tokens,omitempty"`
	// PromptLogprobs scores every prompt token after the first, with the
	// top-N of each position (vLLM's extension; not with stream).
	PromptLogprobs *int `json:"prompt_logprobs,omitempty"`
}

// checkPromptLogprobs refuses prompt_logprobs on a stream, as vLLM does
// (a completion's echo with logprobs streams them instead).
func (f *SamplingFields) checkPromptLogprobs(stream bool) error {
	if f.PromptLogprobs != nil && stream {
		return apierr.New("prompt_logprobs", "prompt_logprobs are not available when stream is true")
	}
	return nil
}

// toParams overlays the request's fields on base (the server defaults,
// e.g. from generation_config.json). maxTokens is the already-resolved
// max_tokens field (nil = absent; the caller then decides the default) and
// logprobs the already-resolved logprobs count. The result is not yet
// validated: MaxTokens may be 0, meaning "fill from max-model-len".
func (f *SamplingFields) toParams(base sampling.Params, maxTokens *int, logprobs *int) (sampling.Params, error) {
	p := base
	p.Stop = append([]string(nil), base.Stop...)
	p.StopTokenIDs = append([]int32(nil), base.StopTokenIDs...)
	if f.N != nil {
		p.N = *f.N
	}
	if f.BestOf != nil && *f.BestOf != p.N {
		return p, apierr.New("best_of", "best_of is not supported (it must equal n)")
	}
	if err := f.constraints(&p); err != nil {
		return p, err
	}
	p.MaxTokens = 0
	if maxTokens != nil {
		if *maxTokens < 1 {
			return p, apierr.New("max_tokens", "must be at least 1, got %d", *maxTokens)
		}
		p.MaxTokens = *maxTokens
	}
	fl := []struct {
		name string
		src  *float64
		dst  *float32
	}{
		{"temperature", f.Temperature, &p.Temperature},
		{"top_p", f.TopP, &p.TopP},
		{"min_p", f.MinP, &p.MinP},
		{"presence_penalty", f.PresencePenalty, &p.PresencePenalty},
		{"frequency_penalty", f.FrequencyPenalty, &p.FrequencyPenalty},
		{"repetition_penalty", f.RepetitionPenalty, &p.RepetitionPenalty},
	}
	for _, x := range fl {
		if x.src == nil {
			continue
		}
		if math.IsNaN(*x.src) || math.IsInf(*x.src, 0) || math.Abs(*x.src) > math.MaxFloat32 {
			return p, apierr.New(x.name, "must be a finite number")
		}
		*x.dst = float32(*x.src)
	}
	if f.TopK != nil {
		p.TopK = *f.TopK
	}
	if f.Seed != nil {
		s := *f.Seed
		p.Seed = &s
	}
	if f.PromptLogprobs != nil {
		n := *f.PromptLogprobs
		p.PromptLogprobs = &n
	}
	if f.Stop != nil {
		p.Stop = append(p.Stop[:0], f.Stop...)
	}
	if f.StopTokenIDs != nil {
		p.StopTokenIDs = append(p.StopTokenIDs, f.StopTokenIDs...)
	}
	if f.MinTokens != nil {
		p.MinTokens = *f.MinTokens
	}
	p.IgnoreEOS = p.IgnoreEOS || f.IgnoreEOS
	p.IncludeStopStrInOutput = f.IncludeStopStrInOutput
	p.Logprobs = nil
	if logprobs != nil {
		n := *logprobs
		p.Logprobs = &n
	}
	return p, nil
}

// constraints sets logit_bias (its keys parsed as token ids, in order, so
// the first bad key is the one named), allowed_token_ids, bad_words and
// the detokenization options on p; the values are checked by
// sampling.Params.Validate and the ids against the vocabulary by
// llm.Preparer.
func (f *SamplingFields) constraints(p *sampling.Params) error {
	p.LogitBias = nil
	if len(f.LogitBias) > 0 {
		p.LogitBias = make(map[int32]float32, len(f.LogitBias))
		for _, k := range slices.Sorted(maps.Keys(f.LogitBias)) {
			b := f.LogitBias[k]
			id, err := strconv.ParseInt(k, 10, 32)
			if err != nil {
				return apierr.New("logit_bias", "keys must be token ids (integers, as strings), got %q", k)
			}
			p.LogitBias[int32(id)] = float32(b)
		}
	}
	p.KeepSpecialTokens = f.SkipSpecialTokens != nil && !*f.SkipSpecialTokens
	p.NoSpacesAroundSpecial = f.SpacesBetweenSpecialTokens != nil && !*f.SpacesBetweenSpecialTokens
	p.AllowedTokenIDs = f.AllowedTokenIDs
	p.BadWords = f.BadWords
	p.BadWordsTokenIDs = nil
	return nil
}
