package tokenizer

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

var spaceMark = []byte("▁")

// unigramUnkPenalty: an unknown character scores the lowest piece score
// minus this (Hugging Face's K_UNK_PENALTY).
const unigramUnkPenalty = 10.0

// parseHFUnigram reads a tokenizer.json with a Unigram model. Its text
// handling is SentencePiece's ('▁' for spaces, by a Metaspace pre-tokenizer
// or the Prepend/Replace normalizer); pieces are chosen by Viterbi over
// their scores, as in Hugging Face's Unigram: unknown characters fuse into
// one unknown token, or become byte tokens with byte_fallback.
func parseHFUnigram(path string, f *hfFile, cfg *hfConfig, gen *hfGenerationConfig, unsupported func(string, ...any) error) (*Tokenizer, error) {
	m := &f.Model
	if m.Scores == nil {
		return nil, fmt.Errorf("%w: %s: Unigram vocab is not a list of [piece, score]", ErrFormat, path)
	}
	pl, err := f.pipeline(unsupported)
	if err != nil {
		return nil, err
	}
	if pl.kind != kindSPM {
		return nil, unsupported("Unigram without a SentencePiece-style (▁) pre-tokenizer or normalizer")
	}
	entries, added, err := f.entries(path, kindUnigram)
	if err != nil {
		return nil, err
	}
	t := newTokenizer(kindUnigram, entries)
	t.addAdded(added)
	t.applyPipeline(pl) // pl.kind is kindSPM
	t.scores = m.Scores
	t.byteFallback = m.ByteFallback
	t.unkScore = 0
	for i, sc := range m.Scores {
		if i == 0 || sc < t.unkScore {
			t.unkScore = sc
		}
		if n := len(t.pieces[i]); n > t.maxPiece {
			t.maxPiece = n
		}
	}
	t.unkScore -= unigramUnkPenalty
	if m.UnkID != nil {
		if *m.UnkID < 0 || int(*m.UnkID) >= len(m.Scores) {
			return nil, fmt.Errorf("%w: %s: unk_id %d out of the vocabulary", ErrFormat, path, *m.UnkID)
		}
		t.unk = *m.UnkID
	}
	if m.UnkID == nil && !m.ByteFallback {
		return nil, unsupported("Unigram without unk_id or byte_fallback")
	}
	return t.finishHF(f, cfg, gen, len(entries))
}

// latNode is the best path to one position of a word (Viterbi).
type latNode struct {
	score float64
	start int32 // where its last piece starts; -1: unreached
	id    int32 // its last piece; -1: unknown
}

// encodeUnigram encodes one text segment: spaces as '▁' (and the '▁'
// prefix), split before every '▁' when the Metaspace pre-tokenizer says so,
// each word segmented by Viterbi.
func (t *Tokenizer) encodeUnigram(w *workspace, out []int32, text string, prefix bool) []int32 {
	b := w.buf[:0]
	if prefix {
		b = append(b, "▁"...)
	}
	for i := 0; i < len(text); i++ {
		if text[i] == ' ' {
			b = append(b, "▁"...)
		} else {
			b = append(b, text[i])
		}
	}
	w.buf = b
	start := 0
	for i := 1; i < len(b); i++ {
		if t.splitEverySpace && bytes.HasPrefix(b[i:], spaceMark) {
			out = t.viterbi(w, out, b[start:i])
			start = i
		}
	}
	return t.viterbi(w, out, b[start:])
}

// viterbi appends the best-scoring segmentation of word: among equal
// scores the path whose last piece starts first (Hugging Face's order).
// Runs of unknown characters fuse into one unknown token, or become their
// byte tokens under byte_fallback when every byte has one.
func (t *Tokenizer) viterbi(w *workspace, out []int32, word []byte) []int32 {
	if len(word) == 0 {
		return out
	}
	lat := w.lat[:0]
	for i := 0; i <= len(word); i++ {
		lat = append(lat, latNode{start: -1, id: -1})
	}
	lat[0].start = 0
	for s := 0; s < len(word); {
		_, ch := utf8.DecodeRune(word[s:])
		if lat[s].start < 0 {
			s += ch
			continue
		}
		single := false
		for e := s + 1; e <= len(word) && e-s <= t.maxPiece; e++ {
			if e < len(word) && !utf8.RuneStart(word[e]) {
				continue
			}
			id, ok := t.vocab[string(word[s:e])]
			if !ok || int(id) >= len(t.scores) {
				continue
			}
			if sc := lat[s].score + t.scores[id]; lat[e].start < 0 || sc > lat[e].score {
				lat[e] = latNode{score: sc, start: int32(s), id: id}
			}
			single = single || e-s == ch
		}
		if e := s + ch; !single {
			if sc := lat[s].score + t.unkScore; lat[e].start < 0 || sc > lat[e].score {
				lat[e] = latNode{score: sc, start: int32(s), id: -1}
			}
		}
		s += ch
	}
	w.lat = lat
	// Backtrack (the path comes out last piece first), fusing unknown
	// runs.
	path := w.path[:0]
	for e := int32(len(word)); e > 0; {
		n := lat[e]
		if k := len(path) - 1; n.id < 0 && k >= 0 && path[k].id < 0 {
			path[k].start = n.start // extend the unknown run leftwards
		} else {
			path = append(path, span{start: n.start, end: e, id: n.id})
		}
		e = n.start
	}
	w.path = path
	for i := len(path) - 1; i >= 0; i-- {
		if p := path[i]; p.id >= 0 {
			out = append(out, p.id)
		} else {
			out = t.unknown(out, word[p.start:p.end])
		}
	}
	return out
}

// span is one piece of a word: bytes [start, end), id -1 when unknown.
type span struct{ start, end, id int32 }

// unknown appends a fused run of unknown characters: its byte tokens
// under byte_fallback when every byte has one, else the unknown token.
func (t *Tokenizer) unknown(out []int32, s []byte) []int32 {
	if t.byteFallback {
		ok := true
		for _, c := range s {
			ok = ok && t.byteTok[c] >= 0
		}
		if ok {
			for _, c := range s {
				out = append(out, t.byteTok[c])
			}
			return out
		}
	}
	return append(out, t.unk)
}
