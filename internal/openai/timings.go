package openai

import (
	"time"

	"govllm/internal/stats"
)

// Timings is one sequence's timing in a response (govllm's
// --enable-response-timings): the very values the server's vllm:*
// histograms observed for it, in seconds as they are, so a response can
// be matched with /metrics. A response with one choice carries one
// Timings object beside usage; with several (n > 1, several prompts) an
// array of them, one per choice in index order.
type Timings struct {
	Index int `json:"index"` // the choice
	// QueueTime is vllm:request_queue_time_seconds: queued → scheduled.
	QueueTime float64 `json:"queue_time_seconds"`
	// PrefillTime is vllm:request_prefill_time_seconds: scheduled → first token.
	PrefillTime float64 `json:"prefill_time_seconds"`
	// DecodeTime is vllm:request_decode_time_seconds: first → last token.
	DecodeTime float64 `json:"decode_time_seconds"`
	// InferenceTime is vllm:request_inference_time_seconds: prefill + decode.
	InferenceTime float64 `json:"inference_time_seconds"`
	// TimeToFirstToken is vllm:time_to_first_token_seconds: HTTP arrival → first token.
	TimeToFirstToken float64 `json:"time_to_first_token_seconds"`
	// E2ELatency is vllm:e2e_request_latency_seconds: HTTP arrival → finish.
	E2ELatency float64 `json:"e2e_request_latency_seconds"`
	// MeanInterTokenLatency is vllm:request_time_per_output_token_seconds:
	// decode time ÷ (generated tokens − 1), 0 below 2 tokens.
	MeanInterTokenLatency float64 `json:"mean_inter_token_latency_seconds"`
	// TokensPerSecond is the generated tokens ÷ the inference time (the
	// engine's time for this sequence, prefill included); 0 when either is 0.
	TokensPerSecond float64 `json:"tokens_per_second"`
	// PrefixCacheHitTokens are the prompt tokens found in the prefix cache
	// (usage's prompt_tokens_details.cached_tokens for this sequence).
	PrefixCacheHitTokens int `json:"prefix_cache_hit_tokens"`
	// GeneratedTokens are the sequence's generated tokens.
	GeneratedTokens int `json:"generated_tokens"`
}

// NewTimings renders a finished sequence's statistics and TTFT.
func NewTimings(index int, f *stats.FinishedRequestStats, ttft time.Duration) Timings {
	t := Timings{
		Index: index, QueueTime: f.QueuedTime.Seconds(), PrefillTime: f.PrefillTime.Seconds(),
		DecodeTime: f.DecodeTime.Seconds(), InferenceTime: f.InferenceTime.Seconds(),
		TimeToFirstToken: ttft.Seconds(), E2ELatency: f.E2ELatency.Seconds(),
		MeanInterTokenLatency: f.MeanTimePerOutputToken.Seconds(), PrefixCacheHitTokens: f.NumCachedTokens,
		GeneratedTokens: f.NumGenerationTokens,
	}
	if f.InferenceTime > 0 {
		t.TokensPerSecond = float64(f.NumGenerationTokens) / f.InferenceTime.Seconds()
	}
	return t
}

// TimingsOf is a response's "timings": one object, or an array when there
// are several; nil when there is none.
func TimingsOf(ts []Timings) any {
	switch len(ts) {
	case 0:
		return nil
	case 1:
		return ts[0]
	}
	return ts
}
