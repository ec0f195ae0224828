package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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

// parseHFWordPiece reads a tokenizer.json with a WordPiece model, which
// must come with BERT's BertNormalizer (clean_text, handle_chinese_chars)
// and BertPreTokenizer: what encodeWPM implements. The vocabulary is
// rewritten to llama.cpp's form (a word-initial piece "x" becomes "▁x", a
// continuation "##x" becomes "x"); added tokens keep their text.
func parseHFWordPiece(path string, f *hfFile, cfg *hfConfig, gen *hfGenerationConfig, unsupported func(string, ...any) error) (*Tokenizer, error) {
	n, p := f.Normalizer, f.PreTokenizer
	if n == nil || n.Type != "BertNormalizer" || p == nil || p.Type != "BertPreTokenizer" {
		return nil, unsupported("WordPiece without BertNormalizer and BertPreTokenizer (normalizer %v, pre-tokenizer %v)", typeOf(n), typeOf(p))
	}
	if n.CleanText != nil && !*n.CleanText || n.HandleChineseChars != nil && !*n.HandleChineseChars {
		return nil, unsupported("BertNormalizer without clean_text or handle_chinese_chars")
	}
	m := &f.Model
	opt := wpmOptions{lowercase: n.Lowercase == nil || *n.Lowercase, maxWordRunes: wpmMaxWordRunes}
	opt.stripAccents = opt.lowercase
	if n.StripAccents != nil {
		opt.stripAccents = *n.StripAccents
	}
	if m.MaxInputCharsPerWord != nil {
		opt.maxWordRunes = *m.MaxInputCharsPerWord
	}
	prefix := "##"
	if m.ContinuingSubwordPrefix != nil {
		prefix = *m.ContinuingSubwordPrefix
	}
	vocab := make(map[string]int32, len(m.Vocab))
	for s, id := range m.Vocab {
		if rest, ok := strings.CutPrefix(s, prefix); ok && prefix != "" {
			s = rest
		} else {
			s = "▁" + s
		}
		if _, dup := vocab[s]; dup {
			return nil, unsupported("WordPiece vocabulary where %q is both a word start and a continuation", s)
		}
		vocab[s] = id
	}
	m.Vocab = vocab
	entries, added, err := f.entries(path, kindWPM)
	if err != nil {
		return nil, err
	}
	t := newTokenizer(kindWPM, entries)
	t.addAdded(added)
	t.wpm = opt
	t.stripLeading = true
	if m.UnkToken != nil {
		if _, ok := t.vocab[*m.UnkToken]; !ok { // not an added token
			u := "▁" + *m.UnkToken
			m.UnkToken = &u
		}
	}
	if err := t.hfBertSpecials(f.PostProcessor); err != nil {
		return nil, fmt.Errorf("%w: %s: post_processor: %w", ErrFormat, path, err)
	}
	bos := t.bos
	if _, err := t.finishHF(f, cfg, gen, len(entries)); err != nil {
		return nil, err
	}
	if bos >= 0 {
		t.bos, t.bosToken, t.addBOS = bos, t.pieces[bos], true
	}
	return t, nil
}

func typeOf(c *hfComponent) string {
	if c == nil {
		return "none"
	}
	return c.Type
}

// hfBertSpecials reads [CLS] and [SEP] from a BertProcessing or a
// TemplateProcessing post-processor ([CLS] $A [SEP]).
func (t *Tokenizer) hfBertSpecials(pp *hfComponent) error {
	var err error
	pp.walk(func(c *hfComponent) {
		switch c.Type {
		case "BertProcessing", "RobertaProcessing":
			var cls, sep int32
			if len(c.Cls) != 2 || len(c.Sep) != 2 {
				err = fmt.Errorf("%s: cls %s, sep %s: want [token, id]", c.Type, c.Cls, c.Sep)
				return
			}
			if err = errors.Join(json.Unmarshal(c.Cls[1], &cls), json.Unmarshal(c.Sep[1], &sep)); err == nil {
				t.bos, t.sep, t.addSep = cls, sep, true
			}
		case "TemplateProcessing":
			ids := func(i int) int32 {
				if st := c.Single[i].SpecialToken; st != nil && len(c.SpecialTokens[st.ID].IDs) == 1 {
					return c.SpecialTokens[st.ID].IDs[0]
				}
				return -1
			}
			if k := len(c.Single); k > 0 {
				t.bos, t.sep = ids(0), ids(k-1)
				t.addSep = t.sep >= 0
			}
		}
	})
	if err == nil && (int(t.bos) >= len(t.text) || int(t.sep) >= len(t.text)) {
		err = fmt.Errorf("[CLS] %d or [SEP] %d out of the vocabulary", t.bos, t.sep)
	}
	return err
}
