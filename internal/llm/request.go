package llm

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"

	"govllm/internal/apierr"
	"govllm/internal/core"
	"govllm/internal/output"
	"govllm/internal/pooling"
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
	// TruncatePromptTokens, when set, keeps only the prompt's last k
	// tokens (vLLM truncate_prompt_tokens; k in [1, max-model-len]).
	TruncatePromptTokens *int
	// Pooling, when set, makes this an embedding request: the prompt is
	// computed and pooled, nothing is generated. Params must then be the
	// zero value (the engine sets its own: one sequence, max_tokens 1).
	Pooling *pooling.Params
}

// Errors a caller branches on.
var (
	// ErrPromptTooLong: the prompt, or prompt + max_tokens, exceeds
	// max_model_len. Wrapped in an *apierr.Error.
	ErrPromptTooLong = errors.New("llm: prompt too long")
	// ErrEngineDead: the async engine's loop died; see AsyncEngine.Err.
	ErrEngineDead = errors.New("llm: engine loop died")
	// ErrClosed: the engine was closed.
	ErrClosed = errors.New("llm: engine closed")
)

// Config configures a front end.
type Config struct {
	// MaxModelLen caps prompt + output tokens. 0 takes the core scheduler's
	// MaxModelLen; a value above it is refused.
	MaxModelLen int
	// Limits bound the work of one request; zero fields take
	// DefaultLimits' values.
	Limits Limits
	// RequestStats collects every step's statistics even without a stat
	// logger, so that each finished sequence's output carries its Timings
	// (--enable-response-timings).
	RequestStats bool
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
	sc := e.Config().Sched
	if c.MaxModelLen == 0 {
		c.MaxModelLen = sc.MaxModelLen
	}
	if c.MaxModelLen > sc.MaxModelLen {
		return c, fmt.Errorf("llm: max model len %d exceeds the scheduler's %d", c.MaxModelLen, sc.MaxModelLen)
	}
	return c, nil
}

// Preparer is the one request path: it turns requests into validated
// engine requests (Prepare). Both front ends hold one; a test double of an
// engine can hold one too, to validate exactly as the engine does.
type Preparer struct {
	cfg        Config // resolved: MaxModelLen set, Limits defaulted
	tok        *tokenizer.Tokenizer
	priority   bool // the core schedules by priority: Request.Priority may be non-zero
	structured *structured
}

// NewPreparer validates for tok's vocabulary, a context of maxModelLen
// tokens, limits (zero fields: the defaults) and, with priority, accepts a
// non-zero Request.Priority.
func NewPreparer(tok *tokenizer.Tokenizer, maxModelLen int, limits Limits, priority bool) (*Preparer, error) {
	cfg := Config{MaxModelLen: maxModelLen, Limits: limits}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if maxModelLen < 2 || tok == nil {
		return nil, fmt.Errorf("llm: a preparer needs a tokenizer and a max model len of at least 2, got %d", maxModelLen)
	}
	cfg.Limits = cfg.Limits.withDefaults()
	return &Preparer{cfg: cfg, tok: tok, priority: priority, structured: &structured{tok: tok}}, nil
}

// newPreparer resolves cfg against the core c.
func newPreparer(cfg Config, c *core.Engine, tok *tokenizer.Tokenizer) (*Preparer, error) {
	cfg, err := cfg.resolve(c)
	if err != nil {
		return nil, err
	}
	return NewPreparer(tok, cfg.MaxModelLen, cfg.Limits, c.Config().Sched.Policy == sched.Priority)
}

// Tokenizer returns the tokenizer requests are validated against.
func (p *Preparer) Tokenizer() *tokenizer.Tokenizer { return p.tok }

// MaxModelLen returns the context length requests are validated against.
func (p *Preparer) MaxModelLen() int { return p.cfg.MaxModelLen }

// Prepare validates the requests of one API call (tokenizing text
// prompts) without starting them: the one place where a request is
// checked, and so the place to add a check for a new request field. An
// error is an *apierr.Error naming the field (and the prompt when there
// are several); nothing should be started unless all are valid.
func (p *Preparer) Prepare(reqs ...Request) ([]*Prepared, error) {
	return prepare(p, reqs)
}

// Prepared is a validated request, ready for the engine: what the
// Processor registers and what the core receives. Only Prepare makes one.
type Prepared struct {
	out    output.Request
	engine []sched.EngineRequest
}

// Request returns the request as validated: token ids, finished sampling
// parameters (MaxTokens filled in, further EOS ids added as stop tokens),
// arrival time stamped.
func (p *Prepared) Request() Request {
	r := Request{ID: p.out.ID, PromptTokenIDs: p.out.PromptTokenIDs, Params: p.out.Params,
		ArrivalTime: p.out.ArrivalTime, OutputKind: p.out.Kind}
	if len(p.engine) > 0 {
		r.Priority, r.Pooling = p.engine[0].Priority, p.engine[0].Pooling
	}
	return r
}

// prepare is Prepare for the requests of one API call: every check a
// request field needs happens here, and nowhere after it (the scheduler
// assumes valid input). An error is an *apierr.Error naming the field, and
// the prompt when there are several.
func prepare(pp *Preparer, reqs []Request) ([]*Prepared, error) {
	out := make([]*Prepared, len(reqs))
	tokens := 0 // Σ max_tokens over the prompts; each is below max-model-len
	for i := range reqs {
		p, err := pp.prepareOne(&reqs[i])
		if err != nil {
			return nil, apierr.InPrompt(err, i, len(reqs))
		}
		out[i] = p
		tokens += p.out.Params.MaxTokens
	}
	if len(reqs) > 0 {
		if err := pp.cfg.Limits.Check(len(reqs), reqs[0].Params.N, tokens); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// prepareOne stamps, tokenizes and validates r (vLLM InputProcessor).
func (pp *Preparer) prepareOne(r *Request) (*Prepared, error) {
	tok := pp.tok
	if r.ArrivalTime.IsZero() {
		r.ArrivalTime = time.Now()
	}
	if err := checkRequestID(r.ID); err != nil {
		return nil, err
	}
	if r.Priority != 0 && !pp.priority {
		return nil, apierr.New("priority", "priority scheduling is not enabled (start the server with --scheduling-policy priority)")
	}
	ids := r.PromptTokenIDs
	if ids == nil && r.Prompt != "" {
		ids = tok.Encode(r.Prompt, true)
	}
	if len(ids) == 0 {
		return nil, apierr.New("prompt", "the prompt must not be empty")
	}
	ids, err := pp.truncate(ids, r.TruncatePromptTokens)
	if err != nil {
		return nil, err
	}
	if err := checkVocab("prompt", ids, tok.VocabSize()); err != nil {
		return nil, err
	}
	p, err := pp.params(r, len(ids))
	if err != nil {
		return nil, err
	}
	pr := &Prepared{out: output.Request{ID: r.ID, PromptTokenIDs: ids, Params: p, Kind: r.OutputKind, ArrivalTime: r.ArrivalTime, Pooling: r.Pooling != nil}}
	var constraints []sampling.Constraint
	if p.Structured != nil {
		if constraints, err = pp.structured.states(p.Structured, p.N); err != nil {
			return nil, err
		}
	}
	pr.engine = make([]sched.EngineRequest, p.N)
	for i := range pr.engine {
		pr.engine[i] = sched.EngineRequest{
			Constraint:     constraintOf(constraints, i),
			ID:             output.ChildID(r.ID, i, p.N),
			PromptTokenIDs: ids,
			Params:         output.ChildParams(p, i),
			EOSTokenID:     tok.EOS(),
			Priority:       r.Priority,
			ArrivalTime:    r.ArrivalTime,
			Pooling:        r.Pooling,
		}
	}
	return pr, nil
}

// params finishes a request's sampling parameters (finishParams), or,
// for an embedding request, sets vLLM's: one sequence, max_tokens 1 (the
// engine computes the prompt and samples nothing).
func (pp *Preparer) params(r *Request, promptLen int) (sampling.Params, error) {
	if r.Pooling == nil {
		return finishParams(&pp.cfg, pp.tok, r.Params, promptLen)
	}
	if !reflect.ValueOf(r.Params).IsZero() {
		return r.Params, errors.New("llm: an embedding request takes no sampling parameters")
	}
	if maxLen := pp.cfg.MaxModelLen; promptLen >= maxLen {
		return r.Params, &apierr.Error{Param: "prompt", Err: ErrPromptTooLong, Msg: fmt.Sprintf(
			"this model's maximum context length is %d tokens for an embedding input, and the input has %d tokens", maxLen-1, promptLen)}
	}
	p := sampling.Default()
	p.N, p.MaxTokens = 1, 1
	return p, p.Validate()
}

// truncate keeps the last *k tokens of ids (left truncation, as vLLM).
func (pp *Preparer) truncate(ids []int32, k *int) ([]int32, error) {
	switch {
	case k == nil:
		return ids, nil
	case *k < 1 || *k > pp.cfg.MaxModelLen:
		return nil, apierr.New("truncate_prompt_tokens", "must be in [1, %d] (the maximum context length), got %d", pp.cfg.MaxModelLen, *k)
	case len(ids) > *k:
		return ids[len(ids)-*k:], nil
	}
	return ids, nil
}

// finishParams fills an open max_tokens (0) with max-model-len − prompt,
// checks the lengths, the ranges and the limits, and adds the model's
// further end-of-sequence ids as stop tokens.
func finishParams(cfg *Config, tok *tokenizer.Tokenizer, p sampling.Params, promptLen int) (sampling.Params, error) {
	maxLen := cfg.MaxModelLen
	if promptLen >= maxLen {
		return p, &apierr.Error{Param: "prompt", Err: ErrPromptTooLong, Msg: fmt.Sprintf(
			"this model's maximum context length is %d tokens, and the prompt has %d tokens, leaving no room for output", maxLen, promptLen)}
	}
	if p.MaxTokens == 0 {
		p.MaxTokens = maxLen - promptLen
	}
	if err := p.Validate(); err != nil {
		return p, err
	}
	if err := cfg.Limits.Check(1, p.N, p.MaxTokens); err != nil {
		return p, err
	}
	// Compared without adding: MaxTokens may be near the int range's end.
	if p.MaxTokens > maxLen-promptLen {
		return p, &apierr.Error{Param: "max_tokens", Err: ErrPromptTooLong, Msg: fmt.Sprintf(
			"this model's maximum context length is %d tokens; you requested %d tokens (%d in the prompt, %d for the completion); lower max_tokens to at most %d",
			maxLen, promptLen+p.MaxTokens, promptLen, p.MaxTokens, maxLen-promptLen)}
	}
	if err := checkVocab("stop_token_ids", p.StopTokenIDs, tok.VocabSize()); err != nil {
		return p, err
	}
	if err := constraints(tok, &p); err != nil {
		return p, err
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
	return p, nil
}

// MaxRequestIDLen bounds a request id, which clients may choose
// (request_id, X-Request-Id) and which is logged and echoed in a header.
const MaxRequestIDLen = 256

// checkRequestID refuses an id that is too long or holds anything but
// printable ASCII (no spaces or control characters).
func checkRequestID(id string) error {
	if len(id) > MaxRequestIDLen {
		return apierr.New("request_id", "must be at most %d characters, got %d", MaxRequestIDLen, len(id))
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return apierr.New("request_id", "must be printable ASCII without spaces, got byte %#x at %d", id[i], i)
		}
	}
	return nil
}

// constraints checks the token ids of logit_bias and allowed_token_ids
// against the vocabulary and tokenizes bad_words as vLLM does: each word
// (leading whitespace stripped) alone, and after a space when that makes
// different tokens of the same count (the word inside a text).
func constraints(tok *tokenizer.Tokenizer, p *sampling.Params) error {
	biased := slices.Sorted(maps.Keys(p.LogitBias))
	if err := checkVocab("logit_bias", biased, tok.VocabSize()); err != nil {
		return err
	}
	if err := checkVocab("allowed_token_ids", p.AllowedTokenIDs, tok.VocabSize()); err != nil {
		return err
	}
	p.BadWordsTokenIDs = nil
	for _, w := range p.BadWords {
		w = strings.TrimLeftFunc(w, unicode.IsSpace)
		plain := tok.Encode(w, false)
		if len(plain) == 0 {
			continue
		}
		p.BadWordsTokenIDs = append(p.BadWordsTokenIDs, plain)
		if spaced := tok.Encode(" "+w, false); len(spaced) == len(plain) && spaced[0] != plain[0] {
			p.BadWordsTokenIDs = append(p.BadWordsTokenIDs, spaced)
		}
	}
	return nil
}

// checkVocab refuses token ids outside [0, vocab) in field param.
func checkVocab(param string, ids []int32, vocab int) error {
	for _, id := range ids {
		if id < 0 || int(id) >= vocab {
			return apierr.New(param, "token id %d is out of range [0, %d)", id, vocab)
		}
	}
	return nil
}

// CheckTokenIDs refuses token ids outside tok's vocabulary in field param
// (for callers that take ids without generating, such as /detokenize).
func CheckTokenIDs(tok *tokenizer.Tokenizer, param string, ids []int32) error {
	return checkVocab(param, ids, tok.VocabSize())
}

// constraintOf is sequence i's constraint state (nil when unconstrained).
func constraintOf(cs []sampling.Constraint, i int) sampling.Constraint {
	if cs == nil {
		return nil
	}
	return cs[i]
}
