package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// Decoder is an incremental detokenizer (vLLM's detokenizer): Add returns
// the text that the newest token makes final. It never returns a broken
// UTF-8 sequence: bytes that may still become a character are held back
// until they do; bytes that never can become U+FFFD, one per byte, as in
// Decode.
//
// The concatenation of every Add result followed by Flush equals
// Decode(promptIDs+outputIDs) with the decoded prompt removed from its front
// - i.e. Decode(outputIDs), except that the first output token after a
// non-empty prompt keeps its leading space (the SentencePiece dummy-prefix
// rule strips only the very first space of a sequence). If the prompt ends
// inside a UTF-8 sequence, the output completes that character.
//
// A Decoder belongs to one goroutine.
type Decoder struct {
	t           *Tokenizer
	skipSpecial bool
	spaces      bool // a space between a special token and its neighbours
	started     bool // a byte has been produced: the leading-space rule is spent
	special     bool // the last token that produced text was a special token
	pending     []byte
}

// NewDecoder returns a Decoder positioned after promptIDs. Special tokens
// produce no text when skipSpecial.
func (t *Tokenizer) NewDecoder(promptIDs []int32, skipSpecial bool) *Decoder {
	return t.NewDecoderSpaced(promptIDs, skipSpecial, false)
}

// NewDecoderSpaced is NewDecoder where, when special tokens are kept and
// spaces is set, the text of a special token is separated from the text
// around it by one space, as Hugging Face's slow tokenizers decode with
// spaces_between_special_tokens (vLLM's default): the text after a special
// token starts a new segment, so its leading space is stripped first where
// the tokenizer strips a sequence's leading space.
func (t *Tokenizer) NewDecoderSpaced(promptIDs []int32, skipSpecial, spaces bool) *Decoder {
	d := &Decoder{t: t, skipSpecial: skipSpecial, spaces: spaces && !skipSpecial}
	for _, id := range promptIDs {
		d.Add(id)
	}
	return d
}

// Add consumes one token id and returns the newly final text (possibly "").
func (d *Decoder) Add(id int32) string {
	p := d.t.pieceFor(id, d.skipSpecial)
	if p == "" {
		return ""
	}
	if d.spaces {
		p = d.spaced(p, d.t.attrs[id]&attrSpecial != 0)
	}
	if !d.started {
		d.started = true
		if d.t.stripLeading && p[0] == ' ' {
			p = p[1:]
			if p == "" {
				return ""
			}
		}
	}
	if len(d.pending) == 0 {
		cut := len(p) - incompleteTail(p)
		d.pending = append(d.pending, p[cut:]...)
		if utf8.ValidString(p[:cut]) {
			return p[:cut]
		}
		return validString(p[:cut])
	}
	b := append(d.pending, p...)
	cut := len(b) - incompleteTail(string(b))
	s := validString(string(b[:cut]))
	d.pending = append(b[:0], b[cut:]...)
	return s
}

// spaced puts the space between a special token's text and its
// neighbours' (see NewDecoderSpaced).
func (d *Decoder) spaced(p string, special bool) string {
	after := d.special
	d.special = special
	switch {
	case special && d.started:
		return " " + p
	case !special && after:
		if d.t.stripLeading {
			p = strings.TrimPrefix(p, " ")
		}
		return " " + p
	}
	return p
}

// Flush returns the held-back bytes of an unfinished character (as U+FFFD,
// one per byte) and clears them; call it when the sequence ends.
func (d *Decoder) Flush() string {
	if len(d.pending) == 0 {
		return ""
	}
	s := validString(string(d.pending))
	d.pending = d.pending[:0]
	return s
}

// incompleteTail returns the length of the trailing bytes of s that begin a
// UTF-8 sequence but do not complete it yet (0..3).
func incompleteTail(s string) int {
	n := len(s)
	for i := n - 1; i >= 0 && i >= n-utf8.UTFMax; i-- {
		if isRuneStart(s[i]) {
			if utf8.FullRuneInString(s[i:]) {
				return 0
			}
			return n - i
		}
	}
	return 0
}

// validString returns s with every invalid byte replaced by U+FFFD.
func validString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	writeValid(&sb, []byte(s))
	return sb.String()
}
