package output

import (
	"testing"

	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/stats"
	"govllm/internal/tokenizer"
)

// With the real incremental detokenizer: a character split across tokens
// is streamed whole, and bytes still held back when the sequence finishes
// are flushed into the final text.
func TestProcessorWithTokenizerDecoder(t *testing.T) {
	tok := tokenizer.NewDummy(300)
	newDec := func(prompt []int32, _ *sampling.Params) Decoder { return tok.NewDecoder(prompt, true) }
	cases := []struct {
		name   string
		tokens []int32 // byte tokens of the dummy vocabulary
		deltas []string
	}{
		{"two-byte character split across steps", []int32{'a', 0xC3, 0xA9, 'b'}, []string{"a", "", "é", "b"}},
		{"unfinished character flushed at the finish", []int32{'x', 0xE2, 0x82}, []string{"x", "", "\uFFFD\uFFFD"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := NewProcessor(newDec)
			if _, err := p.AddRequest(Request{ID: "r", PromptTokenIDs: []int32{'h', 'i'}, Params: sampling.Default(), Kind: Delta}); err != nil {
				t.Fatal(err)
			}
			for i, id := range c.tokens {
				o := sched.CoreOutput{ReqID: "r", NewTokenIDs: []int32{id}, StopReason: -1}
				if i == len(c.tokens)-1 {
					o.FinishReason = stats.FinishLength
				}
				outs, _ := p.Process(&sched.CoreOutputs{Outputs: []sched.CoreOutput{o}}, nil)
				if got := outs[0].Outputs[0].Text; got != c.deltas[i] {
					t.Errorf("step %d: delta %q, want %q", i, got, c.deltas[i])
				}
			}
		})
	}
}
