package tokenizer

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"govllm/internal/testmodels"
)

// checkIncremental decodes prompt+out with a Decoder and checks the deltas
// against Decode.
func checkIncremental(t *testing.T, tok *Tokenizer, prompt, out []int32, skip bool) {
	t.Helper()
	d := tok.NewDecoder(prompt, skip)
	var sb strings.Builder
	for i, id := range out {
		s := d.Add(id)
		if !utf8.ValidString(s) {
			t.Fatalf("delta %d (id %d) is not valid UTF-8: %q", i, id, s)
		}
		sb.WriteString(s)
	}
	sb.WriteString(d.Flush())
	all := append(append([]int32{}, prompt...), out...)
	full := tok.Decode(all, skip)
	var want string
	if len(prompt) == 0 {
		want = tok.Decode(out, skip)
		if want != full {
			t.Fatalf("Decode(out) %q != Decode(all) %q with an empty prompt", want, full)
		}
	} else {
		pre := tok.Decode(prompt, skip)
		if strings.HasSuffix(pre, "\uFFFD") {
			return // the prompt may end inside a character: no prefix relation
		}
		if !strings.HasPrefix(full, pre) {
			t.Fatalf("Decode(all) %q does not start with Decode(prompt) %q", full, pre)
		}
		want = full[len(pre):]
	}
	if got := sb.String(); got != want {
		t.Fatalf("prompt %v out %v skip %v: deltas %q, want %q", prompt, out, skip, got, want)
	}
}

// randomIDs draws ids biased towards byte tokens and specials so that
// multi-byte characters get split across tokens.
func randomIDs(r *rand.Rand, tok *Tokenizer, n int, byteIDs []int32) []int32 {
	ids := make([]int32, n)
	for i := range ids {
		switch r.IntN(4) {
		case 0:
			ids[i] = byteIDs[r.IntN(len(byteIDs))]
		case 1:
			if tok.bos >= 0 {
				ids[i] = tok.bos
				break
			}
			fallthrough
		default:
			ids[i] = int32(r.IntN(tok.VocabSize()))
		}
	}
	return ids
}

func TestDecoderProperty(t *testing.T) {
	toks := map[string]*Tokenizer{"dummy": NewDummy(600)}
	if dir := testmodels.Dir(t, "stories260K"); dir != "" {
		tok, err := Load(dir, LoadOptions{TokenizerPath: filepath.Join(dir, "tok512.bin")})
		if err != nil {
			t.Fatal(err)
		}
		toks["tok512"] = tok
	}
	if hasNodeModules() {
		toks["llama3"] = refTokenizer(t, "llama3")
		toks["llama2"] = refTokenizer(t, "llama2")
	} else {
		t.Logf("reference tokenizers not installed (npm ci --prefix internal/tokenizer/testdata/npm): testing the dummy and tok512 only")
	}
	texts := []string{"Tom said 你好 to the dog.", "emoji 😀👍🏽 ok", "é à ü ß", "plain words here", "¡Hola!"}
	for name, tok := range toks {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			var byteIDs []int32
			for b := 0; b < 256; b++ {
				if id := tok.byteTok[b]; id >= 0 {
					byteIDs = append(byteIDs, id)
				}
			}
			for i := 0; i < 2000; i++ {
				prompt := randomIDs(r, tok, r.IntN(4), byteIDs)
				out := randomIDs(r, tok, r.IntN(12), byteIDs)
				checkIncremental(t, tok, prompt, out, i%2 == 0)
			}
			for _, text := range texts {
				ids := tok.Encode(text, true)
				for cut := 0; cut <= len(ids); cut++ {
					checkIncremental(t, tok, ids[:cut], ids[cut:], true)
					checkIncremental(t, tok, ids[:cut], ids[cut:], false)
				}
				if got := tok.Decode(ids, true); got != text {
					t.Fatalf("Decode(Encode(%q)) = %q", text, got)
				}
			}
		})
	}
}

func TestDecoderLeadingSpace(t *testing.T) {
	dir := testmodels.Dir(t, "stories260K")
	tok, err := Load(dir, LoadOptions{TokenizerPath: filepath.Join(dir, "tok512.bin")})
	if err != nil {
		t.Fatal(err)
	}
	prompt := tok.Encode("Once upon a time", true)
	out := tok.Encode("there was", false) // " there", " was"
	d := tok.NewDecoder(prompt, true)
	var sb strings.Builder
	for _, id := range out {
		sb.WriteString(d.Add(id))
	}
	if got := sb.String(); got != " there was" {
		t.Fatalf("after a prompt: %q, want %q", got, " there was")
	}
	d = tok.NewDecoder(nil, true)
	sb.Reset()
	for _, id := range out {
		sb.WriteString(d.Add(id))
	}
	if got := sb.String(); got != "there was" {
		t.Fatalf("without a prompt: %q, want %q", got, "there was")
	}
}

func TestDecoderHoldsIncompleteUTF8(t *testing.T) {
	tok := NewDummy(300)
	d := tok.NewDecoder(nil, true)
	steps := []struct {
		id   int32
		want string
	}{
		{'a', "a"}, {0xE4, ""}, {0xBD, ""}, {0xA0, "你"}, {0xF0, ""}, {0x9F, ""}, {0x98, ""}, {0x80, "😀"},
		{0xE4, ""}, {'x', "\uFFFDx"}, {0xFF, "\uFFFD"}, {DummyBOS, ""}, {0xC3, ""},
	}
	for i, s := range steps {
		if got := d.Add(s.id); got != s.want {
			t.Fatalf("step %d: Add(%#x) = %q, want %q", i, s.id, got, s.want)
		}
	}
	if got := d.Flush(); got != "\uFFFD" {
		t.Fatalf("Flush = %q", got)
	}
}

// TestDecoderSpecialTokens: skip_special_tokens and
// spaces_between_special_tokens (Hugging Face's slow decode: segments
// joined with a space).
func TestDecoderSpecialTokens(t *testing.T) {
	tok := NewDummy(300)
	ids := []int32{'a', DummyBOS, 'b', DummyEOS, DummyBOS}
	tests := []struct {
		name         string
		skip, spaces bool
		want         string
	}{
		{"skipped", true, true, "ab"},
		{"skipped, no spaces", true, false, "ab"},
		{"kept, spaced", false, true, "a <s> b </s> <s>"},
		{"kept, not spaced", false, false, "a<s>b</s><s>"},
	}
	for _, tc := range tests {
		d := tok.NewDecoderSpaced([]int32{'x'}, tc.skip, tc.spaces)
		var got string
		for _, id := range ids {
			got += d.Add(id)
		}
		if got += d.Flush(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
