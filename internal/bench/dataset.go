package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Prompt is one request of the synthetic dataset.
type Prompt struct {
	Text      string  // the prompt text (chat endpoint, or when token ids are unknown)
	TokenIDs  []int32 // exact prompt token ids when the server can tokenize
	InputLen  int     // target prompt length in tokens
	OutputLen int     // max_tokens
	RequestID string  // sent as X-Request-Id when set
}

// words is the vocabulary random prompts are drawn from: common English words,
// so any tokenizer produces ordinary token sequences.
var words = strings.Fields(`the of and to in is was that for it with as on be at by this had not are but from or
have an they which one you were her all she there would their we him been has when who will more no if out so
said what up its about into than them can only other new some could time these two may then do first any my now
such like our over man me even most made after also did many before must through back years where much your way
well down should because each just those people how too little state good very make world still own see men work
long get here between both life being under never day same another know while last might us great old year off
come since against go came right used take three story girl boy park ball happy play tree sun friend dog cat bird`)

// makeDataset builds NumPrompts+Warmup prompts of cfg's dataset.
func makeDataset(ctx context.Context, cfg *Config, tok tokenizeFunc) ([]Prompt, error) {
	switch cfg.DatasetName {
	case "sharegpt":
		return shareGPTDataset(ctx, cfg, tok)
	case "custom":
		return customDataset(ctx, cfg, tok)
	case "prefix_repetition":
		return prefixRepetitionDataset(ctx, cfg, tok)
	}
	return randomDataset(ctx, cfg, tok)
}

// randomDataset draws prompts with lengths uniform in
// [len·(1−r), len·(1+r)] after a prefix of RandomPrefixLen tokens shared
// by every prompt (vLLM's random dataset), seeded.
func randomDataset(ctx context.Context, cfg *Config, tok tokenizeFunc) ([]Prompt, error) {
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x9e3779b97f4a7c15))
	span := func(n int) (lo, hi int) {
		lo = max(1, int(math.Floor(float64(n)*(1-cfg.RandomRangeRatio))))
		hi = max(lo, int(math.Ceil(float64(n)*(1+cfg.RandomRangeRatio))))
		return
	}
	inLo, inHi := span(cfg.RandomInputLen)
	outLo, outHi := span(cfg.RandomOutputLen)
	pb := newPromptBuilder(ctx, cfg, tok)
	prefix := pb.prefix(randomWords(rng, cfg.RandomPrefixLen), cfg.RandomPrefixLen)
	prompts := make([]Prompt, cfg.NumPrompts+cfg.Warmup)
	for i := range prompts {
		body := inLo + rng.IntN(inHi-inLo+1)
		prompts[i] = pb.build(prefix, randomWords(rng, body), body)
		prompts[i].OutputLen = outLo + rng.IntN(outHi-outLo+1)
	}
	return prompts, pb.err
}

// prefixRepetitionDataset is vLLM's prefix_repetition dataset: NumPrefixes
// random prefixes of PrefixLen tokens, NumPrompts/NumPrefixes prompts on
// each (a random suffix of SuffixLen tokens after it), shuffled (seeded)
// unless DisableShuffle, every request asking for OutputLen tokens. The
// Warmup requests come first, on the prefixes in turn.
func prefixRepetitionDataset(ctx context.Context, cfg *Config, tok tokenizeFunc) ([]Prompt, error) {
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x7e9e7))
	pb := newPromptBuilder(ctx, cfg, tok)
	prefixes := make([]promptPrefix, cfg.NumPrefixes)
	for i := range prefixes {
		prefixes[i] = pb.prefix(randomWords(rng, cfg.PrefixLen), cfg.PrefixLen)
	}
	perPrefix := cfg.NumPrompts / cfg.NumPrefixes
	var warm, measured []Prompt
	for i := range cfg.Warmup + perPrefix*cfg.NumPrefixes {
		p := pb.build(prefixes[i%cfg.NumPrefixes], randomWords(rng, cfg.SuffixLen), cfg.SuffixLen)
		p.OutputLen = cfg.OutputLen
		if i < cfg.Warmup {
			warm = append(warm, p)
		} else {
			measured = append(measured, p)
		}
	}
	if !cfg.DisableShuffle {
		rng.Shuffle(len(measured), func(i, j int) { measured[i], measured[j] = measured[j], measured[i] })
	}
	return append(warm, measured...), pb.err
}

// promptBuilder builds prompts of exact token lengths with the server's
// tokenizer when the benchmark sends token ids (the random datasets on
// /v1/completions with --tokenize), else as text of about one word per
// token. Its first error is kept in err.
type promptBuilder struct {
	ctx context.Context
	tok tokenizeFunc // nil: text prompts
	err error
}

// promptPrefix is a shared prefix: its text, ids and length in tokens.
type promptPrefix struct {
	text string
	ids  []int32
	n    int
}

func newPromptBuilder(ctx context.Context, cfg *Config, tok tokenizeFunc) *promptBuilder {
	if !cfg.Tokenize || cfg.Endpoint != "/v1/completions" {
		tok = nil
	}
	return &promptBuilder{ctx: ctx, tok: tok}
}

// prefix makes a shared prefix of n tokens from text (with the
// tokenizer's BOS first).
func (b *promptBuilder) prefix(text string, n int) promptPrefix {
	p := promptPrefix{text: text, n: n}
	if b.tok != nil && b.err == nil && n > 0 {
		p.ids, b.err = fitTokens(b.ctx, b.tok, text, n, true)
	}
	return p
}

// build is prefix followed by n tokens of text: the ids of both with
// exactly that many tokens (BOS only at the very start), or their text.
func (b *promptBuilder) build(prefix promptPrefix, text string, n int) Prompt {
	p := Prompt{Text: strings.TrimSpace(prefix.text + " " + text), InputLen: prefix.n + n}
	if b.tok == nil || b.err != nil {
		return p
	}
	var ids []int32
	ids, b.err = fitTokens(b.ctx, b.tok, text, n, prefix.n == 0)
	if b.err != nil {
		b.err = fmt.Errorf("with the server's /tokenize (use --tokenize=false for servers without it): %w", b.err)
	}
	p.TokenIDs = append(append([]int32{}, prefix.ids...), ids...)
	return p
}

// randomWords is n words of the vocabulary, space-separated.
func randomWords(rng *rand.Rand, n int) string {
	var b strings.Builder
	for w := 0; w < n; w++ {
		if w > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.String()
}

// fitTokens tokenizes text (doubling it while too short) and truncates to
// n ids.
func fitTokens(ctx context.Context, tok tokenizeFunc, text string, n int, special bool) ([]int32, error) {
	if n == 0 {
		return []int32{}, nil
	}
	for {
		ids, err := tok(ctx, text, special)
		if err != nil {
			return nil, err
		}
		if len(ids) >= n {
			return ids[:n], nil
		}
		if len(ids) == 0 {
			return nil, fmt.Errorf("/tokenize gave no token for %q", text)
		}
		text = text + " " + text
	}
}

// tokenizeFunc is the server's tokenizer, with its special tokens when
// special.
type tokenizeFunc func(ctx context.Context, text string, special bool) ([]int32, error)
