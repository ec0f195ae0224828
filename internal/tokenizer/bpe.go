package tokenizer

import "strings"

// The BPE merge engine shared by both algorithms: symbols form a doubly
// linked list over a word; candidate merges sit in a binary min-heap ordered
// by (rank, position), so the best merge - the leftmost one among the lowest
// rank - is applied first, as in SentencePiece/llama.cpp and Hugging Face's
// BPE. Stale heap entries are detected when popped.

type symbol struct {
	id         int32 // -1: merged into its left neighbour
	prev, next int32 // indices into the symbol slice, -1 at the ends
}

type heapItem struct {
	rank        int32
	pos         int32 // index of the left symbol
	left, right int32 // the ids the pair had when pushed
	id          int32 // the merged id
}

// workspace is per-Encode scratch memory, pooled by the Tokenizer.
type workspace struct {
	syms []symbol
	heap []heapItem
	buf  []byte
	ids  []int32   // Encode's output, copied into an exact-size result
	key  []byte    // WPM: a piece with its '▁' prefix
	lat  []latNode // Unigram: the Viterbi lattice of a word
	path []span    // Unigram: the best path, backwards
	enc  wordEncoder
}

func itemLess(a, b *heapItem) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.pos < b.pos
}

func (w *workspace) push(it heapItem) {
	h := append(w.heap, it)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !itemLess(&h[i], &h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	w.heap = h
}

func (w *workspace) pop() heapItem {
	h := w.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && itemLess(&h[r], &h[l]) {
			m = r
		}
		if !itemLess(&h[m], &h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	w.heap = h
	return top
}

// addSym appends a symbol to the workspace's list.
func (w *workspace) addSym(id int32) {
	n := int32(len(w.syms))
	w.syms = append(w.syms, symbol{id: id, prev: n - 1, next: n + 1})
}

// tryPair pushes the merge of symbols i and i.next when the pair merges.
func (t *Tokenizer) tryPair(w *workspace, i int32) {
	if i < 0 {
		return
	}
	j := w.syms[i].next
	if j < 0 {
		return
	}
	a, b := w.syms[i].id, w.syms[j].id
	if m, ok := t.merges[pairKey(a, b)]; ok {
		w.push(heapItem{rank: m.rank, pos: i, left: a, right: b, id: m.id})
	}
}

// bpe merges w.syms (freshly added with addSym) and appends the result to
// out.
func (t *Tokenizer) bpe(w *workspace, out []int32) []int32 {
	n := len(w.syms)
	if n == 0 {
		return out
	}
	w.syms[n-1].next = -1
	if n <= smallWord {
		t.bpeSmall(w)
	} else {
		t.bpeHeap(w)
	}
	for i := int32(0); i >= 0; i = w.syms[i].next {
		out = append(out, w.syms[i].id)
	}
	return out
}

// bpeHeap merges w.syms with a priority queue of candidate pairs:
// O(n log n) for long words.
func (t *Tokenizer) bpeHeap(w *workspace) {
	syms := w.syms
	w.heap = w.heap[:0]
	for i := int32(0); i < int32(len(syms))-1; i++ {
		t.tryPair(w, i)
	}
	for len(w.heap) > 0 {
		it := w.pop()
		s := &syms[it.pos]
		if s.id != it.left || s.next < 0 || syms[s.next].id != it.right {
			continue // stale
		}
		r := s.next
		s.id = it.id
		s.next = syms[r].next
		if s.next >= 0 {
			syms[s.next].prev = it.pos
		}
		syms[r].id = -1
		t.tryPair(w, s.prev)
		t.tryPair(w, it.pos)
	}
}

// smallWord is the symbol count up to which bpeSmall's linear scans beat
// the heap.
const smallWord = 24

// bpeSmall is bpe for short words: the rank of each adjacent pair is kept
// per symbol and the best pair found by a linear scan.
func (t *Tokenizer) bpeSmall(w *workspace) {
	syms := w.syms
	var rank, mid [smallWord]int32
	pair := func(i int32) {
		rank[i] = noMerge
		if j := syms[i].next; j >= 0 {
			if m, ok := t.merges[pairKey(syms[i].id, syms[j].id)]; ok {
				rank[i], mid[i] = m.rank, m.id
			}
		}
	}
	for i := int32(0); i < int32(len(syms)); i++ {
		pair(i)
	}
	for {
		best, bestRank := int32(-1), int32(noMerge)
		for i := int32(0); i >= 0; i = syms[i].next {
			if rank[i] < bestRank {
				best, bestRank = i, rank[i]
			}
		}
		if best < 0 {
			return
		}
		s := &syms[best]
		r := s.next
		s.id = mid[best]
		s.next = syms[r].next
		if s.next >= 0 {
			syms[s.next].prev = best
		}
		syms[r].id = -1
		if s.prev >= 0 {
			pair(s.prev)
		}
		pair(best)
	}
}

const noMerge = 1<<31 - 1

// encodeSPM encodes one text segment SentencePiece-style: '▁' prepended,
// spaces as '▁', characters missing from the vocabulary as byte tokens.
func (t *Tokenizer) encodeSPM(w *workspace, out []int32, text string, prefix bool) []int32 {
	w.syms = w.syms[:0]
	prevSpace := false
	if prefix {
		t.addSPMChar(w, "▁", t.spaceID)
		prevSpace = true
	}
	for i := 0; i < len(text); {
		c := text[i]
		n := 1
		if c >= 0x80 {
			_, n = decodeRuneInString(text[i:])
		}
		ch := text[i : i+n]
		id := t.spaceID
		if c == ' ' {
			ch = "▁"
		} else {
			var ok bool
			id, ok = t.vocab[ch]
			if !ok || t.attrs[id]&(attrByte|attrSpecial) != 0 {
				id = -1
			}
		}
		isSpace := id >= 0 && id == t.spaceID
		if isSpace && (t.splitEverySpace || !prevSpace && t.splitWords) && len(w.syms) > 0 {
			// No piece spans this boundary: merge the word on its own.
			out = t.bpe(w, out)
			w.syms = w.syms[:0]
		}
		prevSpace = isSpace
		t.addSPMChar(w, ch, id)
		i += n
	}
	return t.bpe(w, out)
}

// noPieceSpansSpace reports whether no normal piece holds a '▁' right after
// another character than '▁' (true of SentencePiece vocabularies, whose
// pieces start with the space). Then no merge crosses the start of a run of
// spaces, and each word can be merged on its own: same result, much smaller
// heaps.
func (t *Tokenizer) noPieceSpansSpace() bool {
	for i, p := range t.pieces {
		if t.attrs[i]&(attrByte|attrSpecial) != 0 {
			continue
		}
		for j := 1; j < len(p); j++ {
			if strings.HasPrefix(p[j:], "▁") && isRuneStart(p[j]) && !strings.HasSuffix(p[:j], "▁") {
				return false
			}
		}
	}
	return true
}

// addSPMChar adds one character as a symbol: its token id, or its bytes'
// fallback tokens, or unk.
func (t *Tokenizer) addSPMChar(w *workspace, ch string, id int32) {
	if id >= 0 {
		w.addSym(id)
		return
	}
	for i := 0; i < len(ch); i++ {
		if b := t.byteTok[ch[i]]; b >= 0 {
			w.addSym(b)
			continue
		}
		// No byte fallback: one unk for the character, consecutive unks fused.
		if k := len(w.syms); k == 0 || w.syms[k-1].id != t.unk {
			w.addSym(t.unk)
		}
		return
	}
}

// encodeByteLevel pre-tokenizes text and encodes each word with byte-level
// BPE.
func (t *Tokenizer) encodeByteLevel(w *workspace, out []int32, text string) []int32 {
	e := &w.enc
	e.t, e.w, e.out = t, w, out
	splitText(t.pretok, text, e)
	out = e.out
	*e = wordEncoder{}
	return out
}

// wordEncoder is the wordSink of encodeByteLevel: it appends each word's ids.
type wordEncoder struct {
	t   *Tokenizer
	w   *workspace
	out []int32
}

func (e *wordEncoder) word(s string) { e.out = e.t.encodeWord(e.w, e.out, s) }

// encodeWord encodes one pre-tokenized word. A byte whose token the
// vocabulary lacks (some hold no token for bytes that never occur in UTF-8)
// is dropped, as Hugging Face's BPE without unk_token does.
func (t *Tokenizer) encodeWord(w *workspace, out []int32, word string) []int32 {
	if len(word) == 1 {
		if id := t.byteTok[word[0]]; id >= 0 {
			out = append(out, id)
		}
		return out
	}
	if t.ignoreMerges {
		b := w.buf[:0]
		for i := 0; i < len(word); i++ {
			b = append(b, byteToRune[word[i]]...)
		}
		w.buf = b
		if id, ok := t.vocab[string(b)]; ok {
			return append(out, id)
		}
	}
	w.syms = w.syms[:0]
	for i := 0; i < len(word); i++ {
		if id := t.byteTok[word[i]]; id >= 0 {
			w.addSym(id)
		}
	}
	if len(t.merges) == 0 {
		for _, s := range w.syms {
			out = append(out, s.id)
		}
		return out
	}
	return t.bpe(w, out)
}
