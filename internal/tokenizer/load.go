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
// (.bin) has no vocabulary inside: name its tokenizer file (tok512.bin-style)
// in opts.TokenizerPath. opts.TokenizerPath, when set, overrides modelPath
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
	return nil, fmt.Errorf("%w: %s is neither a model directory nor a .gguf file; a llama2.c checkpoint needs its tokenizer file as the tokenizer path", ErrNoTokenizer, modelPath)
}

func loadHFDir(dir string) (*Tokenizer, error) {
	p := filepath.Join(dir, "tokenizer.json")
	if _, err := os.Stat(p); err != nil {
		return nil, fmt.Errorf("%w: %s has no tokenizer.json", ErrNoTokenizer, dir)
	}
	return loadHF(p, dir)
}
