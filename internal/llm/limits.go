package llm

import (
	"fmt"
	"govllm/internal/apierr"
	"govllm/internal/sampling"
)

// Limits bound the work one request may ask for, so that no single request
// can exhaust the server's memory or hold the engine indefinitely. A
// request above a limit is refused with an *apierr.Error naming the field
// (HTTP 400). The defaults are documented in docs/reliability.md.
type Limits struct {
	// MaxN caps n (sequences per prompt); OpenAI's API caps it at 128.
	MaxN int
	// MaxSequences caps prompts × n, the engine sequences of one request.
	MaxSequences int
	// MaxTokens caps the total max_tokens over every sequence of a request
	// (after an absent max_tokens is filled to max-model-len − prompt).
	MaxTokens int
	// MaxLogprobs caps logprobs, top_logprobs and prompt_logprobs (vLLM's
	// --max-logprobs); -1 lifts the cap (a request's -1 then means the
	// whole vocabulary); 0 is the default, sampling.MaxLogprobs.
	MaxLogprobs int
}

// Default limits.
const (
	DefaultMaxN         = 128
	DefaultMaxSequences = 1024
	DefaultMaxTokens    = 1 << 20
)

// DefaultLimits returns the limits a zero Limits stands for.
func DefaultLimits() Limits {
	return Limits{MaxN: DefaultMaxN, MaxSequences: DefaultMaxSequences, MaxTokens: DefaultMaxTokens, MaxLogprobs: sampling.MaxLogprobs}
}

func (l Limits) validate() error {
	if l.MaxN < 0 || l.MaxSequences < 0 || l.MaxTokens < 0 || l.MaxLogprobs < -1 {
		return fmt.Errorf("llm: request limits must not be negative: %+v", l)
	}
	return nil
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxN == 0 {
		l.MaxN = d.MaxN
	}
	if l.MaxSequences == 0 {
		l.MaxSequences = d.MaxSequences
	}
	if l.MaxTokens == 0 {
		l.MaxTokens = d.MaxTokens
	}
	if l.MaxLogprobs == 0 {
		l.MaxLogprobs = sampling.MaxLogprobs
	}
	return l
}

// CheckLogprobs refuses logprobs or prompt_logprobs above the cap, as
// vLLM does, and resolves a request's -1 to the whole vocabulary (vocab
// tokens), which only an uncapped server allows. It sets new copies of
// the fields, never writing through the caller's pointers.
func (l Limits) CheckLogprobs(p *sampling.Params, vocab int) error {
	l = l.withDefaults()
	for _, f := range []struct {
		param, what string
		v           **int
	}{{"logprobs", "sample", &p.Logprobs}, {"prompt_logprobs", "prompt", &p.PromptLogprobs}} {
		if *f.v == nil {
			continue
		}
		n, capN := **f.v, l.MaxLogprobs
		if n == -1 {
			n = vocab
		}
		if capN == -1 {
			capN = vocab
		}
		if n > capN {
			return apierr.New(f.param, "Requested %s logprobs of %d, which is greater than max allowed: %d (the server's --max-logprobs)", f.what, n, l.MaxLogprobs)
		}
		*f.v = &n
	}
	return nil
}

// Check refuses a request of prompts prompts with n sequences each when it
// exceeds a limit; promptTokens is the sum over the prompts of each one's
// max_tokens (so the request asks for n × promptTokens tokens). Every
// comparison divides instead of multiplying, so extreme values cannot
// overflow. Zero limits are the defaults.
func (l Limits) Check(prompts, n, promptTokens int) error {
	l = l.withDefaults()
	switch {
	case n > l.MaxN:
		return apierr.New("n", "n must be at most %d, got %d (the server's --max-request-n)", l.MaxN, n)
	case prompts > 0 && n > l.MaxSequences/prompts:
		return apierr.New("n",
			"%d prompts × n=%d asks for more than %d sequences in one request (the server's --max-request-sequences)", prompts, n, l.MaxSequences)
	case n > 0 && promptTokens > l.MaxTokens/n:
		return apierr.New("max_tokens",
			"%d sequences asking for up to %d tokens each (max_tokens) exceed the limit of %d tokens per request (the server's --max-request-tokens); lower max_tokens or n",
			prompts*n, promptTokens/max(prompts, 1), l.MaxTokens)
	}
	return nil
}
