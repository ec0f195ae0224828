package tokenizer

import (
	"errors"
	"fmt"
	"strings"

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
	tokens, err := f.Strings("tokenizer.ggml.tokens")
	if err != nil {
		return nil, bad(err)
	}
	var types []int64
	if f.Has("tokenizer.ggml.token_type") {
		if types, err = f.Ints("tokenizer.ggml.token_type"); err != nil {
			return nil, bad(err)
		}
		if len(types) != len(tokens) {
			return nil, bad(fmt.Errorf("%d token types for %d tokens", len(types), len(tokens)))
		}
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
	t := newTokenizer(k, entries)

	switch k {
	case kindSPM:
		var scores []float32
		if f.Has("tokenizer.ggml.scores") {
			if scores, err = f.Float32s("tokenizer.ggml.scores"); err != nil {
				return nil, bad(err)
			}
		}
		if len(scores) != len(tokens) {
			return nil, bad(fmt.Errorf("%d scores for %d tokens", len(scores), len(tokens)))
		}
		t.mergesFromScores(scores)
		t.prefixSpace = optBool(f, "tokenizer.ggml.add_space_prefix", true)
		t.stripLeading = t.prefixSpace
		t.addBOS = optBool(f, "tokenizer.ggml.add_bos_token", true)
	case kindByteLevel:
		merges, err := f.Strings("tokenizer.ggml.merges")
		if err != nil {
			return nil, bad(err)
		}
		pairs := make([][2]string, len(merges))
		for i, m := range merges {
			a, b, ok := strings.Cut(m, " ")
			if !ok {
				return nil, bad(fmt.Errorf("merge %d %q has no space", i, m))
			}
			pairs[i] = [2]string{a, b}
		}
		if err := t.setMerges(pairs); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		pre := "default"
		if f.Has("tokenizer.ggml.pre") {
			if pre, err = f.String("tokenizer.ggml.pre"); err != nil {
				return nil, bad(err)
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
			return nil, fmt.Errorf("%w: %s: tokenizer.ggml.pre %q (supported: llama3 family, qwen2, gpt-2)", ErrUnsupported, f.Path, pre)
		}
		t.addBOS = optBool(f, "tokenizer.ggml.add_bos_token", t.addBOS)
	}
	t.addEOS = optBool(f, "tokenizer.ggml.add_eos_token", false)
	t.bos = optID(f, "tokenizer.ggml.bos_token_id", len(tokens))
	t.eos = optID(f, "tokenizer.ggml.eos_token_id", len(tokens))
	if id := optID(f, "tokenizer.ggml.unknown_token_id", len(tokens)); id >= 0 {
		t.unk = id
	}
	for _, key := range []string{"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"} {
		if id := optID(f, key, len(tokens)); id >= 0 && !containsID(t.eosIDs, id) {
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
			return nil, bad(err)
		}
	}
	t.finish()
	return t, nil
}

func optBool(f *gguf.File, key string, def bool) bool {
	if v, err := f.Bool(key); err == nil {
		return v
	}
	return def
}

// optID reads a token id key; -1 when absent or out of range.
func optID(f *gguf.File, key string, n int) int32 {
	v, err := f.Int(key)
	if err != nil || v < 0 || v >= int64(n) {
		return -1
	}
	return int32(v)
}
