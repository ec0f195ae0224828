package tokenizer

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"govllm/internal/testmodels"
)

// FuzzRoundTrip checks, for any text, that Encode never panics and yields
// in-range ids; that decoding gives the text back (valid UTF-8 without
// special-token text or a literal '▁', which SentencePiece reads as a
// space); and that the incremental Decoder agrees with Decode.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range referenceCorpus([]string{"<s>", "</s>"})[:60] {
		f.Add(s)
	}
	f.Add("\xff\xfe invalid \xe4\xbd")
	dir := testmodels.Dir(f, "stories260K")
	tok512, err := Load(dir, LoadOptions{TokenizerPath: filepath.Join(dir, "tok512.bin")})
	if err != nil {
		f.Fatal(err)
	}
	toks := []*Tokenizer{tok512, NewDummy(300)}
	// Byte-level vocabularies with multi-pattern pre-tokenizers: no byte
	// may be lost between the patterns.
	// And WordPiece (which lowercases: ids and the Decoder only).
	for _, name := range []string{"deepseek-llm", "falcon", "bert-bge"} {
		tok, err := Load(filepath.Join(testmodels.Dir(f, "vocab"), "ggml-vocab-"+name+".gguf"), LoadOptions{})
		if err != nil {
			f.Fatal(err)
		}
		toks = append(toks, tok)
	}
	if hasNodeModules() {
		toks = append(toks, refTokenizer(f, "llama3"))
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range toks {
			ids := tok.Encode(s, true)
			for _, id := range ids {
				if id < 0 || int(id) >= tok.VocabSize() {
					t.Fatalf("Encode(%q) gives id %d outside the vocabulary", s, id)
				}
			}
			plain := utf8.ValidString(s) && !strings.Contains(s, "▁") && !strings.Contains(s, "<") && !strings.Contains(s, "\uFFFD") && everyByteHasToken(tok, s) && tok.kind != kindWPM
			if got := tok.Decode(ids, true); plain && got != s {
				t.Fatalf("Decode(Encode(%q)) = %q (ids %v)", s, got, ids)
			}
			d := tok.NewDecoder(nil, false)
			var sb strings.Builder
			for _, id := range ids {
				delta := d.Add(id)
				if !utf8.ValidString(delta) {
					t.Fatalf("invalid UTF-8 delta %q", delta)
				}
				sb.WriteString(delta)
			}
			sb.WriteString(d.Flush())
			if want := tok.Decode(ids, false); sb.String() != want {
				t.Fatalf("Decoder deltas %q != Decode %q", sb.String(), want)
			}
		}
	})
}

// everyByteHasToken: a byte-level vocabulary holds a token for every byte
// of s (it drops the others, as Hugging Face's BPE does).
func everyByteHasToken(tok *Tokenizer, s string) bool {
	if tok.kind != kindByteLevel {
		return true
	}
	for i := 0; i < len(s); i++ {
		if tok.byteTok[s[i]] < 0 {
			return false
		}
	}
	return true
}

// FuzzSplitText checks, for every pre-tokenizer pattern and every
// tokenizer.ggml.pre sequence, that the words of any text (invalid UTF-8
// included) are non-empty and concatenate to the text, and that the
// patterns said to be total match at every character.
func FuzzSplitText(f *testing.F) {
	for _, s := range splitCorpus()[:80] {
		f.Add(s)
	}
	f.Add("\xff\xfe invalid \xe4\xbd  \n")
	seqs := [][]pretokKind{nil}
	for k := pretokNone; k <= pretokLast; k++ {
		seqs = append(seqs, []pretokKind{k})
	}
	for _, p := range ggufPres {
		seqs = append(seqs, p.steps)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for k := pretokNone; k <= pretokLast; k++ {
			for i := 0; k.total() && i < len(s); i++ {
				if utf8.RuneStart(s[i]) && k.next(s, i) <= i {
					t.Fatalf("pattern %d, said to match everywhere, does not match %q at %d", k, s, i)
				}
			}
		}
		for _, steps := range seqs {
			var p pieces
			splitText(steps, s, &p)
			for _, w := range p {
				if w == "" {
					t.Fatalf("%v: empty word in %q", steps, s)
				}
			}
			if got := strings.Join(p, ""); got != s {
				t.Fatalf("%v: words of %q join to %q", steps, s, got)
			}
		}
	})
}
