package tokenizer

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// Errors callers may branch on.
var (
	// ErrNoTokenizer: no tokenizer could be found for the model path.
	ErrNoTokenizer = errors.New("tokenizer: no tokenizer found")
	// ErrFormat: a tokenizer file is malformed.
	ErrFormat = errors.New("tokenizer: malformed tokenizer file")
	// ErrUnsupported: the tokenizer file describes a model, normalizer or
	// pre-tokenizer this package does not implement.
	ErrUnsupported = errors.New("tokenizer: unsupported tokenizer")
)

// kind is the tokenization algorithm.
type kind uint8

const (
	// kindSPM: SentencePiece-style BPE over characters with byte fallback;
	// spaces are '▁' in the vocabulary, usually with a '▁' prepended to the
	// text (see prefixSpace).
	kindSPM kind = iota
	// kindByteLevel: GPT-2 byte-level BPE over pre-tokenized words.
	kindByteLevel
	// kindWPM: BERT's WordPiece, greedy longest match, in llama.cpp's
	// vocabulary form: a word's first piece is stored with a '▁' prefix,
	// the others bare (Hugging Face's "##" pieces).
	kindWPM
	// kindUnigram: SentencePiece Unigram (Viterbi over piece scores), with
	// kindSPM's space handling.
	kindUnigram
)

// Token attributes.
const (
	attrSpecial uint8 = 1 << iota // control/special: skipped when skipSpecial
	attrByte                      // byte-fallback token <0xXX>
	attrMatch                     // recognised when written in input text
)

// merge is one BPE merge: the pair (left, right) becomes id; lower rank
// merges first.
type merge struct {
	rank int32
	id   int32
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// Tokenizer encodes text to token ids and decodes ids to text. It is
// immutable and safe for concurrent use.
type Tokenizer struct {
	kind kind

	pieces []string // vocabulary strings as stored (SPM: '▁' for space; byte-level: mapped bytes)
	text   []string // the bytes each id decodes to (special tokens: their content)
	attrs  []uint8
	vocab  map[string]int32
	merges map[uint64]merge

	// byteTok: SPM: the byte-fallback token of each byte (-1: none);
	// byte-level: the token of each single byte.
	byteTok [256]int32
	spaceID int32 // SPM: the id of "▁" (-1: none)
	unk     int32

	special specialMatcher

	bos, eos int32
	eosIDs   []int32
	addBOS   bool
	addEOS   bool
	// prefixSpace: SPM: prepend '▁' to each text segment; byte-level: a
	// space to each segment that does not start with one.
	prefixSpace bool
	// prefixFirstOnly: prepend only to a segment at the start of the text
	// (Metaspace prepend_scheme "first").
	prefixFirstOnly bool
	// prefixUnlessSpace: do not prepend to a segment that starts with a
	// space (Metaspace; the Prepend normalizer always prepends).
	prefixUnlessSpace bool
	// splitEverySpace: each '▁' starts a new word (Metaspace split).
	splitEverySpace bool
	stripLeading    bool  // Decode drops one leading space of the whole text
	sep             int32 // WPM: the separator ([SEP]), -1: none
	addSep          bool  // Encode(text, true) appends sep (BERT)
	wpm             wpmOptions
	// Unigram: piece scores (by id), the unknown character's score, the
	// longest piece in bytes, byte fallback for unknown characters.
	scores       []float64
	unkScore     float64
	maxPiece     int
	byteFallback bool
	pretok       []pretokKind // byte-level: the pre-tokenizer's patterns, applied in turn
	norm         []normStep   // applied to each segment before pre-tokenization
	ignoreMerges bool         // byte-level: a word found whole in the vocabulary is one token
	splitWords   bool         // SPM: merge each ▁-started word on its own (see noPieceSpansSpace)

	chatTemplate string
	bosToken     string
	eosToken     string

	scratch *sync.Pool // *workspace
}

// LoadOptions tunes Load.
type LoadOptions struct {
	// TokenizerPath names the tokenizer explicitly: a llama2.c tokenizer
	// file (tok512.bin-style), a tokenizer.json, a .gguf file or a Hugging
	// Face directory. Empty: derived from the model path.
	TokenizerPath string
}

// String describes the tokenizer for logs, e.g.
// "sentencepiece-bpe vocab=512 bos=1 eos=[2]".
func (t *Tokenizer) String() string {
	k := "sentencepiece-bpe"
	switch t.kind {
	case kindByteLevel:
		k = "byte-level-bpe"
	case kindWPM:
		k = "wordpiece"
	case kindUnigram:
		k = "unigram"
	}
	return fmt.Sprintf("%s vocab=%d bos=%d eos=%v", k, len(t.text), t.bos, t.eosIDs)
}

// BOS returns the beginning-of-sequence id, -1 when none.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS returns the end-of-sequence id, -1 when none.
func (t *Tokenizer) EOS() int32 { return t.eos }

// EOSIDs returns every id that ends generation (EOS, end-of-turn, ...).
// The caller must not modify the slice.
func (t *Tokenizer) EOSIDs() []int32 { return t.eosIDs }

// VocabSize is the number of token ids (the largest id + 1).
func (t *Tokenizer) VocabSize() int { return len(t.text) }

// ChatTemplate returns the Jinja chat template, "" when the model has none.
func (t *Tokenizer) ChatTemplate() string { return t.chatTemplate }

// BOSToken returns the text of the BOS token for chat templates ("" when none).
func (t *Tokenizer) BOSToken() string { return t.bosToken }

// EOSToken returns the text of the EOS token for chat templates ("" when none).
func (t *Tokenizer) EOSToken() string { return t.eosToken }

// AddsBOS reports whether Encode(text, true) prepends BOS.
func (t *Tokenizer) AddsBOS() bool { return t.addBOS && t.bos >= 0 }

// IsSpecial reports whether id is a special (control) token, which
// Decode(ids, true) skips.
func (t *Tokenizer) IsSpecial(id int32) bool {
	return id >= 0 && int(id) < len(t.attrs) && t.attrs[id]&attrSpecial != 0
}

// TokenID returns the id of a vocabulary entry or special token written as
// stored (e.g. "<|eot_id|>", "▁the"); ok is false when absent.
func (t *Tokenizer) TokenID(piece string) (id int32, ok bool) {
	id, ok = t.vocab[piece]
	return id, ok
}

// Piece returns the decoded text of one token, e.g. " the" (the leading
// space is kept). A byte-fallback or partial byte-level token returns its raw
// bytes, which may be an incomplete UTF-8 sequence; a special token returns
// its content. Out-of-range ids return "".
func (t *Tokenizer) Piece(id int32) string {
	if id < 0 || int(id) >= len(t.text) {
		return ""
	}
	return t.text[id]
}

// Decode returns the text of ids. Special tokens are skipped when
// skipSpecial, else written as their content. For SentencePiece models one
// leading space of the whole text is dropped (the dummy-prefix rule).
// Bytes that do not form valid UTF-8 become U+FFFD, one per byte.
func (t *Tokenizer) Decode(ids []int32, skipSpecial bool) string {
	var sb strings.Builder
	sb.Grow(4 * len(ids))
	first := true
	for _, id := range ids {
		p := t.pieceFor(id, skipSpecial)
		if p == "" {
			continue
		}
		if first {
			first = false
			if t.stripLeading && p[0] == ' ' {
				p = p[1:]
			}
		}
		sb.WriteString(p)
	}
	return validString(sb.String())
}

// pieceFor is the text an id contributes to decoded output.
func (t *Tokenizer) pieceFor(id int32, skipSpecial bool) string {
	if id < 0 || int(id) >= len(t.text) {
		return ""
	}
	if skipSpecial && t.attrs[id]&attrSpecial != 0 {
		return ""
	}
	return t.text[id]
}

// writeValid writes b as UTF-8, every invalid byte replaced by U+FFFD.
func writeValid(sb *strings.Builder, b []byte) {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			sb.WriteString("\uFFFD")
		} else {
			sb.Write(b[:n])
		}
		b = b[n:]
	}
}

// Encode returns the token ids of text. With addSpecial, BOS is prepended
// (and EOS appended) when the model's configuration says so. Special tokens
// written in text (e.g. "<|eot_id|>", "<s>") are recognised as such.
func (t *Tokenizer) Encode(text string, addSpecial bool) []int32 {
	w := t.getWorkspace()
	out := w.ids[:0]
	if addSpecial && t.addBOS && t.bos >= 0 {
		out = append(out, t.bos)
	}
	for first := true; len(text) > 0; first = false {
		start, end, id := t.special.find(text)
		if start < 0 {
			out = t.encodeSegment(w, out, text, first)
			break
		}
		out = t.encodeSegment(w, out, text[:start], first)
		out = append(out, id)
		text = text[end:]
	}
	if addSpecial && t.addEOS && t.eos >= 0 {
		out = append(out, t.eos)
	}
	if addSpecial && t.addSep && t.sep >= 0 {
		out = append(out, t.sep)
	}
	// The ids were built in pooled scratch space: the result is the one
	// allocation, of exactly the right size.
	res := make([]int32, len(out))
	copy(res, out)
	w.ids = out[:0]
	t.scratch.Put(w)
	return res
}

// encodeSegment appends the ids of text that holds no special token.
// atStart: the segment begins the input text.
func (t *Tokenizer) encodeSegment(w *workspace, out []int32, text string, atStart bool) []int32 {
	if len(t.norm) > 0 {
		text = normalize(t.norm, text)
	}
	if text == "" {
		return out
	}
	switch t.kind {
	case kindWPM:
		return t.encodeWPM(w, out, text)
	case kindSPM, kindUnigram:
		prefix := t.prefixSpace && (atStart || !t.prefixFirstOnly)
		if prefix && t.prefixUnlessSpace && (text[0] == ' ' || strings.HasPrefix(text, "▁")) {
			prefix = false
		}
		if t.kind == kindUnigram {
			return t.encodeUnigram(w, out, text, prefix)
		}
		return t.encodeSPM(w, out, text, prefix)
	default:
		if t.prefixSpace && text[0] != ' ' {
			text = " " + text // ByteLevel's add_prefix_space
		}
		return t.encodeByteLevel(w, out, text)
	}
}

func (t *Tokenizer) getWorkspace() *workspace {
	if w, ok := t.scratch.Get().(*workspace); ok {
		return w
	}
	return &workspace{}
}
