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
	prefix := randomWords(rng, cfg.RandomPrefixLen)
	prompts := make([]Prompt, cfg.NumPrompts+cfg.Warmup)
	for i := range prompts {
		p := &prompts[i]
		body := inLo + rng.IntN(inHi-inLo+1)
		p.InputLen = cfg.RandomPrefixLen + body
		p.OutputLen = outLo + rng.IntN(outHi-outLo+1)
		// Start from about one word per token, then fit to the exact length
		// with the server's tokenizer when it has one.
		p.Text = strings.TrimSpace(prefix + " " + randomWords(rng, body))
		if tok == nil || !cfg.Tokenize || cfg.Endpoint != "/v1/completions" {
			continue
		}
		ids, err := fitTokens(ctx, tok, p.Text, p.InputLen)
		if err != nil {
			return nil, fmt.Errorf("with the server's /tokenize (use --tokenize=false for servers without it): %w", err)
		}
		p.TokenIDs = ids
	}
	return prompts, nil
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

// fitTokens tokenizes text (doubling it while too short) and truncates to n ids.
func fitTokens(ctx context.Context, tok tokenizeFunc, text string, n int) ([]int32, error) {
	for {
		ids, err := tok(ctx, text)
		if err != nil {
			return nil, err
		}
		if len(ids) >= n {
			return ids[:n], nil
		}
		text = text + " " + text
	}
}

type tokenizeFunc func(ctx context.Context, text string) ([]int32, error)
