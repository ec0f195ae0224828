package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"govllm/internal/gguf"
	"govllm/internal/testmodels"
)

// writeUnigramDir writes a Unigram tokenizer.json (Metaspace, always
// prepend, split as asked) and a tokenizer_config.json into a temporary
// directory.
func writeUnigramDir(t *testing.T, vocab [][2]any, unkID int, byteFallback, split bool, added []map[string]any) string {
	t.Helper()
	metaspace := map[string]any{"type": "Metaspace", "replacement": "▁", "add_prefix_space": true, "prepend_scheme": "always", "split": split}
	tj := map[string]any{
		"version":        "1.0",
		"added_tokens":   added,
		"normalizer":     nil,
		"pre_tokenizer":  metaspace,
		"post_processor": nil,
		"decoder":        metaspace,
		"model":          map[string]any{"type": "Unigram", "unk_id": unkID, "vocab": vocab, "byte_fallback": byteFallback},
	}
	dir := t.TempDir()
	for name, v := range map[string]any{"tokenizer.json": tj, "tokenizer_config.json": map[string]any{"add_bos_token": false}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestUnigramSmall: Viterbi picks the best-scoring pieces; a run of
// unknown characters is one unknown token, or its bytes' tokens under
// byte_fallback (Hugging Face's Unigram).
func TestUnigramSmall(t *testing.T) {
	vocab := [][2]any{{"<unk>", 0.0}, {"▁", -1.0}, {"a", -2.0}, {"b", -2.0}, {"ab", -1.0}, {"▁a", -1.5}, {"<0xC3>", -5.0}, {"<0xA9>", -5.0}, {"▁▁", -0.1}}
	const unk, space, a, b, ab, spaceA, c3, a9 = 0, 1, 2, 3, 4, 5, 6, 7
	tests := []struct {
		in           string
		byteFallback bool
		want         []int32
	}{
		{"ab", false, []int32{space, ab}},                          // ▁|ab -2 beats ▁a|b -3.5
		{"aéé b", false, []int32{spaceA, unk, space, b}},           // éé fuse
		{"aéé b", true, []int32{spaceA, c3, a9, c3, a9, space, b}}, // bytes
		{"aé😀", true, []int32{spaceA, unk}},                        // 😀 has no byte tokens
		{"ba", false, []int32{space, b, a}},
		{"a  ab", false, []int32{spaceA, space, space, ab}}, // split: ▁▁ (8) would score better
	}
	for _, tc := range tests {
		tok, err := Load(writeUnigramDir(t, vocab, 0, tc.byteFallback, true, nil), LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Encode(tc.in, false); !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q) byte_fallback=%v = %v, want %v", tc.in, tc.byteFallback, got, tc.want)
		}
	}
}

// TestReferenceUnigram compares with the JavaScript reference a Unigram
// tokenizer.json holding llama-spm's pieces and scores. The reference
// neither fuses unknown characters nor falls back to bytes, nor splits
// words at '▁' (the Rust tokenizers do all three; TestUnigramSmall checks
// them), so texts with a character no piece holds are left out and the
// file does not split.
func TestReferenceUnigram(t *testing.T) {
	requireNodeModules(t)
	t.Parallel()
	f, err := gguf.ReadFile(filepath.Join(testmodels.Dir(t, "vocab"), "ggml-vocab-llama-spm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	tokens, err1 := f.Strings("tokenizer.ggml.tokens")
	scores, err2 := f.Float32s("tokenizer.ggml.scores")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	vocab := make([][2]any, len(tokens))
	for i, s := range tokens {
		vocab[i] = [2]any{s, scores[i]}
	}
	added := []map[string]any{
		{"id": 0, "content": "<unk>", "special": true},
		{"id": 1, "content": "<s>", "special": true},
		{"id": 2, "content": "</s>", "special": true},
	}
	dir := writeUnigramDir(t, vocab, 0, false, false, added)
	tok, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, text := range referenceCorpus([]string{"<s>", "</s>"}) {
		known := true
		for _, r := range text {
			if _, ok := tok.vocab[string(r)]; !ok && r != ' ' {
				known = false
			}
		}
		if known {
			texts = append(texts, text)
		}
	}
	if len(texts) < 100 {
		t.Fatalf("only %d texts left", len(texts))
	}
	compareWithReference(t, tok, dir, "", texts)
}
