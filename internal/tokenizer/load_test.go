package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"govllm/internal/gguf"
)

// writeHFDir writes a tokenizer.json (a tiny byte-level BPE with the Llama 3
// pre-tokenizer) and the given config files into a temporary directory.
func writeHFDir(t *testing.T, mutate func(tj map[string]any), files map[string]string) string {
	t.Helper()
	vocab := map[string]int32{}
	for b := 0; b < 256; b++ {
		vocab[byteToRune[b]] = int32(b)
	}
	vocab["he"] = 256
	vocab["ll"] = 257
	vocab["hell"] = 258
	vocab["hello"] = 259
	vocab["Ġw"] = 260
	tj := map[string]any{
		"version": "1.0",
		"added_tokens": []map[string]any{
			{"id": 261, "content": "<|begin|>", "special": true},
			{"id": 262, "content": "<|end|>", "special": true},
			{"id": 263, "content": "<|eot|>", "special": true, "lstrip": true, "rstrip": true},
			{"id": 264, "content": "TOOL", "special": false},
		},
		"normalizer": nil,
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": llama3Pattern}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false},
		}},
		"post_processor": map[string]any{"type": "Sequence", "processors": []any{
			map[string]any{"type": "ByteLevel"},
			map[string]any{"type": "TemplateProcessing",
				"single":         []any{map[string]any{"SpecialToken": map[string]any{"id": "<|begin|>", "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
				"special_tokens": map[string]any{"<|begin|>": map[string]any{"id": "<|begin|>", "ids": []int{261}, "tokens": []string{"<|begin|>"}}}},
		}},
		"decoder": map[string]any{"type": "ByteLevel"},
		"model": map[string]any{
			"type": "BPE", "vocab": vocab, "ignore_merges": false,
			"merges": [][2]string{{"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {"Ġ", "w"}},
		},
	}
	if mutate != nil {
		mutate(tj)
	}
	dir := t.TempDir()
	b, err := json.Marshal(tj)
	if err != nil {
		t.Fatal(err)
	}
	files["tokenizer.json"] = string(b)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadHFConfig(t *testing.T) {
	dir := writeHFDir(t, nil, map[string]string{
		"tokenizer_config.json":  `{"bos_token": {"content": "<|begin|>", "__type": "AddedToken"}, "eos_token": "<|eot|>", "chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]}`,
		"generation_config.json": `{"bos_token_id": 261, "eos_token_id": [262, 263]}`,
	})
	tok, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tok.BOS() != 261 || tok.EOS() != 263 || !slices.Equal(tok.EOSIDs(), []int32{263, 262}) {
		t.Fatalf("bos %d eos %d eosIDs %v", tok.BOS(), tok.EOS(), tok.EOSIDs())
	}
	if tok.BOSToken() != "<|begin|>" || tok.EOSToken() != "<|eot|>" || tok.ChatTemplate() != "D" || tok.VocabSize() != 265 {
		t.Fatalf("%q %q %q %d", tok.BOSToken(), tok.EOSToken(), tok.ChatTemplate(), tok.VocabSize())
	}
	tests := []struct {
		in   string
		want []int32
	}{
		{"hello", []int32{261, 259}},
		{"hello world", []int32{261, 259, 260, 'o', 'r', 'l', 'd'}},
		{"hi <|eot|> hello", []int32{261, 'h', 'i', 263, 259}}, // lstrip/rstrip eat the spaces
		{"<|end|>hello<|end|>", []int32{261, 262, 259, 262}},
		{"a TOOL b", []int32{261, 'a', byteTokID(' '), 264, byteTokID(' '), 'b'}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := tok.Encode(tc.in, true); !slices.Equal(got, tc.want) {
				t.Fatalf("Encode(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
	if got := tok.Decode([]int32{261, 259, 260, 263, 264}, true); got != "hello wTOOL" {
		t.Fatalf("Decode(skip) = %q", got)
	}
	if got := tok.Decode([]int32{261, 259, 260, 263, 264}, false); got != "<|begin|>hello w<|eot|>TOOL" {
		t.Fatalf("Decode = %q", got)
	}
}

// byteTokID is the id of a byte in writeHFDir's vocabulary.
func byteTokID(b byte) int32 { return int32(b) }

func TestLoadHFChatTemplateFileAndDefaults(t *testing.T) {
	dir := writeHFDir(t, nil, map[string]string{
		"chat_template.jinja":    "J",
		"generation_config.json": `{"eos_token_id": 262}`,
	})
	tok, err := Load(filepath.Join(dir, "tokenizer.json"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// No tokenizer_config.json: BOS from the post-processor, EOS from
	// generation_config.json.
	if tok.ChatTemplate() != "J" || tok.BOS() != 261 || !tok.AddsBOS() || tok.EOS() != 262 || tok.EOSToken() != "<|end|>" {
		t.Fatalf("template %q bos %d adds %v eos %d %q", tok.ChatTemplate(), tok.BOS(), tok.AddsBOS(), tok.EOS(), tok.EOSToken())
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(map[string]any)
		want   error
	}{
		{"wordpiece", func(tj map[string]any) { tj["model"].(map[string]any)["type"] = "WordPiece" }, ErrUnsupported},
		{"unknown regex", func(tj map[string]any) {
			tj["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `\w+`}, "behavior": "Isolated"}
		}, ErrUnsupported},
		{"precompiled", func(tj map[string]any) { tj["normalizer"] = map[string]any{"type": "Precompiled"} }, ErrUnsupported},
		{"ByteLevel add_prefix_space after Split", func(tj map[string]any) {
			tj["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Split", "pattern": map[string]any{"Regex": llama3Pattern}, "behavior": "Isolated", "invert": false},
				map[string]any{"type": "ByteLevel", "add_prefix_space": true, "use_regex": false}}}
		}, ErrUnsupported},
		{"Prepend ▁ with ByteLevel", func(tj map[string]any) { tj["normalizer"] = map[string]any{"type": "Prepend", "prepend": "▁"} }, ErrUnsupported},
		{"Split Removed not inverted", func(tj map[string]any) {
			tj["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": map[string]any{"Regex": llama3Pattern}, "behavior": "Removed", "invert": false}
		}, ErrUnsupported},
		{"replace regex", func(tj map[string]any) {
			tj["normalizer"] = map[string]any{"type": "Replace", "pattern": map[string]any{"Regex": " +"}, "content": " "}
		}, ErrUnsupported},
		{"bad merge", func(tj map[string]any) { tj["model"].(map[string]any)["merges"] = []string{"x yz"} }, ErrFormat},
		{"not json", func(tj map[string]any) { tj["model"] = 3 }, ErrFormat},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(writeHFDir(t, tc.mutate, map[string]string{}), LoadOptions{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing"), LoadOptions{}); !errors.Is(err, ErrNoTokenizer) {
		t.Fatalf("missing path: %v", err)
	}
	if _, err := Load(t.TempDir(), LoadOptions{}); !errors.Is(err, ErrNoTokenizer) {
		t.Fatalf("empty dir: %v", err)
	}
	binDir := t.TempDir()
	bin := filepath.Join(binDir, "model.bin")
	if err := os.WriteFile(bin, []byte{1, 2, 3}, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bin, LoadOptions{}); !errors.Is(err, ErrNoTokenizer) {
		t.Fatalf("llama2.c model without tokenizer: %v", err)
	}
	if _, err := Load(bin, LoadOptions{TokenizerPath: bin}); !errors.Is(err, ErrFormat) {
		t.Fatalf("truncated tokenizer: %v", err)
	}
	for _, name := range []string{"tok1.bin", "tok2.bin"} {
		if err := os.WriteFile(filepath.Join(binDir, name), []byte{1, 2, 3}, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Load(bin, LoadOptions{}); !errors.Is(err, ErrNoTokenizer) {
		t.Fatalf("two candidate tokenizers: %v", err)
	}
}

// TestGGUFByteLevel builds a GGUF vocabulary (tokenizer.ggml.model "gpt2",
// pre "llama-bpe") from the Llama 3 tokenizer.json and checks that it
// encodes exactly as the tokenizer.json does.
func TestGGUFByteLevel(t *testing.T) {
	t.Parallel()
	hf := refTokenizer(t, "llama3")
	types := make([]int32, hf.VocabSize())
	for i := range types {
		types[i] = ggufNormal
		if hf.IsSpecial(int32(i)) {
			types[i] = ggufControl
		}
	}
	type rankedMerge struct {
		rank int32
		s    string
	}
	var ms []rankedMerge
	for k, m := range hf.merges {
		ms = append(ms, rankedMerge{m.rank, hf.pieces[int32(k>>32)] + " " + hf.pieces[int32(uint32(k))]})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].rank < ms[j].rank })
	merges := make([]string, len(ms))
	for i, m := range ms {
		merges[i] = m.s
	}
	eot, _ := hf.TokenID("<|eot_id|>")
	var buf bytes.Buffer
	err := gguf.Encode(&buf, []gguf.KV{
		{Key: "general.architecture", Value: "llama"},
		{Key: "tokenizer.ggml.model", Value: "gpt2"},
		{Key: "tokenizer.ggml.pre", Value: "llama-bpe"},
		{Key: "tokenizer.ggml.tokens", Value: hf.pieces},
		{Key: "tokenizer.ggml.token_type", Value: types},
		{Key: "tokenizer.ggml.merges", Value: merges},
		{Key: "tokenizer.ggml.bos_token_id", Value: uint32(128000)},
		{Key: "tokenizer.ggml.eos_token_id", Value: uint32(128001)},
		{Key: "tokenizer.chat_template", Value: "{{ x }}"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse("llama3.gguf", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	g, err := fromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	if g.BOS() != 128000 || g.EOS() != 128001 || !containsID(g.EOSIDs(), eot) || !g.AddsBOS() || g.ChatTemplate() != "{{ x }}" {
		t.Fatalf("bos %d eos %d eosIDs %v addsBOS %v", g.BOS(), g.EOS(), g.EOSIDs(), g.AddsBOS())
	}
	for _, text := range referenceCorpus([]string{"<|eot_id|>", "<|begin_of_text|>"}) {
		want := hf.Encode(text, false)
		if got := g.Encode(text, false); !slices.Equal(got, want) {
			t.Fatalf("GGUF Encode(%q) = %v, tokenizer.json gives %v", text, got, want)
		}
		if got := g.Decode(want, false); got != hf.Decode(want, false) {
			t.Fatalf("GGUF Decode = %q, tokenizer.json gives %q", got, hf.Decode(want, false))
		}
	}
}

// TestLoadHFFlags checks what the loader derives from the normalizer,
// pre-tokenizer and decoder of a tokenizer.json.
// seq names a sequence of pre-tokenizer patterns.
func seq(k ...pretokKind) string { return fmt.Sprint(k) }

func TestLoadHFFlags(t *testing.T) {
	split := func(pattern string) any {
		return map[string]any{"type": "Split", "pattern": map[string]any{"Regex": pattern}, "behavior": "Isolated", "invert": false}
	}
	metaspace := func(scheme string, split bool) map[string]any {
		return map[string]any{"type": "Metaspace", "replacement": "▁", "add_prefix_space": true, "prepend_scheme": scheme, "split": split}
	}
	type flags struct {
		kind                                                   kind
		pretok                                                 string // fmt.Sprint of the patterns; "" when none
		ignoreMerges, prefix, unlessSpace, first, every, strip bool
	}
	tests := []struct {
		name   string
		mutate func(tj map[string]any)
		want   flags
	}{
		{"llama3", func(tj map[string]any) { tj["model"].(map[string]any)["ignore_merges"] = true },
			flags{kind: kindByteLevel, pretok: seq(pretokLlama3), ignoreMerges: true}},
		{"gpt2 ByteLevel regex", func(tj map[string]any) {
			tj["pre_tokenizer"] = map[string]any{"type": "ByteLevel", "add_prefix_space": false}
		}, flags{kind: kindByteLevel, pretok: seq(pretokGPT2)}},
		{"gpt2 ByteLevel add_prefix_space", func(tj map[string]any) {
			tj["pre_tokenizer"] = map[string]any{"type": "ByteLevel", "add_prefix_space": true}
		}, flags{kind: kindByteLevel, pretok: seq(pretokGPT2), prefix: true}},
		{"gpt2 Split", func(tj map[string]any) {
			tj["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{split(gpt2Pattern), map[string]any{"type": "ByteLevel", "use_regex": false}}}
		}, flags{kind: kindByteLevel, pretok: seq(pretokGPT2)}},
		{"qwen2 Split", func(tj map[string]any) {
			tj["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{split(qwen2Pattern), map[string]any{"type": "ByteLevel", "use_regex": false}}}
		}, flags{kind: kindByteLevel, pretok: seq(pretokQwen2)}},
		{"falcon Sequence", func(tj map[string]any) {
			tj["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Punctuation", "behavior": "Contiguous"},
				map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
				map[string]any{"type": "Digits", "individual_digits": false},
				split("[0-9][0-9][0-9]")}}
		}, flags{kind: kindByteLevel, pretok: seq(pretokPunctSymbols, pretokGPT2, pretokNumbers, pretokThreeDigits)}},
		{"tekken Split", func(tj map[string]any) {
			tj["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{split(tekkenPattern), map[string]any{"type": "ByteLevel", "use_regex": false}}}
		}, flags{kind: kindByteLevel, pretok: seq(pretokTekken)}},
		{"deepseek-v3 Sequence", func(tj map[string]any) {
			tj["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{split(`\p{N}{1,3}`), split(cjkKanaClass + "+"), split(deepSeekV3Pattern), map[string]any{"type": "ByteLevel", "use_regex": false}}}
		}, flags{kind: kindByteLevel, pretok: seq(pretokNumbers3, pretokCJKKana, pretokDeepSeekV3)}},
		{"Punctuation default", func(tj map[string]any) {
			tj["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Punctuation"},
				map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}}}
		}, flags{kind: kindByteLevel, pretok: seq(pretokPunctSymbol, pretokGPT2)}},
		{"starcoder Sequence", func(tj map[string]any) {
			tj["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Digits", "individual_digits": true},
				map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}}}
		}, flags{kind: kindByteLevel, pretok: seq(pretokNumber, pretokGPT2)}},
		{"llama2 normalizer", func(tj map[string]any) {
			tj["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{
				map[string]any{"type": "Prepend", "prepend": "▁"},
				map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"}}}
			tj["pre_tokenizer"] = nil
			tj["decoder"] = map[string]any{"type": "Sequence", "decoders": []any{
				map[string]any{"type": "Replace", "pattern": map[string]any{"String": "▁"}, "content": " "},
				map[string]any{"type": "ByteFallback"}, map[string]any{"type": "Fuse"},
				map[string]any{"type": "Strip", "content": " ", "start": 1, "stop": 0}}}
		}, flags{kind: kindSPM, prefix: true, strip: true}},
		{"metaspace first", func(tj map[string]any) {
			tj["pre_tokenizer"] = metaspace("first", false)
			tj["decoder"] = metaspace("first", false)
		}, flags{kind: kindSPM, prefix: true, unlessSpace: true, first: true, strip: true}},
		{"metaspace always split", func(tj map[string]any) {
			tj["pre_tokenizer"] = metaspace("always", true)
			tj["decoder"] = metaspace("always", true)
		}, flags{kind: kindSPM, prefix: true, unlessSpace: true, every: true, strip: true}},
		{"metaspace never", func(tj map[string]any) {
			tj["pre_tokenizer"] = metaspace("never", false)
			tj["decoder"] = metaspace("never", false)
		}, flags{kind: kindSPM, unlessSpace: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := Load(writeHFDir(t, tc.mutate, map[string]string{}), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := flags{tok.kind, "", tok.ignoreMerges, tok.prefixSpace, tok.prefixUnlessSpace, tok.prefixFirstOnly, tok.splitEverySpace, tok.stripLeading}
			if len(tok.pretok) > 0 {
				got.pretok = seq(tok.pretok...)
			}
			if got != tc.want {
				t.Fatalf("flags %+v, want %+v", got, tc.want)
			}
		})
	}
}

// ggufFromKV encodes metadata as a GGUF file named vocab.gguf and parses it.
func ggufFromKV(t *testing.T, kv map[string]any) *gguf.File {
	t.Helper()
	var kvs []gguf.KV
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		kvs = append(kvs, gguf.KV{Key: k, Value: kv[k]})
	}
	var buf bytes.Buffer
	if err := gguf.Encode(&buf, kvs, nil); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse("vocab.gguf", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestGGUFPreFlags: tokenizer.ggml.pre sets what llama.cpp's llama-vocab.cpp
// sets with it (patterns, ignore_merges, add_bos, no BOS), and an absent key
// is llama.cpp's "default" list.
func TestGGUFPreFlags(t *testing.T) {
	tests := []struct {
		pre                  string // "": no key
		pretok               string
		ignoreMerges, addBOS bool
		bos                  int32
	}{
		{"", seq(pretokPunctSymbolsDefault, pretokGPT2, pretokNumbers, pretokThreeDigits), false, false, 0},
		{"llama-bpe", seq(pretokLlama3), true, true, 0},
		{"smaug-bpe", seq(pretokLlama3), false, false, 0},
		{"glm4", seq(pretokLlama3), false, false, -1},
		{"tekken", seq(pretokTekken), true, true, 0},
		{"falcon", seq(pretokPunctSymbols, pretokGPT2, pretokThreeDigits), false, false, 0},
		{"viking", seq(pretokBloom, pretokNumber), false, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.pre, func(t *testing.T) {
			kv := map[string]any{
				"tokenizer.ggml.model":        "gpt2",
				"tokenizer.ggml.tokens":       []string{"a", "b", "ab"},
				"tokenizer.ggml.merges":       []string{"a b"},
				"tokenizer.ggml.bos_token_id": uint32(0),
			}
			if tc.pre != "" {
				kv["tokenizer.ggml.pre"] = tc.pre
			}
			tok, err := fromGGUF(ggufFromKV(t, kv))
			if err != nil {
				t.Fatal(err)
			}
			if got := seq(tok.pretok...); got != tc.pretok || tok.ignoreMerges != tc.ignoreMerges || tok.addBOS != tc.addBOS || tok.bos != tc.bos {
				t.Fatalf("pretok %s ignore_merges %v add_bos %v bos %d, want %s %v %v %d", got, tok.ignoreMerges, tok.addBOS, tok.bos, tc.pretok, tc.ignoreMerges, tc.addBOS, tc.bos)
			}
		})
	}
}

// TestGGUFVocabularyErrors: a malformed GGUF vocabulary is an error naming
// the file, never a silent default — a key of the wrong type included.
func TestGGUFVocabularyErrors(t *testing.T) {
	base := func() map[string]any {
		return map[string]any{
			"tokenizer.ggml.model":  "gpt2",
			"tokenizer.ggml.pre":    "gpt-2",
			"tokenizer.ggml.tokens": []string{"a", "b", "ab"},
			"tokenizer.ggml.merges": []string{"a b"},
		}
	}
	for _, tc := range []struct {
		name   string
		mutate func(kv map[string]any)
		want   error
	}{
		{"valid", func(map[string]any) {}, nil},
		{"unknown model", func(kv map[string]any) { kv["tokenizer.ggml.model"] = "rwkv" }, ErrUnsupported},
		{"unknown pre-tokenizer", func(kv map[string]any) { kv["tokenizer.ggml.pre"] = "chameleon" }, ErrUnsupported},
		{"merge without space", func(kv map[string]any) { kv["tokenizer.ggml.merges"] = []string{"ab"} }, ErrFormat},
		{"types count", func(kv map[string]any) { kv["tokenizer.ggml.token_type"] = []int32{1} }, ErrFormat},
		{"scores count", func(kv map[string]any) {
			kv["tokenizer.ggml.model"] = "llama"
			kv["tokenizer.ggml.scores"] = []float32{0}
		}, ErrFormat},
		{"add_bos_token not a bool", func(kv map[string]any) { kv["tokenizer.ggml.add_bos_token"] = "yes" }, ErrFormat},
		{"bos_token_id not an integer", func(kv map[string]any) { kv["tokenizer.ggml.bos_token_id"] = "1" }, ErrFormat},
		{"bos_token_id out of range is no BOS", func(kv map[string]any) { kv["tokenizer.ggml.bos_token_id"] = uint32(99) }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kv := base()
			tc.mutate(kv)
			_, err := fromGGUF(ggufFromKV(t, kv))
			if !errors.Is(err, tc.want) || (err != nil && !strings.Contains(err.Error(), "vocab.gguf")) {
				t.Fatalf("err = %v, want %v naming the file", err, tc.want)
			}
		})
	}
}
