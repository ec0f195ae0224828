package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// timingsReply is the part of a response the timings test reads.
type timingsReply struct {
	Timings json.RawMessage `json:"timings"`
	Usage   struct {
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

type timingsObj struct {
	Index                 int     `json:"index"`
	QueueTime             float64 `json:"queue_time_seconds"`
	PrefillTime           float64 `json:"prefill_time_seconds"`
	DecodeTime            float64 `json:"decode_time_seconds"`
	InferenceTime         float64 `json:"inference_time_seconds"`
	TimeToFirstToken      float64 `json:"time_to_first_token_seconds"`
	E2ELatency            float64 `json:"e2e_request_latency_seconds"`
	MeanInterTokenLatency float64 `json:"mean_inter_token_latency_seconds"`
	TokensPerSecond       float64 `json:"tokens_per_second"`
	PrefixCacheHitTokens  int     `json:"prefix_cache_hit_tokens"`
	GeneratedTokens       int     `json:"generated_tokens"`
}

// postJSON posts body and decodes the reply into v; a stream's reply is
// its last data chunk before [DONE] (the usage chunk).
func postJSON(t *testing.T, url, body string, v any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s: %d %v %s", body, resp.StatusCode, err, b)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		events := strings.Split(strings.TrimSpace(string(b)), "\n\n")
		if len(events) < 2 || events[len(events)-1] != "data: [DONE]" {
			t.Fatalf("stream %s", b)
		}
		b = []byte(strings.TrimPrefix(events[len(events)-2], "data: "))
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v %s", body, err, b)
	}
}

// TestResponseTimings: with --enable-response-timings a response's timings
// are the values the server's histograms observed for its request: on a
// fresh server, after one request, each histogram's sum equals its timing
// exactly (for n = 2, the sum of the two choices'), and a repeated prompt's
// prefix-cache hit tokens are the vllm:prefix_cache_hits_total it added.
func TestResponseTimings(t *testing.T) {
	prompt := strings.Repeat("once upon a time ", 12)
	tests := []struct {
		name, path, body string
		n                int
	}{
		{"completion", "/v1/completions", `{"prompt":"` + prompt + `","max_tokens":6,"ignore_eos":true}`, 1},
		{"chat", "/v1/chat/completions", `{"messages":[{"role":"user","content":"` + prompt + `"}],"max_tokens":5,"ignore_eos":true}`, 1},
		{"two choices", "/v1/completions", `{"prompt":"` + prompt + `","max_tokens":4,"n":2,"ignore_eos":true,"temperature":1}`, 2},
		{"embeddings", "/v1/embeddings", `{"input":["` + prompt + `","` + prompt + `x"]}`, 2},
		{"completion stream", "/v1/completions", `{"prompt":"` + prompt + `","max_tokens":6,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`, 1},
		{"chat stream, two choices", "/v1/chat/completions", `{"messages":[{"role":"user","content":"` + prompt + `"}],"max_tokens":5,"n":2,"temperature":1,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			cfg := testServeConfig()
			cfg.ResponseTimings = true
			url, _ := startServe(t, cfg)
			var r timingsReply
			postJSON(t, url+tt.path, tt.body, &r)
			ts := readTimings(t, r.Timings, tt.n)
			sc := (&scraper{url: url, hc: http.DefaultClient}).scrape(t)
			gen := 0
			for _, x := range ts {
				gen += x.GeneratedTokens
			}
			if gen != r.Usage.CompletionTokens {
				t.Errorf("generated tokens %d, usage says %d", gen, r.Usage.CompletionTokens)
			}
			for _, h := range []struct {
				family string
				get    func(timingsObj) float64
			}{
				{"vllm:request_queue_time_seconds", func(x timingsObj) float64 { return x.QueueTime }},
				{"vllm:request_prefill_time_seconds", func(x timingsObj) float64 { return x.PrefillTime }},
				{"vllm:request_decode_time_seconds", func(x timingsObj) float64 { return x.DecodeTime }},
				{"vllm:request_inference_time_seconds", func(x timingsObj) float64 { return x.InferenceTime }},
				{"vllm:time_to_first_token_seconds", func(x timingsObj) float64 { return x.TimeToFirstToken }},
				{"vllm:e2e_request_latency_seconds", func(x timingsObj) float64 { return x.E2ELatency }},
				{"vllm:request_time_per_output_token_seconds", func(x timingsObj) float64 { return x.MeanInterTokenLatency }},
			} {
				count, sum := sc.hist(h.family)
				want := 0.0
				for _, x := range ts {
					want += h.get(x)
				}
				nothingToDecode := tt.path == "/v1/embeddings" && (strings.Contains(h.family, "decode") || strings.Contains(h.family, "per_output"))
				if count != float64(tt.n) || sum != want || want <= 0 && !nothingToDecode {
					t.Errorf("%s: %g observations summing to %g; the timings say %g", h.family, count, sum, want)
				}
			}
			for _, x := range ts {
				if want := float64(x.GeneratedTokens) / x.InferenceTime; x.TokensPerSecond != want || x.InferenceTime <= 0 {
					t.Errorf("tokens/s %g, want %g", x.TokensPerSecond, want)
				}
			}
			var again timingsReply
			postJSON(t, url+tt.path, tt.body, &again)
			hits := 0
			for _, x := range readTimings(t, again.Timings, tt.n) {
				hits += x.PrefixCacheHitTokens
			}
			after := (&scraper{url: url, hc: http.DefaultClient}).scrape(t)
			d := delta{sc, after}.c("vllm:prefix_cache_hits_total")
			if hits == 0 || float64(hits) != d {
				t.Errorf("prefix-cache hit tokens %d; vllm:prefix_cache_hits_total moved by %g", hits, d)
			}
		})
	}
}

// readTimings reads "timings": an object for one choice, an array in
// choice order for several.
func readTimings(t *testing.T, raw json.RawMessage, n int) []timingsObj {
	t.Helper()
	var ts []timingsObj
	if n == 1 {
		var x timingsObj
		if err := json.Unmarshal(raw, &x); err != nil {
			t.Fatalf("timings %s: %v", raw, err)
		}
		ts = append(ts, x)
	} else if err := json.Unmarshal(raw, &ts); err != nil {
		t.Fatalf("timings %s: %v", raw, err)
	}
	for i, x := range ts {
		if x.Index != i || len(ts) != n {
			t.Fatalf("timings %s", raw)
		}
	}
	return ts
}

// TestResponseTimingsOff: without the flag no response has timings.
func TestResponseTimingsOff(t *testing.T) {
	noLeaks(t)
	url, _ := startServe(t, testServeConfig())
	var r map[string]any
	postJSON(t, url+"/v1/completions", `{"prompt":"a","max_tokens":2}`, &r)
	if _, ok := r["timings"]; ok {
		t.Fatalf("timings without --enable-response-timings: %v", r)
	}
}
