package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"govllm/internal/gguf"
	"govllm/internal/testmodels"
)

// The conformance test runs llama.cpp's test-tokenizer-0 data
// (shared/models/vocab: ggml-vocab-<name>.gguf, its .inp texts and .out
// ids, produced by Hugging Face transformers with add_special_tokens=False)
// and the Hugging Face tokenizer.json files in hf-tokenizers/ (checked
// against the same .out files).

// vocabExpect is what a vocabulary of shared/models/vocab must do.
type vocabExpect uint8

const (
	// expectPass: loads, and every .inp case encodes to its .out ids.
	expectPass vocabExpect = iota
	// expectLoad: loads (no .inp/.out to compare with).
	expectLoad
	// expectUnsupported: the load fails with ErrUnsupported naming what
	// is missing (unsupported), never a different tokenization.
	expectUnsupported
	// expectUntestable: llama.cpp ships goldens but no vocabulary, and no
	// tokenizer.json is supplied for it.
	expectUntestable
)

// vocabCase is one vocabulary of shared/models/vocab.
type vocabCase struct {
	name   string
	source string // "gguf": ggml-vocab-<name>.gguf; "hf": hf-tokenizers/<name>/; "": none
	expect vocabExpect
	// unsupported: expectUnsupported's error must contain it.
	unsupported string
}

// vocabCases lists every vocabulary of shared/models/vocab (the test fails
// on a file no row covers).
var vocabCases = []vocabCase{
	{name: "llama-bpe", source: "hf", expect: expectPass},
	{name: "qwen2", source: "hf", expect: expectPass},
	{name: "llama-spm", source: "gguf", expect: expectPass},
	{name: "phi-3", source: "gguf", expect: expectPass},
	{name: "gpt-2", source: "gguf", expect: expectPass},
	{name: "deepseek-llm", source: "gguf", expect: expectPass},
	{name: "deepseek-coder", source: "gguf", expect: expectPass},
	{name: "falcon", source: "gguf", expect: expectPass},
	{name: "starcoder", source: "gguf", expect: expectPass},
	{name: "mpt", source: "gguf", expect: expectPass},
	{name: "refact", source: "gguf", expect: expectPass},
	{name: "bert-bge", source: "gguf", expect: expectPass},
	// llama.cpp ships these two vocabularies without .inp/.out.
	{name: "baichuan", source: "gguf", expect: expectLoad},
	{name: "gpt-neox", source: "gguf", expect: expectLoad},
	// Goldens without a vocabulary: llama.cpp does not ship their .gguf and
	// no tokenizer.json is supplied, so they cannot be tested here.
	{name: "command-r", expect: expectUntestable},
	{name: "gemma-4", expect: expectUntestable},
	{name: "qwen35", expect: expectUntestable},
}

// vocabPath is the file or directory Load reads for c.
func vocabPath(dir string, c vocabCase) string {
	if c.source == "hf" {
		return filepath.Join(dir, "hf-tokenizers", c.name)
	}
	return filepath.Join(dir, "ggml-vocab-"+c.name+".gguf")
}

// readVocabGoldens reads ggml-vocab-<name>.gguf.inp and .out as
// test-tokenizer-0.cpp does: the texts split on the separator (a trailing
// separator ends the list), one .out line of space-separated ids per text.
func readVocabGoldens(dir, name string) (texts []string, ids [][]int32, err error) {
	base := filepath.Join(dir, "ggml-vocab-"+name+".gguf")
	inp, err := os.ReadFile(base + ".inp")
	if err != nil {
		return nil, nil, err
	}
	out, err := os.ReadFile(base + ".out")
	if err != nil {
		return nil, nil, err
	}
	texts = strings.Split(string(inp), "\n__ggml_vocab_test__\n")
	if texts[len(texts)-1] == "" {
		texts = texts[:len(texts)-1]
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(texts) {
		return nil, nil, fmt.Errorf("%s: %d texts, %d id lines", base, len(texts), len(lines))
	}
	for i, l := range lines {
		var row []int32
		for _, f := range strings.Fields(l) {
			v, err := strconv.ParseInt(f, 10, 32)
			if err != nil {
				return nil, nil, fmt.Errorf("%s.out:%d: %w", base, i+1, err)
			}
			row = append(row, int32(v))
		}
		ids = append(ids, row)
	}
	return texts, ids, nil
}

// TestVocabCasesCoverDirectory: every vocabulary and golden file of
// shared/models/vocab has a row in vocabCases, and each row's files exist.
func TestVocabCasesCoverDirectory(t *testing.T) {
	dir := testmodels.Dir(t, "vocab")
	rows := map[string]vocabCase{}
	for _, c := range vocabCases {
		rows[c.name] = c
	}
	files, err := filepath.Glob(filepath.Join(dir, "ggml-vocab-*"))
	if err != nil {
		t.Fatal(err)
	}
	hf, err := filepath.Glob(filepath.Join(dir, "hf-tokenizers", "*", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, hf...)
	if len(files) == 0 {
		t.Fatalf("no vocabulary in %s", dir)
	}
	for _, f := range files {
		name := strings.TrimPrefix(filepath.Base(f), "ggml-vocab-")
		name = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, ".inp"), ".out"), ".gguf")
		if filepath.Base(f) == "tokenizer.json" {
			name = filepath.Base(filepath.Dir(f))
		}
		if _, ok := rows[name]; !ok {
			t.Errorf("%s: vocabulary %q has no row in vocabCases", f, name)
		}
	}
	for _, c := range vocabCases {
		_, err := os.Stat(vocabPath(dir, c))
		if has := err == nil; has != (c.source != "") {
			t.Errorf("%s: source %q, but %s exists: %v", c.name, c.source, vocabPath(dir, c), has)
		}
		_, err = os.Stat(filepath.Join(dir, "ggml-vocab-"+c.name+".gguf.out"))
		if has := err == nil; has != (c.expect != expectLoad) {
			t.Errorf("%s: expect %d, but the .out file exists: %v", c.name, c.expect, has)
		}
	}
}

func TestVocabConformance(t *testing.T) {
	dir := testmodels.Dir(t, "vocab")
	for _, c := range vocabCases {
		t.Run(c.name, func(t *testing.T) {
			if c.expect == expectUntestable {
				t.Skipf("SKIPPING %s: llama.cpp ships its goldens but not its vocabulary, and no tokenizer.json is supplied", c.name)
			}
			tok, err := Load(vocabPath(dir, c), LoadOptions{})
			if c.expect == expectUnsupported {
				if err == nil || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), c.unsupported) {
					t.Fatalf("Load = %v, want ErrUnsupported naming %s", err, c.unsupported)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.expect == expectLoad {
				if tok.VocabSize() == 0 {
					t.Fatal("empty vocabulary")
				}
				return
			}
			texts, want, err := readVocabGoldens(dir, c.name)
			if err != nil {
				t.Fatal(err)
			}
			checkGoldens(t, tok, texts, want)
		})
	}
}

// checkGoldens reports every text whose ids differ from want.
func checkGoldens(t *testing.T, tok *Tokenizer, texts []string, want [][]int32) {
	t.Helper()
	bad := 0
	for i, text := range texts {
		if got := tok.Encode(text, false); !slices.Equal(got, want[i]) {
			bad++
			t.Errorf("case %d %q:\n  got  %v\n  want %v", i, text, got, want[i])
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d cases differ", bad, len(texts))
	}
}

// TestLoadVocabOnlyGGUF: a vocabulary-only GGUF (no tensors) is a tokenizer
// for Load, named as the model or as LoadOptions.TokenizerPath (serve's
// --tokenizer), whatever the model path is.
func TestLoadVocabOnlyGGUF(t *testing.T) {
	dir := testmodels.Dir(t, "vocab")
	tests := []struct {
		name           string
		size, bos, eos int
		kind           string
	}{
		{"llama-spm", 32000, 1, 2, "sentencepiece-bpe"},
		{"gpt-2", 50257, 50256, 50256, "byte-level-bpe"},
		{"deepseek-coder", 32256, 32013, 32014, "byte-level-bpe"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := vocabPath(dir, vocabCase{name: tc.name, source: "gguf"})
			texts, want, err := readVocabGoldens(dir, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			// "": serve --load-format dummy --tokenizer FILE has no model path.
			for _, modelPath := range []string{path, filepath.Join(t.TempDir(), "model.bin"), t.TempDir(), ""} {
				tok, err := Load(modelPath, LoadOptions{TokenizerPath: path})
				if err != nil {
					t.Fatalf("Load(%s, TokenizerPath %s): %v", modelPath, path, err)
				}
				if tok.VocabSize() != tc.size || tok.BOS() != int32(tc.bos) || tok.EOS() != int32(tc.eos) || !strings.HasPrefix(tok.String(), tc.kind) {
					t.Fatalf("%s: vocab %d bos %d eos %d, want %d %d %d %s", tok, tok.VocabSize(), tok.BOS(), tok.EOS(), tc.size, tc.bos, tc.eos, tc.kind)
				}
				i := slices.Index(texts, "Hello world")
				if i < 0 {
					t.Fatal(`no "Hello world" case`)
				}
				if got := tok.Encode(texts[i], false); !slices.Equal(got, want[i]) {
					t.Fatalf("Encode(%q) = %v, want %v", texts[i], got, want[i])
				}
			}
		})
	}
}

// TestWordPieceBERT: BERT's special tokens around a sequence ([CLS] ...
// [SEP], as Hugging Face's BertProcessing adds them), decoding, and the
// WordPiece limits (a word of more than 100 characters, or with a part no
// piece matches, is one [UNK]).
func TestWordPieceBERT(t *testing.T) {
	dir := testmodels.Dir(t, "vocab")
	tok, err := Load(vocabPath(dir, vocabCase{name: "bert-bge", source: "gguf"}), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	texts, want, err := readVocabGoldens(dir, "bert-bge")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(texts, "Hello world")
	if i < 0 {
		t.Fatal(`no "Hello world" case`)
	}
	const cls, sep, unk = 101, 102, 100
	if got, w := tok.Encode(texts[i], true), append(append([]int32{cls}, want[i]...), sep); !slices.Equal(got, w) {
		t.Errorf("Encode(%q, addSpecial) = %v, want %v", texts[i], got, w)
	}
	if got := tok.Decode(want[i], true); got != "hello world" {
		t.Errorf("Decode(%v) = %q", want[i], got)
	}
	long := strings.Repeat("a", wpmMaxWordRunes+1)
	if got := tok.Encode("hello "+long+" world", false); !slices.Equal(got, []int32{want[i][0], unk, want[i][1]}) {
		t.Errorf("a %d-letter word: %v, want [UNK] between hello and world", len(long), got)
	}
	if got := tok.Encode("hello \U0001F600x world", false); !slices.Equal(got, []int32{want[i][0], unk, want[i][1]}) {
		t.Errorf("an unknown character: %v, want [UNK] between hello and world", got)
	}
	if s := tok.String(); !strings.HasPrefix(s, "wordpiece vocab=30522 bos=101") {
		t.Errorf("String() = %q", s)
	}
}

// writeBERTTokenizerJSON writes a Hugging Face tokenizer.json (BERT's
// pipeline: BertNormalizer, BertPreTokenizer, WordPiece, BertProcessing or
// TemplateProcessing) holding the vocabulary of ggml-vocab-bert-bge.gguf,
// rewritten from llama.cpp's form to Hugging Face's ("▁x" → "x", "x" →
// "##x"; control tokens as added tokens).
func writeBERTTokenizerJSON(t *testing.T, dir string, template bool) string {
	t.Helper()
	f, err := gguf.ReadFile(vocabPath(dir, vocabCase{name: "bert-bge", source: "gguf"}))
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := f.Strings("tokenizer.ggml.tokens")
	if err != nil {
		t.Fatal(err)
	}
	types, err := f.Ints("tokenizer.ggml.token_type")
	if err != nil {
		t.Fatal(err)
	}
	vocab := map[string]int{}
	var added []map[string]any
	for id, s := range tokens {
		switch {
		case types[id] == ggufControl:
			added = append(added, map[string]any{"id": id, "content": s, "special": true})
		case strings.HasPrefix(s, "▁"):
			s = strings.TrimPrefix(s, "▁")
		case strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"): // [unused0]
		default:
			s = "##" + s
		}
		vocab[s] = id
	}
	post := map[string]any{"type": "BertProcessing", "sep": []any{"[SEP]", 102}, "cls": []any{"[CLS]", 101}}
	if template {
		post = map[string]any{"type": "TemplateProcessing",
			"single": []any{
				map[string]any{"SpecialToken": map[string]any{"id": "[CLS]", "type_id": 0}},
				map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}},
				map[string]any{"SpecialToken": map[string]any{"id": "[SEP]", "type_id": 0}}},
			"special_tokens": map[string]any{
				"[CLS]": map[string]any{"id": "[CLS]", "ids": []int{101}, "tokens": []string{"[CLS]"}},
				"[SEP]": map[string]any{"id": "[SEP]", "ids": []int{102}, "tokens": []string{"[SEP]"}}}}
	}
	tj := map[string]any{
		"version":        "1.0",
		"added_tokens":   added,
		"normalizer":     map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer":  map[string]any{"type": "BertPreTokenizer"},
		"post_processor": post,
		"decoder":        map[string]any{"type": "WordPiece", "prefix": "##", "cleanup": true},
		"model":          map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": vocab},
	}
	b, err := json.Marshal(tj)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "tokenizer.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHFWordPiece: a BERT tokenizer.json (the bert-bge vocabulary in
// Hugging Face's form) passes bert-bge's conformance cases and adds [CLS]
// and [SEP] with special tokens, with either post-processor.
func TestHFWordPiece(t *testing.T) {
	dir := testmodels.Dir(t, "vocab")
	texts, want, err := readVocabGoldens(dir, "bert-bge")
	if err != nil {
		t.Fatal(err)
	}
	for _, template := range []bool{false, true} {
		t.Run(fmt.Sprintf("template=%v", template), func(t *testing.T) {
			tok, err := Load(writeBERTTokenizerJSON(t, dir, template), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			checkGoldens(t, tok, texts, want)
			if got, w := tok.Encode(texts[0], true), append(append([]int32{101}, want[0]...), 102); !slices.Equal(got, w) {
				t.Errorf("Encode(%q, addSpecial) = %v, want %v", texts[0], got, w)
			}
			if tok.unk != 100 || !strings.HasPrefix(tok.String(), "wordpiece vocab=30522 bos=101") {
				t.Errorf("unk %d, %s", tok.unk, tok)
			}
		})
	}
}
