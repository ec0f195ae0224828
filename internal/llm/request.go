package llm

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"govllm/internal/core"
	"govllm/internal/output"
	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/tokenizer"
)

// Request is one user request to a front end.
type Request struct {
	ID             string          // external request id (e.g. "cmpl-…"); sequences of n > 1 get output.ChildID ids
	Prompt         string          // tokenized by the engine when PromptTokenIDs is nil
	PromptTokenIDs []int32         // used as is when non-nil
	Params         sampling.Params // validated by the engine; MaxTokens 0 → max_model_len − prompt_len
	Priority       int             // lower runs first under the priority policy
	// ArrivalTime is stamped by the caller before tokenization or template
	// rendering; zero means now (taken on entry, before tokenizing).
	ArrivalTime time.Time
	OutputKind  output.Kind // output.Delta (streaming), output.Cumulative, output.FinalOnly
}

// Errors a caller branches on.
var (
	// ErrPromptTooLong: the prompt, or prompt + max_tokens, exceeds max_model_len.
	// Wrapped in an *InputError.
	ErrPromptTooLong = errors.New("llm: prompt too long")
	// ErrEngineDead: the async engine's loop died; see AsyncEngine.Err.
	ErrEngineDead = errors.New("llm: engine loop died")
	// ErrClosed: the engine was closed.
	ErrClosed = errors.New("llm: engine closed")
)

// InputError is a request the engine refuses before scheduling it (HTTP
// 400). Param names the offending request field in its OpenAI spelling.
type InputError struct {
	Param string
	Msg   string
	Err   error // ErrPromptTooLong for length problems, else nil
}

func (e *InputError) Error() string { return fmt.Sprintf("invalid %s: %s", e.Param, e.Msg) }
func (e *InputError) Unwrap() error { return e.Err }

// Config configures a front end.
type Config struct {
	// MaxModelLen caps prompt + output tokens. 0 takes the core scheduler's
	// MaxModelLen; a value above it is refused.
	MaxModelLen int
	// Limits bound the work of one request; zero fields take
	// DefaultLimits' values.
	Limits Limits
}

// DefaultConfig takes every limit from the core.
func DefaultConfig() Config { return Config{} }

// Validate reports a configuration error.
func (c Config) Validate() error {
	if c.MaxModelLen < 0 || c.MaxModelLen == 1 {
		return fmt.Errorf("llm: max model len must be 0 (from the core) or at least 2, got %d", c.MaxModelLen)
	}
	return c.Limits.validate()
}

// resolve fills cfg's zero fields from the core (before the core runs).
func (c Config) resolve(e *core.Engine) (Config, error) {
	if err := c.Validate(); err != nil {
		return c, err
	}
	c.Limits = c.Limits.withDefaults()
	coreLen := e.Scheduler().Config().MaxModelLen
	if c.MaxModelLen == 0 {
		c.MaxModelLen = coreLen
	}
	if c.MaxModelLen > coreLen {
		return c, fmt.Errorf("llm: max model len %d exceeds the scheduler's %d", c.MaxModelLen, coreLen)
	}
	return c, nil
}

// prepared is a validated request: what the Processor registers and what
// the core receives.
type prepared struct {
	out    output.Request
	engine []sched.EngineRequest
}

// prepare stamps, tokenizes and validates r (vLLM InputProcessor).
func prepare(cfg *Config, tok *tokenizer.Tokenizer, r *Request) (*prepared, error) {
	if r.ArrivalTime.IsZero() {
		r.ArrivalTime = time.Now()
	}
	ids := r.PromptTokenIDs
	if ids == nil && r.Prompt != "" {
		ids = tok.Encode(r.Prompt, true)
	}
	if len(ids) == 0 {
		return nil, &InputError{Param: "prompt", Msg: "the prompt must not be empty"}
	}
	vocab := int32(tok.VocabSize())
	for _, id := range ids {
		if id < 0 || id >= vocab {
			return nil, &InputError{Param: "prompt", Msg: fmt.Sprintf("token id %d is out of vocabulary (size %d)", id, vocab)}
		}
	}
	maxLen := cfg.MaxModelLen
	if len(ids) >= maxLen {
		return nil, &InputError{Param: "prompt", Err: ErrPromptTooLong, Msg: fmt.Sprintf(
			"this model's maximum context length is %d tokens, and the prompt has %d tokens, leaving no room for output", maxLen, len(ids))}
	}
	p := r.Params
	if p.MaxTokens == 0 {
		p.MaxTokens = maxLen - len(ids)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Limits.Check(1, p.N, p.MaxTokens); err != nil {
		return nil, err
	}
	// Compared without adding: MaxTokens may be near the int range's end.
	if p.MaxTokens > maxLen-len(ids) {
		return nil, &InputError{Param: "max_tokens", Err: ErrPromptTooLong, Msg: fmt.Sprintf(
			"this model's maximum context length is %d tokens; you requested %d tokens (%d in the prompt, %d for the completion)",
			maxLen, len(ids)+p.MaxTokens, len(ids), p.MaxTokens)}
	}
	for _, id := range p.StopTokenIDs {
		if id >= vocab {
			return nil, &sampling.ValidationError{Param: "stop_token_ids", Msg: fmt.Sprintf("token id %d is out of vocabulary (size %d)", id, vocab)}
		}
	}
	// Further end-of-sequence ids (Llama 3's <|eot_id|>) stop like stop
	// tokens unless EOS is ignored (vLLM update_from_generation_config).
	if !p.IgnoreEOS {
		for _, id := range tok.EOSIDs() {
			if id != tok.EOS() && !slices.Contains(p.StopTokenIDs, id) {
				p.StopTokenIDs = append(slices.Clip(p.StopTokenIDs), id)
			}
		}
	}
	pr := &prepared{out: output.Request{ID: r.ID, PromptTokenIDs: ids, Params: p, Kind: r.OutputKind, ArrivalTime: r.ArrivalTime}}
	pr.engine = make([]sched.EngineRequest, p.N)
	for i := range pr.engine {
		pr.engine[i] = sched.EngineRequest{
			ID:             output.ChildID(r.ID, i, p.N),
			PromptTokenIDs: ids,
			Params:         output.ChildParams(p, i),
			EOSTokenID:     tok.EOS(),
			Priority:       r.Priority,
			ArrivalTime:    r.ArrivalTime,
		}
	}
	return pr, nil
}
