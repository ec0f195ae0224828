package sampling

import "govllm/internal/apierr"

// Params are the per-request sampling parameters (vLLM SamplingParams).
// The zero value is not valid: use Default() and override fields.
type Params struct {
	N                 int     // parallel samples (n); ≥ 1
	Temperature       float32 // 0 means greedy
	TopP              float32 // (0, 1]; 1 disables
	TopK              int     // 0 or -1 disables
	MinP              float32 // [0, 1]; 0 disables
	PresencePenalty   float32 // [-2, 2]
	FrequencyPenalty  float32 // [-2, 2]
	RepetitionPenalty float32 // > 0; 1 disables
	Seed              *int64  // per-request seed; nil means unseeded

	MaxTokens              int // ≥ 1 (the front end fills a default from max-model-len)
	MinTokens              int // ≥ 0, ≤ MaxTokens
	StopTokenIDs           []int32
	Stop                   []string // stop strings, matched by the output processor
	IncludeStopStrInOutput bool
	IgnoreEOS              bool
	Logprobs               *int // top-N logprobs of each sampled position; nil = none
	// PromptLogprobs asks for the logprob of every prompt token after the
	// first (scored by the positions before it) and the top-N tokens of
	// each such position; nil = none. A request with it is prefilled
	// without prefix-cache hits, so every position is computed.
	PromptLogprobs *int

	// Detokenization (vLLM skip_special_tokens and
	// spaces_between_special_tokens, both true by default, so false here).
	KeepSpecialTokens     bool // special tokens produce their text
	NoSpacesAroundSpecial bool // with KeepSpecialTokens: no space between a special token's text and its neighbours'

	// Token constraints, applied to the logits before the penalties, in
	// vLLM's order. The front end checks the ids against the vocabulary.
	LogitBias       map[int32]float32 // added to a token's logit; each in [-100, 100] (OpenAI)
	AllowedTokenIDs []int32           // non-nil: only these tokens may be sampled (non-empty)
	BadWords        []string          // words never generated; the front end tokenizes them into BadWordsTokenIDs
	// BadWordsTokenIDs are the token sequences of BadWords: a sequence's
	// last token is masked when the output ends with the others.
	BadWordsTokenIDs [][]int32

	// Structured constrains the output to a JSON schema, any JSON object,
	// a regex, a choice or a grammar (structured outputs); nil for none.
	// The front end compiles it into each sequence's sched Constraint.
	Structured *Structured
}

// Structured is a request's output constraint: exactly one of its forms.
type Structured struct {
	JSONSchema string   // a JSON Schema document
	JSONObject bool     // any JSON object
	Regex      string   // the whole output matches it
	Choice     []string // the output is one of these
	Grammar    string   // a GBNF or Lark-style EBNF grammar
	// Compact forbids whitespace between JSON tokens (vLLM's
	// disable_any_whitespace); regexes, choices and grammars have none to
	// forbid.
	Compact bool
	// Param is the request field it came from ("response_format",
	// "structured_outputs", "guided_json", …), named in errors.
	Param string
}

// Default returns greedy-free defaults matching vLLM's SamplingParams().
func Default() Params {
	return Params{N: 1, Temperature: 1, TopP: 1, TopK: 0, RepetitionPenalty: 1, MaxTokens: 16}
}

// Greedy reports whether sampling is deterministic argmax.
func (p *Params) Greedy() bool { return p.Temperature == 0 }

// MaxLogprobs is vLLM's default max_logprobs: the largest Logprobs or
// PromptLogprobs a request may ask for unless the server sets another cap
// (llm.Limits.MaxLogprobs).
const MaxLogprobs = 20

// Validate checks the ranges vLLM checks and returns an *apierr.Error
// naming the field in its OpenAI spelling (e.g. "top_p").
func (p *Params) Validate() error {
	bad := func(param, format string, a ...any) error { return apierr.New(param, format, a...) }
	switch {
	case p.N < 1:
		return bad("n", "must be at least 1, got %d", p.N)
	case p.Temperature < 0 || p.Temperature != p.Temperature:
		return bad("temperature", "must be non-negative, got %g", p.Temperature)
	case !(p.TopP > 0 && p.TopP <= 1):
		return bad("top_p", "must be in (0, 1], got %g", p.TopP)
	case p.TopK < -1:
		return bad("top_k", "must be -1 (disable), 0 (disable), or at least 1, got %d", p.TopK)
	case !(p.MinP >= 0 && p.MinP <= 1):
		return bad("min_p", "must be in [0, 1], got %g", p.MinP)
	case !(p.PresencePenalty >= -2 && p.PresencePenalty <= 2):
		return bad("presence_penalty", "must be in [-2, 2], got %g", p.PresencePenalty)
	case !(p.FrequencyPenalty >= -2 && p.FrequencyPenalty <= 2):
		return bad("frequency_penalty", "must be in [-2, 2], got %g", p.FrequencyPenalty)
	case !(p.RepetitionPenalty > 0 && p.RepetitionPenalty <= 1e6):
		return bad("repetition_penalty", "must be greater than zero, got %g", p.RepetitionPenalty)
	case p.MaxTokens < 1:
		return bad("max_tokens", "must be at least 1, got %d", p.MaxTokens)
	case p.MinTokens < 0:
		return bad("min_tokens", "must be greater than or equal to 0, got %d", p.MinTokens)
	case p.MinTokens > p.MaxTokens:
		return bad("min_tokens", "must be less than or equal to max_tokens=%d, got %d", p.MaxTokens, p.MinTokens)
	case p.Logprobs != nil && *p.Logprobs < -1:
		return bad("logprobs", "must be non-negative or -1 (the whole vocabulary), got %d", *p.Logprobs)
	case p.PromptLogprobs != nil && *p.PromptLogprobs < -1:
		return bad("prompt_logprobs", "must be non-negative or -1 (the whole vocabulary), got %d", *p.PromptLogprobs)
	}
	if err := p.validateConstraints(); err != nil {
		return err
	}
	for _, s := range p.Stop {
		if s == "" {
			return bad("stop", "stop strings must not be empty")
		}
	}
	for _, id := range p.StopTokenIDs {
		if id < 0 {
			return bad("stop_token_ids", "token ids must be non-negative, got %d", id)
		}
	}
	return nil
}

// TokenLogprob is one token with its log-probability.
type TokenLogprob struct {
	Token   int32
	Logprob float32
}

// Logprobs of one sampled position: the sampled token and the top-N.
type Logprobs struct {
	Sampled TokenLogprob
	Rank    int // rank of the sampled token among all (1 = most likely)
	Top     []TokenLogprob
}

// MaxLogitBias bounds a logit_bias value (OpenAI: -100 to 100).
const MaxLogitBias = 100

func (p *Params) validateConstraints() error {
	for t, b := range p.LogitBias {
		if !(b >= -MaxLogitBias && b <= MaxLogitBias) {
			return apierr.New("logit_bias", "the bias of token %d must be in [-100, 100], got %g", t, b)
		}
	}
	if p.AllowedTokenIDs != nil && len(p.AllowedTokenIDs) == 0 {
		return apierr.New("allowed_token_ids", "must not be empty")
	}
	for _, w := range p.BadWords {
		if w == "" {
			return apierr.New("bad_words", "bad words must not be empty")
		}
	}
	return nil
}
