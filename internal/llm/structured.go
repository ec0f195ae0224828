package llm

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"govllm/internal/apierr"
	"govllm/internal/constraint"
	"govllm/internal/sampling"
	"govllm/internal/tokenizer"
)

// structured compiles the structured-output constraints of requests for
// one vocabulary: the token matcher is built once, on first use, and
// compiled constraints are kept by their source (they are immutable), so
// a schema sent again costs a map lookup.
type structured struct {
	tok *tokenizer.Tokenizer

	once       sync.Once
	matcher    *constraint.Matcher
	matcherErr error
	pieces     *pieceIndex // the vocabulary by text, for fast-forward drafts

	mu    sync.Mutex
	cache map[string]*constraint.Constraint
}

// jsonOptions are the JSON grammars' options for serving: object members
// in the schema's properties order, each once (as LLGuidance and XGrammar
// emit them: an output that may repeat a key need never end), whitespace
// runs of at most constraint.DefaultMaxWhitespace.
var jsonOptions = constraint.Options{OrderedProperties: true}

// maxCachedConstraints bounds the compiled constraints kept; past it the
// cache starts over.
const maxCachedConstraints = 256

// states returns n fresh constraint states for s (one per sequence of a
// request), or an *apierr.Error naming s.Param when s cannot be compiled.
func (c *structured) states(s *sampling.Structured, n int) ([]sampling.Constraint, error) {
	c.once.Do(func() {
		c.matcher, c.matcherErr = constraint.NewMatcher(constraint.TokenizerVocab{T: c.tok})
		c.pieces = newPieceIndex(c.tok)
	})
	if c.matcherErr != nil {
		return nil, &apierr.Error{Status: 500, Param: s.Param, Msg: "structured outputs are unavailable for this tokenizer: " + c.matcherErr.Error()}
	}
	compiled, err := c.compile(s)
	if err != nil {
		return nil, structuredError(s.Param, err)
	}
	out := make([]sampling.Constraint, n)
	for i := range out {
		out[i] = constraintState{compiled.NewState(c.matcher), c.pieces}
	}
	return out, nil
}

// constraintState is a constraint.State as a sampling.Constraint, and as
// the scheduler's sched.ForcedDrafter (structured outputs' fast-forward).
type constraintState struct {
	*constraint.State
	pieces *pieceIndex
}

// Fork copies the state (speculative steps verify drafts on a copy).
func (s constraintState) Fork() sampling.Constraint {
	return constraintState{s.State.Clone(), s.pieces}
}

// maxForcedBytes bounds the forced text spelled for one step's drafts.
const maxForcedBytes = 256

// ForcedTokens drafts up to k tokens spelling the text the constraint
// forces next, each the longest vocabulary token that is a prefix of the
// rest (the highest id among equal texts: a SentencePiece vocabulary's
// byte-fallback tokens, the ones models rarely emit, come first), cut before the first one the
// constraint would refuse; none when nothing is forced. The step verifies
// them like any draft, so a spelling the model would not choose costs a
// rejected draft, never a different output.
func (s constraintState) ForcedTokens(dst []int32, k int) []int32 {
	dst = dst[:0]
	b := s.ForcedBytes()
	if len(b) > maxForcedBytes {
		b = b[:maxForcedBytes]
	}
	var c *constraint.State
	for len(b) > 0 && len(dst) < k {
		id, n := s.pieces.longest(b)
		if n == 0 {
			break
		}
		if c == nil {
			c = s.State.Clone()
		}
		if c.Advance(id) != nil {
			break
		}
		dst = append(dst, id)
		b = b[n:]
	}
	return dst
}

// pieceIndex finds the vocabulary's tokens by their text.
type pieceIndex struct {
	ids    map[string]int32
	maxLen int
}

// newPieceIndex indexes tok's non-special tokens by their decoded text
// (the highest id of equal texts).
func newPieceIndex(tok *tokenizer.Tokenizer) *pieceIndex {
	x := &pieceIndex{ids: make(map[string]int32, tok.VocabSize())}
	for id := int32(0); int(id) < tok.VocabSize(); id++ {
		p := tok.Piece(id)
		if p == "" || tok.IsSpecial(id) {
			continue
		}
		x.ids[p] = id // the later of equal texts: byte-fallback tokens come first
		x.maxLen = max(x.maxLen, len(p))
	}
	return x
}

// longest returns the token with the longest text that is a prefix of b,
// and that text's length (0 when none is).
func (x *pieceIndex) longest(b []byte) (int32, int) {
	for n := min(len(b), x.maxLen); n > 0; n-- {
		if id, ok := x.ids[string(b[:n])]; ok {
			return id, n
		}
	}
	return 0, 0
}

// compile returns the constraint of s, from the cache when it was seen.
func (c *structured) compile(s *sampling.Structured) (*constraint.Constraint, error) {
	key, build := structuredSource(s)
	c.mu.Lock()
	if k, ok := c.cache[key]; ok {
		c.mu.Unlock()
		return k, nil
	}
	c.mu.Unlock()
	k, err := build()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.cache == nil || len(c.cache) >= maxCachedConstraints {
		c.cache = map[string]*constraint.Constraint{}
	}
	c.cache[key] = k
	c.mu.Unlock()
	return k, nil
}

// structuredSource returns the cache key of s and the function that
// compiles it.
func structuredSource(s *sampling.Structured) (string, func() (*constraint.Constraint, error)) {
	opts, mode := jsonOptions, ""
	if s.Compact {
		opts.Compact, mode = true, "compact "
	}
	switch {
	case s.JSONSchema != "":
		return mode + "schema\x00" + s.JSONSchema, func() (*constraint.Constraint, error) {
			return constraint.JSONSchema([]byte(s.JSONSchema), opts)
		}
	case s.JSONObject:
		return mode + "object", func() (*constraint.Constraint, error) { return constraint.JSONObject(opts) }
	case s.Regex != "":
		return "regex\x00" + s.Regex, func() (*constraint.Constraint, error) { return constraint.Regex(s.Regex) }
	case s.Choice != nil:
		return "choice\x00" + strings.Join(s.Choice, "\x00"), func() (*constraint.Constraint, error) { return constraint.Choice(s.Choice) }
	case s.Grammar != "":
		return "grammar\x00" + s.Grammar, func() (*constraint.Constraint, error) { return constraint.Grammar(s.Grammar) }
	}
	return "", func() (*constraint.Constraint, error) { return nil, errors.New("no constraint given") }
}

// structuredError is the 400 of a constraint that cannot be compiled: an
// unsupported JSON Schema feature is named, an invalid schema or a bad
// regex or grammar says why.
func structuredError(param string, err error) error {
	var ue *constraint.UnsupportedError
	switch {
	case errors.As(err, &ue):
		return apierr.New(param, "%v: govllm cannot enforce it, so it refuses the request rather than constrain the output more loosely than asked", ue)
	case errors.Is(err, constraint.ErrInvalidSchema):
		return apierr.New(param, "%v", err)
	}
	return apierr.New(param, "%s", fmt.Sprint(err))
}
