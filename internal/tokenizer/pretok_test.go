package tokenizer

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// pieces collects the words of splitText.
type pieces []string

func (p *pieces) word(w string) { *p = append(*p, w) }

// split runs a pre-tokenizer over s.
func split(s string, steps ...pretokKind) []string {
	var p pieces
	splitText(steps, s, &p)
	return p
}

func TestPretokExamples(t *testing.T) {
	tests := []struct {
		kind pretokKind
		in   string
		want []string
	}{
		{pretokGPT2, "Hello world", []string{"Hello", " world"}},
		{pretokGPT2, "I'm  here!!", []string{"I", "'m", " ", " here", "!!"}},
		{pretokGPT2, "x   ", []string{"x", "   "}},
		{pretokGPT2, "a 12345 b", []string{"a", " 12345", " b"}},
		{pretokGPT2, "IT'S", []string{"IT", "'", "S"}},
		{pretokLlama3, "IT'S", []string{"IT", "'S"}},
		{pretokLlama3, "a 12345 b", []string{"a", " ", "123", "45", " b"}},
		{pretokLlama3, "x\n\n  y", []string{"x", "\n\n", " ", " y"}},
		{pretokLlama3, "\tfoo .bar!\n\n", []string{"\tfoo", " .", "bar", "!\n\n"}},
		{pretokLlama3, "hi  \n  ", []string{"hi", "  \n", "  "}},
		{pretokQwen2, "a 123", []string{"a", " ", "1", "2", "3"}},
		{pretokNone, "all of it", []string{"all of it"}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := split(tc.in, tc.kind); !slices.Equal(got, tc.want) {
				t.Fatalf("split(%q, %d) = %q, want %q", tc.in, tc.kind, got, tc.want)
			}
		})
	}
}

// splitCorpus is text built to stress the regexes: every rune class the
// patterns distinguish (letters, marks, numbers of each kind, Unicode spaces,
// CR/LF, apostrophes, punctuation, emoji) in random order. It avoids U+0085
// and U+FEFF, where JavaScript's \s differs from Unicode White_Space (Go and
// the Rust tokenizers follow White_Space).
func splitCorpus() []string {
	pool := []string{
		"a", "Z", "é", "ß", "Ω", "я", "你", "ー", "ǅ", "\u0301", "\u200d", // letters, a mark, a format char
		"0", "7", "٣", "²", "½", "Ⅻ", "３", // numbers
		" ", " ", " ", "\t", "\n", "\r", "\v", "\f", "\u00a0", "\u2003", "\u3000", "\u2028", // spaces
		"'", "'s", "'S", "'ll", "'LL", "'Re", "'ve", "'d", "'x", // apostrophes
		".", "!", "?", "-", "_", "$", "(", "\"", "😀", "👍🏽", "…", "—",
	}
	texts := append([]string{}, referenceCorpus(nil)...)
	r := rand.New(rand.NewPCG(3, 5))
	for i := 0; i < 3000; i++ {
		var sb strings.Builder
		for n := r.IntN(16); n > 0; n-- {
			sb.WriteString(pool[r.IntN(len(pool))])
		}
		texts = append(texts, sb.String())
	}
	return texts
}

// TestPretokReference compares the state machines with the regexes run by
// JavaScript (node), which supports the lookahead Go's regexp lacks.
func TestPretokReference(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("SKIPPING pre-tokenizer reference comparison: node is not installed")
	}
	texts := splitCorpus()
	in, err := json.Marshal(texts)
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string][]pretokKind{"gpt2": {pretokGPT2}, "llama3": {pretokLlama3}, "qwen2": {pretokQwen2}, "punct": {pretokPunctSymbol}}
	for _, pre := range []string{"starcoder", "falcon", "default", "deepseek-coder", "deepseek-llm", "deepseek-v3", "tekken", "gpt-4o", "qwen35", "bloom", "viking", "seed-coder", "bailingmoe"} {
		refs[pre] = ggufPres[pre].steps
	}
	for name, steps := range refs {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command("node", "split.js", name)
			cmd.Dir = npmDir
			cmd.Stdin = bytes.NewReader(in)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("node split.js: %v\n%s", err, stderr.Bytes())
			}
			var want [][]string
			if err := json.Unmarshal(out, &want); err != nil {
				t.Fatal(err)
			}
			bad := 0
			for i, text := range texts {
				if got := split(text, steps...); !slices.Equal(got, want[i]) {
					if bad++; bad <= 10 {
						t.Errorf("%q:\n got %q\nwant %q", text, got, want[i])
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d texts split differently", bad, len(texts))
			}
		})
	}
}
