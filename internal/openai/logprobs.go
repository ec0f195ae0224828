package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

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
		TokenLogprobs: make([]*float64, 0, len(lps)),
		TopLogprobs:   make([]TopLogprobs, 0, len(lps)),
		TextOffset:    make([]int, 0, len(lps)),
	}
	for _, lp := range lps {
		tok := piece(lp.Sampled.Token)
		out.Tokens = append(out.Tokens, tok)
		v := clampLogprob(lp.Sampled.Logprob)
		out.TokenLogprobs = append(out.TokenLogprobs, &v)
		top := make(TopLogprobs, 0, len(lp.Top)+1)
		for _, t := range lp.Top {
			top = top.add(piece(t.Token), t.Logprob)
		}
		top = top.add(tok, lp.Sampled.Logprob)
		out.TopLogprobs = append(out.TopLogprobs, top)
		out.TextOffset = append(out.TextOffset, offset)
		offset += len(tok)
	}
	return out, offset
}

// EchoLogprobs converts an echoed prompt (ids, and lps scoring ids[1:]) to
// the completions format: its first token has null logprobs, as vLLM's.
// It returns the logprobs and the offset after them.
func EchoLogprobs(ids []int32, lps []sampling.Logprobs, piece func(int32) string, offset int) (*CompletionLogprobs, int) {
	if len(ids) == 0 {
		return CompletionLogprobsFrom(nil, piece, offset)
	}
	first := piece(ids[0])
	rest, end := CompletionLogprobsFrom(lps, piece, offset+len(first))
	return &CompletionLogprobs{
		Tokens:        append([]string{first}, rest.Tokens...),
		TokenLogprobs: append([]*float64{nil}, rest.TokenLogprobs...),
		TopLogprobs:   append([]TopLogprobs{nil}, rest.TopLogprobs...),
		TextOffset:    append([]int{offset}, rest.TextOffset...),
	}, end
}

// Append adds o's positions after c's.
func (c *CompletionLogprobs) Append(o *CompletionLogprobs) {
	c.Tokens = append(c.Tokens, o.Tokens...)
	c.TokenLogprobs = append(c.TokenLogprobs, o.TokenLogprobs...)
	c.TopLogprobs = append(c.TopLogprobs, o.TopLogprobs...)
	c.TextOffset = append(c.TextOffset, o.TextOffset...)
}

// PromptLogprob is one prompt position of vLLM's prompt_logprobs: null
// (nil) for the first prompt token, else an object keyed by token id —
// the prompt token's entry first, then the top-N in rank order (a token
// among both keeps its first place and its top-N entry, as a Python dict
// built in that order does).
type PromptLogprob []PromptTokenLogprob

// PromptTokenLogprob is one entry of a PromptLogprob (vLLM's Logprob).
type PromptTokenLogprob struct {
	TokenID      int32
	Logprob      float64
	Rank         int
	DecodedToken string
}

// PromptLogprobsFrom converts a prompt's logprobs (entry j scores prompt
// token j+1) to vLLM's prompt_logprobs list.
func PromptLogprobsFrom(lps []sampling.Logprobs, piece func(int32) string) []PromptLogprob {
	out := make([]PromptLogprob, 1, len(lps)+1) // the first token: null
	for _, lp := range lps {
		e := make(PromptLogprob, 0, len(lp.Top)+1)
		e = append(e, PromptTokenLogprob{lp.Sampled.Token, clampLogprob(lp.Sampled.Logprob), lp.Rank, piece(lp.Sampled.Token)})
		for i, t := range lp.Top {
			pt := PromptTokenLogprob{t.Token, clampLogprob(t.Logprob), i + 1, piece(t.Token)}
			if j := slices.IndexFunc(e, func(x PromptTokenLogprob) bool { return x.TokenID == t.Token }); j >= 0 {
				e[j] = pt
				continue
			}
			e = append(e, pt)
		}
		out = append(out, e)
	}
	return out
}

// MarshalJSON writes null for the first position, else the object with
// its keys in order.
func (p PromptLogprob) MarshalJSON() ([]byte, error) {
	if p == nil {
		return []byte("null"), nil
	}
	b := []byte{'{'}
	for i, e := range p {
		if i > 0 {
			b = append(b, ',')
		}
		v, err := json.Marshal(struct {
			Logprob      float64 `json:"logprob"`
			Rank         int     `json:"rank"`
			DecodedToken string  `json:"decoded_token"`
		}{e.Logprob, e.Rank, e.DecodedToken})
		if err != nil {
			return nil, err
		}
		b = append(append(strconv.AppendQuote(b, strconv.Itoa(int(e.TokenID))), ':'), v...)
	}
	return append(b, '}'), nil
}

// TopLogprobs are one position's alternatives in rank order (the most
// likely first; the sampled token last when it is not among them): a JSON
// object whose keys keep that order, as vLLM's do (encoding/json would
// sort a map's keys). A token text seen twice keeps its first logprob.
type TopLogprobs []TopLogprob

// TopLogprob is one entry of TopLogprobs.
type TopLogprob struct {
	Token   string
	Logprob float64
}

// add appends tok unless its text is there already.
func (t TopLogprobs) add(tok string, logprob float32) TopLogprobs {
	if slices.ContainsFunc(t, func(e TopLogprob) bool { return e.Token == tok }) {
		return t
	}
	return append(t, TopLogprob{tok, clampLogprob(logprob)})
}

// MarshalJSON writes the object with its keys in order (null for nil: an
// echoed prompt's first token).
func (t TopLogprobs) MarshalJSON() ([]byte, error) {
	if t == nil {
		return []byte("null"), nil
	}
	b := []byte{'{'}
	for i, e := range t {
		k, err := json.Marshal(e.Token)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(e.Logprob)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads the object keeping its key order.
func (t *TopLogprobs) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*t = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("top_logprobs: expected an object")
	}
	*t = (*t)[:0]
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		var v float64
		if err := dec.Decode(&v); err != nil {
			return err
		}
		*t = append(*t, TopLogprob{Token: k.(string), Logprob: v})
	}
	_, err := dec.Token()
	return err
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
