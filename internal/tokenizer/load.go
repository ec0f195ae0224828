package tokenizer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Load reads the tokenizer of a model. modelPath is a Hugging Face model
// directory (tokenizer.json, with tokenizer_config.json and
// generation_config.json when present) or a .gguf file. A llama2.c model
// (.bin) has no vocabulary inside: its tokenizer file (tok512.bin-style) is
// opts.TokenizerPath, else tokenizer.bin or the only tok*.bin next to it. opts.TokenizerPath, when set, overrides modelPath
// and may also name a tokenizer.json, a .gguf or a directory.
func Load(modelPath string, opts LoadOptions) (*Tokenizer, error) {
	p := modelPath
	if opts.TokenizerPath != "" {
		p = opts.TokenizerPath
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoTokenizer, err)
	}
	switch {
	case st.IsDir():
		return loadHFDir(p)
	case strings.HasSuffix(strings.ToLower(p), ".json"):
		return loadHF(p, filepath.Dir(p))
	case strings.HasSuffix(strings.ToLower(p), ".gguf"):
		return loadGGUF(p)
	case opts.TokenizerPath != "":
		return loadLlama2C(p)
	}
	if tp := findLlama2CTokenizer(filepath.Dir(p)); tp != "" {
		return loadLlama2C(tp)
	}
	return nil, fmt.Errorf("%w: %s is neither a model directory nor a .gguf file, and no llama2.c tokenizer (tokenizer.bin, or a single tok*.bin) sits next to it; name the tokenizer file explicitly", ErrNoTokenizer, modelPath)
}

// findLlama2CTokenizer returns the llama2.c tokenizer next to a checkpoint:
// tokenizer.bin (llama2.c's default), else the only tok*.bin file; "" when
// there is none or the choice is ambiguous.
func findLlama2CTokenizer(dir string) string {
	p := filepath.Join(dir, "tokenizer.bin")
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
		return p
	}
	m, _ := filepath.Glob(filepath.Join(dir, "tok*.bin"))
	if len(m) == 1 {
		return m[0]
	}
	return ""
}

func loadHFDir(dir string) (*Tokenizer, error) {
	p := filepath.Join(dir, "tokenizer.json")
	if _, err := os.Stat(p); err != nil {
		return nil, fmt.Errorf("%w: %s has no tokenizer.json", ErrNoTokenizer, dir)
	}
	return loadHF(p, dir)
}
