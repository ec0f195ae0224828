package tokenizer

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// wpmOptions are BERT's normalizer options (Hugging Face BertNormalizer,
// llama.cpp's normalizer_opts).
type wpmOptions struct {
	lowercase    bool
	stripAccents bool // NFD, then drop nonspacing marks
	// maxWordRunes: a longer word is one unknown token (Hugging Face's
	// max_input_chars_per_word).
	maxWordRunes int
}

// wpmMaxWordRunes is Hugging Face WordPiece's default
// max_input_chars_per_word.
const wpmMaxWordRunes = 100

// encodeWPM encodes one text segment as BERT does: BertNormalizer (drop
// control characters, NUL and U+FFFD; strip accents; lowercase) and
// BertPreTokenizer (split on whitespace; each punctuation character and each
// CJK ideograph is a word), then WordPiece on each word.
func (t *Tokenizer) encodeWPM(w *workspace, out []int32, text string) []int32 {
	opt := &t.wpm
	if opt.stripAccents && !norm.NFD.IsNormalString(text) {
		text = norm.NFD.String(text)
	}
	word := w.buf[:0]
	for _, r := range text {
		switch {
		case unicode.IsSpace(r):
			out = t.wordPiece(w, out, word)
			word = word[:0]
			continue
		case r == 0 || r == utf8.RuneError || isOther(r):
			continue
		case opt.stripAccents && unicode.Is(unicode.Mn, r):
			continue
		}
		if opt.lowercase {
			r = unicode.ToLower(r)
		}
		if isPunctSymbol(r) || isCJKIdeograph(r) {
			out = t.wordPiece(w, out, word)
			word = utf8.AppendRune(word[:0], r)
			out = t.wordPiece(w, out, word)
			word = word[:0]
			continue
		}
		word = utf8.AppendRune(word, r)
	}
	out = t.wordPiece(w, out, word)
	w.buf = word[:0]
	return out
}

// wordPiece appends the ids of one word: greedy longest-match-first pieces,
// the first looked up with its '▁' prefix; a word with a part no piece
// matches, or longer than maxWordRunes, is one unknown token.
func (t *Tokenizer) wordPiece(w *workspace, out []int32, word []byte) []int32 {
	if len(word) == 0 {
		return out
	}
	if utf8.RuneCount(word) > t.wpm.maxWordRunes {
		return append(out, t.unk)
	}
	n := len(out)
	for start := 0; start < len(word); {
		id, end := int32(-1), len(word)
		for ; end > start; end-- {
			if end < len(word) && !utf8.RuneStart(word[end]) {
				continue
			}
			key := word[start:end]
			if start == 0 {
				w.key = append(append(w.key[:0], "▁"...), key...)
				key = w.key
			}
			if v, ok := t.vocab[string(key)]; ok && t.attrs[v]&attrSpecial == 0 {
				id = v
				break
			}
		}
		if id < 0 {
			return append(out[:n], t.unk)
		}
		out = append(out, id)
		start = end
	}
	return out
}

// isOther: Unicode category C (control, format, surrogate, private use,
// unassigned) other than the whitespace controls, which BertNormalizer's
// clean_text drops.
func isOther(r rune) bool {
	if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) {
		return true
	}
	return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// isCJKIdeograph: the CJK ranges of BERT's _is_chinese_char (with Hugging
// Face's 0x2B920 lower bound, which llama.cpp copies).
func isCJKIdeograph(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF ||
		r >= 0x20000 && r <= 0x2A6DF || r >= 0x2A700 && r <= 0x2B73F ||
		r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B920 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}
