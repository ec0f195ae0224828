package tokenizer

import "fmt"

func loadHF(path, dir string) (*Tokenizer, error) {
	return nil, fmt.Errorf("%w: tokenizer.json not implemented yet (%s)", ErrUnsupported, path)
}
