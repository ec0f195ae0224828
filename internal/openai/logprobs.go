package openai

import (
	"math"

	"govllm/internal/sampling"
	"govllm/internal/stats"
)

// MinLogprob replaces -Inf (and NaN) logprobs, which JSON cannot carry;
// vLLM uses the same value.
const MinLogprob = -9999.0

func clampLogprob(x float32) float64 {
	f := float64(x)
	if math.IsNaN(f) || math.IsInf(f, -1) || f < MinLogprob {
		return MinLogprob
	}
	return f
}

// CompletionLogprobsFrom converts sampled positions to the completions
// format. piece renders one token; offset is the length in bytes of the
// choice's text emitted before these positions (text_offset continues it).
// It returns the logprobs and the offset after them.
func CompletionLogprobsFrom(lps []sampling.Logprobs, piece func(int32) string, offset int) (*CompletionLogprobs, int) {
	out := &CompletionLogprobs{
		Tokens:        make([]string, 0, len(lps)),
		TokenLogprobs: make([]float64, 0, len(lps)),
		TopLogprobs:   make([]map[string]float64, 0, len(lps)),
		TextOffset:    make([]int, 0, len(lps)),
	}
	for _, lp := range lps {
		tok := piece(lp.Sampled.Token)
		out.Tokens = append(out.Tokens, tok)
		out.TokenLogprobs = append(out.TokenLogprobs, clampLogprob(lp.Sampled.Logprob))
		top := make(map[string]float64, len(lp.Top)+1)
		for _, t := range lp.Top {
			s := piece(t.Token)
			if _, dup := top[s]; !dup {
				top[s] = clampLogprob(t.Logprob)
			}
		}
		if _, ok := top[tok]; !ok {
			top[tok] = clampLogprob(lp.Sampled.Logprob)
		}
		out.TopLogprobs = append(out.TopLogprobs, top)
		out.TextOffset = append(out.TextOffset, offset)
		offset += len(tok)
	}
	return out, offset
}

// ChatLogprobsFrom converts sampled positions to the chat format.
func ChatLogprobsFrom(lps []sampling.Logprobs, piece func(int32) string) *ChatLogprobs {
	out := &ChatLogprobs{Content: make([]ChatTokenLogprob, 0, len(lps))}
	for _, lp := range lps {
		tok := piece(lp.Sampled.Token)
		c := ChatTokenLogprob{Token: tok, Logprob: clampLogprob(lp.Sampled.Logprob), Bytes: byteList(tok), TopLogprobs: make([]ChatTopLogprob, 0, len(lp.Top))}
		for _, t := range lp.Top {
			s := piece(t.Token)
			c.TopLogprobs = append(c.TopLogprobs, ChatTopLogprob{Token: s, Logprob: clampLogprob(t.Logprob), Bytes: byteList(s)})
		}
		out.Content = append(out.Content, c)
	}
	return out
}

func byteList(s string) []int {
	b := make([]int, len(s))
	for i := 0; i < len(s); i++ {
		b[i] = int(s[i])
	}
	return b
}

// FinishReason returns the JSON finish_reason of a choice: nil while the
// choice runs, else "stop", "length" or "abort" (as vLLM reports them).
func FinishReason(r stats.FinishReason) *string {
	if r == stats.FinishNone {
		return nil
	}
	s := r.String()
	if r == stats.FinishRepetition {
		s = "stop"
	}
	return &s
}
