package tokenizer

import (
	"path/filepath"
	"slices"
	"testing"

	"govllm/internal/testmodels"
)

// goldenCase is one golden prompt of stories260K: its text and the ids that
// feed it (the first column of the .ids file while the prompt is fed).
type goldenCase struct {
	name   string
	prompt string
	ids    []int32
}

func loadGolden(t *testing.T) []goldenCase {
	t.Helper()
	var cases []goldenCase
	for _, name := range testmodels.GoldenNames {
		g := testmodels.LoadGolden(t, name)
		cases = append(cases, goldenCase{name: name, prompt: g.Prompt, ids: g.PromptIDs()})
	}
	return cases
}

// stories260K loads the three forms of the stories260K tokenizer.
func stories260K(t *testing.T) map[string]*Tokenizer {
	t.Helper()
	dir := testmodels.Dir(t, "stories260K")
	hfDir := filepath.Join(filepath.Dir(dir), "stories260K-hf")
	toks := map[string]*Tokenizer{}
	for name, load := range map[string]func() (*Tokenizer, error){
		"gguf":               func() (*Tokenizer, error) { return Load(filepath.Join(dir, "stories260K.gguf"), LoadOptions{}) },
		"tokenizer.json":     func() (*Tokenizer, error) { return Load(hfDir, LoadOptions{}) },
		"tok512.bin (found)": func() (*Tokenizer, error) { return Load(filepath.Join(dir, "stories260K.bin"), LoadOptions{}) },
		"tok512.bin": func() (*Tokenizer, error) {
			return Load(filepath.Join(dir, "stories260K.bin"), LoadOptions{TokenizerPath: filepath.Join(dir, "tok512.bin")})
		},
	} {
		tok, err := load()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		toks[name] = tok
	}
	return toks
}

func TestStories260KGolden(t *testing.T) {
	cases := loadGolden(t)
	for name, tok := range stories260K(t) {
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				got := tok.Encode(c.prompt, true)
				if !slices.Equal(got, c.ids) {
					t.Fatalf("Encode(%q) = %v, want %v", c.prompt, got, c.ids)
				}
				if s := tok.Decode(got, true); s != c.prompt {
					t.Fatalf("Decode(Encode(%q)) = %q", c.prompt, s)
				}
				if s := tok.Decode(got, false); s != "<s>"+" "+c.prompt {
					t.Fatalf("Decode(ids, false) = %q, want <s> and the prompt", s)
				}
				if got := tok.Encode(c.prompt, false); !slices.Equal(got, c.ids[1:]) {
					t.Fatalf("Encode(%q, false) = %v, want %v", c.prompt, got, c.ids[1:])
				}
			})
		}
	}
}

func TestStories260KMetadata(t *testing.T) {
	for name, tok := range stories260K(t) {
		t.Run(name, func(t *testing.T) {
			if tok.VocabSize() != 512 || tok.BOS() != 1 || tok.EOS() != 2 || !slices.Equal(tok.EOSIDs(), []int32{2}) {
				t.Fatalf("vocab %d bos %d eos %d eosIDs %v", tok.VocabSize(), tok.BOS(), tok.EOS(), tok.EOSIDs())
			}
			if s := tok.String(); s != "sentencepiece-bpe vocab=512 bos=1 eos=[2]" {
				t.Fatalf("String() = %q", s)
			}
			if tok.BOSToken() != "<s>" || tok.EOSToken() != "</s>" {
				t.Fatalf("BOSToken %q EOSToken %q", tok.BOSToken(), tok.EOSToken())
			}
			if p := tok.Piece(403); p != " Once" {
				t.Fatalf("Piece(403) = %q", p)
			}
			if p := tok.Piece(231); p != "\xe4" {
				t.Fatalf("Piece(231) = %q", p)
			}
			// Special tokens written in text are recognised; every text
			// segment gets the dummy prefix.
			if got, want := tok.Encode("Once</s>Once", false), []int32{403, 2, 403}; !slices.Equal(got, want) {
				t.Fatalf("Encode with </s> = %v, want %v", got, want)
			}
		})
	}
}
