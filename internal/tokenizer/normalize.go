package tokenizer

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// normStep is one step of a Hugging Face normalizer, applied in order to
// each text segment between special tokens, before pre-tokenization. (The
// SentencePiece Prepend("▁") and Replace(" ", "▁") steps are not steps: the
// SPM encoder does them, see Tokenizer.prefixSpace.)
type normStep struct {
	kind normKind
	// form: the Unicode normalization form of normUnicode.
	form norm.Form
	// old, new: normReplace's literal pattern and its replacement;
	// normPrepend's prefix is new.
	old, new string
	// left, right: normStrip strips whitespace at that end.
	left, right bool
}

type normKind uint8

const (
	normUnicode normKind = iota // NFC, NFD, NFKC, NFKD
	normLowercase
	normReplace
	normPrepend
	normStrip
)

// normalize applies steps to text. The Unicode forms check before they copy,
// so text already in the form costs no allocation.
func normalize(steps []normStep, text string) string {
	for i := range steps {
		s := &steps[i]
		switch s.kind {
		case normUnicode:
			if !s.form.IsNormalString(text) {
				text = s.form.String(text)
			}
		case normLowercase:
			text = strings.ToLower(text)
		case normReplace:
			text = strings.ReplaceAll(text, s.old, s.new)
		case normPrepend:
			// Hugging Face prepends to a non-empty string only.
			if text != "" {
				text = s.new + text
			}
		case normStrip:
			if s.left {
				text = strings.TrimLeftFunc(text, unicode.IsSpace)
			}
			if s.right {
				text = strings.TrimRightFunc(text, unicode.IsSpace)
			}
		}
	}
	return text
}

// unicodeForms maps the Hugging Face normalizer names to their forms.
var unicodeForms = map[string]norm.Form{"NFC": norm.NFC, "NFD": norm.NFD, "NFKC": norm.NFKC, "NFKD": norm.NFKD}
