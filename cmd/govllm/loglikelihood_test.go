package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"govllm/internal/model"
	"govllm/internal/testmodels"
)

// directLogprobs computes, straight from the model, the log-softmax score
// of each token of ids after the first given the tokens before it: one
// forward pass per prefix, log-sum-exp in float64.
func directLogprobs(t *testing.T, m *model.Model, ids []int32) []float64 {
	t.Helper()
	V := m.Config.VocabSize
	out := make([]float64, len(ids))
	for p := 0; p+1 < len(ids); p++ {
		kv := model.NewKVCache(m.Config, 16, 16)
		table := make([]int32, 16)
		for i := range table {
			table[i] = int32(i)
		}
		b := &model.Batch{Tokens: ids[:p+1], Seqs: []model.Seq{{NumTokens: p + 1, BlockTable: table, NeedLogits: true}}}
		logits := make([]float32, V)
		if err := m.Forward(m.NewWorkspace(p+1), nil, b, kv, logits); err != nil {
			t.Fatal(err)
		}
		mx := math.Inf(-1)
		for _, l := range logits {
			mx = math.Max(mx, float64(l))
		}
		var sum float64
		for _, l := range logits {
			sum += math.Exp(float64(l) - mx)
		}
		out[p+1] = float64(logits[ids[p+1]]) - mx - math.Log(sum)
	}
	return out
}

type echoLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []*float64           `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// TestLoglikelihood sends lm-evaluation-harness's local-completions
// loglikelihood request (token-id prompt, echo, logprobs 1, temperature 0,
// max_tokens 1 — and 0, the older form) and vLLM's prompt_logprobs on both
// endpoints to a real server on stories260K, with 8-token prefill chunks
// and the prefix cache on (a prompt asking for prompt logprobs must not
// take cache hits), and checks every prompt token's logprob against the
// model's log-softmax computed directly.
func TestLoglikelihood(t *testing.T) {
	noLeaks(t)
	path := filepath.Join(testmodels.Dir(t, "stories260K"), "stories260K.gguf")
	m, err := model.Load(path, model.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testServeConfig()
	cfg.Model = path
	cfg.MaxNumBatchedTokens = 8
	url, stop := startServe(t, cfg)
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	ids := []int32{1, 403, 407, 261, 378, 285, 104, 270, 260, 318, 322, 376, 261, 375, 366, 323, 350, 260, 365, 269}
	want := directLogprobs(t, m, ids)
	idList, _ := json.Marshal(ids)
	check := func(t *testing.T, got []*float64, n int) {
		t.Helper()
		if len(got) < n || got[0] != nil {
			t.Fatalf("%d token_logprobs (first %v), want ≥ %d with a null first", len(got), got[0], n)
		}
		for p := 1; p < n; p++ {
			if got[p] == nil || math.Abs(*got[p]-want[p]) > 1e-4 {
				t.Fatalf("token %d: logprob %v, the model gives %v", p, got[p], want[p])
			}
		}
	}
	for _, maxTokens := range []int{1, 0} {
		for round := 0; round < 2; round++ { // the second time the prompt is in the prefix cache
			t.Run(fmt.Sprintf("echo/max_tokens=%d/round=%d", maxTokens, round), func(t *testing.T) {
				body := fmt.Sprintf(`{"prompt":[%s],"echo":true,"max_tokens":%d,"logprobs":1,"temperature":0,"seed":1234}`, idList, maxTokens)
				r := post(t, url, "/v1/completions", body)
				var resp struct {
					Choices []struct {
						Logprobs       echoLogprobs                 `json:"logprobs"`
						PromptLogprobs []map[string]json.RawMessage `json:"prompt_logprobs"`
					} `json:"choices"`
				}
				if r.status != 200 || json.Unmarshal([]byte(r.body), &resp) != nil || len(resp.Choices) != 1 {
					t.Fatalf("%d %s", r.status, r.body)
				}
				lp := resp.Choices[0].Logprobs
				check(t, lp.TokenLogprobs, len(ids))
				if len(lp.TokenLogprobs) != len(ids)+maxTokens {
					t.Fatalf("%d positions, want the prompt's %d and %d generated", len(lp.TokenLogprobs), len(ids), maxTokens)
				}
				// lm-evaluation-harness's is_greedy: each token's logprob is its top entry's max.
				for p := 1; p < len(ids); p++ {
					best := math.Inf(-1)
					for _, v := range lp.TopLogprobs[p] {
						best = math.Max(best, v)
					}
					if best < *lp.TokenLogprobs[p] {
						t.Fatalf("position %d: top_logprobs %v miss the token's %v", p, lp.TopLogprobs[p], *lp.TokenLogprobs[p])
					}
				}
				if len(resp.Choices[0].PromptLogprobs) != len(ids) || resp.Choices[0].PromptLogprobs[0] != nil {
					t.Fatalf("prompt_logprobs %v, want %d entries with a null first", resp.Choices[0].PromptLogprobs, len(ids))
				}
			})
		}
	}
	t.Run("echo streamed", func(t *testing.T) {
		body := fmt.Sprintf(`{"prompt":[%s],"echo":true,"max_tokens":3,"logprobs":2,"temperature":0,"stream":true}`, idList)
		r := post(t, url, "/v1/completions", body)
		var all []*float64
		for _, line := range strings.Split(r.body, "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var c struct {
				Choices []struct {
					Logprobs *echoLogprobs `json:"logprobs"`
				} `json:"choices"`
			}
			if err := json.Unmarshal([]byte(data), &c); err != nil {
				t.Fatalf("%v: %s", err, data)
			}
			for _, ch := range c.Choices {
				if ch.Logprobs != nil {
					all = append(all, ch.Logprobs.TokenLogprobs...)
				}
			}
		}
		check(t, all, len(ids))
		if len(all) != len(ids)+3 {
			t.Fatalf("%d positions streamed, want %d", len(all), len(ids)+3)
		}
	})
	for _, ep := range []string{"/v1/completions", "/v1/chat/completions"} {
		t.Run("prompt_logprobs"+ep, func(t *testing.T) {
			body := fmt.Sprintf(`{"prompt":[%s],"max_tokens":2,"prompt_logprobs":2,"temperature":0}`, idList)
			if ep == "/v1/chat/completions" {
				body = `{"messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":2,"prompt_logprobs":2,"return_token_ids":true}`
			}
			r := post(t, url, ep, body)
			var resp struct {
				PromptLogprobs []map[string]struct {
					Logprob float64 `json:"logprob"`
					Rank    int     `json:"rank"`
					Decoded string  `json:"decoded_token"`
				} `json:"prompt_logprobs"`
				PromptTokenIDs []int32 `json:"prompt_token_ids"`
				Choices        []struct {
					PromptLogprobs json.RawMessage `json:"prompt_logprobs"`
				} `json:"choices"`
			}
			if r.status != 200 || json.Unmarshal([]byte(r.body), &resp) != nil {
				t.Fatalf("%d %s", r.status, r.body)
			}
			prompt, pl := ids, resp.PromptLogprobs
			if ep == "/v1/completions" {
				if err := json.Unmarshal(resp.Choices[0].PromptLogprobs, &pl); err != nil {
					t.Fatal(err)
				}
			} else {
				prompt = resp.PromptTokenIDs
			}
			direct := directLogprobs(t, m, prompt)
			if len(pl) != len(prompt) || pl[0] != nil {
				t.Fatalf("%d prompt_logprobs for %d prompt tokens (first %v)", len(pl), len(prompt), pl[0])
			}
			for p := 1; p < len(prompt); p++ {
				e, ok := pl[p][strconv.Itoa(int(prompt[p]))]
				if !ok || math.Abs(e.Logprob-direct[p]) > 1e-4 || e.Rank < 1 {
					t.Fatalf("position %d: %v, want token %d with logprob %v", p, pl[p], prompt[p], direct[p])
				}
				ranks := map[int]bool{}
				for _, v := range pl[p] {
					ranks[v.Rank] = true
				}
				if !ranks[1] || !ranks[2] {
					t.Fatalf("position %d: %v lacks the top 2", p, pl[p])
				}
			}
		})
	}
}

// TestMaxLogprobs: vLLM's --max-logprobs caps logprobs, top_logprobs and
// prompt_logprobs (400 above, naming the field); with -1 a request's -1
// returns the whole vocabulary at every position.
func TestMaxLogprobs(t *testing.T) {
	noLeaks(t)
	path := filepath.Join(testmodels.Dir(t, "stories260K"), "stories260K.gguf")
	for _, capN := range []int{20, -1} {
		t.Run(strconv.Itoa(capN), func(t *testing.T) {
			cfg := testServeConfig()
			cfg.Model = path
			cfg.Limits.MaxLogprobs = capN
			url, stop := startServe(t, cfg)
			defer func() {
				if err := stop(); err != nil {
					t.Error(err)
				}
			}()
			cases := []struct {
				path, body, param string
			}{
				{"/v1/completions", `{"prompt":"Once","max_tokens":2,"logprobs":21}`, "logprobs"},
				{"/v1/completions", `{"prompt":"Once","max_tokens":2,"prompt_logprobs":-1}`, "prompt_logprobs"},
				{"/v1/chat/completions", `{"messages":[{"role":"user","content":"Hi"}],"max_tokens":2,"logprobs":true,"top_logprobs":-1}`, "logprobs"},
			}
			for _, c := range cases {
				r := post(t, url, c.path, c.body)
				if capN == 20 {
					if r.status != 400 || r.param != c.param {
						t.Fatalf("%s: %d param %q, want 400 naming %s: %s", c.body, r.status, r.param, c.param, r.body)
					}
					continue
				}
				if r.status != 200 {
					t.Fatalf("%s: %d %s", c.body, r.status, r.body)
				}
			}
			if capN != -1 {
				return
			}
			r := post(t, url, "/v1/chat/completions", cases[2].body)
			var resp struct {
				Choices []struct {
					Logprobs struct {
						Content []struct {
							TopLogprobs []json.RawMessage `json:"top_logprobs"`
						} `json:"content"`
					} `json:"logprobs"`
				} `json:"choices"`
			}
			if err := json.Unmarshal([]byte(r.body), &resp); err != nil || len(resp.Choices) != 1 {
				t.Fatalf("%v %s", err, r.body)
			}
			for i, c := range resp.Choices[0].Logprobs.Content {
				if len(c.TopLogprobs) != 512 {
					t.Fatalf("position %d: %d top_logprobs, want the vocabulary's 512", i, len(c.TopLogprobs))
				}
			}
		})
	}
}
