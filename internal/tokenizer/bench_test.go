package tokenizer

import (
	"path/filepath"
	"strings"
	"testing"

	"govllm/internal/testmodels"
)

// benchText is about 4 KB of English prose.
var benchText = strings.Repeat(`Once upon a time, in a small village at the edge of a great forest, there lived an old clockmaker named Elias. `+
	`Every morning he opened his shop at seven o'clock, swept the floor, and wound the forty-two clocks that hung on the walls. `+
	`Children would press their noses to the window to watch the pendulums swing; they said the shop sounded like rain on a tin roof. `+
	"\"Time,\" he told them, \"is the only thing we can't make more of, so we'd better keep it well.\"\n\n", 10)

func benchEncode(b *testing.B, tok *Tokenizer, text string) {
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n = len(tok.Encode(text, true))
	}
	b.ReportMetric(float64(len(text))/float64(n), "bytes/token")
}

func BenchmarkEncode(b *testing.B) {
	b.Run("llama3-bytelevel", func(b *testing.B) { benchEncode(b, refTokenizer(b, "llama3"), benchText) })
	b.Run("llama2-spm", func(b *testing.B) { benchEncode(b, refTokenizer(b, "llama2"), benchText) })
	b.Run("tok512-spm", func(b *testing.B) {
		dir := testmodels.Dir(b, "stories260K")
		tok, err := Load(dir, LoadOptions{TokenizerPath: filepath.Join(dir, "tok512.bin")})
		if err != nil {
			b.Fatal(err)
		}
		benchEncode(b, tok, benchText)
	})
	b.Run("llama3-html", func(b *testing.B) {
		benchEncode(b, refTokenizer(b, "llama3"), strings.Repeat(`<div class="a"><span>x</span><br/></div>`+"\n", 100))
	})
	b.Run("llama3-short", func(b *testing.B) {
		benchEncode(b, refTokenizer(b, "llama3"), "What is the capital of France? Answer in one word.")
	})
}

func BenchmarkDecoder(b *testing.B) {
	tok := refTokenizer(b, "llama3")
	ids := tok.Encode(benchText, false)
	b.SetBytes(int64(len(benchText)))
	b.ReportAllocs()
	for b.Loop() {
		d := tok.NewDecoder(nil, true)
		for _, id := range ids {
			d.Add(id)
		}
	}
}

func BenchmarkLoad(b *testing.B) {
	requireNodeModules(b)
	for b.Loop() {
		if _, err := Load(npmModelDir("llama3"), LoadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
