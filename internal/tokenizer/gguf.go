package tokenizer

import "fmt"

func loadGGUF(path string) (*Tokenizer, error) {
	return nil, fmt.Errorf("%w: GGUF not implemented yet (%s)", ErrUnsupported, path)
}
