package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/openai/openai-go/v3"

	"govllm/internal/testmodels"
)

// batchChoice is one completion choice as the client assembled it.
type batchChoice struct {
	Text, Finish string
}

// TestServeBatchedPromptsStories260K serves stories260K-hf and drives it
// with the official OpenAI SDK: a request holding several prompts (strings,
// or arrays of token ids) gives, greedy, exactly the choices of the same
// prompts sent one per request, streaming and not, at index prompt·n +
// choice, with usage summed over the prompts; each prompt is one engine
// request in vllm:request_success_total; a batch with one bad prompt is a
// 400 that moves no counter.
func TestServeBatchedPromptsStories260K(t *testing.T) {
	cfg := testServeConfig()
	cfg.Model = testmodels.Dir(t, "stories260K-hf")
	g := newGate(t, cfg)
	ctx := context.Background()
	prompts := []string{"Once upon a time", "The little dog", "Lily and Tom went to the park", "One day, a", "Sam"}
	const n = 2
	params := func(p sdk.CompletionNewParamsPromptUnion) sdk.CompletionNewParams {
		return sdk.CompletionNewParams{Model: sdk.CompletionNewParamsModel(cfg.Model), Prompt: p,
			MaxTokens: sdk.Int(32), Temperature: sdk.Float(0), N: sdk.Int(n)}
	}
	before := g.sc.scrape(t)

	// A bad prompt rejects the whole batch before anything runs.
	_, err := g.api.Completions.New(ctx, params(sdk.CompletionNewParamsPromptUnion{OfArrayOfStrings: []string{"Once", strings.Repeat("x", 300)}}))
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Param != "prompt" || !strings.Contains(apiErr.Message, "prompt[1]") {
		t.Fatalf("batch with a prompt over max-model-len: %v", err)
	}

	// The reference: one request per prompt.
	var want []batchChoice
	var wantPrompt, wantCompletion int64
	ids := make([][]int64, len(prompts))
	for i, p := range prompts {
		c, err := g.api.Completions.New(ctx, params(sdk.CompletionNewParamsPromptUnion{OfString: sdk.String(p)}))
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Choices) != n {
			t.Fatalf("prompt %q: %d choices", p, len(c.Choices))
		}
		for k, ch := range c.Choices {
			if ch.Index != int64(k) || ch.Text == "" {
				t.Fatalf("prompt %q: choice %+v", p, ch)
			}
			want = append(want, batchChoice{ch.Text, string(ch.FinishReason)})
		}
		wantPrompt += c.Usage.PromptTokens
		wantCompletion += c.Usage.CompletionTokens
		ids[i] = tokenize(t, g, p)
		if int64(len(ids[i])) != c.Usage.PromptTokens {
			t.Fatalf("prompt %q: /tokenize gives %d ids, usage %d", p, len(ids[i]), c.Usage.PromptTokens)
		}
	}

	batches := []struct {
		name   string
		prompt sdk.CompletionNewParamsPromptUnion
	}{
		{"strings", sdk.CompletionNewParamsPromptUnion{OfArrayOfStrings: prompts}},
		{"token arrays", sdk.CompletionNewParamsPromptUnion{OfArrayOfTokenArrays: ids}},
	}
	for _, b := range batches {
		t.Run(b.name, func(t *testing.T) {
			c, err := g.api.Completions.New(ctx, params(b.prompt))
			if err != nil {
				t.Fatal(err)
			}
			var got []batchChoice
			for i, ch := range c.Choices {
				if ch.Index != int64(i) {
					t.Fatalf("choice %d has index %d (choices must be ordered by index)", i, ch.Index)
				}
				got = append(got, batchChoice{ch.Text, string(ch.FinishReason)})
			}
			compareChoices(t, "non-streaming", got, want)
			if c.Usage.PromptTokens != wantPrompt || c.Usage.CompletionTokens != wantCompletion {
				t.Fatalf("usage %+v, want %d prompt and %d completion tokens", c.Usage, wantPrompt, wantCompletion)
			}

			p := params(b.prompt)
			p.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}
			stream := g.api.Completions.NewStreaming(ctx, p)
			merged := map[int64]*batchChoice{}
			var usage sdk.CompletionUsage
			for stream.Next() {
				ch := stream.Current()
				if ch.Usage.TotalTokens > 0 {
					usage = ch.Usage
				}
				for _, c := range ch.Choices {
					m := merged[c.Index]
					if m == nil {
						m = &batchChoice{}
						merged[c.Index] = m
					}
					if m.Finish != "" {
						t.Fatalf("choice %d: chunk after its finish", c.Index)
					}
					m.Text += c.Text
					m.Finish = string(c.FinishReason)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			keys := make([]int64, 0, len(merged))
			for k := range merged {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
			got = got[:0]
			for i, k := range keys {
				if k != int64(i) {
					t.Fatalf("streamed choice indexes %v", keys)
				}
				got = append(got, *merged[k])
			}
			compareChoices(t, "streaming", got, want)
			if usage.PromptTokens != wantPrompt || usage.CompletionTokens != wantCompletion {
				t.Fatalf("streamed usage %+v, want %d prompt and %d completion tokens", usage, wantPrompt, wantCompletion)
			}
		})
	}

	// Every prompt was one engine request: the singles, and per batch kind
	// a non-streaming and a streaming request; the bad batch none.
	requests := float64(len(prompts) * (1 + 2*len(batches)))
	g.sc.await(t, "engine requests per prompt", 30*time.Second, func(s *scrape) []check {
		d := delta{before, s}
		return []check{
			eq("request_success_total", d.c("vllm:request_success_total"), requests*n),
			eq("request_success_total{length}", d.c("vllm:request_success_total", "finished_reason", "length")+
				d.c("vllm:request_success_total", "finished_reason", "stop"), requests*n),
			eq("prompt_tokens_total", d.c("vllm:prompt_tokens_total"), float64(wantPrompt)*n*(1+2*float64(len(batches)))),
		}
	})
}

func compareChoices(t *testing.T, what string, got, want []batchChoice) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d choices, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: choice %d = %+v, want (one request per prompt) %+v", what, i, got[i], want[i])
		}
	}
}

// tokenize returns the prompt's token ids from POST /tokenize.
func tokenize(t *testing.T, g *gate, prompt string) []int64 {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"prompt": prompt})
	resp, err := g.hc.Post(g.url+"/tokenize", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Tokens []int64 `json:"tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 || len(out.Tokens) == 0 {
		t.Fatalf("tokenize %q: %d %v", prompt, resp.StatusCode, err)
	}
	return out.Tokens
}
