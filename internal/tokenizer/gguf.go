package tokenizer

import (
	"errors"
	"fmt"
	"maps"
	"slices"
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
	var k kind
	switch model {
	case "llama":
		k = kindSPM
	case "gpt2":
		k = kindByteLevel
	case "bert":
		k = kindWPM
	default:
		return nil, fmt.Errorf("%w: %s: tokenizer.ggml.model %q (supported: llama, gpt2, bert)", ErrUnsupported, f.Path, model)
	}
	entries, err := ggufEntries(f, k)
	if err != nil {
		return nil, bad(err)
	}
	t := newTokenizer(k, entries)
	var pre ggufPre
	switch k {
	case kindSPM:
		err = t.ggufSPM(f)
	case kindByteLevel:
		pre, err = t.ggufByteLevel(f)
	case kindWPM:
		err = t.ggufWPM(f)
	}
	if err == nil {
		err = t.ggufSpecials(f)
	}
	if pre.noBOS {
		t.bos, t.addBOS = -1, false
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
func (t *Tokenizer) ggufByteLevel(f *gguf.File) (ggufPre, error) {
	merges, err := f.Strings("tokenizer.ggml.merges")
	if err != nil {
		return ggufPre{}, err
	}
	pairs, err := splitMerges(merges)
	if err != nil {
		return ggufPre{}, err
	}
	if err := t.setMerges(pairs); err != nil {
		return ggufPre{}, fmt.Errorf("%s: %w", f.Path, err)
	}
	pre := "default"
	if f.Has("tokenizer.ggml.pre") {
		if pre, err = f.String("tokenizer.ggml.pre"); err != nil {
			return ggufPre{}, err
		}
	}
	p, ok := ggufPres[pre]
	if !ok {
		return ggufPre{}, fmt.Errorf("%w: %s: tokenizer.ggml.pre %q (supported: %s)", ErrUnsupported, f.Path, pre, strings.Join(slices.Sorted(maps.Keys(ggufPres)), ", "))
	}
	t.pretok = p.steps
	t.ignoreMerges = p.ignoreMerges
	t.addBOS = p.addBOS
	t.addBOS, err = optBool(f, "tokenizer.ggml.add_bos_token", t.addBOS)
	return p, err
}

// ggufWPM reads a "bert" (WordPiece) vocabulary's options. Its
// tokenizer.ggml.pre is ignored, as llama.cpp does. Without
// tokenizer.ggml.normalizer.lowercase the text is lowercased: such files
// were written when llama.cpp always lowercased WordPiece input (today's
// llama.cpp defaults to false, which breaks them: bert-bge's goldens are
// lowercased). strip_accents defaults to lowercase, as in both.
func (t *Tokenizer) ggufWPM(f *gguf.File) error {
	var err error
	if t.wpm.lowercase, err = optBool(f, "tokenizer.ggml.normalizer.lowercase", true); err != nil {
		return err
	}
	if t.wpm.stripAccents, err = optBool(f, "tokenizer.ggml.normalizer.strip_accents", t.wpm.lowercase); err != nil {
		return err
	}
	t.wpm.maxWordRunes = wpmMaxWordRunes
	t.stripLeading = true
	if t.addBOS, err = optBool(f, "tokenizer.ggml.add_bos_token", true); err != nil {
		return err
	}
	if t.addSep, err = optBool(f, "tokenizer.ggml.add_sep_token", true); err != nil {
		return err
	}
	// [CLS] begins a BERT sequence, [SEP] ends it (llama.cpp's defaults
	// 101 and 102 when the keys are absent).
	if t.bos, err = optIDDefault(f, "tokenizer.ggml.cls_token_id", len(t.text), 101); err != nil {
		return err
	}
	t.sep, err = optIDDefault(f, "tokenizer.ggml.seperator_token_id", len(t.text), 102)
	return err
}

// optIDDefault is optID with def when the key is absent (-1 when def is out
// of range).
func optIDDefault(f *gguf.File, key string, n int, def int32) (int32, error) {
	if !f.Has(key) {
		if def >= int32(n) {
			def = -1
		}
		return def, nil
	}
	return optID(f, key, n)
}

// ggufSpecials reads add_eos, the BOS/EOS/unknown ids, the end-of-generation
// ids and the chat template.
func (t *Tokenizer) ggufSpecials(f *gguf.File) error {
	var err error
	if t.addEOS, err = optBool(f, "tokenizer.ggml.add_eos_token", false); err != nil {
		return err
	}
	if t.bos, err = optIDDefault(f, "tokenizer.ggml.bos_token_id", len(t.text), t.bos); err != nil {
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

// ggufPre is what a byte-level vocabulary's tokenizer.ggml.pre means, as
// llama.cpp's llama-vocab.cpp defines it: the pre-tokenizer's regexes
// (llm_tokenizer_bpe), ignore_merges and add_bos (the default of
// tokenizer.ggml.add_bos_token).
type ggufPre struct {
	steps        []pretokKind
	ignoreMerges bool
	addBOS       bool
	noBOS        bool // the vocabulary has no BOS, whatever its keys say (GLM-4)
}

var (
	preLlama3    = ggufPre{steps: []pretokKind{pretokLlama3}, ignoreMerges: true, addBOS: true}
	preGPT2      = ggufPre{steps: []pretokKind{pretokGPT2}}
	preStarcoder = ggufPre{steps: []pretokKind{pretokNumber, pretokGPT2}}
	preQwen2     = ggufPre{steps: []pretokKind{pretokQwen2}}
	preGPT4o     = ggufPre{steps: []pretokKind{pretokGPT4o}}
	preBloom     = ggufPre{steps: []pretokKind{pretokBloom}}
	preDSV3      = ggufPre{steps: []pretokKind{pretokNumbers3, pretokCJKKana, pretokDeepSeekV3}}
)

// ggufPres lists the tokenizer.ggml.pre values this package implements;
// any other is refused. "default" (also when the key is absent) is
// llama.cpp's default, not GPT-2's.
var ggufPres = map[string]ggufPre{
	"default": {steps: []pretokKind{pretokPunctSymbolsDefault, pretokGPT2, pretokNumbers, pretokThreeDigits}},
	"llama3":  preLlama3, "llama-v3": preLlama3, "llama-bpe": preLlama3, "falcon3": preLlama3,
	"falcon-h1": preLlama3, "pixtral": preLlama3, "midm-2.0": preLlama3, "lfm2": preLlama3,
	"jina-v5-nano": preLlama3,
	"smaug-bpe":    {steps: []pretokKind{pretokLlama3}}, "dbrx": {steps: []pretokKind{pretokLlama3}},
	"qwen2": preQwen2, "deepseek-r1-qwen": preQwen2, "kormo": preQwen2, "f2llmv2": preQwen2,
	"megrez": preQwen2, "stablelm2": preQwen2,
	"gpt-2": preGPT2, "phi-2": preGPT2, "jina-es": preGPT2, "jina-de": preGPT2, "gigachat": preGPT2,
	"jina-v2-es": preGPT2, "jina-v2-de": preGPT2, "a.x-4.0": preGPT2, "mellum": preGPT2,
	"modern-bert": preGPT2, "exaone4": preGPT2, "mpt": preGPT2, "olmo": preGPT2, "jais": preGPT2,
	"starcoder": preStarcoder, "refact": preStarcoder, "command-r": preStarcoder, "smollm": preStarcoder,
	"codeshell": preStarcoder, "exaone": preStarcoder, "minerva-7b": preStarcoder,
	"falcon":         {steps: []pretokKind{pretokPunctSymbols, pretokGPT2, pretokThreeDigits}},
	"deepseek-coder": {steps: []pretokKind{pretokNewline, pretokSpaceLetters, pretokSpacePunct, pretokCJK, pretokNumber}},
	"tekken":         {steps: []pretokKind{pretokTekken}, ignoreMerges: true, addBOS: true},
	"gpt-4o":         preGPT4o, "llama4": preGPT4o, "kanana2": preGPT4o, "talkie": preGPT4o,
	"qwen35": {steps: []pretokKind{pretokQwen35}},
	// llama.cpp sets add_sep for these, which its BPE tokenization does not
	// read (only its embedding examples do).
	"roberta-bpe": preGPT2, "jina-v1-en": preGPT2, "jina-v2-code": preGPT2,
	"seed-coder": {steps: []pretokKind{pretokSeedCoder}},
	// llama.cpp's BailingMoE regex, possessive quantifiers made greedy, is
	// Qwen2's.
	"bailingmoe": preQwen2, "bailingmoe2": preQwen2, "llada-moe": preQwen2,
	"deepseek-v3": preDSV3, "hunyuan-dense": preDSV3, "joyai-llm": preDSV3,
	"hunyuan": preQwen2, "solar-open": preQwen2, "minimax-m2": preGPT4o,
	"trillion": preGPT2, "granite-docling": preGPT2,
	"bloom": preBloom, "gpt3-finnish": preBloom, "poro-chat": preBloom,
	"viking":      {steps: []pretokKind{pretokBloom, pretokNumber}},
	"chatglm-bpe": {steps: []pretokKind{pretokLlama3}, noBOS: true}, "glm4": {steps: []pretokKind{pretokLlama3}, noBOS: true},
	"deepseek-llm": {steps: []pretokKind{pretokNewline, pretokDeepSeekLetters, pretokDeepSeekPunct, pretokTrailingSpace,
		pretokCJK, pretokNumbers}},
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
