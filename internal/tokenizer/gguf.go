package tokenizer

import (
	"errors"
	"fmt"

	"govllm/internal/gguf"
)

// GGUF token types (llama.cpp's llama_token_type).
const (
	ggufNormal      = 1
	ggufUnknown     = 2
	ggufControl     = 3
	ggufUserDefined = 4
	ggufUnused      = 5
	ggufByte        = 6
)

// eogTexts are the end-of-generation tokens llama.cpp recognises by text
// when they are control tokens.
var eogTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<|eom_id|>", "<EOT>", "<|EOT|>", "<|end▁of▁sentence|>"}

// loadGGUF reads the vocabulary of a GGUF file: tokenizer.ggml.model "llama"
// (SentencePiece BPE by scores) or "gpt2" (byte-level BPE by merges).
func loadGGUF(path string) (*Tokenizer, error) {
	f, err := gguf.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return fromGGUF(f)
}

func fromGGUF(f *gguf.File) (*Tokenizer, error) {
	bad := func(err error) error { return fmt.Errorf("%w: %s: %w", ErrFormat, f.Path, err) }
	model, err := f.String("tokenizer.ggml.model")
	if err != nil {
		if errors.Is(err, gguf.ErrKeyNotFound) {
			return nil, fmt.Errorf("%w: %s holds no vocabulary (tokenizer.ggml.model)", ErrNoTokenizer, f.Path)
		}
		return nil, bad(err)
	}
	var k kind
	switch model {
	case "llama":
		k = kindSPM
	case "gpt2":
		k = kindByteLevel
	default:
		return nil, fmt.Errorf("%w: %s: tokenizer.ggml.model %q (supported: llama, gpt2)", ErrUnsupported, f.Path, model)
	}
	entries, err := ggufEntries(f, k)
	if err != nil {
		return nil, bad(err)
	}
	t := newTokenizer(k, entries)
	if k == kindSPM {
		err = t.ggufSPM(f)
	} else {
		err = t.ggufByteLevel(f)
	}
	if err == nil {
		err = t.ggufSpecials(f)
	}
	if err != nil {
		if errors.Is(err, ErrUnsupported) || errors.Is(err, ErrFormat) {
			return nil, err
		}
		return nil, bad(err)
	}
	t.finish()
	return t, nil
}

// ggufEntries reads tokenizer.ggml.tokens and token_type.
func ggufEntries(f *gguf.File, k kind) ([]vocabEntry, error) {
	tokens, err := f.Strings("tokenizer.ggml.tokens")
	if err != nil {
		return nil, err
	}
	var types []int64
	if f.Has("tokenizer.ggml.token_type") {
		if types, err = f.Ints("tokenizer.ggml.token_type"); err != nil {
			return nil, err
		}
		if len(types) != len(tokens) {
			return nil, fmt.Errorf("%d token types for %d tokens", len(types), len(tokens))
		}
	}
	entries := make([]vocabEntry, len(tokens))
	for i, s := range tokens {
		e := vocabEntry{piece: s}
		typ := int64(ggufNormal)
		if types != nil {
			typ = types[i]
		} else if _, ok := parseByteToken(s); ok && k == kindSPM {
			typ = ggufByte
		}
		switch typ {
		case ggufUnknown, ggufControl:
			e.attrs = attrSpecial | attrMatch
		case ggufUnused:
			e.attrs = attrSpecial
		case ggufUserDefined:
			e.attrs = attrMatch
			e.text = s
		case ggufByte:
			if k == kindSPM {
				e.attrs = attrByte
			}
		}
		entries[i] = e
	}
	return entries, nil
}

// ggufSPM reads a "llama" (SentencePiece) vocabulary's scores and options.
func (t *Tokenizer) ggufSPM(f *gguf.File) error {
	var scores []float32
	if f.Has("tokenizer.ggml.scores") {
		var err error
		if scores, err = f.Float32s("tokenizer.ggml.scores"); err != nil {
			return err
		}
	}
	if len(scores) != len(t.text) {
		return fmt.Errorf("%d scores for %d tokens", len(scores), len(t.text))
	}
	t.mergesFromScores(scores)
	var err error
	if t.prefixSpace, err = optBool(f, "tokenizer.ggml.add_space_prefix", true); err != nil {
		return err
	}
	t.stripLeading = t.prefixSpace
	t.addBOS, err = optBool(f, "tokenizer.ggml.add_bos_token", true)
	return err
}

// ggufByteLevel reads a "gpt2" (byte-level BPE) vocabulary's merges and
// pre-tokenizer.
func (t *Tokenizer) ggufByteLevel(f *gguf.File) error {
	merges, err := f.Strings("tokenizer.ggml.merges")
	if err != nil {
		return err
	}
	pairs, err := splitMerges(merges)
	if err != nil {
		return err
	}
	if err := t.setMerges(pairs); err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	pre := "default"
	if f.Has("tokenizer.ggml.pre") {
		if pre, err = f.String("tokenizer.ggml.pre"); err != nil {
			return err
		}
	}
	switch pre {
	case "llama3", "llama-v3", "llama-bpe", "smaug-bpe", "falcon3", "pixtral":
		t.pretok = pretokLlama3
		t.ignoreMerges = true
		t.addBOS = true
	case "qwen2", "deepseek-r1-qwen":
		t.pretok = pretokQwen2
	case "gpt-2", "gpt2", "default", "phi-2", "jina-es", "jina-de", "roberta-bpe":
		t.pretok = pretokGPT2
	default:
		return fmt.Errorf("%w: %s: tokenizer.ggml.pre %q (supported: llama3 family, qwen2, gpt-2)", ErrUnsupported, f.Path, pre)
	}
	t.addBOS, err = optBool(f, "tokenizer.ggml.add_bos_token", t.addBOS)
	return err
}

// ggufSpecials reads add_eos, the BOS/EOS/unknown ids, the end-of-generation
// ids and the chat template.
func (t *Tokenizer) ggufSpecials(f *gguf.File) error {
	var err error
	if t.addEOS, err = optBool(f, "tokenizer.ggml.add_eos_token", false); err != nil {
		return err
	}
	if t.bos, err = optID(f, "tokenizer.ggml.bos_token_id", len(t.text)); err != nil {
		return err
	}
	if t.eos, err = optID(f, "tokenizer.ggml.eos_token_id", len(t.text)); err != nil {
		return err
	}
	unk, err := optID(f, "tokenizer.ggml.unknown_token_id", len(t.text))
	if err != nil {
		return err
	}
	if unk >= 0 {
		t.unk = unk
	}
	for _, key := range []string{"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"} {
		id, err := optID(f, key, len(t.text))
		if err != nil {
			return err
		}
		if id >= 0 && !containsID(t.eosIDs, id) {
			t.eosIDs = append(t.eosIDs, id)
		}
	}
	for _, s := range eogTexts {
		if id, ok := t.vocab[s]; ok && t.attrs[id]&attrSpecial != 0 && !containsID(t.eosIDs, id) {
			t.eosIDs = append(t.eosIDs, id)
		}
	}
	if f.Has("tokenizer.chat_template") {
		if t.chatTemplate, err = f.String("tokenizer.chat_template"); err != nil {
			return err
		}
	}
	return nil
}

// optBool reads a bool key, def when absent; a value of another type is an
// error.
func optBool(f *gguf.File, key string, def bool) (bool, error) {
	if !f.Has(key) {
		return def, nil
	}
	return f.Bool(key)
}

// optID reads a token id key: -1 when absent or out of [0, n) (llama.cpp
// writes -1 or a past-the-end id for "none"); a non-integer is an error.
func optID(f *gguf.File, key string, n int) (int32, error) {
	if !f.Has(key) {
		return -1, nil
	}
	v, err := f.Int(key)
	if err != nil {
		return -1, err
	}
	if v < 0 || v >= int64(n) {
		return -1, nil
	}
	return int32(v), nil
}
