package tokenizer

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// vocabEntry is one token of a vocabulary being loaded.
type vocabEntry struct {
	piece string // as stored
	attrs uint8
	text  string // decoded bytes; "" means derive from piece
}

// newTokenizer builds the common tables from a vocabulary. Special (control)
// tokens decode to their piece; byte tokens "<0xXX>" to their byte.
func newTokenizer(k kind, entries []vocabEntry) *Tokenizer {
	t := &Tokenizer{
		kind:    k,
		pieces:  make([]string, len(entries)),
		text:    make([]string, len(entries)),
		attrs:   make([]uint8, len(entries)),
		vocab:   make(map[string]int32, len(entries)),
		merges:  map[uint64]merge{},
		spaceID: -1,
		unk:     -1,
		scratch: &sync.Pool{},
		bos:     -1,
		eos:     -1,
		sep:     -1,
	}
	for i := range t.byteTok {
		t.byteTok[i] = -1
	}
	for i, e := range entries {
		id := int32(i)
		t.pieces[i] = e.piece
		t.attrs[i] = e.attrs
		if _, dup := t.vocab[e.piece]; !dup && e.piece != "" {
			t.vocab[e.piece] = id
		}
		switch {
		case e.text != "":
			t.text[i] = e.text
		case e.attrs&attrSpecial != 0:
			t.text[i] = e.piece
		case e.attrs&attrByte != 0:
			b, _ := parseByteToken(e.piece)
			t.text[i] = string([]byte{b})
			if t.byteTok[b] < 0 {
				t.byteTok[b] = id
			}
		case k == kindSPM || k == kindWPM || k == kindUnigram:
			t.text[i] = strings.ReplaceAll(e.piece, "▁", " ")
		default:
			if b, ok := unmapBytes(e.piece); ok {
				t.text[i] = string(b)
			} else {
				t.text[i] = e.piece
			}
		}
		if e.attrs&attrMatch != 0 {
			t.special.add(specialTok{s: e.piece, id: id})
		}
	}
	if k == kindSPM || k == kindUnigram {
		if id, ok := t.vocab["▁"]; ok {
			t.spaceID = id
		}
	} else if k == kindByteLevel {
		for b := 0; b < 256; b++ {
			if id, ok := t.vocab[byteToRune[b]]; ok {
				t.byteTok[b] = id
			}
		}
	}
	return t
}

// parseByteToken parses "<0xXX>".
func parseByteToken(s string) (byte, bool) {
	if len(s) != 6 || s[:3] != "<0x" || s[5] != '>' {
		return 0, false
	}
	v, err := strconv.ParseUint(s[3:5], 16, 8)
	if err != nil {
		return 0, false
	}
	return byte(v), true
}

// mergesFromScores derives SentencePiece merges from piece scores: a pair
// (a, b) merges when a+b is a normal piece; higher-scoring results merge
// first, equal scores leftmost first.
func (t *Tokenizer) mergesFromScores(scores []float32) {
	// Rank = position of the score among the distinct scores, highest first.
	distinct := make([]float32, 0, len(scores))
	for i, s := range scores {
		if t.attrs[i]&(attrByte|attrSpecial) == 0 {
			distinct = append(distinct, s)
		}
	}
	sort.Slice(distinct, func(i, j int) bool { return distinct[i] > distinct[j] })
	rank := make(map[float32]int32, len(distinct))
	for _, s := range distinct {
		if _, ok := rank[s]; !ok {
			rank[s] = int32(len(rank))
		}
	}
	for i, p := range t.pieces {
		if t.attrs[i]&(attrByte|attrSpecial) != 0 || t.vocab[p] != int32(i) {
			continue
		}
		for j := 1; j < len(p); j++ {
			if !isRuneStart(p[j]) {
				continue
			}
			a, okA := t.vocab[p[:j]]
			b, okB := t.vocab[p[j:]]
			if !okA || !okB || t.attrs[a]&(attrByte|attrSpecial) != 0 || t.attrs[b]&(attrByte|attrSpecial) != 0 {
				continue
			}
			t.merges[pairKey(a, b)] = merge{rank: rank[scores[i]], id: int32(i)}
		}
	}
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// setMerges installs ranked merges given as "left right" pairs.
func (t *Tokenizer) setMerges(pairs [][2]string) error {
	var buf []byte
	for r, p := range pairs {
		a, okA := t.vocab[p[0]]
		b, okB := t.vocab[p[1]]
		buf = append(append(buf[:0], p[0]...), p[1]...)
		id, okM := t.vocab[string(buf)]
		if !okA || !okB || !okM {
			return fmt.Errorf("%w: merge %d %q %q: piece not in vocabulary", ErrFormat, r, p[0], p[1])
		}
		k := pairKey(a, b)
		if _, dup := t.merges[k]; !dup {
			t.merges[k] = merge{rank: int32(r), id: id}
		}
	}
	return nil
}

// finish fills derived fields once ids and strings are known.
func (t *Tokenizer) finish() {
	if t.kind == kindSPM {
		t.splitWords = t.noPieceSpansSpace()
	}
	if t.bos >= 0 && t.bosToken == "" {
		t.bosToken = t.pieces[t.bos]
	}
	if t.eos >= 0 && t.eosToken == "" {
		t.eosToken = t.pieces[t.eos]
	}
	if t.eos >= 0 {
		ids := []int32{t.eos}
		for _, id := range t.eosIDs {
			if id != t.eos {
				ids = append(ids, id)
			}
		}
		t.eosIDs = ids
	}
	if t.unk < 0 {
		if id, ok := t.vocab["<unk>"]; ok {
			t.unk = id
		} else {
			t.unk = 0
		}
	}
}

func containsID(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
