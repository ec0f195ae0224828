package tokenizer

import (
	"slices"
	"sync"
	"testing"
)

// TestConcurrentEncode shares one Tokenizer between goroutines (run with
// -race): Encode's pooled scratch space must not leak between calls.
func TestConcurrentEncode(t *testing.T) {
	toks := map[string]*Tokenizer{"stories260K": stories260K(t)["tokenizer.json"], "dummy": NewDummy(300)}
	if hasNodeModules() {
		toks["llama3"] = refTokenizer(t, "llama3")
	}
	texts := referenceCorpus([]string{"<s>"})[:60]
	for name, tok := range toks {
		t.Run(name, func(t *testing.T) {
			want := make([][]int32, len(texts))
			for i, s := range texts {
				want[i] = tok.Encode(s, true)
			}
			var wg sync.WaitGroup
			errs := make(chan string, 4)
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for rep := 0; rep < 5; rep++ {
						for i := range texts {
							j := (i*7 + g + rep) % len(texts)
							if got := tok.Encode(texts[j], true); !slices.Equal(got, want[j]) {
								errs <- texts[j]
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for s := range errs {
				t.Errorf("concurrent Encode(%q) differs from the sequential result", s)
			}
		})
	}
}
