package tokenizer

import (
	"fmt"
	"strings"
)

// Dummy vocabulary layout.
const (
	DummyBOS     int32 = 256
	DummyEOS     int32 = 257
	dummyNumBase       = 258
)

// NewDummy returns the byte-level tokenizer of the built-in random-weight
// model: ids 0..255 are the bytes, 256 is BOS "<s>", 257 is EOS "</s>", and
// every id >= 258 decodes to a short deterministic ASCII word with a leading
// space (" ba", " be", ...; distinct ids give distinct words). Encode maps
// each byte to its id (special tokens written in text are recognised) and
// prepends BOS when asked. vocabSize must be at least 258.
func NewDummy(vocabSize int) *Tokenizer {
	if vocabSize < dummyNumBase {
		panic(fmt.Sprintf("tokenizer: NewDummy(%d): vocabulary must hold at least %d ids", vocabSize, dummyNumBase))
	}
	entries := make([]vocabEntry, vocabSize)
	for b := 0; b < 256; b++ {
		entries[b] = vocabEntry{piece: byteToRune[b], text: string([]byte{byte(b)})}
	}
	entries[DummyBOS] = vocabEntry{piece: "<s>", attrs: attrSpecial | attrMatch}
	entries[DummyEOS] = vocabEntry{piece: "</s>", attrs: attrSpecial | attrMatch}
	for id := dummyNumBase; id < vocabSize; id++ {
		w := dummyWord(id - dummyNumBase)
		entries[id] = vocabEntry{piece: strings.ReplaceAll(w, " ", "Ġ"), text: w}
	}
	t := newTokenizer(kindByteLevel, entries)
	t.bos, t.eos = DummyBOS, DummyEOS
	t.addBOS = true
	t.finish()
	return t
}

// dummyWord spells n in base 90 with consonant-vowel syllables.
func dummyWord(n int) string {
	const cons, vows = "bcdfghjklmnprstvwz", "aeiou"
	var sb strings.Builder
	sb.WriteByte(' ')
	for {
		s := n % (len(cons) * len(vows))
		sb.WriteByte(cons[s/len(vows)])
		sb.WriteByte(vows[s%len(vows)])
		n /= len(cons) * len(vows)
		if n == 0 {
			return sb.String()
		}
		n--
	}
}
