package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
)

// A ShareGPT entry: the first turn is the prompt, the second the
// completion whose length (in tokens) is the request's max_tokens.
type shareGPTEntry struct {
	Conversations []struct {
		Value string `json:"value"`
	} `json:"conversations"`
}

// shareGPTDataset reads cfg.DatasetPath, a ShareGPT JSON file, as vLLM's
// ShareGPTDataset does: entries of at least two turns, shuffled (seeded)
// unless DisableShuffle, lengths counted with the server's tokenizer, and
// sequences vLLM deems invalid skipped (prompt under 4 or over 1024
// tokens, output under 4 unless OutputLen is given, both over 2048).
func shareGPTDataset(ctx context.Context, cfg *Config, tok tokenizeFunc) ([]Prompt, error) {
	b, err := os.ReadFile(cfg.DatasetPath)
	if err != nil {
		return nil, err
	}
	var entries []shareGPTEntry
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("%s is not a ShareGPT JSON array: %w", cfg.DatasetPath, err)
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5a17))
	if !cfg.DisableShuffle {
		rng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
	}
	want := cfg.NumPrompts + cfg.Warmup
	var prompts []Prompt
	for _, e := range entries {
		if len(prompts) == want {
			break
		}
		if len(e.Conversations) < 2 {
			continue
		}
		p, err := countPrompt(ctx, tok, e.Conversations[0].Value)
		if err != nil {
			return nil, err
		}
		p.OutputLen = cfg.OutputLen
		if p.OutputLen == 0 {
			ids, err := tok(ctx, e.Conversations[1].Value, true)
			if err != nil {
				return nil, err
			}
			p.OutputLen = len(ids)
		}
		if validSequence(p.InputLen, p.OutputLen, cfg.OutputLen > 0) {
			prompts = append(prompts, p)
		}
	}
	return oversample(cfg, rng, prompts)
}

// validSequence is vLLM's is_valid_sequence with its defaults.
func validSequence(promptLen, outputLen int, fixedOutput bool) bool {
	const minLen, maxPrompt, maxTotal = 4, 1024, 2048
	return promptLen >= minLen && (fixedOutput || outputLen >= minLen) &&
		promptLen <= maxPrompt && promptLen+outputLen <= maxTotal
}

// customDataset reads cfg.DatasetPath, a JSONL file of {"prompt": …}
// lines (vLLM's custom dataset), shuffled (seeded) unless DisableShuffle,
// each request asking for OutputLen tokens. vLLM renders the prompt with
// the model's chat template on the client; here the prompt goes as is:
// as the user message on the chat endpoint (the server renders it), or
// raw on /v1/completions, which needs --skip-chat-template to say so.
func customDataset(ctx context.Context, cfg *Config, tok tokenizeFunc) ([]Prompt, error) {
	if cfg.Endpoint == "/v1/completions" && !cfg.SkipChatTemplate {
		return nil, errors.New("the custom dataset's prompts are chat-templated on the client by vLLM, which this benchmark cannot do: " +
			"use --backend openai-chat --endpoint /v1/chat/completions (the server applies the template) or --skip-chat-template")
	}
	f, err := os.Open(cfg.DatasetPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var texts []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for line := 1; sc.Scan(); line++ {
		var row struct {
			Prompt *string `json:"prompt"`
		}
		if len(sc.Bytes()) == 0 {
			continue
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil || row.Prompt == nil {
			return nil, fmt.Errorf("%s line %d: want a JSON object with a \"prompt\" string (%v)", cfg.DatasetPath, line, err)
		}
		texts = append(texts, *row.Prompt)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0xc057))
	if !cfg.DisableShuffle {
		rng.Shuffle(len(texts), func(i, j int) { texts[i], texts[j] = texts[j], texts[i] })
	}
	var prompts []Prompt
	for _, t := range texts[:min(len(texts), cfg.NumPrompts+cfg.Warmup)] {
		p, err := countPrompt(ctx, tok, t)
		if err != nil {
			return nil, err
		}
		p.OutputLen = cfg.OutputLen
		prompts = append(prompts, p)
	}
	return oversample(cfg, rng, prompts)
}

// countPrompt is a text prompt with its length from the server's tokenizer.
func countPrompt(ctx context.Context, tok tokenizeFunc, text string) (Prompt, error) {
	ids, err := tok(ctx, text, true)
	if err != nil {
		return Prompt{}, fmt.Errorf("counting tokens with the server's /tokenize: %w", err)
	}
	return Prompt{Text: text, InputLen: len(ids)}, nil
}

// oversample repeats random prompts (seeded) until there are
// NumPrompts+Warmup, as vLLM does unless --no-oversample.
func oversample(cfg *Config, rng *rand.Rand, prompts []Prompt) ([]Prompt, error) {
	want := cfg.NumPrompts + cfg.Warmup
	if len(prompts) == 0 {
		return nil, fmt.Errorf("%s has no usable prompt", cfg.DatasetPath)
	}
	if len(prompts) < want && cfg.NoOversample {
		if len(prompts) <= cfg.Warmup {
			return nil, fmt.Errorf("%s has %d usable prompts, fewer than the %d warm-ups plus one", cfg.DatasetPath, len(prompts), cfg.Warmup)
		}
		return prompts, nil
	}
	for len(prompts) < want {
		prompts = append(prompts, prompts[rng.IntN(len(prompts))])
	}
	return prompts, nil
}
